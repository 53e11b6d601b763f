//! mcp: a native MCP `CallToolResult` (`content`, `structuredContent`, `isError`, `_meta`).
//!
//! `codec` reads and writes the wire format byte-exact with its reference; `wire` holds the
//! wire types the published JSON Schema is generated from; `rules` holds the validation rules.

mod codec;
pub(crate) mod rules;
// The wire types are read by serde and described by schemars: some fields exist only for
// the published schema, never for Rust code.
#[allow(dead_code)]
pub(crate) mod wire;

pub use codec::*;

use serde_json::Value;

use crate::error::Result;
use crate::formats::findings::Options;
use crate::formats::{AbridgedRoot, Codec, DecodeOptions, Evidence, Format, Rank};
use crate::model::{Envelope, FormatId};

/// The mcp format.
#[derive(Clone, Copy, Debug, Default)]
pub struct Mcp;

impl Format for Mcp {
    fn id(&self) -> FormatId {
        FormatId::Mcp
    }

    // `_meta` is read as text, never built (see `JsonText`).
    fn decode_bytes(&self, input: &[u8], options: &DecodeOptions) -> Result<Envelope> {
        crate::formats::decode_keeping_meta(FormatId::Mcp, input, options)
    }

    fn codec(&self) -> Codec {
        Codec {
            read: |doc, _| decode(doc),
            encode,
            schema: || schemars::schema_for!(wire::CallToolResult),
            check: |doc, options, _, findings| rules::check(doc, options, findings),
        }
    }

    fn detect(&self, doc: &Value) -> Option<Evidence> {
        doc.get("content").is_some_and(Value::is_array).then(|| {
            Evidence::new(
                Rank::ContentBlocks,
                "a \"content\" array of MCP content blocks",
            )
        })
    }

    // `mcp.mirror` compares `structuredContent` with a text block holding JSON (but
    // proven mirrors, settled before), and an output schema reads all of it.
    fn reads_abridged(&self, abridged: &AbridgedRoot<'_>, options: &Options) -> bool {
        let root = abridged.root;
        options.output_schema.is_none()
            && (root.get("structuredContent").is_none() || !rules::has_json_text_block(root))
    }
}
