//! ctxo: the payload object with a trailing `_meta` that reports a byte-budget truncation.
//!
//! `codec` reads and writes the wire format byte-exact with its reference; `wire` holds the
//! wire types the published JSON Schema is generated from; `rules` holds the validation rules.

mod codec;
mod embedded;
pub(crate) mod rules;
// The wire types are read by serde and described by schemars: some fields exist only for
// the published schema, never for Rust code.
#[allow(dead_code)]
pub(crate) mod wire;

pub use codec::*;
pub(crate) use embedded::{may_hold_ctxo_document, may_hold_ctxo_document_read};

use serde_json::Value;

use crate::formats::findings::Options;
use crate::formats::{AbridgedRoot, Codec, Evidence, Format, PayloadSource, Rank};
use crate::model::{Envelope, FormatId};

/// The ctxo format.
#[derive(Clone, Copy, Debug, Default)]
pub struct Ctxo;

impl Format for Ctxo {
    fn id(&self) -> FormatId {
        FormatId::Ctxo
    }

    fn shows_error_hint(&self) -> bool {
        false
    }

    fn codec(&self) -> Codec {
        Codec {
            read: |doc, _| decode(doc),
            encode,
            schema: || schemars::schema_for!(wire::Payload),
            check: |doc, _, _, findings| rules::check(doc, findings),
        }
    }

    fn detect(&self, doc: &Value) -> Option<Evidence> {
        let obj = doc.as_object()?;
        if obj.get("_meta").is_some_and(is_ctxo_meta) {
            return Some(Evidence::new(
                Rank::OwnMetadata,
                "a \"_meta\" object with ctxo budget fields",
            ));
        }
        if let Some(content) = obj.get("content").and_then(Value::as_array) {
            // The document may travel as the last text block of an MCP result.
            let (i, text) = crate::formats::mcp::text_blocks(content).next_back()?;
            let embedded =
                text.trim_start().starts_with('{') && embedded::holds_ctxo_document(text);
            return embedded.then(|| {
                Evidence::new(
                    Rank::EmbeddedDocument,
                    format!("the last text block ({i}) holds a document with a ctxo \"_meta\""),
                )
            });
        }
        if obj.get("found") == Some(&Value::Bool(false)) {
            return Some(Evidence::new(
                Rank::SpecialShape,
                "a ctxo graceful miss ({\"found\": false, …})",
            ));
        }
        if obj.get("error") == Some(&Value::Bool(true))
            && obj.get("message").is_some_and(Value::is_string)
        {
            return Some(Evidence::new(
                Rank::SpecialShape,
                "a ctxo error ({\"error\": true, \"message\": …})",
            ));
        }
        None
    }

    fn payload_source(&self, env: &Envelope) -> Option<PayloadSource> {
        // Inside an MCP result the document was text in a block.
        env.layout
            .transport
            .is_none()
            .then_some(PayloadSource::RootWithout(META))
    }

    // The rules read `_meta` and the number of items of arrays; a shortened text is no
    // ctxo text.
    fn reads_abridged(&self, abridged: &AbridgedRoot<'_>, _options: &Options) -> bool {
        abridged.shortened.is_empty()
    }
}
