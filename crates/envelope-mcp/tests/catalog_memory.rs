//! The catalog indexes a large stored result in bounded memory: the stored bytes are read a
//! window at a time and its chunks (two million lines of a 50 MB log) are inserted one at
//! a time, never all held. Measured with a counting allocator (SQLite's own allocations
//! are not Rust's, and not counted: FTS5 flushes its pending terms itself).

#[path = "../../envelope/tests/common/heap.rs"]
mod heap;

use std::sync::Arc;

use envelope_mcp::catalog::query::Terms;
use envelope_mcp::catalog::{Catalog, Job};
use envelope_store::{FileStore, Store};

/// A `git log` of about `size` bytes, as a `CallToolResult` of one text block.
fn log_result(size: usize) -> (String, usize, usize) {
    let mut text = String::with_capacity(size + 128);
    let mut entries = 0;
    while text.len() < size {
        text.push_str(&format!(
            "commit {entries:040x}\nAuthor: Dev <dev{entries}@example.com>\n\n    change number {entries}\n\n"
        ));
        entries += 1;
    }
    // Where the last entry's change line starts (ASCII: bytes are characters).
    let last_line = text.rfind("    change number").unwrap();
    let result = serde_json::json!({"content": [{"type": "text", "text": text}]});
    (result.to_string(), entries, last_line)
}

#[test]
fn a_large_result_is_indexed_holding_its_parse_and_little_more() {
    let _serial = heap::serial();
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> = Arc::new(FileStore::new(dir.path()));
    let (result, entries, last_line) = log_result(8 << 20);
    let digest = store
        .put(result.as_bytes(), "application/json", &[])
        .unwrap()
        .digest;
    let size = result.len();
    drop(result);
    let catalog = Catalog::in_memory().unwrap();

    let before = heap::start();
    catalog.index(Job {
        store: store.clone(),
        digest,
        owner: None,
        tool: "git_log".into(),
        arguments: None,
    });
    catalog.flush();
    let peak = heap::peak_since(before);

    // The parse holds the text, with serde_json's scratch for an escaped string (a `Vec`
    // grown by doubling, then copied into the `String`: up to three times the text for a
    // moment), plus a window of the stored bytes. Before the chunks were streamed and the
    // bytes read in windows, indexing held the bytes, the parse and every chunk: 5.6x here.
    let bound = 3 * size + (6 << 20);
    assert!(
        peak <= bound,
        "indexing {size} bytes held {peak} bytes of heap ({:.2}x; bound {bound})",
        peak as f64 / size as f64
    );

    // And every line was indexed: the last entry's line is found where it is.
    let last = format!("change number {}", entries - 1);
    let found = catalog
        .search(
            None,
            &Terms::parse(&format!("\"{last}\"")).unwrap(),
            None,
            3,
        )
        .unwrap();
    let hit = found.hits.first().expect("the last line is indexed");
    assert_eq!(hit.pointer, "/content/0/text");
    assert_eq!(hit.offset, last_line, "where envelope_read reads on");
    assert!(hit.marked.contains("number"), "{:?}", hit.marked);
}
