//! One `mcpServers.<ns>` source: its configuration, its current connection (started at
//! registration, started again on the next call after it died), its tool list, and the
//! `tools/list_changed` watch.

use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use envelope_mcp::transport::child::{SpawnOptions, spawn_with};
use envelope_mcp::transport::http_client;
use serde_json::{Value, json};

use super::connection::{Connection, Failure, OnNotification};
use super::env;
use super::tool::{envelope_of, spec_of};
use crate::context::Context;
use crate::error::{CallError, codes};
use crate::file::{McpServerConfig, McpTransport};
use crate::handler::{Handler, HandlerError, HandlerFuture, Operations};
use crate::update::{SourceUpdate, Updater};

/// `tools/list` pages followed at most (a server whose cursors never end is cut off).
pub const MAX_PAGES: usize = 1000;

/// The bounds of a source's exchanges with its server.
#[derive(Clone, Copy, Debug)]
pub struct Timeouts {
    /// Each request after the start (`tools/call`, `tools/list` after a change).
    pub call: Duration,
    /// Starting: spawn or connect, `initialize`, the first `tools/list` (every page).
    pub connect: Duration,
}

/// An MCP server as a source of operations.
pub struct Server {
    /// `mcpServers.<ns>`, in every error about it.
    pub(crate) name: String,
    pub(crate) namespace: String,
    config: McpServerConfig,
    pub(crate) timeouts: Timeouts,
    current: tokio::sync::Mutex<Option<Arc<Connection>>>,
    /// Where list changes go, once registered.
    updates: Mutex<Option<Updater>>,
    /// The ids of its last tool list (removed from the registry when the list changes).
    registered: Mutex<Vec<String>>,
    /// Held while listing after a change, so two changes in a row apply in order.
    refreshing: tokio::sync::Mutex<()>,
    /// Itself, for the handlers and the notification callback.
    this: Weak<Server>,
}

impl Server {
    /// The access control of every operation of the server, which also guards its
    /// resources and prompts (none: open).
    pub(crate) fn access_control(&self) -> Option<&crate::AccessControl> {
        self.config.access_control.as_ref()
    }

    /// A server not connected yet.
    pub fn new(namespace: &str, config: McpServerConfig, timeouts: Timeouts) -> Arc<Server> {
        Arc::new_cyclic(|this| Server {
            name: format!("mcpServers.{namespace}"),
            namespace: namespace.to_string(),
            config,
            timeouts,
            current: tokio::sync::Mutex::new(None),
            updates: Mutex::new(None),
            registered: Mutex::new(Vec::new()),
            refreshing: tokio::sync::Mutex::new(()),
            this: this.clone(),
        })
    }

    /// The live connection, started (again) when there is none or it closed.
    pub(crate) async fn connection(&self) -> Result<Arc<Connection>, String> {
        let mut current = self.current.lock().await;
        if let Some(connection) = current.as_ref().filter(|c| !c.is_closed()) {
            return Ok(connection.clone());
        }
        *current = None;
        let connection = Arc::new(self.connect().await?);
        *current = Some(connection.clone());
        Ok(connection)
    }

    async fn connect(&self) -> Result<Connection, String> {
        let started = tokio::time::Instant::now();
        let link = match &self.config.transport {
            McpTransport::Stdio {
                command,
                args,
                env: extra,
                cwd,
            } => {
                let options = SpawnOptions {
                    env: Some(env::from_process(extra)),
                    cwd: cwd.as_ref().map(Into::into),
                };
                spawn_with(command, args, &options).await
            }
            McpTransport::Http { url, headers } => {
                let headers: Vec<(String, String)> = headers
                    .iter()
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                match tokio::time::timeout(
                    self.timeouts.connect,
                    http_client::connect(url, &headers),
                )
                .await
                {
                    Ok(link) => link,
                    Err(_) => Err(std::io::Error::other(format!(
                        "{url} did not accept a connection within {} s",
                        self.timeouts.connect.as_secs_f64()
                    ))),
                }
            }
        }
        .map_err(|e| e.to_string())?;
        let left = self.timeouts.connect.saturating_sub(started.elapsed());
        Connection::open(link, left, self.on_notification())
            .await
            .map_err(|e| match e {
                Failure::Timeout(_) => format!(
                    "no answer to initialize within {} s",
                    self.timeouts.connect.as_secs_f64()
                ),
                other => format!("initialize failed: {other}"),
            })
    }

    /// `tools/list_changed` → list again and queue the new operations.
    fn on_notification(&self) -> OnNotification {
        let this = self.this.clone();
        Box::new(move |method, _params| {
            if method != "notifications/tools/list_changed" {
                return;
            }
            let this = this.clone();
            tokio::spawn(async move {
                if let Some(server) = this.upgrade() {
                    server.refresh().await;
                }
            });
        })
    }

    /// Lists the tools again and queues them for the registry (a failure is a warning on
    /// stderr: the registry keeps the previous list).
    async fn refresh(&self) {
        let Some(updates) = self
            .updates
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
        else {
            return;
        };
        let _one_at_a_time = self.refreshing.lock().await;
        let remove = self
            .registered
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        match self.operations().await {
            Ok(operations) => {
                updates.send(SourceUpdate {
                    source: self.name.clone(),
                    remove,
                    add: operations,
                });
            }
            Err(e) => eprintln!(
                "envelope: {}: the tool list changed but could not be read: {e}",
                self.name
            ),
        }
    }

    /// Keeps `updates` for list changes (the ids registered are those of the last list).
    pub(crate) fn watch(&self, updates: Updater) {
        *self.updates.lock().unwrap_or_else(|e| e.into_inner()) = Some(updates);
    }

    /// Connects if needed, lists every tool (following `nextCursor`; each page within the
    /// connect timeout), one operation each.
    pub(crate) async fn operations(&self) -> Result<Operations, String> {
        // Bounded: connecting is (spawn, HTTP connect and initialize each within connect).
        let connection = self.connection().await?;
        let mut operations: Operations = Vec::new();
        let mut cursor: Option<Value> = None;
        for _ in 0..MAX_PAGES {
            let params = match &cursor {
                Some(cursor) => json!({ "cursor": cursor }),
                None => json!({}),
            };
            let page = connection
                .request("tools/list", params, self.timeouts.connect)
                .await
                .map_err(|e| format!("tools/list failed: {e}"))?;
            let tools = page["tools"]
                .as_array()
                .ok_or("tools/list answered without a `tools` array")?;
            for tool in tools {
                let (spec, parse_text) = spec_of(&self.namespace, tool, &self.config)?;
                let handler = ToolHandler {
                    server: self.this.upgrade().ok_or("the source is gone")?,
                    // The server's own name, whatever the operation is renamed to.
                    tool: spec.name.clone(),
                    parse_text,
                };
                operations.push((spec, Box::new(handler)));
            }
            match page.get("nextCursor") {
                Some(next) if !next.is_null() && Some(next) != cursor.as_ref() => {
                    cursor = Some(next.clone())
                }
                _ => {
                    crate::source::rename(
                        &self.config.rename,
                        operations.iter_mut().map(|(spec, _)| spec),
                    )?;
                    *self.registered.lock().unwrap_or_else(|e| e.into_inner()) =
                        operations.iter().map(|(spec, _)| spec.id()).collect();
                    return Ok(operations);
                }
            }
        }
        Err(format!(
            "tools/list gave more than {MAX_PAGES} pages (a cursor that never ends?)"
        ))
    }
}

/// Calls one tool of a server.
pub struct ToolHandler {
    pub(crate) server: Arc<Server>,
    pub(crate) tool: String,
    pub(crate) parse_text: bool,
}

impl Handler for ToolHandler {
    fn call<'a>(&'a self, input: Value, _context: &'a Context) -> HandlerFuture<'a> {
        Box::pin(async move {
            let server = &self.server;
            let connection = server.connection().await.map_err(|e| {
                CallError::new(
                    codes::EXECUTION_ERROR,
                    format!("{}: cannot reach the MCP server: {e}", server.name),
                )
                .with_details(json!({ "source": server.name, "upstream": "unreachable" }))
            })?;
            let arguments = if input.is_null() { json!({}) } else { input };
            let params = json!({ "name": self.tool, "arguments": arguments });
            match connection
                .request("tools/call", params, server.timeouts.call)
                .await
            {
                Ok(result) => Ok(envelope_of(&result, self.parse_text)),
                Err(failure) => Err(HandlerError::Call(self.error(failure))),
            }
        })
    }
}

impl ToolHandler {
    fn error(&self, failure: Failure) -> CallError {
        let source = &self.server.name;
        let tool = &self.tool;
        match failure {
            Failure::Timeout(after) => CallError::new(
                codes::TIMEOUT,
                format!(
                    "{source}: no answer to tools/call {tool} within {} s (the call was cancelled)",
                    after.as_secs_f64()
                ),
            )
            .with_details(json!({ "source": source, "timeoutSeconds": after.as_secs_f64() })),
            Failure::Closed(reason) => CallError::new(
                codes::EXECUTION_ERROR,
                format!(
                    "{source}: the MCP server is gone ({reason}); it is started again on the next call"
                ),
            )
            .with_details(json!({ "source": source, "reason": reason, "upstream": "unreachable" })),
            Failure::Rpc {
                code,
                message,
                data,
            } => CallError::new(
                codes::EXECUTION_ERROR,
                format!("{source}: tools/call {tool} failed: {message} (JSON-RPC error {code})"),
            )
            .with_details(json!({ "source": source, "rpcCode": code, "rpcData": data })),
        }
    }
}
