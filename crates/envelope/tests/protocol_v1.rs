//! protocol-v1: the reference's golden fixtures, the Go dialect and field order.

mod common;

use std::path::{Path, PathBuf};

use envelope::{DecodeOptions, EncodeOptions, FormatId, Status, decode, encode};
use serde_json::{Value, json};

fn fixtures() -> Vec<PathBuf> {
    common::protocol_v1_fixtures()
}

fn to_go(env: &envelope::Envelope) -> String {
    String::from_utf8(
        encode(FormatId::ProtocolV1, env, &EncodeOptions::default())
            .unwrap()
            .bytes,
    )
    .unwrap()
}

#[test]
fn every_fixture_decodes_and_reencodes_as_one_go_line_that_round_trips() {
    for path in fixtures() {
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(
            envelope::detect(&bytes).unwrap().format,
            FormatId::ProtocolV1,
            "{}",
            path.display()
        );
        let env = decode(FormatId::ProtocolV1, &bytes, &DecodeOptions::default()).unwrap();
        let line = to_go(&env);
        assert!(
            line.ends_with('\n') && line.matches('\n').count() == 1,
            "{}",
            path.display()
        );
        // Go output is a fixed point: decoding it and encoding again gives the same bytes.
        let again = decode(
            FormatId::ProtocolV1,
            line.as_bytes(),
            &DecodeOptions::default(),
        )
        .unwrap();
        assert_eq!(to_go(&again), line, "{}", path.display());
        // Nothing of the fixture was lost: same JSON value, except fields Go omits when empty.
        let original: Value = serde_json::from_slice(&bytes).unwrap();
        let written: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(written["data"], original["data"], "{}", path.display());
        for (key, v) in original["meta"].as_object().unwrap() {
            let empty = v.as_f64() == Some(0.0) || v == &json!(false) || v == &json!("");
            if !empty {
                assert_eq!(&written["meta"][key], v, "{} meta.{key}", path.display());
            }
        }
        assert_eq!(written["error"], original["error"], "{}", path.display());
    }
}

#[test]
fn ok_inline_in_go_field_order_with_sorted_data() {
    let bytes = std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../../shared/fixtures/protocol-v1/envelopes/ok-inline.json"),
    )
    .unwrap();
    let env = decode(FormatId::ProtocolV1, &bytes, &DecodeOptions::default()).unwrap();
    assert_eq!(
        to_go(&env),
        "{\"version\":1,\"status\":\"ok\",\"command\":\"foxctl.example.inline\",\"data\":{\"items\":[{\"id\":\"alpha\",\"value\":1},{\"id\":\"bravo\",\"value\":2}],\"message\":\"Hello from inline envelope\",\"summary\":\"Sample inline response\"},\"meta\":{\"ts\":\"2025-11-12T10:30:00Z\",\"duration_ms\":128,\"source\":\"run\",\"runner\":\"exec\",\"skill_version\":\"1.0.0\",\"workspace\":\"/home/user/project\"},\"error\":{}}\n"
    );
}

#[test]
fn error_envelope_and_category_from_code() {
    let bytes = std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../../shared/fixtures/protocol-v1/envelopes/error-EARG.json"),
    )
    .unwrap();
    let env = decode(FormatId::ProtocolV1, &bytes, &DecodeOptions::default()).unwrap();
    assert_eq!(env.status, Status::Error);
    let error = env.error.as_ref().unwrap();
    assert_eq!(error.code.as_deref(), Some("EARG"));
    assert_eq!(error.category, envelope::Category::Validation);
    assert!(!error.is_recoverable());
    assert_eq!(
        to_go(&env),
        "{\"version\":1,\"status\":\"error\",\"command\":\"foxctl.example.run\",\"data\":{\"hint\":\"Provide --path when invoking the command\",\"invalid_fields\":[\"path\"]},\"meta\":{\"ts\":\"2025-11-12T10:31:00Z\",\"duration_ms\":42,\"source\":\"run\",\"runner\":\"exec\"},\"error\":{\"code\":\"EARG\",\"message\":\"invalid argument: missing required --path\"}}\n"
    );
}

#[test]
fn meta_fields_in_declaration_order_unknown_ones_after() {
    let doc = r#"{"version":1,"status":"ok","command":"a/b","data":{},"meta":{"trace_id":"t","quota_remaining":{"network_mb":3,"cpu_ms":1},"memory":{"type":"kv","name":"m"},"profiles":["core/v1"],"seq":2,"ts":"2026-01-01T00:00:00Z","duration_ms":0,"final":false},"error":{}}"#;
    let env = decode(
        FormatId::ProtocolV1,
        doc.as_bytes(),
        &DecodeOptions::default(),
    )
    .unwrap();
    assert_eq!(
        to_go(&env),
        "{\"version\":1,\"status\":\"ok\",\"command\":\"a/b\",\"data\":{},\"meta\":{\"ts\":\"2026-01-01T00:00:00Z\",\"seq\":2,\"memory\":{\"name\":\"m\",\"type\":\"kv\"},\"profiles\":[\"core/v1\"],\"quota_remaining\":{\"cpu_ms\":1,\"network_mb\":3},\"trace_id\":\"t\"},\"error\":{}}\n"
    );
}

#[test]
fn progress_keeps_seq_zero_and_go_escapes_line_separators() {
    let doc = "{\"version\":1,\"status\":\"progress\",\"command\":\"a/b\",\"data\":{\"message\":\"x\u{2028}y<&>\",\"pct\":0},\"meta\":{\"ts\":\"2026-01-01T00:00:00Z\",\"seq\":0},\"error\":null}";
    let env = decode(
        FormatId::ProtocolV1,
        doc.as_bytes(),
        &DecodeOptions::default(),
    )
    .unwrap();
    assert_eq!(env.status, Status::Progress);
    assert_eq!(
        to_go(&env),
        "{\"version\":1,\"status\":\"progress\",\"command\":\"a/b\",\"data\":{\"message\":\"x\\u2028y<&>\",\"pct\":0},\"meta\":{\"ts\":\"2026-01-01T00:00:00Z\",\"seq\":0},\"error\":null}\n"
    );
}

#[test]
fn error_details_are_written_sorted() {
    let doc = r#"{"version":1,"status":"error","command":"a/b","data":null,"meta":{"ts":"x"},"error":{"code":"ERATELIMIT","message":"m","details":{"retry_after":"15","attempts":5,"backoff":"exponential"}}}"#;
    let env = decode(
        FormatId::ProtocolV1,
        doc.as_bytes(),
        &DecodeOptions::default(),
    )
    .unwrap();
    let retry = env.error.as_ref().unwrap().retry().unwrap();
    assert_eq!(retry.attempts, Some(json!(5)));
    assert!(env.error.as_ref().unwrap().is_recoverable());
    assert!(to_go(&env).contains(r#""error":{"code":"ERATELIMIT","message":"m","details":{"attempts":5,"backoff":"exponential","retry_after":"15"}}"#));
}
