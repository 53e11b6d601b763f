//! The catalog indexes a large stored result in bounded memory: it is read with the pull
//! reader (never parsed whole), its chunks (two million lines of a 50 MB log) are inserted
//! one at a time, never all held, and the JSON a text block holds is described, not parsed.
//! Measured with a counting allocator (SQLite's own allocations are not Rust's, and not
//! counted: FTS5 flushes its pending terms itself).

#[path = "../../envelope/tests/common/heap.rs"]
mod heap;

use std::sync::Arc;

use envelope_mcp::catalog::query::Terms;
use envelope_mcp::catalog::{Catalog, Job};
use envelope_store::{FileStore, Store};
use serde_json::json;

/// A catalog that indexed `result` (a stored `CallToolResult`), and the most heap the
/// indexing held, as a multiple of the result's size.
fn indexed(result: String) -> (Catalog, f64, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> = Arc::new(FileStore::new(dir.path()));
    let digest = store
        .put(result.as_bytes(), "application/json", &[])
        .unwrap()
        .digest;
    let size = result.len();
    drop(result);
    let catalog = Catalog::in_memory().unwrap();

    let before = heap::start();
    catalog.index(Job {
        store,
        digest,
        owner: None,
        tool: "tool".into(),
        arguments: None,
        held: None,
    });
    catalog.flush();
    let peak = heap::peak_since(before) as f64 / size as f64;
    eprintln!("indexing {size} bytes held {peak:.2}x");
    (catalog, peak, dir)
}

/// Indexing holds the stored bytes (read whole: `Store::get` checks them against their
/// digest) and one text block decoded at a time, or one item of `structuredContent` parsed
/// at a time: twice the result at most, and a little.
const BOUND: f64 = 2.25;

/// A log text is read in pieces, a line at a time: the stored bytes and little more.
const LOG_BOUND: f64 = 1.25;

#[test]
fn a_large_log_is_indexed_holding_its_parse_and_little_more() {
    let _serial = heap::serial();
    let mut text = String::new();
    let mut entries = 0;
    while text.len() < 8 << 20 {
        text.push_str(&format!(
            "commit {entries:040x}\nAuthor: Dev <dev{entries}@example.com>\n\n    change number {entries}\n\n"
        ));
        entries += 1;
    }
    // Where the last entry's change line starts (ASCII: bytes are characters).
    let last_line = text.rfind("    change number").unwrap();
    let result = json!({"content": [{"type": "text", "text": text}]}).to_string();

    let (catalog, peak, _dir) = indexed(result);
    // Before the chunks were streamed and the result read with the pull reader: 5.6x;
    // before its lines were read in pieces (the text decoded whole): 2.0x. Now the stored
    // bytes and one line at a time.
    assert!(peak <= LOG_BOUND, "indexing held {peak:.2}x the result");

    // Every line was indexed: the last entry's line is found where it is.
    let last = format!("\"change number {}\"", entries - 1);
    let found = catalog
        .search(None, &Terms::parse(&last).unwrap(), None, 3)
        .unwrap();
    let hit = found.hits.first().expect("the last line is indexed");
    assert_eq!(hit.pointer, "/content/0/text");
    assert_eq!(hit.offset, last_line, "where envelope_read reads on");
}

#[test]
fn a_large_json_text_is_summarized_without_being_parsed() {
    let _serial = heap::serial();
    let rows: Vec<_> = (0..80_000)
        .map(|i| json!({"id": i, "name": format!("item {i}"), "score": i as f64 * 0.25, "path": format!("src/file_{i}.rs")}))
        .collect();
    let text = json!({"total": rows.len(), "rows": rows}).to_string();
    drop(rows);
    let result = json!({"content": [{"type": "text", "text": text}]}).to_string();

    let (catalog, peak, _dir) = indexed(result);
    // Before, the text's JSON was parsed for the summary: 12.0x.
    assert!(peak <= BOUND, "indexing held {peak:.2}x the result");

    let (listed, total) = catalog.list(None, 10, 0).unwrap();
    assert_eq!(total, 1);
    assert_eq!(listed[0].kind, "records");
    assert_eq!(
        listed[0].summary,
        "80000 records in rows, fields: id, name, score, path"
    );
}

#[test]
fn structured_content_and_its_mirror_are_indexed_without_being_parsed() {
    let _serial = heap::serial();
    let rows: Vec<_> = (0..40_000)
        .map(|i| json!({"id": i, "name": format!("item {i}"), "score": i as f64 * 0.25, "path": format!("src/file_{i}.rs")}))
        .collect();
    let structured = json!({"total": rows.len(), "rows": rows});
    let result = json!({
        "content": [{"type": "text", "text": structured.to_string()}],
        "structuredContent": structured,
    })
    .to_string();
    drop(structured);

    let (catalog, peak, _dir) = indexed(result);
    // Before, the result and the mirror were both parsed: 12.6x.
    assert!(peak <= BOUND, "indexing held {peak:.2}x the result");

    let (listed, _) = catalog.list(None, 10, 0).unwrap();
    assert_eq!(
        listed[0].summary,
        "40000 records in rows, fields: id, name, score, path"
    );
    // Each record is an item (the mirror is not indexed again).
    let found = catalog
        .search(None, &Terms::parse("\"item 39999\"").unwrap(), None, 5)
        .unwrap();
    let pointers: Vec<(&str, usize)> = found
        .hits
        .iter()
        .map(|h| (h.pointer.as_str(), h.offset))
        .collect();
    assert_eq!(pointers, [("/structuredContent/rows", 39_999)]);
}
