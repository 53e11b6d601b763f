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
use crate::formats::findings::{Context, Findings, Options};
use crate::formats::{DecodeOptions, EncodeOptions, Evidence, Format, Rank};
use crate::model::{Envelope, FormatId, LossReport};

/// The mcp format.
#[derive(Clone, Copy, Debug, Default)]
pub struct Mcp;

impl Format for Mcp {
    fn id(&self) -> FormatId {
        FormatId::Mcp
    }

    fn detect(&self, doc: &Value) -> Option<Evidence> {
        doc.get("content").is_some_and(Value::is_array).then(|| {
            Evidence::new(
                Rank::ContentBlocks,
                "a \"content\" array of MCP content blocks",
            )
        })
    }

    fn read(&self, doc: Value, _options: &DecodeOptions) -> Result<Envelope> {
        decode(doc)
    }

    fn encode(
        &self,
        env: &Envelope,
        options: &EncodeOptions,
        losses: &mut LossReport,
    ) -> Result<Vec<u8>> {
        encode(env, options, losses)
    }

    fn schema(&self) -> schemars::Schema {
        schemars::schema_for!(wire::CallToolResult)
    }

    fn check(&self, doc: &Value, options: &Options, _context: Context, findings: &mut Findings) {
        rules::check(doc, options, findings);
    }
}
