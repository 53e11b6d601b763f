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

use crate::formats::findings::Options;
use crate::formats::{AbridgedRoot, Codec, Evidence, Format, PayloadSource, Rank};
use crate::json::Dialect;
use crate::model::{Envelope, FormatId};

/// The protocol-v1 format.
#[derive(Clone, Copy, Debug, Default)]
pub struct ProtocolV1;

impl Format for ProtocolV1 {
    fn id(&self) -> FormatId {
        FormatId::ProtocolV1
    }

    fn codec(&self) -> Codec {
        Codec {
            read: |doc, _| decode(doc),
            encode,
            schema: || schemars::schema_for!(wire::Envelope<'static>),
            check: |doc, _, context, findings| rules::check(doc, findings, context),
        }
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

    fn payload_source(&self, _env: &Envelope) -> Option<PayloadSource> {
        Some(PayloadSource::Member("data".into()))
    }

    // The rules read root keys only; a shortened text is no protocol-v1 text.
    fn reads_abridged(&self, abridged: &AbridgedRoot<'_>, _options: &Options) -> bool {
        abridged.shortened.is_empty()
    }
}
