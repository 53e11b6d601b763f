//! operations: `{data, meta}` per source, `isResponseEnvelope`, and exact round trips.

use envelope::formats::operations::is_response_envelope;
use envelope::{
    DecodeOptions, EncodeOptions, Envelope, FormatId, Payload, Source, Status, decode, encode,
};
use serde_json::json;

fn round_trip(doc: &str) -> Envelope {
    let env = decode(
        FormatId::Operations,
        doc.as_bytes(),
        &DecodeOptions::default(),
    )
    .unwrap();
    let out = encode(FormatId::Operations, &env, &EncodeOptions::default()).unwrap();
    assert_eq!(String::from_utf8(out.bytes).unwrap(), doc);
    assert!(out.losses.is_empty(), "{:?}", out.losses);
    env
}

#[test]
fn local_http_and_mcp_round_trip_exactly() {
    let env = round_trip(
        r#"{"data":{"sum":5},"meta":{"source":"local","operationId":"math.add","timestamp":1783123200000}}"#,
    );
    assert_eq!(
        env.source,
        Some(Source::Local {
            operation_id: Some("math.add".into())
        })
    );

    let env = round_trip(
        r#"{"data":[1,2],"meta":{"source":"http","statusCode":200,"headers":{"content-type":"application/json","set-cookie":"a=1, b=2"},"contentType":"application/json"}}"#,
    );
    assert!(matches!(env.source, Some(Source::Http { .. })));

    // MCP with structured output: data is structuredContent, content stays in meta.
    let env = round_trip(
        r#"{"data":{"n":1},"meta":{"source":"mcp","isError":false,"content":[{"type":"text","text":"{\"n\":1}"}],"structuredContent":{"n":1},"_meta":{"x":1}}}"#,
    );
    assert_eq!(env.payload, Payload::Json(json!({"n": 1})));

    // MCP without structured output: the content blocks are the data; unknown blocks survive.
    let env = round_trip(
        r#"{"data":[{"type":"text","text":"hi"},{"type":"hologram","depth":3}],"meta":{"source":"mcp","isError":false,"content":[{"type":"text","text":"hi"},{"type":"hologram","depth":3}]}}"#,
    );
    assert!(matches!(env.payload, Payload::Blocks(ref b) if b.len() == 2));

    let env = round_trip(
        r#"{"data":[{"type":"text","text":"boom"}],"meta":{"source":"mcp","isError":true,"content":[{"type":"text","text":"boom"}]}}"#,
    );
    assert_eq!(env.status, Status::Error);
    assert_eq!(env.error.unwrap().message, "boom");
}

#[test]
fn undefined_data_is_read_and_written_as_null() {
    // JSON.stringify would omit an undefined `data`, but a document without it is no
    // operations envelope (`isResponseEnvelope`): it is written with `"data":null`, so
    // that what the tool writes it reads back (issue 12 item 4; docs/formats.md).
    let doc = r#"{"meta":{"source":"local","operationId":"x.y","timestamp":1}}"#;
    let env = decode(
        FormatId::Operations,
        doc.as_bytes(),
        &DecodeOptions::default(),
    )
    .unwrap();
    assert_eq!(env.payload, Payload::None);
    let out = encode(FormatId::Operations, &env, &EncodeOptions::default()).unwrap();
    assert_eq!(
        String::from_utf8(out.bytes).unwrap(),
        r#"{"data":null,"meta":{"source":"local","operationId":"x.y","timestamp":1}}"#
    );
}

#[test]
fn local_factory_from_a_wrapped_payload() {
    let env = Envelope {
        source: Some(Source::Local {
            operation_id: Some("ns.op".into()),
        }),
        timestamp: Some(envelope::Timestamp::Text("2026-07-04T00:00:00Z".into())),
        ..Envelope::ok(json!({"a": 1}))
    };
    let out = encode(FormatId::Operations, &env, &EncodeOptions::default()).unwrap();
    assert_eq!(
        String::from_utf8(out.bytes).unwrap(),
        r#"{"data":{"a":1},"meta":{"source":"local","operationId":"ns.op","timestamp":1783123200000}}"#
    );
}

#[test]
fn is_response_envelope_uses_the_closed_source_set() {
    assert!(is_response_envelope(
        &json!({"data": null, "meta": {"source": "local"}})
    ));
    assert!(!is_response_envelope(
        &json!({"data": 1, "meta": {"source": "ftp"}})
    ));
    assert!(!is_response_envelope(&json!({"meta": {"source": "local"}})));
    assert!(!is_response_envelope(&json!({"data": 1, "meta": null})));
    assert!(!is_response_envelope(&json!([1])));
    let err = decode(
        FormatId::Operations,
        br#"{"data":1,"meta":{"source":"ftp"}}"#,
        &DecodeOptions::default(),
    )
    .unwrap_err();
    assert_eq!(
        err.location().unwrap().pointer.as_deref(),
        Some("/meta/source")
    );
}
