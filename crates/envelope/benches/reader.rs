//! The pull reader (`json::reader::Reader`, the core's one JSON scanner) over whole
//! documents, as a ratio to serde_json checking the same bytes (`IgnoredAny`: no value
//! built) in the same run, and in MB/s.
//!
//! Run: `cargo bench -p envelope --bench reader` (prints a markdown table).
//! A ratio of 1.30 means the reader took 1.3 times as long as serde_json's check.

#[path = "common/timing.rs"]
mod timing;

use std::hint::black_box;
use std::time::Duration;

use envelope::json::reader::{Event, Reader};
use serde_json::json;

/// The median time of `f` (see `timing::median_time`).
fn time<T>(budget: Duration, f: impl FnMut() -> T) -> Duration {
    timing::median_time(budget, 3, f)
}

/// Every event of `input`, strings read as written (not decoded): what a stage that looks
/// at every value pays.
fn read_all(input: &[u8]) -> usize {
    let mut reader = Reader::new(input);
    let mut events = 0;
    while let Some(event) = reader.next().expect("valid JSON") {
        if let Event::String(s) = event {
            black_box(s.raw());
        }
        events += 1;
    }
    events
}

/// An MCP result of one text block of log lines (a `\n` escape every 60-odd bytes).
fn log_result(size: usize) -> Vec<u8> {
    let mut log = String::with_capacity(size);
    let mut i = 0u64;
    while log.len() < size {
        log.push_str(&format!(
            "2026-11-28T00:00:{:02}Z INFO request {i} served in {} ms\n",
            i % 60,
            i % 977
        ));
        i += 1;
    }
    serde_json::to_vec(&json!({"content": [{"type": "text", "text": log}]})).unwrap()
}

/// `structuredContent` of records, with non-ASCII text in each.
fn records_result(size: usize) -> Vec<u8> {
    let mut rows = Vec::new();
    let mut total = 0;
    let mut i = 0u64;
    while total < size {
        let row = json!({"id": i, "name": format!("item {i} — käse"), "score": i as f64 / 7.0, "ok": i.is_multiple_of(3)});
        total += row.to_string().len() + 1;
        rows.push(row);
        i += 1;
    }
    serde_json::to_vec(&json!({"content": [], "structuredContent": {"rows": rows}})).unwrap()
}

fn main() {
    let budget = Duration::from_millis(1500);
    println!("| document | MB | reader ms | serde_json check ms | ratio | reader MB/s |");
    println!("|---|---|---|---|---|---|");
    for (label, doc) in [
        ("one text block of log lines", log_result(50 << 20)),
        ("structuredContent of records", records_result(16 << 20)),
    ] {
        let mb = doc.len() as f64 / 1e6;
        let base = time(budget, || {
            serde_json::from_slice::<serde::de::IgnoredAny>(&doc).unwrap()
        });
        let ours = time(budget, || read_all(&doc));
        println!(
            "| {label} | {mb:.1} | {:.1} | {:.1} | {:.2} | {:.0} |",
            ours.as_secs_f64() * 1e3,
            base.as_secs_f64() * 1e3,
            ours.as_secs_f64() / base.as_secs_f64(),
            mb / ours.as_secs_f64()
        );
    }
}
