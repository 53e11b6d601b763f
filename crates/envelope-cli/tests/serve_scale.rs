//! Scale out (issue 15, item 5): two `envelope serve` instances share one S3-compatible store
//! (moto) and dispatch every call to two `envelope ops worker` processes over NATS
//! (nats-server), all on 127.0.0.1. A result stored through one instance is read through
//! the other; calls run on the workers (both of them), never in the instances; a worker's
//! offloaded payload (its own `--limit`) reaches clients whole. docs/serve.md describes the
//! deployment this mirrors.

// nats_common and serve_common each include the tools finder of envelope-mcp's tests.
#![allow(clippy::duplicate_mod)]

mod common;
#[path = "../../envelope-ops/tests/nats_common/mod.rs"]
mod nats_common;
mod serve_common;

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};

use common::moto::{Moto, http, s3_env};
use nats_common::NatsServer;
use serde_json::{Value, json};
use serve_common::{Killed, free_port, sdk_client, step_ok, wait_until_listening};

const SECRET: &str = "ghp_0123456789abcdefghijklmnopqrstuvwxyz";

fn registry(dir: &Path) -> std::path::PathBuf {
    let text = format!(
        r#"
[commands.sys.pid]
command = ["sh", "-c", "echo \"{{\\\"pid\\\": $PPID}}\""]
type = "query"
outputSchema = {{ type = "object", properties = {{ pid = {{ type = "integer" }} }}, required = ["pid"] }}

[commands.data.rows]
command = ["python3", "-c", "import json; print(json.dumps({{'rows': [{{'id': i, 'token': '{SECRET}'}} for i in range(3000)]}}))"]
type = "query"
outputSchema = {{ type = "object", properties = {{ rows = {{ type = "array" }} }}, required = ["rows"] }}

[commands.admin.wipe]
command = ["echo", "{{\"wiped\": true}}"]
accessControl = {{ requiredScopes = ["admin"] }}
"#
    );
    let path = dir.join("envelope.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// `envelope ARGS…` with the S3 store's environment, stdin closed.
fn envelope(args: &[String], endpoint: &str) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_envelope"));
    command
        .args(args)
        .envs(s3_env(endpoint))
        .env_remove("ENVELOPE_STORE")
        .stdin(Stdio::null());
    command
}

/// A worker with its own `--limit` (payloads over it go to the shared store), once ready.
fn worker(registry: &Path, nats: &str, store: &str, endpoint: &str) -> (Killed, u32) {
    let args: Vec<String> = [
        "ops", "worker", "--nats", nats, "--limit", "8192", "--store", store,
    ]
    .iter()
    .map(|s| s.to_string())
    .chain(["--registry".into(), registry.display().to_string()])
    .collect();
    let mut child = envelope(&args, endpoint)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let ready = lines.next().expect("the worker said something").unwrap();
    assert!(ready.contains("worker ready"), "{ready}");
    // Its stderr drained (shown with --nocapture), so that it never blocks or breaks.
    std::thread::spawn(move || {
        lines
            .map_while(Result::ok)
            .for_each(|l| eprintln!("worker: {l}"))
    });
    let pid = child.id();
    (Killed(child), pid)
}

/// A serve instance: MCP at `/mcp` on one port, the HTTP view on another.
struct Instance {
    _process: Killed,
    mcp: String,
    http: String,
}

fn instance(registry: &Path, nats: &str, store: &str, endpoint: &str) -> Instance {
    let (mcp_port, http_port) = (free_port(), free_port());
    let args: Vec<String> = [
        "serve",
        "--nats",
        nats,
        "--store",
        store,
        "--listen",
        &format!("127.0.0.1:{mcp_port}"),
        "--http",
        &format!("127.0.0.1:{http_port}"),
        "--limit",
        "4096",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain(["--registry".into(), registry.display().to_string()])
    .collect();
    let child = envelope(&args, endpoint)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_until_listening(mcp_port);
    wait_until_listening(http_port);
    Instance {
        _process: Killed(child),
        mcp: format!("http://127.0.0.1:{mcp_port}/mcp"),
        http: format!("http://127.0.0.1:{http_port}"),
    }
}

/// `POST` or `GET` with Python's urllib (no HTTP client crate in this test): status, body.
fn fetch(method: &str, url: &str, body: Option<&Value>) -> (u16, Vec<u8>) {
    let script = r#"
import sys, urllib.request, urllib.error
method, url, body = sys.argv[1], sys.argv[2], sys.argv[3]
data = body.encode() if body else None
request = urllib.request.Request(url, data=data, method=method, headers={"content-type": "application/json"})
try:
    answer = urllib.request.urlopen(request, timeout=60)
    status, payload = answer.status, answer.read()
except urllib.error.HTTPError as e:
    status, payload = e.code, e.read()
sys.stdout.write(str(status) + "\n")
sys.stdout.flush()
sys.stdout.buffer.write(payload)
"#;
    let body = body.map(Value::to_string).unwrap_or_default();
    let output = Command::new("python3")
        .args(["-c", script, method, url, &body])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let split = output.stdout.iter().position(|&b| b == b'\n').unwrap();
    let status = std::str::from_utf8(&output.stdout[..split])
        .unwrap()
        .parse()
        .unwrap();
    (status, output.stdout[split + 1..].to_vec())
}

#[test]
fn two_instances_share_one_store_and_two_workers() {
    let moto = Moto::start();
    assert_eq!(http(moto.port, "PUT", "/envelope-serve", b""), Some(200));
    let endpoint = moto.endpoint();
    let store = "s3://envelope-serve/shared";
    let nats = NatsServer::start();
    let dir = tempfile::tempdir().unwrap();
    let registry = registry(dir.path());

    let (_w1, pid1) = worker(&registry, &nats.url(), store, &endpoint);
    let (_w2, pid2) = worker(&registry, &nats.url(), store, &endpoint);
    let a = instance(&registry, &nats.url(), store, &endpoint);
    let b = instance(&registry, &nats.url(), store, &endpoint);

    // Calls run on the workers (the command's parent is a worker), spread over both.
    let mut seen = BTreeSet::new();
    for round in 0..24 {
        let via = if round % 2 == 0 { &a } else { &b };
        let (status, body) = fetch(
            "POST",
            &format!("{}/ops/sys.pid", via.http),
            Some(&json!({})),
        );
        assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
        let envelope: Value = serde_json::from_slice(&body).unwrap();
        seen.insert(envelope["data"]["pid"].as_u64().unwrap() as u32);
    }
    assert_eq!(
        seen,
        BTreeSet::from([pid1, pid2]),
        "both workers, and only they, ran calls"
    );

    // The caller's identity (none here) reaches the worker's access check.
    let (status, body) = fetch(
        "POST",
        &format!("{}/ops/admin.wipe", a.http),
        Some(&json!({})),
    );
    let error: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(
        (status, error["code"].as_str()),
        (403, Some("ACCESS_DENIED"))
    );

    // HTTP: a result too big for the limit is stored through instance a...
    let (status, body) = fetch(
        "POST",
        &format!("{}/ops/data.rows", a.http),
        Some(&json!({})),
    );
    assert_eq!(status, 200);
    assert!(body.len() <= 4096, "{} bytes", body.len());
    let envelope: Value = serde_json::from_slice(&body).unwrap();
    let digest = envelope["meta"]["artifact"]
        .as_str()
        .expect("offloaded")
        .to_owned();
    // ... and read whole through instance b.
    let hex = digest.trim_start_matches("sha256:");
    let (status, stored) = fetch("GET", &format!("{}/artifacts/sha256/{hex}", b.http), None);
    assert_eq!(status, 200);
    let stored: Value = serde_json::from_slice(&stored).unwrap();
    assert_eq!(stored["rows"].as_array().unwrap().len(), 3000);
    assert!(
        !stored.to_string().contains(SECRET),
        "the shared store holds the secret"
    );

    // MCP: the same through each instance's MCP endpoint (Python SDK client).
    let plan = json!([{"op": "call", "name": "data_rows", "args": {}}]);
    let cut = sdk_client(&plan, std::slice::from_ref(&a.mcp), None);
    let result = step_ok(&cut, 0);
    assert!(
        result.to_string().len() <= 4200,
        "{}",
        result.to_string().len()
    );
    let uri = result["content"]
        .as_array()
        .unwrap()
        .iter()
        .find(|block| block["type"] == "resource_link")
        .and_then(|block| block["uri"].as_str())
        .expect("a link to the full result")
        .to_owned();
    let read = sdk_client(
        &json!([{"op": "read", "uri": uri}]),
        std::slice::from_ref(&b.mcp),
        None,
    );
    let full: Value =
        serde_json::from_str(step_ok(&read, 0)["contents"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(
        full["structuredContent"]["rows"].as_array().unwrap().len(),
        3000,
        "the worker offloaded the payload; the client gets all of it back"
    );
}
