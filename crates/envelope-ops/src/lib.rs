//! `envelope-ops`: the operations engine. One [`Registry`] of operations — local commands,
//! MCP servers and OpenAPI services, through [`source::OperationSource`] — and
//! one [`Registry::execute`]: look up → access check → input validation → handler → wrap in
//! the `{data, meta}` envelope (the `operations` format) → output check (a warning) → cast
//! of `data` to the output schema.
//!
//! ```text
//! envelope.toml ──file──► load ──► sources ──► Registry ──execute(id, input, context)──► {data, meta}
//!                                                            └──► CallError {code, message, details}
//! ```
//!
//! Modules import only downwards (`tests/layers.rs`): [`file`](mod@file) describes the registry file
//! and knows no source; [`load`] builds the sources from it; the registry keeps an MCP
//! server for relaying as a [`relay::RelayTarget`], not as the adapter's type.

#![warn(missing_docs)]

pub mod access;
pub mod cast;
pub mod command;
pub mod context;
pub mod error;
pub mod file;
pub mod handler;
pub mod load;
pub mod mcp;
pub mod openapi;
pub mod protocol;
mod registry;
pub mod relay;
mod schema;
pub mod shaping;
pub mod source;
pub mod spec;
pub mod update;
pub mod wrap;

pub use context::{Context, Identity};
pub use error::{CallError, RegistryError, codes};
pub use handler::{Handler, HandlerError, HandlerFuture, ItemStream, handler_fn, subscription_fn};
pub use registry::{EnvelopeStream, Executed, Registry, map_handler_error};
pub use spec::{AccessControl, ErrorSchema, OperationSpec, OperationType};
