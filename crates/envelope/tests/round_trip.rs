//! Same-format round trips keep every field, including ones no reference defines.

use envelope::{DecodeOptions, EncodeOptions, FormatId, decode, encode};
use proptest::prelude::*;
use serde_json::{Value, json};

/// Each bundled example and the object inside it where unknown fields can be added.
fn cases() -> Vec<(FormatId, Value, Vec<&'static str>)> {
    let ex = |text: &str| serde_json::from_str::<Value>(text).unwrap();
    vec![
        (
            FormatId::Ctxo,
            ex(include_str!("../../../examples/ctxo.json")),
            vec!["", "/_meta"],
        ),
        (
            FormatId::Operations,
            ex(include_str!("../../../examples/operations.json")),
            vec!["", "/meta"],
        ),
        (
            FormatId::ProtocolV1,
            ex(include_str!("../../../examples/protocol-v1.json")),
            vec!["", "/meta", "/error"],
        ),
        (
            FormatId::ToolResultEnvelope,
            ex(include_str!("../../../examples/tool-result-envelope.json")),
            vec!["", "/__envelope"],
        ),
        (
            FormatId::Mcp,
            ex(include_str!("../../../examples/mcp.json")),
            vec!["", "/content/0"],
        ),
        (
            FormatId::ToolEnvelopeV1,
            ex(include_str!("../../../examples/tool-envelope-v1.json")),
            vec!["", "/content/0"],
        ),
    ]
}

fn unknown_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(json!(null)),
        any::<i32>().prop_map(|i| json!(i)),
        "\\PC{0,8}".prop_map(Value::String),
        prop::collection::vec(any::<bool>(), 0..3).prop_map(|v| json!(v)),
        Just(json!({"nested": {"deep": [1, "x"]}})),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn unknown_fields_survive_a_round_trip(
        case in 0usize..6,
        at in 0usize..3,
        key in "x_[a-z]{1,8}",
        value in unknown_value(),
    ) {
        let (format, mut doc, places) = cases().swap_remove(case);
        let place = places[at % places.len()];
        doc.pointer_mut(place).unwrap().as_object_mut().unwrap().insert(key.clone(), value.clone());
        let bytes = serde_json::to_vec(&doc).unwrap();
        let env = decode(format, &bytes, &DecodeOptions::default()).unwrap();
        let out = encode(format, &env, &EncodeOptions::default()).unwrap();
        prop_assert!(out.losses.is_empty(), "{:?}", out.losses);
        let written: Value = serde_json::from_slice(&out.bytes).unwrap();
        let pointer = format!("{place}/{key}");
        prop_assert_eq!(written.pointer(&pointer), Some(&value), "{} lost {}", format, pointer);
        // Decoding what we wrote and writing it again changes nothing.
        let again = decode(format, &out.bytes, &DecodeOptions::default()).unwrap();
        prop_assert_eq!(encode(format, &again, &EncodeOptions::default()).unwrap().bytes, out.bytes);
    }
}

#[test]
fn unknown_fields_inside_the_tool_envelope_block_survive() {
    let inner = r#"{"payload":{"a":1},"meta":{"tool":"t","ts":"x","version":1,"x_trace":"abc"},"x_top":[1]}"#;
    let block = format!(
        "__ENVELOPE_V1__:{}",
        envelope::base64::encode(inner.as_bytes())
    );
    let doc = json!({"content": [{"type": "text", "text": "s"}, {"type": "text", "text": block}], "x_result": true}).to_string();
    let env = decode(
        FormatId::ToolEnvelopeV1,
        doc.as_bytes(),
        &DecodeOptions::default(),
    )
    .unwrap();
    assert_eq!(
        encode(FormatId::ToolEnvelopeV1, &env, &EncodeOptions::default())
            .unwrap()
            .bytes,
        doc.as_bytes()
    );
}
