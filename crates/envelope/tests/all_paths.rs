//! One tester for every path: each document (the examples, the reference's fixtures, and
//! generated documents of every shape the library reads differently, re-spelled the ways
//! other writers spell JSON) goes through every way the library can run on it — keep-all,
//! limit, store, redact, capture, each output format, spliced or whole, `convert` to every
//! target, `unwrap` — and the result is compared with one expected result: the document
//! read whole and the stages applied to the tree, spelled once below ([`expected`],
//! [`expected_convert`], [`expected_unwrap`]). Bytes, loss reports, redactions, the
//! offload's outcome, the artifacts listed and the bytes stored all compare; so do errors.
//!
//! Which path the library takes for a document (a payload copied as written, read for the
//! limit, stored while read, redacted from its text, an error's text spliced) is its own
//! business: whatever it takes must give these results. As ripgrep's searcher tests force
//! every strategy against one expected output.

mod common;

use common::shapes::{examples_and_fixtures, random_documents};
use common::spelling::{Spelling, spell};
use common::{ByContent, Gen, encode_options};
use envelope::convert::Document;
use envelope::formats::{self, DecodeOptions, FormatId};
use envelope::model::{Payload, Status};
use envelope::shape::kept::{Kept, kept_payload, marker};
use envelope::shape::offload::{OffloadOptions, capture, offload};
use envelope::shape::redact::{redact_envelope, redact_error};
use envelope::shape::{Offloaded, Pipeline, Redaction, fit};
use serde_json::{Value, json};

/// How one run is told to shape.
#[derive(Clone, Copy, Debug)]
struct Mode {
    to: Option<FormatId>,
    limit: Option<usize>,
    redact: bool,
    /// The inline threshold of a store, or no store.
    store: Option<usize>,
    max_capture: Option<usize>,
}

impl Mode {
    /// Every stage off: the document converted to its own format.
    const PLAIN: Mode = Mode {
        to: None,
        limit: None,
        redact: false,
        store: None,
        max_capture: None,
    };

    fn redacted(self) -> Mode {
        Mode {
            redact: true,
            ..self
        }
    }

    fn to(self, format: FormatId) -> Mode {
        Mode {
            to: Some(format),
            ..self
        }
    }

    fn limit(self, limit: usize) -> Mode {
        Mode {
            limit: Some(limit),
            ..self
        }
    }

    /// A store keeping values up to `threshold` bytes inline.
    fn store(self, threshold: usize) -> Mode {
        Mode {
            store: Some(threshold),
            ..self
        }
    }

    fn capture(self, max: usize) -> Mode {
        Mode {
            max_capture: Some(max),
            ..self
        }
    }
}

/// What a shaping run gave, in a form that compares.
#[derive(Debug, PartialEq)]
struct Outcome {
    bytes: Vec<u8>,
    format: FormatId,
    losses: String,
    redactions: Vec<Redaction>,
    offloaded: Offloaded,
    /// The artifacts the run listed: digest, size and kind.
    listed: Vec<(String, usize, String)>,
    /// What the store holds after the run.
    stored: Vec<(String, Vec<u8>, String)>,
}

/// The one expected result: the document read whole, then redact → capture → offload →
/// budget on the tree, encoded, the output checked against the input.
fn expected(input: &[u8], mode: Mode) -> Result<Outcome, String> {
    let mut store = ByContent::default();
    let mut listed = Vec::new();
    let mut run = || -> envelope::Result<_> {
        let (format, mut env) = formats::decode_any(input, None, &DecodeOptions::default())
            .map_err(|e| if mode.redact { redact_error(e) } else { e })?;
        let format = mode.to.unwrap_or(format);
        let redactions = match mode.redact {
            true => redact_envelope(&mut env),
            false => Vec::new(),
        };
        let had_presentation = env.presentation.is_some();
        let offloaded = match mode.store {
            Some(inline_threshold) => {
                let options = OffloadOptions {
                    inline_threshold,
                    max_capture: mode.max_capture,
                };
                let mut recorder = Recorder {
                    store: &mut store,
                    listed: &mut listed,
                };
                offload(&mut env, format, &options, &mut recorder)?
            }
            None => capture(&mut env, format, mode.max_capture),
        };
        let mut encoded = match mode.limit {
            Some(limit) => fit(&env, format, limit, &encode_options())?.encoded,
            None => formats::encode(format, &env, &encode_options())?,
        };
        if had_presentation && env.presentation.is_none() {
            encoded.losses.items.insert(
                0,
                formats::Loss {
                    field: "presentation".into(),
                    reason: "the content blocks are not stored with the payload: left out when it was offloaded or refused by the capture limit".into(),
                },
            );
        }
        envelope::validate::check_output_of(&encoded.bytes, format, input)?;
        Ok((encoded, format, redactions, offloaded))
    };
    let (encoded, format, redactions, offloaded) = run().map_err(|e| e.to_string())?;
    Ok(Outcome {
        bytes: encoded.bytes,
        format,
        losses: format!("{:?}", encoded.losses),
        redactions,
        offloaded,
        listed,
        stored: stored(store),
    })
}

/// A sink that lists what it is given, as the pipeline lists its artifacts.
struct Recorder<'a> {
    store: &'a mut ByContent,
    listed: &'a mut Vec<(String, usize, String)>,
}

impl envelope::shape::ArtifactSink for Recorder<'_> {
    fn put(
        &mut self,
        bytes: &[u8],
        kind: &str,
    ) -> Result<envelope::model::ArtifactRef, envelope::shape::SinkError> {
        let artifact = self.store.put(bytes, kind)?;
        self.listed
            .push((artifact.digest.clone(), bytes.len(), kind.to_string()));
        Ok(artifact)
    }
}

fn stored(store: ByContent) -> Vec<(String, Vec<u8>, String)> {
    store
        .0
        .into_iter()
        .map(|(digest, (bytes, kind))| (digest, bytes, kind))
        .collect()
}

/// The pipeline as its callers run it, whole (`run`) or spliced (`run_spliced`, what
/// `envelope shape` writes).
fn piped(input: &[u8], mode: Mode, spliced: bool) -> Result<Outcome, String> {
    let mut store = ByContent::default();
    let mut pipeline = Pipeline::new(input)
        .output_format(mode.to)
        .limit(mode.limit)
        .redact(mode.redact)
        .max_capture(mode.max_capture)
        .encode_options(encode_options());
    if let Some(threshold) = mode.store {
        pipeline = pipeline.inline_threshold(threshold).store(&mut store);
    }
    let shaped = match spliced {
        false => pipeline.run(),
        true => pipeline.run_spliced().map(|(output, mut shaped)| {
            assert!(
                shaped.bytes.is_empty(),
                "a spliced run's bytes are the splice's"
            );
            shaped.bytes = output.to_vec();
            shaped
        }),
    }
    .map_err(|e| e.to_string())?;
    Ok(Outcome {
        bytes: shaped.bytes,
        format: shaped.format,
        losses: format!("{:?}", shaped.losses),
        redactions: shaped.redactions,
        offloaded: shaped.offloaded,
        listed: shaped
            .artifacts
            .iter()
            .map(|a| (a.digest.clone(), a.size_bytes, a.kind.clone()))
            .collect(),
        stored: stored(store),
    })
}

/// `convert` read whole: decode, encode, check.
fn expected_convert(input: &[u8], to: FormatId) -> Result<(Vec<u8>, String), String> {
    let run = || -> envelope::Result<_> {
        let (_, env) = formats::decode_any(input, None, &DecodeOptions::default())?;
        let encoded = formats::encode(to, &env, &encode_options())?;
        envelope::validate::check_output_of(&encoded.bytes, to, input)?;
        Ok((encoded.bytes, format!("{:?}", encoded.losses)))
    };
    run().map_err(|e| e.to_string())
}

/// `unwrap` read whole: the payload (or what a cut kept of it, or the error as an
/// object), compact, as the JS writer writes it.
fn expected_unwrap(input: &[u8]) -> Result<Vec<u8>, String> {
    let (_, env) =
        formats::decode_any(input, None, &DecodeOptions::default()).map_err(|e| e.to_string())?;
    let js = |value: &Value| envelope::json::to_vec(value, envelope::json::Dialect::Js);
    if let (Payload::None, Some(error), Status::Error) = (&env.payload, &env.error, env.status) {
        return Ok(js(&formats::operations::error_object(error)));
    }
    if marker(&env).is_none() {
        return Ok(js(&env.payload.json()));
    }
    match kept_payload(&env) {
        Kept::Whole(value) | Kept::Part(value) => Ok(js(&value)),
        Kept::LeftOut => Err(envelope::Error::PayloadLeftOut.to_string()),
    }
}

/// Detection as it was defined: the document read whole, then each format's evidence.
fn expected_detect(input: &[u8]) -> Result<(FormatId, String), String> {
    if let Some((format, evidence)) = formats::identify_text(input) {
        return Ok((format.id(), evidence.reason));
    }
    let value = envelope::json::from_slice(input).map_err(|e| e.to_string())?;
    envelope::detect::detect_value(&value)
        .map(|d| (d.format, d.reason))
        .map_err(|e| e.to_string())
}

/// `detect` (which builds only the members detection reads) against [`expected_detect`]:
/// the same format and reason, or the same error, word for word.
fn check_detect(name: &str, input: &[u8]) {
    let got = envelope::detect(input)
        .map(|d| (d.format, d.reason))
        .map_err(|e| e.to_string());
    let want = expected_detect(input);
    assert!(
        got == want,
        "{name}: detect differs from the whole read\ninput: {}\nwant: {want:?}\ngot:  {got:?}",
        shown(input)
    );
}

/// `input` broken the ways a stream breaks: cut short, a byte replaced, a byte added.
fn broken(input: &[u8], g: &mut Gen) -> Vec<Vec<u8>> {
    if input.is_empty() {
        return Vec::new();
    }
    let at = g.below(input.len() as u64) as usize;
    let byte = b"{}[]\",:x0\\ \xff"[g.below(12) as usize];
    let mut replaced = input.to_vec();
    replaced[at] = byte;
    let mut added = input.to_vec();
    added.insert(at, byte);
    let mut trailing = input.to_vec();
    trailing.extend_from_slice(b" x");
    vec![input[..at].to_vec(), replaced, added, trailing]
}

/// Every way of running on `input` against the one expected result. `modes` are the
/// shaping runs; `convert` and `unwrap` run for every target.
fn check_every_path(name: &str, input: &[u8], modes: &[Mode]) {
    check_detect(name, input);
    for &mode in modes {
        let want = expected(input, mode);
        for spliced in [false, true] {
            let got = piped(input, mode, spliced);
            if got != want {
                panic!(
                    "{name}: {mode:?} (spliced: {spliced}) differs from the whole read\n\
                     input: {}\nwant: {}\ngot:  {}",
                    shown(input),
                    outcome_text(&want),
                    outcome_text(&got),
                );
            }
        }
    }
    let document = Document::new(input);
    for to in FormatId::ALL {
        let want = expected_convert(input, to);
        let got = document
            .convert(to, &encode_options())
            .map(|written| (written.to_vec(), format!("{:?}", written.losses)))
            .map_err(|e| e.to_string());
        assert!(
            got == want,
            "{name}: convert to {to:?} differs from the whole read\ninput: {}\nwant: {want:?}\ngot:  {got:?}",
            shown(input)
        );
    }
    let want = expected_unwrap(input);
    let got = document
        .unwrap()
        .map(|written| written.to_vec())
        .map_err(|e| e.to_string());
    assert!(
        got == want,
        "{name}: unwrap differs from the whole read\ninput: {}\nwant: {}\ngot:  {}",
        shown(input),
        bytes_text(&want),
        bytes_text(&got),
    );
}

fn shown(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    match text.chars().count() > 600 {
        true => format!(
            "{}… ({} bytes)",
            text.chars().take(600).collect::<String>(),
            bytes.len()
        ),
        false => text.into_owned(),
    }
}

fn outcome_text(outcome: &Result<Outcome, String>) -> String {
    match outcome {
        Ok(o) => format!(
            "{:?} {} losses={} redactions={:?} offloaded={:?} listed={:?} stored={}",
            o.format,
            shown(&o.bytes),
            o.losses,
            o.redactions,
            o.offloaded,
            o.listed,
            o.stored.len()
        ),
        Err(e) => format!("error: {e}"),
    }
}

fn bytes_text(result: &Result<Vec<u8>, String>) -> String {
    match result {
        Ok(bytes) => shown(bytes),
        Err(e) => format!("error: {e}"),
    }
}

/// The modes every document runs in: each option alone, then `random` mixes of them.
fn modes(len: usize, g: &mut Gen, random: usize) -> Vec<Mode> {
    let plain = Mode::PLAIN;
    let limits = [256, 1024, 4096, (len / 3).max(200), len.max(200)];
    let mut modes = vec![
        plain,
        plain.redacted(),
        plain.store(64),
        plain.store(64).redacted(),
        plain.capture(len / 2),
    ];
    modes.extend(limits.iter().map(|&limit| plain.limit(limit)));
    modes.extend(FormatId::ALL.iter().map(|&to| plain.to(to)));
    for _ in 0..random {
        let pick = |g: &mut Gen, n: u64| g.below(n) as usize;
        modes.push(Mode {
            to: match pick(g, 3) {
                0 => None,
                _ => Some(FormatId::ALL[pick(g, FormatId::ALL.len() as u64)]),
            },
            limit: match pick(g, 3) {
                0 => None,
                _ => Some(limits[pick(g, limits.len() as u64)]),
            },
            redact: pick(g, 2) == 0,
            store: match pick(g, 3) {
                0 => Some([0, 64, 1024, len][pick(g, 4)]),
                _ => None,
            },
            max_capture: match pick(g, 5) {
                0 => Some([16, len / 2, len][pick(g, 3)]),
                _ => None,
            },
        });
    }
    modes
}

/// `doc` as another writer would write it: numbers re-spelled, keys reversed or not,
/// indented or not, `\u` escapes or not (the value read back is the same).
fn respelled(doc: &[u8], g: &mut Gen) -> Option<Vec<u8>> {
    let value: Value = serde_json::from_slice(doc).ok()?;
    Some(spell(&value, Spelling::new(g)).into_bytes())
}

/// Documents the generators of the other tests leave out: long text in an error result,
/// secrets in every channel, a large `_meta`, non-object payloads, several text blocks.
fn more_shapes(g: &mut Gen) -> Vec<Vec<u8>> {
    let long = |g: &mut Gen, n: usize| {
        (0..n)
            .map(|i| format!("line {i}: {}\n", g.string()))
            .collect::<String>()
    };
    let secret = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
    let lines = 40 + g.below(200) as usize;
    let text = long(g, lines);
    let docs = [
        json!({"content": [{"type": "text", "text": text}], "isError": true}),
        json!({"content": [{"type": "text", "text": format!("token={secret}\n{text}")}], "isError": true}),
        json!({"content": [{"type": "text", "text": text}, {"type": "text", "text": long(g, 20)}]}),
        json!({"content": [{"type": "text", "text": format!("Authorization: Bearer {secret}")}],
               "structuredContent": {"api_key": secret, "rows": [1, 2, 3]}}),
        json!({"content": [{"type": "text", "text": "ok"}],
               "structuredContent": {"rows": (0..g.below(200)).map(|i| json!({"i": i, "f": (i as f64) + 0.5})).collect::<Vec<_>>()},
               "_meta": {"trace": long(g, 50)}}),
        json!({"version": 1, "status": "error", "command": "a.b",
               "data": null, "meta": {"ts": "2026-01-01T00:00:00Z"},
               "error": {"code": "E", "message": text}}),
        json!({"data": [1, "two", null, 3.5, text], "meta": {"source": "local", "password": secret}}),
        json!({"data": text, "meta": {"source": "local"}}),
        // A string payload of multi-byte characters, a secret at its end.
        json!({"data": format!("{}{secret}", "\u{4e2d}".repeat(600)), "meta": {"source": "local"}}),
        json!({"results": (0..g.below(100)).map(|i| json!({"id": i, "token": secret})).collect::<Vec<_>>(),
               "_meta": {"totalItems": 1, "returnedItems": 1, "truncated": false}}),
    ];
    docs.iter()
        .map(|doc| serde_json::to_vec(doc).unwrap())
        .collect()
}

#[test]
fn examples_and_fixtures_give_the_whole_reads_results_on_every_path() {
    let mut g = Gen::new(0x0a11_9a75);
    for (name, doc) in examples_and_fixtures() {
        let modes = modes(doc.len(), &mut g, 24);
        check_every_path(&name, &doc, &modes);
        if let Some(respelled) = respelled(&doc, &mut g) {
            check_every_path(&format!("{name}, re-spelled"), &respelled, &modes);
        }
    }
}

#[test]
fn generated_documents_give_the_whole_reads_results_on_every_path() {
    let mut g = Gen::new(0x0e7e_9a75);
    for round in 0..6 {
        let mut docs = random_documents(&mut g);
        docs.extend(more_shapes(&mut g));
        for (i, doc) in docs.iter().enumerate() {
            for broken in broken(doc, &mut g) {
                check_detect(&format!("round {round}, document {i}, broken"), &broken);
            }
            let modes = modes(doc.len(), &mut g, 6);
            check_every_path(&format!("round {round}, document {i}"), doc, &modes);
            if let Some(respelled) = respelled(doc, &mut g) {
                let name = format!("round {round}, document {i}, re-spelled");
                check_every_path(&name, &respelled, &modes);
            }
        }
    }
}

/// Documents from the size on which the library reads some shapes piecewise (256 KiB):
/// long text results (clean, with secrets, errors), large payload members with secrets in
/// each format that moves its payload from a member; and the modes that matter there.
fn large_documents(g: &mut Gen) -> Vec<Vec<u8>> {
    let secret = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
    let lines = |g: &mut Gen, with_secret: bool| {
        let mut text = String::new();
        let mut i = 0;
        while text.len() < 300 << 10 {
            text.push_str(&format!("line {i}: {}\n", g.string()));
            if with_secret && i % 997 == 500 {
                text.push_str(&format!("export GITHUB_TOKEN={secret}\n"));
            }
            i += 1;
        }
        text
    };
    let records = |g: &mut Gen| {
        (0..3000)
            .map(
                |i| json!({"id": i, "name": g.string(), "f": (i as f64) / 4.0, "password": secret}),
            )
            .collect::<Vec<_>>()
    };
    let (clean, dirty) = (lines(g, false), lines(g, true));
    let rows = records(g);
    let rows_text = serde_json::to_string(&rows).unwrap();
    let docs = [
        json!({"content": [{"type": "text", "text": clean}]}),
        json!({"content": [{"type": "text", "text": dirty}], "isError": false, "_meta": {"k": 1}}),
        json!({"content": [{"type": "text", "text": dirty}], "isError": true}),
        json!({"content": [{"type": "text", "text": rows_text}], "structuredContent": {"rows": rows}}),
        json!({"content": [{"type": "text", "text": "Rows."}], "structuredContent": {"rows": rows}}),
        json!({"data": {"rows": rows}, "meta": {"source": "local"}}),
        // A key ctxo's own truncation cuts, and no report of ctxo's: to ctxo, it is cut.
        json!({"data": {"results": rows}, "meta": {"source": "local"}}),
        json!({"version": 1, "status": "ok", "command": "a.b", "data": rows,
               "meta": {"ts": "2026-01-01T00:00:00Z", "source": "run"}, "error": {}}),
        json!({"results": rows, "_meta": {"totalItems": 3000, "returnedItems": 3000, "truncated": false}}),
    ];
    let mut docs: Vec<Vec<u8>> = docs
        .iter()
        .map(|doc| serde_json::to_vec(doc).unwrap())
        .collect();
    // `structuredContent` and its mirror both as another writer spells them (the Python
    // SDK: `1.0`, `": "`), the text the very bytes of the member: the whole read finds no
    // mirror (it compares the JS writer's text), so the blocks stay as they are.
    // Also without secrets: redaction then leaves the mirror as it is.
    let clean_rows: Vec<Value> = (rows.iter())
        .map(|row| {
            let mut row = row.clone();
            row.as_object_mut().unwrap().remove("password");
            row
        })
        .collect();
    for (spaced, rows) in [(true, &rows), (false, &rows), (true, &clean_rows)] {
        let spelling = Spelling {
            spaced,
            ascii: !spaced,
            reversed: false,
            seed: g.next(),
        };
        let text = spell(&json!({"rows": rows}), spelling);
        let mirror = serde_json::to_string(&Value::String(text.clone())).unwrap();
        docs.push(
            format!(r#"{{"content": [{{"type": "text", "text": {mirror}}}], "structuredContent": {text}}}"#)
                .into_bytes(),
        );
    }
    // tool-envelope-v1 dual emits: `structuredContent` the block's document (as written,
    // and indented), and one that is another document (not a dual emit: kept beside).
    let inner = format!(
        r#"{{"payload":{{"rows":{rows_text}}},"meta":{{"tool":"rows.list","ts":"2026-01-01T00:00:00.000Z","version":1}}}}"#
    );
    let block = format!(
        "__ENVELOPE_V1__:{}",
        envelope::base64::encode(inner.as_bytes())
    );
    let indented =
        serde_json::to_string_pretty(&serde_json::from_str::<Value>(&inner).unwrap()).unwrap();
    let other = inner.replacen("rows.list", "rows.other", 1);
    for structured in [&inner, &indented, &other] {
        docs.push(
            format!(r#"{{"content":[{{"type":"text","text":"Rows."}},{{"type":"text","text":"{block}"}}],"structuredContent":{structured}}}"#)
                .into_bytes(),
        );
    }
    // A long string inside a payload member (read as a prefix), with secrets, written as
    // the JS writer writes it and with every non-ASCII character as a `\u` escape.
    let cjk: String = (0..20_000)
        .map(|i| char::from_u32(0x4e00 + i % 2000).unwrap())
        .collect();
    let long = format!("{cjk}\n{dirty}");
    docs.push(
        serde_json::to_vec(&json!({"data": {"text": long, "n": 1}, "meta": {"source": "local"}}))
            .unwrap(),
    );
    docs.push(serde_json::to_vec(&json!({"data": long, "meta": {"source": "local"}})).unwrap());
    let escaped: String = serde_json::to_string(&long)
        .unwrap()
        .chars()
        .map(|c| match c.is_ascii() {
            true => c.to_string(),
            false => (c.encode_utf16(&mut [0; 2]).iter())
                .map(|unit| format!("\\u{unit:04x}"))
                .collect(),
        })
        .collect();
    docs.push(
        format!(r#"{{"version":1,"status":"ok","command":"a.b","data":{{"text":{escaped},"n":1}},"meta":{{"ts":"2026-01-01T00:00:00Z"}},"error":{{}}}}"#)
            .into_bytes(),
    );
    // Several long text blocks: secrets in the first; a private key that the first ends
    // inside of and the second closes (masked across the two); dashes and no key.
    let key = "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\n";
    let rest = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n-----END PRIVATE KEY-----\n";
    for blocks in [
        json!([{"type": "text", "text": dirty}, {"type": "text", "text": clean}]),
        json!([{"type": "text", "text": format!("{clean}{key}")}, {"type": "text", "text": format!("{rest}{dirty}")}]),
        json!([{"type": "text", "text": format!("{clean}\n-----\n")}, {"type": "text", "text": dirty}]),
    ] {
        docs.push(serde_json::to_vec(&json!({ "content": blocks })).unwrap());
    }
    // A tool-envelope-v1 result as the reference writes it (no dual emit).
    docs.push(
        format!(
            r#"{{"content":[{{"type":"text","text":"Rows."}},{{"type":"text","text":"{block}"}}]}}"#
        )
        .into_bytes(),
    );
    // ctxo documents whose `_meta` is written as it was read: first, with counts that do
    // not match the array (a defect carried, not made), and beside a key ctxo never cuts,
    // rows without secrets (redaction leaves the document as it is).
    let clean_text = serde_json::to_string(&clean_rows).unwrap();
    let report =
        |n: usize| format!(r#"{{"totalItems":{n},"returnedItems":{n},"truncated":false}}"#);
    docs.push(format!(r#"{{"_meta":{},"results":{rows_text}}}"#, report(3000)).into_bytes());
    docs.push(format!(r#"{{"results":{rows_text},"_meta":{}}}"#, report(1)).into_bytes());
    docs.push(
        format!(
            r#"{{"query":"rows","results":{clean_text},"_meta":{}}}"#,
            report(3000)
        )
        .into_bytes(),
    );
    // A large result `_meta` (written from its text by the whole path): with secrets, in
    // operations' `meta`, beside ctxo's budget fields (detection reads them: written whole),
    // and beside a payload that holds the stand-in's mark (written whole).
    let meta = json!({"trace": dirty, "spans": [1.0, 2.5, {"k": null}]});
    let docs_with_meta = [
        json!({"content": [{"type": "text", "text": "ok"}], "_meta": meta}),
        json!({"content": [{"type": "text", "text": "Rows."}], "structuredContent": {"rows": clean_rows}, "_meta": meta}),
        json!({"data": {"ok": true}, "meta": {"source": "mcp", "isError": false,
               "content": [{"type": "text", "text": "{\"ok\":true}"}], "structuredContent": {"ok": true}, "_meta": meta}}),
        json!({"content": [{"type": "text", "text": "ok"}], "_meta": {"totalItems": 1, "truncated": false, "trace": clean}}),
        json!({"content": [{"type": "text", "text": "Rows."}], "structuredContent": {"rows": rows}, "_meta": {"spans": clean_rows}}),
        json!({"content": [{"type": "text", "text": "\u{0}envelope:meta-apart\u{0}"}], "_meta": meta}),
    ];
    docs.extend(
        docs_with_meta
            .iter()
            .map(|doc| serde_json::to_vec(doc).unwrap()),
    );
    docs
}

// The large documents in three shards (every third document each), so that the test
// binary keeps both cores busy: in one test they took 150 s on one core.
#[test]
fn large_documents_give_the_whole_reads_results_on_every_path_1_of_3() {
    check_large_documents(0, 3);
}

#[test]
fn large_documents_give_the_whole_reads_results_on_every_path_2_of_3() {
    check_large_documents(1, 3);
}

#[test]
fn large_documents_give_the_whole_reads_results_on_every_path_3_of_3() {
    check_large_documents(2, 3);
}

/// Every `shards`-th large document from the `shard`-th, on every path. Every shard makes
/// the same documents and re-spellings (the generator runs through all of them).
fn check_large_documents(shard: usize, shards: usize) {
    let mut g = Gen::new(0x1a7e_9a75);
    let plain = Mode::PLAIN;
    let mut modes = vec![
        plain,
        plain.redacted(),
        plain.limit(4096),
        plain.limit(4096).redacted(),
        plain.store(1024),
        plain.store(1024).redacted(),
        plain.store(1024).redacted().limit(2048),
        plain.store(1 << 30).redacted(),
        plain.to(FormatId::ProtocolV1).limit(4096).redacted(),
        plain.to(FormatId::Mcp).store(1024),
        plain.capture(100 << 10).redacted(),
    ];
    for to in FormatId::ALL {
        modes.push(plain.to(to));
        modes.push(plain.to(to).redacted());
    }
    let mut checked = 0;
    for (i, doc) in large_documents(&mut g).iter().enumerate() {
        let respelled = respelled(doc, &mut g);
        if i % shards != shard {
            continue;
        }
        checked += 1;
        check_every_path(&format!("large document {i}"), doc, &modes);
        if let Some(respelled) = respelled {
            check_every_path(
                &format!("large document {i}, re-spelled"),
                &respelled,
                &modes,
            );
        }
    }
    assert!(checked > 0, "shard {shard} of {shards} checked nothing");
}

/// Detection reads only the start of a text block that cannot hold a document: texts
/// around that boundary — markers of tool-envelope-v1 with long digit runs, white space
/// before a ctxo document, long logs, escapes — are detected as the whole read detects them.
#[test]
fn detection_of_long_texts_agrees_with_the_whole_read() {
    let log: String = (0..3000).map(|i| format!("line {i}\n")).collect();
    let ctxo = r#"{"results":[1],"_meta":{"totalItems":3,"returnedItems":1,"truncated":true}}"#;
    let texts = [
        log.clone(),
        format!("__ENVELOPE_V1__:{}", "QUJD".repeat(5000)),
        format!("__ENVELOPE_V{}1__:eyJ9", "0".repeat(200)),
        format!("__ENVELOPE_V{}", "1".repeat(200)),
        format!("__ENVELOPE_V{}_:x{log}", "2".repeat(60)),
        format!("{}{ctxo}", " \n\t".repeat(100)),
        format!("{}plain {log}", " ".repeat(300)),
        format!("\\u{}{log}", "00e9"),
        format!("é{}", "\u{1F600}".repeat(40)),
        " ".repeat(500),
        String::new(),
        "x".repeat(63),
        "x".repeat(64),
        "x".repeat(65),
    ];
    for (i, text) in texts.iter().enumerate() {
        for doc in [
            json!({"content": [{"type": "text", "text": text}]}),
            json!({"content": [{"type": "text", "text": text}, {"type": "text", "text": ctxo}]}),
            json!({"content": [{"type": "text", "text": ctxo}, {"type": "text", "text": text}]}),
            json!({"content": [{"type": "text", "text": "ok"}, {"text": text, "type": "text"}], "isError": true}),
            json!({"content": [{"type": "image", "data": text, "mimeType": "image/png"}, {"type": "text", "text": text}]}),
            // `_meta` as ctxo's evidence reads it: which budget fields it has.
            json!({"content": [{"type": "text", "text": text}], "_meta": {"trace": text}}),
            json!({"content": [{"type": "text", "text": text}], "_meta": {"trace": text, "truncated": true}}),
            json!({"results": [text], "_meta": {"totalItems": 1, "hint": text}}),
            json!({"results": [text], "_meta": text}),
            json!({"results": [text], "_meta": [text, {"totalItems": 1}]}),
        ] {
            check_detect(&format!("text {i}"), &serde_json::to_vec(&doc).unwrap());
            check_detect(
                &format!("text {i}, indented"),
                &serde_json::to_vec_pretty(&doc).unwrap(),
            );
        }
    }
}
