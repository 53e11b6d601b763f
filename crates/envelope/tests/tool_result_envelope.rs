//! tool-result-envelope: Newtonsoft output, the reserved key, createdUtc and payload lookup.

use envelope::model::ContentType;
use envelope::{
    DecodeOptions, EncodeOptions, Envelope, FormatId, Payload, Timestamp, decode, encode,
};
use serde_json::json;

fn enc(env: &Envelope) -> String {
    String::from_utf8(
        encode(FormatId::ToolResultEnvelope, env, &EncodeOptions::default())
            .unwrap()
            .bytes,
    )
    .unwrap()
}
fn dec(doc: &str) -> Envelope {
    decode(
        FormatId::ToolResultEnvelope,
        doc.as_bytes(),
        &DecodeOptions::default(),
    )
    .unwrap()
}

const DEFAULT_META: &str = r#"{"version":"1","tool":null,"provider":null,"model":null,"toolCallId":null,"contentType":0,"payloadPath":"result","schemaRef":null,"compat":["result","list","items"],"createdUtc":"2026-01-02T03:04:05Z","tags":[]}"#;

#[test]
fn default_envelope_exactly() {
    let env = Envelope {
        timestamp: Some(Timestamp::Text("2026-01-02T03:04:05Z".into())),
        ..Envelope::ok(json!("hi"))
    };
    assert_eq!(
        enc(&env),
        format!(r#"{{"result":"hi","__envelope":{DEFAULT_META}}}"#)
    );
}

#[test]
fn null_payload_under_a_custom_key_comes_first() {
    let mut env = Envelope {
        timestamp: Some(Timestamp::Text("2026-01-02T03:04:05Z".into())),
        ..Envelope::ok(json!(null))
    };
    env.layout.payload_key = Some("data".into());
    let out = enc(&env);
    assert!(
        out.starts_with(r#"{"data":null,"__envelope":{"version":"1""#),
        "{out}"
    );
    assert!(out.contains(r#""payloadPath":"data""#));
    // A present null counts as found on the way back.
    assert_eq!(dec(&out).payload, Payload::Json(json!(null)));
}

#[test]
fn attaching_keeps_an_existing_envelope_key_first() {
    let mut env = dec(r#"{"__envelope":{},"result":1}"#);
    env.timestamp = Some(Timestamp::Text("2026-01-02T03:04:05Z".into()));
    assert_eq!(
        enc(&env),
        format!(r#"{{"__envelope":{DEFAULT_META},"result":1}}"#)
    );
}

#[test]
fn created_utc_format() {
    for (given, written) in [
        (
            "2026-01-02T03:04:05.1234567Z",
            "2026-01-02T03:04:05.1234567Z",
        ),
        (
            "2026-01-02T03:04:05.123456789Z",
            "2026-01-02T03:04:05.1234567Z",
        ),
        ("2026-01-02T03:04:05.1200000Z", "2026-01-02T03:04:05.12Z"),
        ("2026-01-02T03:04:05.000Z", "2026-01-02T03:04:05Z"),
        ("2026-01-02T05:04:05+02:00", "2026-01-02T03:04:05Z"),
    ] {
        assert_eq!(
            envelope::formats::tool_result_envelope::created_utc(given),
            written,
            "{given}"
        );
    }
}

#[test]
fn reading_is_case_insensitive_and_content_type_flexible() {
    for (ct, expected) in [
        ("1", ContentType::Text),
        ("\"list\"", ContentType::List),
        ("\"OBJECT\"", ContentType::Object),
        ("\"4\"", ContentType::Image),
        ("9", ContentType::Other(9)),
    ] {
        let env = dec(&format!(
            r#"{{"result":1,"__envelope":{{"TOOL":"t","ContentType":{ct}}}}}"#
        ));
        assert_eq!(env.tool.as_deref(), Some("t"));
        assert_eq!(env.content_type, Some(expected), "{ct}");
    }
    let err = decode(
        FormatId::ToolResultEnvelope,
        br#"{"__envelope":{"contentType":true}}"#,
        &DecodeOptions::default(),
    )
    .unwrap_err();
    assert_eq!(
        err.location().unwrap().pointer.as_deref(),
        Some("/__envelope/contentType")
    );
}

#[test]
fn payload_lookup_order() {
    // payloadPath is a literal key, not a dotted path.
    let env = dec(r#"{"a.b":1,"a":{"b":2},"__envelope":{"payloadPath":"a.b"}}"#);
    assert_eq!(env.payload, Payload::Json(json!(1)));
    // Then the compat keys in order.
    let env = dec(r#"{"items":[3],"list":[2],"__envelope":{"payloadPath":"missing"}}"#);
    assert_eq!(env.payload, Payload::Json(json!([2])));
    // Else the whole root (without the reserved key).
    let env = dec(r#"{"x":1,"__envelope":{"payloadPath":"missing","compat":[]}}"#);
    assert_eq!(env.payload, Payload::Json(json!({"x": 1})));
}

#[test]
fn reference_output_round_trips_and_newtonsoft_escapes() {
    let doc = "{\"result\":\"a\\u0085b\\u2028\",\"extra\":[1.0,2],\"__envelope\":{\"version\":\"1\",\"tool\":\"t\",\"provider\":\"p\",\"model\":\"m\",\"toolCallId\":\"c\",\"contentType\":1,\"payloadPath\":\"result\",\"schemaRef\":\"s.json\",\"compat\":[\"result\"],\"createdUtc\":\"2026-01-02T03:04:05.5Z\",\"tags\":[\"x\"]}}";
    let env = dec(doc);
    assert_eq!(enc(&env), doc);
}

#[test]
fn indented_output() {
    let env = Envelope {
        timestamp: Some(Timestamp::Text("2026-01-02T03:04:05Z".into())),
        ..Envelope::ok(json!([1]))
    };
    let options = EncodeOptions {
        indented: true,
        ..EncodeOptions::default()
    };
    let out = String::from_utf8(
        encode(FormatId::ToolResultEnvelope, &env, &options)
            .unwrap()
            .bytes,
    )
    .unwrap();
    assert!(out.starts_with("{\n  \"result\": [\n    1\n  ],\n  \"__envelope\": {\n    \"version\": \"1\",\n    \"tool\": null,"), "{out}");
}

/// `convert --to tool-result-envelope` of a tool-result-envelope document writes what the
/// reference writes: a key the document lacks is read as its default and written (issue 12
/// item 11; such keys used to be left out again). A document the reference wrote has every
/// key, and still round-trips byte for byte (above).
#[test]
fn converting_to_the_same_format_writes_the_reference_defaults() {
    let doc = r#"{"result":[1,2],"__envelope":{"version":"1","tool":"t","contentType":2,"createdUtc":"2026-01-02T03:04:05Z"}}"#;
    let out = envelope::convert::convert(
        doc.as_bytes(),
        Some(FormatId::ToolResultEnvelope),
        FormatId::ToolResultEnvelope,
        &DecodeOptions::default(),
        &EncodeOptions::default(),
    )
    .unwrap();
    assert_eq!(
        String::from_utf8(out.bytes).unwrap(),
        r#"{"result":[1,2],"__envelope":{"version":"1","tool":"t","provider":null,"model":null,"toolCallId":null,"contentType":2,"payloadPath":"result","schemaRef":null,"compat":["result","list","items"],"createdUtc":"2026-01-02T03:04:05Z","tags":[]}}"#
    );
    assert!(out.losses.items.is_empty(), "{:?}", out.losses);
    // An empty __envelope gets every default (the payload found under a compat key).
    let env = dec(r#"{"items":[3],"__envelope":{}}"#);
    let written = enc(&Envelope {
        timestamp: Some(Timestamp::Text("2026-01-02T03:04:05Z".into())),
        ..env
    });
    assert_eq!(
        written,
        r#"{"items":[3],"__envelope":{"version":"1","tool":null,"provider":null,"model":null,"toolCallId":null,"contentType":0,"payloadPath":"items","schemaRef":null,"compat":["result","list","items"],"createdUtc":"2026-01-02T03:04:05Z","tags":[]}}"#
    );
}
