//! mcp: structuredContent with its text mirror, errors, and unknown blocks and fields.

use envelope::{DecodeOptions, EncodeOptions, Envelope, FormatId, Payload, Status, decode, encode};
use serde_json::{Value, json};

fn enc(env: &Envelope) -> (String, envelope::LossReport) {
    let e = encode(FormatId::Mcp, env, &EncodeOptions::default()).unwrap();
    (String::from_utf8(e.bytes).unwrap(), e.losses)
}
fn dec(doc: &str) -> Envelope {
    decode(FormatId::Mcp, doc.as_bytes(), &DecodeOptions::default()).unwrap()
}

#[test]
fn object_payload_becomes_structured_content_plus_mirror() {
    let env = Envelope {
        summary: Some("two".into()),
        ..Envelope::ok(json!({"b": 1, "a": [1.0]}))
    };
    let (out, losses) = enc(&env);
    assert_eq!(
        out,
        r#"{"content":[{"type":"text","text":"two"},{"type":"text","text":"{\"b\":1,\"a\":[1]}"}],"structuredContent":{"b":1,"a":[1]}}"#
    );
    assert!(losses.is_empty());
    let back = dec(&out);
    assert_eq!(back.summary.as_deref(), Some("two"));
    assert!(back.presentation.is_none());
}

#[test]
fn errors_map_both_ways() {
    let env = dec(r#"{"content":[{"type":"text","text":"disk full"}],"isError":true}"#);
    assert_eq!(env.status, Status::Error);
    assert_eq!(env.error.as_ref().unwrap().message, "disk full");
    assert_eq!(
        enc(&env).0,
        r#"{"content":[{"type":"text","text":"disk full"}],"isError":true}"#
    );
}

#[test]
fn unknown_blocks_and_fields_survive_in_order() {
    let doc = r#"{"resultType":"complete","content":[{"type":"resource_link","uri":"file:///a","name":"a","size":3},{"type":"hologram","x":[1,2]},{"type":"text","text":"t","annotations":{"priority":0.5}}],"_meta":{"com.example/x":1},"vendorField":{"k":true}}"#;
    let env = dec(doc);
    assert!(matches!(env.payload, Payload::Blocks(ref b) if b.len() == 3));
    let (out, losses) = enc(&env);
    assert_eq!(out, doc);
    assert!(losses.is_empty());
}

#[test]
fn structured_content_with_foreign_presentation_is_kept() {
    let doc = r#"{"content":[{"type":"image","data":"AAAA","mimeType":"image/png"},{"type":"text","text":"{ \"n\": 1 }"}],"structuredContent":{"n":1}}"#;
    let env = dec(doc);
    assert_eq!(env.payload, Payload::Json(json!({"n": 1})));
    assert!(env.presentation.is_some());
    assert_eq!(enc(&env).0, doc);
}

#[test]
fn non_object_payload_is_text_only_and_reported() {
    let (out, losses) = enc(&Envelope::ok(json!([1, 2])));
    let v: Value = serde_json::from_str(&out).unwrap();
    assert!(v.get("structuredContent").is_none());
    assert_eq!(v["content"][0]["text"], "[1,2]");
    assert!(losses.items.iter().any(|l| l.field == "payload"));
}

#[test]
fn plain_text_result() {
    let env = dec(r#"{"content":[{"type":"text","text":"hello"}]}"#);
    assert_eq!(env.payload, Payload::Text("hello".into()));
    assert_eq!(
        enc(&env).0,
        r#"{"content":[{"type":"text","text":"hello"}]}"#
    );
}
