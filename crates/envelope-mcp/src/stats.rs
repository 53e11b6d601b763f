//! Counters of the proxy's work, for the summary on exit, `--stats FILE` and `GET /metrics`
//! ([`Stats::to_prometheus`]), and the proxy's structured logs on stderr ([`log`]).
//!
//! `envelope proxy` and `envelope serve` count through the same [`Stats`]: a call's outcome
//! is recorded once ([`Stats::record_call`], [`Stats::record_tool_error`]), and every view of
//! the counters (the summary, `--stats`, `/metrics`) reads those same numbers.

mod prometheus;

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

pub use self::prometheus::{CONTENT_TYPE as PROMETHEUS_CONTENT_TYPE, LATENCY_BUCKETS};

use serde_json::{Value, json};

/// What the proxy did, shared by every session.
#[derive(Debug, Default)]
pub struct Stats {
    calls: AtomicU64,
    bytes_from_upstream: AtomicU64,
    bytes_to_client: AtomicU64,
    /// Tokens of the results sent, for the calls of tools with a token limit (each counted
    /// by its tool's tokenizer).
    tokens_to_client: AtomicU64,
    bytes_saved: AtomicU64,
    results_offloaded: AtomicU64,
    redactions: AtomicU64,
    /// Errors by kind (`upstream_exited`, `timeout`, `upstream_invalid_json`, …).
    errors: Mutex<BTreeMap<String, u64>>,
    /// Reads and searches of stored results, by way (`envelope_read`, `resources/read`, `http`,
    /// `envelope_search`, `envelope_list`).
    reads: Mutex<BTreeMap<&'static str, u64>>,
    /// Stored results removed by the store's limits while running (`--ttl`,
    /// `--max-store-bytes`, `--max-results`): `expired` (idle past the TTL), `evicted`
    /// (least recently used, over a cap).
    evictions: Mutex<BTreeMap<&'static str, u64>>,
    per_tool: Mutex<BTreeMap<String, ToolStats>>,
}

/// What one `tools/call` result became, as shaping reports it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CallRecord {
    /// Bytes of the `result` member as the upstream sent it.
    pub bytes_in: u64,
    /// Bytes of the `result` member as the client got it.
    pub bytes_out: u64,
    /// Its tokens, counted by the tool's tokenizer when the tool has a token limit (`None`
    /// otherwise: nothing is counted then).
    pub tokens_out: Option<u64>,
    /// Whether the full result went to the store.
    pub offloaded: bool,
    /// Secrets masked.
    pub redactions: u64,
    /// From the client's request to its answer being ready (`/metrics`' latency histogram).
    pub elapsed: Duration,
}

/// The counters of one tool.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct ToolStats {
    calls: u64,
    bytes_from_upstream: u64,
    bytes_to_client: u64,
    /// `None` until a call of the tool is counted in tokens.
    tokens_to_client: Option<u64>,
    results_offloaded: u64,
    redactions: u64,
    /// Errors of this tool's calls (`/metrics` only: `--stats` counts errors by kind).
    errors: u64,
    /// The latency of each call counted in `calls`.
    latency: Histogram,
}

/// Latencies in [`LATENCY_BUCKETS`]: the count of each bucket (not cumulative; the last
/// one is `+Inf`) and the sum in seconds.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Histogram {
    counts: [u64; LATENCY_BUCKETS.len() + 1],
    sum: f64,
}

impl Histogram {
    fn observe(&mut self, elapsed: Duration) {
        let seconds = elapsed.as_secs_f64();
        let at = LATENCY_BUCKETS
            .iter()
            .position(|&le| seconds <= le)
            .unwrap_or(LATENCY_BUCKETS.len());
        self.counts[at] += 1;
        self.sum += seconds;
    }
}

impl Stats {
    /// Counts one answered `tools/call` of `tool`.
    pub fn record_call(&self, tool: &str, record: CallRecord) {
        self.calls.fetch_add(1, Ordering::Relaxed);
        self.bytes_from_upstream
            .fetch_add(record.bytes_in, Ordering::Relaxed);
        self.bytes_to_client
            .fetch_add(record.bytes_out, Ordering::Relaxed);
        self.bytes_saved.fetch_add(
            record.bytes_in.saturating_sub(record.bytes_out),
            Ordering::Relaxed,
        );
        if let Some(tokens) = record.tokens_out {
            self.tokens_to_client.fetch_add(tokens, Ordering::Relaxed);
        }
        self.results_offloaded
            .fetch_add(u64::from(record.offloaded), Ordering::Relaxed);
        self.redactions
            .fetch_add(record.redactions, Ordering::Relaxed);
        let mut per_tool = self.per_tool.lock().unwrap_or_else(|e| e.into_inner());
        let entry = per_tool.entry(tool.to_string()).or_default();
        entry.calls += 1;
        entry.bytes_from_upstream += record.bytes_in;
        entry.bytes_to_client += record.bytes_out;
        if let Some(tokens) = record.tokens_out {
            *entry.tokens_to_client.get_or_insert(0) += tokens;
        }
        entry.results_offloaded += u64::from(record.offloaded);
        entry.redactions += record.redactions;
        entry.latency.observe(record.elapsed);
    }

    /// Counts one error of `kind` in a call of `tool`: as [`Stats::record_error`], and in
    /// the tool's errors.
    pub fn record_tool_error(&self, tool: &str, kind: &str) {
        self.record_error(kind);
        let mut per_tool = self.per_tool.lock().unwrap_or_else(|e| e.into_inner());
        per_tool.entry(tool.to_string()).or_default().errors += 1;
    }

    /// Counts one read of a stored result, by `via`: `envelope_read` (the tool),
    /// `resources/read` (an artifact URI) or `http` (`GET /artifacts/…`).
    pub fn record_read(&self, via: &'static str) {
        let mut reads = self.reads.lock().unwrap_or_else(|e| e.into_inner());
        *reads.entry(via).or_default() += 1;
    }

    /// Counts `count` stored results removed by the store's limits, by `reason`: `expired`
    /// or `evicted` (see [`crate::managed`]).
    pub fn record_evictions(&self, reason: &'static str, count: u64) {
        if count == 0 {
            return;
        }
        let mut evictions = self.evictions.lock().unwrap_or_else(|e| e.into_inner());
        *evictions.entry(reason).or_default() += count;
    }

    /// How many stored results were removed by the store's limits for `reason`.
    pub fn evictions_of(&self, reason: &str) -> u64 {
        let evictions = self.evictions.lock().unwrap_or_else(|e| e.into_inner());
        evictions.get(reason).copied().unwrap_or(0)
    }

    /// Counts one error of `kind`.
    pub fn record_error(&self, kind: &str) {
        let mut errors = self.errors.lock().unwrap_or_else(|e| e.into_inner());
        *errors.entry(kind.to_string()).or_default() += 1;
    }

    /// How many errors of `kind` were counted.
    pub fn errors_of(&self, kind: &str) -> u64 {
        let errors = self.errors.lock().unwrap_or_else(|e| e.into_inner());
        errors.get(kind).copied().unwrap_or(0)
    }

    /// The `--stats FILE` document: `calls`, `bytes_from_upstream`, `bytes_to_client`,
    /// `bytes_saved`, `results_offloaded`, `redactions`, `errors` (by kind) and `per_tool`;
    /// and `tokens_to_client` (in all and per tool) once a tool with a token limit answered.
    pub fn to_json(&self) -> Value {
        let load = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        let errors = self
            .errors
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        let per_tool: serde_json::Map<String, Value> = self
            .per_tool
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            // A tool with errors only is in `/metrics`, not here (as before it was counted).
            .filter(|(_, t)| t.calls > 0)
            .map(|(name, t)| {
                let saved = t.bytes_from_upstream.saturating_sub(t.bytes_to_client);
                let mut entry = json!({
                    "calls": t.calls,
                    "bytes_from_upstream": t.bytes_from_upstream,
                    "bytes_to_client": t.bytes_to_client,
                    "bytes_saved": saved,
                    "results_offloaded": t.results_offloaded,
                    "redactions": t.redactions,
                });
                if let Some(tokens) = t.tokens_to_client {
                    entry["tokens_to_client"] = json!(tokens);
                }
                (name.clone(), entry)
            })
            .collect();
        let counted_tokens = per_tool
            .values()
            .any(|t| t.get("tokens_to_client").is_some());
        let mut document = json!({
            "calls": load(&self.calls),
            "bytes_from_upstream": load(&self.bytes_from_upstream),
            "bytes_to_client": load(&self.bytes_to_client),
            "bytes_saved": load(&self.bytes_saved),
            "results_offloaded": load(&self.results_offloaded),
            "redactions": load(&self.redactions),
            "errors": errors,
            "per_tool": per_tool,
        });
        if counted_tokens {
            document["tokens_to_client"] = json!(load(&self.tokens_to_client));
        }
        document
    }

    /// One line for stderr on exit.
    pub fn summary_line(&self) -> String {
        let load = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        let errors: u64 = self
            .errors
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .sum();
        format!(
            "envelope proxy: {}, {} from upstream, {} to client ({} saved), {} offloaded, {}, {}",
            counted(load(&self.calls), "call"),
            counted(load(&self.bytes_from_upstream), "byte"),
            counted(load(&self.bytes_to_client), "byte"),
            load(&self.bytes_saved),
            load(&self.results_offloaded),
            counted(load(&self.redactions), "redaction"),
            counted(errors, "error"),
        )
    }
}

/// `1 call`, `2 calls`, `0 calls`.
fn counted(n: u64, noun: &str) -> String {
    match n {
        1 => format!("1 {noun}"),
        _ => format!("{n} {noun}s"),
    }
}

/// Structured logs: one JSON object per line on stderr,
/// `{"level":"warn","event":"upstream.non_json","bytes":12,…}`, filtered by `--log-level`.
///
/// Two guarantees hold for every line, whoever logs it:
///
/// - **redacted**: every string in a line's fields (in arrays and objects too) passes
///   through [`redact_text`](envelope::shape::redact::redact_text) before it is written, so
///   the upstream's text a line carries (its junk stdout, its stderr, an error it sent)
///   never puts a secret in our log: `Authorization: Bearer ***`;
/// - **rate-limited**: output is a token bucket of bytes, [`RATE_BYTES_PER_SEC`](log::RATE_BYTES_PER_SEC) with a
///   burst of [`BURST_BYTES`](log::BURST_BYTES). A line that does not fit is dropped and counted; the next
///   line written is preceded by `{"level":"warn","event":"log.suppressed","lines":N,
///   "bytes":M}` (and [`flush_suppressed`](log::flush_suppressed) writes that count on exit).
pub mod log {
    use std::cell::RefCell;
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicU8, Ordering};
    use std::time::Instant;

    use serde_json::Value;

    /// Bytes of log the proxy writes per second at most, over time.
    pub const RATE_BYTES_PER_SEC: u64 = 64 * 1024;
    /// Bytes of log the proxy may write at once after a quiet spell.
    pub const BURST_BYTES: u64 = 256 * 1024;

    /// How much to log, from least to most.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
    pub enum Level {
        /// Nothing.
        Off = 0,
        /// Faults the proxy could not hide from the client.
        Error = 1,
        /// Faults the proxy handled (junk dropped, a timeout, a restart).
        Warn = 2,
        /// The session's lifecycle (upstream started, exited).
        Info = 3,
        /// Every frame routed.
        Debug = 4,
    }

    impl Level {
        fn name(self) -> &'static str {
            match self {
                Level::Off => "off",
                Level::Error => "error",
                Level::Warn => "warn",
                Level::Info => "info",
                Level::Debug => "debug",
            }
        }
    }

    impl std::str::FromStr for Level {
        type Err = String;

        fn from_str(text: &str) -> Result<Level, String> {
            Ok(match text {
                "off" => Level::Off,
                "error" => Level::Error,
                "warn" => Level::Warn,
                "info" => Level::Info,
                "debug" => Level::Debug,
                other => {
                    return Err(format!(
                        "unknown log level {other:?} (off, error, warn, info, debug)"
                    ));
                }
            })
        }
    }

    static LEVEL: AtomicU8 = AtomicU8::new(Level::Warn as u8);

    /// The bucket of the process's stderr; created by the first line.
    static STDERR: Mutex<Option<Limiter>> = Mutex::new(None);

    thread_local! {
        /// [`capture`] on this thread: its level, its own bucket, and what was written.
        static CAPTURE: RefCell<Option<(Level, Limiter, Vec<u8>)>> = const { RefCell::new(None) };
    }

    /// Sets the level for the whole process (default: warn).
    pub fn set_level(level: Level) {
        LEVEL.store(level as u8, Ordering::Relaxed);
    }

    /// Whether `level` is logged.
    pub fn enabled(level: Level) -> bool {
        let max = CAPTURE
            .with(|c| c.borrow().as_ref().map(|(level, _, _)| *level as u8))
            .unwrap_or_else(|| LEVEL.load(Ordering::Relaxed));
        level != Level::Off && level as u8 <= max
    }

    /// Logs `event` with `fields` at `level` (redacted, within the rate limit).
    pub fn log(level: Level, event: &str, fields: &[(&str, Value)]) {
        if !enabled(level) {
            return;
        }
        let mut line = serde_json::Map::new();
        line.insert("level".into(), level.name().into());
        line.insert("event".into(), event.into());
        for (key, value) in fields {
            line.insert((*key).into(), value.clone());
        }
        let line = Value::Object(line);
        let now = Instant::now();
        let captured = CAPTURE.with(|c| match c.borrow_mut().as_mut() {
            Some((_, limiter, out)) => {
                limiter.offer(line.clone(), now, out);
                true
            }
            None => false,
        });
        if !captured {
            let mut limiter = STDERR.lock().unwrap_or_else(|e| e.into_inner());
            let limiter = limiter.get_or_insert_with(|| Limiter::new(now));
            // One write per line so that lines of concurrent sessions do not interleave.
            limiter.offer(line, now, &mut std::io::stderr().lock());
        }
    }

    /// Writes the count of lines dropped since the last line written, if any, whatever
    /// the budget: for the end of the process.
    pub fn flush_suppressed() {
        let mut limiter = STDERR.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(limiter) = limiter.as_mut() {
            limiter.flush(&mut std::io::stderr().lock());
        }
    }

    /// Runs `f` with this thread's log lines written to a buffer instead of stderr, at
    /// `level`, through a bucket of its own (for tests); returns what was written.
    #[doc(hidden)]
    pub fn capture<R>(level: Level, f: impl FnOnce() -> R) -> (R, String) {
        let fresh = (level, Limiter::new(Instant::now()), Vec::new());
        let outer = CAPTURE.with(|c| c.borrow_mut().replace(fresh));
        let result = f();
        let (_, mut limiter, mut out) = CAPTURE
            .with(|c| std::mem::replace(&mut *c.borrow_mut(), outer))
            .expect("the capture is still there");
        limiter.flush(&mut out);
        (result, String::from_utf8_lossy(&out).into_owned())
    }

    /// Every string in `value` with its secrets masked.
    fn redact(value: &mut Value) {
        match value {
            Value::String(text) => {
                if let Some((masked, _)) = envelope::shape::redact::redact_text(text) {
                    *text = masked;
                }
            }
            Value::Array(items) => items.iter_mut().for_each(redact),
            Value::Object(members) => members.values_mut().for_each(redact),
            _ => {}
        }
    }

    /// A token bucket of bytes in front of a log's output, with the count of what it
    /// dropped.
    #[derive(Debug)]
    pub(crate) struct Limiter {
        rate: f64,
        burst: f64,
        tokens: f64,
        last: Instant,
        suppressed_lines: u64,
        suppressed_bytes: u64,
    }

    impl Limiter {
        /// The defaults: [`RATE_BYTES_PER_SEC`], [`BURST_BYTES`], full.
        pub(crate) fn new(now: Instant) -> Limiter {
            Limiter::with(RATE_BYTES_PER_SEC, BURST_BYTES, now)
        }

        pub(crate) fn with(rate: u64, burst: u64, now: Instant) -> Limiter {
            Limiter {
                rate: rate as f64,
                burst: burst as f64,
                tokens: burst as f64,
                last: now,
                suppressed_lines: 0,
                suppressed_bytes: 0,
            }
        }

        /// Writes `line` (redacted) to `out` when the bucket holds its bytes, else counts
        /// it as suppressed. A line that is written is preceded by the count of those
        /// suppressed before it.
        pub(crate) fn offer(
            &mut self,
            mut line: Value,
            now: Instant,
            out: &mut dyn std::io::Write,
        ) {
            let elapsed = now.saturating_duration_since(self.last).as_secs_f64();
            self.last = self.last.max(now);
            self.tokens = (self.tokens + elapsed * self.rate).min(self.burst);
            if self.tokens < 1.0 {
                // Empty: not even worth redacting (the size is the line's before masking).
                self.suppress(line.to_string().len() + 1);
                return;
            }
            redact(&mut line);
            let mut text = self.notice().unwrap_or_default();
            text.push_str(&line.to_string());
            text.push('\n');
            // A line larger than the burst goes out on a full bucket.
            let cost = (text.len() as f64).min(self.burst);
            if self.tokens < cost {
                self.suppress(text.len() - self.notice().map_or(0, |n| n.len()));
                return;
            }
            self.tokens -= cost;
            self.suppressed_lines = 0;
            self.suppressed_bytes = 0;
            let _ = out.write_all(text.as_bytes());
        }

        /// Writes the count of suppressed lines, if any, whatever the budget.
        pub(crate) fn flush(&mut self, out: &mut dyn std::io::Write) {
            if let Some(notice) = self.notice() {
                self.suppressed_lines = 0;
                self.suppressed_bytes = 0;
                let _ = out.write_all(notice.as_bytes());
            }
        }

        fn suppress(&mut self, bytes: usize) {
            self.suppressed_lines += 1;
            self.suppressed_bytes += bytes as u64;
        }

        /// The `log.suppressed` line (with its `\n`), when lines were dropped.
        fn notice(&self) -> Option<String> {
            (self.suppressed_lines > 0).then(|| {
                let notice = serde_json::json!({
                    "level": "warn",
                    "event": "log.suppressed",
                    "lines": self.suppressed_lines,
                    "bytes": self.suppressed_bytes,
                    "rate_bytes_per_sec": self.rate as u64,
                });
                format!("{notice}\n")
            })
        }
    }

    /// Logs at [`Level::Error`].
    pub fn error(event: &str, fields: &[(&str, Value)]) {
        log(Level::Error, event, fields);
    }

    /// Logs at [`Level::Warn`].
    pub fn warn(event: &str, fields: &[(&str, Value)]) {
        log(Level::Warn, event, fields);
    }

    /// Logs at [`Level::Info`].
    pub fn info(event: &str, fields: &[(&str, Value)]) {
        log(Level::Info, event, fields);
    }

    /// Logs at [`Level::Debug`].
    pub fn debug(event: &str, fields: &[(&str, Value)]) {
        log(Level::Debug, event, fields);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_per_tool_and_in_total() {
        let stats = Stats::default();
        let big = CallRecord {
            bytes_in: 1000,
            bytes_out: 100,
            tokens_out: Some(40),
            offloaded: true,
            redactions: 2,
            elapsed: Duration::from_millis(30),
        };
        let small = CallRecord {
            bytes_in: 10,
            bytes_out: 10,
            tokens_out: None,
            offloaded: false,
            redactions: 0,
            elapsed: Duration::from_millis(2),
        };
        stats.record_call("tree", big);
        stats.record_call("echo", small);
        stats.record_call("echo", small);
        stats.record_error("timeout");
        stats.record_error("timeout");
        let json = stats.to_json();
        assert_eq!(json["calls"], 3);
        assert_eq!(json["bytes_from_upstream"], 1020);
        assert_eq!(json["bytes_to_client"], 120);
        assert_eq!(json["bytes_saved"], 900);
        assert_eq!(json["results_offloaded"], 1);
        assert_eq!(json["redactions"], 2);
        assert_eq!(json["errors"]["timeout"], 2);
        assert_eq!(json["per_tool"]["echo"]["calls"], 2);
        assert_eq!(json["per_tool"]["tree"]["bytes_saved"], 900);
        // Tokens only where a tool counted them (a token limit).
        assert_eq!(json["tokens_to_client"], 40);
        assert_eq!(json["per_tool"]["tree"]["tokens_to_client"], 40);
        assert!(json["per_tool"]["echo"].get("tokens_to_client").is_none());
        assert!(Stats::default().to_json().get("tokens_to_client").is_none());
        assert_eq!(stats.errors_of("timeout"), 2);
        assert!(
            stats.summary_line().contains("3 calls"),
            "{}",
            stats.summary_line()
        );
    }

    #[test]
    fn the_summary_line_counts_one_in_the_singular() {
        let stats = Stats::default();
        assert_eq!(
            stats.summary_line(),
            "envelope proxy: 0 calls, 0 bytes from upstream, 0 bytes to client (0 saved), 0 offloaded, 0 redactions, 0 errors"
        );
        stats.record_error("timeout");
        let line = stats.summary_line();
        assert!(line.ends_with(", 1 error"), "{line}");
        assert_eq!(counted(1, "call"), "1 call");
        assert_eq!(counted(2, "byte"), "2 bytes");
    }

    #[test]
    fn levels_parse_and_order() {
        assert_eq!("debug".parse::<log::Level>(), Ok(log::Level::Debug));
        assert!("loud".parse::<log::Level>().unwrap_err().contains("loud"));
        assert!(log::Level::Error < log::Level::Warn);
    }

    /// A secret in any string field, nested or not, is masked before the line is written.
    #[test]
    fn every_string_field_is_redacted() {
        let token = "ghp_0123456789abcdefABCDEF0123456789abcd";
        let ((), out) = log::capture(log::Level::Warn, || {
            log::warn(
                "upstream.invalid",
                &[
                    (
                        "start",
                        format!("{{\"Authorization: Bearer {token}\"").into(),
                    ),
                    ("lines", json!([format!("token={token}"), "plain"])),
                    ("bytes", 12.into()),
                ],
            );
        });
        assert!(!out.contains(token), "{out}");
        assert!(out.contains("Bearer ***"), "{out}");
        let line: Value = serde_json::from_str(out.trim()).unwrap();
        assert_eq!(line["lines"][1], "plain");
        assert_eq!(line["bytes"], 12);
    }

    #[test]
    fn the_bucket_drops_lines_beyond_the_rate_and_says_how_many() {
        let start = std::time::Instant::now();
        let mut limiter = log::Limiter::with(1000, 4000, start);
        let mut out = Vec::new();
        let line = json!({"event": "x", "pad": "y".repeat(80)});
        let size = line.to_string().len() + 1;
        for _ in 0..1000 {
            limiter.offer(line.clone(), start, &mut out);
        }
        // The burst went out, the rest was counted.
        let written = out.len();
        assert!(written <= 4000 && written > 4000 - size, "{written}");
        let sent = written / size;
        // A second later, 1000 bytes more: the count comes first, then the line.
        out.clear();
        limiter.offer(
            line.clone(),
            start + std::time::Duration::from_secs(1),
            &mut out,
        );
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 2, "{text}");
        assert_eq!(lines[0]["event"], "log.suppressed");
        assert_eq!(lines[0]["lines"], 1000 - sent as u64);
        assert_eq!(lines[0]["bytes"], ((1000 - sent) * size) as u64);
        assert_eq!(lines[1]["event"], "x");
        // Nothing pending: flush writes nothing.
        let mut rest = Vec::new();
        limiter.flush(&mut rest);
        assert!(rest.is_empty());
    }

    /// Issue 26: a flood of junk wrote 722 MB of log in 10 s.
    #[test]
    fn a_flood_of_lines_is_bounded_and_counted() {
        let started = std::time::Instant::now();
        let ((), out) = log::capture(log::Level::Warn, || {
            for i in 0..100_000 {
                log::warn(
                    "upstream.invalid",
                    &[("start", format!("junk line {i} {}", "z".repeat(60)).into())],
                );
            }
        });
        let elapsed = started.elapsed().as_secs_f64();
        let bound = log::BURST_BYTES as f64 + log::RATE_BYTES_PER_SEC as f64 * elapsed + 4096.0;
        assert!(
            (out.len() as f64) <= bound,
            "{} bytes in {elapsed:.1}s",
            out.len()
        );
        let lines: Vec<Value> = out
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        // The last line is the final count of what was dropped, unless the bucket had
        // refilled by the last line (a slow machine): then that line was written and
        // nothing was pending. Either way every line is written or counted.
        let (notices, written): (Vec<&Value>, Vec<&Value>) =
            lines.iter().partition(|l| l["event"] == "log.suppressed");
        assert!(!notices.is_empty(), "nothing was dropped: {}", out.len());
        let count = |key: &str| -> u64 { notices.iter().map(|n| n[key].as_u64().unwrap()).sum() };
        assert_eq!(count("lines") + written.len() as u64, 100_000);
        assert!(count("bytes") > 1_000_000, "{}", count("bytes"));
    }
}
