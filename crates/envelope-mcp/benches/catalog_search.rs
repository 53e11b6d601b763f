//! `envelope_search` over 100 MB of stored text (issue 28: p50 <= 20 ms).
//!
//! `cargo bench -p envelope-mcp --bench catalog_search [-- MEGABYTES RESULTS ROUNDS]`
//!
//! Stores RESULTS text results (default 200) of MEGABYTES in all (default 100) in a folder
//! store, as the proxy does, and indexes them in its catalog (a file beside the store); then
//! answers `envelope_search` calls (the whole tool: the query parsed, FTS5 with BM25, the
//! lines around each hit, the store asked whether each hit's result is still there, the
//! answer fitted to 16 KiB) for words of every frequency, ROUNDS times each (default 5)
//! after a warm-up. The words follow Zipf's law (a word of rank k is about 1/k as frequent
//! as the first), as words in logs and documents do.
//!
//! Prints the indexing time, the catalog's size, and p50/p90/max per query class, twice in
//! the same run: with every match ranked (as before issue 28's rank cap) and with the cap
//! (and how many answers ranked only a part of their matches).

use std::sync::Arc;
use std::time::{Duration, Instant};

use envelope_mcp::catalog::tools::{Caller, call_search};
use envelope_mcp::catalog::{Catalog, Job, RANK_CAP};
use envelope_store::{FileStore, Store};
use serde_json::json;

/// The vocabulary's size.
const WORDS: usize = 20_000;

fn main() {
    let numbers: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let megabytes = numbers.first().copied().unwrap_or(100);
    let results = numbers.get(1).copied().unwrap_or(200);
    let rounds = numbers.get(2).copied().unwrap_or(5);

    let dir = std::env::temp_dir().join(format!("envelope-catalog-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let store: Arc<dyn Store> = Arc::new(FileStore::new(&dir));
    let catalog = Catalog::for_store(dir.to_str().unwrap()).unwrap();

    let per_result = megabytes * 1_000_000 / results;
    let mut random = Random(0x9e37_79b9_7f4a_7c15);
    let mut text_bytes = 0;
    let mut lines = 0;
    let started = Instant::now();
    for r in 0..results {
        let mut text = String::with_capacity(per_result + 200);
        while text.len() < per_result {
            let i = lines;
            text.push_str(&format!(
                "2026-11-27T12:{:02}:{:02} {} svc-{} request {i}",
                (i / 60) % 60,
                i % 60,
                ["INFO", "WARN", "DEBUG", "ERROR"][random.below(4)],
                r % 50
            ));
            for _ in 0..6 {
                text.push(' ');
                text.push_str(&word(random.zipf()));
            }
            text.push('\n');
            lines += 1;
        }
        text_bytes += text.len();
        let result = json!({"content": [{"type": "text", "text": text}]}).to_string();
        let digest = store
            .put(result.as_bytes(), "application/json", &[])
            .unwrap()
            .digest;
        catalog.index(Job {
            store: store.clone(),
            digest,
            owner: None,
            tool: "read_file".into(),
            arguments: Some(format!("{{\"path\": \"/logs/{r}.log\"}}").into_bytes()),
            held: None,
        });
    }
    let queued = started.elapsed();
    catalog.flush();
    let indexed = started.elapsed();
    let size: u64 = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("catalog.sqlite3")
        })
        .map(|e| e.metadata().map_or(0, |m| m.len()))
        .sum();
    println!(
        "stored {results} results, {:.1} MB of text, {lines} lines; generated and queued in {:.1} s, indexed in {:.1} s; catalog {:.1} MB",
        text_bytes as f64 / 1e6,
        queued.as_secs_f64(),
        indexed.as_secs_f64(),
        size as f64 / 1e6
    );

    let caller = Caller {
        catalog: &catalog,
        store: store.as_ref(),
        owner: None,
    };
    let classes: Vec<(&str, Vec<String>)> = vec![
        (
            "rare word (rank 5,000-20,000)",
            (0..20).map(|i| word(5_000 + i * 750)).collect(),
        ),
        (
            "medium word (rank 200-2,000)",
            (0..20).map(|i| word(200 + i * 90)).collect(),
        ),
        (
            "two words",
            (0..20)
                .map(|i| format!("{} {}", word(50 + i), word(300 + i * 7)))
                .collect(),
        ),
        (
            "phrase of two",
            (0..20).map(|i| format!("\"svc-{} request\"", i)).collect(),
        ),
        (
            "prefix*",
            (0..20)
                .map(|i| format!("{}*", &word(1000 + i * 13)[..4]))
                .collect(),
        ),
        ("no hit", (0..20).map(|i| format!("zzqx{i}")).collect()),
        ("common word (rank 1-20)", (0..20).map(word).collect()),
    ];
    // Each class twice in the same run: every match ranked (as before the cap), then as
    // the catalog answers now (at most RANK_CAP lines ranked).
    for (label, cap) in [
        ("before: all matches ranked", usize::MAX),
        ("after: rank cap", RANK_CAP),
    ] {
        catalog.set_rank_cap(cap);
        println!(
            "-- {label} ({})",
            if cap == usize::MAX {
                "no cap".to_string()
            } else {
                format!("{cap} lines")
            }
        );
        let mut all = Vec::new();
        let mut all_sampled = 0;
        for (class, queries) in &classes {
            let mut times = Vec::new();
            let mut sampled = 0;
            for round in 0..=rounds {
                for query in queries {
                    let arguments = json!({"query": query, "limit": 10});
                    let at = Instant::now();
                    let answer = call_search(&arguments, &caller, 16 * 1024);
                    let took = at.elapsed();
                    assert!(answer.get("isError").is_none(), "{query}: {answer}");
                    // Round 0 warms the page cache and SQLite's.
                    if round > 0 {
                        times.push(took);
                        sampled += usize::from(answer["structuredContent"].get("ranked").is_some());
                    }
                }
            }
            if !class.starts_with("common") {
                all.extend(times.iter().copied());
                all_sampled += sampled;
            }
            report(class, &mut times, sampled);
        }
        report("all but common words", &mut all, all_sampled);
    }
    std::fs::remove_dir_all(&dir).ok();
}

fn report(class: &str, times: &mut [Duration], sampled: usize) {
    times.sort();
    let at = |q: f64| times[((times.len() - 1) as f64 * q) as usize].as_secs_f64() * 1e3;
    println!(
        "{class:32} n={:4}  p50 {:8.2} ms  p90 {:8.2} ms  max {:8.2} ms  ranked a part: {sampled}",
        times.len(),
        at(0.5),
        at(0.9),
        at(1.0)
    );
}

/// The word of rank `k`: a pronounceable made-up word, distinct for each rank.
fn word(k: usize) -> String {
    const SYLLABLES: [&str; 32] = [
        "ka", "lo", "mi", "nu", "pe", "ra", "si", "to", "vu", "we", "ya", "zo", "ba", "de", "fi",
        "go", "hu", "ji", "ke", "la", "mo", "ne", "pi", "qu", "ru", "se", "ti", "vo", "xa", "ze",
        "cho", "sha",
    ];
    let mut n = k + 32;
    let mut out = String::new();
    while n > 0 {
        out.push_str(SYLLABLES[n % 32]);
        n /= 32;
    }
    out
}

/// A small deterministic generator (xorshift64*).
struct Random(u64);

impl Random {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// A rank from 0 to WORDS - 1, rank k about 1/(k+1) as likely as rank 0 (log-uniform).
    fn zipf(&mut self) -> usize {
        let u = (self.next() >> 11) as f64 / (1u64 << 53) as f64;
        ((WORDS as f64 + 1.0).powf(u) - 1.0) as usize
    }
}
