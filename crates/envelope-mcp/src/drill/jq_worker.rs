//! jq filters in a child process, so that a filter that exhausts memory or stack ends the
//! child and not the proxy (jaq aborts the process on either, and has no hook to bound them).
//!
//! The child is a program that calls [`worker_main_if_requested`] first thing in `main`: the
//! `envelope` binary itself (the proxy then calls `isolate_in(std::env::current_exe()?)`), or
//! the `envelope-jq-worker` binary of this crate. It gets [`WORKER_ENV`] and nothing else of
//! the proxy's environment, reads one request `{"filter", "input"}` on stdin and writes one
//! answer, `{"ok": value}` or `{"error": message}`, on stdout. The parent kills it at
//! [`TIME_LIMIT`] and reaps it. It runs with an address space of [`WORKER_MEMORY`] at most,
//! and no more than [`MAX_WORKERS`](super::jq::MAX_WORKERS) run at once.

use std::io::{Read, Write};
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::jq_filter::{STACK_SIZE, TIME_LIMIT, evaluate, too_slow};

/// The environment variable that makes a program a jq worker ([`worker_main_if_requested`]).
pub const WORKER_ENV: &str = "ENVELOPE_JQ_WORKER";

/// The address space a worker process may use (`RLIMIT_AS`, set in the child before the
/// worker program starts, so that no worker program can forget it): 512 MiB. A filter that
/// asks for more fails an allocation and the worker ends (jaq aborts), with an error naming
/// this limit.
pub const WORKER_MEMORY: u64 = 512 * 1024 * 1024;

/// The worker program, once set.
static PROGRAM: OnceLock<PathBuf> = OnceLock::new();

/// Runs every later filter in a child process of `program` (which must call
/// [`worker_main_if_requested`]). Only the first call counts; returns whether it was this one.
pub fn isolate_in(program: impl Into<PathBuf>) -> bool {
    PROGRAM.set(program.into()).is_ok()
}

/// The worker program, when [`isolate_in`] set one.
pub(super) fn program() -> Option<&'static Path> {
    PROGRAM.get().map(PathBuf::as_path)
}

/// When [`WORKER_ENV`] is set: serves one request on stdin/stdout and exits the process.
/// Otherwise returns at once. Call it first thing in `main`.
pub fn worker_main_if_requested() {
    if std::env::var_os(WORKER_ENV).is_none() {
        return;
    }
    let served = serve(&mut std::io::stdin().lock(), &mut std::io::stdout().lock());
    std::process::exit(if served.is_ok() { 0 } else { 1 });
}

/// Reads one request from `input`, runs it, writes the answer to `output`.
///
/// # Errors
///
/// When reading or writing fails (a bad request is answered, not an error).
pub fn serve(input: &mut dyn Read, output: &mut dyn Write) -> std::io::Result<()> {
    let mut request = Vec::new();
    input.read_to_end(&mut request)?;
    let answer = match serde_json::from_slice::<Value>(&request) {
        Ok(Value::Object(mut request)) => match (request.remove("filter"), request.remove("input"))
        {
            (Some(Value::String(filter)), Some(value)) => evaluate_on_big_stack(filter, value),
            _ => Err("the worker's request has no `filter` string or no `input`".to_string()),
        },
        _ => Err("the worker's request is not a JSON object".to_string()),
    };
    let answer = match answer {
        Ok(value) => json!({"ok": value}),
        Err(message) => json!({"error": message}),
    };
    serde_json::to_writer(&mut *output, &answer)?;
    output.flush()
}

/// The main thread's stack is small; deep (not endless) recursion gets [`STACK_SIZE`].
fn evaluate_on_big_stack(filter: String, input: Value) -> Result<Value, String> {
    // The parent kills the process at its deadline; this one only has to be later.
    let deadline = Instant::now() + TIME_LIMIT * 2;
    std::thread::Builder::new()
        .stack_size(STACK_SIZE)
        .spawn(move || evaluate(&filter, &input, deadline))
        .map_err(|e| format!("cannot start a jq thread: {e}"))?
        .join()
        .unwrap_or_else(|_| Err("the jq filter failed inside jaq (a panic)".to_string()))
}

/// [`super::jq::run`] in a child process of `program`.
pub(super) fn run_in_child(program: &Path, filter: &str, input: &Value) -> Result<Value, String> {
    let request = serde_json::to_vec(&json!({"filter": filter, "input": input}))
        .map_err(|e| e.to_string())?;
    let mut command = Command::new(program);
    // SAFETY: runs in the forked child before exec; setrlimit is async-signal-safe and the
    // closure allocates nothing.
    unsafe {
        command.pre_exec(|| limit_memory(WORKER_MEMORY));
    }
    let mut child = command
        .env_clear()
        .env(WORKER_ENV, "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start the jq worker {}: {e}", program.display()))?;
    let deadline = Instant::now() + TIME_LIMIT;

    // Both pipes on their own threads: the request and the answer may each be larger than a
    // pipe's buffer.
    let mut stdin = child.stdin.take();
    let writer = std::thread::spawn(move || {
        if let Some(stdin) = stdin.as_mut() {
            // A worker that died early closes the pipe: its exit status tells why.
            let _ = stdin.write_all(&request);
        }
    });
    let mut stdout = child.stdout.take();
    let reader = std::thread::spawn(move || {
        let mut answer = Vec::new();
        if let Some(stdout) = stdout.as_mut() {
            let _ = stdout.read_to_end(&mut answer);
        }
        answer
    });

    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Ok(status),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(2)),
            Ok(None) => break Err(too_slow()),
            Err(e) => break Err(format!("cannot wait for the jq worker: {e}")),
        }
    };
    if status.is_err() {
        // Killed and reaped: no zombie, and the pipes close so both threads end.
        let _ = child.kill();
        let _ = child.wait();
    }
    let _ = writer.join();
    let answer = reader.join().unwrap_or_default();
    let status = status?;
    match status.code() {
        Some(0) => {}
        // Ended by a signal: jaq aborts on an allocation failure or a stack overflow.
        None => {
            return Err(format!(
                "the jq filter was stopped: it exhausted the worker's memory or stack (memory \
                 limit {} MiB; {status}); narrow it (select with `pointer` first)",
                WORKER_MEMORY >> 20
            ));
        }
        Some(code) => {
            return Err(format!(
                "the jq worker {} exited with code {code} without an answer (a program that \
                 does not call worker_main_if_requested?)",
                program.display()
            ));
        }
    }
    match serde_json::from_slice::<Value>(&answer) {
        Ok(Value::Object(mut answer)) => match (answer.remove("ok"), answer.remove("error")) {
            (Some(value), None) => Ok(value),
            (None, Some(Value::String(message))) => Err(message),
            _ => Err("the jq worker gave an answer of the wrong shape".to_string()),
        },
        _ => Err("the jq worker gave no answer".to_string()),
    }
}

/// Limits this process's address space to `bytes` (soft and hard limit).
fn limit_memory(bytes: u64) -> std::io::Result<()> {
    let limit = libc::rlimit {
        rlim_cur: bytes as libc::rlim_t,
        rlim_max: bytes as libc::rlim_t,
    };
    // SAFETY: setrlimit reads the struct it is given and nothing else.
    if unsafe { libc::setrlimit(libc::RLIMIT_AS, &limit) } == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn served(request: &[u8]) -> Value {
        let mut output = Vec::new();
        serve(&mut &request[..], &mut output).unwrap();
        serde_json::from_slice(&output).unwrap()
    }

    #[test]
    fn a_program_that_is_not_a_worker_is_reported() {
        let err = run_in_child(Path::new("/bin/false"), ".", &json!(1)).unwrap_err();
        assert!(
            err.contains("exited with code 1 without an answer"),
            "{err}"
        );
        let err = run_in_child(Path::new("/nonexistent/worker"), ".", &json!(1)).unwrap_err();
        assert!(
            err.starts_with("cannot start the jq worker /nonexistent/worker"),
            "{err}"
        );
    }

    #[test]
    fn one_request_one_answer() {
        let answer = served(br#"{"filter": ".a | map(. * 2)", "input": {"a": [1, 2]}}"#);
        assert_eq!(answer, json!({"ok": [2, 4]}));
        let answer = served(br#"{"filter": ".a.b", "input": {"a": 1}}"#);
        assert!(
            answer["error"].as_str().unwrap().contains("cannot index"),
            "{answer}"
        );
        let answer = served(br#"{"filter": 3}"#);
        assert!(
            answer["error"].as_str().unwrap().contains("no `filter`"),
            "{answer}"
        );
        let answer = served(b"junk");
        assert!(
            answer["error"]
                .as_str()
                .unwrap()
                .contains("not a JSON object"),
            "{answer}"
        );
    }
}
