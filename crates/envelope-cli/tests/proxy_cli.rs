//! `envelope proxy` as a command: its flags, its help, its exit, and the faults that need the
//! whole process (memory on a huge line, signals) — against the fault fixture server.

mod common;

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

fn fault_server() -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../envelope-mcp/tests/fixtures/fault_server.py")
        .display()
        .to_string()
}

/// `envelope proxy ARGS -- python3 fault_server.py`, piped.
fn start(args: &[&str]) -> (Child, ChildStdin, BufReader<ChildStdout>) {
    start_upstream(args, &["python3", &fault_server()])
}

/// `envelope proxy ARGS -- UPSTREAM...`, piped; `$FAULT` in its environment is the fault
/// server.
fn start_upstream(args: &[&str], upstream: &[&str]) -> (Child, ChildStdin, BufReader<ChildStdout>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_envelope"))
        .arg("proxy")
        .args(args)
        .arg("--")
        .args(upstream)
        .env("FAULT", fault_server())
        .env_remove("ENVELOPE_STORE")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdin = child.stdin.take().unwrap();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    (child, stdin, stdout)
}

fn send(stdin: &mut ChildStdin, message: Value) {
    writeln!(stdin, "{message}").unwrap();
    stdin.flush().unwrap();
}

fn initialize(stdin: &mut ChildStdin, stdout: &mut BufReader<ChildStdout>) {
    send(
        stdin,
        json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}),
    );
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    assert!(line.contains("\"id\":0"), "{line}");
    send(
        stdin,
        json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
    );
}

fn read_answer(stdout: &mut BufReader<ChildStdout>) -> Value {
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"))
}

/// Waits for the child to exit, within `secs`.
fn wait(child: &mut Child, secs: u64) -> std::process::ExitStatus {
    let until = Instant::now() + Duration::from_secs(secs);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        assert!(
            Instant::now() < until,
            "the proxy did not exit within {secs} s"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn running(pid: i64) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    let state = stat
        .rsplit(')')
        .next()
        .unwrap_or("")
        .trim_start()
        .chars()
        .next();
    !matches!(state, Some('Z') | Some('X') | None)
}

/// The peak resident set of a running process, in bytes.
fn peak_rss(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    let kb: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    kb * 1024
}

#[test]
fn help_explains_every_option() {
    let output = common::run(&["proxy", "--help"], b"");
    assert!(output.status.success());
    let help = String::from_utf8(output.stdout).unwrap();
    for option in [
        "--limit",
        "--limit-tokens",
        "--tokenizer",
        "--store",
        "--policy",
        "--no-redact",
        "--timeout",
        "--no-restart",
        "--max-message",
        "--log-level",
        "--stats",
        "--upstream-url",
        "--header",
        "--listen",
        "COMMAND",
    ] {
        assert!(help.contains(option), "--help does not mention {option}");
    }
    assert!(
        help.contains("[default: 16384, or none with --limit-tokens alone]")
            && help.contains("o200k_base")
            && help.contains(".envelope/store"),
        "{help}"
    );
}

#[test]
fn bad_command_lines_are_refused_before_anything_starts() {
    let cases: [(&[&str], &str); 6] = [
        (&["proxy"], "usage.invalid"),
        (
            &[
                "proxy",
                "--upstream-url",
                "http://127.0.0.1:1/mcp",
                "--",
                "cat",
            ],
            "usage.invalid",
        ),
        (&["proxy", "--timeout", "0", "--", "cat"], "usage.bad-value"),
        (
            &["proxy", "--timeout", "soon", "--", "cat"],
            "usage.invalid",
        ),
        (
            &["proxy", "--log-level", "loud", "--", "cat"],
            "usage.bad-value",
        ),
        (
            &[
                "proxy",
                "--upstream-url",
                "http://127.0.0.1:1/mcp",
                "--header",
                "no colon",
            ],
            "usage.bad-value",
        ),
    ];
    for (args, id) in cases {
        let output = common::run(args, b"");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains(&format!("error[{id}]")),
            "{args:?}: {stderr}"
        );
    }
}

#[test]
fn stats_file_and_summary_line_on_exit() {
    let dir = tempfile::tempdir().unwrap();
    let stats = dir.path().join("stats.json");
    let store = dir.path().join("store");
    let (child, mut stdin, mut stdout) = start(&[
        "--stats",
        stats.to_str().unwrap(),
        "--store",
        store.to_str().unwrap(),
    ]);
    initialize(&mut stdin, &mut stdout);
    send(
        &mut stdin,
        json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"abc"}}}),
    );
    assert_eq!(
        read_answer(&mut stdout)["result"]["content"][0]["text"],
        "abc"
    );
    send(
        &mut stdin,
        json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"garbage","arguments":{}}}),
    );
    assert_eq!(read_answer(&mut stdout)["id"], 2);
    let stderr = finish(child, stdin);
    assert!(stderr.contains("envelope proxy: 2 calls"), "{stderr}");
    assert!(
        stderr.contains("\"event\":\"upstream.invalid\""),
        "{stderr}"
    );
    let stats: Value = serde_json::from_slice(&std::fs::read(&stats).unwrap()).unwrap();
    for key in [
        "calls",
        "bytes_from_upstream",
        "bytes_to_client",
        "bytes_saved",
        "results_offloaded",
        "redactions",
        "errors",
        "per_tool",
    ] {
        assert!(stats.get(key).is_some(), "{key} missing: {stats}");
    }
    assert_eq!(stats["calls"], 2);
    assert_eq!(stats["errors"]["upstream_invalid_json"], 2);
    assert_eq!(
        stats["per_tool"]["echo"]["bytes_from_upstream"],
        r#"{"content":[{"type":"text","text":"abc"}]}"#.len()
    );
}

#[test]
fn sigterm_ends_the_upstream_group() {
    let (mut child, mut stdin, mut stdout) = start(&["--log-level", "off"]);
    initialize(&mut stdin, &mut stdout);
    send(
        &mut stdin,
        json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"pid","arguments":{}}}),
    );
    let answer = read_answer(&mut stdout);
    let pids: Value =
        serde_json::from_str(answer["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
    let (server, grandchild) = (
        pids["pid"].as_i64().unwrap(),
        pids["child"].as_i64().unwrap(),
    );
    assert!(running(server) && running(grandchild));
    // SAFETY: a signal to the proxy we started.
    unsafe { libc_kill(child.id() as i32, 15) };
    wait(&mut child, 20);
    let until = Instant::now() + Duration::from_secs(5);
    while (running(server) || running(grandchild)) && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        !running(server) && !running(grandchild),
        "the upstream group survived SIGTERM"
    );
}

unsafe extern "C" {
    #[link_name = "kill"]
    fn libc_kill(pid: i32, signal: i32) -> i32;
}

// Issue 13, behaviour 7: the relay holds the line once; the shaping redacts it in one pass
// (a clean string is not copied), stores it, and cuts it with the bounded read, which reads
// the 200 MiB text as a prefix and a length (never built whole). See docs/benchmarks.md,
// "A huge line".
#[test]
fn a_huge_line_stays_within_twice_its_size_plus_32_mib() {
    const MB: u64 = 200;
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let (mut child, mut stdin, mut stdout) = start(&[
        "--log-level",
        "off",
        "--store",
        store.to_str().unwrap(),
        "--limit",
        "16384",
    ]);
    initialize(&mut stdin, &mut stdout);
    send(
        &mut stdin,
        json!({"jsonrpc":"2.0","id":"big","method":"tools/call","params":{"name":"huge","arguments":{"mb": MB}}}),
    );
    // Read the answer without keeping it: the test's memory is not the proxy's.
    let mut head: Vec<u8> = Vec::new();
    let mut total = 0u64;
    loop {
        let buf = stdout.fill_buf().unwrap();
        assert!(!buf.is_empty(), "the proxy closed its output");
        let (take, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(at) => (at + 1, true),
            None => (buf.len(), false),
        };
        if head.len() < 200 {
            head.extend_from_slice(&buf[..take.min(200)]);
        }
        total += take as u64;
        stdout.consume(take);
        if done {
            break;
        }
    }
    let head = String::from_utf8_lossy(&head);
    assert!(head.contains("\"id\":\"big\""), "{head}");
    // Offloaded: the answer is small, the full result is in the store.
    assert!(total < 16384 + 200, "the answer has {total} bytes");
    let stored: Vec<_> = std::fs::read_dir(store.join("sha256")).unwrap().collect();
    assert!(!stored.is_empty(), "nothing was stored");
    let peak = peak_rss(child.id());
    let size = MB * 1024 * 1024;
    drop(stdin);
    wait(&mut child, 30);
    eprintln!(
        "answer {total} bytes; proxy peak RSS {} MiB for a {MB} MiB line",
        peak >> 20
    );
    assert!(
        peak <= 2 * size + 32 * 1024 * 1024,
        "peak RSS {} MiB",
        peak >> 20
    );
}

#[test]
fn an_answer_over_max_message_becomes_an_error_and_the_session_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let (mut child, mut stdin, mut stdout) = start(&[
        "--log-level",
        "off",
        "--store",
        store.to_str().unwrap(),
        "--max-message",
        "1048576",
    ]);
    initialize(&mut stdin, &mut stdout);
    send(
        &mut stdin,
        json!({"jsonrpc":"2.0","id":"big","method":"tools/call","params":{"name":"huge","arguments":{"mb": 3}}}),
    );
    let answer = read_answer(&mut stdout);
    assert_eq!(answer["id"], "big", "{answer}");
    let text = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(
        text.contains("over the 1048576 bytes") && text.contains("--max-message"),
        "{answer}"
    );
    // A request over it from the client: its own error, and the session goes on.
    let big = "z".repeat(2 << 20);
    send(
        &mut stdin,
        json!({"jsonrpc":"2.0","id":"up","method":"tools/call","params":{"name":"echo","arguments":{"text": big}}}),
    );
    let answer = read_answer(&mut stdout);
    assert_eq!(answer["id"], "up", "{answer}");
    assert_eq!(answer["error"]["code"], -32600, "{answer}");
    send(
        &mut stdin,
        json!({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text": "small"}}}),
    );
    let answer = read_answer(&mut stdout);
    assert_eq!(answer["result"]["content"][0]["text"], "small", "{answer}");
    drop(stdin);
    wait(&mut child, 30);
}

#[test]
fn answers_in_flight_when_the_client_closes_its_end_are_still_written() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let input = [
        json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}),
        json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
        json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","arguments":{"seconds":0.5,"text":"late"}}}),
        json!({"jsonrpc":"2.0","id":2,"method":"tools/list"}),
    ]
    .iter()
    .map(|m| format!("{m}\n"))
    .collect::<String>();
    let fixture = fault_server();
    let output = common::run(
        &[
            "proxy",
            "--log-level",
            "off",
            "--store",
            store.to_str().unwrap(),
            "--",
            "python3",
            &fixture,
        ],
        input.as_bytes(),
    );
    assert!(output.status.success());
    let answers: Vec<Value> = String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let ids: Vec<&Value> = answers.iter().map(|a| &a["id"]).collect();
    assert_eq!(answers.len(), 3, "{answers:?}");
    assert!(
        ids.contains(&&json!(1)) && ids.contains(&&json!(2)),
        "{ids:?}"
    );
    let late = answers.iter().find(|a| a["id"] == 1).unwrap();
    assert_eq!(late["result"]["content"][0]["text"], "late");
}

#[test]
fn a_policy_file_sets_limits_pass_through_and_emit_per_tool() {
    let dir = tempfile::tempdir().unwrap();
    let policy = dir.path().join("policy.toml");
    std::fs::write(
        &policy,
        "[tools.huge]\nlimit = 3000\n\n[tools.\"ec*\"]\npass_through = true\n\n[tools.slow]\nemit = \"protocol-v1\"\n",
    )
    .unwrap();
    let store = dir.path().join("store");
    let (mut child, mut stdin, mut stdout) = start(&[
        "--policy",
        policy.to_str().unwrap(),
        "--store",
        store.to_str().unwrap(),
        "--limit",
        "100000",
    ]);
    initialize(&mut stdin, &mut stdout);
    // `huge`'s own limit (3000), not the command line's 100000.
    let call = |id: u64, name: &str, args: Value| json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":name,"arguments":args}});
    send(&mut stdin, call(1, "huge", json!({"mb": 0.05})));
    let answer = read_answer(&mut stdout);
    let result = answer["result"].to_string();
    assert!(result.len() <= 3000, "{} bytes: {result}", result.len());
    assert!(result.contains("envelope://artifact/sha256/"), "{result}");
    // `echo` matches the glob `ec*`: passed through with the secret the default would mask.
    let secret = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
    send(&mut stdin, call(2, "echo", json!({"text": secret})));
    let answer = read_answer(&mut stdout);
    assert_eq!(answer["result"]["content"][0]["text"], secret, "{answer}");
    // `slow` is emitted as protocol-v1: its single text block is that format's document.
    send(
        &mut stdin,
        call(3, "slow", json!({"seconds": 0, "text": "done"})),
    );
    let answer = read_answer(&mut stdout);
    let block = answer["result"]["content"][0]["text"].as_str().unwrap();
    let detected = common::run(&["detect", "-"], block.as_bytes());
    assert!(detected.status.success(), "{answer}");
    assert!(
        String::from_utf8_lossy(&detected.stdout).contains("protocol-v1"),
        "{}",
        String::from_utf8_lossy(&detected.stdout)
    );
    drop(stdin);
    assert!(wait(&mut child, 20).success());
}

#[test]
fn a_policy_file_with_an_error_is_refused_naming_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let policy = dir.path().join("policy.toml");
    std::fs::write(&policy, "[tools.echo]\nlimit = 100\nemit = \"yaml\"\n").unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_envelope"))
        .args(["proxy", "--policy", policy.to_str().unwrap(), "--", "true"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("proxy.policy") && stderr.contains("line 3") && stderr.contains("yaml"),
        "{stderr}"
    );
}

/// `envelope proxy ARGS -- sh -c SCRIPT`, piped; `$FAULT` in the script is the fault server.
fn start_sh(args: &[&str], script: &str) -> (Child, ChildStdin, BufReader<ChildStdout>) {
    start_upstream(args, &["sh", "-c", script])
}

/// Ends the proxy (its stdin closed) and returns its stderr.
fn finish(mut child: Child, stdin: ChildStdin) -> String {
    drop(stdin);
    assert!(wait(&mut child, 20).success());
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    stderr
}

/// The upstream's stderr lines as the proxy logged them.
fn upstream_stderr_records(stderr: &str) -> Vec<Value> {
    stderr
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|record| record["event"] == "upstream.stderr")
        .collect()
}

#[test]
fn upstream_stderr_lines_become_log_records_cut_to_a_bound() {
    // A plain line, a line of 100,000 bytes, then the fault server (which answers).
    let script = r#"echo "plain log line" >&2; head -c 100000 /dev/zero | tr '\0' x >&2; echo >&2; exec python3 "$FAULT""#;
    let (child, mut stdin, mut stdout) = start_sh(&["--log-level", "info"], script);
    initialize(&mut stdin, &mut stdout);
    let stderr = finish(child, stdin);
    for line in stderr.lines() {
        assert!(
            line.starts_with('{') || line.starts_with("envelope proxy:"),
            "every stderr line is a record or the summary: {line:.200}"
        );
    }
    let records = upstream_stderr_records(&stderr);
    assert_eq!(records.len(), 2, "{stderr:.2000}");
    assert_eq!(records[0]["line"], "plain log line");
    assert_eq!(records[0]["source"], "upstream");
    assert_eq!(records[0]["level"], "info");
    assert!(records[0].get("cut_bytes").is_none());
    let kept = records[1]["line"].as_str().unwrap().len();
    assert_eq!(
        kept,
        envelope_mcp::transport::upstream_stderr::MAX_STDERR_LINE
    );
    assert_eq!(records[1]["cut_bytes"], 100_000 - kept);
    // Below info, the lines are not logged.
    let (child, mut stdin, mut stdout) = start_sh(&["--log-level", "warn"], script);
    initialize(&mut stdin, &mut stdout);
    let stderr = finish(child, stdin);
    assert!(
        upstream_stderr_records(&stderr).is_empty(),
        "{stderr:.2000}"
    );
    assert!(!stderr.contains("plain log line"), "{stderr:.2000}");
}

#[test]
fn a_chatty_upstream_stderr_never_blocks_it() {
    // 8 MiB of stderr (far over a pipe's 64 KiB) before the server starts: undrained, the
    // upstream would block and never answer.
    let script =
        r#"head -c 8388608 /dev/zero | tr '\0' 'y' | fold -w 1000 >&2; exec python3 "$FAULT""#;
    let (mut child, mut stdin, mut stdout) = start_sh(&["--log-level", "off"], script);
    // Read on a thread: a blocked upstream must fail the test, not hang it.
    let (done, answered) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        let first = read_answer(&mut stdout);
        let second = read_answer(&mut stdout);
        let _ = done.send((first, second));
    });
    send(
        &mut stdin,
        json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}),
    );
    send(
        &mut stdin,
        json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"alive"}}}),
    );
    let Ok((initialized, echoed)) = answered.recv_timeout(Duration::from_secs(60)) else {
        let _ = child.kill();
        panic!("no answer within 60 s: the upstream is blocked on its stderr");
    };
    reader.join().unwrap();
    assert_eq!(initialized["id"], 0, "{initialized}");
    assert_eq!(echoed["result"]["content"][0]["text"], "alive", "{echoed}");
    let stderr = finish(child, stdin);
    assert!(stderr.is_empty(), "nothing logged at off: {stderr:.500}");
}

#[test]
fn an_upstream_that_fails_leaves_its_last_stderr_lines_at_the_default_level() {
    let script =
        r#"for i in $(seq 1 30); do echo "log $i" >&2; done; echo "Traceback: boom" >&2; exit 3"#;
    let (child, mut stdin, mut stdout) = start_sh(&[], script);
    send(
        &mut stdin,
        json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}),
    );
    let answer = read_answer(&mut stdout);
    assert_eq!(answer["error"]["code"], -32000, "{answer}");
    let stderr = finish(child, stdin);
    // At the default level (warn) no line is logged one by one, but the tail is, once.
    assert!(upstream_stderr_records(&stderr).is_empty(), "{stderr}");
    let tails: Vec<Value> = stderr
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|record| record["event"] == "upstream.stderr_tail")
        .collect();
    assert_eq!(tails.len(), 1, "{stderr}");
    assert_eq!(tails[0]["level"], "warn");
    let lines = tails[0]["lines"].as_array().unwrap();
    assert_eq!(
        lines.len(),
        envelope_mcp::transport::upstream_stderr::TAIL_LINES
    );
    assert_eq!(lines.last().unwrap(), "Traceback: boom");
    assert_eq!(lines[0], "log 12", "the last lines, oldest first");
}

#[test]
fn listen_refuses_a_token_under_16_characters_at_start() {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_envelope"))
        .args(["proxy", "--listen", "127.0.0.1:0", "--", "cat"])
        .env("ENVELOPE_TOKEN", "short-s3cret")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("error[proxy.start]"), "{stderr}");
    assert!(
        stderr.contains("ENVELOPE_TOKEN") && stderr.contains("at least 16"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("short-s3cret"),
        "the token is printed: {stderr}"
    );
}

#[test]
fn http_limit_flags_are_listed_and_checked() {
    let output = common::run(&["proxy", "--help"], b"");
    let help = String::from_utf8(output.stdout).unwrap();
    for flag in [
        "--header-timeout",
        "--body-timeout",
        "--max-connections",
        "--max-sessions-per-client",
        "--session-idle-timeout",
    ] {
        assert!(help.contains(flag), "--help does not mention {flag}");
    }
    for args in [
        ["--max-connections", "0"],
        ["--max-sessions-per-client", "0"],
        ["--header-timeout", "-1"],
        ["--body-timeout", "0"],
        ["--session-idle-timeout", "inf"],
    ] {
        let mut full = vec!["proxy", "--listen", "127.0.0.1:0"];
        full.extend(args);
        full.extend(["--", "cat"]);
        let output = common::run(&full, b"");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains("error[usage.bad-value]"),
            "{args:?}: {stderr}"
        );
    }
}

/// Ends the proxy (its stdin closed), whatever its exit, and returns its stderr.
fn stderr_at_end(mut child: Child, stdin: ChildStdin) -> String {
    drop(stdin);
    wait(&mut child, 30);
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    stderr
}

/// Issue 26: at the default level the start of the upstream's junk stdout and the tail of
/// its stderr went into our log verbatim, secrets included.
#[test]
fn secrets_the_upstream_prints_are_masked_in_our_log() {
    let token = "ghp_0123456789abcdefABCDEF0123456789abcd";
    let script = format!(
        r#"echo "Authorization: Bearer {token}" >&2; echo '{{"start":"Authorization: Bearer {token}"'; sleep 1; exit 3"#
    );
    let (child, stdin, _stdout) = start_sh(&[], &script);
    std::thread::sleep(Duration::from_secs(3));
    let stderr = stderr_at_end(child, stdin);
    assert!(
        stderr.contains("\"event\":\"upstream.invalid\""),
        "{stderr}"
    );
    assert!(
        stderr.contains("\"event\":\"upstream.stderr_tail\""),
        "{stderr}"
    );
    assert!(!stderr.contains(token), "{stderr}");
    assert!(stderr.matches("Bearer ***").count() >= 2, "{stderr}");
}

/// Issue 26: a flood of junk wrote 722 MB of log in 10 s. The log is a token bucket of
/// bytes; what it dropped is counted in a `log.suppressed` record.
#[test]
fn a_flood_of_junk_is_a_bounded_log_with_a_count_of_what_was_dropped() {
    let script = r#"yes '{"junk": "not a JSON-RPC message at all, over and over"}' | head -n 300000; exec python3 "$FAULT""#;
    let started = Instant::now();
    let (mut child, mut stdin, mut stdout) = start_sh(&[], script);
    // Read as it comes: a pipe left full would block the proxy's log, and the proxy.
    let mut pipe = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut stderr = String::new();
        pipe.read_to_string(&mut stderr).unwrap();
        stderr
    });
    initialize(&mut stdin, &mut stdout);
    drop(stdin);
    wait(&mut child, 60);
    let elapsed = started.elapsed().as_secs_f64();
    let stderr = reader.join().unwrap();
    let rate = envelope_mcp::stats::log::RATE_BYTES_PER_SEC as f64;
    let burst = envelope_mcp::stats::log::BURST_BYTES as f64;
    assert!(
        (stderr.len() as f64) < burst + rate * elapsed + 4096.0,
        "{} bytes of log in {elapsed:.1}s",
        stderr.len()
    );
    let suppressed: u64 = stderr
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|record| record["event"] == "log.suppressed")
        .map(|record| record["lines"].as_u64().unwrap())
        .sum();
    let logged = stderr.matches("\"event\":\"upstream.invalid\"").count() as u64;
    assert!(suppressed > 0, "{:.2000}", stderr);
    assert_eq!(suppressed + logged, 300_000);
}

/// A store the proxy cannot write: a plain file where the folder should be.
fn unwritable_store() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("store");
    std::fs::write(&file, b"not a folder").unwrap();
    let store = file.display().to_string();
    (dir, store)
}

#[test]
fn a_store_that_cannot_be_written_is_refused_at_start() {
    let (_dir, store) = unwritable_store();
    let started = Instant::now();
    let (mut child, stdin, _stdout) = start(&["--store", &store]);
    let status = wait(&mut child, 20);
    drop(stdin);
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert_eq!(status.code(), Some(2), "{stderr}");
    assert!(
        stderr.starts_with("envelope: error[store.io]: "),
        "{stderr}"
    );
    assert!(stderr.contains(&store), "{stderr}");
    assert!(started.elapsed() < Duration::from_secs(20));
    // A folder that does not exist yet is created, as the other commands create it.
    let dir = tempfile::tempdir().unwrap();
    let fresh = dir.path().join("a/b/store");
    let (mut child, mut stdin, mut stdout) = start(&["--store", fresh.to_str().unwrap()]);
    initialize(&mut stdin, &mut stdout);
    assert!(fresh.join("sha256").is_dir());
    assert_eq!(std::fs::read_dir(fresh.join("sha256")).unwrap().count(), 0);
    drop(stdin);
    assert!(wait(&mut child, 20).success());
}

#[test]
fn an_upstream_command_that_cannot_start_is_answered_then_the_proxy_exits_non_zero() {
    // Restarts are on by default: a command that is not there is still not retried.
    let (mut child, mut stdin, mut stdout) =
        start_upstream(&[], &["/nonexistent/mcp-server", "--flag"]);
    send(
        &mut stdin,
        json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}),
    );
    let answer = read_answer(&mut stdout);
    assert_eq!(answer["id"], 0);
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("could not be started") && message.contains("/nonexistent/mcp-server"),
        "{answer}"
    );
    // The client's end is still open: the proxy ends by itself.
    let status = wait(&mut child, 20);
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert_eq!(status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("envelope: error[proxy.upstream]: the upstream server could not be started: cannot start /nonexistent/mcp-server"),
        "{stderr}"
    );
    drop(stdin);
}
