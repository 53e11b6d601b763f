//! Running `envelope serve` and the real clients the serve tests drive (the Python MCP SDK
//! client of envelope-mcp's fixtures), with the processes they start stopped on drop.

#![allow(dead_code)]

#[path = "../../../envelope-mcp/tests/common/tools.rs"]
pub mod tools;

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

use serde_json::Value;

/// A fixture of envelope-mcp's tests.
pub fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../envelope-mcp/tests/fixtures")
        .join(name)
}

/// Runs the Python SDK client with `plan` against `command` (or a URL); its report.
pub fn sdk_client(plan: &Value, command: &[String], token: Option<&str>) -> Value {
    tools::python_module("mcp");
    let mut client = Command::new("python3");
    client
        .arg(fixture("sdk_client.py"))
        .arg(plan.to_string())
        .arg("--")
        .args(command)
        .env_remove("ENVELOPE_STORE");
    if let Some(token) = token {
        client.env("MCP_BEARER_TOKEN", token);
    }
    let output = client.output().expect("python3 runs");
    assert!(
        output.status.success(),
        "the SDK client failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

/// Step `index` of an SDK client's report, which must not have failed.
pub fn step_ok(report: &Value, index: usize) -> &Value {
    let step = &report["steps"][index];
    assert!(step.get("error").is_none(), "step {index}: {step}");
    step
}

/// A child process, killed and reaped when dropped.
pub struct Killed(pub Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `command` (stdin closed, stderr dropped).
pub fn spawn(command: &[String]) -> Killed {
    Killed(
        Command::new(&command[0])
            .args(&command[1..])
            .env_remove("ENVELOPE_STORE")
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    )
}

/// A port free on 127.0.0.1 when asked.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Waits up to 60 s for 127.0.0.1:`port` to accept connections.
pub fn wait_until_listening(port: u16) {
    let ready = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(std::time::Instant::now() < ready, "serve did not listen");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}
