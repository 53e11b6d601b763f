//! What `envelope serve` adds to a call, and 1,000 calls at once over HTTP.
//!
//! `cargo bench -p envelope-serve --bench serve_latency [-- ROUNDS CALLS]`
//!
//! One binary plays two parts (it runs itself as a child process):
//! - `--as-serve REGISTRY`: the MCP server of `serve` (`mcp::run`) on stdio, on one thread,
//!   calls in process: the code path of `envelope serve --registry REGISTRY`;
//! - the bench (no argument): for a local command operation (`cat`: a process per call),
//!   calls run in process (`Registry::execute`) and `tools/call` round trips through the
//!   serve child over stdio, one of each in turn (the machine's noise hits both alike),
//!   over several rounds; then
//!   1,000 calls sent at once to the HTTP view (`POST /ops/{id}`) and to the MCP endpoint
//!   over Streamable HTTP (one session), counting errors.
//!
//! Prints p50/p99 of both, the difference (what serve adds) and the concurrency results.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use envelope_mcp::stats::Stats;
use envelope_mcp::transport::http_server;
use envelope_ops::file::RegistryFile;
use envelope_ops::{Context, Registry};
use envelope_serve::dispatch::Dispatch;
use envelope_serve::http::Access;
use envelope_serve::service::{Service, Settings};
use serde_json::{Value, json};

const REGISTRY: &str = r#"
[commands.bench.echo]
command = ["cat"]
type = "query"
inputSchema = { type = "object", properties = { text = { type = "string" } } }
outputSchema = { type = "object" }
"#;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("--as-serve") => as_serve(Path::new(&args[1])),
        _ => {
            let numbers: Vec<usize> = args.iter().filter_map(|a| a.parse().ok()).collect();
            bench(
                numbers.first().copied().unwrap_or(5),
                numbers.get(1).copied().unwrap_or(300),
            );
        }
    }
}

fn scratch() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("envelope-serve-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn settings(dir: &Path) -> Settings {
    Settings {
        limit: envelope_mcp::config::DEFAULT_LIMIT,
        tokens: None,
        redact: true,
        timeout: Duration::from_secs(60),
        idle_timeout: Duration::from_secs(60),
        store: Arc::new(envelope_store::FileStore::new(dir.join("store"))),
        policy: Default::default(),
        managed: None,
        catalog: None,
    }
}

async fn load() -> Registry {
    let loaded = RegistryFile::from_toml(REGISTRY).unwrap().load().await;
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    loaded.registry
}

/// The stdio MCP server of `serve`, on one thread, as `envelope serve` runs it.
fn as_serve(dir: &Path) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let dispatch = Dispatch::local(Arc::new(load().await));
        let service = Service::new(dispatch, settings(dir), Arc::new(Stats::default())).unwrap();
        let (client, written) = envelope_mcp::transport::stdio::stdio();
        envelope_serve::mcp::run(client, Arc::new(service), None).await;
        let _ = written.await;
    });
    runtime.shutdown_background();
}

struct Serve {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next_id: usize,
}

impl Serve {
    fn start(dir: &Path) -> Serve {
        let me = std::env::current_exe().unwrap();
        let mut child = Command::new(me)
            .arg("--as-serve")
            .arg(dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut serve = Serve {
            child,
            stdin,
            stdout,
            next_id: 1,
        };
        serve.send(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}"#);
        serve.line();
        serve.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        serve
    }

    fn send(&mut self, line: &str) {
        self.stdin.write_all(line.as_bytes()).unwrap();
        self.stdin.write_all(b"\n").unwrap();
        self.stdin.flush().unwrap();
    }

    fn line(&mut self) -> String {
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
        assert!(!line.is_empty(), "serve closed its output");
        line
    }

    fn round_trips(&mut self, calls: usize) -> Vec<Duration> {
        (0..calls)
            .map(|_| {
                let id = self.next_id;
                self.next_id += 1;
                let started = Instant::now();
                self.send(&format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"bench_echo","arguments":{{"text":"ping"}}}}}}"#
                ));
                let line = self.line();
                let took = started.elapsed();
                assert!(line.contains("ping") && !line.contains("isError\":true"), "{line}");
                took
            })
            .collect()
    }

    fn stop(mut self) {
        drop(self.stdin);
        let _ = self.child.wait();
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn bench(rounds: usize, calls: usize) {
    let dir = scratch();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let registry = runtime.block_on(load());
    let in_process_call = || -> Duration {
        runtime.block_on(async {
            let started = Instant::now();
            let done = registry
                .execute("bench.echo", json!({"text": "ping"}), &Context::default())
                .await
                .unwrap();
            let took = started.elapsed();
            assert_eq!(done.envelope["data"]["text"], "ping");
            took
        })
    };
    println!(
        "{rounds} rounds x {calls} calls of a command operation (cat), one in process and one through serve (stdio) in turn, so that both see the same machine"
    );
    println!(
        "round  in-process p50  p99 (us)   serve p50  p99 (us)   added p50  p99 (us)   paired median (us)"
    );
    let mut added = Vec::new();
    let mut paired_all = Vec::new();
    for round in 1..=rounds {
        let mut serve = Serve::start(&dir);
        // Warm-up: pages faulted in, threads started, on both sides.
        for _ in 0..30 {
            in_process_call();
            serve.round_trips(1);
        }
        let (mut local, mut through) = (Vec::with_capacity(calls), Vec::with_capacity(calls));
        for _ in 0..calls {
            local.push(in_process_call());
            through.extend(serve.round_trips(1));
        }
        serve.stop();
        // Each serve call minus the in-process call just before it: the noise of the
        // moment (a slow process start) cancels out of the difference.
        let mut paired: Vec<f64> = through
            .iter()
            .zip(&local)
            .map(|(s, l)| us(*s) - us(*l))
            .collect();
        paired.sort_by(f64::total_cmp);
        let paired_median = paired[paired.len() / 2];
        paired_all.push(paired_median);
        local.sort();
        through.sort();
        let (l50, l99) = (percentile(&local, 0.5), percentile(&local, 0.99));
        let (s50, s99) = (percentile(&through, 0.5), percentile(&through, 0.99));
        println!(
            "{round:>5}  {:>14.1} {:>6.1}   {:>9.1} {:>6.1}   {:>9.1} {:>6.1}   {:>18.1}",
            us(l50),
            us(l99),
            us(s50),
            us(s99),
            us(s50) - us(l50),
            us(s99) - us(l99),
            paired_median
        );
        added.push(us(s50) - us(l50));
    }
    added.sort_by(f64::total_cmp);
    paired_all.sort_by(f64::total_cmp);
    println!(
        "added p50, median of the rounds: {:.1} us; paired median, median of the rounds: {:.1} us (target <= 200 us)",
        added[added.len() / 2],
        paired_all[paired_all.len() / 2]
    );

    runtime.block_on(concurrent(&dir));
    let _ = std::fs::remove_dir_all(dir);
}

/// 1,000 calls at once to the HTTP view and to the MCP endpoint over HTTP.
async fn concurrent(dir: &Path) {
    const CALLS: usize = 1000;
    let dispatch = Dispatch::local(Arc::new(load().await));
    let service =
        Arc::new(Service::new(dispatch, settings(dir), Arc::new(Stats::default())).unwrap());
    let view = envelope_serve::http::bind(
        "127.0.0.1:0".parse().unwrap(),
        service.clone(),
        Access::default(),
    )
    .await
    .unwrap();
    let http_addr = view.local_addr().unwrap();
    tokio::spawn(view.run());
    let starter: http_server::SessionStarter = {
        let service = service.clone();
        Arc::new(move |link, _| {
            tokio::spawn(envelope_serve::mcp::run(link, service.clone(), None));
        })
    };
    let options = http_server::ListenOptions {
        addr: "127.0.0.1:0".parse().unwrap(),
        tokens: Vec::new(),
        idle_timeout: http_server::DEFAULT_IDLE_TIMEOUT,
        limits: http_server::Limits::default(),
    };
    let mcp = http_server::bind(options, starter).await.unwrap();
    let mcp_addr = mcp.local_addr().unwrap();
    tokio::spawn(mcp.run());
    let client = reqwest::Client::new();

    let started = Instant::now();
    let calls = (0..CALLS).map(|i| {
        let client = client.clone();
        async move {
            let answer = client
                .post(format!("http://{http_addr}/ops/bench.echo"))
                .json(&json!({"text": format!("call {i}")}))
                .send()
                .await
                .ok()?;
            let ok = answer.status() == 200;
            let body: Value = answer.json().await.ok()?;
            (ok && body["data"]["text"] == format!("call {i}")).then_some(())
        }
    });
    let answered = futures::future::join_all(calls).await;
    let errors = answered.iter().filter(|a| a.is_none()).count();
    println!(
        "{CALLS} concurrent POST /ops/bench.echo: {} right, {errors} errors, {:.0} ms",
        CALLS - errors,
        started.elapsed().as_secs_f64() * 1e3
    );

    let url = format!("http://{mcp_addr}/mcp");
    let initialize = client
        .post(&url)
        .header("accept", "application/json, text/event-stream")
        .json(&json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}}))
        .send()
        .await
        .unwrap();
    let session = initialize.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let started = Instant::now();
    let calls = (1..=CALLS).map(|id| {
        let (client, url, session) = (client.clone(), url.clone(), session.clone());
        async move {
            let answer = client
                .post(&url)
                .header("accept", "application/json, text/event-stream")
                .header("mcp-session-id", session)
                .header("mcp-protocol-version", "2025-06-18")
                .json(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "bench_echo", "arguments": {"text": format!("call {id}")}}}))
                .send()
                .await
                .ok()?;
            let body: Value = answer.json().await.ok()?;
            (body["id"] == id && body["result"]["structuredContent"]["text"] == format!("call {id}"))
                .then_some(())
        }
    });
    let answered = futures::future::join_all(calls).await;
    let errors = answered.iter().filter(|a| a.is_none()).count();
    println!(
        "{CALLS} concurrent tools/call in one MCP session over Streamable HTTP: {} right, {errors} errors, {:.0} ms",
        CALLS - errors,
        started.elapsed().as_secs_f64() * 1e3
    );
}
