//! A payload written otherwise than the writer writes it (numbers as Python spells them,
//! keys that JS orders first, duplicate keys, `\u` escapes, indentation) is rewritten from
//! its text (`json::rewrite`) by `convert::Document::unwrap` and by the offloading `shape`,
//! with the bytes of building the payload and writing it — and in a fraction of that memory.
//! (`tests/pipeline.rs` compares the offload's bytes and artifacts with the stages.)

mod common;
#[path = "common/heap.rs"]
mod heap;

use common::Gen;
use common::spelling::{Spelling, ascii_escaped, spell};
use envelope::convert::Document;
use envelope::json::Dialect;
use envelope::model::ArtifactRef;
use envelope::shape::kept::{Kept, kept_payload, marker};
use envelope::shape::{ArtifactSink, Offloaded, Pipeline, SinkError};
use envelope::{DecodeOptions, EncodeOptions, Envelope, FormatId, Payload, Status, encode};
use serde_json::{Map, Value, json};

/// What unwrap printed before it had a library call: decode whole, write the payload.
fn whole(doc: &[u8]) -> Result<Vec<u8>, String> {
    let (_, env) = envelope::formats::decode_any(doc, None, &DecodeOptions::default())
        .map_err(|e| e.to_string())?;
    if let (Payload::None, Some(error), Status::Error) = (&env.payload, &env.error, env.status) {
        let object = envelope::formats::operations::error_object(error);
        return Ok(envelope::json::to_vec(&object, Dialect::Js));
    }
    if marker(&env).is_none() {
        return Ok(envelope::json::to_vec(&env.payload.json(), Dialect::Js));
    }
    match kept_payload(&env) {
        Kept::Whole(value) | Kept::Part(value) => Ok(envelope::json::to_vec(&value, Dialect::Js)),
        Kept::LeftOut => Err("left out".into()),
    }
}

fn unwrapped(doc: &[u8]) -> Result<Vec<u8>, String> {
    Document::new(doc)
        .unwrap()
        .map(|w| w.to_vec())
        .map_err(|e| e.to_string())
}

/// A payload with keys JS writes first, a repeated key (in the text), Python's numbers.
fn payload(g: &mut Gen) -> Value {
    let mut map = Map::new();
    for _ in 0..g.below(6) {
        map.insert(g.key(), g.value(3));
    }
    Value::Object(map)
}

fn options() -> EncodeOptions {
    EncodeOptions {
        now: Some("2026-07-04T00:00:00Z".into()),
        ..EncodeOptions::default()
    }
}

/// `n` envelopes of every format in turn, each written by its encoder and then spelled
/// another way; now and then a duplicate payload key (the last one is the value).
fn spelled_documents(seed: u64, n: usize) -> Vec<(FormatId, String)> {
    let mut g = Gen::new(seed);
    (0..n)
        .map(|i| {
            let format = FormatId::ALL[i % FormatId::ALL.len()];
            let env = Envelope::ok(payload(&mut g));
            let bytes = encode(format, &env, &options()).unwrap().bytes;
            let value: Value = serde_json::from_slice(&bytes).unwrap();
            let mut doc = spell(&value, Spelling::new(&mut g));
            if g.below(4) == 0 && doc.starts_with("{\"data\":{") {
                doc = doc.replacen("{\"data\":{", "{\"data\":{\"1\":0,\"1\":[1.0,2],", 1);
            }
            (format, doc)
        })
        .collect()
}

#[test]
fn a_payload_spelled_otherwise_unwraps_to_the_whole_paths_bytes() {
    let _serial = heap::serial();
    let mut checked = 0;
    for (format, doc) in spelled_documents(0x0075_6e77_7261_7073, 3000) {
        let want = whole(doc.as_bytes());
        assert_eq!(unwrapped(doc.as_bytes()), want, "{format}: {doc}");
        checked += usize::from(want.is_ok());
    }
    assert!(checked > 2000, "{checked}");
}

/// An operations envelope of 60,000 records as Python's `json.dumps` writes it (`", "`,
/// `1.0`), a key JS writes first in every record; its value and its text.
fn large_python_document(seed: u64) -> (Value, String) {
    let rows: Vec<Value> = (0..60_000)
        .map(|i| json!({"id": i, "1": "first in JS", "score": (i % 5) as f64, "w": 0.25}))
        .collect();
    let value = json!({"data": {"rows": rows, "count": 60_000}, "meta": {"source": "local"}});
    let doc = spell(
        &value,
        Spelling {
            spaced: true,
            ascii: false,
            reversed: false,
            seed,
        },
    );
    (value, doc)
}

#[test]
fn a_large_payload_spelled_as_python_spells_it_is_never_built() {
    let _serial = heap::serial();
    let (_, doc) = large_python_document(7);
    assert!(doc.contains("\"score\": 1.0"), "Python's spelling");
    // Converted to every format the splice writes: the payload rewritten once, written
    // from there (to MCP twice: `structuredContent` and its text mirror).
    for to in [
        FormatId::Mcp,
        FormatId::ProtocolV1,
        FormatId::ToolResultEnvelope,
    ] {
        let before = heap::start();
        let document = Document::new(doc.as_bytes());
        let written = document.convert(to, &EncodeOptions::default()).unwrap();
        let mut size = Size(0);
        written.write_to(&mut size).unwrap();
        let peak = heap::peak_since(before);
        assert!(size.0 > doc.len() / 2, "{to}: {} bytes", size.0);
        let before = heap::start();
        let whole = envelope::convert::convert(
            doc.as_bytes(),
            None,
            to,
            &Default::default(),
            &Default::default(),
        )
        .unwrap();
        let whole_peak = heap::peak_since(before);
        drop(whole);
        // The rewritten payload and the read's own (about the input again), never the tree
        // (to MCP: 7.8 MB of heap, against 77 MB whole, for a 3.8 MB document).
        assert!(
            peak < 5 * doc.len() / 2 && peak * 5 < whole_peak,
            "{to}: {peak} bytes of heap (whole: {whole_peak}) for a {} byte document",
            doc.len()
        );
    }
    let before = heap::start();
    let out = unwrapped(doc.as_bytes()).unwrap();
    let peak = heap::peak_since(before);
    let before = heap::start();
    assert_eq!(Ok(out), whole(doc.as_bytes()));
    let whole_peak = heap::peak_since(before);
    // The output and what the reads hold (the issue's bound: twice the input), never the
    // tree the whole path builds.
    assert!(
        peak < 2 * doc.len() && peak * 3 < whole_peak,
        "{peak} bytes of heap (the whole path: {whole_peak}) for a {} byte document",
        doc.len()
    );
}

/// A sink that keeps the length of what it is given, not the bytes.
struct Counting(usize);

impl ArtifactSink for Counting {
    fn put(&mut self, bytes: &[u8], _: &str) -> Result<ArtifactRef, SinkError> {
        self.0 = bytes.len();
        Ok(ArtifactRef {
            digest: format!("sha256:{}", "0".repeat(64)),
        })
    }
}

#[test]
fn a_large_payload_spelled_as_python_spells_it_is_stored_without_being_built() {
    let _serial = heap::serial();
    let (value, doc) = large_python_document(11);
    let mut sink = Counting(0);
    let before = heap::start();
    let shaped = Pipeline::new(doc.as_bytes())
        .store(&mut sink)
        .run()
        .unwrap();
    let peak = heap::peak_since(before);
    assert!(matches!(shaped.offloaded, Offloaded::Stored { .. }));
    let stored = envelope::json::to_vec(&value["data"], Dialect::Js);
    assert_eq!(sink.0, stored.len(), "the payload as JS writes it");
    assert!(
        peak < 2 * doc.len(),
        "{peak} bytes of heap for a {} byte document",
        doc.len()
    );
}

#[test]
fn a_payload_spelled_otherwise_converts_to_the_whole_paths_bytes() {
    let _serial = heap::serial();
    let options = options();
    let mut converted = 0;
    for (format, doc) in spelled_documents(0x0063_6f6e_7665_7274, 600) {
        for to in FormatId::ALL {
            let whole =
                envelope::formats::decode_any(doc.as_bytes(), None, &DecodeOptions::default())
                    .and_then(|(_, env)| encode(to, &env, &options))
                    .and_then(|encoded| {
                        envelope::validate::check_output_of(&encoded.bytes, to, doc.as_bytes())?;
                        Ok(encoded)
                    })
                    .map(|encoded| (encoded.bytes, encoded.losses))
                    .map_err(|e| e.to_string());
            // A fresh document per target: a scratch holds one rewrite.
            let got = Document::new(doc.as_bytes())
                .convert(to, &options)
                .map(|written| (written.to_vec(), written.losses))
                .map_err(|e| e.to_string());
            assert_eq!(got, whole, "{format} -> {to}: {doc}");
            converted += usize::from(got.is_ok());
        }
    }
    assert!(converted > 2500, "{converted}");
}

/// A writer that counts what it is given.
struct Size(usize);

impl std::io::Write for Size {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// An MCP result of one long text: unwrap writes the text as a JSON string — the block's
/// literal as it is when written as the JS writer writes it, else rewritten (Python's
/// `ensure_ascii` escapes) — with the whole path's bytes and without decoding it whole.
#[test]
fn a_long_text_result_unwraps_to_its_literal_without_being_read_whole() {
    let _serial = heap::serial();
    let line = "naïve café — “quoted” \"and\" escaped \\ tab\t 😀\n";
    let text = line.repeat(40_000);
    let as_js =
        serde_json::to_string(&json!({"content": [{"type": "text", "text": text}]})).unwrap();
    // Python's json.dumps: ", " and ": ", every character past ASCII as \u escapes.
    let escaped = ascii_escaped(&serde_json::to_string(&text).unwrap());
    let as_python = format!(r#"{{"content": [{{"type": "text", "text": {escaped}}}]}}"#);
    for (name, doc) in [
        ("as JS writes it", as_js),
        ("as Python writes it", as_python),
    ] {
        let expected = whole(doc.as_bytes()).unwrap();
        assert_eq!(unwrapped(doc.as_bytes()).unwrap(), expected, "{name}");
        let before = heap::start();
        let document = Document::new(doc.as_bytes());
        let written = document.unwrap().unwrap();
        written.write_to(&mut Size(0)).unwrap();
        let peak = heap::peak_since(before);
        // At most the literal rewritten, once; the whole read held several times the text.
        assert!(
            peak <= doc.len() + (1 << 20),
            "{name}: {peak} bytes for {}",
            doc.len()
        );
    }
}
