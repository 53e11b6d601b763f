//! Command operations: a local program run with an argv (no shell), the input JSON on its
//! stdin, its stdout the result (JSON when it parses, else the text), a non-zero exit an
//! EXECUTION_ERROR (or a declared code that stderr names), a timeout that kills its
//! process group.

use std::os::unix::process::ExitStatusExt as _;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{
    AsyncBufReadExt as _, AsyncRead, AsyncReadExt as _, AsyncWriteExt as _, BufReader,
};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use crate::context::Context;
use crate::error::{CallError, codes};
use crate::handler::{Handler, HandlerError, HandlerFuture, ItemStream};

/// The most stdout a command may write (its data is held in memory): more is an
/// EXECUTION_ERROR and the program is stopped.
pub const MAX_STDOUT: usize = 64 << 20;
/// The most stderr kept for an error's details; the rest is read and dropped.
pub const MAX_STDERR: usize = 64 << 10;

/// The timeout of a command that declares none: no command runs forever.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// A local program as an operation's handler.
///
/// ```no_run
/// use std::time::Duration;
/// use envelope_ops::command::CommandHandler;
///
/// let echo = CommandHandler::new(vec!["cat".into()], Duration::from_secs(5), Vec::new()).unwrap();
/// # let _ = echo;
/// ```
#[derive(Clone, Debug)]
pub struct CommandHandler {
    argv: Vec<String>,
    timeout: Duration,
    /// Declared error codes: a failing command whose stderr names one takes it.
    error_codes: Vec<String>,
    /// A subscription: each stdout line is an item ([`CommandHandler::streaming`]).
    streaming: bool,
}

impl CommandHandler {
    /// A handler running `argv` (program first) with `timeout`; `None` when `argv` is empty.
    pub fn new(argv: Vec<String>, timeout: Duration, error_codes: Vec<String>) -> Option<Self> {
        (!argv.is_empty()).then_some(CommandHandler {
            argv,
            timeout,
            error_codes,
            streaming: false,
        })
    }

    /// With `true`, the handler of a subscription: subscribing yields one item per
    /// non-blank stdout line (NDJSON), and `timeout` bounds the wait for each line.
    pub fn streaming(mut self, streaming: bool) -> Self {
        self.streaming = streaming;
        self
    }

    /// Starts the program in its own process group (a timeout ends the program and
    /// everything it started), with the guard that kills the group when dropped.
    fn spawn(&self) -> Result<(Child, GroupGuard), CallError> {
        let mut command = Command::new(&self.argv[0]);
        command
            .args(&self.argv[1..])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        let child = command.spawn().map_err(|e| {
            CallError::new(
                codes::EXECUTION_ERROR,
                format!("cannot start {:?}: {e}", self.argv[0]),
            )
            .with_details(json!({ "command": self.argv }))
        })?;
        let group = GroupGuard(child.id().map(|pid| pid as i32));
        Ok((child, group))
    }

    async fn run(&self, input: Value) -> Result<Value, CallError> {
        let (mut child, mut group) = self.spawn()?;
        let feed = feed(child.stdin.take(), input);
        let stdout = child.stdout.take();
        let stderr = child.stderr.take();
        let run = async {
            let ((), out, err) = tokio::join!(
                feed,
                read_capped(stdout, MAX_STDOUT, true),
                read_capped(stderr, MAX_STDERR, false)
            );
            let (out, err) = (out?, err?);
            if out.len() > MAX_STDOUT {
                return Ok(Err(out.len()));
            }
            child.wait().await.map(|status| Ok((status, out, err)))
        };
        let output = match tokio::time::timeout(self.timeout, run).await {
            Ok(Ok(Ok(output))) => output,
            // Over the cap: `group` kills the process group when dropped, on return.
            Ok(Ok(Err(_))) => {
                return Err(CallError::new(
                    codes::EXECUTION_ERROR,
                    format!(
                        "{:?} wrote more than {MAX_STDOUT} bytes to stdout (stopped)",
                        self.argv[0]
                    ),
                )
                .with_details(json!({ "command": self.argv, "maxStdoutBytes": MAX_STDOUT })));
            }
            Ok(Err(e)) => {
                return Err(CallError::new(
                    codes::EXECUTION_ERROR,
                    format!("{:?}: {e}", self.argv[0]),
                ));
            }
            Err(_) => {
                return Err(CallError::timeout(self.timeout.as_secs_f64()).with_details(
                    json!({ "timeoutSeconds": self.timeout.as_secs_f64(), "command": self.argv }),
                ));
            }
        };
        // The program was waited for: its group id may be reused from now on.
        group.0 = None;
        let (status, stdout, mut stderr) = output;
        stderr.truncate(MAX_STDERR);
        if !status.success() {
            return Err(self.failure(status, &stderr));
        }
        Ok(stdout_value(stdout))
    }

    fn failure(&self, status: ExitStatus, stderr: &[u8]) -> CallError {
        let stderr = String::from_utf8_lossy(stderr).into_owned();
        let code = self
            .error_codes
            .iter()
            .find(|code| !code.is_empty() && stderr.contains(code.as_str()))
            .map(String::as_str)
            .unwrap_or(codes::EXECUTION_ERROR);
        let how = match (status.code(), status.signal()) {
            (Some(code), _) => format!("exited with status {code}"),
            (None, Some(signal)) => format!("was killed by signal {signal}"),
            _ => format!("ended ({status})"),
        };
        let first_line = stderr.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
        let message = if first_line.is_empty() {
            format!("{:?} {how}", self.argv[0])
        } else {
            format!("{:?} {how}: {first_line}", self.argv[0])
        };
        CallError::new(code, message).with_details(json!({
            "exitStatus": status.code(),
            "signal": status.signal(),
            "stderr": stderr,
        }))
    }
}

/// Writes the input JSON to the program's stdin and closes it. A program that does not read
/// its input closes the pipe: not an error.
async fn feed(stdin: Option<ChildStdin>, input: Value) {
    if let Some(mut stdin) = stdin {
        let bytes = serde_json::to_vec(&input).unwrap_or_default();
        let _ = stdin.write_all(&bytes).await;
        let _ = stdin.shutdown().await;
    }
}

/// A running subscription command: its stdout's lines, its stderr kept aside, its group.
struct Streaming {
    stdout: BufReader<ChildStdout>,
    child: Child,
    group: GroupGuard,
    stderr: tokio::task::JoinHandle<Vec<u8>>,
}

impl CommandHandler {
    /// The items of a subscription command: each non-blank stdout line (NDJSON: JSON when it
    /// parses, else the line's text). `timeout` bounds the wait for each line, not the whole
    /// run; a non-zero exit is the last item, an error; dropping the stream kills the group.
    fn lines(&self, input: Value) -> ItemStream<'_> {
        let start = async move {
            let (mut child, group) = self.spawn()?;
            tokio::spawn(feed(child.stdin.take(), input));
            let stderr = child.stderr.take();
            let stderr = tokio::spawn(async move {
                read_capped(stderr, MAX_STDERR, false)
                    .await
                    .unwrap_or_default()
            });
            let stdout = child.stdout.take().expect("stdout is piped");
            Ok::<_, CallError>(Streaming {
                stdout: BufReader::new(stdout),
                child,
                group,
                stderr,
            })
        };
        let items = futures::stream::unfold(
            Some(Stage::Start(Box::pin(start))),
            move |state| async move {
                let mut running = match state? {
                    Stage::Start(start) => match start.await {
                        Ok(running) => Box::new(running),
                        Err(e) => return Some((Err(HandlerError::Call(e)), None)),
                    },
                    Stage::Running(running) => running,
                };
                loop {
                    let read = next_line(&mut running.stdout, MAX_STDOUT);
                    let line = match tokio::time::timeout(self.timeout, read).await {
                        Err(_) => {
                            let e = CallError::timeout(self.timeout.as_secs_f64()).with_details(
                                json!({
                                    "timeoutSeconds": self.timeout.as_secs_f64(),
                                    "command": self.argv,
                                    "between": "lines",
                                }),
                            );
                            return Some((Err(HandlerError::Call(e)), None));
                        }
                        Ok(Err(e)) => {
                            let e = CallError::new(
                                codes::EXECUTION_ERROR,
                                format!("{:?}: {e}", self.argv[0]),
                            );
                            return Some((Err(HandlerError::Call(e)), None));
                        }
                        Ok(Ok(line)) => line,
                    };
                    match line {
                        // Over the cap: the stream ends here; dropping `running` kills the group.
                        Some(Line::TooLong) => {
                            let e = CallError::new(
                                codes::EXECUTION_ERROR,
                                format!(
                                    "{:?} wrote a line of more than {MAX_STDOUT} bytes to stdout (stopped)",
                                    self.argv[0]
                                ),
                            )
                            .with_details(json!({ "command": self.argv, "maxLineBytes": MAX_STDOUT }));
                            return Some((Err(HandlerError::Call(e)), None));
                        }
                        Some(Line::Text(line)) if line.trim_ascii().is_empty() => continue,
                        Some(Line::Text(line)) => {
                            let item = stdout_value(line);
                            return Some((Ok(item), Some(Stage::Running(running))));
                        }
                        None => {
                            let status = running.child.wait().await;
                            running.group.0 = None;
                            let stderr = (&mut running.stderr).await.unwrap_or_default();
                            return match status {
                                Ok(status) if status.success() => None,
                                Ok(status) => Some((
                                    Err(HandlerError::Call(self.failure(status, &stderr))),
                                    None,
                                )),
                                Err(e) => {
                                    let e = CallError::new(
                                        codes::EXECUTION_ERROR,
                                        format!("{:?}: {e}", self.argv[0]),
                                    );
                                    Some((Err(HandlerError::Call(e)), None))
                                }
                            };
                        }
                    }
                }
            },
        );
        Box::pin(items)
    }
}

/// One line of a subscription command's stdout.
enum Line {
    /// Its bytes, without the line end.
    Text(Vec<u8>),
    /// Longer than the cap (reading stopped there).
    TooLong,
}

/// The next line of `reader` (LF or CRLF ended; the last may have no end), reading at most
/// `cap` bytes of it: a program that never ends its line cannot fill the memory. `None` at
/// the end. Bytes that are not UTF-8 are kept (the value is built leniently).
async fn next_line(
    reader: &mut BufReader<ChildStdout>,
    cap: usize,
) -> std::io::Result<Option<Line>> {
    let mut line = Vec::new();
    let read = (&mut *reader)
        .take(cap as u64 + 1)
        .read_until(b'\n', &mut line)
        .await?;
    if read == 0 {
        return Ok(None);
    }
    if line.last() == Some(&b'\n') {
        line.pop();
        if line.last() == Some(&b'\r') {
            line.pop();
        }
    } else if line.len() > cap {
        return Ok(Some(Line::TooLong));
    }
    Ok(Some(Line::Text(line)))
}

/// The state of a subscription command: starting, or running.
enum Stage<S> {
    Start(S),
    Running(Box<Streaming>),
}

/// Reads `pipe` to its end, keeping at most `cap + 1` bytes. With `stop_over` it stops at
/// the extra byte (a stdout over its cap is refused); otherwise the rest is read and dropped
/// (a long stderr is cut), so that the program never blocks on a full pipe.
async fn read_capped<R: AsyncRead + Unpin>(
    pipe: Option<R>,
    cap: usize,
    stop_over: bool,
) -> std::io::Result<Vec<u8>> {
    let mut kept = Vec::new();
    let Some(mut pipe) = pipe else {
        return Ok(kept);
    };
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        let n = pipe.read(&mut chunk).await?;
        if n == 0 {
            return Ok(kept);
        }
        let room = (cap + 1).saturating_sub(kept.len());
        kept.extend_from_slice(&chunk[..n.min(room)]);
        if stop_over && kept.len() > cap {
            return Ok(kept);
        }
    }
}

/// Stdout that is JSON (surrounding whitespace allowed) is the data; otherwise its text.
fn stdout_value(stdout: Vec<u8>) -> Value {
    match serde_json::from_slice::<Value>(&stdout) {
        Ok(value) => value,
        Err(_) => Value::String(match String::from_utf8(stdout) {
            Ok(text) => text,
            Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
        }),
    }
}

impl Handler for CommandHandler {
    fn call<'a>(&'a self, input: Value, _context: &'a Context) -> HandlerFuture<'a> {
        Box::pin(async move { self.run(input).await.map_err(HandlerError::Call) })
    }

    fn subscribe<'a>(&'a self, input: Value, context: &'a Context) -> ItemStream<'a> {
        match self.streaming {
            true => self.lines(input),
            false => Box::pin(futures::stream::once(self.call(input, context))),
        }
    }
}

/// Kills a process group when dropped: after a timeout, or when the caller stops waiting
/// (the handler's future dropped at a deadline). A group already gone is ignored.
struct GroupGuard(Option<i32>);

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if let Some(pid) = self.0.filter(|pid| *pid > 0) {
            // SAFETY: killpg has no memory effects; a group that is gone gives ESRCH.
            unsafe {
                libc::killpg(pid, libc::SIGKILL);
            }
        }
    }
}
