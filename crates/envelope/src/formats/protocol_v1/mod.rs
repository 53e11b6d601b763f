//! protocol-v1: `{version,status,command,data,meta,error}`, one Go-written line per envelope.
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
use crate::json::Dialect;
use crate::model::{Envelope, FormatId, LossReport};

/// The protocol-v1 format.
#[derive(Clone, Copy, Debug, Default)]
pub struct ProtocolV1;

impl Format for ProtocolV1 {
    fn id(&self) -> FormatId {
        FormatId::ProtocolV1
    }

    fn dialect(&self) -> Dialect {
        Dialect::Go
    }

    fn detect(&self, doc: &Value) -> Option<Evidence> {
        let obj = doc.as_object()?;
        ["version", "status", "command"]
            .iter()
            .all(|k| obj.contains_key(*k))
            .then(|| {
                Evidence::new(
                    Rank::RequiredKeys,
                    "root keys \"version\", \"status\" and \"command\"",
                )
            })
    }

    fn read(&self, doc: Value, _options: &DecodeOptions) -> Result<Envelope> {
        decode(doc)
    }

    fn payload_source(&self, _env: &Envelope) -> Option<PayloadSource> {
        Some(PayloadSource::Member("data".into()))
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
        schemars::schema_for!(wire::Envelope<'static>)
    }

    fn check(&self, doc: &Value, _options: &Options, context: Context, findings: &mut Findings) {
        rules::check(doc, findings, context);
    }
}
