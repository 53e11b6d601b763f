//! Numbers are numbers: `1`, `1.0` and `1e0` are one value wherever two values are compared
//! (the MCP mirror check first), so any document `validate` accepts, `shape` and `convert`
//! accept — with numbers in any spelling, keys in any order, compact or indented, `\u`
//! escapes or not.

mod common;

use common::Gen;
use common::spelling::{Spelling, spell};
use envelope::convert::Document;
use envelope::shape::Pipeline;
use envelope::validate::{Options, Profile, validate_document};
use envelope::{EncodeOptions, Envelope, FormatId, encode};
use serde_json::{Value, json};

/// An MCP result as the Python SDK writes it: `structuredContent` and its text mirror (or a
/// summary beside it), each spelled its own way.
fn mcp_result(g: &mut Gen) -> Value {
    let mut structured = serde_json::Map::new();
    for _ in 0..g.below(5) {
        structured.insert(g.key(), g.value(3));
    }
    let structured = Value::Object(structured);
    let mirror = spell(&structured, Spelling::new(g));
    let content = match g.below(3) {
        0 => json!([{"type": "text", "text": mirror}]),
        1 => json!([{"type": "text", "text": "summary"}, {"type": "text", "text": mirror}]),
        _ => json!([{"type": "text", "text": g.string()}]),
    };
    let mut result = json!({"content": content, "structuredContent": structured});
    if g.below(4) == 0 {
        result["isError"] = json!(false);
    }
    result
}

/// A document of any format, its envelope generated, written by the format's encoder.
fn encoded(g: &mut Gen) -> Value {
    let format = FormatId::ALL[g.below(FormatId::ALL.len() as u64) as usize];
    let mut payload = serde_json::Map::new();
    for _ in 0..g.below(5) {
        payload.insert(g.key(), g.value(3));
    }
    let env = Envelope {
        tool: Some("search".into()),
        ..Envelope::ok(Value::Object(payload))
    };
    let options = EncodeOptions {
        now: Some("2026-07-04T00:00:00Z".into()),
        ..EncodeOptions::default()
    };
    let bytes = encode(format, &env, &options).unwrap().bytes;
    serde_json::from_slice(&bytes).unwrap()
}

/// Every reading `shape`, `convert` and `unwrap` make of `doc` accepts it, when `validate`
/// does; `Some(format)` when it was valid.
fn check(doc: &[u8]) -> Option<FormatId> {
    let report = validate_document(doc, &Options::new(None, Profile::Spec));
    if !report.is_valid() {
        return None;
    }
    let text = String::from_utf8_lossy(doc);
    Pipeline::new(doc)
        .run()
        .unwrap_or_else(|e| panic!("shape refused a valid document: {e}\n{text}"));
    Pipeline::new(doc)
        .limit(1 << 20)
        .run()
        .unwrap_or_else(|e| panic!("shape --limit refused a valid document: {e}\n{text}"));
    let document = Document::new(doc);
    for to in FormatId::ALL {
        document
            .convert(to, &EncodeOptions::default())
            .unwrap_or_else(|e| panic!("convert --to {to} refused a valid document: {e}\n{text}"));
    }
    document
        .unwrap()
        .unwrap_or_else(|e| panic!("unwrap refused a valid document: {e}\n{text}"));
    report.format
}

#[test]
fn the_python_sdks_mirror_of_a_float_is_a_mirror() {
    let doc = br#"{"content":[{"type":"text","text":"{\"score\":1.0}"}],"structuredContent":{"score":1.0}}"#;
    assert_eq!(check(doc), Some(FormatId::Mcp));
    let doc = br#"{"content":[{"type":"text","text":"{\"score\": 1e0, \"n\": 0.250}"}],"structuredContent":{"n":0.25,"score":1}}"#;
    assert_eq!(check(doc), Some(FormatId::Mcp));
    // A mirror that says another number is still refused.
    let doc = br#"{"content":[{"type":"text","text":"{\"score\":1.5}"}],"structuredContent":{"score":1}}"#;
    let report = validate_document(doc, &Options::new(None, Profile::Spec));
    assert!(
        report.findings.iter().any(|f| f.rule == "mcp.mirror"),
        "{:?}",
        report.findings
    );
}

#[test]
fn any_document_validate_accepts_shape_and_convert_accept() {
    let mut g = Gen::new(0x006e_756d_6265_7273);
    let mut valid = std::collections::BTreeMap::<&str, usize>::new();
    for _ in 0..1500 {
        let value = if g.below(2) == 0 {
            mcp_result(&mut g)
        } else {
            encoded(&mut g)
        };
        let doc = spell(&value, Spelling::new(&mut g));
        if let Some(format) = check(doc.as_bytes()) {
            *valid.entry(format.as_str()).or_default() += 1;
        }
    }
    // The property is about valid documents: most generated ones must be, in every format.
    assert_eq!(valid.len(), FormatId::ALL.len(), "{valid:?}");
    assert!(valid["mcp"] >= 500, "{valid:?}");
}
