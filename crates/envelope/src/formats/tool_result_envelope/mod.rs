//! tool-result-envelope: the payload under a key plus metadata under the reserved root key `__envelope`.
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

/// The tool-result-envelope format.
#[derive(Clone, Copy, Debug, Default)]
pub struct ToolResultEnvelope;

impl Format for ToolResultEnvelope {
    fn id(&self) -> FormatId {
        FormatId::ToolResultEnvelope
    }

    fn codec(&self) -> Codec {
        Codec {
            read: |doc, _| decode(doc),
            encode,
            schema: || schemars::schema_for!(wire::Document),
            check: |doc, _, _, findings| rules::check(doc, findings),
        }
    }

    fn dialect(&self) -> Dialect {
        Dialect::Newtonsoft
    }

    fn detect(&self, doc: &Value) -> Option<Evidence> {
        doc.get("__envelope")
            .is_some_and(Value::is_object)
            .then(|| Evidence::new(Rank::ReservedKey, "root key \"__envelope\" holds an object"))
    }

    fn payload_source(&self, env: &Envelope) -> Option<PayloadSource> {
        Some(match &env.layout.payload_key {
            Some(key) => PayloadSource::Member(key.clone()),
            None => PayloadSource::RootWithout(RESERVED),
        })
    }

    // The rules read root keys and `__envelope` only; a shortened text is no text of this
    // format.
    fn reads_abridged(&self, abridged: &AbridgedRoot<'_>, _options: &Options) -> bool {
        abridged.shortened.is_empty()
    }
}
