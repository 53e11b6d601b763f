//! JSON reading and the dialect-aware writer.
//!
//! - [`from_slice`] / [`from_str`] read a document into a `serde_json::Value` (object keys in
//!   document order), with located errors.
//! - [`to_vec`] / [`to_string`] / [`JsonWriter`] write one in a [`Dialect`]: the bytes a
//!   reference implementation (JavaScript, Go, Newtonsoft.Json, RFC 8785) would write.
//! - [`reader::Reader`] reads a document as a stream of events, building nothing;
//!   [`rewrite::rewrite`] writes it again in a dialect from those events.
//! - [`equal::same`] compares two values as JSON means them (`1` is `1.0`).
//! - [`size`] measures what the JS writer would write without writing it;
//!   [`pointer`](mod@pointer) builds the JSON Pointers that losses and errors are reported
//!   at.

pub(crate) mod canonical;
pub mod equal;
pub(crate) mod keys;
pub(crate) mod minified;
pub(crate) mod number;
pub(crate) mod parse;
pub mod pointer;
pub(crate) mod prefix;
pub mod reader;
pub mod rewrite;
pub(crate) mod root;
pub mod size;
pub(crate) mod skim;
pub(crate) mod unescape;
pub mod writer;

pub use parse::{from_slice, from_str};
pub use writer::{JsonWriter, to_string, to_vec};

/// The serializer whose bytes we reproduce: string escapes, number formatting and the order
/// of a map's keys follow it.
///
/// New reference implementations may add dialects, so the enum is `#[non_exhaustive]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Dialect {
    /// ECMAScript `JSON.stringify` (tool-envelope-v1, ctxo, operations, mcp): array-index
    /// keys first, then insertion order; `-0` written as `0`.
    Js,
    /// Go `encoding/json` with HTML escaping off (protocol-v1): map keys sorted by bytes;
    /// U+2028 and U+2029 escaped; `-0` kept.
    Go,
    /// Newtonsoft.Json (tool-result-envelope): insertion order; U+0085, U+2028 and U+2029
    /// escaped; integral doubles written with `.0`, large and small ones as `1E+15`.
    Newtonsoft,
    /// RFC 8785 JSON Canonicalization Scheme (digests, cache keys): map keys sorted by
    /// UTF-16 code units; integers beyond 2^53 rounded to a double.
    Jcs,
}
