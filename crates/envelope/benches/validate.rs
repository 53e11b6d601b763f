//! Validation benchmark (issue 4): protocol-v1 NDJSON validation throughput against a
//! serde_json validate-only scan (`IgnoredAny`) of the same bytes, in the same run; and the
//! peak heap the validator needs, for a stream in memory and for a 1 GiB stream generated on
//! the fly (it must not grow with the stream).
//!
//! Run: `cargo bench -p envelope --bench validate` (prints markdown tables).

use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::io::Read;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use envelope::FormatId;
use envelope::validate::stream::{StreamValidator, validate_stream};
use envelope::validate::{Options, Profile};
use serde::de::IgnoredAny;

/// The system allocator, counting live and peak bytes.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let live = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
        PEAK.fetch_max(live, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Peak heap growth while `f` runs.
fn peak_during<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let base = LIVE.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let out = f();
    (out, PEAK.load(Ordering::Relaxed) - base)
}

/// Progress line `seq` of a realistic stream (about 230 bytes).
fn line(seq: u64, out: &mut Vec<u8>) {
    let pct = (seq / 1000).min(100);
    out.extend_from_slice(
        format!(
            r#"{{"version":1,"status":"progress","command":"fs/index","data":{{"message":"indexed packages/core/src/module_{:03}/service_{seq}.ts","pct":{pct},"stage":"scan"}},"meta":{{"ts":"2026-11-22T10:{:02}:{:02}.{:03}Z","duration_ms":{},"source":"run","runner":"exec","seq":{seq}}},"error":{{}}}}"#,
            seq % 300,
            (seq / 60_000) % 60,
            (seq / 1000) % 60,
            seq % 1000,
            seq % 5000
        )
        .as_bytes(),
    );
    out.push(b'\n');
}

const TERMINAL: &[u8] = br#"{"version":1,"status":"ok","command":"fs/index","data":{"files":12345},"meta":{"ts":"2026-11-22T11:00:00Z","duration_ms":3600000,"source":"run"},"error":{}}
"#;

fn stream(min_bytes: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(min_bytes + 1024);
    let mut seq = 0;
    while out.len() < min_bytes {
        line(seq, &mut out);
        seq += 1;
    }
    out.extend_from_slice(TERMINAL);
    out
}

/// A stream of `total` bytes produced line by line as it is read (never all in memory).
struct Generated {
    seq: u64,
    left: usize,
    buf: Vec<u8>,
    at: usize,
    done: bool,
}

impl Read for Generated {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        if self.at == self.buf.len() {
            if self.done {
                return Ok(0);
            }
            self.buf.clear();
            self.at = 0;
            if self.left == 0 {
                self.buf.extend_from_slice(TERMINAL);
                self.done = true;
            } else {
                line(self.seq, &mut self.buf);
                self.seq += 1;
                self.left = self.left.saturating_sub(self.buf.len());
            }
        }
        let n = out.len().min(self.buf.len() - self.at);
        out[..n].copy_from_slice(&self.buf[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

/// One line of `left` bytes of `x` and its newline, produced as it is read.
struct OneLine {
    left: u64,
}

impl Read for OneLine {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        if self.left == 0 {
            return Ok(0);
        }
        let n = (out.len() as u64).min(self.left) as usize;
        out[..n].fill(b'x');
        self.left -= n as u64;
        if self.left == 0 {
            out[n - 1] = b'\n';
        }
        Ok(n)
    }
}

fn median(mut f: impl FnMut(), rounds: usize) -> Duration {
    let mut samples: Vec<Duration> = (0..rounds)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .collect();
    samples.sort();
    samples[samples.len() / 2]
}

fn main() {
    let bytes = stream(100 * 1024 * 1024);
    let mb = bytes.len() as f64 / 1e6;
    let cap = envelope::validate::stream::DEFAULT_LINE_CAP;
    let rounds = 5;

    // The baseline: serde_json reading every document of the same bytes, building nothing.
    let scan = || {
        for doc in serde_json::Deserializer::from_slice(&bytes).into_iter::<IgnoredAny>() {
            black_box(doc.unwrap());
        }
    };
    let validate = |profile: Profile, fast: bool| {
        let options = Options::new(None, profile);
        let mut v = StreamValidator::new(options);
        if !fast {
            v = v.without_fast_path();
        }
        let report = v.run(&bytes[..], cap).unwrap();
        assert!(report.is_valid(), "{:?}", &report.findings[..1]);
        report
    };

    // Interleave rounds so the machine's drift hits every contender alike.
    let mut times: Vec<Vec<Duration>> = vec![Vec::new(); 5];
    for _ in 0..rounds {
        times[0].push(median(scan, 1));
        times[1].push(median(
            || drop(black_box(validate(Profile::Compat, true))),
            1,
        ));
        times[2].push(median(
            || drop(black_box(validate(Profile::Strict, true))),
            1,
        ));
        times[3].push(median(|| drop(black_box(validate(Profile::Spec, true))), 1));
        times[4].push(median(
            || drop(black_box(validate(Profile::Spec, false))),
            1,
        ));
    }
    let med: Vec<Duration> = times
        .into_iter()
        .map(|mut t| {
            t.sort();
            t[t.len() / 2]
        })
        .collect();
    let rate = |d: Duration| mb / d.as_secs_f64();

    println!(
        "Stream: {} lines, {:.1} MB (protocol-v1 progress lines of ~230 bytes, then one ok).\n",
        bytes.iter().filter(|&&b| b == b'\n').count(),
        mb
    );
    println!("| what | time (ms) | MB/s | ÷ IgnoredAny scan throughput |");
    println!("|---|---|---|---|");
    let rows = [
        ("serde_json IgnoredAny scan (baseline)", med[0]),
        ("validate --ndjson, profile compat", med[1]),
        ("validate --ndjson, profile strict", med[2]),
        ("validate --ndjson, profile spec (default)", med[3]),
        (
            "validate --ndjson, spec, general path only (Value per line)",
            med[4],
        ),
    ];
    for (name, d) in rows {
        println!(
            "| {name} | {:.0} | {:.0} | {:.2} |",
            d.as_secs_f64() * 1e3,
            rate(d),
            rate(d) / rate(med[0])
        );
    }

    // Peak heap: the stream in memory (the input itself is not counted), then 1 GiB
    // generated on the fly through the public entry point.
    let (_, in_memory) = peak_during(|| validate(Profile::Spec, true));
    let (_, general) = peak_during(|| validate(Profile::Spec, false));
    let gib = 1usize << 30;
    let started = Instant::now();
    let (report, generated) = peak_during(|| {
        let reader = std::io::BufReader::with_capacity(
            1 << 16,
            Generated {
                seq: 0,
                left: gib,
                buf: Vec::new(),
                at: 0,
                done: false,
            },
        );
        validate_stream(
            reader,
            &Options::new(Some(FormatId::ProtocolV1), Profile::Spec),
            cap,
        )
        .unwrap()
    });
    assert!(report.is_valid());
    let secs = started.elapsed().as_secs_f64();
    let four_gib = 4u64 << 30;
    let started_line = Instant::now();
    let (report, one_line) = peak_during(|| {
        let reader = std::io::BufReader::with_capacity(1 << 16, OneLine { left: four_gib });
        validate_stream(reader, &Options::default(), cap).unwrap()
    });
    assert_eq!(report.findings[0].rule, "stream.line-too-long");
    assert!(
        report.findings[0]
            .message
            .starts_with(&format!("{}", four_gib - 1))
    );
    let line_secs = started_line.elapsed().as_secs_f64();
    println!("\n| stream | peak heap during validation |");
    println!("|---|---|");
    println!(
        "| {mb:.0} MB in memory (input not counted), fast path | {} KiB |",
        in_memory / 1024
    );
    println!(
        "| {mb:.0} MB in memory, general path | {} KiB |",
        general / 1024
    );
    println!(
        "| 1 GiB generated while read (64 KiB BufReader), {:.1} s | {} KiB |",
        secs,
        generated / 1024
    );
    println!(
        "| one line of 4 GiB (cap 16 MiB: reported, skipped), {line_secs:.1} s | {} KiB |",
        one_line / 1024
    );
}
