//! Command operations with real child processes: JSON or text stdout, non-zero exits,
//! declared error codes, no shell, and hangs killed (with their process group).

mod common;
use common::{assert_valid_envelope, process_ended, runtime};

use std::path::Path;
use std::time::{Duration, Instant};

use envelope_ops::command::CommandHandler;
use envelope_ops::{
    CallError, Context, Executed, HandlerError, OperationSpec, OperationType, Registry,
};
use serde_json::{Value, json};

fn command(argv: &[&str], timeout: Duration, codes: &[&str]) -> Registry {
    let mut registry = Registry::new();
    let handler = CommandHandler::new(
        argv.iter().map(|s| s.to_string()).collect(),
        timeout,
        codes.iter().map(|s| s.to_string()).collect(),
    )
    .unwrap();
    registry
        .register(
            OperationSpec::new("cmd", "run", OperationType::Mutation),
            Box::new(handler),
        )
        .unwrap();
    registry
}

fn call(registry: &Registry, input: Value, ctx: &Context) -> Result<Executed, CallError> {
    runtime().block_on(registry.execute("cmd.run", input, ctx))
}

const LONG: Duration = Duration::from_secs(20);

#[test]
fn json_on_stdout_is_the_data_and_the_input_arrives_on_stdin() {
    let input = json!({"path": "a b", "n": [1, 2.5, null], "s": "é\"\\"});
    let done = call(
        &command(&["cat"], LONG, &[]),
        input.clone(),
        &Context::default(),
    )
    .unwrap();
    assert_eq!(done.envelope["data"], input);
    assert_eq!(done.envelope["meta"]["operationId"], "cmd.run");
    assert_valid_envelope(&done.envelope);
}

#[test]
fn text_on_stdout_is_kept_as_text() {
    let done = call(
        &command(&["printf", "%s", "hello world\n"], LONG, &[]),
        json!({}),
        &Context::default(),
    )
    .unwrap();
    assert_eq!(done.envelope["data"], json!("hello world\n"));
    assert_valid_envelope(&done.envelope);
    // JSON with surrounding whitespace is still JSON.
    let done = call(
        &command(&["printf", "%s", "  [1, 2]\n"], LONG, &[]),
        json!({}),
        &Context::default(),
    )
    .unwrap();
    assert_eq!(done.envelope["data"], json!([1, 2]));
}

#[test]
fn arguments_reach_the_program_without_a_shell() {
    let tricky = "$HOME; echo injected | `id` && *";
    let done = call(
        &command(&["printf", "%s", tricky], LONG, &[]),
        json!({}),
        &Context::default(),
    )
    .unwrap();
    assert_eq!(done.envelope["data"], json!(tricky));
}

#[test]
fn a_non_zero_exit_is_an_execution_error_with_status_and_stderr() {
    let registry = command(
        &[
            "sh",
            "-c",
            "echo partial; echo 'something broke' >&2; exit 3",
        ],
        LONG,
        &[],
    );
    let e = call(&registry, json!({}), &Context::default()).unwrap_err();
    assert_eq!(e.code, "EXECUTION_ERROR");
    assert!(
        e.message.contains("exited with status 3: something broke"),
        "{}",
        e.message
    );
    let details = e.details.unwrap();
    assert_eq!(details["exitStatus"], 3);
    assert_eq!(details["stderr"], "something broke\n");
}

#[test]
fn a_declared_code_named_on_stderr_is_the_error_code() {
    let registry = command(
        &["sh", "-c", "echo 'NOT_A_REPO: no .git here' >&2; exit 1"],
        LONG,
        &["OTHER", "NOT_A_REPO"],
    );
    let e = call(&registry, json!({}), &Context::default()).unwrap_err();
    assert_eq!(e.code, "NOT_A_REPO");
    assert_eq!(e.details.unwrap()["exitStatus"], 1);
}

#[test]
fn a_missing_program_is_an_execution_error() {
    let e = call(
        &command(&["/nonexistent/program"], LONG, &[]),
        json!({}),
        &Context::default(),
    )
    .unwrap_err();
    assert_eq!(e.code, "EXECUTION_ERROR");
    assert!(e.message.contains("cannot start"), "{}", e.message);
}

#[test]
fn a_program_that_ignores_a_large_input_does_not_hang() {
    let big = json!({"blob": "x".repeat(4 << 20)});
    let done = call(&command(&["true"], LONG, &[]), big, &Context::default()).unwrap();
    assert_eq!(done.envelope["data"], json!(""));
}

/// The pid a test program wrote to `file`, once it is there.
fn pid_in(file: &Path) -> i32 {
    for _ in 0..200 {
        if let Ok(text) = std::fs::read_to_string(file)
            && let Ok(pid) = text.trim().parse()
        {
            return pid;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("{} was never written", file.display());
}

/// Whether `pid` is still a live (not zombie) process.
fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

fn wait_dead(pid: i32) -> bool {
    (0..200).any(|_| {
        let dead = !alive(pid);
        if !dead {
            std::thread::sleep(Duration::from_millis(10));
        }
        dead
    })
}

/// A program that starts a grandchild (`sleep`) recording its pid, then hangs.
fn hanging(pidfile: &Path) -> Vec<String> {
    vec![
        "sh".into(),
        "-c".into(),
        format!("sleep 60 & echo $! > {}; wait", pidfile.display()),
    ]
}

#[test]
fn a_hang_is_killed_at_the_timeout_with_its_process_group() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("pid");
    let argv = hanging(&pidfile);
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    let registry = command(&argv, Duration::from_millis(500), &[]);
    let started = Instant::now();
    let e = call(&registry, json!({}), &Context::default()).unwrap_err();
    assert_eq!(e.code, "TIMEOUT");
    assert_eq!(e.details.unwrap()["timeoutSeconds"], 0.5);
    assert!(started.elapsed() < Duration::from_secs(10));
    let grandchild = pid_in(&pidfile);
    assert!(
        wait_dead(grandchild),
        "the grandchild {grandchild} outlived the timeout"
    );
}

#[test]
fn a_caller_deadline_kills_the_process_group_too() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("pid");
    let argv = hanging(&pidfile);
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    let registry = command(&argv, LONG, &[]);
    let ctx = Context::default().with_deadline(Instant::now() + Duration::from_millis(500));
    let e = call(&registry, json!({}), &ctx).unwrap_err();
    assert_eq!(e.code, "TIMEOUT");
    let grandchild = pid_in(&pidfile);
    assert!(
        wait_dead(grandchild),
        "the grandchild {grandchild} outlived the deadline"
    );
}

#[test]
fn command_handlers_report_their_errors_as_call_errors() {
    // The handler's own CallError passes through execute unchanged (not re-mapped).
    let handler = CommandHandler::new(vec!["false".into()], LONG, Vec::new()).unwrap();
    let ctx = Context::default();
    let result = runtime().block_on(envelope_ops::Handler::call(&handler, json!({}), &ctx));
    assert!(
        matches!(result, Err(HandlerError::Call(ref e)) if e.code == "EXECUTION_ERROR"),
        "{result:?}"
    );
    assert!(CommandHandler::new(Vec::new(), LONG, Vec::new()).is_none());
}

#[test]
fn a_flood_on_stdout_is_stopped_at_the_cap() {
    let started = Instant::now();
    let e = call(
        &command(&["yes"], LONG, &[]),
        json!({}),
        &Context::default(),
    )
    .unwrap_err();
    assert_eq!(e.code, "EXECUTION_ERROR");
    assert!(e.message.contains("more than"), "{}", e.message);
    assert_eq!(
        e.details.unwrap()["maxStdoutBytes"],
        envelope_ops::command::MAX_STDOUT
    );
    assert!(
        started.elapsed() < LONG,
        "stopped by the cap, not the timeout"
    );
}

#[test]
fn a_long_stderr_is_cut_in_the_details() {
    let registry = command(
        &[
            "sh",
            "-c",
            "head -c 3000000 /dev/zero | tr '\\0' e >&2; exit 2",
        ],
        LONG,
        &[],
    );
    let e = call(&registry, json!({}), &Context::default()).unwrap_err();
    let details = e.details.unwrap();
    assert_eq!(details["exitStatus"], 2);
    let stderr = details["stderr"].as_str().unwrap();
    assert_eq!(stderr.len(), envelope_ops::command::MAX_STDERR);
    assert!(stderr.bytes().all(|b| b == b'e'));
}

/// `cmd.lines`: a subscription command running `script` with `sh -c` (the test's own
/// choice of program; the engine never uses a shell).
fn subscription(script: &str, timeout: Duration) -> Registry {
    let mut registry = Registry::new();
    let handler = CommandHandler::new(
        vec!["sh".into(), "-c".into(), script.into()],
        timeout,
        Vec::new(),
    )
    .unwrap()
    .streaming(true);
    registry
        .register(
            OperationSpec::new("cmd", "lines", OperationType::Subscription),
            Box::new(handler),
        )
        .unwrap();
    registry
}

fn lines(registry: &Registry, input: Value) -> Vec<Result<Value, CallError>> {
    use futures::StreamExt;
    let context = Context::default();
    runtime().block_on(async {
        registry
            .subscribe("cmd.lines", input, &context)
            .unwrap()
            .map(|item| item.map(|done| done.envelope))
            .collect()
            .await
    })
}

#[test]
fn a_subscription_command_yields_one_envelope_per_line() {
    // Input on stdin; JSON lines, a text line, blank lines skipped.
    let registry = subscription(
        r#"read -r input; echo "{\"got\": $input}"; echo; echo '[1,2]'; echo 'plain text'"#,
        Duration::from_secs(10),
    );
    let items = lines(&registry, json!({"n": 1}));
    let data: Vec<Value> = items
        .into_iter()
        .map(|item| {
            let env = item.unwrap();
            assert_valid_envelope(&env);
            env["data"].clone()
        })
        .collect();
    assert_eq!(
        data,
        [json!({"got": {"n": 1}}), json!([1, 2]), json!("plain text")]
    );
}

#[test]
fn a_subscription_command_that_fails_ends_with_its_error() {
    let registry = subscription(
        "echo 1; echo 'broken pipe dream' >&2; exit 3",
        Duration::from_secs(10),
    );
    let items = lines(&registry, json!({}));
    assert_eq!(items.len(), 2);
    assert_eq!(items[0].as_ref().unwrap()["data"], 1);
    let e = items[1].as_ref().unwrap_err();
    assert_eq!(e.code, "EXECUTION_ERROR");
    assert!(
        e.message.contains("status 3") && e.message.contains("broken pipe dream"),
        "{}",
        e.message
    );
}

#[test]
fn a_subscription_commands_timeout_bounds_each_line_and_kills_the_group() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("pid");
    // Lines 0.2 s apart for 0.6 s, well within a 1 s wait per line; then silence.
    let script = format!(
        "echo $$ > {}; for i in 1 2 3; do echo $i; sleep 0.2; done; sleep 30",
        pidfile.display()
    );
    let registry = subscription(&script, Duration::from_secs(1));
    let started = Instant::now();
    let items = lines(&registry, json!({}));
    assert_eq!(items.len(), 4, "three lines, then the timeout");
    assert_eq!(items[2].as_ref().unwrap()["data"], 3);
    assert_eq!(items[3].as_ref().unwrap_err().code, "TIMEOUT");
    assert!(started.elapsed() < Duration::from_secs(10));
    let pid: i32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(process_ended(pid), "the command outlived its subscription");
}

#[test]
fn a_subscription_command_stopped_by_its_consumer_is_killed() {
    use futures::StreamExt;
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("pid");
    let script = format!(
        "echo $$ > {}; while true; do echo tick; sleep 0.05; done",
        pidfile.display()
    );
    let registry = subscription(&script, Duration::from_secs(10));
    let context = Context::default();
    runtime().block_on(async {
        let mut items = registry
            .subscribe("cmd.lines", json!({}), &context)
            .unwrap();
        for _ in 0..3 {
            assert_eq!(
                items.next().await.unwrap().unwrap().envelope["data"],
                "tick"
            );
        }
    });
    let pid: i32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(process_ended(pid), "the command outlived its consumer");
}

#[test]
fn a_subscription_line_over_the_cap_ends_the_stream_and_the_command() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("pid");
    // A first line that is not UTF-8 (kept, read leniently), then a line that never ends.
    let script = format!(
        "echo $$ > {}; printf 'caf\\351\\n'; exec python3 -c \"import sys, time; sys.stdout.write('x' * ((64 << 20) + 10)); sys.stdout.flush(); time.sleep(30)\"",
        pidfile.display()
    );
    let registry = subscription(&script, Duration::from_secs(20));
    let started = Instant::now();
    let items = lines(&registry, json!({}));
    assert_eq!(
        items.len(),
        2,
        "{:?}",
        items.iter().map(|i| i.is_ok()).collect::<Vec<_>>()
    );
    assert_eq!(items[0].as_ref().unwrap()["data"], "caf\u{fffd}");
    let e = items[1].as_ref().unwrap_err();
    assert_eq!(e.code, "EXECUTION_ERROR");
    assert_eq!(e.details.as_ref().unwrap()["maxLineBytes"], 64 << 20);
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "stopped at the cap"
    );
    let pid: i32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(
        process_ended(pid),
        "the command outlived its stopped stream"
    );
}
