//! The upstream as a child process: frames are lines on its stdin/stdout; its stderr is
//! read through a pipe and each line logged as a record of ours (`upstream_stderr`).
//!
//! The child runs in a process group of its own, so that ending it ends whatever it
//! started (`npx` → `node`, `uv` → `python`). When the [`Link`] is dropped its stdin is
//! closed; a child still running a second later gets SIGTERM, and SIGKILL a second after
//! that (the stdio shutdown of the MCP spec). When the child exits, the rest of its group is
//! killed and the child reaped: no zombies. Then [`Incoming::Closed`] says how it exited.
//!
//! Lines are passed on as they are: checking that a line is JSON-RPC is the relay's job
//! (`message::Message::parse`), which it does once for routing anyway.

use std::collections::HashSet;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::process::{Child, Command};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::upstream_stderr::{self, Tail};

use super::lines::{Side, read_frames, write_frames};
use super::{Incoming, Link};
use crate::stats::log;

/// How long a child gets to exit after its stdin is closed, then after SIGTERM.
const GRACE: Duration = Duration::from_secs(1);

/// The process groups of running children, for [`end_all`].
static GROUPS: Mutex<Option<HashSet<i32>>> = Mutex::new(None);

/// Starts `program args` in a process group of its own and links to its stdin/stdout.
///
/// # Errors
///
/// When the program cannot be started.
pub async fn spawn(program: &str, args: &[String]) -> std::io::Result<Link> {
    spawn_with(program, args, &SpawnOptions::default()).await
}

/// How a child is started besides its program and arguments.
#[derive(Clone, Debug, Default)]
pub struct SpawnOptions {
    /// `Some`: exactly this environment (nothing inherited); `None`: the caller's.
    pub env: Option<Vec<(String, String)>>,
    /// The working directory; `None`: the caller's.
    pub cwd: Option<std::path::PathBuf>,
}

/// [`spawn`] with an environment and a working directory of the caller's choosing (an
/// MCP client gives its servers a minimal environment, never its own).
///
/// # Errors
///
/// When the program cannot be started (not found, `cwd` missing…).
pub async fn spawn_with(
    program: &str,
    args: &[String],
    options: &SpawnOptions,
) -> std::io::Result<Link> {
    let mut command = Command::new(program);
    if let Some(env) = &options.env {
        command.env_clear().envs(env.iter().map(|(k, v)| (k, v)));
    }
    if let Some(cwd) = &options.cwd {
        command.current_dir(cwd);
    }
    let mut child = command
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        // Should the runtime itself go away, the child still gets SIGKILL.
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| std::io::Error::new(e.kind(), format!("cannot start {program}: {e}")))?;
    let pid = child
        .id()
        .and_then(|id| i32::try_from(id).ok())
        .unwrap_or(0);
    register(pid, true);
    log::info(
        "upstream.started",
        &[("program", program.into()), ("pid", pid.into())],
    );
    let stdin = child.stdin.take().expect("stdin is piped");
    let stdout = child.stdout.take().expect("stdout is piped");
    let stderr = child.stderr.take().expect("stderr is piped");
    // Drained to its end whatever the log level, so the child never blocks on it.
    let tail = Arc::new(Mutex::new(Tail::default()));
    let stderr = tokio::spawn(upstream_stderr::forward(stderr, pid, tail.clone()));
    let (inbound_tx, inbound) = mpsc::channel(256);
    let (outbound, outbound_rx) = mpsc::channel(256);
    let reader_tx = inbound_tx.clone();
    let reader = tokio::spawn(async move { read_frames(stdout, reader_tx, Side::Upstream).await });
    tokio::spawn(supervise(
        child,
        pid,
        stdin,
        outbound_rx,
        (reader, stderr, tail),
        inbound_tx,
    ));
    Ok(Link { inbound, outbound })
}

/// The tasks reading the child's stdout and stderr, and the stderr's last lines.
type Readers = (JoinHandle<()>, JoinHandle<()>, Arc<Mutex<Tail>>);

/// Writes frames to the child until it exits or the link is dropped, then ends its group,
/// reaps it, waits for the last lines it wrote, and reports how it exited (with the end of
/// its stderr when it failed on its own).
async fn supervise(
    mut child: Child,
    pid: i32,
    stdin: tokio::process::ChildStdin,
    mut outbound: mpsc::Receiver<Vec<u8>>,
    (reader, stderr, tail): Readers,
    inbound: mpsc::Sender<Incoming>,
) {
    let writer = write_frames(stdin, &mut outbound);
    let exited = tokio::select! {
        status = child.wait() => Some(status),
        _ = writer => None,
    };
    // Not when the proxy ended it: then its signal is ours, not a fault.
    let failed = matches!(&exited, Some(Ok(status)) if !status.success());
    let status = match exited {
        Some(status) => status,
        // The link is gone (or the child's stdin broke): stdin is closed now.
        None => stop(&mut child, pid).await,
    };
    // Whatever else runs in the group (a grandchild) goes with the child.
    kill_group(pid, libc::SIGKILL);
    register(pid, false);
    let reason = match status {
        Ok(status) => describe(status),
        Err(e) => format!("could not be waited for: {e}"),
    };
    // Every line written before the exit is delivered before `Closed`; a grandchild that
    // escaped the group and holds stdout open does not hold us up for long.
    let _ = tokio::time::timeout(GRACE, reader).await;
    if failed {
        let _ = tokio::time::timeout(GRACE, stderr).await;
        upstream_stderr::log_tail_of_failure(pid, &tail);
    }
    log::info(
        "upstream.exited",
        &[("pid", pid.into()), ("reason", reason.clone().into())],
    );
    let _ = inbound.send(Incoming::Closed(reason)).await;
}

/// Stdin is closed: give the child [`GRACE`] to exit, then SIGTERM, then SIGKILL.
async fn stop(child: &mut Child, pid: i32) -> std::io::Result<ExitStatus> {
    if let Ok(status) = tokio::time::timeout(GRACE, child.wait()).await {
        return status;
    }
    kill_group(pid, libc::SIGTERM);
    if let Ok(status) = tokio::time::timeout(GRACE, child.wait()).await {
        return status;
    }
    kill_group(pid, libc::SIGKILL);
    child.wait().await
}

/// "exited with status N" or "killed by signal N".
fn describe(status: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt as _;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exited with status {code}"),
        (None, Some(signal)) => format!("killed by signal {signal}"),
        _ => format!("ended ({status})"),
    }
}

fn kill_group(pid: i32, signal: i32) {
    if pid > 0 {
        // SAFETY: killpg has no memory effects; a group that is gone gives ESRCH, ignored.
        unsafe {
            libc::killpg(pid, signal);
        }
    }
}

fn register(pid: i32, running: bool) {
    let mut groups = GROUPS.lock().unwrap_or_else(|e| e.into_inner());
    let groups = groups.get_or_insert_with(HashSet::new);
    if running {
        groups.insert(pid);
    } else {
        groups.remove(&pid);
    }
}

/// Sends SIGKILL to the process group of every child still running: for a proxy that
/// exits on a signal, without the sessions' orderly stop.
pub fn end_all() {
    let groups = GROUPS.lock().unwrap_or_else(|e| e.into_inner());
    for pid in groups.iter().flatten() {
        kill_group(*pid, libc::SIGKILL);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn next(link: &mut Link) -> Incoming {
        tokio::time::timeout(Duration::from_secs(10), link.inbound.recv())
            .await
            .expect("the child answers in time")
            .expect("a Closed comes before the channel ends")
    }

    #[tokio::test]
    async fn lines_both_ways_then_exit_status() {
        let script = "read line; echo \"got $line\"; exit 3".to_string();
        let mut link = spawn("sh", &["-c".into(), script]).await.unwrap();
        link.outbound.send(b"{\"x\":1}".to_vec()).await.unwrap();
        match next(&mut link).await {
            Incoming::Frame(f) => assert_eq!(f, b"got {\"x\":1}"),
            other => panic!("{other:?}"),
        }
        match next(&mut link).await {
            Incoming::Closed(reason) => assert_eq!(reason, "exited with status 3"),
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn a_missing_program_is_an_error() {
        let err = spawn("/nonexistent/upstream", &[]).await.unwrap_err();
        assert!(err.to_string().contains("/nonexistent/upstream"), "{err}");
    }

    #[tokio::test]
    async fn dropping_the_link_ends_the_whole_group() {
        // The child ignores stdin's end and SIGTERM, and starts a grandchild.
        let script = "trap '' TERM; sleep 300 & echo $!; while true; do sleep 1; done";
        let mut link = spawn("sh", &["-c".into(), script.into()]).await.unwrap();
        let grandchild: i32 = match next(&mut link).await {
            Incoming::Frame(f) => String::from_utf8(f).unwrap().trim().parse().unwrap(),
            other => panic!("{other:?}"),
        };
        let Link {
            mut inbound,
            outbound,
        } = link;
        drop(outbound);
        let closed = tokio::time::timeout(Duration::from_secs(10), inbound.recv()).await;
        match closed {
            Ok(Some(Incoming::Closed(reason))) => assert_eq!(reason, "killed by signal 9"),
            other => panic!("{other:?}"),
        }
        // Gone, or a zombie left to init (which reaps orphans): not running either way.
        // SIGKILL is delivered when the grandchild is next scheduled, which on a busy
        // machine can be a moment after the group was signalled: wait for it, a while.
        let mut stat = String::new();
        for _ in 0..100 {
            stat = std::fs::read_to_string(format!("/proc/{grandchild}/stat")).unwrap_or_default();
            if !is_running(&stat) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert!(
            !is_running(&stat),
            "the grandchild {grandchild} survived: {stat}"
        );
    }

    /// Whether a `/proc/PID/stat` line is of a process that is neither gone nor a zombie.
    fn is_running(stat: &str) -> bool {
        let state = stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .chars()
            .next();
        !matches!(state, None | Some('Z') | Some('X'))
    }
}
