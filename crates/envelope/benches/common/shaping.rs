//! Shaping benchmarks (issue 3), each against a baseline measured in the same run, shared by
//! two bench binaries that differ only in their global allocator: `shaping` (the system's,
//! what a library user gets by default) and `shaping_mimalloc` (the `envelope` CLI's).
//!
//! Run: `cargo bench -p envelope --bench shaping --bench shaping_mimalloc` (markdown tables;
//! Node.js must be installed).
//!
//! 1. A 10,000-item ctxo-style payload (~2.2 MB) cut to 8 KiB, by the hard budget and by the
//!    ctxo compat truncation, against one plain serde_json serialization (the floor:
//!    reporting totalBytes needs one pass over the payload) and against the reference: Ctxo's
//!    own truncation run under Node in the same bench run (`node_reference.rs`). Both from an
//!    in-memory value (library API) and from JSON text (the CLI path).
//! 2. ToolEnvelope V1 encode and decode of the same payload, against the reference's
//!    (`JSON` and `Buffer`) under Node.
//! 3. Offload of 100 MB into the file store against raw SHA-256 of the same bytes.

use std::hint::black_box;
use std::time::{Duration, Instant};

use envelope::convert::convert;
use envelope::formats::decode_any;
use envelope::shape::Pipeline;
use envelope::shape::offload::{OffloadOptions, offload};
use envelope::{DecodeOptions, EncodeOptions, Envelope, FormatId, Payload};
use envelope_store::{Digest, FileStore, Store, StoreSink};
use serde_json::{Value, json};

use crate::node_reference;

/// The pipeline's cut of `document` to ctxo within `limit`, read for the limit (it is
/// skimmed: the bench measures that read).
fn skimmed_cut(document: &[u8], decode: &DecodeOptions, limit: usize) -> Vec<u8> {
    let shaped = Pipeline::new(document)
        .decode_options(decode.clone())
        .output_format(FormatId::Ctxo)
        .limit(limit)
        .encode_options(EncodeOptions::default())
        .run()
        .unwrap();
    assert!(shaped.skimmed, "the payload is skimmed");
    shaped.bytes
}

/// The median time of `f` (see `timing::median_time`).
fn time<T>(budget: Duration, f: impl FnMut() -> T) -> Duration {
    crate::timing::median_time(budget, 5, f)
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
    // With a floor of their own, taken in the same rounds.
    let [text_floor, hard_cli, compat_cli, hard_whole, compat_whole] = interleaved(
        budget,
        [
            &mut || drop(black_box(serde_json::to_vec(payload).unwrap())),
            &mut || drop(black_box(skimmed_cut(&document, &decode_options, limit))),
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

    // The references, under Node, on the same inputs (the library's outputs handed over so
    // that Node checks it writes the same bytes).
    let compat_bytes = envelope::encode(FormatId::Ctxo, &env, &compat_options)
        .unwrap()
        .bytes;
    let te_env = tool_envelope_input(payload);
    let te_bytes = envelope::encode(FormatId::ToolEnvelopeV1, &te_env, &EncodeOptions::default())
        .unwrap()
        .bytes;
    let payload_bytes = serde_json::to_vec(payload).unwrap();
    let node = node_reference::measure(
        &node_reference::Inputs {
            payload: &payload_bytes,
            document: &document,
            limit,
            ctxo_ours: &compat_bytes,
            te: &te_bytes,
        },
        budget,
    );
    assert!(
        node.ctxo_same,
        "Node's truncation wrote other bytes than ours"
    );
    let reference = node.ctxo_value;
    let reference_cli = node.ctxo_text;

    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "Reference: Node {} (process start {:.1} ms, not in any time below).\n",
        node.version,
        ms(node.process_start)
    );
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
            "reference in Node: Ctxo's `wrap`, JSON.stringify per probe",
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
        ("reference in Node (JSON.parse + `wrap`)", reference_cli),
        ("hard budget (skimmed read + fit)", hard_cli),
        ("ctxo compat (`convert`: skimmed read + encode)", compat_cli),
        ("hard budget, whole read (decode + fit)", hard_whole),
        ("ctxo compat, whole read (decode + encode)", compat_whole),
    ];
    for (what, t) in cli {
        row(text, what, t, Some(reference_cli), text_floor);
    }

    bench_tool_envelope(budget, &te_env, &te_bytes, &node, ms);
    bench_harder_payload(budget, limit, ms);
    if with_offload {
        bench_offload(ms);
    }
}

/// A tool-envelope-v1 result of the payload, with everything its reference writes.
fn tool_envelope_input(payload: &Value) -> Envelope {
    Envelope {
        tool: Some("code/impact".into()),
        summary: Some("10,000 impacted symbols".into()),
        timestamp: Some(envelope::model::Timestamp::Text(
            "2026-07-04T00:00:00Z".into(),
        )),
        ..Envelope::ok(payload.clone())
    }
}

/// ToolEnvelope V1 encode (from the envelope) and decode (from the result text), against the
/// reference's under Node.
fn bench_tool_envelope(
    budget: Duration,
    env: &Envelope,
    bytes: &[u8],
    node: &node_reference::NodeTimes,
    ms: impl Fn(Duration) -> f64,
) {
    let options = DecodeOptions::default();
    let [encode, decode] = interleaved(
        budget,
        [
            &mut || {
                drop(black_box(
                    envelope::encode(FormatId::ToolEnvelopeV1, env, &EncodeOptions::default())
                        .unwrap(),
                ))
            },
            &mut || {
                drop(black_box(
                    envelope::decode(FormatId::ToolEnvelopeV1, bytes, &options).unwrap(),
                ))
            },
        ],
    );
    println!(
        "\ntool-envelope-v1 result of the same payload ({} bytes; Node's encode writes the same \
         bytes: {}).\n",
        bytes.len(),
        if node.te_same { "yes" } else { "no" }
    );
    println!("| what | library (ms) | reference in Node (ms) | Node ÷ library |");
    println!("|---|---|---|---|");
    for (what, ours, theirs) in [
        ("encode", encode, node.te_encode),
        ("decode", decode, node.te_decode),
    ] {
        println!(
            "| {what} | {:.2} | {:.2} | {:.2} |",
            ms(ours),
            ms(theirs),
            ms(theirs) / ms(ours)
        );
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
    let from_text = |document: &[u8]| drop(black_box(skimmed_cut(document, &options, limit)));
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
