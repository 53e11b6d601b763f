//! A store that manages itself: `envelope proxy` and `envelope serve` with `--max-results`,
//! `--max-store-bytes` and `--ttl`, driven by the Python MCP SDK client in front of
//! server-everything (installed by scripts/install-mcp-tools.sh) and a command registry.
//! The store folder is listed after every answer: it never holds more than the caps.
//! Owner markers (`application/vnd.envelope.owner`) are not results and are not counted.

mod common;
mod serve_common;

use serve_common::{Killed, free_port, sdk_client, spawn, step_ok, tools, wait_until_listening};

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

/// Results over this limit are stored: every call's result below is.
const LIMIT: &str = "1024";

fn everything() -> Vec<String> {
    vec![
        tools::node22().display().to_string(),
        tools::npm("@modelcontextprotocol/server-everything/dist/index.js")
            .display()
            .to_string(),
        "stdio".into(),
    ]
}

/// `envelope proxy --store STORE --limit 1024 EXTRA… -- server-everything`.
fn proxy(store: &Path, extra: &[&str]) -> Vec<String> {
    let mut command = vec![
        env!("CARGO_BIN_EXE_envelope").to_string(),
        "proxy".into(),
        "--store".into(),
        store.display().to_string(),
        "--limit".into(),
        LIMIT.into(),
    ];
    command.extend(extra.iter().map(|s| s.to_string()));
    command.push("--".into());
    command.extend(everything());
    command
}

/// Runs tests/fixtures/store_limits_client.py: `calls` calls of `tool`, the store at
/// `store` looked at after each answer; its report.
fn many_calls(store: &Path, calls: usize, tool: &str, arg: &str, command: &[String]) -> Value {
    tools::python_module("mcp");
    let config = json!({
        "store": store, "calls": calls, "tool": tool, "arg": arg, "message_bytes": 3000,
    });
    let script =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/store_limits_client.py");
    let report = common::python_client(&script, &config.to_string(), command);
    assert_eq!(report["errors"], json!([]), "{}", report["errors"]);
    assert_eq!(report["calls"], calls, "every call answered");
    assert_eq!(
        report["stored"], calls,
        "every result stored (over --limit)"
    );
    report
}

fn uri(report: &Value, index: usize) -> String {
    report["uris"][index].as_str().unwrap().to_owned()
}

/// `envelope_read` of `uri`: a step of a plan.
fn read(uri: &str) -> Value {
    json!({"op": "call", "name": "envelope_read", "args": {"uri": uri, "pointer": "/content/0/text", "limit": 20}})
}

/// The text of a step's first content block.
fn text(step: &Value) -> &str {
    step["content"][0]["text"].as_str().unwrap_or_default()
}

fn assert_not_found(step: &Value) {
    assert_eq!(step["isError"], true, "{step}");
    assert!(text(step).contains("is not in the store"), "{step}");
}

fn assert_read(step: &Value) {
    assert_ne!(step["isError"], true, "{step}");
    assert!(step.to_string().contains("call "), "{step}");
}

#[test]
fn proxy_max_results_holds_over_a_thousand_calls() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let command = proxy(&store, &["--max-results", "20"]);
    let report = many_calls(&store, 1000, "echo", "message", &command);
    // Listed after each of the 1,000 answers: never more than 20 results, and full at the end.
    assert!(report["results_max"].as_u64().unwrap() <= 20, "{report:#}");
    assert_eq!(report["results_last"], 20);
    assert_eq!(report["markers_max"], 0, "no token: no owner markers");

    // The least recently used went first: the first result is gone, the last ones stay
    // (read by another proxy over the same store, with the same cap).
    let plan = json!([
        read(&uri(&report, 0)),
        read(&uri(&report, 999)),
        read(&uri(&report, 980))
    ]);
    let reads = sdk_client(&plan, &command, None);
    assert_not_found(step_ok(&reads, 0));
    assert_read(step_ok(&reads, 1));
    assert_read(step_ok(&reads, 2));
}

#[test]
fn proxy_max_store_bytes_holds_after_each_answer_and_counts_evictions() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let port = free_port();
    let listen = format!("127.0.0.1:{port}");
    let cap: u64 = 40_000;
    let cap_text = cap.to_string();
    let _proxy: Killed = spawn(&proxy(
        &store,
        &["--max-store-bytes", &cap_text, "--listen", &listen],
    ));
    wait_until_listening(port);
    let url = vec![format!("http://{listen}/mcp")];
    let calls = 300;
    let report = many_calls(&store, calls, "echo", "message", &url);
    let bytes_max = report["bytes_max"].as_u64().unwrap();
    assert!(bytes_max <= cap, "{bytes_max} bytes > {cap}");
    // Each result is about 3 KB: the cap holds about a dozen, and the store is full.
    let kept = report["results_last"].as_u64().unwrap();
    assert!((8..=14).contains(&kept), "{kept} results kept");
    assert!(report["bytes_last"].as_u64().unwrap() > cap - 4_000);

    // Every result evicted is counted in /metrics.
    let metrics = http_get(port, "/metrics");
    let evicted = metric(
        &metrics,
        "envelope_store_evictions_total{reason=\"evicted\"}",
    );
    assert_eq!(evicted, calls as u64 - kept, "{metrics}");
    assert_eq!(
        metric(
            &metrics,
            "envelope_store_evictions_total{reason=\"expired\"}"
        ),
        0
    );
}

#[test]
fn proxy_ttl_expires_idle_results_and_keeps_those_read() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let command = proxy(&store, &["--ttl", "2"]);
    let call = |n: usize| {
        let message = format!("call {n} {}", "x".repeat(3000));
        json!({"op": "call", "name": "echo", "args": {"message": message}})
    };
    let mut plan = vec![call(0), call(1)];
    // Result 1 is read every half second for 3 s; result 0 is left alone.
    for _ in 0..6 {
        plan.push(json!({"op": "sleep", "seconds": 0.5}));
        plan.push(json!({"op": "call", "name": "envelope_read", "uri_from": 1, "args": {"pointer": "/content/0/text", "limit": 20}}));
    }
    plan.push(json!({"op": "call", "name": "envelope_read", "uri_from": 0, "args": {"pointer": "/content/0/text", "limit": 20}}));
    plan.push(json!({"op": "call", "name": "envelope_read", "uri_from": 1, "args": {"pointer": "/content/0/text", "limit": 20}}));
    let report = sdk_client(&json!(plan), &command, None);
    let steps = report["steps"].as_array().unwrap();
    for index in [2 + 1, 2 + 11] {
        assert_read(step_ok(&report, index));
    }
    // Idle for 3 s, past the 2 s TTL (the sweep runs every 0.5 s): gone, "not found".
    assert_not_found(step_ok(&report, steps.len() - 2));
    // Read 0.5 s ago: still there.
    assert_read(step_ok(&report, steps.len() - 1));
    let blobs = std::fs::read_dir(store.join("sha256"))
        .unwrap()
        .filter(|e| {
            let name = e.as_ref().unwrap().file_name();
            name.to_str().is_some_and(|n| n.len() == 64)
        })
        .count();
    assert_eq!(blobs, 1, "one result left in the store");
}

#[test]
fn limits_of_zero_and_junk_are_refused_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    for (flag, value, says) in [
        ("--ttl", "0", "--ttl 0: every result would be removed"),
        (
            "--max-results",
            "0",
            "--max-results 0: every result would be removed",
        ),
        ("--max-store-bytes", "lots", "--max-store-bytes"),
    ] {
        let output = Command::new(env!("CARGO_BIN_EXE_envelope"))
            .args([
                "proxy",
                "--store",
                store.to_str().unwrap(),
                flag,
                value,
                "--",
                "true",
            ])
            .env_remove("ENVELOPE_STORE")
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2), "{flag} {value}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(says), "{flag} {value}: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

#[test]
fn serve_honours_max_results() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let registry = dir.path().join("registry.toml");
    // `cat` answers with its input: the call's arguments, over --limit.
    std::fs::write(
        &registry,
        r#"[commands.echo.big]
command = ["cat"]
type = "query"
description = "Echoes its input"

[commands.echo.big.inputSchema]
type = "object"
properties = { message = { type = "string" } }
"#,
    )
    .unwrap();
    let command: Vec<String> = [
        env!("CARGO_BIN_EXE_envelope"),
        "serve",
        "--registry",
        registry.to_str().unwrap(),
        "--store",
        store.to_str().unwrap(),
        "--limit",
        LIMIT,
        "--max-results",
        "5",
    ]
    .map(String::from)
    .to_vec();
    let report = many_calls(&store, 100, "echo_big", "message", &command);
    assert!(report["results_max"].as_u64().unwrap() <= 5, "{report:#}");
    assert_eq!(report["results_last"], 5);
    let plan = json!([read(&uri(&report, 0)), read(&uri(&report, 99))]);
    let reads = sdk_client(&plan, &command, None);
    assert_not_found(step_ok(&reads, 0));
    assert_read(step_ok(&reads, 1));
}

/// `GET path` on 127.0.0.1:`port`: the body.
fn http_get(port: u16, path: &str) -> String {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    response
}

/// The value of the sample `name` (with its labels) in an exposition.
fn metric(exposition: &str, name: &str) -> u64 {
    exposition
        .lines()
        .find_map(|line| line.strip_prefix(name)?.trim().parse().ok())
        .unwrap_or_else(|| panic!("no {name} in {exposition}"))
}
