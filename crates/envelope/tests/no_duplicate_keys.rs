//! No output ever has a duplicate key, at any depth (issue 12, item 8).
//!
//! A strict scanner reads every output byte by byte and records the keys of each object; it
//! also reads the JSON documents a format embeds in a string (tool-envelope-v1's base64
//! block, ctxo inside an MCP result's text block, MCP's text mirror). It runs over every
//! bundled example encoded in every format; over envelopes of every status, with and
//! without an error, shaped with small limits, offloaded through a memory sink and refused
//! by the capture limit; over envelopes whose origin format carries extensions at every
//! place an encoder writes a key of its own; and over random payloads × formats × limits ×
//! capture limits.

use std::collections::BTreeSet;

use envelope::model::{ArtifactRef, BudgetReport, Extension, JsonText};
use envelope::shape::Pipeline;
use envelope::{
    Category, DecodeOptions, EncodeOptions, Envelope, EnvelopeError, FormatId, Payload, Source,
    Status, encode,
};
use proptest::prelude::*;

mod common;
use common::Memory;
use serde_json::{Value, json};

// ---------------------------------------------------------------------------------------
// The checker
// ---------------------------------------------------------------------------------------

/// Every duplicate key in the JSON document `bytes`, as `pointer: "key"`, at any depth,
/// inside embedded documents too. Panics when `bytes` is not one JSON document.
fn duplicate_keys(bytes: &[u8]) -> Vec<String> {
    let mut scanner = Scanner {
        bytes,
        at: 0,
        found: Vec::new(),
    };
    scanner.ws();
    scanner.value("");
    scanner.ws();
    assert_eq!(
        scanner.at,
        bytes.len(),
        "trailing bytes after the document: {}",
        String::from_utf8_lossy(bytes)
    );
    scanner.found
}

/// Every member pointer of the JSON document `bytes` (`/a/b`, `#` entering an embedded
/// document), in document order.
fn member_pointers(bytes: &[u8]) -> Vec<String> {
    let mut pointers = Vec::new();
    collect_pointers(
        &serde_json::from_slice(bytes).expect("valid JSON"),
        "",
        &mut pointers,
    );
    pointers
}

fn collect_pointers(value: &Value, at: &str, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                let p = format!("{at}/{}", escape(k));
                out.push(p.clone());
                collect_pointers(v, &p, out);
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                collect_pointers(v, &format!("{at}/{i}"), out);
            }
        }
        Value::String(s) => {
            if let Some(inner) = embedded(s) {
                collect_pointers(&inner, &format!("{at}#"), out);
            }
        }
        _ => {}
    }
}

fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// The JSON document a string carries: a tool-envelope-v1 block (`__ENVELOPE_V1__:` and
/// base64), or JSON text (an object or array: ctxo in an MCP text block, the MCP mirror).
fn embedded(text: &str) -> Option<Value> {
    embedded_bytes(text).and_then(|b| serde_json::from_slice(&b).ok())
}

fn embedded_bytes(text: &str) -> Option<Vec<u8>> {
    if let Some(b64) = text.strip_prefix("__ENVELOPE_V1__:") {
        return envelope::base64::decode_strict(b64.as_bytes()).ok();
    }
    let trimmed = text.trim_start();
    (trimmed.starts_with('{') || trimmed.starts_with('['))
        .then(|| text.as_bytes().to_vec())
        .filter(|b| serde_json::from_slice::<serde::de::IgnoredAny>(b).is_ok())
}

struct Scanner<'a> {
    bytes: &'a [u8],
    at: usize,
    found: Vec<String>,
}

impl Scanner<'_> {
    fn peek(&self) -> u8 {
        *self.bytes.get(self.at).unwrap_or_else(|| {
            panic!(
                "document ends early: {}",
                String::from_utf8_lossy(self.bytes)
            )
        })
    }

    fn ws(&mut self) {
        while self.at < self.bytes.len()
            && matches!(self.bytes[self.at], b' ' | b'\t' | b'\n' | b'\r')
        {
            self.at += 1;
        }
    }

    fn expect(&mut self, b: u8) {
        assert_eq!(self.peek(), b, "at byte {}", self.at);
        self.at += 1;
    }

    /// A string token, decoded.
    fn string(&mut self) -> String {
        let start = self.at;
        self.expect(b'"');
        loop {
            match self.peek() {
                b'"' => break,
                b'\\' => self.at += 2,
                _ => self.at += 1,
            }
        }
        self.at += 1;
        serde_json::from_slice(&self.bytes[start..self.at]).expect("a valid JSON string")
    }

    fn value(&mut self, at: &str) {
        match self.peek() {
            b'{' => {
                self.at += 1;
                let mut keys = BTreeSet::new();
                self.ws();
                if self.peek() == b'}' {
                    self.at += 1;
                    return;
                }
                loop {
                    self.ws();
                    let key = self.string();
                    let here = format!("{at}/{}", escape(&key));
                    if !keys.insert(key.clone()) {
                        self.found
                            .push(format!("{}: {key:?}", if at.is_empty() { "/" } else { at }));
                    }
                    self.ws();
                    self.expect(b':');
                    self.ws();
                    self.value(&here);
                    self.ws();
                    match self.peek() {
                        b',' => self.at += 1,
                        b'}' => {
                            self.at += 1;
                            return;
                        }
                        other => panic!("unexpected {:?} at byte {}", other as char, self.at),
                    }
                }
            }
            b'[' => {
                self.at += 1;
                self.ws();
                if self.peek() == b']' {
                    self.at += 1;
                    return;
                }
                let mut i = 0;
                loop {
                    self.ws();
                    self.value(&format!("{at}/{i}"));
                    i += 1;
                    self.ws();
                    match self.peek() {
                        b',' => self.at += 1,
                        b']' => {
                            self.at += 1;
                            return;
                        }
                        other => panic!("unexpected {:?} at byte {}", other as char, self.at),
                    }
                }
            }
            b'"' => {
                let text = self.string();
                if let Some(inner) = embedded_bytes(&text) {
                    let mut nested = Scanner {
                        bytes: &inner,
                        at: 0,
                        found: Vec::new(),
                    };
                    nested.ws();
                    nested.value(&format!("{at}#"));
                    self.found.append(&mut nested.found);
                }
            }
            _ => {
                // A number or a literal: up to the next delimiter.
                let start = self.at;
                while self.at < self.bytes.len()
                    && !matches!(
                        self.bytes[self.at],
                        b',' | b'}' | b']' | b' ' | b'\n' | b'\r' | b'\t'
                    )
                {
                    self.at += 1;
                }
                let token = &self.bytes[start..self.at];
                assert!(
                    serde_json::from_slice::<Value>(token)
                        .is_ok_and(|v| !v.is_object() && !v.is_array()),
                    "not a JSON scalar: {}",
                    String::from_utf8_lossy(token)
                );
            }
        }
    }
}

/// Panics with the document and what produced it when `bytes`, written as `format`, has a
/// duplicate key.
#[track_caller]
fn assert_unique(bytes: &[u8], format: FormatId, what: &str) {
    let dups = duplicate_keys(bytes);
    assert!(
        dups.is_empty(),
        "{what} ({format}): duplicate keys {dups:?} in\n{}",
        String::from_utf8_lossy(bytes)
    );
}

#[test]
fn the_checker_finds_duplicates_at_any_depth_and_in_embedded_documents() {
    assert!(duplicate_keys(br#"{"a":1,"b":{"c":[{"d":1}]}}"#).is_empty());
    assert_eq!(duplicate_keys(br#"{"a":1,"a":2}"#), [r#"/: "a""#]);
    assert_eq!(
        duplicate_keys(br#" {"x":[{"y":{},"y":[]}] } "#),
        [r#"/x/0: "y""#]
    );
    // Keys are compared decoded: "\u0061" is "a".
    assert_eq!(duplicate_keys(br#"{"a":1,"\u0061":2}"#), [r#"/: "a""#]);
    // JSON text in a string (ctxo in an MCP block, the MCP mirror).
    assert_eq!(
        duplicate_keys(br#"{"content":[{"type":"text","text":"{\"k\":1,\"k\":2}"}]}"#),
        [r#"/content/0/text#: "k""#]
    );
    // tool-envelope-v1's base64 block.
    let block = format!(
        "__ENVELOPE_V1__:{}",
        envelope::base64::encode(br#"{"payload":1,"meta":{"v":1,"v":1}}"#)
    );
    let doc = json!({"content": [{"type": "text", "text": "s"}, {"type": "text", "text": block}]});
    assert_eq!(
        duplicate_keys(doc.to_string().as_bytes()),
        [r#"/content/1/text#/meta: "v""#]
    );
    assert!(
        member_pointers(doc.to_string().as_bytes())
            .contains(&"/content/1/text#/meta/v".to_string())
    );
}

// ---------------------------------------------------------------------------------------
// Inputs
// ---------------------------------------------------------------------------------------

fn options() -> EncodeOptions {
    EncodeOptions {
        now: Some("2026-07-04T00:00:00Z".into()),
        ..EncodeOptions::default()
    }
}

/// The encode options worth varying for `format`: plain, and dual emit (tool-envelope-v1)
/// or indented (tool-result-envelope).
fn option_sets(format: FormatId) -> Vec<EncodeOptions> {
    match format {
        FormatId::ToolEnvelopeV1 => vec![
            options(),
            EncodeOptions {
                dual_emit: true,
                ..options()
            },
        ],
        FormatId::ToolResultEnvelope => vec![
            options(),
            EncodeOptions {
                indented: true,
                ..options()
            },
        ],
        _ => vec![options()],
    }
}

/// The bundled example of each format (`examples/<format id>.json`; the other files there
/// are sample inputs of the README, not all of them envelopes).
fn examples() -> Vec<(String, Vec<u8>)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let mut out: Vec<_> = FormatId::ALL
        .iter()
        .map(|f| dir.join(format!("{f}.json")))
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read(&p).unwrap(),
            )
        })
        .collect();
    out.sort();
    assert!(out.len() >= 6, "the bundled examples are missing");
    out
}

fn rows(n: usize) -> Value {
    Value::Array(
        (0..n)
            .map(|i| json!({"id": i, "name": format!("row {i}"), "body": "b".repeat(40)}))
            .collect(),
    )
}

/// Envelopes of every status, with and without an error, with a rich set of typed fields.
fn typed_envelopes() -> Vec<(String, Envelope)> {
    let mut out = Vec::new();
    let payloads = [
        (
            "object",
            Payload::Json(json!({"items": rows(20), "note": "n".repeat(300)})),
        ),
        ("array", Payload::Json(rows(20))),
        ("text", Payload::Text("t".repeat(600))),
        ("none", Payload::None),
        (
            "blocks",
            Payload::Blocks(vec![
                json!({"type": "text", "text": "one"}),
                json!({"type": "image", "data": "AAAA", "mimeType": "image/png"}),
            ]),
        ),
    ];
    let errors = [
        None,
        Some(EnvelopeError::from_code("ENOTFOUND", "no such row")),
        Some(EnvelopeError {
            details: Some(json!({"attempts": 3, "category": "x"})),
            suggested_action: Some("retry".into()),
            next_tool: Some("rows/list".into()),
            hint: Some("ask for fewer".into()),
            recoverable: Some(true),
            ..EnvelopeError::new(Category::Other("weird".into()), "odd")
        }),
    ];
    let sources = [
        None,
        Some(Source::Local {
            operation_id: Some("rows.list".into()),
        }),
        Some(Source::Http {
            status_code: Some(200.into()),
            headers: serde_json::Map::from_iter([("x-total-count".to_string(), json!("9"))]),
            content_type: Some("application/json".into()),
        }),
        Some(Source::Mcp {
            result_meta: Some(JsonText::from_value(
                &json!({"progressToken": 1, "dev.envelope/budget": {"old": true}}),
            )),
        }),
    ];
    for status in [Status::Ok, Status::Error, Status::Progress] {
        for (e, error) in errors.iter().enumerate() {
            for (p, payload) in payloads.iter() {
                for (s, source) in sources.iter().enumerate() {
                    out.push((
                        format!("{status:?} error{e} {p} source{s}"),
                        Envelope {
                            status,
                            payload: payload.clone(),
                            summary: (s % 2 == 0).then(|| "a summary".into()),
                            tool: Some("rows/list".into()),
                            command: (s != 1).then(|| "rows/list".into()),
                            workspace: Some("/work".into()),
                            duration_ms: Some(12.into()),
                            provider: Some("p".into()),
                            model: Some("m".into()),
                            tool_call_id: Some("call_1".into()),
                            source: source.clone(),
                            error: error.clone(),
                            ..Envelope::default()
                        },
                    ));
                }
            }
        }
    }
    out
}

/// An envelope with a budget report and an artifact set directly (a shaped envelope as
/// a caller could build it).
fn with_budget_and_artifact(mut env: Envelope) -> Envelope {
    env.budget = Some(BudgetReport {
        total_items: 20,
        returned_items: 2,
        truncated: true,
        total_bytes: 4000,
        // The token members too: an earlier cut's, read back, must not be written twice.
        tokens: Some(envelope::model::TokenReport {
            limit: 1000,
            tokenizer: "o200k_base".into(),
        }),
        hint: Some("more with a larger limit".into()),
        cuts: (0..10)
            .map(|i| envelope::model::Cut {
                pointer: format!("/items/{i}"),
                kept: 2,
                total: 20,
                unit: envelope::model::CutUnit::Items,
            })
            .collect(),
    });
    env.artifact = Some(ArtifactRef {
        digest: format!("sha256:{}", "ab".repeat(32)),
    });
    env
}

// ---------------------------------------------------------------------------------------
// Running
// ---------------------------------------------------------------------------------------

/// Shapes `env` as `format` every way worth checking and asserts every output is unique:
/// encoded whole (each option set), through the Pipeline with limits, with a store (low
/// threshold), with capture limits, and the shaped output read back and shaped again into
/// every format (the tool's own markers then come back as input).
fn check_envelope(env: &Envelope, format: FormatId, what: &str) {
    for opts in option_sets(format) {
        if let Ok(out) = encode(format, env, &opts) {
            assert_unique(&out.bytes, format, &format!("{what} → {format} (encode)"));
        }
    }
    for (limit, capture, store) in [
        (None, None, true),
        (Some(300), None, false),
        (Some(700), None, true),
        (Some(1500), Some(10), false),
        (Some(4000), Some(5000), true),
        (None, Some(10), true),
    ] {
        let mut memory = Memory::default();
        let mut pipeline = Pipeline::from_envelope(env.clone(), format)
            .limit(limit)
            .max_capture(capture)
            .inline_threshold(64)
            .encode_options(options());
        if store {
            pipeline = pipeline.store(&mut memory);
        }
        let Ok(shaped) = pipeline.run() else { continue };
        let label = format!("{what} → {format} limit {limit:?} capture {capture:?} store {store}");
        assert_unique(&shaped.bytes, format, &label);
        for again in FormatId::ALL {
            let mut memory = Memory::default();
            if let Ok(reshaped) = Pipeline::new(&shaped.bytes)
                .input_format(format)
                .output_format(again)
                .store(&mut memory)
                .inline_threshold(32)
                .limit(limit)
                .max_capture(capture.map(|c| c / 2))
                .encode_options(options())
                .run()
            {
                assert_unique(
                    &reshaped.bytes,
                    again,
                    &format!("{label}, reshaped → {again}"),
                );
            }
        }
    }
}

#[test]
fn every_example_in_every_format() {
    let mut inputs: Vec<(String, Vec<u8>, Option<FormatId>)> = examples()
        .into_iter()
        .map(|(name, bytes)| (name, bytes, None))
        .collect();
    // The ctxo example as the last text block of an MCP result (with `isError: false`
    // and `_meta` of the result's own), read as ctxo.
    let ctxo = &inputs.iter().find(|(n, ..)| n == "ctxo.json").unwrap().1;
    let carried = json!({
        "content": [
            {"type": "text", "text": "advisory"},
            {"type": "text", "text": String::from_utf8(ctxo.clone()).unwrap().trim_end()},
        ],
        "isError": false,
        "_meta": {"progressToken": 7},
    });
    inputs.push((
        "ctxo.json in an MCP result".into(),
        carried.to_string().into_bytes(),
        Some(FormatId::Ctxo),
    ));
    for (name, bytes, from) in inputs {
        let (from, env) =
            envelope::formats::decode_any(&bytes, from, &DecodeOptions::default()).unwrap();
        assert_eq!(
            env.layout.transport.is_some(),
            name.ends_with("MCP result"),
            "{name}"
        );
        assert_unique(&bytes, from, &name);
        for format in FormatId::ALL {
            check_envelope(&env, format, &format!("{name} ({from})"));
        }
    }
}

#[test]
fn every_status_error_budget_and_artifact_in_every_format() {
    for (what, env) in typed_envelopes() {
        let marked = with_budget_and_artifact(env.clone());
        for format in FormatId::ALL {
            for opts in option_sets(format) {
                for (env, what) in [(&env, what.clone()), (&marked, format!("{what} marked"))] {
                    if let Ok(out) = encode(format, env, &opts) {
                        assert_unique(&out.bytes, format, &format!("{what} → {format}"));
                    }
                }
            }
        }
    }
    // Through the pipeline: one in five (the whole product is slow in debug builds), which
    // still covers every status, error and source.
    for (what, env) in typed_envelopes().into_iter().step_by(5) {
        for format in FormatId::ALL {
            check_envelope(&env, format, &what);
        }
    }
}

/// The value an extension gets: of another type than what an encoder writes there, so
/// that a kept duplicate would also be a conflicting one.
fn ext_values() -> [Value; 2] {
    [json!(false), json!({"ext": 1})]
}

/// Keys that formats write only in some states, beside those found in an output.
const EXTRA_POINTERS: [&str; 40] = [
    "/isError",
    "/structuredContent",
    "/content",
    "/_meta",
    "/data",
    "/meta",
    "/meta/source",
    "/meta/isError",
    "/meta/artifact",
    "/meta/budget",
    "/meta/content",
    "/meta/structuredContent",
    "/meta/_meta",
    "/meta/operationId",
    "/meta/timestamp",
    "/meta/ts",
    "/meta/cas_digest",
    "/meta/partial",
    "/error/code",
    "/error/message",
    "/error/details",
    "/_meta/truncated",
    "/_meta/totalBytes",
    "/_meta/cuts",
    "/_meta/moreCuts",
    "/_meta/hint",
    "/_meta/artifact",
    "/_meta/workspace",
    "/_meta/workspace/root",
    "/__envelope/version",
    "/__envelope/artifact",
    "/__envelope/budget",
    "/content/0/type",
    "/content/1/text",
    "/content/1/text#/payload",
    "/content/1/text#/meta",
    "/content/1/text#/meta/tool",
    "/content/1/text#/meta/artifact",
    "/content/1/text#/meta/budget",
    "/content/1/text#/payload/code",
];

/// Every place `format`'s encoder writes a key for `env`, each made an extension of the
/// origin format `format`: encoding never writes the key twice, and the dropped
/// extension is in the loss report.
fn collide_everywhere(env: &Envelope, format: FormatId, what: &str) {
    let mut base = env.clone();
    base.origin = Some(format);
    // Extensions of another origin would now be this format's: start without them.
    base.extensions.clear();
    base.layout = Default::default();
    let Ok(out) = encode(format, &base, &options()) else {
        return;
    };
    let mut pointers = member_pointers(&out.bytes);
    // Members of the payload are the payload's, not the format's: the format's own sit at
    // depth two at most (three in a content block), and in the embedded document of block 1.
    pointers.retain(|p| {
        let (outer, inner) = p.split_once('#').unwrap_or((p, ""));
        let depth = |s: &str| s.matches('/').count();
        match inner.is_empty() && !p.contains('#') {
            true => depth(outer) <= 2 || (outer.starts_with("/content/") && depth(outer) <= 3),
            false => depth(inner) <= 2,
        }
    });
    pointers.extend(EXTRA_POINTERS.map(String::from));
    pointers.sort();
    pointers.dedup();
    for pointer in pointers {
        for value in ext_values() {
            let mut env = base.clone();
            env.extensions.push(Extension {
                pointer: pointer.clone(),
                value,
            });
            let label = format!("{what} in {format} with the extension {pointer}");
            for opts in option_sets(format) {
                if let Ok(out) = encode(format, &env, &opts) {
                    assert_unique(&out.bytes, format, &label);
                }
            }
        }
        let mut env = base.clone();
        env.extensions.push(Extension {
            pointer: pointer.clone(),
            value: json!("ext"),
        });
        let mut memory = Memory::default();
        if let Ok(shaped) = Pipeline::from_envelope(env, format)
            .store(&mut memory)
            .inline_threshold(64)
            .limit(600)
            .encode_options(options())
            .run()
        {
            assert_unique(
                &shaped.bytes,
                format,
                &format!("{what} in {format} with the extension {pointer}, shaped"),
            );
        }
    }
}

/// Envelopes to give colliding extensions: the examples and a sample of the typed ones,
/// each also with a budget report and an artifact.
fn collision_cases() -> Vec<(String, Envelope)> {
    let mut cases: Vec<(String, Envelope)> = Vec::new();
    for (what, env) in typed_envelopes().into_iter().step_by(17) {
        cases.push((
            format!("{what} marked"),
            with_budget_and_artifact(env.clone()),
        ));
        cases.push((what, env));
    }
    for (name, bytes) in examples() {
        let (_, env) =
            envelope::formats::decode_any(&bytes, None, &DecodeOptions::default()).unwrap();
        cases.push((
            format!("{name} marked"),
            with_budget_and_artifact(env.clone()),
        ));
        cases.push((name, env));
    }
    cases
}

#[test]
fn extensions_that_collide_with_written_keys_are_written_once() {
    for (what, env) in collision_cases() {
        for format in FormatId::ALL {
            collide_everywhere(&env, format, &what);
        }
    }
}

/// The decoded protocol-v1 fixtures (the reference's golden envelopes).
fn fixture_envelopes() -> Vec<(String, Envelope)> {
    common::protocol_v1_fixtures()
        .into_iter()
        .map(|path| {
            let bytes = std::fs::read(&path).unwrap();
            let (_, env) = envelope::formats::decode_any(
                &bytes,
                Some(FormatId::ProtocolV1),
                &DecodeOptions::default(),
            )
            .unwrap();
            (
                path.file_name().unwrap().to_string_lossy().into_owned(),
                env,
            )
        })
        .collect()
}

/// Real inputs: every protocol-v1 fixture, shaped every way into every format and shaped
/// again (`check_envelope`), and given a colliding extension at every key protocol-v1 and
/// tool-result-envelope write (the two writers that wrote built-in-code extensions twice).
#[test]
fn protocol_v1_fixtures_in_every_format_and_with_colliding_extensions() {
    for (name, env) in fixture_envelopes() {
        for format in FormatId::ALL {
            check_envelope(&env, format, &name);
        }
        for format in [FormatId::ProtocolV1, FormatId::ToolResultEnvelope] {
            collide_everywhere(&env, format, &name);
            collide_everywhere(&with_budget_and_artifact(env.clone()), format, &name);
        }
    }
}

// ---------------------------------------------------------------------------------------
// The bugs, one by one
// ---------------------------------------------------------------------------------------

/// The loss report's fields.
fn lost(losses: &envelope::LossReport) -> Vec<&str> {
    losses.items.iter().map(|l| l.field.as_str()).collect()
}

#[test]
fn an_mcp_result_with_is_error_false_over_the_capture_limit_says_is_error_once() {
    let input = br#"{"content":[{"type":"text","text":"hello world"}],"isError":false}"#;
    // Unchanged within the limit (the kept `isError: false` is the input's own).
    let kept = Pipeline::new(input).max_capture(11).run().unwrap();
    assert_eq!(kept.bytes, input);
    // Over it: one `isError`, the typed one; the input's is reported.
    for store in [false, true] {
        let mut memory = Memory::default();
        let mut pipeline = Pipeline::new(input).max_capture(10);
        if store {
            pipeline = pipeline.store(&mut memory);
        }
        let shaped = pipeline.run().unwrap();
        assert_eq!(
            String::from_utf8(shaped.bytes).unwrap(),
            r#"{"content":[{"type":"text","text":"output of 11 bytes exceeds the capture limit of 10 bytes"}],"isError":true}"#
        );
        assert!(
            lost(&shaped.losses).contains(&"/isError"),
            "{:?}",
            shaped.losses
        );
        assert!(memory.0.is_empty());
    }
}

#[test]
fn a_tool_envelope_v1_result_with_is_error_false_or_its_own_structured_content() {
    let example = std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../examples/tool-envelope-v1.json"),
    )
    .unwrap();
    let mut doc: Value = serde_json::from_slice(&example).unwrap();
    doc["isError"] = json!(false);
    doc["structuredContent"] = json!({"own": true});
    let input = serde_json::to_vec(&doc).unwrap();
    // Read back as it was.
    let same = Pipeline::new(&input).run().unwrap();
    assert_eq!(same.bytes, input);
    // An error now (capture limit), with dual emit: each key once, the typed one.
    let shaped = Pipeline::new(&input)
        .max_capture(10)
        .encode_options(EncodeOptions {
            dual_emit: true,
            ..options()
        })
        .run()
        .unwrap();
    assert_unique(&shaped.bytes, FormatId::ToolEnvelopeV1, "tool-envelope-v1");
    let out: Value = serde_json::from_slice(&shaped.bytes).unwrap();
    assert_eq!(out["isError"], true);
    assert!(out["structuredContent"]["payload"].is_object());
    let fields = lost(&shaped.losses);
    assert!(
        fields.contains(&"/isError") && fields.contains(&"/structuredContent"),
        "{fields:?}"
    );
}

#[test]
fn ctxo_shaped_again_writes_one_cuts_list_and_one_artifact() {
    // A ctxo document shaped with a store and a limit: its `_meta` has `cuts`, `moreCuts`
    // and `artifact`, read back as extensions.
    let rows: Vec<Value> = (0..30)
        .map(|i| json!({"id": i, "tags": ["a", "b", "c"], "note": "n".repeat(40)}))
        .collect();
    // Twelve long strings: more cuts than a marker lists.
    let notes: serde_json::Map<String, Value> = (0..12)
        .map(|i| (format!("n{i}"), json!("x".repeat(300))))
        .collect();
    let input = json!({"results": rows, "notes": notes}).to_string();
    let cut = Pipeline::new(input.as_bytes())
        .input_format(FormatId::Ctxo)
        .limit(2000)
        .run()
        .unwrap();
    let first: Value = serde_json::from_slice(&cut.bytes).unwrap();
    assert!(first["_meta"]["moreCuts"].is_u64(), "{first}");
    let mut memory = Memory::default();
    let stored = Pipeline::new(&cut.bytes)
        .input_format(FormatId::Ctxo)
        .store(&mut memory)
        .inline_threshold(10)
        .run()
        .unwrap();
    assert_eq!(memory.0.len(), 1);
    assert_unique(&stored.bytes, FormatId::Ctxo, "cut, then stored");
    // The stored payload is whole (`truncated: false`): the earlier cut's list describes
    // the payload now in the artifact, not this one, so it is not written, and reported.
    let out: Value = serde_json::from_slice(&stored.bytes).unwrap();
    assert_eq!(out["_meta"]["truncated"], false, "{out}");
    assert!(out["_meta"].get("cuts").is_none(), "{out}");
    assert!(out["_meta"].get("moreCuts").is_none(), "{out}");
    assert_eq!(
        lost(&stored.losses),
        vec!["/_meta/cuts", "/_meta/moreCuts"],
        "{stored:?}"
    );
    // The cut one cut again, smaller: one `cuts`, the new one; the earlier one is reported
    // as replaced.
    let again = Pipeline::new(&cut.bytes)
        .input_format(FormatId::Ctxo)
        .limit(1400)
        .run()
        .unwrap();
    assert_unique(&again.bytes, FormatId::Ctxo, "cut again");
    let out: Value = serde_json::from_slice(&again.bytes).unwrap();
    assert_ne!(out["_meta"]["cuts"], first["_meta"]["cuts"], "{out}");
    assert!(lost(&again.losses).contains(&"/_meta/cuts"), "{again:?}");
    // The stored one stored again: one `artifact`, the new one.
    let mut memory = Memory::default();
    let restored = Pipeline::new(&stored.bytes)
        .input_format(FormatId::Ctxo)
        .store(&mut memory)
        .inline_threshold(10)
        .run()
        .unwrap();
    assert_unique(&restored.bytes, FormatId::Ctxo, "stored again");
    let out: Value = serde_json::from_slice(&restored.bytes).unwrap();
    let old: Value = serde_json::from_slice(&stored.bytes).unwrap();
    assert_ne!(out["_meta"]["artifact"], old["_meta"]["artifact"]);
    assert!(lost(&restored.losses).contains(&"/_meta/artifact"));
}

#[test]
fn operations_shaped_again_writes_one_artifact_and_one_budget() {
    // What an earlier shaping wrote: `meta.artifact` and `meta.budget`.
    let items: Vec<String> = (0..40).map(|i| format!("item {i}")).collect();
    let input = json!({
        "data": {"a": items},
        "meta": {"source": "local", "operationId": "o", "timestamp": 1, "artifact": "sha256:old", "budget": {"truncated": true}},
    })
    .to_string();
    let input = input.as_bytes();
    assert_eq!(Pipeline::new(input).run().unwrap().bytes, input);
    let mut memory = Memory::default();
    let stored = Pipeline::new(input)
        .store(&mut memory)
        .inline_threshold(10)
        .run()
        .unwrap();
    assert_unique(&stored.bytes, FormatId::Operations, "offloaded again");
    let out: Value = serde_json::from_slice(&stored.bytes).unwrap();
    assert_eq!(out["meta"]["artifact"], out["data"]["artifact"]);
    assert_eq!(lost(&stored.losses), ["/meta/artifact"]);
    // Cut again, with or without a store: one marker, the new one.
    for store in [false, true] {
        let mut memory = Memory::default();
        let mut pipeline = Pipeline::new(input).limit(400);
        if store {
            pipeline = pipeline.store(&mut memory);
        }
        let cut = pipeline.run().unwrap();
        assert_unique(&cut.bytes, FormatId::Operations, "cut again");
        let out: Value = serde_json::from_slice(&cut.bytes).unwrap();
        assert_eq!(out["meta"]["budget"]["cuts"][0]["pointer"], "/a", "{out}");
        assert_eq!(out["meta"]["artifact"], "sha256:old");
        // The earlier marker, and (since the budget stage reports its cuts) the cut.
        assert_eq!(lost(&cut.losses), ["/meta/budget", "payload/a"]);
    }
}

#[test]
fn operations_keeps_a_local_results_structured_content() {
    // Found on the way: a `meta.structuredContent` of a local (or http) result was kept
    // as an extension but never written back.
    let input = br#"{"data":1,"meta":{"source":"local","operationId":"o","timestamp":1,"structuredContent":{"a":1}}}"#;
    let shaped = Pipeline::new(input).run().unwrap();
    assert_eq!(shaped.bytes, input);
    assert!(shaped.losses.is_empty());
}

#[test]
fn an_operations_error_over_a_payload_with_its_own_error_says_it_replaced_it() {
    let env = Envelope {
        status: Status::Error,
        error: Some(EnvelopeError::from_code("EARG", "bad")),
        ..Envelope::ok(json!({"error": "the payload's", "x": 1}))
    };
    let out = encode(FormatId::Operations, &env, &options()).unwrap();
    assert_unique(&out.bytes, FormatId::Operations, "operations error");
    assert!(
        lost(&out.losses).contains(&"payload/error"),
        "{:?}",
        out.losses
    );
}

// ---------------------------------------------------------------------------------------
// Random payloads × formats × limits × capture limits
// ---------------------------------------------------------------------------------------

/// Keys that formats also write, so that payload members meet format members.
const KEYS: [&str; 16] = [
    "a",
    "items",
    "_meta",
    "isError",
    "content",
    "meta",
    "data",
    "error",
    "hint",
    "artifact",
    "summary",
    "result",
    "__envelope",
    "payload",
    "structuredContent",
    "budget",
];

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i32>().prop_map(Value::from),
        "[a-z \"\\\\/é\u{2028}]{0,40}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 64, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..12).prop_map(Value::Array),
            prop::collection::btree_map(prop::sample::select(&KEYS[..]), inner, 0..6).prop_map(
                |m| Value::Object(m.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
            ),
        ]
    })
}

fn format() -> impl Strategy<Value = FormatId> {
    prop::sample::select(&FormatId::ALL[..])
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// A random payload of a random status, written in one format, shaped into another
    /// with a random limit, capture limit and store (and shaped again): no output has a
    /// duplicate key.
    #[test]
    fn random_payloads_formats_limits_and_capture(
        payload in json_value(),
        status in 0usize..3,
        from in format(),
        to in format(),
        limit in prop::option::of(150usize..3000),
        capture in prop::option::of(0usize..2000),
        store in any::<bool>(),
        threshold in 0usize..400,
    ) {
        let status = [Status::Ok, Status::Error, Status::Progress][status];
        let env = Envelope {
            status,
            error: (status == Status::Error).then(|| EnvelopeError::from_code("ERUNTIME", "failed")),
            tool: Some("t/run".into()),
            ..Envelope::ok(payload)
        };
        let Ok(doc) = encode(from, &env, &options()) else { return Ok(()) };
        assert_unique(&doc.bytes, from, "the input");
        let mut memory = Memory::default();
        let mut pipeline = Pipeline::new(&doc.bytes)
            .input_format(from)
            .output_format(to)
            .limit(limit)
            .max_capture(capture)
            .inline_threshold(threshold)
            .encode_options(options());
        if store {
            pipeline = pipeline.store(&mut memory);
        }
        let Ok(shaped) = pipeline.run() else { return Ok(()) };
        assert_unique(&shaped.bytes, to, &format!("{from} → {to}"));
        let mut memory = Memory::default();
        if let Ok(again) = Pipeline::new(&shaped.bytes)
            .input_format(to)
            .store(&mut memory)
            .inline_threshold(threshold / 2)
            .limit(limit)
            .encode_options(options())
            .run()
        {
            assert_unique(&again.bytes, to, &format!("{from} → {to} → {to}"));
        }
    }
}
