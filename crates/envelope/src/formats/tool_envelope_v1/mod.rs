//! tool-envelope-v1: an MCP result with a markdown summary block and an `__ENVELOPE_V1__:` base64 JSON block.
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

/// The tool-envelope-v1 format.
#[derive(Clone, Copy, Debug, Default)]
pub struct ToolEnvelopeV1;

impl Format for ToolEnvelopeV1 {
    fn id(&self) -> FormatId {
        FormatId::ToolEnvelopeV1
    }

    /// Block 0 of an error is its rendering (rule `tev1.block0`): a hint there would make
    /// it another text, and the marker is in block 1's base64, which no reader reads.
    fn shows_error_hint(&self) -> bool {
        false
    }

    fn codec(&self) -> Codec {
        Codec {
            read: decode,
            encode,
            schema: || schemars::schema_for!(wire::Result),
            check: |doc, _, _, findings| rules::check(doc, findings),
        }
    }

    fn detect_text(&self, input: &[u8]) -> Option<Evidence> {
        input.starts_with(b"__ENVELOPE_V").then(|| {
            Evidence::new(
                Rank::PrefixedBlock,
                "the input is a bare __ENVELOPE_V…__: block",
            )
        })
    }

    fn detect(&self, doc: &Value) -> Option<Evidence> {
        let content = doc.get("content")?.as_array()?;
        let (i, _) = crate::formats::mcp::text_blocks(content)
            .find(|(_, text)| text.starts_with("__ENVELOPE_V") && split_prefix(text).is_some())?;
        Some(Evidence::new(
            Rank::PrefixedBlock,
            format!("text block {i} starts with an __ENVELOPE_V…__: prefix"),
        ))
    }

    fn decode_bytes(&self, input: &[u8], options: &DecodeOptions) -> Result<Envelope> {
        if self.detect_text(input).is_some() {
            // decode_block sets the origin itself.
            return decode_block(input, options);
        }
        self.decode(crate::json::from_slice(input)?, options)
    }

    // Block 0 of an error is compared with a rendering of the error payload, and a
    // `structuredContent` with the block's whole document; block 1 is given whole, from
    // the document (so it must be written there without escapes). Other shortened texts
    // are read by no tool-envelope-v1 rule.
    fn reads_abridged(&self, abridged: &AbridgedRoot<'_>, _options: &Options) -> bool {
        let root = abridged.root;
        root.get("isError") != Some(&Value::Bool(true))
            && root.get("structuredContent").is_none()
            && abridged
                .shortened
                .iter()
                .all(|&(block, in_place)| block != 1 || in_place)
    }
}
