//! Conversion through the canonical model: A → B → A keeps what both A and B hold, and the
//! loss report names everything else.

use envelope::{
    Category, DecodeOptions, EncodeOptions, Envelope, EnvelopeError, FormatId, Payload, Status,
    Timestamp, decode, encode,
};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

fn json_leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|i| json!(i)),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(|f| json!(f)),
        "\\PC{0,12}".prop_map(Value::String),
        "[\u{0}-\u{1f}\"\\\\\u{2028}\u{85}é😀]{0,6}".prop_map(Value::String),
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    json_leaf().prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-z0-9]{1,6}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn payload_object() -> impl Strategy<Value = Value> {
    prop::collection::btree_map("[a-z]{1,6}", json_value(), 0..5)
        .prop_map(|m| Value::Object(m.into_iter().collect::<Map<_, _>>()))
}

fn format() -> impl Strategy<Value = FormatId> {
    prop::sample::select(FormatId::ALL.to_vec())
}

/// Numbers compared as doubles: `1.0` written by JS comes back as the integer `1`.
fn normalized(v: &Value) -> Value {
    match v {
        Value::Number(n) => json!(n.as_f64().unwrap()),
        Value::Array(a) => Value::Array(a.iter().map(normalized).collect()),
        Value::Object(o) => {
            Value::Object(o.iter().map(|(k, v)| (k.clone(), normalized(v))).collect())
        }
        other => other.clone(),
    }
}

fn millis(env: &Envelope) -> Option<i64> {
    match env.timestamp.as_ref()? {
        Timestamp::Text(t) => envelope::time::rfc3339_to_epoch_millis(t),
        Timestamp::EpochMillis(n) => n.as_i64(),
    }
}

fn through(env: &Envelope, to: FormatId) -> Envelope {
    let options = EncodeOptions {
        ctxo_limit: Some(usize::MAX),
        ..EncodeOptions::default()
    };
    let bytes = encode(to, env, &options).unwrap().bytes;
    decode(to, &bytes, &DecodeOptions::default()).unwrap_or_else(|e| {
        panic!(
            "{to} could not read its own output: {e}\n{}",
            String::from_utf8_lossy(&bytes)
        )
    })
}

const HOLDS_TOOL: [FormatId; 2] = [FormatId::ToolEnvelopeV1, FormatId::ToolResultEnvelope];
const HOLDS_TIME: [FormatId; 4] = [
    FormatId::ToolEnvelopeV1,
    FormatId::Operations,
    FormatId::ProtocolV1,
    FormatId::ToolResultEnvelope,
];
const HOLDS_WORKSPACE: [FormatId; 2] = [FormatId::Ctxo, FormatId::ProtocolV1];
const HOLDS_SUMMARY: [FormatId; 2] = [FormatId::ToolEnvelopeV1, FormatId::Mcp];
const HOLDS_ERROR: [FormatId; 4] = [
    FormatId::ToolEnvelopeV1,
    FormatId::Ctxo,
    FormatId::ProtocolV1,
    FormatId::Mcp,
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn a_to_b_to_a_keeps_what_both_hold(
        payload in payload_object(),
        a in format(),
        b in format(),
        tool in "[a-z][a-z-]{0,10}",
        summary in "\\PC{1,20}",
        ms in 0i64..4_102_444_800_000,
        workspace in "/[a-z]{1,8}",
    ) {
        let ts = envelope::time::epoch_millis_to_rfc3339(&ms.into()).unwrap();
        let start = Envelope {
            tool: Some(tool.clone()),
            summary: Some(summary.clone()),
            timestamp: Some(Timestamp::Text(ts)),
            workspace: Some(workspace.clone()),
            ..Envelope::ok(payload.clone())
        };
        let in_a = through(&start, a);
        let back = through(&through(&in_a, b), a);
        prop_assert_eq!(normalized(&back.payload.to_json()), normalized(&in_a.payload.to_json()));
        prop_assert_eq!(normalized(&back.payload.to_json()), normalized(&payload));
        prop_assert_eq!(back.status, Status::Ok);
        if HOLDS_TOOL.contains(&a) && HOLDS_TOOL.contains(&b) {
            prop_assert_eq!(back.tool.as_deref(), Some(tool.as_str()));
        }
        if HOLDS_TIME.contains(&a) && HOLDS_TIME.contains(&b) {
            prop_assert_eq!(millis(&back), Some(ms));
        }
        if HOLDS_WORKSPACE.contains(&a) && HOLDS_WORKSPACE.contains(&b) {
            prop_assert_eq!(back.workspace.as_deref(), Some(workspace.as_str()));
        }
        if HOLDS_SUMMARY.contains(&a) && HOLDS_SUMMARY.contains(&b) {
            prop_assert_eq!(back.summary.as_deref(), Some(summary.as_str()));
        }
    }

    #[test]
    fn errors_keep_their_message_and_code(
        a in prop::sample::select(HOLDS_ERROR.to_vec()),
        b in prop::sample::select(HOLDS_ERROR.to_vec()),
        message in "\\PC{1,30}",
        code in prop::sample::select(vec!["EARG", "ETIMEOUT", "ERATELIMIT", "TOOL_X_1"]),
    ) {
        let start = Envelope::failed(EnvelopeError::from_code(code, message.clone()));
        let back = through(&through(&through(&start, a), b), a);
        prop_assert_eq!(back.status, Status::Error);
        let error = back.error.unwrap();
        prop_assert_eq!(&error.message, &message);
        let both_hold_code = [FormatId::ToolEnvelopeV1, FormatId::ProtocolV1];
        if both_hold_code.contains(&a) && both_hold_code.contains(&b) {
            prop_assert_eq!(error.code.as_deref(), Some(code));
            prop_assert_eq!(error.category, Category::of_code(code));
        }
    }

    /// Whatever a conversion drops is named in the loss report.
    #[test]
    fn dropped_fields_are_reported(payload in payload_object(), to in format()) {
        let start = Envelope {
            tool: Some("t".into()),
            command: Some("a/b".into()),
            provider: Some("p".into()),
            model: Some("m".into()),
            summary: Some("s".into()),
            workspace: Some("/w".into()),
            duration_ms: Some(5.into()),
            ..Envelope::ok(payload)
        };
        let options = EncodeOptions { ctxo_limit: Some(usize::MAX), now: Some("2026-01-01T00:00:00Z".into()), ..EncodeOptions::default() };
        let encoded = encode(to, &start, &options).unwrap();
        let back = decode(to, &encoded.bytes, &DecodeOptions::default()).unwrap();
        let lost = |f: &str| encoded.losses.items.iter().any(|l| l.field == f);
        for (field, before, after) in [
            ("tool", start.tool.is_some(), back.tool.is_some()),
            ("provider", start.provider.is_some(), back.provider.is_some()),
            ("model", start.model.is_some(), back.model.is_some()),
            ("summary", start.summary.is_some(), back.summary.is_some()),
            ("workspace", start.workspace.is_some(), back.workspace.is_some()),
            ("duration_ms", start.duration_ms.is_some(), back.duration_ms.is_some()),
        ] {
            prop_assert!(!before || after || lost(field), "{to}: {field} vanished without a loss report entry");
        }
    }
}

#[test]
fn foreign_extensions_are_listed_by_pointer() {
    let doc = r#"{"version":1,"status":"ok","command":"a/b","data":{},"meta":{"ts":"2026-01-01T00:00:00Z","runner":"exec","job_id":"j"},"error":{}}"#;
    let env = decode(
        FormatId::ProtocolV1,
        doc.as_bytes(),
        &DecodeOptions::default(),
    )
    .unwrap();
    let encoded = encode(FormatId::Mcp, &env, &EncodeOptions::default()).unwrap();
    let fields: Vec<&str> = encoded
        .losses
        .items
        .iter()
        .map(|l| l.field.as_str())
        .collect();
    assert!(
        fields.contains(&"/meta/runner") && fields.contains(&"/meta/job_id"),
        "{fields:?}"
    );
    assert!(
        fields.contains(&"command") && fields.contains(&"timestamp"),
        "{fields:?}"
    );
    assert!(matches!(env.payload, Payload::Json(_)));
}
