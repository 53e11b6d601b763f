//! Redaction: generated secrets never appear in any output, in any format.

use envelope::shape::redact::redact_envelope;
use envelope::{
    Category, DecodeOptions, EncodeOptions, Envelope, EnvelopeError, FormatId, Status, decode,
    encode,
};
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
