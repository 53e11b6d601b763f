//! `envelope proxy`: the toolkit in front of any MCP server, unmodified, for any client.
//!
//! The proxy speaks MCP to a client (stdio, or Streamable HTTP with `--listen`) and to one
//! upstream server (a child process over stdio, or Streamable HTTP with `--upstream-url`).
//! Every message passes through unchanged except:
//!
//! - `tools/call` results, shaped to a hard byte limit ([`shaping`]): redacted, stored whole
//!   when too big, cut to fit, with a link to the full result;
//! - every other message to the client (results, errors, notifications, the upstream's own
//!   requests): secrets masked ([`outbound`]);
//! - the proxy's own additions ([`drill`]): the `envelope_read` tool and `resources/read` of
//!   artifact URIs, merged into the upstream's lists;
//! - faults of the upstream (crash, hang, junk on stdout), answered with JSON-RPC errors.
//!
//! Layers, each module one job:
//!
//! | module | job |
//! |---|---|
//! | [`transport`] | bytes ↔ frames: stdio child, stdio client, HTTP server, HTTP client; all give a [`transport::Link`] |
//! | [`message`] | one frame read as JSON-RPC: kind, id, method, without rewriting it |
//! | [`outbound`] | the one path to a client: every frame masked before it leaves |
//! | [`session`] | the relay of one client session: routing, in-flight requests, timeouts, faults |
//! | [`revision`] | protocol revisions and what each can carry |
//! | [`shaping`] | a `tools/call` result to at most the limit |
//! | [`drill`] | artifact URIs, `resources/read`, the `envelope_read` tool |
//! | [`held`] | a stored result's bytes shared by the threads that index them |
//! | [`catalog`] | the stored results' catalog: `envelope_list`, `envelope_search` (SQLite FTS5) |
//! | [`policy`] | the TOML policy file: per-tool settings |
//! | [`managed`] | the store's limits while running: `--ttl`, `--max-store-bytes`, `--max-results` |
//! | [`stats`] | counters, the `--stats` file |
//! | [`config`] | the proxy's settings, shared by every session |

#![warn(missing_docs)]

pub mod catalog;
pub mod config;
pub mod drill;
pub mod held;
pub mod managed;
pub mod message;
pub mod outbound;
pub mod policy;
pub mod revision;
pub mod session;
pub mod shaping;
pub mod stats;
pub mod transport;
