//! Decode and encode of every format at 1 KiB, 1 MiB and 16 MiB, each as a ratio to
//! serde_json parsing / serializing the same payload in the same run, plus the base64 leg of
//! tool-envelope-v1 in GB/s.
//!
//! Run: `cargo bench -p envelope --bench codecs` (prints a markdown table).
//! A ratio of 1.30 means the codec took 1.3 times as long as serde_json on the payload alone.

#[path = "common/timing.rs"]
mod timing;

use std::time::Duration;

use envelope::{DecodeOptions, EncodeOptions, Envelope, FormatId, decode, encode};
use serde_json::{Value, json};

/// A ctxo-style payload of about `size` bytes: `{"results": [records…]}`.
fn payload(size: usize) -> Value {
    let mut items = Vec::new();
    let mut total = 14;
    let mut i = 0u64;
    while total < size {
        let item = json!({
            "symbolId": format!("src/module_{}/file.ts::function_{i}", i % 97),
            "kind": "function",
            "line": i * 7 % 5000,
            "score": (i % 1000) as f64 / 7.0,
            "exported": i.is_multiple_of(3),
            "tags": ["hot", "käse", "✓"],
        });
        total += item.to_string().len() + 1;
        items.push(item);
        i += 1;
    }
    json!({ "results": items })
}

/// The median time of `f` (see `timing::median_time`).
fn time<T>(budget: Duration, f: impl FnMut() -> T) -> Duration {
    timing::median_time(budget, 3, f)
}

fn main() {
    // `cargo bench` passes `--bench`; anything else is a filter we do not support.
    let budget = Duration::from_millis(400);
    let options = EncodeOptions {
        ctxo_limit: Some(usize::MAX),
        now: Some("2026-07-04T00:00:00Z".into()),
        ..EncodeOptions::default()
    };
    println!("| payload | format | decode ratio | encode ratio | decode MB/s | encode MB/s |");
    println!("|---|---|---|---|---|---|");
    for (label, size) in [("1 KiB", 1 << 10), ("1 MiB", 1 << 20), ("16 MiB", 16 << 20)] {
        let value = payload(size);
        let raw = serde_json::to_vec(&value).unwrap();
        let mb = raw.len() as f64 / 1e6;
        let base_parse = time(budget, || serde_json::from_slice::<Value>(&raw).unwrap());
        let base_write = time(budget, || serde_json::to_vec(&value).unwrap());
        let env = Envelope {
            tool: Some("bench".into()),
            summary: Some("summary".into()),
            ..Envelope::ok(value.clone())
        };
        for format in FormatId::ALL {
            let doc = encode(format, &env, &options).unwrap().bytes;
            let decoded = decode(format, &doc, &DecodeOptions::default()).unwrap();
            let dec = time(budget, || {
                decode(format, &doc, &DecodeOptions::default()).unwrap()
            });
            let enc = time(budget, || encode(format, &decoded, &options).unwrap());
            println!(
                "| {label} | {format} | {:.2} | {:.2} | {:.0} | {:.0} |",
                dec.as_secs_f64() / base_parse.as_secs_f64(),
                enc.as_secs_f64() / base_write.as_secs_f64(),
                mb / dec.as_secs_f64(),
                mb / enc.as_secs_f64(),
            );
        }
        println!(
            "| {label} | (serde_json baseline) | {:.1} ms parse | {:.1} ms write | {:.0} | {:.0} |",
            base_parse.as_secs_f64() * 1e3,
            base_write.as_secs_f64() * 1e3,
            mb / base_parse.as_secs_f64(),
            mb / base_write.as_secs_f64(),
        );
    }

    // The base64 leg of tool-envelope-v1 on 16 MiB of JSON text.
    let raw = serde_json::to_vec(&payload(16 << 20)).unwrap();
    let encoded = envelope::base64::encode(&raw);
    let gb = |bytes: usize, d: Duration| bytes as f64 / 1e9 / d.as_secs_f64();
    let enc = time(budget, || envelope::base64::encode(&raw));
    let dec_strict = time(budget, || {
        envelope::base64::decode_strict(encoded.as_bytes()).unwrap()
    });
    let dec_lenient = time(budget, || {
        envelope::base64::decode_lenient(encoded.as_bytes())
    });
    println!();
    println!("| base64 (16 MiB input) | GB/s of raw bytes |");
    println!("|---|---|");
    println!("| encode | {:.2} |", gb(raw.len(), enc));
    println!("| decode strict | {:.2} |", gb(raw.len(), dec_strict));
    println!(
        "| decode lenient (Node rules) | {:.2} |",
        gb(raw.len(), dec_lenient)
    );
}
