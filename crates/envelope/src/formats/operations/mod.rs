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
use crate::formats::findings::{Context, Findings, Options};
use crate::formats::{DecodeOptions, EncodeOptions, Evidence, Format, PayloadSource, Rank};
use crate::model::{Envelope, FormatId, LossReport};

/// The operations format.
#[derive(Clone, Copy, Debug, Default)]
pub struct Operations;

impl Format for Operations {
    fn id(&self) -> FormatId {
        FormatId::Operations
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

    fn read(&self, doc: Value, _options: &DecodeOptions) -> Result<Envelope> {
        decode(doc)
    }

    fn payload_source(&self, env: &Envelope) -> Option<PayloadSource> {
        // A mirrored `structuredContent` was compared with `data`.
        (!env.layout.structured_mirror).then(|| PayloadSource::Member("data".into()))
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
        schemars::schema_for!(wire::Envelope)
    }

    fn check(&self, doc: &Value, options: &Options, _context: Context, findings: &mut Findings) {
        rules::check(doc, options, findings);
    }
}
