//! Helpers of the from_mcp tests: the real servers (installed by
//! scripts/install-mcp-tools.sh) as registry files, loaded.
#![allow(dead_code)]

#[path = "../../../envelope-mcp/tests/common/tools.rs"]
pub mod tools;

use std::path::{Path, PathBuf};
use std::time::Duration;

use envelope_ops::file::RegistryFile;
use envelope_ops::load::Loaded;
use serde_json::{Value, json};

/// `{"mcpServers": {ns: server}}` (plus `more` top-level sources) as a loaded registry.
pub async fn load(servers: Value) -> Loaded {
    let text = servers.to_string();
    let file = RegistryFile::from_json(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    file.load().await
}

/// The stdio entry of `@modelcontextprotocol/server-everything` (Node 22).
pub fn everything() -> Value {
    let node = tools::node22();
    let script = tools::npm("@modelcontextprotocol/server-everything/dist/index.js");
    json!({"command": node, "args": [script, "stdio"]})
}

/// The stdio entry of the Python SDK test server (tests/fixtures/mcp_test_server.py),
/// writing its markers into `markers`.
pub fn python_server(markers: &Path) -> Value {
    tools::python_module("mcp");
    let script =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mcp_test_server.py");
    json!({"command": "python3", "args": [script, markers], "timeout": 20})
}

/// A free TCP port on 127.0.0.1.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Waits (at most 30 s) until something listens on `port`.
pub async fn wait_for_port(port: u16) {
    for _ in 0..300 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("nothing listens on 127.0.0.1:{port} after 30 s");
}

/// Waits (at most 10 s) until `check` holds.
pub async fn wait_until(what: &str, mut check: impl FnMut() -> bool) {
    for _ in 0..200 {
        if check() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{what}: not within 10 s");
}
