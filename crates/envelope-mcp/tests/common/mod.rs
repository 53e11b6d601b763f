//! Helpers shared by the proxy's test files: finding the real MCP parts, the fixture
//! servers, and an in-memory client for a session.
// Each test file uses part of it.
#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use envelope_mcp::config::{Config, UpstreamSpec};
use envelope_mcp::stats::Stats;
use envelope_mcp::transport::{Frame, Incoming, Link};
use serde_json::{Value, json};
use tokio::sync::mpsc;

pub mod shaping;
pub mod tools;

// The shaping tests' helpers, by their short names (`common::TempStore`); the relay's test
// files use none of them.
#[allow(unused_imports)]
pub use shaping::*;

/// A fixture of this crate's tests.
pub fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// The fault server (`tests/fixtures/fault_server.py`) as the upstream.
pub fn fault_server() -> UpstreamSpec {
    UpstreamSpec::Command {
        program: "python3".into(),
        args: vec![fixture("fault_server.py").to_string_lossy().into_owned()],
    }
}

/// A configuration with a fresh store folder (kept alive by the returned guard).
pub fn config(upstream: UpstreamSpec) -> (Config, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let config = Config {
        upstream,
        limit: envelope_mcp::config::DEFAULT_LIMIT,
        tokens: None,
        redact: true,
        timeout: None,
        restart: false,
        policy: Default::default(),
        store: Arc::new(envelope_store::FileStore::new(dir.path())),
        managed: None,
        catalog: None,
        owner: None,
    };
    (config, dir)
}

/// A client talking to a session run in this process.
pub struct Client {
    to_proxy: mpsc::Sender<Incoming>,
    from_proxy: mpsc::Receiver<Frame>,
    /// Frames received while waiting for another.
    backlog: Vec<Value>,
    pub stats: Arc<Stats>,
    pub session: tokio::task::JoinHandle<Result<(), String>>,
}

impl Client {
    /// Starts a session with `config`.
    pub fn start(config: Config) -> Client {
        let (to_proxy, inbound) = mpsc::channel(4096);
        let (outbound, from_proxy) = mpsc::channel(4096);
        let stats = Arc::new(Stats::default());
        let link = Link { inbound, outbound };
        let session = tokio::spawn(envelope_mcp::session::run(
            link,
            Arc::new(config),
            stats.clone(),
        ));
        Client {
            to_proxy,
            from_proxy,
            backlog: Vec::new(),
            stats,
            session,
        }
    }

    /// Sends raw bytes as one frame.
    pub async fn send_raw(&self, frame: &[u8]) {
        self.to_proxy
            .send(Incoming::Frame(frame.to_vec()))
            .await
            .unwrap();
    }

    /// Sends a JSON-RPC request.
    pub async fn request(&self, id: Value, method: &str, params: Value) {
        let frame = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.send_raw(frame.to_string().as_bytes()).await;
    }

    /// Sends a notification.
    pub async fn notify(&self, method: &str, params: Value) {
        let frame = json!({"jsonrpc": "2.0", "method": method, "params": params});
        self.send_raw(frame.to_string().as_bytes()).await;
    }

    /// Sends `tools/call NAME ARGS` with `id`.
    pub async fn call(&self, id: Value, name: &str, arguments: Value) {
        self.request(
            id,
            "tools/call",
            json!({"name": name, "arguments": arguments}),
        )
        .await;
    }

    /// The next raw frame, within `wait`.
    pub async fn next_raw(&mut self, wait: Duration) -> Option<Frame> {
        tokio::time::timeout(wait, self.from_proxy.recv())
            .await
            .ok()
            .flatten()
    }

    /// The answer with `id` (other frames are kept for later), within 20 s.
    pub async fn answer(&mut self, id: &Value) -> Value {
        if let Some(at) = self.backlog.iter().position(|f| f.get("id") == Some(id)) {
            return self.backlog.remove(at);
        }
        loop {
            let frame = self
                .next_raw(Duration::from_secs(20))
                .await
                .unwrap_or_else(|| panic!("no answer to {id} within 20 s"));
            let value: Value = serde_json::from_slice(&frame).expect("the proxy sends JSON only");
            if value.get("id") == Some(id) && value.get("method").is_none() {
                return value;
            }
            self.backlog.push(value);
        }
    }

    /// Initializes the session (as a client does) and returns the initialize result.
    pub async fn initialize(&mut self) -> Value {
        self.request(
            json!(0),
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}),
        )
        .await;
        let answer = self.answer(&json!(0)).await;
        self.notify("notifications/initialized", json!({})).await;
        answer["result"].clone()
    }

    /// The client's two ends and the session, to write and read at once.
    pub fn into_parts(
        self,
    ) -> (
        mpsc::Sender<Incoming>,
        mpsc::Receiver<Frame>,
        tokio::task::JoinHandle<Result<(), String>>,
    ) {
        (self.to_proxy, self.from_proxy, self.session)
    }

    /// Closes the client's end and waits for the session to end (within 20 s).
    pub async fn close(self) -> Arc<Stats> {
        let _ = self
            .to_proxy
            .send(Incoming::Closed("test done".into()))
            .await;
        let _ended = tokio::time::timeout(Duration::from_secs(20), self.session)
            .await
            .expect("the session ends within 20 s of the client leaving")
            .unwrap();
        self.stats
    }
}

/// The text of the first content block of a tools/call answer.
pub fn text_of(answer: &Value) -> &str {
    answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text in {answer}"))
}

/// Whether a process is running (absent or a zombie is not running).
pub fn running(pid: i64) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    let state = stat
        .rsplit(')')
        .next()
        .unwrap_or("")
        .trim_start()
        .chars()
        .next();
    !matches!(state, Some('Z') | Some('X') | None)
}

/// Whether a process stops running within 5 s (a killed process takes a moment to go).
pub fn ends_soon(pid: i64) -> bool {
    let until = std::time::Instant::now() + Duration::from_secs(5);
    while running(pid) {
        if std::time::Instant::now() > until {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    true
}
