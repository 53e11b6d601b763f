//! What a host that serves the registry relays to a source's server besides its tools
//! (an MCP server's resources and prompts): [`RelayTarget`]. The MCP adapter gives one;
//! the registry keeps them without knowing the adapter.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use serde_json::Value;

use crate::Identity;

/// A source's server, for what is not a tool.
pub trait RelayTarget: Send + Sync + std::fmt::Debug {
    /// The source's namespace (`<ns>` of `mcpServers.<ns>`).
    fn namespace(&self) -> &str;

    /// Whether `identity` may see the server's resources and prompts: the source's
    /// `accessControl` applies to them as to its tools.
    fn allows(&self, identity: Option<&Identity>) -> bool;

    /// Sends `method` with `params` to the server (started again if it died) and waits for
    /// its result within the source's call timeout: the server's JSON-RPC error, no answer
    /// in time, or a server that cannot be reached are a [`Failure`].
    fn request<'a>(
        &'a self,
        method: &'a str,
        params: Value,
    ) -> Pin<Box<dyn Future<Output = Result<Value, Failure>> + Send + 'a>>;
}

/// Why a request got no result.
#[derive(Debug, Clone, PartialEq)]
pub enum Failure {
    /// The server answered with a JSON-RPC error.
    Rpc {
        /// The JSON-RPC error code.
        code: i64,
        /// Its message.
        message: String,
        /// Its data, if any.
        data: Option<Value>,
    },
    /// The connection is gone (the reason: how the child exited, the session ended…).
    Closed(String),
    /// No answer within the time allowed.
    Timeout(Duration),
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Rpc { code, message, .. } => write!(f, "{message} (JSON-RPC error {code})"),
            Failure::Closed(reason) => write!(f, "the server is gone: {reason}"),
            Failure::Timeout(after) => write!(f, "no answer within {} s", after.as_secs_f64()),
        }
    }
}
