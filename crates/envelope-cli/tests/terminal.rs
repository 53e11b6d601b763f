//! What a user at a terminal sees on stderr: a notice when stdin is read from the terminal,
//! a progress line for work over a second when stderr is a terminal; neither on pipes.
//! Pseudo-terminals come from `common/pty_run.py` (python3's `pty` module).

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

const NOTICE: &str = "reading the input from the terminal";

struct Seen {
    stdout: String,
    stderr: String,
    code: i64,
}

/// Runs `envelope args` with `input`, stdin and stderr on terminals or pipes, the first line
/// of the input held back `pause` seconds.
fn at_terminal(args: &[&str], input: &[u8], stdin_tty: bool, stderr_tty: bool, pause: f64) -> Seen {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    // One file per call: tests run on threads of one process, often with the same args.
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let file = std::env::temp_dir().join(format!(
        "envelope-terminal-{}-{call}.in",
        std::process::id()
    ));
    std::fs::write(&file, input).unwrap();
    let mut cmd = Command::new("python3");
    cmd.arg(dir.join("tests/common/pty_run.py"));
    if stdin_tty {
        cmd.arg("--stdin-tty");
    }
    if stderr_tty {
        cmd.arg("--stderr-tty");
    }
    cmd.args(["--pause", &pause.to_string()])
        .arg(&file)
        .arg("--")
        .arg(env!("CARGO_BIN_EXE_envelope"))
        .args(args);
    let out = cmd
        .output()
        .expect("python3 must be installed for the terminal tests");
    let _ = std::fs::remove_file(&file);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let seen: Value = serde_json::from_slice(&out.stdout).unwrap();
    Seen {
        stdout: seen["stdout"].as_str().unwrap().to_string(),
        stderr: seen["stderr"].as_str().unwrap().to_string(),
        code: seen["code"].as_i64().unwrap(),
    }
}

fn ctxo_example() -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/ctxo.json");
    std::fs::read(path).unwrap()
}

#[test]
fn reading_stdin_from_a_terminal_says_so() {
    let input = ctxo_example();
    for args in [&["detect"][..], &["unwrap", "-"], &["validate", "--ndjson"]] {
        let tty = at_terminal(args, &input, true, false, 0.0);
        assert_eq!(tty.code, 0, "{args:?}: {}", tty.stderr);
        assert!(tty.stderr.contains(NOTICE), "{args:?}: {:?}", tty.stderr);
        let piped = at_terminal(args, &input, false, false, 0.0);
        assert_eq!(piped.code, 0, "{args:?}");
        assert_eq!(tty.stdout, piped.stdout, "{args:?}");
        assert!(
            !piped.stderr.contains(NOTICE),
            "{args:?}: {:?}",
            piped.stderr
        );
    }
    // A file given: nothing said.
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/ctxo.json");
    let file = at_terminal(&["detect", path.to_str().unwrap()], b"", true, false, 0.0);
    assert_eq!(file.stdout, "ctxo\n");
    assert!(!file.stderr.contains(NOTICE));
}

#[test]
fn work_over_a_second_shows_progress_on_a_terminal_only() {
    let input = ctxo_example();
    let store =
        std::env::temp_dir().join(format!("envelope-terminal-store-{}", std::process::id()));
    let store = store.to_str().unwrap();
    for (args, label) in [
        (&["validate", "--ndjson"][..], "validating stdin"),
        (&["validate", "-"][..], "validating stdin"),
        (&["shape", "--store", store, "-"][..], "shaping stdin"),
    ] {
        // The command waits 1.5 s for the rest of its input: long work, as seen from stderr.
        let slow_tty = at_terminal(args, &input, true, true, 1.5);
        assert_eq!(slow_tty.code, 0, "{args:?}: {}", slow_tty.stderr);
        assert!(
            slow_tty.stderr.contains(&format!("envelope: {label}")),
            "{args:?}: {:?}",
            slow_tty.stderr
        );
        assert!(slow_tty.stderr.contains(" s"), "{:?}", slow_tty.stderr);
        // The line is erased at the end.
        assert!(
            slow_tty.stderr.ends_with("\r\x1b[2K"),
            "{:?}",
            slow_tty.stderr
        );
        // Short work on a terminal: nothing. Only judged when the run really was short: on
        // a loaded machine a debug build's start alone can pass the one-second mark, and then
        // the progress line is right.
        let started = std::time::Instant::now();
        let quick_tty = at_terminal(args, &input, true, true, 0.0);
        if started.elapsed() < std::time::Duration::from_millis(900) {
            assert!(
                !quick_tty.stderr.contains(label),
                "{args:?}: {:?}",
                quick_tty.stderr
            );
        }
        // Long work, stderr a pipe: nothing.
        let slow_pipe = at_terminal(args, &input, true, false, 1.5);
        assert_eq!(slow_pipe.code, 0, "{args:?}");
        assert!(
            !slow_pipe.stderr.contains(label),
            "{args:?}: {:?}",
            slow_pipe.stderr
        );
        assert!(
            !slow_pipe.stderr.contains('\r'),
            "{args:?}: {:?}",
            slow_pipe.stderr
        );
        assert_eq!(slow_tty.stdout, slow_pipe.stdout, "{args:?}");
    }
    let _ = std::fs::remove_dir_all(store);
}
