//! `envelope_read` on large stored results: one window at a random place, and paging a
//! whole text back, through the paging index and through a whole read of the artifact.
//!
//! `cargo bench -p envelope-mcp --bench paging [-- MB CALLS]` (default 100 MB, 200 calls)
//!
//! Two artifacts of about MB megabytes each, as the proxy stores them: records in
//! `structuredContent.rows`, and one long text block (log lines). The first `envelope_read`
//! of each builds its index (the proxy builds it when it stores the result; it is timed on
//! its own); then CALLS windows at random offsets are read (p50, p99). The whole read (what
//! every call cost before the index) is timed on a few calls, in the same run. Last, a
//! 5 MB text is paged back from start to end with `next_offset`, as a model reads on.

use std::time::{Duration, Instant};

use envelope_mcp::drill::{artifact_uri, call_read, call_read_whole};
use envelope_store::{FileStore, Store};
use serde_json::json;

/// The proxy's default limit.
const LIMIT: usize = 16384;

fn main() {
    let numbers: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let megabytes = numbers.first().copied().unwrap_or(100);
    let calls = numbers.get(1).copied().unwrap_or(200);
    let root = std::env::temp_dir().join(format!("envelope-paging-bench-{}", std::process::id()));
    let store = FileStore::new(&root);

    let rows = rows_result(megabytes << 20);
    let text = text_result(megabytes << 20);
    for (name, result, pointer, total) in [
        ("rows", rows.0, "/structuredContent/rows", rows.1),
        ("text", text.0, "/content/0/text", text.1),
    ] {
        let digest = store.put(&result, "application/json", &[]).unwrap().digest;
        let uri = artifact_uri(&digest);
        drop(result);
        let read = |offset: usize| {
            let answer = call_read(
                &json!({"uri": uri, "pointer": pointer, "offset": offset}),
                &store,
                LIMIT,
            );
            assert!(answer.get("isError").is_none(), "{answer}");
            answer
        };
        let started = Instant::now();
        read(0);
        let first = started.elapsed();
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        let mut times = Vec::with_capacity(calls);
        for _ in 0..calls {
            let offset = (next(&mut seed) % total as u64) as usize;
            let started = Instant::now();
            read(offset);
            times.push(started.elapsed());
        }
        // The whole read, as every call was before the index: a few calls.
        let whole: Vec<Duration> = (0..3)
            .map(|_| {
                let offset = (next(&mut seed) % total as u64) as usize;
                let started = Instant::now();
                let answer = call_read_whole(
                    &json!({"uri": uri, "pointer": pointer, "offset": offset}),
                    &store,
                    LIMIT,
                );
                assert_eq!(answer, read(offset), "the two reads differ");
                started.elapsed()
            })
            .collect();
        println!(
            "{name}: {megabytes} MB, {total} items/chars; first read (index built) {:.0} ms; \
             paged p50 {:.3} ms p99 {:.3} ms; whole read p50 {:.0} ms ({:.0}x the paged p50)",
            ms(first),
            ms(percentile(&mut times, 50)),
            ms(percentile(&mut times, 99)),
            ms(percentile(&mut whole.clone(), 50)),
            percentile(&mut whole.clone(), 50).as_secs_f64()
                / percentile(&mut times, 50).as_secs_f64(),
        );
    }

    // Paging a 5 MB text back, start to end, as a model reads on.
    let (result, _) = text_result(5 << 20);
    let digest = store.put(&result, "application/json", &[]).unwrap().digest;
    let uri = artifact_uri(&digest);
    let started = Instant::now();
    let mut offset = Some(0u64);
    let mut calls = 0;
    let mut chars = 0;
    while let Some(at) = offset {
        let answer = call_read(
            &json!({"uri": uri, "pointer": "/content/0/text", "offset": at}),
            &store,
            LIMIT,
        );
        let structured = &answer["structuredContent"];
        chars += structured["text"].as_str().unwrap().chars().count();
        offset = structured["next_offset"].as_u64();
        calls += 1;
    }
    println!(
        "paging 5 MB of text back: {calls} calls, {chars} characters, {:.0} ms in all (index built on the first call)",
        ms(started.elapsed())
    );
    std::fs::remove_dir_all(&root).ok();
}

/// A result of about `size` bytes: records in `structuredContent.rows`, a short text.
fn rows_result(size: usize) -> (Vec<u8>, usize) {
    let mut rows = Vec::new();
    let mut bytes = 0;
    while bytes < size {
        let row = json!({"id": rows.len(), "name": format!("file-{}.rs", rows.len()), "size": rows.len() * 37 % 100_000, "kind": "file", "modified": "2026-11-28T04:00:00Z"});
        bytes += row.to_string().len() + 1;
        rows.push(row);
    }
    let total = rows.len();
    let result = json!({"content": [{"type": "text", "text": format!("{total} rows")}], "structuredContent": {"rows": rows}});
    (serde_json::to_vec(&result).unwrap(), total)
}

/// A result of about `size` bytes: one text block of log lines (quotes and tabs escaped).
fn text_result(size: usize) -> (Vec<u8>, usize) {
    let mut text = String::with_capacity(size);
    let mut line = 0;
    while text.len() < size {
        text.push_str(&format!(
            "2026-11-28T04:{:02}:{:02}Z\tINFO\trequest {line} served \"GET /api/items/{line}\" in {} ms — ok\n",
            line / 60 % 60,
            line % 60,
            line % 997
        ));
        line += 1;
    }
    let total = text.chars().count();
    let result = json!({"content": [{"type": "text", "text": text}]});
    (serde_json::to_vec(&result).unwrap(), total)
}

fn next(seed: &mut u64) -> u64 {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    *seed
}

fn percentile(times: &mut [Duration], p: usize) -> Duration {
    times.sort();
    times[(times.len() * p / 100).min(times.len() - 1)]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}
