//! A 10 MB `tools/call` result shaped to 16 KiB, against one `serde_json::from_slice` of
//! it (the baseline, measured in the same run): time with criterion, peak memory with
//! `ENVELOPE_BENCH_RSS`.
//!
//! Two results: `text`, one text block of log lines (a long `git_log`, a big file), and
//! `structured`, 10 MB of rows in `structuredContent` with its text mirror (a
//! `directory_tree`). Shaping runs as the proxy runs it: redaction on, a file store in a
//! temporary folder.
//!
//! ```text
//! cargo bench -p envelope-mcp --bench shaping                 # time
//! ENVELOPE_BENCH_RSS=shape:text cargo bench -p envelope-mcp --bench shaping   # memory
//! ```
//!
//! With `ENVELOPE_BENCH_RSS=OP:RESULT` (OP `parse` or `shape`), the bench builds the result,
//! resets the process's peak RSS (`/proc/self/clear_refs`), runs OP once and prints the
//! peak RSS the operation added, divided by the result's size. `ENVELOPE_BENCH_SIZE=BYTES`
//! sets the result's size there (10 MB by default; `200000000` for one huge line):
//!
//! ```text
//! ENVELOPE_BENCH_RSS=shape:text ENVELOPE_BENCH_SIZE=200000000 cargo bench -p envelope-mcp --bench shaping
//! ```

use std::hint::black_box;

use criterion::{BatchSize, Criterion, Throughput};
use envelope_mcp::revision::Revision;
use envelope_mcp::shaping::{CallContext, ToolSettings, shape_result};
use serde_json::Value;

const SIZE: usize = 10_000_000;
const LIMIT: usize = 16 * 1024;

fn text_result(size: usize) -> Vec<u8> {
    let mut log = String::with_capacity(size + 200);
    let mut i = 0;
    while log.len() < size {
        log.push_str(&format!(
            "commit {i:040x}\nAuthor: Dev <dev@example.com>\nDate: Mon Jan 1 00:00:00 2026\n\n    change number {i}\n\n"
        ));
        i += 1;
    }
    let text = serde_json::to_string(&log).unwrap();
    drop(log);
    format!(r#"{{"content":[{{"type":"text","text":{text}}}]}}"#).into_bytes()
}

fn structured_result(size: usize) -> Vec<u8> {
    // Written as text, not built as values: the memory measurement must not start with a
    // heap full of freed nodes the parse would reuse.
    let mut rows = String::from("{\"entries\":[");
    let mut i = 0;
    // The mirror doubles the bytes: each channel holds half.
    while rows.len() < size / 2 {
        if i > 0 {
            rows.push(',');
        }
        rows.push_str(&format!(
            r#"{{"name":"file_{i}.rs","type":"file","path":"src/module_{}/file_{i}.rs"}}"#,
            i % 97
        ));
        i += 1;
    }
    rows.push_str("]}");
    let mirror = serde_json::to_string(&rows).unwrap();
    format!(r#"{{"content":[{{"type":"text","text":{mirror}}}],"structuredContent":{rows}}}"#)
        .into_bytes()
}

fn result(name: &str, size: usize) -> Vec<u8> {
    match name {
        "text" => text_result(size),
        "structured" => structured_result(size),
        other => panic!("unknown result {other:?} (text or structured)"),
    }
}

/// Shapes `input` as the proxy does, into a store under `dir`.
fn shape(input: &[u8], dir: &std::path::Path) -> usize {
    let store = envelope_store::FileStore::new(dir);
    let call = CallContext::new("bench", None, Revision::V2025_11_25);
    let settings = ToolSettings {
        limit: LIMIT,
        ..ToolSettings::default()
    };
    let outcome = shape_result(input, &call, &settings, &store).unwrap();
    assert!(outcome.bytes.len() <= LIMIT && outcome.stored.is_some());
    outcome.bytes.len()
}

fn status_kib(key: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with(key)).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// One operation's peak RSS above what the process held before it.
fn rss(spec: &str) {
    let (op, name) = spec.split_once(':').expect("OP:RESULT");
    let size = match std::env::var("ENVELOPE_BENCH_SIZE") {
        Ok(size) => size
            .parse()
            .expect("ENVELOPE_BENCH_SIZE: a number of bytes"),
        Err(_) => SIZE,
    };
    let input = result(name, size);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write("/proc/self/clear_refs", "5").expect("resetting the peak RSS");
    let before = status_kib("VmRSS:");
    match op {
        "parse" => {
            let v: Value = serde_json::from_slice(&input).unwrap();
            black_box(&v);
        }
        "shape" => {
            black_box(shape(&input, dir.path()));
        }
        other => panic!("unknown op {other:?} (parse or shape)"),
    }
    let added = status_kib("VmHWM:").saturating_sub(before) * 1024;
    println!(
        "rss {op} {name}: input {} bytes, peak added {} bytes, {:.2}x the input",
        input.len(),
        added,
        added as f64 / input.len() as f64
    );
}

fn main() {
    if let Ok(spec) = std::env::var("ENVELOPE_BENCH_RSS") {
        rss(&spec);
        return;
    }
    let mut c = Criterion::default()
        .sample_size(10)
        .warm_up_time(std::time::Duration::from_secs(1))
        .measurement_time(std::time::Duration::from_secs(8))
        .configure_from_args();
    for name in ["text", "structured"] {
        let input = result(name, SIZE);
        let dir = tempfile::tempdir().unwrap();
        let mut group = c.benchmark_group(format!("10MB-{name}"));
        group.throughput(Throughput::Bytes(input.len() as u64));
        group.bench_function("serde_json::from_slice", |b| {
            b.iter(|| serde_json::from_slice::<Value>(black_box(&input)).unwrap())
        });
        // What the redaction pass alone takes (its regular expressions over every string).
        group.bench_function("redact_json_text", |b| {
            b.iter(|| {
                envelope::shape::redact::redact_json_text(black_box(&input), "result")
                    .unwrap()
                    .report
                    .len()
            })
        });
        // The same result again and again: after the first round it is in the store already.
        group.bench_function("shape_result 16KiB", |b| {
            b.iter(|| shape(black_box(&input), dir.path()))
        });
        // A result the store has not seen: an empty store each round (made and removed
        // outside the timing).
        group.bench_function("shape_result 16KiB, new store", |b| {
            b.iter_batched(
                || tempfile::tempdir().unwrap(),
                |dir| (shape(black_box(&input), dir.path()), dir),
                BatchSize::PerIteration,
            )
        });
        group.finish();
    }
    c.final_summary();
}
pub fn result_pub(name: &str, size: usize) -> Vec<u8> {
    result(name, size)
}
pub fn shape_pub(input: &[u8], dir: &std::path::Path) -> usize {
    shape(input, dir)
}
