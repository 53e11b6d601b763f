//! Redaction of a payload that is one root member, from its text (`shape::payload_redacted`,
//! what `envelope shape --redact` runs with a store or a limit on a large protocol-v1,
//! operations or tool-result-envelope document, or an MCP result with `structuredContent`
//! and its mirror): the same output, artifacts, offload and redaction report as reading the
//! document whole, redacting the envelope, then offloading or cutting it; for payloads with
//! secrets in values, texts and nested documents (and in keys, which the pass leaves to the
//! whole path), every offload option, output format and limit. And the document is never
//! built.

mod common;
#[path = "common/heap.rs"]
mod heap;

use common::Gen;
use envelope::shape::{OffloadOptions, Offloaded, Pipeline};
use envelope::{DecodeOptions, FormatId};
use serde_json::{Value, json};

use common::{ByContent as Memory, encode_options};

/// What a run gave: output bytes, the offload, the redactions' rules and places.
type Outcome = Result<(String, Offloaded, Vec<(String, String)>), String>;

struct Case {
    to: Option<FormatId>,
    /// `None`: no store.
    options: Option<OffloadOptions>,
    limit: Option<usize>,
}

/// The whole path: read the document whole, redact, offload (or check the capture limit),
/// fit or encode, check the output.
fn whole(input: &[u8], case: &Case) -> (Outcome, Memory) {
    let mut sink = Memory::default();
    let result = (|| {
        let (format, mut env) =
            envelope::formats::decode_any(input, None, &DecodeOptions::default())?;
        let format = case.to.unwrap_or(format);
        let redactions = envelope::shape::redact::redact_envelope(&mut env);
        let offloaded = match &case.options {
            Some(options) => {
                envelope::shape::offload::offload(&mut env, format, options, &mut sink)?
            }
            None => Offloaded::Inline,
        };
        let bytes = match case.limit {
            Some(limit) => envelope::shape::fit(&env, format, limit, &encode_options())?.encoded,
            None => envelope::encode(format, &env, &encode_options())?,
        };
        envelope::validate::check_output_of(&bytes.bytes, format, input)?;
        let redactions = redactions.into_iter().map(|r| (r.rule, r.at)).collect();
        Ok::<_, envelope::Error>((
            String::from_utf8_lossy(&bytes.bytes).into_owned(),
            offloaded,
            redactions,
        ))
    })();
    (result.map_err(|e| e.to_string()), sink)
}

/// The pipeline, which redacts the payload from its text where it can.
fn piped(input: &[u8], case: &Case) -> (Outcome, Memory) {
    let mut sink = Memory::default();
    let mut pipeline = Pipeline::new(input)
        .output_format(case.to)
        .limit(case.limit)
        .redact(true)
        .encode_options(encode_options());
    if let Some(options) = &case.options {
        pipeline = pipeline
            .inline_threshold(options.inline_threshold)
            .max_capture(options.max_capture)
            .store(&mut sink);
    }
    let result = pipeline.run().map(|s| {
        let redactions = s.redactions.into_iter().map(|r| (r.rule, r.at)).collect();
        (
            String::from_utf8_lossy(&s.bytes).into_owned(),
            s.offloaded,
            redactions,
        )
    });
    (result.map_err(|e| e.to_string()), sink)
}

fn cases() -> Vec<Case> {
    let mut cases = Vec::new();
    for to in [
        None,
        Some(FormatId::Mcp),
        Some(FormatId::Operations),
        Some(FormatId::ProtocolV1),
    ] {
        for options in [
            OffloadOptions::default(),
            OffloadOptions {
                inline_threshold: 0,
                max_capture: None,
            },
            OffloadOptions {
                inline_threshold: usize::MAX,
                max_capture: None,
            },
            OffloadOptions {
                inline_threshold: 0,
                max_capture: Some(1000),
            },
        ] {
            for limit in [None, Some(4096)] {
                cases.push(Case {
                    to,
                    options: Some(options.clone()),
                    limit,
                });
            }
        }
        for limit in [2048, 16 << 10, 1 << 20] {
            cases.push(Case {
                to,
                options: None,
                limit: Some(limit),
            });
        }
    }
    cases
}

fn assert_same(name: &str, doc: &[u8]) {
    for case in cases() {
        let (expected, expected_store) = whole(doc, &case);
        let (got, got_store) = piped(doc, &case);
        let what = format!(
            "{name} to {:?}, store {:?}, limit {:?}",
            case.to, case.options, case.limit
        );
        assert_eq!(got, expected, "{what}");
        assert!(
            got_store.0 == expected_store.0,
            "{what}: stored artifacts differ"
        );
    }
}

/// A secret for `rng` to put somewhere: a value under a secret-like key, a token in text, a
/// JSON document in a string holding one, names that only look like secrets; `wild`: or a
/// key that is itself a secret (left to the whole path).
fn secret(rng: &mut Gen, wild: bool) -> (String, Value) {
    match rng.below(8 + u64::from(wild)) {
        0 => ("password".into(), json!("hunter2 and more")),
        1 => (
            "note".into(),
            json!("call with Bearer abcdefghij0123456789 today"),
        ),
        2 => (
            "body".into(),
            json!(r#"{"api_key":"sk-live-0123456789abcdef","n":1}"#),
        ),
        3 => ("token_count".into(), json!(12)),
        4 => ("author".into(), json!("Ann <ann@example.com>")),
        // Values under secret names that are no strings: masked keeping their type.
        5 => ("signing_keys".into(), json!(["ssh-ed25519 AAAA", "k2", ""])),
        6 => (
            "api_key".into(),
            json!({"id": 42, "on": true, "none": null, "name": "prod", "scopes": ["read"]}),
        ),
        7 => ("password".into(), json!(1234)),
        _ => (
            "ghp_0123456789abcdefghijABCDEFGHIJ012345".into(),
            json!(true),
        ),
    }
}

/// Records of more than 256 KiB (the size from which the payload is redacted from its
/// text), with secrets in some, written in a dialect (or indented); `wild`: with random
/// values in some (integer-like keys, which the one-pass redaction and the spelling check
/// leave to the whole path).
fn payload_text(rng: &mut Gen, wild: bool) -> (Value, String) {
    let records: Vec<Value> = (0..6000 + rng.below(1000))
        .map(|i| {
            let mut record = serde_json::Map::new();
            record.insert("id".into(), json!(i));
            record.insert(
                "name".into(),
                Value::String(format!("row {i} {}", rng.string())),
            );
            if wild && rng.below(10) == 0 {
                record.insert("value".into(), rng.value(2));
            }
            if rng.below(40) == 0 {
                let (key, value) = secret(rng, wild);
                record.insert(key, value);
            }
            Value::Object(record)
        })
        .collect();
    let payload = json!({"rows": records, "next": "cursor-1"});
    let text = match rng.below(5) {
        0 => envelope::json::to_vec(&payload, envelope::json::Dialect::Go),
        1 => serde_json::to_vec_pretty(&payload).unwrap(),
        _ => envelope::json::to_vec(&payload, envelope::json::Dialect::Js),
    };
    (payload, String::from_utf8(text).unwrap())
}

/// The payload in each format that moves it from a root member.
fn documents(rng: &mut Gen, wild: bool) -> Vec<String> {
    let (payload, text) = payload_text(rng, wild);
    let js = String::from_utf8(envelope::json::to_vec(
        &payload,
        envelope::json::Dialect::Js,
    ))
    .unwrap();
    let mirror = serde_json::to_string(&js).unwrap();
    // The mirror indented, as the Python SDK writes it (a block the decoder keeps), of
    // this payload and of one with nothing to redact.
    let pretty = serde_json::to_string(&serde_json::to_string_pretty(&payload).unwrap()).unwrap();
    let clean = json!({"rows": (0..20_000).map(|i| json!({"id": i, "name": format!("row {i}")})).collect::<Vec<_>>()});
    let clean_js =
        String::from_utf8(envelope::json::to_vec(&clean, envelope::json::Dialect::Js)).unwrap();
    let clean_pretty =
        serde_json::to_string(&serde_json::to_string_pretty(&clean).unwrap()).unwrap();
    // A tool-envelope-v1 result: the payload in its envelope block (base64), a secret in
    // its summary and its tool's name.
    let inner = format!(
        r#"{{"payload":{text},"meta":{{"tool":"read password","ts":"2026-01-01T00:00:00.000Z","version":1}}}}"#
    );
    let block = envelope::base64::encode(inner.as_bytes());
    vec![
        format!(
            r#"{{"content":[{{"type":"text","text":"Rows, token: abcdef0123456789"}},{{"type":"text","text":"__ENVELOPE_V1__:{block}"}}]}}"#
        ),
        format!(r#"{{"content":[{{"type":"text","text":{pretty}}}],"structuredContent":{js}}}"#),
        format!(r#"{{"content":[{{"type":"text","text":"Rows:"}},{{"type":"text","text":{clean_pretty}}}],"structuredContent":{clean_js}}}"#),
        format!(
            r#"{{"version":1,"status":"ok","command":"a/b","data":{text},"meta":{{"ts":"2026-01-01T00:00:00Z","source":"run"}},"error":{{}}}}"#
        ),
        format!(r#"{{"data":{text},"meta":{{"source":"local","operationId":"read password"}}}}"#),
        format!(r#"{{"__envelope":{{"status":"ok","payloadPath":"result"}},"result":{text}}}"#),
        format!(r#"{{"content":[{{"type":"text","text":{mirror}}}],"structuredContent":{js}}}"#),
        format!(
            r#"{{"content":[{{"type":"text","text":"token: abcdef0123456789"}},{{"type":"text","text":{mirror}}}],"structuredContent":{js},"_meta":{{"auth_token":"x"}}}}"#
        ),
    ]
    .into_iter()
    .chain(block_results(rng))
    .collect()
}

/// A `git log` of more than 256 KiB with a secret every so often (a token pair, a bearer
/// token, a private key block), as JSON text.
fn log(rng: &mut Gen, entries: usize) -> String {
    let secrets = [
        "    token: abc123XYZdef\n",
        "    Authorization: Bearer x9Y8z7W6v5U4t\n",
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----\n",
    ];
    let mut text = String::new();
    for i in 0..entries {
        text.push_str(&format!(
            "commit {i:040x}\nAuthor: Dev <dev@example.com>\n\n    change {i} {}\n\n",
            rng.string()
        ));
        if rng.below(300) == 0 {
            text.push_str(secrets[rng.below(3) as usize]);
        }
    }
    serde_json::to_string(&text).unwrap()
}

/// MCP results whose payload is their blocks, long logs among them.
fn block_results(rng: &mut Gen) -> Vec<String> {
    let (a, b) = (log(rng, 2500), log(rng, 1500));
    let json_text = serde_json::to_string(&format!("{{\"rows\":{a}}}")).unwrap();
    vec![
        format!(r#"{{"content":[{{"type":"text","text":{a}}},{{"type":"text","text":{b}}}]}}"#),
        format!(
            r#"{{"content":[{{"type":"text","text":"summary password=abc"}},{{"text":{a},"type":"text"}}],"_meta":{{"auth_token":"x"}}}}"#
        ),
        format!(
            r#"{{"content":[{{"type":"text","text":{a}}},{{"type":"image","data":"AAAA","mimeType":"image/png"}},{{"type":"text","text":"short"}}]}}"#
        ),
        // A long text that is a document, and one in a block with more than a text: whole.
        format!(
            r#"{{"content":[{{"type":"text","text":{json_text}}},{{"type":"text","text":{b}}}]}}"#
        ),
        format!(
            r#"{{"content":[{{"type":"text","text":{a},"annotations":{{"priority":1}}}},{{"type":"text","text":"x"}}]}}"#
        ),
    ]
}

// The random payloads in two halves (even and odd documents of each round), each a test
// of its own, so that they run on both cores: in one test they took 81 s on one.
#[test]
fn random_payloads_are_redacted_as_the_whole_read_redacts_them_even_documents() {
    random_payloads_are_redacted_as_the_whole_read_redacts_them(0);
}

#[test]
fn random_payloads_are_redacted_as_the_whole_read_redacts_them_odd_documents() {
    random_payloads_are_redacted_as_the_whole_read_redacts_them(1);
}

/// The documents `i % 2 == half` of each round (every round's documents are made, so the
/// two halves check the documents one test did).
fn random_payloads_are_redacted_as_the_whole_read_redacts_them(half: usize) {
    let _shared = heap::shared();
    let mut rng = Gen::new(0x5ec7_e75a_fe00);
    for round in 0..2 {
        let wild = round == 1;
        for (i, doc) in documents(&mut rng, wild).into_iter().enumerate() {
            if i % 2 == half {
                assert_same(&format!("round {round}, document {i}"), doc.as_bytes());
            }
        }
    }
}

/// A 10 MB structured result with a secret in every 500th record: offloaded and cut with
/// redaction, holding the input and the masked payload's text, never a tree of it.
#[test]
fn a_structured_result_is_redacted_without_being_built() {
    let _serial = heap::serial();
    let rows: Vec<String> = (0..60_000)
        .map(|i| match i % 500 {
            0 => format!(r#"{{"id":{i},"name":"row {i}","password":"p{i}"}}"#),
            _ => format!(
                r#"{{"id":{i},"name":"row {i}","path":"src/m_{}/f_{i}.rs"}}"#,
                i % 97
            ),
        })
        .collect();
    let payload = format!(r#"{{"rows":[{}]}}"#, rows.join(","));
    drop(rows);
    let mirror = serde_json::to_string(&payload).unwrap();
    let doc = format!(
        r#"{{"content":[{{"type":"text","text":{mirror}}}],"structuredContent":{payload}}}"#
    );
    for case in [
        Case {
            to: None,
            options: Some(OffloadOptions::default()),
            limit: None,
        },
        Case {
            to: None,
            options: None,
            limit: Some(65536),
        },
    ] {
        let before = heap::start();
        let (got, got_store) = piped(doc.as_bytes(), &case);
        let peak = heap::peak_since(before);
        // The masked text, and the memory sink's copy of it when stored.
        let stored = got_store.0.values().map(|(b, _)| b.len()).sum::<usize>();
        assert!(
            peak < payload.len() + stored + doc.len() / 4,
            "peak heap {peak} for a {} byte document",
            doc.len()
        );
        let (expected, expected_store) = whole(doc.as_bytes(), &case);
        assert_eq!(got, expected);
        assert!(got_store.0 == expected_store.0);
        let (_, _, redactions) = got.unwrap();
        assert_eq!(redactions.len(), 120);
    }
}

/// A large payload with arrays, objects and numbers under secret names: redacted from its
/// text, it is what the whole path writes, byte for byte, each masked member keeps its
/// type and shape, is reported once, and redacting the output again finds nothing.
#[test]
fn values_under_secret_names_keep_their_type_when_redacted_from_the_text() {
    let _shared = heap::shared();
    let rows: Vec<String> = (0..12_000)
        .map(|i| match i % 1000 {
            1 => format!(r#"{{"id":{i},"signing_keys":["ssh-ed25519 AAAA{i}","k2",""]}}"#),
            2 => format!(
                r#"{{"id":{i},"api_key":{{"id":{i},"on":true,"none":null,"name":"prod","scopes":["read","write"],"inner":{{"pin_password":77,"zero":0}}}}}}"#
            ),
            3 => format!(r#"{{"id":{i},"password":{i}}}"#),
            _ => format!(r#"{{"id":{i},"name":"row {i}"}}"#),
        })
        .collect();
    let payload = format!(r#"{{"rows":[{}]}}"#, rows.join(","));
    let doc = format!(r#"{{"data":{payload},"meta":{{"source":"local","operationId":"x"}}}}"#);
    assert!(doc.len() > 256 << 10);
    let case = Case {
        to: None,
        options: Some(OffloadOptions {
            inline_threshold: usize::MAX,
            max_capture: None,
        }),
        limit: None,
    };
    let (got, _) = piped(doc.as_bytes(), &case);
    let (expected, _) = whole(doc.as_bytes(), &case);
    assert_eq!(got, expected);
    let (out, _, redactions) = got.unwrap();
    for fragment in [
        r#"{"id":1,"signing_keys":["***","***",""]}"#,
        r#"{"id":2,"api_key":{"id":0,"on":true,"none":null,"name":"***","scopes":["***","***"],"inner":{"pin_password":0,"zero":0}}}"#,
        r#"{"id":3,"password":0}"#,
        r#"{"id":7003,"password":0}"#,
    ] {
        assert!(out.contains(fragment), "{fragment}");
    }
    assert_eq!(redactions.len(), 36, "{redactions:?}");
    assert_eq!(
        redactions[..3],
        [
            (
                "key:signing_key".into(),
                "payload/rows/1/signing_keys".into()
            ),
            ("key:api_key".into(), "payload/rows/2/api_key".into()),
            ("key:password".into(), "payload/rows/3/password".into()),
        ]
    );
    // Idempotent: the output redacted again is the same, with nothing reported.
    let (again, _) = piped(out.as_bytes(), &case);
    let (again, _, redactions) = again.unwrap();
    assert!(redactions.is_empty(), "{redactions:?}");
    assert_eq!(again, out);
}

/// A masked payload's text is the JS writer's, which spells the double `2.0` as `2`: into
/// Go's dialect (keys sorted) it is rewritten, with the whole path's bytes; into
/// Newtonsoft's (`2.0`) it is left to the whole path. Keys in reverse order, indented or
/// compact, with a secret to mask or none, stored or spliced whole.
#[test]
fn masked_texts_are_written_in_each_dialect_as_the_whole_path_writes_them() {
    let _shared = heap::shared();
    for secret in [false, true] {
        let records: Vec<Value> = (0..6000)
            .map(|i| {
                let mut record = serde_json::Map::new();
                if secret && i % 500 == 0 {
                    record.insert("password".into(), json!("hunter2 and more"));
                }
                record.insert("score".into(), json!(f64::from(i % 7) + 2.0));
                record.insert("name".into(), json!(format!("row {i} <é>")));
                record.insert("id".into(), json!(i));
                Value::Object(record)
            })
            .collect();
        let payload = json!({"rows": records, "next": "cursor-1"});
        for text in [
            serde_json::to_string(&payload).unwrap(),
            serde_json::to_string_pretty(&payload).unwrap(),
        ] {
            let docs = [
                format!(
                    r#"{{"version":1,"status":"ok","command":"a/b","data":{text},"meta":{{"ts":"2026-01-01T00:00:00Z"}},"error":{{}}}}"#
                ),
                format!(
                    r#"{{"__envelope":{{"status":"ok","payloadPath":"result"}},"result":{text}}}"#
                ),
                format!(r#"{{"data":{text},"meta":{{"source":"local"}}}}"#),
            ];
            for doc in &docs {
                for to in [
                    None,
                    Some(FormatId::ProtocolV1),
                    Some(FormatId::ToolResultEnvelope),
                    Some(FormatId::Operations),
                ] {
                    let runs = [
                        (None, None),
                        (Some(OffloadOptions::default()), None),
                        (None, Some(4096)),
                    ];
                    for (options, limit) in runs {
                        let case = Case { to, options, limit };
                        let (expected, expected_store) = whole(doc.as_bytes(), &case);
                        let (got, got_store) = piped(doc.as_bytes(), &case);
                        let what = format!(
                            "secret {secret}, to {to:?}, store {}, limit {limit:?}: {}",
                            case.options.is_some(),
                            &doc[..60]
                        );
                        assert_eq!(got, expected, "{what}");
                        assert!(got_store.0 == expected_store.0, "{what}: stored differ");
                    }
                }
            }
        }
    }
}
