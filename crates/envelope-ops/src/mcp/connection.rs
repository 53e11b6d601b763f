//! One session with an MCP server: JSON-RPC requests matched to their responses over an
//! `envelope_mcp` transport [`Link`] (stdio child or Streamable HTTP), the server's own
//! requests answered, its notifications passed to a callback.
//!
//! A request whose future is dropped before its answer (a caller's deadline, an abort)
//! sends `notifications/cancelled` for it. When the transport closes (the child exited, the
//! HTTP session ended) every request waiting fails with the reason, and so does every later
//! one: the owner (the source's server, `mcp/server.rs`) starts a new connection then.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use envelope_mcp::revision::Revision;
use envelope_mcp::transport::{Frame, Incoming, Link};
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};

pub use crate::relay::Failure;

/// The revision asked for in `initialize`: the newest this build knows that has one.
pub const REQUESTED_REVISION: Revision = Revision::V2025_11_25;

type Answer = Result<Value, Failure>;

/// The requests waiting for an answer, and why the connection closed once it has.
#[derive(Default)]
struct Pending {
    waiting: HashMap<u64, oneshot::Sender<Answer>>,
    closed: Option<String>,
}

/// What the connection does with a server notification (`method`, `params`).
pub type OnNotification = Box<dyn Fn(&str, &Value) + Send + Sync>;

/// A live session.
pub struct Connection {
    outbound: mpsc::Sender<Frame>,
    pending: Arc<Mutex<Pending>>,
    next_id: AtomicU64,
    /// The revision the server answered `initialize` with.
    pub revision: String,
}

impl Connection {
    /// Starts reading `link`, then runs `initialize` and sends `notifications/initialized`,
    /// all within `timeout`. `on_notification` gets every notification of the server.
    pub async fn open(
        link: Link,
        timeout: Duration,
        on_notification: OnNotification,
    ) -> Result<Connection, Failure> {
        let Link { inbound, outbound } = link;
        let pending = Arc::new(Mutex::new(Pending::default()));
        tokio::spawn(read(
            inbound,
            outbound.downgrade(),
            pending.clone(),
            on_notification,
        ));
        let mut connection = Connection {
            outbound,
            pending,
            next_id: AtomicU64::new(1),
            revision: String::new(),
        };
        let params = json!({
            "protocolVersion": REQUESTED_REVISION.as_str(),
            "capabilities": {},
            "clientInfo": {"name": "envelope-ops", "version": env!("CARGO_PKG_VERSION")},
        });
        let answer = connection.request("initialize", params, timeout).await?;
        let revision = answer["protocolVersion"].as_str().unwrap_or_default();
        let known = Revision::ALL
            .iter()
            .any(|r| r.as_str() == revision && r.has_initialize());
        if !known {
            return Err(Failure::Rpc {
                code: 0,
                message: format!(
                    "the server answered initialize with protocol revision {revision:?}, which this client does not speak (it asked for {REQUESTED_REVISION})"
                ),
                data: None,
            });
        }
        connection.revision = revision.to_string();
        connection
            .notify("notifications/initialized", json!({}))
            .await?;
        Ok(connection)
    }

    /// Whether the transport has closed (every request would fail).
    pub fn is_closed(&self) -> bool {
        lock(&self.pending).closed.is_some() || self.outbound.is_closed()
    }

    /// Sends a notification.
    pub async fn notify(&self, method: &str, params: Value) -> Result<(), Failure> {
        let frame = json!({"jsonrpc": "2.0", "method": method, "params": params});
        self.outbound
            .send(frame.to_string().into_bytes())
            .await
            .map_err(|_| Failure::Closed("the transport is closed".into()))
    }

    /// Sends a request and waits for its result, at most `timeout`. Dropping the future
    /// before the answer (or the timeout) sends `notifications/cancelled` for it.
    pub async fn request(&self, method: &str, params: Value, timeout: Duration) -> Answer {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        {
            let mut pending = lock(&self.pending);
            if let Some(reason) = &pending.closed {
                return Err(Failure::Closed(reason.clone()));
            }
            pending.waiting.insert(id, tx);
        }
        let mut guard = Cancel {
            id,
            outbound: &self.outbound,
            pending: &self.pending,
            // The spec forbids cancelling `initialize`: the connection is dropped instead.
            answered: method == "initialize",
        };
        let frame = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        if self
            .outbound
            .send(frame.to_string().into_bytes())
            .await
            .is_err()
        {
            guard.answered = true;
            lock(&self.pending).waiting.remove(&id);
            return Err(Failure::Closed("the transport is closed".into()));
        }
        let answer = match tokio::time::timeout(timeout, rx).await {
            Ok(Ok(answer)) => answer,
            // The reader is gone without a word: the connection closed.
            Ok(Err(_)) => Err(Failure::Closed(
                lock(&self.pending)
                    .closed
                    .clone()
                    .unwrap_or_else(|| "the transport is closed".into()),
            )),
            Err(_) => return Err(Failure::Timeout(timeout)),
        };
        guard.answered = true;
        answer
    }
}

/// Sends `notifications/cancelled` for a request dropped (or timed out) before its answer.
struct Cancel<'a> {
    id: u64,
    outbound: &'a mpsc::Sender<Frame>,
    pending: &'a Mutex<Pending>,
    answered: bool,
}

impl Drop for Cancel<'_> {
    fn drop(&mut self) {
        let waiting = lock(self.pending).waiting.remove(&self.id).is_some();
        if self.answered || !waiting {
            // Answered (or the connection closed) meanwhile, or `initialize`: nothing to cancel.
            return;
        }
        let frame = json!({
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": self.id, "reason": "the caller stopped waiting"},
        });
        // Drop cannot wait: a full queue (256 frames) loses the notice, which is advisory.
        let _ = self.outbound.try_send(frame.to_string().into_bytes());
    }
}

fn lock(pending: &Mutex<Pending>) -> std::sync::MutexGuard<'_, Pending> {
    pending.lock().unwrap_or_else(|e| e.into_inner())
}

/// Reads the server's frames until the transport closes: responses go to their waiting
/// request, requests of the server are answered, notifications go to `on_notification`.
/// It holds only a weak sender, so dropping the [`Connection`] closes the transport.
async fn read(
    mut inbound: mpsc::Receiver<Incoming>,
    outbound: mpsc::WeakSender<Frame>,
    pending: Arc<Mutex<Pending>>,
    on_notification: OnNotification,
) {
    let reason = loop {
        let frame = match inbound.recv().await {
            Some(Incoming::Frame(frame)) => frame,
            Some(Incoming::Closed(reason)) => break reason,
            None => break "the transport ended".into(),
        };
        // A line that is not JSON (a server logging to stdout) is skipped.
        let Ok(message) = serde_json::from_slice::<Value>(&frame) else {
            continue;
        };
        match (
            message.get("method").and_then(Value::as_str),
            message.get("id"),
        ) {
            (Some(method), Some(id)) => answer_server_request(method, id, &outbound).await,
            (Some(method), None) => {
                on_notification(method, message.get("params").unwrap_or(&Value::Null))
            }
            (None, Some(id)) => deliver(&pending, id, &message),
            (None, None) => {}
        }
    };
    let waiting = {
        let mut pending = lock(&pending);
        pending.closed = Some(reason.clone());
        std::mem::take(&mut pending.waiting)
    };
    for (_, tx) in waiting {
        let _ = tx.send(Err(Failure::Closed(reason.clone())));
    }
}

fn deliver(pending: &Mutex<Pending>, id: &Value, message: &Value) {
    let Some(tx) = id.as_u64().and_then(|id| lock(pending).waiting.remove(&id)) else {
        return; // An answer to a request cancelled or never made.
    };
    let answer = match message.get("error") {
        Some(error) => Err(Failure::Rpc {
            code: error["code"].as_i64().unwrap_or(0),
            message: error["message"].as_str().unwrap_or("").to_string(),
            data: error.get("data").cloned(),
        }),
        None => Ok(message.get("result").cloned().unwrap_or(Value::Null)),
    };
    let _ = tx.send(answer);
}

/// The client declares no capabilities, so the only request it serves is `ping`; any other
/// gets "method not found".
async fn answer_server_request(method: &str, id: &Value, outbound: &mpsc::WeakSender<Frame>) {
    let reply = if method == "ping" {
        json!({"jsonrpc": "2.0", "id": id, "result": {}})
    } else {
        json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": format!("method not found: {method}")}})
    };
    if let Some(outbound) = outbound.upgrade() {
        let _ = outbound.send(reply.to_string().into_bytes()).await;
    }
}
