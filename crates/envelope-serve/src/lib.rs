//! `envelope-serve`: the operations of a registry served as one MCP server (issue 15). This
//! first part is the MCP view of the registry, as pure functions: each operation as a tool
//! ([`tools`]: names models accept, schemas, annotations, only what the caller may call),
//! and each execution as a `CallToolResult` ([`call_result`]). The transports (stdio and
//! Streamable HTTP through the proxy's), the HTTP view and NATS dispatch build on it.

#![warn(missing_docs)]

mod names;
mod view;

pub use names::{MAX_TOOL_NAME, ToolNames, tool_name};
pub use view::{call_result, output_schema, tools};
