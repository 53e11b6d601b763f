//! from_mcp: an MCP server as a source of operations (`mcpServers.<ns>` in the registry
//! file). Each tool is an operation `<ns>.<tool name>`; executing it is a `tools/call`
//! whose result becomes an envelope with `meta.source = "mcp"`. The rules (type, schemas,
//! `data`, `isError`, restart, environment, timeouts) are in docs/operations.md, "from_mcp".
//!
//! ```text
//! McpSource ──operations()──► Server ──connect──► Connection (envelope_mcp transport Link)
//!                                │                    ▲ tools/list, tools/call, cancelled
//!                                └─ ToolHandler per tool (Arc<Server>)
//! ```

pub mod connection;
pub mod env;
mod server;
pub mod tool;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use crate::error::RegistryError;
use crate::file::McpServerConfig;
use crate::relay::RelayTarget;
use crate::source::{OperationSource, SourceFuture};
use crate::update::Updater;

use connection::Failure;
pub use server::MAX_PAGES;
use server::Server;

/// How long each call may take when the source sets no `timeout`.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// How long starting a server (spawn or connect, initialize, list its tools) may take when
/// the source sets no `connectTimeout`.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// An `mcpServers.<ns>` source.
pub struct McpSource {
    server: Arc<Server>,
}

impl McpSource {
    /// The source of namespace `namespace` (not connected until its operations are asked).
    pub fn new(namespace: &str, config: McpServerConfig) -> McpSource {
        let timeouts = server::Timeouts {
            call: config.timeout.unwrap_or(DEFAULT_TIMEOUT),
            connect: config.connect_timeout.unwrap_or(DEFAULT_CONNECT_TIMEOUT),
        };
        McpSource {
            server: Server::new(namespace, config, timeouts),
        }
    }
}

/// The server of an `mcpServers.<ns>` source, for what is not a tool: a host that serves
/// the registry (`envelope serve`) relays the server's resources and prompts through it.
#[derive(Clone)]
pub struct McpServerHandle(Arc<Server>);

impl std::fmt::Debug for McpServerHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("McpServerHandle")
            .field(&self.0.name)
            .finish()
    }
}

impl RelayTarget for McpServerHandle {
    fn namespace(&self) -> &str {
        &self.0.namespace
    }

    fn allows(&self, identity: Option<&crate::Identity>) -> bool {
        self.0
            .access_control()
            .is_none_or(|rules| crate::access::check(rules, identity).is_ok())
    }

    fn request<'a>(
        &'a self,
        method: &'a str,
        params: Value,
    ) -> Pin<Box<dyn Future<Output = Result<Value, Failure>> + Send + 'a>> {
        Box::pin(async move {
            let connection = self.0.connection().await.map_err(Failure::Closed)?;
            connection
                .request(method, params, self.0.timeouts.call)
                .await
        })
    }
}

impl OperationSource for McpSource {
    fn name(&self) -> String {
        self.server.name.clone()
    }

    fn operations(&self) -> SourceFuture<'_> {
        Box::pin(async move {
            self.server
                .operations()
                .await
                .map_err(|message| RegistryError::Unavailable { message })
        })
    }

    fn watch(&self, updates: Updater) {
        self.server.watch(updates);
    }

    fn mcp_server(&self) -> Option<Arc<dyn RelayTarget>> {
        Some(Arc::new(McpServerHandle(self.server.clone())))
    }
}
