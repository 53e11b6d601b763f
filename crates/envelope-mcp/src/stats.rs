//! Counters of the proxy's work, for the summary on exit and `--stats FILE`, and the
//! proxy's structured logs on stderr ([`log`]).

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Value, json};

/// What the proxy did, shared by every session.
#[derive(Debug, Default)]
pub struct Stats {
    calls: AtomicU64,
    bytes_from_upstream: AtomicU64,
    bytes_to_client: AtomicU64,
    bytes_saved: AtomicU64,
    results_offloaded: AtomicU64,
    redactions: AtomicU64,
    /// Errors by kind (`upstream_exited`, `timeout`, `upstream_invalid_json`, …).
    errors: Mutex<BTreeMap<String, u64>>,
    per_tool: Mutex<BTreeMap<String, ToolStats>>,
}

/// What one `tools/call` result became, as shaping reports it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CallRecord {
    /// Bytes of the `result` member as the upstream sent it.
    pub bytes_in: u64,
    /// Bytes of the `result` member as the client got it.
    pub bytes_out: u64,
    /// Whether the full result went to the store.
    pub offloaded: bool,
    /// Secrets masked.
    pub redactions: u64,
}

/// The counters of one tool.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct ToolStats {
    calls: u64,
    bytes_from_upstream: u64,
    bytes_to_client: u64,
    results_offloaded: u64,
    redactions: u64,
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
        self.results_offloaded
            .fetch_add(u64::from(record.offloaded), Ordering::Relaxed);
        self.redactions
            .fetch_add(record.redactions, Ordering::Relaxed);
        let mut per_tool = self.per_tool.lock().unwrap_or_else(|e| e.into_inner());
        let entry = per_tool.entry(tool.to_string()).or_default();
        entry.calls += 1;
        entry.bytes_from_upstream += record.bytes_in;
        entry.bytes_to_client += record.bytes_out;
        entry.results_offloaded += u64::from(record.offloaded);
        entry.redactions += record.redactions;
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
    /// `bytes_saved`, `results_offloaded`, `redactions`, `errors` (by kind) and `per_tool`.
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
            .map(|(name, t)| {
                let saved = t.bytes_from_upstream.saturating_sub(t.bytes_to_client);
                let entry = json!({
                    "calls": t.calls,
                    "bytes_from_upstream": t.bytes_from_upstream,
                    "bytes_to_client": t.bytes_to_client,
                    "bytes_saved": saved,
                    "results_offloaded": t.results_offloaded,
                    "redactions": t.redactions,
                });
                (name.clone(), entry)
            })
            .collect();
        json!({
            "calls": load(&self.calls),
            "bytes_from_upstream": load(&self.bytes_from_upstream),
            "bytes_to_client": load(&self.bytes_to_client),
            "bytes_saved": load(&self.bytes_saved),
            "results_offloaded": load(&self.results_offloaded),
            "redactions": load(&self.redactions),
            "errors": errors,
            "per_tool": per_tool,
        })
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
            "envelope proxy: {} calls, {} bytes from upstream, {} bytes to client ({} saved), {} offloaded, {} redactions, {} errors",
            load(&self.calls),
            load(&self.bytes_from_upstream),
            load(&self.bytes_to_client),
            load(&self.bytes_saved),
            load(&self.results_offloaded),
            load(&self.redactions),
            errors,
        )
    }
}

/// Structured logs: one JSON object per line on stderr,
/// `{"level":"warn","event":"upstream.non_json","bytes":12,…}`, filtered by `--log-level`.
pub mod log {
    use std::io::Write as _;
    use std::sync::atomic::{AtomicU8, Ordering};

    use serde_json::Value;

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

    /// Sets the level for the whole process (default: warn).
    pub fn set_level(level: Level) {
        LEVEL.store(level as u8, Ordering::Relaxed);
    }

    /// Whether `level` is logged.
    pub fn enabled(level: Level) -> bool {
        level != Level::Off && level as u8 <= LEVEL.load(Ordering::Relaxed)
    }

    /// Logs `event` with `fields` at `level`.
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
        let mut text = Value::Object(line).to_string();
        text.push('\n');
        // One write per line so that lines of concurrent sessions do not interleave.
        let _ = std::io::stderr().lock().write_all(text.as_bytes());
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
            offloaded: true,
            redactions: 2,
        };
        let small = CallRecord {
            bytes_in: 10,
            bytes_out: 10,
            offloaded: false,
            redactions: 0,
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
        assert_eq!(stats.errors_of("timeout"), 2);
        assert!(
            stats.summary_line().contains("3 calls"),
            "{}",
            stats.summary_line()
        );
    }

    #[test]
    fn levels_parse_and_order() {
        assert_eq!("debug".parse::<log::Level>(), Ok(log::Level::Debug));
        assert!("loud".parse::<log::Level>().unwrap_err().contains("loud"));
        assert!(log::Level::Error < log::Level::Warn);
    }
}
