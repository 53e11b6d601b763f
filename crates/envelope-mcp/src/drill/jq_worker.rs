//! jq filters in a child process, so that a filter that exhausts memory or stack ends the
//! child and not the proxy (jaq aborts the process on either, and has no hook to bound them).
//!
//! The child is a program that calls [`worker_main_if_requested`] first thing in `main`: the
//! `envelope` binary itself (the proxy then calls `isolate_in(std::env::current_exe()?)`), or
//! the `envelope-jq-worker` binary of this crate. It gets [`WORKER_ENV`] and nothing else of
//! the proxy's environment, reads one request `{"filter", "input"}` on stdin and writes one
//! answer, `{"ok": value}` or `{"error": message}`, on stdout. It runs with an address
//! space of [`WORKER_MEMORY`] at most, and no more than
//! [`MAX_WORKERS`](super::jq::MAX_WORKERS) run at once.
//!
//! [`TIME_LIMIT`] counts the filter's evaluation only, as it does on a thread: the worker
//! writes one space (JSON whitespace, ignored by the answer's parse) when it starts
//! evaluating, and its answer after. The parent kills it when it has evaluated for
//! [`TIME_LIMIT`] (and a quarter of a second, for the worker to stop itself and say so);
//! its start (a process, the input's transfer and parse) and the answer's transfer have a
//! limit of their own, [`TRANSFER_LIMIT`] each. Counting them in the filter's time made a
//! filter over a 10 MB input fail on a loaded machine before it had begun.

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

/// How long the worker may take to start and read its input, and to write its answer,
/// each: the filter's own time is [`TIME_LIMIT`].
pub const TRANSFER_LIMIT: Duration = Duration::from_secs(30);

/// How long after [`TIME_LIMIT`] of evaluation the parent kills the worker: the worker
/// checks its own deadline between outputs and stops with the same error, a clean answer.
const KILL_GRACE: Duration = Duration::from_millis(250);

/// What the worker writes when it starts evaluating (JSON whitespace: the answer after it
/// parses as if it were not there).
const EVALUATING: u8 = b' ';

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
            (Some(Value::String(filter)), Some(value)) => {
                // The parent's clock for the filter starts here.
                output.write_all(&[EVALUATING])?;
                output.flush()?;
                evaluate_on_big_stack(filter, value)
            }
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
    // The parent kills the process a moment after this: stopping here says why, cleanly.
    let deadline = Instant::now() + TIME_LIMIT;
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
    let (phases, phase) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || read_answer(stdout.as_mut(), &phases));

    let mut clock = Clock::new();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Ok(status),
            Ok(None) => {
                while let Ok(next) = phase.try_recv() {
                    clock.enter(next);
                }
                if let Some(late) = clock.late() {
                    break Err(late);
                }
                std::thread::sleep(Duration::from_millis(2));
            }
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

/// Where a worker is, as its output tells: each phase has its own time limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Started, reading its input (until the [`EVALUATING`] byte).
    Starting,
    /// Running the filter (until the answer's first byte).
    Evaluating,
    /// Writing its answer (until it exits).
    Answering,
}

/// The phase a worker is in and since when.
struct Clock {
    phase: Phase,
    since: Instant,
}

impl Clock {
    fn new() -> Self {
        Clock {
            phase: Phase::Starting,
            since: Instant::now(),
        }
    }

    fn enter(&mut self, phase: Phase) {
        *self = Clock {
            phase,
            since: Instant::now(),
        };
    }

    /// The error when the current phase has run past its limit.
    fn late(&self) -> Option<String> {
        let (limit, error): (Duration, fn() -> String) = match self.phase {
            Phase::Starting => (TRANSFER_LIMIT, || {
                format!(
                    "the jq worker did not start on its input within {}s",
                    TRANSFER_LIMIT.as_secs()
                )
            }),
            Phase::Evaluating => (TIME_LIMIT + KILL_GRACE, too_slow),
            Phase::Answering => (TRANSFER_LIMIT, || {
                format!(
                    "the jq worker did not finish writing its answer within {}s",
                    TRANSFER_LIMIT.as_secs()
                )
            }),
        };
        (self.since.elapsed() >= limit).then(error)
    }
}

/// Reads a worker's whole output, telling `phases` when its evaluation starts (the
/// [`EVALUATING`] byte) and when its answer starts (the next byte).
fn read_answer(
    stdout: Option<&mut std::process::ChildStdout>,
    phases: &std::sync::mpsc::Sender<Phase>,
) -> Vec<u8> {
    let mut answer = Vec::new();
    let Some(stdout) = stdout else {
        return answer;
    };
    let mut byte = [0u8];
    if matches!(stdout.read(&mut byte), Ok(1)) {
        answer.push(byte[0]);
        if byte[0] == EVALUATING {
            let _ = phases.send(Phase::Evaluating);
            if matches!(stdout.read(&mut byte), Ok(1)) {
                answer.push(byte[0]);
                let _ = phases.send(Phase::Answering);
            }
        }
        let _ = stdout.read_to_end(&mut answer);
    }
    answer
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

    /// A worker program written as a shell script (the environment is cleared: full paths).
    fn script(name: &str, body: &str) -> PathBuf {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = std::env::temp_dir().join(format!("envelope-jq-script-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    /// A worker slow to start (a big input's transfer and parse on a loaded machine) is not
    /// a slow filter: the time limit counts from the worker's space byte.
    #[test]
    fn the_time_limit_counts_the_evaluation_not_the_start() {
        let slow_start = script(
            "slow-start",
            &format!(
                "/bin/sleep {}; printf ' {{\"ok\": 7}}'",
                TIME_LIMIT.as_secs() + 1
            ),
        );
        assert_eq!(run_in_child(&slow_start, ".", &json!(null)), Ok(json!(7)));
        let slow_filter = script("slow-filter", "printf ' '; exec /bin/sleep 30");
        let started = Instant::now();
        let err = run_in_child(&slow_filter, ".", &json!(null)).unwrap_err();
        assert_eq!(err, too_slow());
        let took = started.elapsed();
        assert!(
            took >= TIME_LIMIT && took < TIME_LIMIT + TRANSFER_LIMIT,
            "{took:?}"
        );
        // And the phases' limits, without waiting for them.
        let past = |phase, ago| Clock {
            phase,
            since: Instant::now() - ago,
        };
        assert_eq!(past(Phase::Starting, TIME_LIMIT * 3).late(), None);
        assert_eq!(
            past(Phase::Evaluating, TIME_LIMIT * 3).late(),
            Some(too_slow())
        );
        assert_eq!(past(Phase::Evaluating, TIME_LIMIT / 2).late(), None);
        assert_eq!(past(Phase::Answering, TIME_LIMIT * 3).late(), None);
        let late = past(Phase::Starting, TRANSFER_LIMIT).late().unwrap();
        assert!(late.contains("did not start on its input"), "{late}");
        let late = past(Phase::Answering, TRANSFER_LIMIT).late().unwrap();
        assert!(late.contains("did not finish writing its answer"), "{late}");
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
