//! An MCP result's `_meta` is kept as text ([`JsonText`]), never built: read from the bytes
//! (`decode`, `decode_any`) it must give what reading the built document gives — the same
//! envelope, the same output in every format, the same errors at the same places.

use envelope::formats::{decode_any, decode_value};
use envelope::model::JsonText;
use envelope::{DecodeOptions, EncodeOptions, FormatId, Source, decode, encode};
use serde_json::json;

/// `_meta` members as people write them: Python's spacing and floats, escapes, a repeated
/// key, a marker of an earlier cut, values that are not objects.
const METAS: &[&str] = &[
    r#"{"trace": [1.0, 2.50, {"a": "\u00e9\/"}], "progressToken": "p"}"#,
    r#"{"a": 1, "b": {"c": [true, null]}, "a": 2}"#,
    r#"{"dev.envelope/budget": {"truncated": true, "totalBytes": 9, "cuts": []}, "x": 1e2}"#,
    r#"{"totalItems": 3, "returnedItems": 1, "truncated": false}"#,
    r#"[1, {"a": -0.0}]"#,
    r#""text""#,
    r#"{}"#,
];

fn documents() -> Vec<String> {
    let mut docs = Vec::new();
    for meta in METAS {
        docs.push(format!(
            r#"{{"content":[{{"type":"text","text":"ok"}}],"_meta":{meta}}}"#
        ));
        docs.push(format!(
            r#"{{ "_meta": {meta}, "content": [{{"type": "text", "text": "{{\"n\": 1.0}}"}}], "structuredContent": {{"n": 1.0}}, "isError": false }}"#
        ));
        // A repeated `_meta`: the last one counts, in the first one's place.
        docs.push(format!(
            r#"{{"_meta":{{"first":1}},"content":[{{"type":"text","text":"a"}}],"_meta":{meta}}}"#
        ));
        // ctxo's own document: detected by the names of `_meta`'s members.
        docs.push(format!(r#"{{"results":[1,2],"_meta":{meta}}}"#));
        // operations wrapping an MCP result: its `meta._meta`; of another source, a member
        // it does not know (an extension); beside a root `_meta`.
        docs.push(format!(
            r#"{{"data":{{"n":1.0}},"meta":{{"source":"mcp","isError":false,"content":[{{"type":"text","text":"{{\"n\":1}}"}}],"structuredContent":{{"n":1}},"_meta":{meta}}}}}"#
        ));
        docs.push(format!(
            r#"{{"data":[1],"meta":{{"source":"local","operationId":"a.b","timestamp":1,"_meta":{meta}}},"_meta":{meta}}}"#
        ));
        docs.push(format!(
            r#"{{"data":"x","meta":{{"_meta":{{"a":1}},"source":"mcp","isError":false,"_meta":{meta}}},"meta":{{"source":"mcp","isError":true,"content":[{{"type":"text","text":"no"}}],"_meta":{meta}}}}}"#
        ));
    }
    docs
}

#[test]
fn the_text_read_gives_what_the_built_document_gives() {
    let options = DecodeOptions::default();
    let encode_options = EncodeOptions {
        now: Some("2026-11-29T00:00:00Z".into()),
        ..EncodeOptions::default()
    };
    for doc in documents() {
        let built = envelope::json::from_slice(doc.as_bytes()).unwrap();
        let read = decode_any(doc.as_bytes(), None, &options);
        let Ok(format) = envelope::detect_value(&built).map(|d| d.format) else {
            assert!(read.is_err(), "{doc}");
            continue;
        };
        let expected = decode_value(format, built, &options);
        let (found, env) = match (read, expected) {
            (Ok(read), Ok(expected)) => {
                assert_eq!(read.1, expected, "{doc}");
                read
            }
            (Err(read), Err(expected)) => {
                assert_eq!(read.to_string(), expected.to_string(), "{doc}");
                continue;
            }
            (read, expected) => panic!("{doc}: {read:?} against {expected:?}"),
        };
        assert_eq!(found, format, "{doc}");
        // Read as its format from the bytes: the same envelope.
        assert_eq!(decode(format, doc.as_bytes(), &options).unwrap(), env);
        for to in FormatId::ALL {
            let Ok(written) = encode(to, &env, &encode_options) else {
                continue;
            };
            // Every output is what the built value would give: `_meta` in JS's spelling.
            if let Some(Source::Mcp {
                result_meta: Some(meta),
            }) = &env.source
                && matches!(to, FormatId::Mcp | FormatId::Operations)
            {
                let text = String::from_utf8(written.bytes.clone()).unwrap();
                assert!(text.contains(meta.as_str()), "{doc} as {to:?}: {text}");
            }
        }
    }
}

#[test]
fn a_meta_serde_json_refuses_is_the_same_error_at_the_same_place() {
    let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
    for meta in [deep.as_str(), r#""\ud800""#, "1e999", "[1,]", r#"{"a" 1}"#] {
        // An error in `_meta` and another after it: the first is the one said.
        let root = format!(r#"{{"content":[],"_meta":{meta}}}"#);
        let after = format!(r#"{{"content":[],"_meta":{meta},"x":[1,]}}"#);
        let ops = format!(r#"{{"data":1,"meta":{{"source":"mcp","_meta":{meta}}}}}"#);
        for (doc, format) in [
            (&root, FormatId::Mcp),
            (&after, FormatId::Mcp),
            (&ops, FormatId::Operations),
        ] {
            let expected = envelope::json::from_slice(doc.as_bytes()).unwrap_err();
            for read in [
                decode_any(doc.as_bytes(), None, &DecodeOptions::default()).map(|_| ()),
                decode(format, doc.as_bytes(), &DecodeOptions::default()).map(|_| ()),
            ] {
                assert_eq!(read.unwrap_err().to_string(), expected.to_string(), "{doc}");
            }
        }
    }
}

#[test]
fn a_meta_nested_to_the_limit_is_read_as_serde_json_reads_the_document() {
    // The text is passed over first and checked apart: its nesting counts from where it is
    // (one level down at the root, two in operations' `meta`).
    for levels in 124..=128 {
        let meta = format!("{}{}", "[".repeat(levels), "]".repeat(levels));
        for doc in [
            format!(r#"{{"content":[],"_meta":{meta}}}"#),
            format!(r#"{{"data":1,"meta":{{"source":"mcp","isError":false,"_meta":{meta}}}}}"#),
        ] {
            let expected = envelope::json::from_slice(doc.as_bytes()).map(|_| ());
            let read = decode_any(doc.as_bytes(), None, &DecodeOptions::default()).map(|_| ());
            match (read, expected) {
                (Ok(()), Ok(())) => {}
                (Err(read), Err(expected)) => {
                    assert_eq!(read.to_string(), expected.to_string(), "{levels}")
                }
                (read, expected) => panic!("{levels} levels: {read:?} against {expected:?}"),
            }
        }
    }
}

#[test]
fn the_text_is_written_as_javascript_writes_the_value() {
    let meta =
        JsonText::read(br#"{ "b": 1.0, "2": [0.250, "\u00e9"], "a": 1e2, "b": 3 }"#).unwrap();
    assert_eq!(meta.as_str(), r#"{"2":[0.25,"é"],"b":3,"a":100}"#);
    assert_eq!(meta.len(), meta.as_str().len());
    assert!(meta.is_object());
    assert_eq!(meta.member("b").unwrap(), Some(json!(3)));
    assert_eq!(meta.member("c").unwrap(), None);
    assert_eq!(
        meta,
        JsonText::from_value(&json!({"b": 3, "2": [0.25, "é"], "a": 100}))
    );
    assert!(!JsonText::read(b"[1]").unwrap().is_object());
    assert_eq!(JsonText::read(b"[1]").unwrap().member("a").unwrap(), None);
    assert!(JsonText::read(b"{").is_err());
}
