//! tool-envelope-v1: the rules of formats.md and the worked cases of examples.md.

mod common;

use envelope::formats::tool_envelope_v1::{self as tev1, NOT_A_BLOCK, parse_block};
use envelope::{
    Category, DecodeOptions, EncodeOptions, Envelope, EnvelopeError, FormatId, Payload, Status,
    Timestamp, decode, encode,
};
use serde_json::{Value, json};

const STRICT: DecodeOptions = DecodeOptions { lenient: false };
const LENIENT: DecodeOptions = DecodeOptions { lenient: true };

fn encode_str(env: &Envelope) -> String {
    String::from_utf8(
        encode(FormatId::ToolEnvelopeV1, env, &EncodeOptions::default())
            .unwrap()
            .bytes,
    )
    .unwrap()
}

/// The decoded JSON text of block 1 of an encoded result.
fn inner_json(result: &str) -> String {
    let v: Value = serde_json::from_str(result).unwrap();
    let text = v["content"][1]["text"].as_str().unwrap();
    let b64 = text.strip_prefix("__ENVELOPE_V1__:").unwrap();
    String::from_utf8(envelope::base64::decode_strict(b64.as_bytes()).unwrap()).unwrap()
}

fn block0(result: &str) -> String {
    let v: Value = serde_json::from_str(result).unwrap();
    v["content"][0]["text"].as_str().unwrap().to_string()
}

#[test]
fn meta_has_tool_ts_version_in_order_without_deprecations() {
    let env = Envelope {
        tool: Some("code-review".into()),
        timestamp: Some(Timestamp::Text("2026-07-04T00:00:00Z".into())),
        ..Envelope::ok(json!({"ok": true}))
    };
    assert_eq!(
        inner_json(&encode_str(&env)),
        r#"{"payload":{"ok":true},"meta":{"tool":"code-review","ts":"2026-07-04T00:00:00Z","version":1}}"#
    );
}

#[test]
fn success_result_has_two_text_blocks_and_no_is_error() {
    let env = Envelope {
        summary: Some("done".into()),
        tool: Some("t".into()),
        timestamp: Some(Timestamp::Text("2026-07-04T00:00:00.000Z".into())),
        ..Envelope::ok(json!(1))
    };
    let out = encode_str(&env);
    let expected_b64 = envelope::base64::encode(
        br#"{"payload":1,"meta":{"tool":"t","ts":"2026-07-04T00:00:00.000Z","version":1}}"#,
    );
    assert_eq!(
        out,
        format!(
            r#"{{"content":[{{"type":"text","text":"done"}},{{"type":"text","text":"__ENVELOPE_V1__:{expected_b64}"}}]}}"#
        )
    );
}

#[test]
fn not_an_envelope_block_cases() {
    for text in [
        "just some text",
        " __ENVELOPE_V1__:e30=",
        "__envelope_V1__:e30=",
        "__ENVELOPE_V1__e30=",
        "__ENVELOPE_V__:e30=",
    ] {
        let err = parse_block(text, &STRICT, "/content/1/text").unwrap_err();
        assert_eq!(err.code(), "format.not-an-envelope", "{text}");
        assert!(err.to_string().contains(NOT_A_BLOCK), "{text}: {err}");
    }
}

#[test]
fn version_prefix_rules() {
    assert_eq!(
        parse_block("__ENVELOPE_V1__:e30=", &STRICT, "").unwrap(),
        json!({})
    );
    assert_eq!(
        parse_block("__ENVELOPE_V01__:e30=", &STRICT, "").unwrap(),
        json!({})
    );
    for (text, shown) in [
        ("__ENVELOPE_V2__:e30=", "2"),
        ("__ENVELOPE_V0__:e30=", "0"),
        ("__ENVELOPE_V007__:e30=", "7"),
        (
            "__ENVELOPE_V99999999999999999999999999__:e30=",
            "99999999999999999999999999",
        ),
    ] {
        let err = parse_block(text, &STRICT, "").unwrap_err();
        assert_eq!(err.code(), "format.unsupported-version");
        assert!(
            err.to_string().contains(&format!(
                "unsupported envelope version {shown} (this consumer supports v1)"
            )),
            "{err}"
        );
    }
}

#[test]
fn error_block0_worked_example() {
    let mut error = EnvelopeError::new(Category::Validation, "Required field missing: request");
    error.code = Some("TOOL_VALIDATION_F6511EDE".into());
    error.suggested_action = Some("Provide a non-empty 'request' string.".into());
    error.next_tool = Some("task-bootstrap".into());
    error.recoverable = Some(true);
    assert_eq!(
        tev1::render_error(&error),
        "❌ Validation error [TOOL_VALIDATION_F6511EDE]: Required field missing: request\n\
         Suggestion: Provide a non-empty 'request' string.\n\
         Next: call `task-bootstrap` to proceed.\n\
         (This error may be recoverable \u{2014} retry is safe.)"
    );
    let mut plain = EnvelopeError::new(Category::Execution, "m");
    plain.code = Some("C".into());
    plain.recoverable = Some(false);
    assert_eq!(
        tev1::render_error(&plain),
        "\u{26A0}\u{FE0F}  Execution error [C]: m"
    );
}

#[test]
fn error_prefixes_for_all_categories_and_unknown() {
    let expected = [
        (Category::Validation, "\u{274C} Validation error"),
        (Category::Execution, "\u{26A0}\u{FE0F}  Execution error"),
        (Category::Timeout, "\u{23F1}  Timeout"),
        (Category::Model, "\u{1F916} Model error"),
        (Category::Network, "\u{1F310} Network error"),
        (Category::Authorization, "\u{1F512} Authorization error"),
        (Category::RateLimit, "\u{1F6A6} Rate limit exceeded"),
        (Category::NotFound, "\u{1F50D} Not found"),
        (Category::Internal, "\u{1F4A5} Internal error"),
        (
            Category::Other("cosmic_rays".into()),
            "\u{1F4A5} Internal error",
        ),
    ];
    for (category, prefix) in expected {
        let mut e = EnvelopeError::new(category.clone(), "msg");
        e.code = Some("X".into());
        e.recoverable = Some(false);
        assert_eq!(
            tev1::render_error(&e),
            format!("{prefix} [X]: msg"),
            "{category:?}"
        );
    }
}

#[test]
fn error_details_lines_only_when_non_empty() {
    let mut e = EnvelopeError::new(Category::Network, "down");
    e.code = Some("N".into());
    e.details = Some(json!("dns failed"));
    e.suggested_action = Some(String::new());
    e.next_tool = Some(String::new());
    e.recoverable = Some(false);
    assert_eq!(
        tev1::render_error(&e),
        "🌐 Network error [N]: down\nDetails: dns failed"
    );
}

#[test]
fn error_result_payload_and_block0() {
    let mut e = EnvelopeError::new(
        Category::Validation,
        "The provided context does not match schema",
    );
    e.code = Some("ERR_INPUT_SCHEMA".into());
    e.recoverable = Some(true);
    e.suggested_action = Some("Provide all required fields and retry".into());
    let env = Envelope {
        tool: Some("mcp".into()),
        timestamp: Some(Timestamp::Text("2025-06-17T18:30:00Z".into())),
        ..Envelope::failed(e)
    };
    let out = encode_str(&env);
    // Block 1 of the seed's error example, byte for byte.
    let seed_block = "eyJwYXlsb2FkIjp7ImNhdGVnb3J5IjoidmFsaWRhdGlvbiIsImNvZGUiOiJFUlJfSU5QVVRfU0NIRU1BIiwibWVzc2FnZSI6IlRoZSBwcm92aWRlZCBjb250ZXh0IGRvZXMgbm90IG1hdGNoIHNjaGVtYSIsInJlY292ZXJhYmxlIjp0cnVlLCJzdWdnZXN0ZWRBY3Rpb24iOiJQcm92aWRlIGFsbCByZXF1aXJlZCBmaWVsZHMgYW5kIHJldHJ5In0sIm1ldGEiOnsidG9vbCI6Im1jcCIsInRzIjoiMjAyNS0wNi0xN1QxODozMDowMFoiLCJ2ZXJzaW9uIjoxfX0=";
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        v["content"][1]["text"],
        json!(format!("__ENVELOPE_V1__:{seed_block}"))
    );
    assert_eq!(v["isError"], json!(true));
    assert!(out.ends_with(r#"],"isError":true}"#), "{out}");
    assert!(block0(&out).starts_with("❌ Validation error [ERR_INPUT_SCHEMA]"));

    // Decoding gives the error back; errors default to tool "mcp".
    let back = decode(FormatId::ToolEnvelopeV1, out.as_bytes(), &STRICT).unwrap();
    assert_eq!(back.status, Status::Error);
    assert_eq!(
        back.error.as_ref().unwrap().code.as_deref(),
        Some("ERR_INPUT_SCHEMA")
    );
    let no_tool = Envelope { tool: None, ..env };
    assert!(inner_json(&encode_str(&no_tool)).contains(r#""tool":"mcp""#));
}

#[test]
fn unknown_category_in_a_result_does_not_crash_and_is_kept() {
    let inner = r#"{"payload":{"category":"cosmic","code":"Z","message":"m","recoverable":false},"meta":{"tool":"mcp","ts":"t","version":1}}"#;
    let doc = json!({"content": [{"type": "text", "text": "x"}, {"type": "text", "text": format!("__ENVELOPE_V1__:{}", envelope::base64::encode(inner.as_bytes()))}], "isError": true});
    let env = envelope::formats::decode_value(FormatId::ToolEnvelopeV1, doc, &STRICT).unwrap();
    assert_eq!(
        env.error.as_ref().unwrap().category,
        Category::Other("cosmic".into())
    );
    let re = Envelope {
        summary: None,
        ..env
    };
    let out = encode_str(&re);
    assert!(block0(&out).starts_with("💥 Internal error [Z]: m"));
    assert_eq!(inner_json(&out), inner);
}

#[test]
fn seed_success_example_round_trips_byte_exact() {
    let bytes = include_str!("../../../examples/tool-envelope-v1.json").trim_end();
    let env = decode(FormatId::ToolEnvelopeV1, bytes.as_bytes(), &STRICT).unwrap();
    assert_eq!(env.tool.as_deref(), Some("system-design"));
    assert!(matches!(&env.payload, Payload::Json(p) if p["instructionId"] == "system-design"));
    assert_eq!(encode_str(&env), bytes);
}

#[test]
fn deprecations_follow_version_only_when_non_empty() {
    let dep =
        json!([{"field": "old", "since": "1.2", "removeInVersion": "2.0", "replacement": "new"}]);
    for (deps, expected_meta) in [
        (
            json!([]),
            r#"{"tool":"t","ts":"x","version":1}"#.to_string(),
        ),
        (
            dep.clone(),
            format!(r#"{{"tool":"t","ts":"x","version":1,"deprecations":{dep}}}"#),
        ),
    ] {
        let inner = format!(
            r#"{{"payload":null,"meta":{{"tool":"t","ts":"x","version":1,"deprecations":{deps}}}}}"#
        );
        let block = format!(
            "__ENVELOPE_V1__:{}",
            envelope::base64::encode(inner.as_bytes())
        );
        let env = decode(FormatId::ToolEnvelopeV1, block.as_bytes(), &STRICT).unwrap();
        let out = encode_str(&env);
        assert_eq!(
            inner_json(&out),
            format!(r#"{{"payload":null,"meta":{expected_meta}}}"#)
        );
    }
}

#[test]
fn dual_emit_structured_content() {
    let env = Envelope {
        tool: Some("t".into()),
        timestamp: Some(Timestamp::Text("x".into())),
        ..Envelope::ok(json!({"a": 1}))
    };
    let options = EncodeOptions {
        dual_emit: true,
        ..EncodeOptions::default()
    };
    let out = String::from_utf8(
        encode(FormatId::ToolEnvelopeV1, &env, &options)
            .unwrap()
            .bytes,
    )
    .unwrap();
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        v["structuredContent"],
        json!({"payload": {"a": 1}, "meta": {"tool": "t", "ts": "x", "version": 1}})
    );
    // Decoding and re-encoding keeps the dual emit without the option.
    let back = decode(FormatId::ToolEnvelopeV1, out.as_bytes(), &STRICT).unwrap();
    assert!(back.layout.dual_emit);
    assert_eq!(encode_str(&back), out);
}

#[test]
fn meta_version_mismatch_is_kept_not_rejected() {
    let inner = r#"{"payload":1,"meta":{"tool":"t","ts":"x","version":2}}"#;
    let block = format!(
        "__ENVELOPE_V1__:{}",
        envelope::base64::encode(inner.as_bytes())
    );
    let doc = json!({"content": [{"type": "text", "text": "s"}, {"type": "text", "text": block}]})
        .to_string();
    let env = decode(FormatId::ToolEnvelopeV1, doc.as_bytes(), &STRICT).unwrap();
    assert_eq!(inner_json(&encode_str(&env)), inner);
}

#[test]
fn strict_base64_rejects_what_lenient_accepts() {
    let json = br#"{"payload":"\u00ff?>","meta":{"tool":"t","ts":"x","version":1}}"#;
    let standard = envelope::base64::encode(json);
    let url_safe = standard.replace('+', "-").replace('/', "_");
    let unpadded = standard.trim_end_matches('=').to_string();
    let spaced: String = standard
        .chars()
        .enumerate()
        .flat_map(|(i, c)| if i % 10 == 9 { vec![c, '\n'] } else { vec![c] })
        .collect();
    for variant in [&url_safe, &unpadded, &spaced] {
        let text = format!("__ENVELOPE_V1__:{variant}");
        if variant != &standard {
            let err = parse_block(&text, &STRICT, "/content/1/text").unwrap_err();
            assert_eq!(err.code(), "format.base64", "{variant}");
            assert!(err.location().unwrap().offset.is_some());
        }
        assert_eq!(
            parse_block(&text, &LENIENT, "").unwrap(),
            serde_json::from_slice::<Value>(json).unwrap(),
            "{variant}"
        );
    }
    // Lenient decoding stops at the first '='.
    let text = format!("__ENVELOPE_V1__:{standard}=garbage");
    assert!(parse_block(&text, &LENIENT, "").is_ok());
}

/// Our lenient reader against Node's Buffer.from(s, 'base64') on random strings.
#[test]
fn lenient_base64_matches_node_buffer() {
    let mut g = common::Gen::new(42);
    let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_= \n\t.*";
    let inputs: Vec<String> = (0..2000)
        .map(|_| {
            let len = g.below(40);
            (0..len)
                .map(|_| alphabet[g.below(alphabet.len() as u64) as usize] as char)
                .collect()
        })
        .collect();
    let input = inputs
        .iter()
        .map(|s| format!("{}\n", s.replace('\n', "\\n").replace('\t', "\\t")))
        .collect::<String>();
    let script = r#"
const lines = require('fs').readFileSync(0, 'utf8').split('\n');
lines.pop();
process.stdout.write(lines.map(l => Buffer.from(l.replace(/\\n/g, '\n').replace(/\\t/g, '\t'), 'base64').toString('hex')).join('\n') + '\n');
"#;
    let out = common::node(script, &input);
    for (s, hex) in inputs.iter().zip(out.lines()) {
        let ours: String = envelope::base64::decode_lenient(s.as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(ours, hex, "input {s:?}");
    }
}
