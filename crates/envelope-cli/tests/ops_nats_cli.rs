//! `envelope ops worker --nats` and `envelope call --nats` as separate processes meeting
//! through a real nats-server on 127.0.0.1: a call, a deadline that kills the worker's
//! command, a worker that dies mid-call (the caller fails at its deadline, no hang), no
//! worker at all, `--subscribe` in process.

#[path = "../../envelope-ops/tests/nats_common/mod.rs"]
mod nats_common;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use nats_common::NatsServer;
use serde_json::Value;

fn registry(dir: &Path) -> std::path::PathBuf {
    let pidfile = dir.join("slow.pid");
    let text = format!(
        r#"
[commands.text.upper]
command = ["tr", "a-z", "A-Z"]
inputSchema = {{ type = "string" }}

[commands.sys.slow]
command = ["sh", "-c", "echo $$ > {}; exec sleep 30"]

[commands.rows.huge]
command = ["python3", "-c", "import json; print(json.dumps({{'rows': ['row %d of a big result' % i for i in range(60000)]}}))"]

[commands.feed.ticks]
type = "subscription"
command = ["sh", "-c", "for i in 1 2 3; do echo \"{{\\\"i\\\": $i}}\"; done"]
"#,
        pidfile.display()
    );
    let path = dir.join("envelope.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// A worker process, killed when dropped; started once it says it is ready.
struct Worker(Child);

impl Worker {
    fn start(registry: &Path, url: &str) -> Worker {
        Worker::start_with(registry, url, &[])
    }

    fn start_with(registry: &Path, url: &str, extra: &[&str]) -> Worker {
        let mut child = Command::new(env!("CARGO_BIN_EXE_envelope"))
            .args(["ops", "worker", "--nats", url, "--registry"])
            .arg(registry)
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let ready = lines.next().expect("the worker said something").unwrap();
        assert!(ready.contains("worker ready: 4 operations"), "{ready}");
        // Keep draining its stderr so that it never blocks.
        std::thread::spawn(move || for _ in lines {});
        Worker(child)
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn call(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_envelope"))
        .arg("call")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn error_line(out: &Output) -> Value {
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    let last = stderr.lines().last().unwrap_or("");
    serde_json::from_str(last).unwrap_or_else(|e| panic!("{e}: {stderr}"))
}

/// Whether `pid` ends within 3 s (a zombie, killed but not yet reaped, counts as ended).
fn process_gone(pid: i32) -> bool {
    for _ in 0..300 {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let zombie = stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z'));
        if unsafe { libc_kill(pid, 0) } != 0 || zombie {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    false
}

unsafe extern "C" {
    #[link_name = "kill"]
    fn libc_kill(pid: i32, signal: i32) -> i32;
}

#[test]
fn a_caller_process_calls_a_worker_process() {
    let server = NatsServer::start();
    let dir = tempfile::tempdir().unwrap();
    let registry = registry(dir.path());
    let _worker = Worker::start(&registry, &server.url());
    // The caller has no registry of its own: everything goes through NATS.
    let out = call(&[
        "text.upper",
        "--nats",
        &server.url(),
        "--input",
        "\"abc\"",
        "--registry",
        "/nonexistent.toml",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let env: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(env["data"], "ABC");
    assert_eq!(env["meta"]["operationId"], "text.upper");
    let e = error_line(&call(&[
        "text.upper",
        "--nats",
        &server.url(),
        "--input",
        "3",
    ]));
    assert_eq!(e["code"], "VALIDATION_ERROR");
}

#[test]
fn a_deadline_kills_the_workers_command() {
    let server = NatsServer::start();
    let dir = tempfile::tempdir().unwrap();
    let registry = registry(dir.path());
    let _worker = Worker::start(&registry, &server.url());
    let started = Instant::now();
    let e = error_line(&call(&[
        "sys.slow",
        "--nats",
        &server.url(),
        "--timeout",
        "1",
    ]));
    assert_eq!(e["code"], "TIMEOUT");
    assert!(started.elapsed() < Duration::from_secs(10));
    let pid: i32 = std::fs::read_to_string(dir.path().join("slow.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(process_gone(pid), "the command {pid} outlived its deadline");
}

#[test]
fn a_worker_that_dies_mid_call_fails_the_call_at_its_deadline() {
    let server = NatsServer::start();
    let dir = tempfile::tempdir().unwrap();
    let registry = registry(dir.path());
    let mut worker = Worker::start(&registry, &server.url());
    let url = server.url();
    let caller = std::thread::spawn(move || {
        let started = Instant::now();
        let out = call(&["sys.slow", "--nats", &url, "--timeout", "3"]);
        (out, started.elapsed())
    });
    // Once the command runs, the worker dies without a word.
    let pidfile = dir.path().join("slow.pid");
    let ready = Instant::now() + Duration::from_secs(20);
    while !pidfile.exists() {
        assert!(Instant::now() < ready, "the call never reached the worker");
        std::thread::sleep(Duration::from_millis(20));
    }
    worker.0.kill().unwrap();
    let (out, took) = caller.join().unwrap();
    let e = error_line(&out);
    assert_eq!(e["code"], "TIMEOUT");
    assert!(took < Duration::from_secs(10), "took {took:?}");
    // The killed worker could not end its command: the test does.
    let pid = std::fs::read_to_string(&pidfile).unwrap();
    unsafe { libc_kill(pid.trim().parse().unwrap(), 9) };
}

#[test]
fn subscribe_to_a_query_is_refused_in_process() {
    let dir = tempfile::tempdir().unwrap();
    let registry = registry(dir.path());
    let out = call(&[
        "text.upper",
        "--subscribe",
        "--input",
        "\"a\"",
        "--registry",
        registry.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a subscription"));
}

#[test]
fn without_a_worker_the_call_says_so() {
    let server = NatsServer::start();
    let e = error_line(&call(&[
        "text.upper",
        "--nats",
        &server.url(),
        "--input",
        "\"a\"",
    ]));
    assert_eq!(e["code"], "EXECUTION_ERROR");
    assert!(e["message"].as_str().unwrap().contains("no worker"), "{e}");
}

#[test]
fn an_unreachable_server_is_a_usage_error_naming_it() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("nats://127.0.0.1:{port}");
    let out = call(&["text.upper", "--nats", &url]);
    assert_eq!(out.status.code(), Some(2));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains(&url), "{said}");
}

/// Three envelopes, one per line, with `data.i` 1, 2, 3.
fn assert_three_ticks(out: &Output) {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let ticks: Vec<&Value> = lines.iter().map(|env| &env["data"]["i"]).collect();
    assert_eq!(ticks, [1, 2, 3]);
    assert!(
        lines
            .iter()
            .all(|env| env["meta"]["operationId"] == "feed.ticks")
    );
}

#[test]
fn a_subscription_command_in_process_and_over_nats() {
    let dir = tempfile::tempdir().unwrap();
    let registry = registry(dir.path());
    assert_three_ticks(&call(&[
        "feed.ticks",
        "--subscribe",
        "--registry",
        registry.to_str().unwrap(),
    ]));

    let server = NatsServer::start();
    let _worker = Worker::start(&registry, &server.url());
    assert_three_ticks(&call(&[
        "feed.ticks",
        "--subscribe",
        "--nats",
        &server.url(),
        "--idle-timeout",
        "10",
    ]));
}

#[test]
fn a_large_envelope_is_refused_unless_the_worker_shapes_it_into_the_store() {
    let server = NatsServer::start();
    let dir = tempfile::tempdir().unwrap();
    let registry = registry(dir.path());
    let whole = call(&["rows.huge", "--registry", registry.to_str().unwrap()]);
    assert!(whole.status.success());
    let whole: Value = serde_json::from_slice(&whole.stdout).unwrap();
    assert!(
        serde_json::to_vec(&whole).unwrap().len() > 1_048_576,
        "over NATS's 1 MB"
    );

    {
        let _worker = Worker::start(&registry, &server.url());
        let e = error_line(&call(&["rows.huge", "--nats", &server.url()]));
        assert_eq!(e["code"], "EXECUTION_ERROR");
        assert_eq!(e["details"]["maxPayload"], 1_048_576, "{e}");
    }

    let store = dir.path().join("shared-store");
    let _worker = Worker::start_with(
        &registry,
        &server.url(),
        &["--limit", "2000", "--store", store.to_str().unwrap()],
    );
    let out = call(&["rows.huge", "--nats", &server.url()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stdout.len() <= 2001, "{} bytes", out.stdout.len());
    let shaped: Value = serde_json::from_slice(&out.stdout).unwrap();
    let digest = shaped["meta"]["artifact"]
        .as_str()
        .expect("an artifact digest");
    let stored = Command::new(env!("CARGO_BIN_EXE_envelope"))
        .args([
            "artifact",
            "get",
            digest,
            "--store",
            store.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(
        stored.status.success(),
        "{}",
        String::from_utf8_lossy(&stored.stderr)
    );
    let stored: Value = serde_json::from_slice(&stored.stdout).unwrap();
    assert_eq!(stored, whole["data"], "the full payload, one read away");
}

/// `ops worker --limit-tokens`: every envelope the worker sends is within the token limit as
/// the tokenizer counts its JSON (60,000 rows cut, no byte limit, nothing stored), and its
/// budget marker says the limit and the tokenizer.
#[test]
fn a_worker_with_a_token_limit_sends_envelopes_within_it() {
    use envelope::tokens::Tokenizer;
    let server = NatsServer::start();
    let dir = tempfile::tempdir().unwrap();
    let registry = registry(dir.path());
    let _worker = Worker::start_with(
        &registry,
        &server.url(),
        &["--limit-tokens", "600", "--tokenizer", "cl100k_base"],
    );
    let out = call(&["rows.huge", "--nats", &server.url()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = String::from_utf8(out.stdout).unwrap();
    let count = Tokenizer::Cl100kBase.count(line.trim_end());
    assert!((400..=600).contains(&count), "{count} tokens: {line}");
    let shaped: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(shaped["meta"]["budget"]["tokenLimit"], 600);
    assert_eq!(shaped["meta"]["budget"]["tokenizer"], "cl100k_base");
    assert!(
        shaped["data"]["rows"]
            .as_array()
            .is_some_and(|rows| rows.len() < 60_000)
    );
}

/// A caller that gives up (its call dropped, no deadline) sends `call.aborted`; the worker
/// PROCESS kills the command it was running.
#[test]
fn an_abort_reaches_the_worker_process() {
    use envelope_ops::protocol::{CallOptions, connect, nats_caller};
    let server = NatsServer::start();
    let dir = tempfile::tempdir().unwrap();
    let registry = registry(dir.path());
    let _worker = Worker::start(&registry, &server.url());
    let pidfile = dir.path().join("slow.pid");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let caller = nats_caller(connect(&server.url()).await.unwrap(), "envelope")
            .await
            .unwrap();
        let call = caller.call("sys.slow", serde_json::json!({}), CallOptions::default());
        tokio::pin!(call);
        // Wait until the command runs on the worker, then give up.
        let ready = Instant::now() + Duration::from_secs(20);
        while !pidfile.exists() {
            assert!(Instant::now() < ready, "the call never reached the worker");
            tokio::select! {
                _ = &mut call => panic!("the slow call answered"),
                _ = tokio::time::sleep(Duration::from_millis(20)) => {}
            }
        }
    });
    let pid: i32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(
        process_gone(pid),
        "the worker kept running the aborted command {pid}"
    );
}
