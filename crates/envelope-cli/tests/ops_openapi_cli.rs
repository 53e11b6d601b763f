//! `envelope ops list` and `envelope call` over an `openapi.<ns>` source: a registry file
//! naming its document by a path relative to the file, the echo server of the envelope-ops
//! tests on 127.0.0.1.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../envelope-ops/tests/fixtures")
        .join(name)
}

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn call_an_openapi_operation_from_a_registry_file() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let _server = Server(
        Command::new("python3")
            .arg(fixture("http_echo_server.py"))
            .arg(port.to_string())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let ready = Instant::now() + Duration::from_secs(30);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < ready, "the echo server did not listen");
        std::thread::sleep(Duration::from_millis(50));
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(fixture("echo_api.yaml"), dir.path().join("api.yaml")).unwrap();
    let registry = dir.path().join("envelope.toml");
    std::fs::write(
        &registry,
        format!("[openapi.echo]\nspec = \"api.yaml\"\nbaseUrl = \"http://127.0.0.1:{port}\"\n"),
    )
    .unwrap();
    // Run from elsewhere: the document is found beside the registry file.
    let elsewhere = tempfile::tempdir().unwrap();
    let envelope = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_envelope"))
            .args(args)
            .arg("--registry")
            .arg(&registry)
            .current_dir(elsewhere.path())
            .output()
            .unwrap()
    };
    let list = envelope(&["ops", "list"]);
    let listed = String::from_utf8_lossy(&list.stdout);
    assert!(
        list.status.success() && listed.contains("echo.everything\tmutation"),
        "{listed}{}",
        String::from_utf8_lossy(&list.stderr)
    );
    assert!(listed.contains("echo.ticks\tsubscription"), "{listed}");
    let out = envelope(&[
        "call",
        "echo.everything",
        "--input",
        r#"{"path.id": "7", "id2": ["a"], "tags": ["x"]}"#,
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let env: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(env["meta"]["source"], "http");
    assert_eq!(env["data"]["path"], "/echo/7/.a");
    assert_eq!(env["data"]["query"], "tags=x");
    let events = envelope(&["call", "echo.ticks", "--subscribe"]);
    assert!(
        events.status.success(),
        "{}",
        String::from_utf8_lossy(&events.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&events.stdout).lines().count(), 4);

    // Issue 29: JSON or an event stream, the caller's choice: a plain call gets the JSON
    // answer, `--subscribe` the events.
    assert!(listed.contains("echo.chat\tsubscription"), "{listed}");
    let once = envelope(&["call", "echo.chat", "--input", r#"{"body": {}}"#]);
    assert!(
        once.status.success(),
        "{}",
        String::from_utf8_lossy(&once.stderr)
    );
    let env: Value = serde_json::from_slice(&once.stdout).unwrap();
    assert_eq!(
        env["data"],
        serde_json::json!({"accept": "application/json", "message": "hello"})
    );
    let events = envelope(&[
        "call",
        "echo.chat",
        "--subscribe",
        "--input",
        r#"{"body": {}}"#,
    ]);
    assert!(
        events.status.success(),
        "{}",
        String::from_utf8_lossy(&events.stderr)
    );
    let deltas: Vec<Value> = String::from_utf8_lossy(&events.stdout)
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap()["data"]["delta"].clone())
        .collect();
    assert_eq!(deltas, [serde_json::json!("hel"), serde_json::json!("lo")]);
}
