//! Round-trip latency added by the relay, 1,000 calls in flight at once, and the throughput
//! of 100,000 pipelined requests (written without waiting while the answers are read).
//!
//! `cargo bench -p envelope-mcp --bench relay_latency [-- ROUNDS CALLS PIPELINED]`
//!
//! One binary plays three parts (it runs itself as child processes):
//! - `--as-upstream [DELAY_MS]`: a fast MCP server over stdio (answers `tools/call` with a
//!   small result; with a delay, each answer comes that many ms later, all concurrently);
//! - `--as-proxy -- COMMAND...`: the relay (`session::run`) on stdio in front of COMMAND, the
//!   code path of `envelope proxy`;
//! - the client (no argument): sequential small `tools/call` round trips against the
//!   upstream directly and through the proxy, alternated over several rounds on the same
//!   machine, then 1,000 calls sent at once to an upstream that answers each after 200 ms.
//!
//! Prints p50/p99 of both and the difference (the added latency), and the ratio.
//!
//! `cargo bench -p envelope-mcp --bench relay_latency -- big [MB] [ROUNDS]` measures instead
//! what shaping a big result costs against relaying it (issue 27's target: a 50 MB result
//! shaped to 16 KiB within 1.5x the time of relaying it unshaped): an upstream answers every
//! `tools/call` with one text block of MB megabytes of log lines (`--as-upstream-big MB`);
//! the same relay runs once with every tool passed through (`--as-proxy-pass`: the result is
//! relayed as it came) and once shaping (`--as-proxy`: redaction on, a 16 KiB limit, the full
//! result stored in a file store); the client times each call until the whole answer is
//! read, alternating the two relays over ROUNDS rounds.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("--as-upstream") => upstream(args.get(1).and_then(|d| d.parse().ok()).unwrap_or(0)),
        Some("--as-upstream-big") => big_upstream(args[1].parse().expect("megabytes")),
        Some("--as-proxy") => proxy(args[2..].to_vec(), false),
        Some("--as-proxy-pass") => proxy(args[2..].to_vec(), true),
        Some("big") => big(
            args.get(1).and_then(|n| n.parse().ok()).unwrap_or(50),
            args.get(2).and_then(|n| n.parse().ok()).unwrap_or(5),
        ),
        _ => {
            // `cargo bench` passes `--bench`; numbers are ours.
            let numbers: Vec<usize> = args.iter().filter_map(|a| a.parse().ok()).collect();
            client(
                numbers.first().copied().unwrap_or(5),
                numbers.get(1).copied().unwrap_or(2000),
            );
            pipelined(
                numbers.first().copied().unwrap_or(5),
                numbers.get(2).copied().unwrap_or(100_000),
            );
        }
    }
}

/// A minimal stdio MCP server: one thread reads, answers go out under a lock.
fn upstream(delay_ms: u64) {
    let out = Arc::new(Mutex::new(std::io::stdout()));
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { return };
        let message: serde_json::Value = match serde_json::from_str(&line) {
            Ok(m) => m,
            Err(_) => continue,
        };
        let Some(id) = message.get("id").cloned() else {
            continue;
        };
        let result = match message["method"].as_str() {
            Some("initialize") => {
                serde_json::json!({"protocolVersion": "2025-06-18", "capabilities": {"tools": {}}, "serverInfo": {"name": "bench", "version": "1"}})
            }
            Some("tools/call") => {
                serde_json::json!({"content": [{"type": "text", "text": "pong"}]})
            }
            _ => serde_json::json!({}),
        };
        let answer = serde_json::json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string();
        let out = out.clone();
        let write = move || {
            let mut out = out.lock().unwrap();
            let _ = writeln!(out, "{answer}");
            let _ = out.flush();
        };
        if delay_ms > 0 && message["method"] == "tools/call" {
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(delay_ms));
                write();
            });
        } else {
            write();
        }
    }
}

/// An MCP server over stdio whose `tools/call` answers are one text block of `megabytes`
/// MB of log lines (the answer line is written once, ahead of the calls).
fn big_upstream(megabytes: usize) {
    let mut log = String::with_capacity(megabytes << 20);
    let mut i = 0;
    while log.len() < megabytes * 1_000_000 {
        log.push_str(&format!(
            "commit {i:040x}\nAuthor: Dev <dev@example.com>\n\n    change number {i}\n\n"
        ));
        i += 1;
    }
    let result = serde_json::json!({"content": [{"type": "text", "text": log}]});
    drop(log);
    let result = result.to_string();
    let mut out = std::io::stdout().lock();
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { return };
        let Ok(message) = serde_json::from_str::<serde_json::Value>(&line) else {
            continue;
        };
        let Some(id) = message.get("id") else {
            continue;
        };
        let answer = match message["method"].as_str() {
            Some("tools/call") => format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#),
            Some("initialize") => format!(
                r#"{{"jsonrpc":"2.0","id":{id},"result":{{"protocolVersion":"2025-06-18","capabilities":{{"tools":{{}}}},"serverInfo":{{"name":"bench","version":"1"}}}}}}"#
            ),
            _ => format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#),
        };
        let _ = writeln!(out, "{answer}");
        let _ = out.flush();
    }
}

/// Calls to a `megabytes` MB result through the relay passing it on and through the relay
/// shaping it, alternated over `rounds`: the median of each and their ratio.
fn big(megabytes: usize, rounds: usize) {
    let me = std::env::current_exe().unwrap().display().to_string();
    let upstream = [me, "--as-upstream-big".into(), megabytes.to_string()];
    let relay = |mode: &str| {
        let mut args = vec![mode.to_string(), "--".to_string()];
        args.extend(upstream.iter().cloned());
        args
    };
    let (direct, passed, shaped) = (
        upstream[1..].to_vec(),
        relay("--as-proxy-pass"),
        relay("--as-proxy"),
    );
    println!(
        "{megabytes} MB text result: {rounds} rounds of 3 calls each, straight from the upstream, through the relay passing it on, and shaped to 16 KiB, alternated"
    );
    println!(
        "(the relay answers a result over 8 MiB with an error saying so: what it passes on is that error, after reading the whole result)"
    );
    println!(
        "round   direct ms (answer bytes)   relayed ms (answer bytes)   shaped ms (answer bytes)   shaped / direct   shaped / relayed"
    );
    let (mut all_direct, mut all_passed, mut all_shaped) = (Vec::new(), Vec::new(), Vec::new());
    for round in 1..=rounds {
        let mut medians = Vec::new();
        for args in [&direct, &passed, &shaped] {
            let mut peer = Peer::start(args);
            let mut times = Vec::new();
            let mut bytes = 0;
            // The first call of a process is the warm-up (pages faulted in).
            for id in 1..=4 {
                let started = Instant::now();
                peer.call(id);
                bytes = peer.line().len();
                if id > 1 {
                    times.push(started.elapsed());
                }
            }
            peer.stop();
            times.sort();
            medians.push((times[times.len() / 2], bytes));
        }
        let ((d, d_bytes), (p, p_bytes), (s, s_bytes)) = (medians[0], medians[1], medians[2]);
        let sizes = [d_bytes, p_bytes, s_bytes].map(|b| format!("({b:>9})"));
        big_row(&format!("{round:>5}"), [d, p, s], sizes);
        all_direct.push(d);
        all_passed.push(p);
        all_shaped.push(s);
    }
    for all in [&mut all_direct, &mut all_passed, &mut all_shaped] {
        all.sort();
    }
    let medians = [&all_direct, &all_passed, &all_shaped].map(|all| percentile(all, 0.5));
    big_row("median", medians, std::array::from_fn(|_| " ".repeat(11)));
}

/// A line of [`big`]'s table: the three times (direct, relayed, shaped) in ms, each with
/// its `sizes` column, and shaped over direct and over relayed.
fn big_row(label: &str, [d, p, s]: [Duration; 3], sizes: [String; 3]) {
    let [ds, ps, ss] = sizes;
    println!(
        "{label:<6} {:>9.1} {ds}   {:>10.1} {ps}   {:>9.1} {ss}   {:>14.2}x   {:>15.2}x",
        us(d) / 1e3,
        us(p) / 1e3,
        us(s) / 1e3,
        us(s) / us(d),
        us(s) / us(p)
    );
}

/// The relay on stdio, as `envelope proxy` runs it; `pass_through`: every tool's results
/// relayed unchanged (the policy `[tools."*"] pass_through = true`).
fn proxy(command: Vec<String>, pass_through: bool) {
    // One thread, as `envelope proxy` runs a stdio session: no hand-offs between workers.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let store = std::env::temp_dir().join(format!("envelope-bench-store-{}", std::process::id()));
    let config = envelope_mcp::config::Config {
        upstream: envelope_mcp::config::UpstreamSpec::Command {
            program: command[0].clone(),
            args: command[1..].to_vec(),
        },
        limit: envelope_mcp::config::DEFAULT_LIMIT,
        tokens: None,
        redact: true,
        timeout: None,
        restart: false,
        policy: match pass_through {
            true => "[tools.\"*\"]\npass_through = true".parse().unwrap(),
            false => Default::default(),
        },
        store: Arc::new(envelope_store::FileStore::new(&store)),
        managed: None,
        catalog: None,
        owner: None,
    };
    let stats = Arc::new(envelope_mcp::stats::Stats::default());
    runtime.block_on(async {
        let (client, written) = envelope_mcp::transport::stdio::stdio();
        let _ = envelope_mcp::session::run(client, Arc::new(config), stats).await;
        let _ = written.await;
    });
    runtime.shutdown_background();
    let _ = std::fs::remove_dir_all(store);
}

struct Peer {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Peer {
    fn start(args: &[String]) -> Peer {
        let me = std::env::current_exe().unwrap();
        let mut child = Command::new(me)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut peer = Peer {
            child,
            stdin,
            stdout,
        };
        peer.send(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}"#);
        peer.line();
        peer.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        peer
    }

    fn send(&mut self, line: &str) {
        self.stdin.write_all(line.as_bytes()).unwrap();
        self.stdin.write_all(b"\n").unwrap();
        self.stdin.flush().unwrap();
    }

    fn line(&mut self) -> String {
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
        assert!(!line.is_empty(), "the peer closed its output");
        line
    }

    fn call(&mut self, id: usize) {
        self.send(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"ping","arguments":{{}}}}}}"#
        ));
    }

    /// `calls` sequential round trips; the latency of each.
    fn round_trips(&mut self, calls: usize) -> Vec<Duration> {
        (1..=calls)
            .map(|id| {
                let started = Instant::now();
                self.call(id);
                let line = self.line();
                let took = started.elapsed();
                debug_assert!(line.contains("pong"));
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
    let at = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[at]
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn client(rounds: usize, calls: usize) {
    let upstream = vec!["--as-upstream".to_string()];
    let me = std::env::current_exe().unwrap().display().to_string();
    let proxied = vec!["--as-proxy".into(), "--".into(), me, "--as-upstream".into()];
    println!(
        "round trips: {rounds} rounds x {calls} sequential small tools/call, direct and through the relay, alternated"
    );
    println!("round  direct p50  p99 (us)   proxied p50  p99 (us)   added p50  p99 (us)");
    let (mut all_direct, mut all_proxied) = (Vec::new(), Vec::new());
    for round in 1..=rounds {
        let mut direct = Peer::start(&upstream);
        // Warm-up: the first calls fault pages in and start threads.
        direct.round_trips(100);
        let mut d = direct.round_trips(calls);
        direct.stop();
        let mut through = Peer::start(&proxied);
        through.round_trips(100);
        let mut p = through.round_trips(calls);
        through.stop();
        d.sort();
        p.sort();
        let (d50, d99, p50, p99) = (
            percentile(&d, 0.5),
            percentile(&d, 0.99),
            percentile(&p, 0.5),
            percentile(&p, 0.99),
        );
        println!(
            "{round:>5}  {:>10.1} {:>6.1}   {:>11.1} {:>6.1}   {:>9.1} {:>6.1}",
            us(d50),
            us(d99),
            us(p50),
            us(p99),
            us(p50) - us(d50),
            us(p99) - us(d99)
        );
        all_direct.extend(d);
        all_proxied.extend(p);
    }
    all_direct.sort();
    all_proxied.sort();
    let (d50, d99) = (percentile(&all_direct, 0.5), percentile(&all_direct, 0.99));
    let (p50, p99) = (
        percentile(&all_proxied, 0.5),
        percentile(&all_proxied, 0.99),
    );
    println!(
        "all    {:>10.1} {:>6.1}   {:>11.1} {:>6.1}   {:>9.1} {:>6.1}   ratio p50 {:.2}x p99 {:.2}x",
        us(d50),
        us(d99),
        us(p50),
        us(p99),
        us(p50) - us(d50),
        us(p99) - us(d99),
        us(p50) / us(d50),
        us(p99) / us(d99)
    );

    // 1,000 in flight: each answer comes 200 ms after its request; one after another would
    // take 200 s.
    const IN_FLIGHT: usize = 1000;
    for (name, args) in [
        ("direct", vec!["--as-upstream".to_string(), "200".into()]),
        ("proxied", {
            let me = std::env::current_exe().unwrap().display().to_string();
            vec![
                "--as-proxy".into(),
                "--".into(),
                me,
                "--as-upstream".into(),
                "200".into(),
            ]
        }),
    ] {
        let mut peer = Peer::start(&args);
        let started = Instant::now();
        for id in 1..=IN_FLIGHT {
            peer.call(id);
        }
        for _ in 0..IN_FLIGHT {
            peer.line();
        }
        let took = started.elapsed();
        peer.stop();
        println!(
            "{IN_FLIGHT} concurrent calls of 200 ms each, {name}: all answered in {:.0} ms",
            took.as_secs_f64() * 1e3
        );
    }
}

/// `count` pings written at once by one thread while another reads the answers: the time
/// until the last answer.
fn pipeline_once(args: &[String], count: usize) -> Duration {
    let Peer {
        mut child,
        mut stdin,
        mut stdout,
    } = Peer::start(args);
    let started = Instant::now();
    let writer = std::thread::spawn(move || {
        let mut batch = String::new();
        for id in 1..=count {
            batch.push_str(&format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#));
            batch.push('\n');
            if batch.len() > 64 * 1024 {
                stdin.write_all(batch.as_bytes()).unwrap();
                batch.clear();
            }
        }
        stdin.write_all(batch.as_bytes()).unwrap();
        stdin.flush().unwrap();
        stdin
    });
    let mut line = String::new();
    for _ in 0..count {
        line.clear();
        stdout.read_line(&mut line).unwrap();
        assert!(!line.is_empty(), "the peer closed its output");
    }
    let took = started.elapsed();
    drop(writer.join().unwrap());
    let _ = child.wait();
    took
}

/// Pipelined throughput, direct and through the relay, alternated over `rounds`.
fn pipelined(rounds: usize, count: usize) {
    let me = std::env::current_exe().unwrap().display().to_string();
    let direct = vec!["--as-upstream".to_string()];
    let proxied = vec!["--as-proxy".into(), "--".into(), me, "--as-upstream".into()];
    println!("pipelined: {count} pings written at once, answers read meanwhile");
    println!("round  direct (ms)  proxied (ms)  throughput ratio (proxied/direct)");
    let (mut best_direct, mut best_proxied) = (Duration::MAX, Duration::MAX);
    for round in 1..=rounds {
        let d = pipeline_once(&direct, count);
        let p = pipeline_once(&proxied, count);
        best_direct = best_direct.min(d);
        best_proxied = best_proxied.min(p);
        println!(
            "{round:>5}  {:>11.0}  {:>12.0}  {:>6.2}",
            d.as_secs_f64() * 1e3,
            p.as_secs_f64() * 1e3,
            d.as_secs_f64() / p.as_secs_f64()
        );
    }
    println!(
        "best   {:>11.0}  {:>12.0}  {:>6.2}",
        best_direct.as_secs_f64() * 1e3,
        best_proxied.as_secs_f64() * 1e3,
        best_direct.as_secs_f64() / best_proxied.as_secs_f64()
    );
}
