//! Shaping benchmarks (issue 3), each against a baseline measured in the same run, shared by
//! two bench binaries that differ only in their global allocator: `shaping` (the system's,
//! what a library user gets by default) and `shaping_mimalloc` (the `envelope` CLI's).
//!
//! Run: `cargo bench -p envelope --bench shaping --bench shaping_mimalloc` (markdown tables).
//!
//! 1. A 10,000-item ctxo-style payload (~2.2 MB) cut to 8 KiB, by the hard budget and by the
//!    ctxo compat truncation, against the reference's algorithm (a binary search that
//!    re-serializes the whole payload per probe) and against one plain serde_json
//!    serialization (the floor: reporting totalBytes needs one pass over the payload).
//!    Both from an in-memory value (library API) and from JSON text (the CLI path).
//! 2. Offload of 100 MB into the file store against raw SHA-256 of the same bytes.

use std::hint::black_box;
use std::time::{Duration, Instant};

use envelope::convert::convert;
use envelope::formats::decode_any;
use envelope::shape::bounded::{self, Decoded};
use envelope::shape::offload::{OffloadOptions, offload};
use envelope::{DecodeOptions, EncodeOptions, Envelope, FormatId, Payload};
use envelope_store::{Digest, FileStore, Store, StoreSink};
use serde_json::{Map, Value, json};

fn time<T>(budget: Duration, mut f: impl FnMut() -> T) -> Duration {
    let mut samples = Vec::new();
    let start = Instant::now();
    while samples.len() < 5 || (start.elapsed() < budget && samples.len() < 100) {
        let t = Instant::now();
        black_box(f());
        samples.push(t.elapsed());
    }
    samples.sort();
    samples[samples.len() / 2]
}

/// Medians of `N` functions run in turn, round after round.
fn interleaved<const N: usize>(budget: Duration, mut fs: [&mut dyn FnMut(); N]) -> [Duration; N] {
    let mut samples: [Vec<Duration>; N] = std::array::from_fn(|_| Vec::new());
    let start = Instant::now();
    while samples[0].len() < 5 || (start.elapsed() < budget && samples[0].len() < 200) {
        for (f, s) in fs.iter_mut().zip(samples.iter_mut()) {
            let t = Instant::now();
            f();
            s.push(t.elapsed());
        }
    }
    samples.map(|mut s| {
        s.sort();
        s[s.len() / 2]
    })
}

/// The payload; `harder`: every name with escapes and non-ASCII text, every
/// confidence a double that needs 16–17 digits (the slow paths of sizing).
fn ctxo_payload(harder: bool) -> Value {
    let items: Vec<Value> = (0..10_000)
        .map(|i| {
            let (name, confidence) = if harder {
                (format!("méthode «{i}» \"quoted\"\n"), i as f64 / 7.0)
            } else {
                (format!("method{i}"), (i % 100) as f64 / 100.0)
            };
            json!({
                "symbolId": format!("packages/core/src/module_{:03}/service.ts::ServiceClass{i}.method", i % 300),
                "name": name,
                "kind": "method",
                "file": format!("packages/core/src/module_{:03}/service.ts", i % 300),
                "line": i * 7 % 4000,
                "confidence": confidence,
                "depth": i % 5,
                "module": format!("module_{:03}", i % 300),
            })
        })
        .collect();
    json!({"symbolId": "packages/core/src/index.ts::main", "impactedSymbols": items})
}

/// The reference algorithm: binary search over the item count, re-serializing everything.
fn reference_truncate(payload: &Map<String, Value>, key: &str, limit: usize) -> Vec<u8> {
    let items = payload[key].as_array().unwrap();
    let total_bytes = serde_json::to_vec(payload).unwrap().len();
    let candidate = |k: usize| {
        let mut doc = payload.clone();
        doc.insert(key.into(), Value::Array(items[..k].to_vec()));
        doc.insert(
            "_meta".into(),
            json!({"totalItems": items.len(), "returnedItems": k, "truncated": true, "totalBytes": total_bytes, "hint": "h"}),
        );
        serde_json::to_vec(&doc).unwrap()
    };
    let (mut lo, mut hi, mut best) = (1, items.len() - 1, 1);
    while lo <= hi {
        let mid = (lo + hi) / 2;
        if candidate(mid).len() <= limit {
            best = mid;
            lo = mid + 1;
        } else {
            hi = mid - 1;
        }
    }
    candidate(best)
}

/// Runs the shaping benchmarks under `allocator` (a label), with the offload table or not.
pub fn run(allocator: &str, with_offload: bool) {
    println!("Allocator: {allocator}.\n");
    let budget = Duration::from_secs(3);
    let limit = 8192;
    // Every contender works on the very same in-memory value: a copy laid out elsewhere in
    // memory can be twice as slow to walk, which would skew the ratios.
    let env = Envelope::ok(ctxo_payload(false));
    let Payload::Json(payload) = &env.payload else {
        unreachable!()
    };
    let map = payload.as_object().unwrap();
    let compat_options = EncodeOptions {
        ctxo_limit: Some(limit),
        ..EncodeOptions::default()
    };

    // The floor and the two cuts take turns, so drifts of this shared machine hit all three.
    let [floor, hard, compat] = interleaved(
        budget,
        [
            &mut || drop(black_box(serde_json::to_vec(payload).unwrap())),
            &mut || {
                drop(black_box(
                    envelope::shape::fit(&env, FormatId::Ctxo, limit, &EncodeOptions::default())
                        .unwrap(),
                ))
            },
            &mut || {
                drop(black_box(
                    envelope::encode(FormatId::Ctxo, &env, &compat_options).unwrap(),
                ))
            },
        ],
    );
    let reference = time(budget, || reference_truncate(map, "impactedSymbols", limit));

    // The CLI path: a protocol-v1 envelope around the payload, as text. `envelope shape
    // --format ctxo --limit 8192 --no-offload` and `envelope convert --to ctxo --limit
    // 8192` run exactly the library calls timed here (detection included).
    let document = serde_json::to_vec(&json!({
        "version": 1, "status": "ok", "command": "code/impact", "data": payload,
        "meta": {"ts": "2026-07-04T00:00:00Z", "duration_ms": 12}, "error": null,
    }))
    .unwrap();
    let decode_options = DecodeOptions::default();
    let parse = time(budget, || {
        serde_json::from_slice::<Value>(&document).unwrap()
    });
    let reference_cli = time(budget, || {
        let mut v: Value = serde_json::from_slice(&document).unwrap();
        let data = v["data"].take();
        reference_truncate(data.as_object().unwrap(), "impactedSymbols", limit)
    });
    // With a floor of their own, taken in the same rounds.
    let [text_floor, hard_cli, compat_cli, hard_whole, compat_whole] = interleaved(
        budget,
        [
            &mut || drop(black_box(serde_json::to_vec(payload).unwrap())),
            &mut || {
                let Decoded::Skimmed(skimmed) =
                    bounded::decode(&document, None, &decode_options, limit).unwrap()
                else {
                    panic!("the payload is skimmed")
                };
                drop(black_box(
                    skimmed
                        .fit(FormatId::Ctxo, &EncodeOptions::default())
                        .unwrap(),
                ))
            },
            &mut || {
                drop(black_box(
                    convert(
                        &document,
                        None,
                        FormatId::Ctxo,
                        &decode_options,
                        &compat_options,
                    )
                    .unwrap(),
                ))
            },
            &mut || {
                let (_, env) = decode_any(&document, None, &decode_options).unwrap();
                drop(black_box(
                    envelope::shape::fit(&env, FormatId::Ctxo, limit, &EncodeOptions::default())
                        .unwrap(),
                ))
            },
            &mut || {
                let (_, env) = decode_any(&document, None, &decode_options).unwrap();
                drop(black_box(
                    envelope::encode(FormatId::Ctxo, &env, &compat_options).unwrap(),
                ))
            },
        ],
    );

    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "Payload: 10,000 items, {} bytes ({} as a protocol-v1 document), cut to {limit} bytes.\n",
        serde_json::to_vec(payload).unwrap().len(),
        document.len()
    );
    println!(
        "| entry point | what | time (ms) | reference ÷ this | this ÷ one serde_json serialization |"
    );
    println!("|---|---|---|---|---|");
    // One row: its time, then (when it has one) the reference's time over it, then its time
    // over the floor of its entry point.
    let row =
        |entry: &str, what: &str, t: Duration, reference: Option<Duration>, floor: Duration| {
            let speedup = reference.map_or(String::new(), |r| format!("{:.1}", ms(r) / ms(t)));
            println!(
                "| {entry} | {what} | {:.2} | {speedup} | {:.2} |",
                ms(t),
                ms(t) / ms(floor)
            );
        };
    row(
        "library",
        "one serde_json serialization (floor)",
        floor,
        None,
        floor,
    );
    let library = [
        (
            "reference: binary search, re-serializing per probe",
            reference,
        ),
        ("hard budget (`shape::fit`)", hard),
        ("ctxo compat truncation", compat),
    ];
    for (what, t) in library {
        row("library", what, t, Some(reference), floor);
    }
    let text = "JSON text";
    let text_floor_name =
        "one serde_json serialization of the payload (floor, taken with the rows below)";
    row(text, text_floor_name, text_floor, None, text_floor);
    row(
        text,
        "serde_json parse of the document alone",
        parse,
        None,
        text_floor,
    );
    let cli = [
        ("reference (parse + binary search)", reference_cli),
        ("hard budget (skimmed read + fit)", hard_cli),
        ("ctxo compat (`convert`: skimmed read + encode)", compat_cli),
        ("hard budget, whole read (decode + fit)", hard_whole),
        ("ctxo compat, whole read (decode + encode)", compat_whole),
    ];
    for (what, t) in cli {
        row(text, what, t, Some(reference_cli), text_floor);
    }

    bench_harder_payload(budget, limit, ms);
    if with_offload {
        bench_offload(ms);
    }
}

/// JSON text the way Python's `json.dumps` writes it by default (`ensure_ascii`): every
/// non-ASCII character as `\uXXXX`, astral ones as surrogate pairs.
fn ensure_ascii(text: &[u8]) -> Vec<u8> {
    let mut out = String::new();
    for c in String::from_utf8_lossy(text).chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            for unit in c.encode_utf16(&mut [0u16; 2]) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        }
    }
    out.into_bytes()
}

/// The hard budget on the harder payload, from a value and from JSON text (UTF-8 and
/// `ensure_ascii`), each against a serialization of that payload in the same rounds.
fn bench_harder_payload(budget: Duration, limit: usize, ms: impl Fn(Duration) -> f64) {
    let env = Envelope::ok(ctxo_payload(true));
    let Payload::Json(payload) = &env.payload else {
        unreachable!()
    };
    let utf8 = serde_json::to_vec(&json!({
        "version": 1, "status": "ok", "command": "code/impact", "data": payload,
        "meta": {"ts": "2026-07-04T00:00:00Z", "duration_ms": 12}, "error": null,
    }))
    .unwrap();
    let ascii = ensure_ascii(&utf8);
    let options = DecodeOptions::default();
    let from_text = |document: &[u8]| {
        let Decoded::Skimmed(skimmed) = bounded::decode(document, None, &options, limit).unwrap()
        else {
            panic!("the payload is skimmed")
        };
        drop(black_box(
            skimmed
                .fit(FormatId::Ctxo, &EncodeOptions::default())
                .unwrap(),
        ))
    };
    let [floor, library, text_utf8, text_ascii] = interleaved(
        budget,
        [
            &mut || drop(black_box(serde_json::to_vec(payload).unwrap())),
            &mut || {
                drop(black_box(
                    envelope::shape::fit(&env, FormatId::Ctxo, limit, &EncodeOptions::default())
                        .unwrap(),
                ))
            },
            &mut || from_text(&utf8),
            &mut || from_text(&ascii),
        ],
    );
    println!(
        "\nA harder payload: names with escapes and non-ASCII text, confidences of 16-17 digits \
         ({} bytes; as a document {} bytes in UTF-8, {} with ensure_ascii), cut to {limit} bytes.\n",
        serde_json::to_vec(payload).unwrap().len(),
        utf8.len(),
        ascii.len()
    );
    println!("| entry point | what | time (ms) | this ÷ one serde_json serialization |");
    println!("|---|---|---|---|");
    for (entry, what, t) in [
        ("library", "one serde_json serialization (floor)", floor),
        ("library", "hard budget (`shape::fit`)", library),
        (
            "JSON text",
            "hard budget (skimmed read + fit), UTF-8",
            text_utf8,
        ),
        (
            "JSON text",
            "hard budget (skimmed read + fit), ensure_ascii",
            text_ascii,
        ),
    ] {
        println!(
            "| {entry} | {what} | {:.2} | {:.2} |",
            ms(t),
            ms(t) / ms(floor)
        );
    }
}

/// Offload of 100 MiB against raw SHA-256 of the same bytes.
fn bench_offload(ms: impl Fn(Duration) -> f64) {
    let size = 100 * 1024 * 1024;
    let bytes: Vec<u8> = (0..size).map(|i| (i % 251) as u8).collect();
    let root = std::env::temp_dir().join(format!("envelope-bench-store-{}", std::process::id()));
    let offload_budget = Duration::from_secs(10);
    let sha = time(offload_budget, || Digest::of(&bytes));
    let put = time(offload_budget, || {
        let _ = std::fs::remove_dir_all(&root);
        FileStore::new(&root)
            .put(&bytes, "application/octet-stream", &[])
            .unwrap()
    });
    let durable_put = time(offload_budget, || {
        let _ = std::fs::remove_dir_all(&root);
        FileStore::new(&root)
            .durable(true)
            .put(&bytes, "application/octet-stream", &[])
            .unwrap()
    });
    let text_payload = Envelope {
        payload: Payload::Text(
            String::from_utf8(bytes.iter().map(|b| b'a' + b % 26).collect()).unwrap(),
        ),
        ..Envelope::default()
    };
    let via_offload = time(offload_budget, || {
        let _ = std::fs::remove_dir_all(&root);
        let mut env = text_payload.clone();
        let store = FileStore::new(&root);
        let mut sink = StoreSink::new(&store);
        offload(
            &mut env,
            FormatId::ProtocolV1,
            &OffloadOptions::default(),
            &mut sink,
        )
        .unwrap()
    });
    let clone_only = time(offload_budget, || text_payload.clone());
    let _ = std::fs::remove_dir_all(&root);
    let mbs = |d: Duration| size as f64 / 1e6 / d.as_secs_f64();
    println!("\n| 100 MiB | time (ms) | MB/s | ÷ raw SHA-256 throughput |");
    println!("|---|---|---|---|");
    println!(
        "| raw SHA-256 (baseline) | {:.1} | {:.0} | 1.00 |",
        ms(sha),
        mbs(sha)
    );
    println!(
        "| file store put (hash ∥ temp file, rename, sidecar) | {:.1} | {:.0} | {:.2} |",
        ms(put),
        mbs(put),
        mbs(put) / mbs(sha)
    );
    println!(
        "| file store put, durable (fsync before rename) | {:.1} | {:.0} | {:.2} |",
        ms(durable_put),
        mbs(durable_put),
        mbs(durable_put) / mbs(sha)
    );
    println!(
        "| offload of a text payload (bytes + put + summary), less the bench's clone ({:.1} ms) | {:.1} | {:.0} | {:.2} |",
        ms(clone_only),
        ms(via_offload.saturating_sub(clone_only)),
        mbs(via_offload.saturating_sub(clone_only)),
        mbs(via_offload.saturating_sub(clone_only)) / mbs(sha)
    );
}
