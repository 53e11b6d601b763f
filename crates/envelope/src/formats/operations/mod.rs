//! operations: `{data, meta}` with `meta.source` = `local`, `http` or `mcp`.
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
use crate::formats::{AbridgedRoot, Codec, DecodeOptions, Evidence, Format, PayloadSource, Rank};
use crate::model::{Envelope, FormatId};

/// The operations format.
#[derive(Clone, Copy, Debug, Default)]
pub struct Operations;

impl Format for Operations {
    fn id(&self) -> FormatId {
        FormatId::Operations
    }

    // An MCP source's `meta._meta` is read as text, never built (see `JsonText`).
    fn decode_bytes(&self, input: &[u8], options: &DecodeOptions) -> Result<Envelope> {
        crate::formats::decode_keeping_meta(FormatId::Operations, input, options)
    }

    fn codec(&self) -> Codec {
        Codec {
            read: |doc, _| decode(doc),
            encode,
            schema: || schemars::schema_for!(wire::Envelope),
            check: |doc, options, _, findings| rules::check(doc, options, findings),
        }
    }

    fn detect(&self, doc: &Value) -> Option<Evidence> {
        is_response_envelope(doc).then(|| {
            Evidence::new(
                Rank::Discriminator,
                format!(
                    "\"data\" and \"meta\" with meta.source {}",
                    doc["meta"]["source"]
                ),
            )
        })
    }

    fn payload_source(&self, env: &Envelope) -> Option<PayloadSource> {
        // A mirrored `structuredContent` was compared with `data`.
        (!env.layout.structured_mirror).then(|| PayloadSource::Member("data".into()))
    }

    // `ops.mcp-data` compares `data` with `meta.structuredContent`, and an output schema
    // reads all of `data`; a shortened text is no operations text.
    fn reads_abridged(&self, abridged: &AbridgedRoot<'_>, options: &Options) -> bool {
        let root = abridged.root;
        abridged.shortened.is_empty()
            && options.output_schema.is_none()
            && root
                .get("meta")
                .and_then(|m| m.get("structuredContent"))
                .is_none()
    }
}
