//! `envelope-serve`: the operations of a registry served as one MCP server and one HTTP API.
//!
//! ```text
//!   MCP client ──stdio / Streamable HTTP──► mcp ──┐
//!                                                 ├─► Service ──► Dispatch ──► Registry::execute
//!   HTTP client ──POST /ops/{id}─────────► http ──┘      │                └─► NATS workers
//!                                                   shaping (limit, store, redaction)
//! ```
//!
//! | module | job |
//! |---|---|
//! | [`names`](tool_name) | tool names from operation ids |
//! | [`view`](tools) | operations as MCP tools, envelopes as `CallToolResult`s |
//! | [`dispatch`] | where calls run: in process, or on workers over NATS |
//! | [`service`] | a call from either view: run, shape, bound |
//! | [`mcp`] | the MCP server of one client session |
//! | [`http`] | the HTTP view: `POST /ops/{id}`, `GET /openapi.json` ([`openapi`]), artifacts |
//! | [`relayed`] | the MCP sources' resources and prompts, namespaced |
//! | [`tokens`](Tokens) | bearer tokens and the identities they stand for |
//! | [`Error`] | what serve refuses at start |

#![warn(missing_docs)]

pub mod dispatch;
mod error;
pub mod http;
pub mod mcp;
mod names;
pub mod openapi;
pub mod relayed;
pub mod service;
mod tokens;
mod view;

pub use error::{Error, InvalidCursor};
pub use names::{MAX_TOOL_NAME, ToolNames, tool_name};
pub use tokens::{MIN_TOKEN_LEN, TOKENS_ENV, Tokens};
pub use view::{InputForm, SUBSCRIPTION_NOTE, call_result, output_schema, tools};
