//! Detection of a document fed in pieces (`detect::Detector`, what `envelope detect` runs):
//! the same answer as detection of the whole bytes, in bounded memory, and it stops reading
//! where the root object closes.

mod common;
#[path = "common/heap.rs"]
mod heap;

use envelope::detect::{DETECT_WINDOW, Detector, detect};

/// Detection through a detector with `window`, fed `piece` bytes at a time.
fn streamed(doc: &[u8], window: usize, piece: usize) -> envelope::Result<envelope::Detection> {
    let mut detector = Detector::with_window(window);
    for chunk in doc.chunks(piece) {
        if !detector.feed(chunk)? {
            break;
        }
    }
    detector.finish()
}

/// Every example, fixture and worked shape of each format.
fn documents() -> Vec<(String, Vec<u8>)> {
    let mut docs = common::shapes::examples_and_fixtures();
    let rows = (0..200)
        .map(|i| format!(r#"{{"id":{i},"name":"row {i}"}}"#))
        .collect::<Vec<_>>()
        .join(",");
    let ctxo = format!(
        r#"{{"results":[{rows}],"_meta":{{"totalItems":200,"returnedItems":200,"truncated":false}}}}"#
    );
    let shapes = [
        format!(r#"{{"data":{{"rows":[{rows}]}},"meta":{{"source":"local"}}}}"#),
        ctxo.clone(),
        format!(
            r#"{{"content":[{{"type":"text","text":"x"}},{{"type":"text","text":{}}}]}}"#,
            serde_json::to_string(&ctxo).unwrap()
        ),
        format!(r#"{{"content":[{{"type":"text","text":"[{rows}]"}}],"isError":false}}"#),
        format!(r#"{{"found":false,"rows":[{rows}]}}"#),
        format!(r#"{{"rows":[{rows}],"error":true,"message":"gone"}}"#),
        format!(r#"{{"rows":[{rows}],"__envelope":{{"status":"ok"}}}}"#),
        format!(
            r#"{{"version":1,"status":"ok","command":"a","data":[{rows}],"meta":{{}},"error":{{}}}}"#
        ),
        format!(r#"{{"rows":[{rows}],"other":1}}"#),
        format!(r#"[{rows}]"#),
        format!(r#"{{"data":[{rows}],"meta":{{"source":"nowhere"}},"data":1}}"#),
    ];
    for (i, shape) in shapes.into_iter().enumerate() {
        docs.push((format!("shape {i}"), shape.into_bytes()));
    }
    docs
}

#[test]
fn past_the_window_detection_agrees_with_the_whole_read() {
    let _serial = heap::serial();
    for (name, doc) in documents() {
        let whole = detect(&doc).map(|d| d.format);
        for (window, piece) in [(0, 1), (8, 3), (64, 4096), (doc.len(), 7)] {
            let streamed = streamed(&doc, window, piece);
            assert_eq!(
                streamed.as_ref().map(|d| d.format).map_err(|e| e.code()),
                whole.as_ref().map(|f| *f).map_err(|e| e.code()),
                "{name}: window {window}, pieces of {piece}: {streamed:?}"
            );
        }
    }
}

#[test]
fn within_the_window_errors_are_the_whole_reads() {
    let _serial = heap::serial();
    for doc in [&b"{\"data\":1,"[..], b"[1,", b"{\"a\":1} x", b""] {
        let whole = detect(doc).unwrap_err();
        let fed = streamed(doc, 64, 2).unwrap_err();
        assert_eq!(fed.to_string(), whole.to_string());
    }
}

#[test]
fn past_the_window_broken_structure_is_an_error_with_a_place() {
    let _serial = heap::serial();
    let unclosed = streamed(br#"{"data":[1,2,3,4,5],"meta":{"source":"local"}"#, 8, 5).unwrap_err();
    assert_eq!(unclosed.code(), "json.eof");
    let wrong = streamed(br#"{"data":[1,2,3,4,5}}"#, 8, 5).unwrap_err();
    assert_eq!(wrong.code(), "json.syntax");
    assert_eq!(wrong.location().and_then(|l| l.offset), Some(18));
    let member = streamed(br#"{"data":[1,2,3,4,5],"meta":{"source":x}}"#, 8, 5).unwrap_err();
    assert_eq!(member.code(), "json.syntax");
    assert_eq!(
        member.location().and_then(|l| l.pointer.as_deref()),
        Some("/meta")
    );
}

/// A reader that never ends: a document over the window, then blanks forever.
#[test]
fn reading_stops_where_the_root_object_closes() {
    let _serial = heap::serial();
    let mut detector = Detector::with_window(1024);
    let head = format!(
        r#"{{"data":"{}","meta":{{"source":"local"}}}}"#,
        "x".repeat(4096)
    );
    let blanks = [b' '; 4096];
    let mut fed = 0usize;
    let mut pieces = std::iter::once(head.as_bytes()).chain(std::iter::repeat(&blanks[..]));
    while detector.feed(pieces.next().unwrap()).unwrap() {
        fed += 1;
        assert!(fed < 10, "still reading after {fed} pieces");
    }
    assert_eq!(detector.finish().unwrap().format.as_str(), "operations");
}

/// 24 MiB of payload before the `meta` that names the format: detection holds a few
/// MiB, never the document.
#[test]
fn memory_stays_bounded_whatever_the_size() {
    let _serial = heap::serial();
    let row = br#"{"id":12345,"name":"a row of the payload","tags":["a","b"]},"#;
    let before = heap::start();
    let mut detector = Detector::new();
    assert!(detector.feed(br#"{"data":{"rows":["#).unwrap());
    let mut piece = Vec::with_capacity(1 << 16);
    while piece.len() + row.len() <= 1 << 16 {
        piece.extend_from_slice(row);
    }
    let mut total = 0;
    while total < 24 << 20 {
        assert!(detector.feed(&piece).unwrap());
        total += piece.len();
    }
    detector.feed(br#"1]},"meta":{"source":"local"}}"#).unwrap();
    let found = detector.finish().unwrap();
    let peak = heap::peak_since(before);
    assert_eq!(found.format.as_str(), "operations");
    assert!(
        peak < DETECT_WINDOW + (4 << 20),
        "peak heap {peak} bytes for a {total}-byte document"
    );
}

/// A document fed whole costs about its size, not the window: detecting a 2 MB document
/// (as checking a command's output does) once took the whole 16 MiB window, 8x its size.
#[test]
fn a_document_fed_whole_takes_its_size() {
    let _serial = heap::serial();
    let row = r#"{"id":12345,"name":"a row of the payload","tags":["a","b"]}"#;
    let rows = vec![row; (2 << 20) / row.len()].join(",");
    let doc = format!(
        r#"{{"results":[{rows}],"_meta":{{"totalItems":1,"returnedItems":1,"truncated":false}}}}"#
    );
    let before = heap::start();
    let mut detector = Detector::new();
    assert!(detector.feed(doc.as_bytes()).unwrap());
    assert_eq!(detector.finish().unwrap().format.as_str(), "ctxo");
    let peak = heap::peak_since(before);
    assert!(
        peak < doc.len() + (1 << 20),
        "peak heap {peak} bytes for a {}-byte document",
        doc.len()
    );
}
