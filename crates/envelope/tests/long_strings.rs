//! Strings longer than any cut keeps are read as a prefix and a length
//! (`json::skim::read_for_cut`), never built whole: the shaped bytes, the notice and the
//! loss report are those of the whole read (the oracle: decode whole, then the same cut),
//! on random MCP, operations and protocol-v1 results with long strings and escapes.

mod common;
#[path = "common/heap.rs"]
mod heap;

use common::Gen;
use envelope::shape::{Pipeline, fit};
use envelope::{DecodeOptions, EncodeOptions, FormatId, formats::decode_any};
use serde_json::{Value, json};

fn options() -> EncodeOptions {
    EncodeOptions {
        now: Some("2026-07-04T00:00:00Z".into()),
        ..EncodeOptions::default()
    }
}

/// A long string of `len` characters or so: plain text, with characters JSON escapes
/// (quotes, backslashes, line breaks, control characters), non-ASCII ones (two, three and
/// four bytes), or digests.
fn long_string(g: &mut Gen, len: usize) -> String {
    const PIECES: [&str; 10] = [
        "plain words ",
        "line\n",
        "a \"quote\" ",
        "back\\slash ",
        "tab\tand\u{1}ctl ",
        "é",
        "€uro ",
        "😀",
        "\u{2028}",
        "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
    ];
    let mixed = g.below(3) != 0;
    let mut s = String::new();
    while s.len() < len {
        let piece = match mixed {
            true => PIECES[g.below(PIECES.len() as u64) as usize],
            false => PIECES[0],
        };
        s.push_str(piece);
    }
    s
}

/// A string of any length around the limit: short, just over what a cut keeps, or long.
fn some_string(g: &mut Gen, limit: usize) -> String {
    let len = match g.below(5) {
        0 => g.below(40) as usize,
        1 => limit.saturating_sub(20) + g.below(300) as usize,
        2 => limit.max(256) + g.below(40) as usize,
        _ => limit * 2 + g.below(30_000) as usize,
    };
    long_string(g, len)
}

/// A payload with long strings at some depth.
fn payload(g: &mut Gen, limit: usize) -> Value {
    match g.below(4) {
        0 => Value::String(some_string(g, limit)),
        1 => json!({"text": some_string(g, limit), "n": g.below(100)}),
        2 => {
            let items: Vec<Value> = (0..g.below(6))
                .map(|i| json!({"id": i, "body": some_string(g, limit)}))
                .collect();
            json!({"items": items, "note": some_string(g, limit)})
        }
        _ => json!([some_string(g, limit), {"deep": [some_string(g, limit)]}]),
    }
}

/// A text block.
fn text(text: String) -> Value {
    json!({"type": "text", "text": text})
}

/// An MCP result, an operations result or a protocol-v1 envelope around long strings.
fn document(g: &mut Gen, limit: usize) -> Value {
    match g.below(8) {
        // One text block: a text payload.
        0 => json!({"content": [text(some_string(g, limit))]}),
        // Several blocks, an image among them.
        1 => json!({"content": [
            text(some_string(g, limit)),
            {"type": "image", "data": "aGVsbG8=".repeat(g.below(200) as usize + 1), "mimeType": "image/png"},
            text(some_string(g, limit)),
        ]}),
        // structuredContent and its mirror (or a mirror that differs from it).
        2 => {
            let structured = payload(g, limit);
            let structured = match structured {
                Value::Object(_) => structured,
                other => json!({"value": other}),
            };
            let mirror = match g.below(3) {
                0 => some_string(g, limit),
                _ => envelope::json::to_string(&structured, envelope::json::Dialect::Js),
            };
            json!({"content": [text(mirror)], "structuredContent": structured})
        }
        // An error result: its text is its message.
        3 => json!({"content": [text(some_string(g, limit))], "isError": true}),
        4 => json!({"data": payload(g, limit), "meta": {"source": "local", "operationId": "op"}}),
        5 => {
            let data = payload(g, limit);
            let structured = match g.below(2) {
                0 => data.clone(),
                _ => payload(g, limit),
            };
            json!({"data": data, "meta": {"source": "mcp", "isError": false, "structuredContent": structured}})
        }
        _ => {
            json!({"version": 1, "status": "ok", "command": "code/impact", "data": payload(g, limit),
                    "meta": {"ts": "2026-07-04T00:00:00Z", "duration_ms": 3, "note": some_string(g, 300)}, "error": null})
        }
    }
}

/// `doc` as text: compact or pretty, and with its non-ASCII characters as `\u` escapes
/// (surrogate pairs for the astral ones) or as they are.
fn spelled(g: &mut Gen, doc: &Value) -> Vec<u8> {
    let text = match g.below(2) {
        0 => serde_json::to_string(doc).unwrap(),
        _ => serde_json::to_string_pretty(doc).unwrap(),
    };
    if g.below(2) == 0 {
        return text.into_bytes();
    }
    // Non-ASCII characters occur in strings only: escaping them all keeps the JSON valid.
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            for unit in c.encode_utf16(&mut [0; 2]) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        }
    }
    out.into_bytes()
}

type Outcome = Result<(Vec<u8>, String), String>;

#[test]
fn strings_read_as_prefixes_give_the_bytes_of_reading_whole() {
    let decode = DecodeOptions::default();
    let mut g = Gen::new(0x10e6_57a1);
    let (mut prefixed, mut cases) = (0, 0);
    for case in 0..600 {
        let limit = [0, 100, 300, 1000, 4000, 16_384][g.below(6) as usize] + g.below(64) as usize;
        let doc = document(&mut g, limit);
        let text = spelled(&mut g, &doc);
        let from = match g.below(2) {
            0 => None,
            _ => envelope::detect(&text).ok().map(|d| d.format),
        };
        let target = match g.below(3) {
            0 => from.unwrap_or(FormatId::Mcp),
            _ => FormatId::ALL[g.below(FormatId::ALL.len() as u64) as usize],
        };
        // The old path, the oracle: the whole document decoded, then cut.
        let whole: Outcome = decode_any(&text, from, &decode)
            .and_then(|(_, env)| fit(&env, target, limit, &options()))
            .map(|f| (f.encoded.bytes, format!("{:?}", f.encoded.losses)))
            .map_err(|e| e.to_string());
        // The pipeline (what `envelope shape --limit` and the proxy run), which reads for
        // the cut where it can; its output must read back as valid, so the oracle's too.
        let whole = whole.and_then(|(bytes, losses)| {
            envelope::validate::check_output_of(&bytes, target, &text)
                .map(|()| (bytes, losses))
                .map_err(|e| e.to_string())
        });
        let piped: Outcome = Pipeline::new(&text)
            .input_format(from)
            .output_format(target)
            .limit(limit)
            .encode_options(options())
            .run()
            .map(|s| {
                prefixed += usize::from(s.skimmed);
                (s.bytes, format!("{:?}", s.losses))
            })
            .map_err(|e| e.to_string());
        cases += 1;
        assert_eq!(
            piped,
            whole,
            "case {case}: limit {limit}, from {from:?} to {target}, input {}",
            String::from_utf8_lossy(&text)
        );
    }
    // The prefix read is exercised, not only the fallback to the whole read.
    assert!(
        prefixed * 4 > cases,
        "{prefixed} of {cases} read for the cut"
    );
}

#[test]
fn a_huge_text_result_is_cut_without_building_its_text() {
    let _serial = heap::serial();
    let size = 24 << 20;
    let mut body = String::with_capacity(size);
    while body.len() < size {
        body.push_str("a line of the log \"quoted\" and é\n");
    }
    let result = serde_json::to_vec(&json!({"content": [text(body)]})).unwrap();
    let limit = 16_384;
    let before = heap::start();
    let shaped = Pipeline::new(&result)
        .input_format(FormatId::Mcp)
        .limit(limit)
        .run()
        .unwrap();
    let peak = heap::peak_since(before);
    assert!(shaped.skimmed, "read for the cut");
    assert!(shaped.bytes.len() <= limit);
    // Whole, the text alone is 24 MiB: a prefix and the cut take a few hundred KiB.
    assert!(
        peak < 2 << 20,
        "peak heap {peak} bytes for a {size}-byte text"
    );
    // The same bytes as the whole read, which does build it.
    let (_, env) = decode_any(&result, Some(FormatId::Mcp), &DecodeOptions::default()).unwrap();
    let whole = fit(&env, FormatId::Mcp, limit, &EncodeOptions::default()).unwrap();
    assert_eq!(shaped.bytes, whole.encoded.bytes);
}
