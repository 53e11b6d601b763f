//! The [`Format`] trait: everything the rest of the library knows about one wire format.
//!
//! Each format folder (`formats/<format>/`) implements it once, from its own codec, wire
//! types and rules; [`super::registered`] lists the implementations. Detection, decoding,
//! encoding, the published schemas and validation all go through it, so adding a format
//! is one folder, one [`FormatId`] variant and one line in the registry.

use serde_json::Value;

use super::findings::{Context, Findings, Options};
use super::{DecodeOptions, EncodeOptions};
use crate::error::Result;
use crate::json::Dialect;
use crate::model::{Envelope, FormatId, LossReport};

/// How specific a piece of detection evidence is. Detection takes the most specific
/// evidence any format finds (the smallest rank); formats that tie are taken in registry
/// order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum Rank {
    /// A root key that only this format writes and that holds its metadata
    /// (tool-result-envelope's `__envelope`).
    ReservedKey,
    /// A metadata object with the format's own field names (ctxo's `_meta`).
    OwnMetadata,
    /// A content block that starts with the format's prefix (`__ENVELOPE_V1__:`).
    PrefixedBlock,
    /// A content block that holds a document of the format (ctxo inside an MCP result).
    EmbeddedDocument,
    /// An MCP `content` array.
    ContentBlocks,
    /// The root keys the format requires (protocol-v1's `version`, `status`, `command`).
    RequiredKeys,
    /// A metadata field whose value names the format's variants (operations' `meta.source`).
    Discriminator,
    /// A shape the format writes for special answers (ctxo's graceful miss and error).
    SpecialShape,
}

/// Why a document looks like a format.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Evidence {
    /// How specific the evidence is.
    pub rank: Rank,
    /// What was seen, in words (`root key "__envelope" holds an object`).
    pub reason: String,
}

impl Evidence {
    /// Evidence of `rank` with its reason.
    pub fn new(rank: Rank, reason: impl Into<String>) -> Self {
        Evidence {
            rank,
            reason: reason.into(),
        }
    }
}

/// Where a decoder took the payload from, when it moved it out of the document without
/// looking into it (what lets the payload be read in part, see `shape::bounded`).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum PayloadSource {
    /// The value of a root member (`data`).
    Member(String),
    /// The root object without one member (ctxo's `_meta`, tool-result-envelope's
    /// `__envelope`).
    RootWithout(&'static str),
}

/// One wire format: how to recognise, read, write, describe and check it.
///
/// ```
/// use envelope::formats::{DecodeOptions, EncodeOptions, LossReport, registered};
///
/// let input = br#"{"version":1,"status":"ok","command":"fs/ls","data":[1],"meta":{"ts":"2026-07-04T00:00:00Z"},"error":{}}"#;
/// let doc: serde_json::Value = serde_json::from_slice(input).unwrap();
/// // The format with the most specific evidence.
/// let format = registered()
///     .iter()
///     .filter_map(|f| f.detect(&doc).map(|evidence| (evidence.rank, *f)))
///     .min_by_key(|(rank, _)| *rank)
///     .map(|(_, f)| f)
///     .unwrap();
/// assert_eq!(format.id().as_str(), "protocol-v1");
/// let env = format.decode(doc, &DecodeOptions::default()).unwrap();
/// let mut losses = LossReport::default();
/// let bytes = format.encode(&env, &EncodeOptions::default(), &mut losses).unwrap();
/// assert_eq!(bytes.strip_suffix(b"\n").unwrap_or(&bytes), input);
/// ```
pub trait Format: Sync {
    /// The format's id.
    fn id(&self) -> FormatId;

    /// The dialect the format's reference writes JSON in (offloaded payloads are stored in
    /// it).
    fn dialect(&self) -> Dialect {
        Dialect::Js
    }

    /// Evidence that raw input that is not JSON is in this format (a bare
    /// `__ENVELOPE_V1__:` block). Most formats are JSON only: `None`.
    fn detect_text(&self, _input: &[u8]) -> Option<Evidence> {
        None
    }

    /// The evidence that a parsed document is in this format, the most specific first;
    /// `None` when nothing points to it.
    fn detect(&self, doc: &Value) -> Option<Evidence>;

    /// Decodes raw input: a JSON document, or a text form [`Format::detect_text`] accepts.
    fn decode_bytes(&self, input: &[u8], options: &DecodeOptions) -> Result<Envelope> {
        self.decode(crate::json::from_slice(input)?, options)
    }

    /// The functions of the format's folder that do its work: its decoder and encoder, its
    /// wire types' schema and its rules.
    fn codec(&self) -> Codec;

    /// Reads a parsed document into an envelope (its parts move into it): the format's
    /// decoder. Callers use [`Format::decode`], which also sets the origin.
    fn read(&self, doc: Value, options: &DecodeOptions) -> Result<Envelope> {
        (self.codec().read)(doc, options)
    }

    /// Decodes a parsed document; its parts move into the envelope, whose `origin` is
    /// this format.
    fn decode(&self, doc: Value, options: &DecodeOptions) -> Result<Envelope> {
        let mut env = self.read(doc, options)?;
        env.origin = Some(self.id());
        Ok(env)
    }

    /// Whether an error envelope's output shows the budget marker's hint where a reader
    /// reads the error: when not (ctxo's error is `{"error":true,"message"}` alone;
    /// tool-envelope-v1's block 0 is the error's rendering, its marker in base64 in block
    /// 1), a cut of the error's message says so at the end of the message itself.
    fn shows_error_hint(&self) -> bool {
        true
    }

    /// Where the decoder of this format took `env`'s payload from, if it moved it out of
    /// the document untouched: never compared, parsed, decoded or embedded in text. `None`
    /// (the default) means the payload must be read whole.
    fn payload_source(&self, _env: &Envelope) -> Option<PayloadSource> {
        None
    }

    /// Encodes `env`, adding to `losses` what the format cannot hold.
    fn encode(
        &self,
        env: &Envelope,
        options: &EncodeOptions,
        losses: &mut LossReport,
    ) -> Result<Vec<u8>> {
        (self.codec().encode)(env, options, losses)
    }

    /// The JSON Schema of the format, generated from its wire types (without `$schema` and
    /// `$id`, which [`super::schema::generate`] adds).
    fn schema(&self) -> schemars::Schema {
        (self.codec().schema)()
    }

    /// Applies the format's rules to a parsed document (the published schema is applied
    /// by the validator, not here).
    fn check(&self, doc: &Value, options: &Options, context: Context, findings: &mut Findings) {
        (self.codec().check)(doc, options, context, findings)
    }

    /// Whether the format's rules and schema find in the abridged root of a large document
    /// what they find in the whole document (`validate`'s abridged read: payload members
    /// held as placeholders, long texts of `content` blocks as prefixes). `false` (the
    /// default): validate the document whole.
    fn reads_abridged(&self, _abridged: &AbridgedRoot<'_>, _options: &Options) -> bool {
        false
    }
}

/// The root of a large document as `validate` reads it abridged
/// ([`Format::reads_abridged`]).
#[derive(Clone, Copy, Debug)]
pub struct AbridgedRoot<'a> {
    /// The root object, payload members held as placeholders.
    pub root: &'a Value,
    /// The `content` blocks whose text the root holds a prefix of: each block's index, and
    /// whether the whole text is in the document as it is (written without escapes).
    pub shortened: &'a [(usize, bool)],
}

/// What a format's folder does its work with ([`Format::codec`]): each format names its
/// functions once instead of forwarding four trait methods to them.
#[derive(Clone, Copy, Debug)]
pub struct Codec {
    /// The decoder: a parsed document into an envelope ([`Format::read`]).
    pub read: fn(Value, &DecodeOptions) -> Result<Envelope>,
    /// The encoder ([`Format::encode`]).
    pub encode: fn(&Envelope, &EncodeOptions, &mut LossReport) -> Result<Vec<u8>>,
    /// The JSON Schema generated from the wire types ([`Format::schema`]).
    pub schema: fn() -> schemars::Schema,
    /// The rules ([`Format::check`]).
    pub check: fn(&Value, &Options, Context, &mut Findings),
}
