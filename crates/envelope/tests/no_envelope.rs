//! A large document of no format is refused by `shape`, `convert` and `unwrap` after one pass
//! that builds nothing, with the very error reading it whole gives; and anything else — an
//! envelope, a document that is not JSON — is read as before.

#[path = "common/heap.rs"]
mod heap;

use envelope::convert::Document;
use envelope::shape::Pipeline;
use envelope::{DecodeOptions, EncodeOptions, Error, FormatId};

/// Rows enough to make `text` a few megabytes: the early refusal looks at inputs from 1 MiB.
fn rows(n: usize) -> String {
    let row = r#"{"id":1,"name":"item \"one\" é","tags":["a","b"],"score":0.142857}"#;
    let mut out = String::from("[");
    for i in 0..n {
        if i > 0 {
            out.push(',');
        }
        out.push_str(row);
    }
    out.push(']');
    out
}

/// The error of reading `doc` whole: the detection of the parsed value, or (not JSON) the
/// whole read's own error.
fn whole_error(doc: &[u8]) -> String {
    match serde_json::from_slice::<serde_json::Value>(doc) {
        Ok(value) => envelope::detect::detect_value(&value)
            .unwrap_err()
            .to_string(),
        Err(_) => envelope::formats::decode_any(doc, None, &DecodeOptions::default())
            .map(|_| ())
            .unwrap_err()
            .to_string(),
    }
}

/// What each command says of `doc`, and the heap it took at its peak.
/// (Tests that call it hold `heap::serial()`: the peak counts their own heap only.)
fn refusals(doc: &[u8]) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    let mut run = |f: &dyn Fn() -> Result<(), Error>| {
        let before = heap::start();
        let error = f().unwrap_err().to_string();
        out.push((error, heap::peak_since(before)));
    };
    run(&|| Pipeline::new(doc).run().map(|_| ()));
    run(&|| Pipeline::new(doc).limit(4096).run().map(|_| ()));
    run(&|| Pipeline::new(doc).run_spliced().map(|_| ()));
    run(&|| {
        Document::new(doc)
            .convert(FormatId::Mcp, &EncodeOptions::default())
            .map(|_| ())
    });
    run(&|| Document::new(doc).unwrap().map(|_| ()));
    out
}

#[test]
fn a_large_document_of_no_format_is_refused_in_one_pass() {
    let _serial = heap::serial();
    let rows = rows(40_000);
    let docs = [
        format!(r#"{{"rows":{rows},"total":40000,"note":"no marks"}}"#),
        format!("  {rows}  \n"),
        format!(r#""{}""#, "x".repeat(3 << 20)),
        // Keys near the detection keys are not them.
        format!(r#"{{"Content":{rows},"contents":[],"meta_":{{}}}}"#),
    ];
    // Detection keys without any format's marks: `data` and a `meta` whose source is no
    // operations source, `data` alone, protocol-v1's fields but `command`, MCP's `content`
    // that is no array of blocks, a ctxo `_meta` without its counts. Detection reads the
    // members it needs (never `data`), so these are refused in its pass too; the whole read
    // built them (an 86 MB one took 1.5 GB).
    let with_keys = [
        format!(r#"{{"data":{rows},"meta":{{"source":"x"}}}}"#),
        format!(r#"{{"meta":{{"source":"nowhere"}},"data":{{"rows":{rows}}}}}"#),
        format!(r#"{{"data":{rows}}}"#),
        format!(r#"{{"version":1,"status":"ok","data":{rows},"meta":{{}}}}"#),
        format!(r#"{{"content":"no blocks","rows":{rows}}}"#),
        format!(r#"{{"results":{rows},"_meta":{{"note":"no counts"}}}}"#),
    ];
    for (doc, bound) in docs
        .iter()
        .map(|doc| (doc, 64 << 10))
        // (The fast paths these go through first hold a buffer of about 1.1 MB whatever
        // the input's size: the same at 2.7 and 5.4 MB.)
        .chain(with_keys.iter().map(|doc| (doc, 2 << 20)))
    {
        assert!(doc.len() > 2 << 20);
        let expected = whole_error(doc.as_bytes());
        assert!(expected.contains("not a recognized envelope"), "{expected}");
        for (error, peak) in refusals(doc.as_bytes()) {
            assert_eq!(error, expected);
            // The whole read builds the rows: many times the input.
            assert!(
                peak < bound,
                "{peak} bytes of heap to refuse {}",
                &doc[..40]
            );
        }
    }
}

#[test]
fn anything_else_is_read_as_before() {
    let _serial = heap::serial();
    let rows = rows(40_000);
    // An envelope whose detection key comes after its payload: detected, shaped.
    let ops = format!(r#"{{"data":{rows},"meta":{{"source":"local"}}}}"#);
    let tre = format!(r#"{{"rows":{rows},"__envelope":{{"version":"1"}}}}"#);
    for (doc, format) in [
        (ops, FormatId::Operations),
        (tre, FormatId::ToolResultEnvelope),
    ] {
        let shaped = Pipeline::new(doc.as_bytes()).limit(4096).run().unwrap();
        assert_eq!(shaped.format, format);
        assert!(shaped.bytes.len() <= 4096);
    }
    // Not JSON past the first megabyte: the whole read's error, with its location.
    let broken = format!(r#"{{"rows":{rows},"total":}}"#);
    let expected = whole_error(broken.as_bytes());
    assert!(expected.contains("invalid JSON"), "{expected}");
    for (error, _) in refusals(broken.as_bytes()) {
        assert_eq!(error, expected);
    }
    // Told the format: no detection, the format's own error.
    let doc = format!(r#"{{"rows":{rows}}}"#);
    let error = Pipeline::new(doc.as_bytes())
        .input_format(FormatId::Operations)
        .run()
        .unwrap_err();
    assert_ne!(error.to_string(), whole_error(doc.as_bytes()));
}
