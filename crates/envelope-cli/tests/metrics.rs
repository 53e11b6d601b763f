//! `GET /metrics` of `envelope proxy --listen` and `envelope serve --http`: the real binary
//! serves calls, then its exposition is read by the Prometheus text parser of the PyPI
//! package prometheus-client (installed by scripts/install-mcp-tools.sh), and the parsed
//! values must be the calls made, the same numbers `--stats` writes.

mod serve_common;

use serve_common::{fixture, free_port, tools, wait_until_listening};

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::{Value, json};

/// A bearer token of the tests (16 characters or more).
const TOKEN: &str = "metrics-token-0123456789";

/// A process killed and reaped when dropped (unless it ended first).
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start(args: &[String], env: &[(&str, &str)]) -> Running {
    let mut command = Command::new(env!("CARGO_BIN_EXE_envelope"));
    command
        .args(args)
        .env_remove("ENVELOPE_STORE")
        .env_remove("ENVELOPE_TOKEN")
        .env_remove("ENVELOPE_TOKENS")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    for (key, value) in env {
        command.env(key, value);
    }
    Running(command.spawn().expect("envelope starts"))
}

/// Runs tests/fixtures/metrics_client.py with `plan`: its report.
fn metrics_client(plan: &Value) -> Value {
    tools::python_module("prometheus_client");
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/metrics_client.py");
    let output = Command::new("python3")
        .arg(script)
        .arg(plan.to_string())
        .output()
        .expect("python3 runs");
    assert!(
        output.status.success(),
        "the metrics client failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

/// The parsed exposition: (sample name, labels) → value, and the families' types.
struct Parsed {
    samples: Vec<(String, Value, f64)>,
    types: Vec<(String, String)>,
}

impl Parsed {
    fn of(report: &Value) -> Parsed {
        let metrics = &report["metrics"];
        assert_eq!(metrics["status"], 200, "{metrics}");
        assert_eq!(
            metrics["content_type"], "text/plain; version=0.0.4; charset=utf-8",
            "{metrics}"
        );
        let mut samples = Vec::new();
        let mut types = Vec::new();
        for family in metrics["families"].as_array().unwrap() {
            let name = family["name"].as_str().unwrap().to_owned();
            types.push((name, family["type"].as_str().unwrap().to_owned()));
            for sample in family["samples"].as_array().unwrap() {
                samples.push((
                    sample["name"].as_str().unwrap().to_owned(),
                    sample["labels"].clone(),
                    sample["value"].as_f64().unwrap(),
                ));
            }
        }
        Parsed { samples, types }
    }

    /// The value of sample `name` with exactly `labels`; 0 when absent.
    fn value(&self, name: &str, labels: Value) -> f64 {
        self.samples
            .iter()
            .find(|(n, l, _)| n == name && *l == labels)
            .map_or(0.0, |(_, _, v)| *v)
    }

    fn total(&self, name: &str) -> f64 {
        self.value(name, json!({}))
    }

    fn tool(&self, name: &str, tool: &str) -> f64 {
        self.value(name, json!({ "tool": tool }))
    }

    fn type_of(&self, family: &str) -> &str {
        self.types
            .iter()
            .find(|(n, _)| n == family)
            .map_or("", |(_, t)| t.as_str())
    }

    /// The tools of the latency histogram, each checked: cumulative buckets ending in
    /// `+Inf` = `_count` = the tool's calls.
    fn check_histograms(&self) -> Vec<String> {
        let name = "envelope_tool_call_duration_seconds";
        assert_eq!(self.type_of(name), "histogram");
        let mut tools: Vec<String> = self
            .samples
            .iter()
            .filter(|(n, _, _)| n == &format!("{name}_count"))
            .map(|(_, l, _)| l["tool"].as_str().unwrap().to_owned())
            .collect();
        tools.sort();
        for tool in &tools {
            let buckets: Vec<(f64, f64)> = self
                .samples
                .iter()
                .filter(|(n, l, _)| n == &format!("{name}_bucket") && l["tool"] == *tool)
                .map(|(_, l, v)| {
                    let le = l["le"].as_str().unwrap();
                    let le = if le == "+Inf" {
                        f64::INFINITY
                    } else {
                        le.parse().unwrap()
                    };
                    (le, *v)
                })
                .collect();
            assert_eq!(buckets.len(), 15, "{tool}: {buckets:?}");
            for pair in buckets.windows(2) {
                assert!(pair[0].0 < pair[1].0, "{tool}: bounds in order {buckets:?}");
                assert!(pair[0].1 <= pair[1].1, "{tool}: cumulative {buckets:?}");
            }
            let (last, inf) = buckets[buckets.len() - 1];
            assert!(last.is_infinite());
            let count = self.tool(&format!("{name}_count"), tool);
            assert_eq!(inf, count, "{tool}: +Inf is the count");
            assert_eq!(
                count,
                self.tool("envelope_tool_calls_total", tool),
                "{tool}: one observation per call"
            );
            assert!(self.tool(&format!("{name}_sum"), tool) >= 0.0);
        }
        tools
    }
}

fn read_stats(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).expect("--stats is written on exit")).unwrap()
}

/// Ends `process` with SIGTERM (its `--stats` is written then) and waits for it.
fn terminate(process: &mut Running) {
    let pid = process.0.id().to_string();
    let killed = Command::new("kill").args(["-TERM", &pid]).status().unwrap();
    assert!(killed.success());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while process.0.try_wait().unwrap().is_none() {
        assert!(std::time::Instant::now() < deadline, "it did not end");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

#[test]
fn proxy_listen_metrics_count_the_calls_made() {
    tools::python_module("mcp");
    let dir = tempfile::tempdir().unwrap();
    let (store, stats) = (dir.path().join("store"), dir.path().join("stats.json"));
    let port = free_port();
    let upstream = fixture("http/conformance_server.py");
    let args: Vec<String> = [
        "proxy",
        "--store",
        store.to_str().unwrap(),
        "--stats",
        stats.to_str().unwrap(),
        "--timeout",
        "3",
        "--listen",
        &format!("127.0.0.1:{port}"),
        "--",
        "python3",
        upstream.to_str().unwrap(),
        "stdio",
    ]
    .map(String::from)
    .to_vec();
    let mut proxy = start(&args, &[]);
    wait_until_listening(port);
    let call = |name: &str, arguments: Value| json!(["tools/call", {"name": name, "arguments": arguments}]);
    let plan = json!({
        "base": format!("http://127.0.0.1:{port}"),
        "mcp": [
            // Over the 16384-byte limit: stored whole and cut.
            call("big_text", json!({"size": 100_000})),
            call("test_simple_text", json!({})),
            call("test_simple_text", json!({})),
            // An `isError` result: a call answered with a result.
            call("test_error_handling", json!({})),
            // Asks the client's LLM, which never answers: --timeout, an error.
            call("test_sampling", json!({"prompt": "hi"})),
            call("envelope_read", json!({"uri": "$artifact", "pointer": "/content/0/text", "limit": 10})),
            ["resources/read", {"uri": "$artifact"}],
            call("envelope_search", json!({"query": "xxxxxxxxxx"})),
            call("envelope_list", json!({})),
        ],
    });
    let report = metrics_client(&plan);
    let answers = report["answers"].as_array().unwrap();
    assert!(
        answers[0].to_string().contains("envelope://artifact/"),
        "{}",
        answers[0]
    );
    assert_eq!(answers[3]["result"]["isError"], true, "{}", answers[3]);
    assert_eq!(answers[4]["error"]["code"], -32001, "{}", answers[4]);
    assert_eq!(
        answers[5]["result"]["structuredContent"]["text"], "xxxxxxxxxx",
        "{}",
        answers[5]
    );
    assert!(
        answers[6]["result"]["contents"].is_array(),
        "{}",
        answers[6]
    );

    let parsed = Parsed::of(&report);
    assert_eq!(parsed.type_of("envelope_calls"), "counter");
    assert_eq!(parsed.total("envelope_calls_total"), 4.0);
    assert_eq!(parsed.tool("envelope_tool_calls_total", "big_text"), 1.0);
    assert_eq!(
        parsed.tool("envelope_tool_calls_total", "test_simple_text"),
        2.0
    );
    assert_eq!(
        parsed.tool("envelope_tool_calls_total", "test_error_handling"),
        1.0
    );
    assert_eq!(
        parsed.tool("envelope_tool_calls_total", "test_sampling"),
        0.0
    );
    assert_eq!(
        parsed.value("envelope_errors_total", json!({"kind": "timeout"})),
        1.0
    );
    assert_eq!(
        parsed.tool("envelope_tool_errors_total", "test_sampling"),
        1.0
    );
    assert_eq!(parsed.tool("envelope_tool_errors_total", "big_text"), 0.0);
    assert_eq!(parsed.total("envelope_results_offloaded_total"), 1.0);
    assert_eq!(
        parsed.tool("envelope_tool_results_offloaded_total", "big_text"),
        1.0
    );
    assert!(parsed.tool("envelope_tool_bytes_saved_total", "big_text") > 80_000.0);
    assert_eq!(
        parsed.total("envelope_bytes_saved_total"),
        parsed.total("envelope_bytes_from_upstream_total")
            - parsed.total("envelope_bytes_to_client_total")
    );
    assert_eq!(
        parsed.value("envelope_reads_total", json!({"via": "envelope_read"})),
        1.0
    );
    assert_eq!(
        parsed.value("envelope_reads_total", json!({"via": "resources/read"})),
        1.0
    );
    // Searches and lists of the stored results, counted by their own `via`.
    assert!(
        answers[7]["result"]["structuredContent"].is_object(),
        "{}",
        answers[7]
    );
    assert!(
        answers[8]["result"]["structuredContent"].is_object(),
        "{}",
        answers[8]
    );
    for via in ["envelope_search", "envelope_list"] {
        assert_eq!(
            parsed.value("envelope_reads_total", json!({"via": via})),
            1.0,
            "{via}"
        );
    }
    assert_eq!(
        parsed.check_histograms(),
        ["big_text", "test_error_handling", "test_simple_text"]
    );

    // The same numbers as --stats, which is written when the proxy ends.
    terminate(&mut proxy);
    let stats = read_stats(&stats);
    for (key, metric) in [
        ("calls", "envelope_calls_total"),
        ("bytes_from_upstream", "envelope_bytes_from_upstream_total"),
        ("bytes_to_client", "envelope_bytes_to_client_total"),
        ("bytes_saved", "envelope_bytes_saved_total"),
        ("results_offloaded", "envelope_results_offloaded_total"),
        ("redactions", "envelope_redactions_total"),
    ] {
        assert_eq!(
            stats[key].as_f64(),
            Some(parsed.total(metric)),
            "{key}: {stats}"
        );
    }
    assert_eq!(stats["errors"], json!({"timeout": 1}), "{stats}");
    assert_eq!(stats["per_tool"]["test_simple_text"]["calls"], 2, "{stats}");
    assert!(stats["per_tool"].get("test_sampling").is_none(), "{stats}");
}

#[test]
fn proxy_metrics_ask_for_the_token_mcp_asks_for() {
    let port = free_port();
    let args: Vec<String> = [
        "proxy",
        "--listen",
        &format!("127.0.0.1:{port}"),
        "--",
        "cat",
    ]
    .map(String::from)
    .to_vec();
    let _proxy = start(&args, &[("ENVELOPE_TOKEN", TOKEN)]);
    wait_until_listening(port);
    let report =
        metrics_client(&json!({"base": format!("http://127.0.0.1:{port}"), "token": TOKEN}));
    assert_eq!(report["unauthorized"], 401, "{report}");
    let parsed = Parsed::of(&report);
    assert_eq!(parsed.total("envelope_calls_total"), 0.0);
    assert!(parsed.check_histograms().is_empty());
}

#[test]
fn serve_http_metrics_count_the_calls_made_behind_the_token() {
    let dir = tempfile::tempdir().unwrap();
    let registry = dir.path().join("envelope.toml");
    std::fs::write(
        &registry,
        r#"
[commands.text.upper]
command = ["tr", "a-z", "A-Z"]
type = "query"
inputSchema = { type = "string" }

[commands.data.rows]
command = ["python3", "-c", "import json; print(json.dumps({'rows': [{'id': i, 'name': 'row %d' % i} for i in range(3000)]}))"]
type = "query"

[commands.fail.always]
command = ["sh", "-c", "echo broken >&2; exit 3"]
type = "query"
"#,
    )
    .unwrap();
    let tokens = dir.path().join("tokens.json");
    std::fs::write(
        &tokens,
        json!({ TOKEN: {"id": "ops", "scopes": []} }).to_string(),
    )
    .unwrap();
    let (store, stats) = (dir.path().join("store"), dir.path().join("stats.json"));
    let (http, listen) = (free_port(), free_port());
    let args: Vec<String> = [
        "serve",
        "--registry",
        registry.to_str().unwrap(),
        "--store",
        store.to_str().unwrap(),
        "--stats",
        stats.to_str().unwrap(),
        "--tokens",
        tokens.to_str().unwrap(),
        "--http",
        &format!("127.0.0.1:{http}"),
        "--listen",
        &format!("127.0.0.1:{listen}"),
    ]
    .map(String::from)
    .to_vec();
    let mut serve = start(&args, &[]);
    wait_until_listening(http);
    wait_until_listening(listen);
    let plan = json!({
        "base": format!("http://127.0.0.1:{http}"),
        "token": TOKEN,
        "ops": [
            ["text.upper", "hello"],
            ["text.upper", "again"],
            ["data.rows", {}],
            ["fail.always", {}],
        ],
    });
    let report = metrics_client(&plan);
    assert_eq!(report["unauthorized"], 401, "{report}");
    let answers = report["answers"].as_array().unwrap();
    assert_eq!(answers[0]["status"], 200, "{}", answers[0]);
    assert!(
        answers[0]["body"].to_string().contains("HELLO"),
        "{}",
        answers[0]
    );
    assert_eq!(answers[2]["status"], 200);
    assert!(
        answers[2]["body"]["meta"]["artifact"].is_string(),
        "{}",
        answers[2]
    );
    assert!(
        answers[3]["status"].as_u64().unwrap() >= 400,
        "{}",
        answers[3]
    );
    let code = answers[3]["body"]["code"].as_str().unwrap().to_owned();

    let parsed = Parsed::of(&report);
    assert_eq!(parsed.total("envelope_calls_total"), 3.0);
    assert_eq!(parsed.tool("envelope_tool_calls_total", "text_upper"), 2.0);
    assert_eq!(parsed.tool("envelope_tool_calls_total", "data_rows"), 1.0);
    assert_eq!(parsed.tool("envelope_tool_calls_total", "fail_always"), 0.0);
    assert_eq!(
        parsed.value("envelope_errors_total", json!({"kind": code})),
        1.0
    );
    assert_eq!(
        parsed.tool("envelope_tool_errors_total", "fail_always"),
        1.0
    );
    assert_eq!(parsed.total("envelope_results_offloaded_total"), 1.0);
    assert_eq!(
        parsed.tool("envelope_tool_results_offloaded_total", "data_rows"),
        1.0
    );
    assert!(parsed.tool("envelope_tool_bytes_saved_total", "data_rows") > 50_000.0);
    assert_eq!(parsed.check_histograms(), ["data_rows", "text_upper"]);

    // The MCP endpoint (--listen) shows the same counters, behind the same token.
    let listened =
        metrics_client(&json!({"base": format!("http://127.0.0.1:{listen}"), "token": TOKEN}));
    assert_eq!(listened["unauthorized"], 401, "{listened}");
    assert_eq!(Parsed::of(&listened).total("envelope_calls_total"), 3.0);

    terminate(&mut serve);
    let stats = read_stats(&stats);
    assert_eq!(stats["calls"], 3, "{stats}");
    assert_eq!(
        stats["bytes_saved"].as_f64(),
        Some(parsed.total("envelope_bytes_saved_total")),
        "{stats}"
    );
    assert_eq!(stats["errors"][&code], 1, "{stats}");
}
