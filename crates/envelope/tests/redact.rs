//! Redaction: generated secrets never appear in any output, in any format.

#[path = "redaction/leaks.rs"]
mod leaks;

use envelope::shape::redact::{redact_envelope, redact_text, redact_value, secret_key_rule};
use envelope::shape::{ArtifactSink, Pipeline, SinkError};
use envelope::validate::{Options, Profile, validate_document};
use envelope::{
    Category, DecodeOptions, EncodeOptions, Envelope, EnvelopeError, FormatId, Status, decode,
    encode,
};
use leaks::{corpus, leaks};
use proptest::prelude::*;
use serde_json::{Value, json};

/// A secret of one of the recognised shapes, and the distinctive part that must vanish.
fn secret() -> impl Strategy<Value = (String, String)> {
    let core = "[A-Za-z0-9]{20}";
    prop_oneof![
        core.prop_map(|c| (format!("Bearer zq{c}"), format!("zq{c}"))),
        "[A-Z0-9]{16}".prop_map(|c| (format!("AKIA{c}"), format!("AKIA{c}"))),
        "[A-Za-z0-9]{36}".prop_map(|c| (format!("ghp_{c}"), format!("ghp_{c}"))),
        core.prop_map(|c| (
            format!("eyJhbGci.eyJzdWIi{c}.sig{c}"),
            format!("eyJzdWIi{c}")
        )),
        core.prop_map(|c| (format!("password=zq{c}"), format!("zq{c}"))),
        core.prop_map(|c| (format!("xoxb-zq{c}"), format!("zq{c}"))),
        core.prop_map(|c| (format!("sk_live_zq{c}"), format!("zq{c}"))),
    ]
}

fn texts_of(format: FormatId, bytes: &[u8]) -> String {
    let mut all = String::from_utf8(bytes.to_vec()).unwrap();
    // tool-envelope-v1 hides the payload in base64: look inside too.
    if format == FormatId::ToolEnvelopeV1 {
        let doc: Value = serde_json::from_slice(bytes).unwrap();
        let block = doc["content"][1]["text"].as_str().unwrap();
        let inner =
            envelope::formats::tool_envelope_v1::parse_block(block, &DecodeOptions::default(), "")
                .unwrap();
        all.push_str(&inner.to_string());
    }
    all
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn generated_secrets_never_appear_in_any_output(
        (in_text, core) in secret(),
        (under_key, key_core) in "[A-Za-z0-9]{24}".prop_map(|c| (format!("zk{c}"), format!("zk{c}"))),
        key in prop::sample::select(vec!["password", "api_key", "X-Api-Key", "authToken", "client_secret"]),
        error in any::<bool>(),
    ) {
        let payload = json!({
            "note": format!("see {in_text} here"),
            "config": {key: under_key, "max_tokens": 5},
            "list": [in_text.clone()],
        });
        let mut env = Envelope {
            summary: Some(format!("summary with {in_text}")),
            ..Envelope::ok(payload)
        };
        if error {
            env.status = Status::Error;
            env.error = Some(EnvelopeError::new(Category::Execution, format!("failed: {in_text}")));
        }
        let report = redact_envelope(&mut env);
        prop_assert!(!report.is_empty());
        let report_text = format!("{report:?}");
        prop_assert!(!report_text.contains(&core) && !report_text.contains(&key_core));
        for format in FormatId::ALL {
            let out = encode(format, &env, &EncodeOptions::default()).unwrap().bytes;
            let text = texts_of(format, &out);
            prop_assert!(!text.contains(&core), "{format} leaks {core}");
            prop_assert!(!text.contains(&key_core), "{format} leaks {key_core}");
            prop_assert!(text.contains("max_tokens") || error, "{format} lost max_tokens");
            prop_assert!(decode(format, &out, &DecodeOptions::default()).is_ok());
        }
        // Idempotent.
        let mut again = env.clone();
        prop_assert!(redact_envelope(&mut again).is_empty());
        prop_assert_eq!(again, env);
    }
}

#[test]
fn http_headers_and_unknown_fields_are_redacted() {
    let doc = r#"{"data":{"ok":true},"meta":{"source":"http","statusCode":200,"headers":{"authorization":"Bearer abc123","content-type":"application/json"},"contentType":"application/json","x-session-token":"s3cr3t"}}"#;
    let mut env = decode(
        FormatId::Operations,
        doc.as_bytes(),
        &DecodeOptions::default(),
    )
    .unwrap();
    let report = redact_envelope(&mut env);
    let out = String::from_utf8(
        encode(FormatId::Operations, &env, &EncodeOptions::default())
            .unwrap()
            .bytes,
    )
    .unwrap();
    assert!(!out.contains("abc123") && !out.contains("s3cr3t"), "{out}");
    assert!(out.contains(r#""authorization":"***""#));
    let places: Vec<&str> = report.iter().map(|r| r.at.as_str()).collect();
    assert_eq!(
        places,
        [
            "source.headers/authorization",
            "extensions/meta/x-session-token"
        ]
    );
}

// ---------------------------------------------------------------------------------------
// Issue 12 item 2: the corpus, every channel, every format.

fn options() -> EncodeOptions {
    EncodeOptions {
        now: Some("2026-07-04T00:00:00Z".into()),
        ..EncodeOptions::default()
    }
}

/// Redacts `input` (in its detected format, or `from`) through the pipeline, written as `to`.
fn shape(input: &str, from: FormatId, to: FormatId) -> envelope::shape::Shaped {
    Pipeline::new(input.as_bytes())
        .input_format(from)
        .output_format(to)
        .redact(true)
        .encode_options(options())
        .run()
        .unwrap_or_else(|e| panic!("{from} -> {to}: {e}"))
}

/// The report as the CLI prints it (rule and place of each redaction, each loss).
fn report_text(shaped: &envelope::shape::Shaped) -> String {
    format!("{:?}{:?}", shaped.redactions, shaped.losses)
}

/// Redaction keeps an output as valid as it was: when shaping `input` without redaction
/// gives a valid document of `format`, the redacted output is one too.
fn assert_valid_as_plain(input: &str, from: FormatId, format: FormatId, bytes: &[u8]) {
    let plain = Pipeline::new(input.as_bytes())
        .input_format(from)
        .output_format(format)
        .encode_options(options())
        .run()
        .unwrap();
    let report = validate_document(&plain.bytes, &Options::new(Some(format), Profile::Spec));
    if report.is_valid() {
        assert_valid(format, bytes);
    }
}

fn assert_valid(format: FormatId, bytes: &[u8]) {
    assert_eq!(
        envelope::detect(bytes).unwrap().format,
        format,
        "{}",
        String::from_utf8_lossy(bytes)
    );
    let report = validate_document(bytes, &Options::new(Some(format), Profile::Spec));
    assert!(
        report.is_valid(),
        "{format}: {:?}\n{}",
        report.findings,
        String::from_utf8_lossy(bytes)
    );
}

fn assert_hidden(shaped: &envelope::shape::Shaped, secrets: &[&str], what: &str) {
    for secret in secrets {
        assert!(
            !leaks(&shaped.bytes, secret),
            "{what}: {secret} in {}",
            String::from_utf8_lossy(&shaped.bytes)
        );
        assert!(
            !report_text(shaped).contains(secret),
            "{what}: {secret} in the report {}",
            report_text(shaped)
        );
    }
}

#[test]
fn corpus_secrets_are_masked_and_plain_texts_kept() {
    let corpus = corpus();
    for (text, secret) in &corpus.redact {
        let mut v = Value::String(text.clone());
        let mut report = Vec::new();
        redact_value(&mut v, "payload", &mut report);
        let out = serde_json::to_vec(&v).unwrap();
        assert!(!leaks(&out, secret), "{text:?} kept {secret:?}: {v}");
        assert!(!report.is_empty(), "{text:?}");
        // A second pass finds nothing.
        let mut again = Vec::new();
        redact_value(&mut v, "payload", &mut again);
        assert!(again.is_empty(), "{text:?}: {again:?}");
    }
    for text in &corpus.keep {
        assert_eq!(redact_text(text), None, "{text:?} must survive");
    }
    for name in &corpus.secret_names {
        assert!(secret_key_rule(name).is_some(), "{name} is a secret name");
        for (sep, value) in [("=", "zqPairValue1"), (": ", "zqPairValue2")] {
            let text = format!("{name}{sep}{value}");
            let (masked, _) = redact_text(&text).unwrap_or_else(|| panic!("{text}"));
            assert_eq!(masked, format!("{name}{sep}***"));
        }
    }
    for name in &corpus.keep_names {
        assert_eq!(secret_key_rule(name), None, "{name} is not a secret name");
        assert_eq!(redact_text(&format!("{name}=5")), None, "{name}=5");
    }
}

#[test]
fn over_redaction_named_in_the_issue_is_gone() {
    let mut v = json!({"token_count": 12, "max_tokens": 4096, "auth_method": "oauth", "author": "Ann", "note": "bearer of this letter"});
    let before = v.clone();
    let mut report = Vec::new();
    redact_value(&mut v, "payload", &mut report);
    assert_eq!(v, before);
    assert!(report.is_empty(), "{report:?}");
}

#[test]
fn a_secret_used_as_a_key_is_masked_in_the_output_and_both_reports() {
    let token = "ghp_zq23456789abcdefghijABCDEFGHIJ012345";
    let other = "ghp_zz23456789abcdefghijABCDEFGHIJ012345";
    let doc = json!({
        "data": {"repos": {token: {"repo": "a"}, other: {"repo": "b"}, "***": "already"}},
        "meta": {"source": "local", "operationId": "repo/list", "timestamp": 1},
    })
    .to_string();
    for to in FormatId::ALL {
        let shaped = shape(&doc, FormatId::Operations, to);
        assert_hidden(&shaped, &[token, other], &format!("operations -> {to}"));
        assert_valid(to, &shaped.bytes);
    }
    // Two masked keys and an existing "***" stay three distinct members, in order.
    let shaped = shape(&doc, FormatId::Operations, FormatId::Operations);
    let out: Value = serde_json::from_slice(&shaped.bytes).unwrap();
    let keys: Vec<&String> = out["data"]["repos"].as_object().unwrap().keys().collect();
    assert_eq!(keys, ["*** (2)", "*** (3)", "***"]);
    assert_eq!(out["data"]["repos"]["*** (2)"], json!({"repo": "a"}));
    let places: Vec<&str> = shaped.redactions.iter().map(|r| r.at.as_str()).collect();
    assert_eq!(places, ["payload/repos/*** (2)", "payload/repos/*** (3)"]);
}

#[test]
fn secrets_in_strings_holding_json_or_base64_are_masked_inside_and_re_encoded() {
    let inner = json!({"token": "zqInnerTok3n", "rows": [1, 2]}).to_string();
    let b64 = envelope::base64::encode(
        json!({"meta": {"api_key": "zqB64Key9"}})
            .to_string()
            .as_bytes(),
    );
    let doc = json!({
        "data": {"tool_output": inner, "blob": b64, "plain": "{not json"},
        "meta": {"source": "local"},
    })
    .to_string();
    let shaped = shape(&doc, FormatId::Operations, FormatId::Operations);
    assert_hidden(&shaped, &["zqInnerTok3n", "zqB64Key9"], "embedded");
    let out: Value = serde_json::from_slice(&shaped.bytes).unwrap();
    // Still a JSON document in a string, still base64 of one.
    assert_eq!(
        out["data"]["tool_output"],
        json!(r#"{"token":"***","rows":[1,2]}"#)
    );
    let blob =
        envelope::base64::decode_strict(out["data"]["blob"].as_str().unwrap().as_bytes()).unwrap();
    assert_eq!(
        serde_json::from_slice::<Value>(&blob).unwrap(),
        json!({"meta": {"api_key": "***"}})
    );
    assert_eq!(out["data"]["plain"], json!("{not json"));
    let places: Vec<&str> = shaped.redactions.iter().map(|r| r.at.as_str()).collect();
    assert_eq!(
        places,
        ["payload/tool_output#/token", "payload/blob##/meta/api_key"]
    );
}

#[test]
fn mcp_text_mirror_is_redacted_like_structured_content_with_extra_blocks() {
    let sc = json!({"config": {"password": "zqMirrorPw1"}, "note": "Bearer zqMirrorTok3n", "ghp_zq23456789abcdefghijABCDEFGHIJ012345": 1});
    let doc = json!({
        "content": [
            {"type": "text", "text": "summary"},
            {"type": "text", "text": sc.to_string()},
            {"type": "image", "data": "aGVsbG8=", "mimeType": "image/png"},
        ],
        "structuredContent": sc,
    })
    .to_string();
    for to in FormatId::ALL {
        let shaped = shape(&doc, FormatId::Mcp, to);
        assert_hidden(
            &shaped,
            &[
                "zqMirrorPw1",
                "zqMirrorTok3n",
                "ghp_zq23456789abcdefghijABCDEFGHIJ012345",
            ],
            &format!("mcp -> {to}"),
        );
        assert_valid(to, &shaped.bytes);
    }
    // The mirror is still the JSON of structuredContent.
    let shaped = shape(&doc, FormatId::Mcp, FormatId::Mcp);
    let out: Value = serde_json::from_slice(&shaped.bytes).unwrap();
    let mirror: Value = serde_json::from_str(out["content"][1]["text"].as_str().unwrap()).unwrap();
    assert_eq!(mirror, out["structuredContent"]);
}

#[test]
fn metadata_fields_are_masked_and_the_envelope_stays_valid() {
    let slack = "xoxb-zq34567890-abcdefgh";
    // protocol-v1: command, workspace, an unknown meta field keyed by a secret, the error.
    let pv1 = json!({
        "version": 1, "status": "error", "command": format!("slack/{slack}"), "data": {},
        "meta": {"ts": "2026-07-04T00:00:00Z", "workspace": "/home/ghp_zq23456789abcdefghijABCDEFGHIJ012345/ws",
                 "runner": {"AKIAZQ3456789ABCDEFG": "x"}, "password": "zqMetaPw1"},
        "error": {"code": "EAUTH", "message": "denied for token=zqErrTok3n", "details": {"api_key": "zqDetailKey1", "echo": "Bearer zqDetailTok3n"}, "hint": "try password=zqHintPw1"},
    })
    .to_string();
    let secrets = [
        slack,
        "ghp_zq23456789abcdefghijABCDEFGHIJ012345",
        "AKIAZQ3456789ABCDEFG",
        "zqMetaPw1",
        "zqErrTok3n",
        "zqDetailKey1",
        "zqDetailTok3n",
        "zqHintPw1",
    ];
    for to in FormatId::ALL {
        let shaped = shape(&pv1, FormatId::ProtocolV1, to);
        assert_hidden(&shaped, &secrets, &format!("protocol-v1 -> {to}"));
        assert_valid_as_plain(&pv1, FormatId::ProtocolV1, to, &shaped.bytes);
    }
    let out: Value =
        serde_json::from_slice(&shape(&pv1, FormatId::ProtocolV1, FormatId::ProtocolV1).bytes)
            .unwrap();
    assert_eq!(out["command"], json!("slack/redacted"));

    // operations: operationId (the tool), HTTP headers keyed by a secret.
    let ops = json!({"data": {"ok": true}, "meta": {"source": "local", "operationId": "run sk_live_zq3456789abcdef", "timestamp": 1}}).to_string();
    for to in FormatId::ALL {
        let shaped = shape(&ops, FormatId::Operations, to);
        assert_hidden(
            &shaped,
            &["sk_live_zq3456789abcdef"],
            &format!("operations -> {to}"),
        );
    }

    // ctxo: hint and workspace.
    let ctxo = json!({"results": [1, 2], "_meta": {"totalItems": 2, "returnedItems": 2, "truncated": false, "totalBytes": 9,
        "hint": "call again with password=zqCtxoHint1", "workspace": {"root": "/w/AKIAZQ3456789ABCDEFG", "token": "zqCtxoWsTok"}}}).to_string();
    for to in FormatId::ALL {
        let shaped = shape(&ctxo, FormatId::Ctxo, to);
        assert_hidden(
            &shaped,
            &["zqCtxoHint1", "AKIAZQ3456789ABCDEFG", "zqCtxoWsTok"],
            &format!("ctxo -> {to}"),
        );
    }

    // tool-envelope-v1: meta.tool inside the block.
    let block = json!({"payload": {"x": 1}, "meta": {"tool": "tool with Bearer zqBlockTok3n", "ts": "2026-07-04T00:00:00Z", "version": 1}});
    let tev1 = json!({"content": [{"type": "text", "text": "done"}, {"type": "text", "text": format!("__ENVELOPE_V1__:{}", envelope::base64::encode(block.to_string().as_bytes()))}]}).to_string();
    for to in FormatId::ALL {
        let shaped = shape(&tev1, FormatId::ToolEnvelopeV1, to);
        assert_hidden(
            &shaped,
            &["zqBlockTok3n"],
            &format!("tool-envelope-v1 -> {to}"),
        );
    }

    // tool-result-envelope: tool, model, provider, toolCallId; the payload's own key.
    let tre = json!({"ghp_zq23456789abcdefghijABCDEFGHIJ012345": "payload", "__envelope": {"version": "1", "tool": "t xoxb-zq34567890-abcdefgh", "provider": "p password=zqProvPw", "model": "m", "toolCallId": "call token=zqCallTok", "contentType": 1, "payloadPath": "ghp_zq23456789abcdefghijABCDEFGHIJ012345", "schemaRef": null, "compat": ["result"], "createdUtc": "2026-01-02T03:04:05.123Z", "tags": []}}).to_string();
    for to in FormatId::ALL {
        let shaped = shape(&tre, FormatId::ToolResultEnvelope, to);
        assert_hidden(
            &shaped,
            &[
                slack,
                "zqProvPw",
                "zqCallTok",
                "ghp_zq23456789abcdefghijABCDEFGHIJ012345",
            ],
            &format!("tool-result-envelope -> {to}"),
        );
    }
    // The payload is still found under its (masked) key.
    let shaped = shape(
        &tre,
        FormatId::ToolResultEnvelope,
        FormatId::ToolResultEnvelope,
    );
    let env = decode(
        FormatId::ToolResultEnvelope,
        &shaped.bytes,
        &DecodeOptions::default(),
    )
    .unwrap();
    assert_eq!(env.payload, envelope::Payload::Json(json!("payload")));
}

#[test]
fn extension_pointers_holding_a_secret_key_are_masked_in_output_and_loss_report() {
    let key = "AKIAZQ3456789ABCDEFG";
    let doc = json!({"version": 1, "status": "ok", "command": "a/b", "data": {},
        "meta": {"ts": "2026-07-04T00:00:00Z", key: {"AKIAZQ3456789ABCDEFH": 1}, "x": {key: 2}}, "error": {}})
    .to_string();
    for to in FormatId::ALL {
        let shaped = shape(&doc, FormatId::ProtocolV1, to);
        assert_hidden(
            &shaped,
            &[key, "AKIAZQ3456789ABCDEFH"],
            &format!("protocol-v1 -> {to}"),
        );
    }
    // Same format: still two members under meta, the masked one and x.
    let shaped = shape(&doc, FormatId::ProtocolV1, FormatId::ProtocolV1);
    let out: Value = serde_json::from_slice(&shaped.bytes).unwrap();
    assert_eq!(out["meta"]["***"], json!({"***": 1}));
    assert_eq!(out["meta"]["x"], json!({"***": 2}));
}

#[test]
fn mcp_result_keys_and_meta_holding_secrets_are_masked() {
    let doc = json!({"content": [{"type": "text", "text": "hi"}],
        "_meta": {"xoxb-zq34567890-abcdefgh": "v", "cookie": "sid=zqMetaCookie"},
        "xoxb-zq34567890-abcdefgi": {"n": 1}, "xoxb-zq34567890-abcdefgj": 2})
    .to_string();
    let shaped = shape(&doc, FormatId::Mcp, FormatId::Mcp);
    assert_hidden(&shaped, &["zq34567890", "zqMetaCookie"], "mcp");
    assert_valid(FormatId::Mcp, &shaped.bytes);
    let out: Value = serde_json::from_slice(&shaped.bytes).unwrap();
    let keys: Vec<&String> = out.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["content", "_meta", "***", "*** (2)"]);
}

/// A sink that keeps what it was given.
#[derive(Default)]
struct Memory(Vec<Vec<u8>>);

impl ArtifactSink for Memory {
    fn put(
        &mut self,
        bytes: &[u8],
        _kind: &str,
    ) -> Result<envelope::model::ArtifactRef, SinkError> {
        self.0.push(bytes.to_vec());
        Ok(envelope::model::ArtifactRef {
            digest: format!("sha256:{:064x}", self.0.len()),
        })
    }
}

#[test]
fn offloaded_payload_is_stored_redacted() {
    let rows: Vec<Value> = (0..50).map(|i| json!({"id": i, "ghp_zq23456789abcdefghijABCDEFGHIJ012345": "x", "log": format!("row {i} password=zqStoredPw{i}"), "doc": json!({"token": "zqStoredTok"}).to_string()})).collect();
    let doc = json!({"data": {"rows": rows}, "meta": {"source": "local"}}).to_string();
    for to in FormatId::ALL {
        let mut memory = Memory::default();
        let shaped = Pipeline::new(doc.as_bytes())
            .input_format(FormatId::Operations)
            .output_format(to)
            .redact(true)
            .store(&mut memory)
            .inline_threshold(100)
            .encode_options(options())
            .run()
            .unwrap();
        assert_eq!(memory.0.len(), 1, "{to}: offloaded");
        for secret in [
            "ghp_zq23456789abcdefghijABCDEFGHIJ012345",
            "zqStoredPw",
            "zqStoredTok",
        ] {
            assert!(!leaks(&memory.0[0], secret), "{to}: stored {secret}");
            assert!(!leaks(&shaped.bytes, secret), "{to}: output {secret}");
        }
    }
}

/// A random JSON document with corpus strings planted in every position: values, keys,
/// values under secret names, JSON text in a string, base64 of JSON.
fn planted_doc() -> impl Strategy<Value = Value> {
    let c = corpus();
    let secret = prop::sample::select(c.redact.iter().map(|(t, _)| t.clone()).collect::<Vec<_>>());
    let keep = prop::sample::select(c.keep.clone());
    let leaf = prop_oneof![
        "[a-z ]{0,10}".prop_map(Value::String),
        any::<i32>().prop_map(|n| json!(n)),
        any::<bool>().prop_map(Value::Bool),
        Just(Value::Null),
        secret.clone().prop_map(Value::String),
        keep.clone().prop_map(Value::String),
        (secret.clone(), keep.clone())
            .prop_map(|(s, k)| Value::String(json!({"k": s, "keep": k}).to_string())),
        (secret.clone(), keep.clone()).prop_map(|(s, k)| Value::String(envelope::base64::encode(
            json!({"inner": [s], "keep": k}).to_string().as_bytes()
        ))),
    ];
    let key = prop_oneof![
        "[a-z]{1,6}",
        secret,
        keep,
        prop::sample::select(c.secret_names.clone()),
        prop::sample::select(c.keep_names.clone()),
    ];
    leaf.prop_recursive(4, 48, 6, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::vec((key.clone(), inner), 0..6)
                .prop_map(|members| Value::Object(members.into_iter().collect())),
        ]
    })
}

/// The must-keep strings planted where they must survive: not under a secret name, nor under
/// a key that holds a secret (whose value may be masked with it).
fn expected_keeps(v: &Value, out: &mut Vec<String>) {
    let c = corpus();
    let holds_secret =
        |k: &str| c.secret_names.iter().any(|n| n == k) || c.redact.iter().any(|(t, _)| t == k);
    match v {
        Value::String(s) => {
            if let Some(k) = c.keep.iter().find(|k| s.contains(k.as_str())) {
                out.push(k.clone());
            }
        }
        Value::Array(items) => items.iter().for_each(|i| expected_keeps(i, out)),
        Value::Object(map) => {
            for (k, v) in map {
                if c.keep.contains(k) || c.keep_names.contains(k) {
                    out.push(k.clone());
                }
                if !holds_secret(k) {
                    expected_keeps(v, out);
                }
            }
        }
        _ => {}
    }
}

fn check_output(
    format: FormatId,
    plain: &[u8],
    redacted: &[u8],
    keeps: &[String],
) -> Result<(), TestCaseError> {
    let text = String::from_utf8_lossy(redacted);
    for (_, secret) in &corpus().redact {
        prop_assert!(!leaks(redacted, secret), "{format}: {secret} in {text}");
    }
    let exposed = leaks::exposed(redacted);
    for keep in keeps {
        prop_assert!(
            exposed.contains(keep.as_str()),
            "{format}: lost {keep:?} in {text}"
        );
    }
    prop_assert!(serde_json::from_slice::<Value>(redacted).is_ok());
    prop_assert!(
        decode(format, redacted, &DecodeOptions::default()).is_ok(),
        "{format}: {text}"
    );
    if envelope::detect(plain).is_ok_and(|d| d.format == format) {
        prop_assert_eq!(
            envelope::detect(redacted).unwrap().format,
            format,
            "{}",
            text
        );
    }
    let options = Options::new(Some(format), Profile::Spec);
    if validate_document(plain, &options).is_valid() {
        let report = validate_document(redacted, &options);
        prop_assert!(
            report.is_valid(),
            "{format}: {:?} in {text}",
            report.findings
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn planted_corpus_secrets_never_survive_and_plain_texts_do(
        doc in planted_doc(),
        meta in prop::sample::select(corpus().redact.iter().map(|(t, _)| t.clone()).collect::<Vec<_>>()),
        keep in prop::sample::select(corpus().keep),
    ) {
        let mut keeps = Vec::new();
        expected_keeps(&doc, &mut keeps);
        // Built in code, with every metadata field holding a secret.
        let mut error = EnvelopeError::from_code("EAUTH", format!("{meta} / {keep}"));
        error.details = Some(json!({"echo": meta, "doc": doc}));
        let built = Envelope {
            summary: Some(meta.clone()),
            tool: Some(meta.clone()),
            command: Some("slack/xoxb-zq34567890-abcdefgh".into()),
            workspace: Some(meta.clone()),
            provider: Some(meta.clone()),
            model: Some(meta.clone()),
            tool_call_id: Some(meta.clone()),
            error: Some(error),
            ..Envelope::ok(json!({"doc": doc, "keep": keep}))
        };
        // Decoded from protocol-v1, the document also in an unknown meta field (an
        // extension: its keys become a pointer) and in the error details.
        let pv1 = json!({"version": 1, "status": "ok", "command": "a/b", "data": {"doc": doc},
            "meta": {"ts": "2026-07-04T00:00:00Z", "extra": doc, meta.clone(): 1}, "error": {}});
        let decoded = decode(FormatId::ProtocolV1, pv1.to_string().as_bytes(), &DecodeOptions::default()).unwrap();
        for env in [built, decoded] {
            let mut redacted = env.clone();
            let report = redact_envelope(&mut redacted);
            let report_text = format!("{report:?}");
            for (_, secret) in &corpus().redact {
                prop_assert!(!report_text.contains(secret.as_str()), "report: {report_text}");
            }
            for format in FormatId::ALL {
                let plain = encode(format, &env, &options()).unwrap().bytes;
                let out = encode(format, &redacted, &options()).unwrap();
                prop_assert!(!format!("{:?}", out.losses).contains("zq"), "{format} losses: {:?}", out.losses);
                check_output(format, &plain, &out.bytes, &keeps)?;
            }
        }
    }
}

#[test]
fn a_tool_envelope_v1_block_read_as_plain_mcp_is_redacted_inside_and_stays_a_block() {
    let block = json!({"payload": {"api_key": "zqBlockKey1", "n": 1}, "meta": {"tool": "t", "ts": "2026-07-04T00:00:00Z", "version": 1}});
    let text = format!(
        "__ENVELOPE_V1__:{}",
        envelope::base64::encode(block.to_string().as_bytes())
    );
    let doc =
        json!({"content": [{"type": "text", "text": "done"}, {"type": "text", "text": text}]})
            .to_string();
    // Read as a plain MCP result, the block is only a text block of the payload.
    let shaped = shape(&doc, FormatId::Mcp, FormatId::Mcp);
    assert_hidden(&shaped, &["zqBlockKey1"], "mcp");
    // Still a tool-envelope-v1 result, whose block holds the masked payload.
    assert_valid(FormatId::ToolEnvelopeV1, &shaped.bytes);
    let env = decode(
        FormatId::ToolEnvelopeV1,
        &shaped.bytes,
        &DecodeOptions::default(),
    )
    .unwrap();
    assert_eq!(
        env.payload,
        envelope::Payload::Json(json!({"api_key": "***", "n": 1}))
    );
    let places: Vec<&str> = shaped.redactions.iter().map(|r| r.at.as_str()).collect();
    assert_eq!(places, ["payload/1/text##/payload/api_key"]);
}

#[test]
fn a_ctxo_document_in_an_mcp_result_has_its_transport_redacted() {
    let ctxo = json!({"results": [{"passphrase": "zqTransportPass"}], "_meta": {"totalItems": 1, "returnedItems": 1, "truncated": false, "totalBytes": 40}});
    let doc = json!({
        "content": [{"type": "text", "text": "note Bearer zqLeadTok3n"}, {"type": "text", "text": ctxo.to_string()}],
        "_meta": {"token": "zqOuterTok", "xoxb-zq34567890-outermeta": 1},
        "xoxb-zq34567890-outerkey": {"a": 1},
        "xoxb-zq34567890-outerkez": {"b": 2},
    })
    .to_string();
    let env = decode(FormatId::Ctxo, doc.as_bytes(), &DecodeOptions::default()).unwrap();
    assert!(
        env.layout.transport.is_some(),
        "read as ctxo in its MCP transport"
    );
    for to in FormatId::ALL {
        let shaped = shape(&doc, FormatId::Ctxo, to);
        assert_hidden(
            &shaped,
            &["zqTransportPass", "zqLeadTok3n", "zqOuterTok", "zq34567890"],
            &format!("ctxo in mcp -> {to}"),
        );
        assert_valid_as_plain(&doc, FormatId::Ctxo, to, &shaped.bytes);
    }
    // Written back the same way: two distinct masked members of the result.
    let out: Value =
        serde_json::from_slice(&shape(&doc, FormatId::Ctxo, FormatId::Ctxo).bytes).unwrap();
    assert_eq!(out["***"], json!({"a": 1}));
    assert_eq!(out["*** (2)"], json!({"b": 2}));
}

/// A result's `_meta` too deep to be read (a tree a caller built, past the depth limit)
/// cannot be searched for secrets: it is dropped, and the report says so, rather than
/// passed on unread.
#[test]
fn a_meta_too_deep_to_read_is_dropped_not_passed() {
    let secret = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
    let mut deep = json!({ "token": secret });
    for _ in 0..200 {
        deep = json!({ "next": deep });
    }
    let mut env = Envelope {
        source: Some(envelope::model::Source::Mcp {
            result_meta: Some(envelope::model::JsonText::from_value(&deep)),
        }),
        ..Envelope::default()
    };
    let report = redact_envelope(&mut env);
    let Some(envelope::model::Source::Mcp {
        result_meta: Some(meta),
    }) = &env.source
    else {
        panic!("the source is kept: {:?}", env.source);
    };
    assert!(!meta.as_str().contains(secret), "{}", meta.as_str());
    assert_eq!(meta.as_str(), "{}");
    assert!(report.iter().any(|r| r.rule == "unreadable"), "{report:?}");
}
