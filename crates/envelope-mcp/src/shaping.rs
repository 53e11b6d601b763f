//! A `tools/call` result to at most the limit. (to be written)
//!
//! The contract the relay relies on:
//!
//! ```text
//! pub fn shape_result(result: &[u8], call: &CallContext, settings: &ToolSettings,
//!                     store: &dyn Store) -> Result<Outcome, ShapeError>
//! ```
//!
//! `result` is the exact bytes of the JSON-RPC response's `result` member; the outcome holds
//! the bytes to put in its place (the same bytes when nothing changes) and what was done
//! (stored digest, redactions, sizes) for the stats.
