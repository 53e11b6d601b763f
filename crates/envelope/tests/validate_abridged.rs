//! Validating a large document with its payload abridged finds exactly what validating its
//! whole tree finds (issue 12, item 9): the same format, and the same findings (rule,
//! severity, pointer, line, column, message) in the same order, for random documents of
//! every format, valid and broken, in every profile. The abridging threshold is 0 here, so
//! every document takes the abridged path where its format allows it.

use envelope::FormatId;
use envelope::validate::{Options, Profile, validate_document_over};
use proptest::prelude::*;
use serde_json::json;

/// Both paths on `doc`; panics with the document when they disagree.
fn assert_same(doc: &[u8], options: &Options) {
    let whole = validate_document_over(doc, options, usize::MAX);
    let abridged = validate_document_over(doc, options, 0);
    let text = String::from_utf8_lossy(doc);
    assert_eq!(abridged.format, whole.format, "format of {text}");
    assert_eq!(abridged.formats, whole.formats, "formats of {text}");
    assert_eq!(
        abridged.findings, whole.findings,
        "findings of {text} ({:?}, {:?})",
        options.format, options.profile
    );
}

fn every_option() -> Vec<Options> {
    let schema = json!({"type": "object", "required": ["rows"], "properties": {"rows": {"type": "array", "maxItems": 1}}});
    let mut all = Vec::new();
    for profile in [Profile::Compat, Profile::Strict, Profile::Spec] {
        all.push(Options::new(None, profile));
        for format in [
            FormatId::ProtocolV1,
            FormatId::Operations,
            FormatId::Mcp,
            FormatId::ToolResultEnvelope,
            FormatId::Ctxo,
        ] {
            all.push(Options::new(Some(format), profile));
        }
        all.push(
            Options::new(None, profile)
                .with_mcp_revision("2025-03-26")
                .unwrap(),
        );
        all.push(
            Options::new(None, profile)
                .with_output_schema(&schema)
                .unwrap(),
        );
    }
    all
}

// ---------------------------------------------------------------------------------------
// Random JSON text, written by hand so that it can hold what serde_json would not write:
// repeated keys, lone surrogates, numbers out of range, keys the rules look for.
// ---------------------------------------------------------------------------------------

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("artifact"),
        Just("summary"),
        Just("preview"),
        Just("status_code"),
        Just("rows"),
        Just("pct"),
        Just("Artifact"),
        Just("a\\u0062"),
        Just("x"),
        Just("x"),
    ]
    .prop_map(String::from)
}

fn scalar() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("null".to_string()),
        Just("true".to_string()),
        Just("false".to_string()),
        Just("0".to_string()),
        Just("-0".to_string()),
        Just("404".to_string()),
        Just("200".to_string()),
        Just("1.5e3".to_string()),
        Just("1e400".to_string()),
        Just("-123456789012345678901234567890".to_string()),
        Just("18446744073709551616".to_string()),
        Just(
            r#""sha256:0000000000000000000000000000000000000000000000000000000000000000""#
                .to_string()
        ),
        Just(r#""sha256:abc""#.to_string()),
        Just(r#""\ud800 lone""#.to_string()),
        Just(r#""pair \ud83d\ude00 \u00e9 \n""#.to_string()),
        Just(r#""503""#.to_string()),
        "[a-z ]{0,12}".prop_map(|s| format!("{s:?}")),
        (0u32..2000).prop_map(|n| n.to_string()),
        "x{1000,1100}".prop_map(|s| format!("{s:?}")),
    ]
}

/// A JSON value as text.
fn value() -> impl Strategy<Value = String> {
    scalar().prop_recursive(5, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6)
                .prop_map(|items| format!("[{}]", items.join(","))),
            prop::collection::vec((key(), inner), 0..6).prop_map(|members| {
                let members: Vec<String> = members
                    .into_iter()
                    .map(|(k, v)| format!("\"{k}\":{v}"))
                    .collect();
                format!("{{{}}}", members.join(","))
            }),
        ]
    })
}

/// A payload: a value, sometimes nested past the depth limit, sometimes with a
/// `summary` and an `artifact` the protocol-v1 rules read.
fn payload() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => value(),
        1 => (value(), value(), scalar()).prop_map(|(rows, preview, code)| format!(
            r#"{{"rows":{rows},"summary":{{"preview":{preview},"status_code":{code}}},"artifact":"sha256:1111111111111111111111111111111111111111111111111111111111111111"}}"#
        )),
        1 => (120usize..135, value()).prop_map(|(depth, v)| format!(
            "{{\"deep\":{}{v}{}}}",
            "[".repeat(depth),
            "]".repeat(depth)
        )),
    ]
}

/// One root member of an envelope of some format, as `"key":value`.
fn member() -> impl Strategy<Value = String> {
    let pick =
        |members: &'static [&'static str]| prop::sample::select(members).prop_map(String::from);
    prop_oneof![
        3 => payload().prop_map(|p| format!(r#""data":{p}"#)),
        1 => payload().prop_map(|p| format!(r#""Data":{p}"#)),
        1 => payload().prop_map(|p| format!(r#""extra":{p}"#)),
        1 => payload().prop_map(|p| format!(r#""results":{p}"#)),
        // ctxo's truncatable arrays, whose items its rules count.
        2 => (prop::sample::select(&["impactedSymbols", "importers", "deadSymbols"][..]), 0usize..4, value())
            .prop_map(|(k, n, v)| format!(r#""{k}":[{}]"#, vec![v; n].join(","))),
        1 => payload().prop_map(|p| format!(r#""structuredContent":{p}"#)),
        // A `structuredContent` and its text mirror (the very text, or nearly).
        1 => (payload(), 0usize..5).prop_map(|(p, how)| mirrored(&p, how)),
        1 => prop::sample::select(&LONG_STRUCTURED[..]),
        // protocol-v1
        3 => pick(&[r#""version":1"#, r#""version":"1""#, r#""version":2"#, r#""VERSION":1"#]),
        3 => pick(&[r#""status":"ok""#, r#""status":"error""#, r#""status":"progress""#, r#""status":"done""#]),
        3 => pick(&[r#""command":"fs/ls""#, r#""command":"Bench""#, r#""command":"""#]),
        3 => pick(&[
            r#""meta":{"ts":"2026-01-01T00:00:00Z","duration_ms":1}"#,
            r#""meta":{"ts":"2026-01-01T00:00:00+02:00","source":"cache"}"#,
            r#""meta":{"ts":"2026-01-01T00:00:00Z","cas_digest":"sha256:1111111111111111111111111111111111111111111111111111111111111111"}"#,
            r#""meta":{"TS":"2026-01-01T00:00:00Z","source":"memory","memory":{"name":"n"}}"#,
            r#""meta":{"source":"local","operationId":"a.b","timestamp":1}"#,
            r#""meta":{"source":"http","statusCode":200,"headers":{"a":"b","c":1},"contentType":"x"}"#,
            r#""meta":{"source":"mcp","isError":false,"content":[{"type":"text","text":"t"}]}"#,
            r#""meta":{"source":"mcp","isError":false,"content":[],"structuredContent":{"rows":[]}}"#,
            r#""meta":{"source":"ftp"}"#,
            r#""meta":{"source":"mcp","isError":false,"content":[{"type":"text","text":"t"}],"_meta":{"trace":[1.0,{"a":"\u00e9"}]}}"#,
            r#""meta":{"source":"mcp","isError":false,"content":[],"_meta":[1],"_meta":{"x":{}}}"#,
            r#""meta":[]"#,
        ]),
        2 => pick(&[
            r#""error":{}"#,
            r#""error":null"#,
            r#""error":{"code":"EARG","message":"bad"}"#,
            r#""error":{"code":"NOPE","message":" "}"#,
            r#""error":true"#,
        ]),
        // mcp, tool-envelope-v1, ctxo, tool-result-envelope
        1 => pick(&[
            r#""content":[{"type":"text","text":"{\"rows\":[]}"}]"#,
            r#""content":[{"type":"text","text":"  [1]"},{"type":"image","data":"!","mimeType":"x"}]"#,
            r#""content":[{"type":"resource_link","uri":"u","name":"n","size":-1,"annotations":{"priority":2}}]"#,
            r#""content":[{"type":"text","text":"done"},{"type":"text","text":"__ENVELOPE_V1__:eyJwYXlsb2FkIjp7Im4iOjF9LCJtZXRhIjp7InRvb2wiOiJ0IiwidHMiOiIyMDI2LTA3LTA0VDAwOjAwOjAwWiIsInZlcnNpb24iOjF9fQ=="}]"#,
            r#""content":[{"type":"image"}]"#,
            r#""content":[{"type":"text","text":"{\"_meta\":{\"totalItems\":0,\"returnedItems\":0,\"truncated\":false,\"totalBytes\":2}}"}]"#,
        ]),
        // Texts long enough to be kept as a prefix (or not, by their start).
        1 => prop::sample::select(&LONG_CONTENT[..]),
        1 => pick(&[
            r#""_meta":{"totalItems":2,"returnedItems":2,"truncated":false,"totalBytes":70}"#,
            r#""_meta":{"totalItems":2,"returnedItems":1,"truncated":false,"totalBytes":-1}"#,
            r#""_meta":{"totalItems":3,"returnedItems":1,"truncated":true,"totalBytes":9,"hint":"h"}"#,
            r#""_meta":{"totalItems":1,"returnedItems":1,"truncated":false,"totalBytes":9}"#,
            r#""_meta":{"totalItems":0,"returnedItems":0,"truncated":false,"totalBytes":9,"cuts":[]}"#,
            // An MCP result's own: read as its keys when the document is one.
            r#""_meta":{"trace":[1.0,2.50,{"a":"\u00e9"}],"progressToken":"p"}"#,
            r#""_meta":{"dev.envelope/budget":{"truncated":true,"cuts":[]},"totalItems":"x"}"#,
            r#""_meta":[{"a":1}]"#,
            r#""_meta":"x""#,
        ]),
        1 => pick(&[
            r#""__envelope":{"version":"1","contentType":1,"payloadPath":"data"}"#,
            r#""__envelope":{"version":"2","contentType":"List"}"#,
        ]),
        1 => pick(&[
            r#""isError":false"#,
            r#""isError":7"#,
            r#""resultType":"complete""#,
            r#""resultType":[1]"#,
            r#""found":false"#,
            r#""message":"m""#,
        ]),
    ]
}

/// `content` members whose texts are longer than the abridged reader keeps whole (64 KiB):
/// plain text, tool-envelope-v1 blocks (valid, with defects in and after the kept prefix,
/// inner documents that are not JSON, not an object, or an error's), and texts whose start
/// does not decide (JSON-looking, escaped, all white space).
static LONG_CONTENT: std::sync::LazyLock<Vec<String>> = std::sync::LazyLock::new(|| {
    let rows: Vec<String> = (0..3000)
        .map(|i| format!(r#"{{"id":{i},"name":"row {i}","ok":true}}"#))
        .collect();
    let rows = format!("[{}]", rows.join(","));
    let meta = r#"{"tool":"t","ts":"2026-07-04T00:00:00Z","version":1}"#;
    let block = |inner: &str| {
        format!(
            "__ENVELOPE_V1__:{}",
            envelope::base64::encode(inner.as_bytes())
        )
    };
    let valid = block(&format!(r#"{{"payload":{{"rows":{rows}}},"meta":{meta}}}"#));
    let mut broken_late = valid.clone();
    broken_late.replace_range(5000..5001, "!");
    let mut broken_early = valid.clone();
    broken_early.replace_range(100..101, "*");
    let texts = [
        valid.clone(),
        broken_late,
        broken_early,
        block(&format!(
            r#"{{"payload":{rows},"meta":{meta},"payload":1}}"#
        )),
        block(&format!(
            r#"{{"payload":{rows},"meta":{{"tool":"t","ts":"yesterday","version":2}}}}"#
        )),
        block(&format!(r#"{{"payload":{rows},"meta":{meta}"#)),
        block(&format!(r#"{{"payload":{rows},"meta":{meta}}} x"#)),
        block(&rows),
        block(&format!(
            r#"{{"payload":{{"category":"x","code":"C","message":"{}","recoverable":true}},"meta":{{"tool":"mcp","ts":"2026-07-04T00:00:00Z","version":1}}}}"#,
            "m".repeat(70_000)
        )),
        valid.replacen("V1", "V2", 1),
        "line of text, ".repeat(6000),
        format!("  {rows}"),
        format!("\\n{}", "x".repeat(70_000)),
        " ".repeat(70_000),
    ];
    let mut members = Vec::new();
    for text in texts {
        let text = serde_json::to_string(&text).unwrap();
        members.push(format!(
            r#""content":[{{"type":"text","text":"summary"}},{{"type":"text","text":{text}}}]"#
        ));
        members.push(format!(r#""content":[{{"type":"text","text":{text}}}]"#));
        // The same text written with an escape that JSON allows but no writer uses.
        let escaped = text
            .replacen("\"__", "\"\\u005f_", 1)
            .replacen('/', "\\/", 1);
        members.push(format!(
            r#""content":[{{"type":"text","text":"s"}},{{"type":"text","text":{escaped}}}]"#
        ));
        members.push(format!(r#""content":[{{"type":"text","text":"s"}},{{"type":"text","text":"__ENVELOPE_V1__:e30=","text":{text}}},{{"type":"image"}}]"#));
    }
    members
});

/// `structuredContent` `payload` (JSON text) and a text mirror of it: its very text after a
/// summary (`how` 0), alone (1), with a space before it (2: not the same text), beside a
/// later text block (3), or with white space between its tokens (4).
fn mirrored(payload: &str, how: usize) -> String {
    let mirror = serde_json::to_string(payload).unwrap();
    let blocks = match how {
        0 => format!(r#"{{"type":"text","text":"summary"}},{{"type":"text","text":{mirror}}}"#),
        1 => format!(r#"{{"type":"text","text":{mirror}}}"#),
        2 => format!(
            r#"{{"type":"text","text":{}}}"#,
            serde_json::to_string(&format!(" {payload}")).unwrap()
        ),
        4 => {
            // White space between its tokens (sometimes cutting one in two).
            let spaced = payload
                .replace(',', ",\n  ")
                .replace(':', ": ")
                .replacen('1', "1 ", 1);
            format!(
                r#"{{"type":"text","text":{}}}"#,
                serde_json::to_string(&spaced).unwrap()
            )
        }
        _ => format!(r#"{{"type":"text","text":{mirror}}},{{"type":"text","text":"after"}}"#),
    };
    format!(r#""content":[{blocks}],"structuredContent":{payload}"#)
}

/// Long `structuredContent` members and their mirrors (kept as a prefix by the abridged
/// reader, then proven on the text or not): the very text, escaped as Python escapes it,
/// written with spaces (the mirror the same text), a mirror that differs late, a payload
/// that is a ctxo document (detection parses the mirror), one with a lone surrogate.
static LONG_STRUCTURED: std::sync::LazyLock<Vec<String>> = std::sync::LazyLock::new(|| {
    let rows: Vec<String> = (0..3000)
        .map(|i| format!(r#"{{"id":{i},"name":"row {i} é","ok":true}}"#))
        .collect();
    let rows = rows.join(",");
    let payloads = [
        format!(r#"{{"rows":[{rows}]}}"#),
        format!(r#"{{ "rows" : [{rows}] }}"#),
        format!(r#"[{rows}]"#),
        format!(
            r#"{{"rows":[{rows}],"_meta":{{"totalItems":3000,"returnedItems":3000,"truncated":false,"totalBytes":9}}}}"#
        ),
        format!(r#"{{"rows":[{rows}],"bad":"\udc00"}}"#),
    ];
    let mut members = Vec::new();
    for payload in payloads {
        let mirror = serde_json::to_string(&payload).unwrap();
        let ascii: String = mirror
            .chars()
            .map(|c| match c.is_ascii() {
                true => c.to_string(),
                false => format!("\\u{:04x}", c as u32),
            })
            .collect();
        let late = mirror.replacen("row 2999", "row 2998", 1);
        for text in [&mirror, &ascii, &late] {
            members.push(format!(
                r#""content":[{{"type":"text","text":{text}}}],"structuredContent":{payload}"#
            ));
            members.push(format!(
                r#""structuredContent":{payload},"content":[{{"type":"text","text":"s"}},{{"type":"text","text":{text}}}]"#
            ));
        }
    }
    members
});

/// An envelope: a known-good start of some format, then random members (a key may repeat).
fn document() -> impl Strategy<Value = String> {
    let start = prop::sample::select(
        &[
            r#""version":1,"status":"ok","command":"fs/ls","meta":{"ts":"2026-01-01T00:00:00Z"},"error":{}"#,
            r#""meta":{"source":"local","operationId":"a.b","timestamp":1}"#,
            r#""content":[{"type":"text","text":"t"}]"#,
            r#""_meta":{"totalItems":0,"returnedItems":0,"truncated":false,"totalBytes":2}"#,
            r#""__envelope":{"version":"1","contentType":3}"#,
            "",
        ][..],
    );
    (start, prop::collection::vec(member(), 0..6)).prop_map(|(start, members)| {
        let members: Vec<&str> = std::iter::once(start)
            .filter(|s| !s.is_empty())
            .chain(members.iter().map(String::as_str))
            .collect();
        format!("{{{}}}", members.join(","))
    })
}

/// The document's bytes, sometimes broken: cut, with a byte replaced or inserted, a
/// byte-order mark, data after it, bad UTF-8, line breaks (for the line and column).
fn text() -> impl Strategy<Value = Vec<u8>> {
    (
        document(),
        0usize..12,
        any::<prop::sample::Index>(),
        any::<u8>(),
    )
        .prop_map(|(doc, how, at, byte)| {
            let mut bytes = doc.into_bytes();
            let i = at.index(bytes.len() + 1);
            match how {
                0 => bytes.truncate(i),
                1 if i < bytes.len() => bytes[i] = byte,
                2 => bytes.insert(i, byte),
                3 => bytes.splice(0..0, *b"\xEF\xBB\xBF").for_each(drop),
                4 => bytes.extend_from_slice(b" {}"),
                5 => bytes.insert(i, 0xFF),
                6 => {
                    bytes = String::from_utf8_lossy(&bytes)
                        .replace(",", ",\n ")
                        .into_bytes()
                }
                _ => {}
            }
            bytes
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn the_abridged_path_finds_what_the_whole_tree_finds(doc in text()) {
        for options in every_option() {
            assert_same(&doc, &options);
        }
    }
}

/// A tool-envelope-v1 result whose envelope block is longer than the abridged reader keeps
/// whole: `dual` with `structuredContent` equal to the block's document; `error` an error
/// result with its block 0 rendered as the reference renders it.
fn tev1_long(dual: bool, error: bool) -> String {
    let rows: Vec<String> = (0..10_000).map(|i| format!(r#"{{"id":{i}}}"#)).collect();
    let inner = if error {
        format!(
            r#"{{"payload":{{"category":"validation","code":"E","message":"{}","recoverable":false}},"meta":{{"tool":"mcp","ts":"2026-07-04T00:00:00Z","version":1}}}}"#,
            "m".repeat(70_000)
        )
    } else {
        format!(
            r#"{{"payload":{{"rows":[{}]}},"meta":{{"tool":"t","ts":"2026-07-04T00:00:00Z","version":1}}}}"#,
            rows.join(",")
        )
    };
    let block = format!(
        "__ENVELOPE_V1__:{}",
        envelope::base64::encode(inner.as_bytes())
    );
    let summary = if error {
        let error = envelope::decode(
            FormatId::ToolEnvelopeV1,
            format!(r#"{{"content":[{{"type":"text","text":"x"}},{{"type":"text","text":"{block}"}}],"isError":true}}"#).as_bytes(),
            &Default::default(),
        )
        .unwrap()
        .error
        .unwrap();
        envelope::formats::tool_envelope_v1::render_error(&error)
    } else {
        "summary".to_string()
    };
    let mut doc = serde_json::json!({
        "content": [{"type": "text", "text": summary}, {"type": "text", "text": block}],
    });
    if error {
        doc["isError"] = true.into();
    }
    if dual {
        doc["structuredContent"] = serde_json::from_str(&inner).unwrap();
    }
    doc.to_string()
}

/// The cases the random documents reach rarely, one by one.
/// An MCP result whose text block holds more than 64 KiB of lines written with `\n` escapes,
/// then `tail` as it is (JSON text, so it may hold a defect), on a line of its own in the
/// document for some of them (the error's line then counts).
fn mcp_long_text(tail: &str) -> String {
    let lines = "commit 1\\nAuthor: Dev <dev@example.com>\\n\\n".repeat(2_500);
    let start = if tail.starts_with('{') { tail } else { "" };
    format!(
        "{{\n  \"content\": [\n    {{\"type\": \"text\", \"text\": \"{start}{lines}{tail}\"}}\n  ],\n  \"isError\": false\n}}"
    )
}

#[test]
fn chosen_documents_are_validated_alike() {
    let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
    let docs = [
        // Valid, and the payload holding what the rules read.
        r#"{"version":1,"status":"ok","command":"fs/ls","data":{"rows":[1,2]},"meta":{"ts":"2026-01-01T00:00:00Z"},"error":{}}"#.to_string(),
        r#"{"version":1,"status":"error","command":"fs/ls","data":{"summary":{"status_code":200,"preview":"p"}},"meta":{"ts":"2026-01-01T00:00:00Z"},"error":{"code":"EARG","message":"m"}}"#.to_string(),
        format!(r#"{{"version":1,"status":"ok","command":"fs/ls","data":{{"summary":{{"preview":"{}"}}}},"meta":{{"ts":"2026-01-01T00:00:00Z"}},"error":{{}}}}"#, "x".repeat(2000)),
        r#"{"version":1,"status":"ok","command":"fs/ls","data":{"artifact":"sha256:x","artifact":"md5:y"},"meta":{"ts":"2026-01-01T00:00:00Z","cas_digest":"sha256:1"},"error":{}}"#.to_string(),
        // Repeated and case-folded members (Go's view in compat).
        r#"{"version":1,"status":"ok","command":"fs/ls","data":{"artifact":"x"},"DATA":null,"Data":[1],"meta":{"ts":"2026-01-01T00:00:00Z"},"error":{}}"#.to_string(),
        r#"{"version":1,"status":"ok","command":"fs/ls","data":{"a":1,"a":2},"meta":{"ts":"2026-01-01T00:00:00Z"},"meta":{"duration_ms":-1},"error":{}}"#.to_string(),
        // Defects inside the payload.
        format!(r#"{{"data":{{"rows":{}}},"meta":{{"source":"local","operationId":"a","timestamp":1}}}}"#, deep(127)),
        format!(r#"{{"data":{{"rows":{}}},"meta":{{"source":"local","operationId":"a","timestamp":1}}}}"#, deep(128)),
        r#"{"data":[1e999],"meta":{"source":"local","operationId":"a","timestamp":1}}"#.to_string(),
        r#"{"data":["\udc00","\ud800\u0041"],"meta":{"source":"local","operationId":"a","timestamp":1}}"#.to_string(),
        r#"{"data":["a	b"],"meta":{"source":"local","operationId":"a","timestamp":1}}"#.to_string(),
        r#"{"data":{"k":1,"k":2,"k":{"j":[{"i":0,"i":1}]}},"meta":{"source":"local","operationId":"a","timestamp":1}}"#.to_string(),
        r#"{"data":[1,2,}],"meta":{"source":"local","operationId":"a","timestamp":1}}"#.to_string(),
        // The operations cases that need the whole data.
        r#"{"data":{"rows":[1]},"meta":{"source":"mcp","isError":false,"content":[],"structuredContent":{"rows":[2]}}}"#.to_string(),
        r#"{"data":{"rows":[1,2]},"meta":{"source":"local","operationId":"a","timestamp":1}}"#.to_string(),
        // tool-envelope-v1 with a long block: a dual emit equal to the block's document,
        // and an error whose block 0 is rendered from its payload (both read the payload).
        tev1_long(true, false),
        tev1_long(false, true),
        tev1_long(false, false),
        // Block 1 written with an escape: its bytes in the document are not its text.
        tev1_long(false, false).replacen("\"__ENVELOPE", "\"\\u005f_ENVELOPE", 1),
        // MCP results with one long escaped text (read without being decoded when valid):
        // valid, starting like a document, and with each defect serde_json reports inside a
        // string (at the very place a whole read reports it).
        mcp_long_text(""),
        mcp_long_text("{\\\"a\\\":1}"),
        mcp_long_text("\\ud800 lone"),
        mcp_long_text("\\ude00 lone low"),
        mcp_long_text("\\x unknown"),
        mcp_long_text("\\u12 short"),
        mcp_long_text("raw\ttab"),
        mcp_long_text("raw\nline"),
        // Not an object, or not detected.
        r#"[{"version":1}]"#.to_string(),
        r#"{"data":{}}"#.to_string(),
        "  ".to_string(),
    ];
    let structured = LONG_STRUCTURED
        .iter()
        .map(|members| format!("{{{members}}}"));
    for doc in docs.into_iter().chain(structured) {
        for options in every_option() {
            assert_same(doc.as_bytes(), &options);
        }
    }
}
