//! What a token limit costs beside a byte limit (issue 30: at most 2x): the same documents
//! shaped by `Pipeline` with `--limit B` and with `--limit-tokens T` (T = B / 4, about the
//! same output), timed in the same run, interleaved, the median of many rounds each.
//!
//! `cargo bench -p envelope --bench token_budget` (add `-- 1` for a quick round).

use std::time::{Duration, Instant};

use envelope::shape::Pipeline;
use envelope::tokens::Tokenizer;
use serde_json::json;

/// A document and what it is: records (arrays cut), one long text, nested strings.
fn documents() -> Vec<(&'static str, Vec<u8>)> {
    let rows: Vec<_> = (0..20_000)
        .map(|i| json!({"id": i, "name": format!("item {i}"), "note": "lorem ipsum dolor sit amet, consectetur adipiscing elit", "price": i as f64 / 8.0}))
        .collect();
    let records = json!({"content": [], "structuredContent": {"rows": rows}});
    let prose = "The quick brown fox jumps over the lazy dog. Съешь же ещё этих мягких булок. 我能吞下玻璃而不伤身体。\n";
    let text = json!({"content": [{"type": "text", "text": prose.repeat(12_000)}]});
    let nested = json!({"data": {"pages": (0..2_000).map(|i| json!({"title": format!("page {i}"), "body": prose.repeat(4)})).collect::<Vec<_>>()}, "meta": {"source": "local", "operationId": "bench.pages"}});
    vec![
        ("MCP records, 1.9 MB", serde_json::to_vec(&records).unwrap()),
        ("MCP long text, 1.4 MB", serde_json::to_vec(&text).unwrap()),
        (
            "operations nested, 1.0 MB",
            serde_json::to_vec(&nested).unwrap(),
        ),
    ]
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn main() {
    let rounds: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(15);
    let o200k = Tokenizer::by_name("o200k_base").expect("known");
    println!("document | limit | byte limit | token limit | ratio");
    for (what, document) in documents() {
        for bytes in [4_096usize, 16_384, 65_536] {
            let tokens = bytes / 4;
            let by_bytes = || Pipeline::new(&document).limit(bytes).run().unwrap();
            let by_tokens = || {
                Pipeline::new(&document)
                    .limit_tokens(tokens, &o200k)
                    .run()
                    .unwrap()
            };
            // Warm up both (the tokenizer's vocabulary loads once).
            let (b, t) = (by_bytes(), by_tokens());
            assert!(b.bytes.len() <= bytes);
            let text = String::from_utf8(t.bytes).unwrap();
            assert!(o200k.count(&text) <= tokens);
            let (mut byte_times, mut token_times) = (Vec::new(), Vec::new());
            for _ in 0..rounds {
                let start = Instant::now();
                std::hint::black_box(by_bytes());
                byte_times.push(start.elapsed());
                let start = Instant::now();
                std::hint::black_box(by_tokens());
                token_times.push(start.elapsed());
            }
            let (b, t) = (median(byte_times), median(token_times));
            println!(
                "{what} | {bytes} B / {tokens} tokens | {:.2} ms | {:.2} ms | {:.2}x",
                b.as_secs_f64() * 1e3,
                t.as_secs_f64() * 1e3,
                t.as_secs_f64() / b.as_secs_f64()
            );
        }
    }
}
