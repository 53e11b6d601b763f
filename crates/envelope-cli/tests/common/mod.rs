//! Helpers shared by the CLI test files.
// Each test file uses part of it.
#![allow(dead_code)]

pub mod moto;

use std::io::Write as _;
use std::process::{Child, Output};

/// Writes `stdin` to a spawned child (stdin, stdout and stderr piped) and collects its output.
///
/// A command may exit before reading its input (a usage error, an early refusal): the broken
/// pipe on writing is then expected, and the exit code and output are what the test checks.
/// The input is written from a thread so a large output cannot deadlock against a large input.
pub fn feed(mut child: Child, stdin: &[u8]) -> Output {
    let mut input = child.stdin.take().expect("stdin is piped");
    let bytes = stdin.to_vec();
    let writer = std::thread::spawn(move || match input.write_all(&bytes) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        other => other.expect("writing the child's stdin"),
    });
    let output = child.wait_with_output().expect("waiting for the child");
    writer.join().expect("the stdin writer");
    output
}

/// Runs the built `envelope` with `args` and `stdin`, without the environment variables
/// that change its defaults (`CTXO_RESPONSE_LIMIT`, `ENVELOPE_STORE`).
pub fn run(args: &[&str], stdin: &[u8]) -> Output {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_envelope"));
    cmd.args(args)
        .env_remove("CTXO_RESPONSE_LIMIT")
        .env_remove("ENVELOPE_STORE")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    feed(cmd.spawn().expect("the built envelope binary"), stdin)
}

/// The Python SDK client of the real-server tests (`plan` → report).
pub fn sdk_client_script() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../envelope-mcp/tests/fixtures/sdk_client.py")
}

/// Runs the Python client `script` with `argument` against the MCP server `command` (the
/// caller made sure the `mcp` module is there), without `ENVELOPE_STORE`; the JSON report
/// it printed, once it succeeded.
pub fn python_client(
    script: &std::path::Path,
    argument: &str,
    command: &[String],
) -> serde_json::Value {
    let output = std::process::Command::new("python3")
        .arg(script)
        .arg(argument)
        .arg("--")
        .args(command)
        .env_remove("ENVELOPE_STORE")
        .output()
        .expect("python3 runs");
    assert!(
        output.status.success(),
        "the client {} failed: {}",
        script.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&output.stdout)))
}
