//! [`Stats`] in the Prometheus text exposition format 0.0.4, for `GET /metrics`.
//!
//! Written by hand: the format is lines of `name{label="value"} number` under a `# HELP`
//! and a `# TYPE` line per family. Label values escape `\`, `"` and newline
//! (`\\`, `\"`, `\n`), HELP texts `\` and newline.
//!
//! The families (counters end in `_total`):
//!
//! | family | labels | what |
//! |---|---|---|
//! | `envelope_calls_total` | | tool calls answered with a result (`--stats`' `calls`) |
//! | `envelope_errors_total` | `kind` | errors by kind (`--stats`' `errors`) |
//! | `envelope_bytes_from_upstream_total`, `envelope_bytes_to_client_total`, `envelope_tokens_to_client_total`, `envelope_bytes_saved_total`, `envelope_results_offloaded_total`, `envelope_redactions_total` | | as in `--stats` |
//! | `envelope_reads_total` | `via` | stored results read and searched: `envelope_read`, `resources/read`, `http`, `envelope_search`, `envelope_list` |
//! | `envelope_store_evictions_total` | `reason` | stored results removed by the store's limits while running: `expired` (idle past `--ttl`), `evicted` (least recently used, over `--max-store-bytes` or `--max-results`) |
//! | `envelope_tool_calls_total`, `envelope_tool_errors_total`, `envelope_tool_bytes_from_upstream_total`, `envelope_tool_bytes_to_client_total`, `envelope_tool_bytes_saved_total`, `envelope_tool_results_offloaded_total`, `envelope_tool_redactions_total` | `tool` | the same per tool |
//! | `envelope_tool_call_duration_seconds` | `tool`, `le` | histogram of each counted call's latency, buckets [`LATENCY_BUCKETS`] and `+Inf` |

use std::fmt::Write as _;
use std::sync::atomic::Ordering;

use super::{Stats, ToolStats};

/// The `Content-Type` of `GET /metrics`.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// The upper bounds (seconds) of the latency histogram's buckets; `+Inf` follows.
/// Prometheus' defaults, and 30, 60 and 120 s (serve's default timeout).
pub const LATENCY_BUCKETS: [f64; 14] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0,
];

impl Stats {
    /// The counters as a Prometheus text exposition (format 0.0.4): see the module
    /// `stats::prometheus` for the families.
    pub fn to_prometheus(&self) -> String {
        let load = |counter: &std::sync::atomic::AtomicU64| counter.load(Ordering::Relaxed);
        let mut out = String::new();
        let totals = [
            (
                "envelope_calls_total",
                "Tool calls answered with a result.",
                load(&self.calls),
            ),
            (
                "envelope_bytes_from_upstream_total",
                "Bytes of tool results as the upstream gave them.",
                load(&self.bytes_from_upstream),
            ),
            (
                "envelope_bytes_to_client_total",
                "Bytes of tool results as the client got them.",
                load(&self.bytes_to_client),
            ),
            (
                "envelope_tokens_to_client_total",
                "Tokens of tool results as the client got them, for tools with a token limit (each counted by its tokenizer).",
                load(&self.tokens_to_client),
            ),
            (
                "envelope_bytes_saved_total",
                "Bytes from upstream minus bytes to client.",
                load(&self.bytes_saved),
            ),
            (
                "envelope_results_offloaded_total",
                "Tool results stored whole and cut to the limit.",
                load(&self.results_offloaded),
            ),
            (
                "envelope_redactions_total",
                "Secrets masked in tool results.",
                load(&self.redactions),
            ),
        ];
        for (name, help, value) in totals {
            header(&mut out, name, help, "counter");
            let _ = writeln!(out, "{name} {value}");
        }
        let errors = self
            .errors
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        header(
            &mut out,
            "envelope_errors_total",
            "Errors by kind.",
            "counter",
        );
        for (kind, count) in &errors {
            let _ = writeln!(
                out,
                "envelope_errors_total{{kind=\"{}\"}} {count}",
                escape_label(kind)
            );
        }
        let reads = self.reads.lock().unwrap_or_else(|e| e.into_inner()).clone();
        header(
            &mut out,
            "envelope_reads_total",
            "Reads and searches of stored results, by way (envelope_read, resources/read, http, envelope_search, envelope_list).",
            "counter",
        );
        for (via, count) in &reads {
            let _ = writeln!(
                out,
                "envelope_reads_total{{via=\"{}\"}} {count}",
                escape_label(via)
            );
        }
        let evictions = self
            .evictions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        header(
            &mut out,
            "envelope_store_evictions_total",
            "Stored results removed by the store's limits, by reason (expired, evicted).",
            "counter",
        );
        // Both reasons always, 0 until the first: a rate over them needs the series.
        for reason in ["evicted", "expired"] {
            let count = evictions.get(reason).copied().unwrap_or(0);
            let _ = writeln!(
                out,
                "envelope_store_evictions_total{{reason=\"{reason}\"}} {count}"
            );
        }
        let per_tool = self
            .per_tool
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        type Of = fn(&ToolStats) -> u64;
        let tool_counters: [(&str, &str, Of); 7] = [
            (
                "envelope_tool_calls_total",
                "Calls of a tool answered with a result.",
                |t| t.calls,
            ),
            (
                "envelope_tool_errors_total",
                "Errors of a tool's calls.",
                |t| t.errors,
            ),
            (
                "envelope_tool_bytes_from_upstream_total",
                "Bytes of a tool's results as the upstream gave them.",
                |t| t.bytes_from_upstream,
            ),
            (
                "envelope_tool_bytes_to_client_total",
                "Bytes of a tool's results as the client got them.",
                |t| t.bytes_to_client,
            ),
            (
                "envelope_tool_bytes_saved_total",
                "Bytes of a tool's results from upstream minus to client.",
                |t| t.bytes_from_upstream.saturating_sub(t.bytes_to_client),
            ),
            (
                "envelope_tool_results_offloaded_total",
                "A tool's results stored whole and cut to the limit.",
                |t| t.results_offloaded,
            ),
            (
                "envelope_tool_redactions_total",
                "Secrets masked in a tool's results.",
                |t| t.redactions,
            ),
        ];
        for (name, help, of) in tool_counters {
            header(&mut out, name, help, "counter");
            for (tool, stats) in &per_tool {
                let _ = writeln!(
                    out,
                    "{name}{{tool=\"{}\"}} {}",
                    escape_label(tool),
                    of(stats)
                );
            }
        }
        let name = "envelope_tool_call_duration_seconds";
        header(
            &mut out,
            name,
            "Latency of a tool's calls answered with a result, from request to answer.",
            "histogram",
        );
        for (tool, stats) in per_tool.iter().filter(|(_, t)| t.calls > 0) {
            let tool = escape_label(tool);
            let histogram = &stats.latency;
            let mut cumulative = 0;
            for (at, count) in histogram.counts.iter().enumerate() {
                cumulative += count;
                let le = LATENCY_BUCKETS
                    .get(at)
                    .map_or_else(|| "+Inf".to_owned(), |le| le.to_string());
                let _ = writeln!(
                    out,
                    "{name}_bucket{{tool=\"{tool}\",le=\"{le}\"}} {cumulative}"
                );
            }
            let _ = writeln!(out, "{name}_sum{{tool=\"{tool}\"}} {}", histogram.sum);
            let _ = writeln!(out, "{name}_count{{tool=\"{tool}\"}} {cumulative}");
        }
        out
    }
}

/// The `# HELP` and `# TYPE` lines of a family.
fn header(out: &mut String, name: &str, help: &str, kind: &str) {
    let help = help.replace('\\', "\\\\").replace('\n', "\\n");
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} {kind}");
}

/// A label value as the format writes it: `\`, `"` and newline escaped.
fn escape_label(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::super::CallRecord;
    use super::*;

    #[test]
    fn label_values_are_escaped() {
        assert_eq!(escape_label("a\\b\"c\nd"), "a\\\\b\\\"c\\nd");
        assert_eq!(escape_label("plain.tool"), "plain.tool");
    }

    #[test]
    fn buckets_are_cumulative_and_end_in_inf() {
        let stats = Stats::default();
        for ms in [1, 20, 20, 700, 200_000] {
            let record = CallRecord {
                bytes_in: 10,
                bytes_out: 5,
                elapsed: Duration::from_millis(ms),
                ..CallRecord::default()
            };
            stats.record_call("we\"ird\ntool", record);
        }
        stats.record_tool_error("other", "timeout");
        let text = stats.to_prometheus();
        let bucket = |le: &str| {
            let prefix = format!(
                "envelope_tool_call_duration_seconds_bucket{{tool=\"we\\\"ird\\ntool\",le=\"{le}\"}} "
            );
            text.lines()
                .find_map(|l| l.strip_prefix(&prefix))
                .unwrap_or_else(|| panic!("{prefix} in {text}"))
                .parse::<u64>()
                .unwrap()
        };
        assert_eq!(bucket("0.005"), 1);
        assert_eq!(bucket("0.025"), 3);
        assert_eq!(bucket("1"), 4);
        assert_eq!(bucket("120"), 4);
        assert_eq!(bucket("+Inf"), 5);
        assert!(text.contains("envelope_calls_total 5\n"), "{text}");
        assert!(text.contains("envelope_bytes_saved_total 25\n"), "{text}");
        assert!(text.contains("envelope_errors_total{kind=\"timeout\"} 1\n"));
        assert!(text.contains("envelope_tool_errors_total{tool=\"other\"} 1\n"));
        assert!(text.contains("envelope_tool_calls_total{tool=\"other\"} 0\n"));
        // A tool with no call has no histogram; `--stats` does not list it.
        assert!(!text.contains("_count{tool=\"other\"}"), "{text}");
        assert!(stats.to_json()["per_tool"].get("other").is_none());
        assert!(text.contains("# TYPE envelope_tool_call_duration_seconds histogram\n"));
    }
}
