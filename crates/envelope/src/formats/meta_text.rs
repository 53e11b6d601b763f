//! An MCP result's `_meta` read as text, never built, where a format carries one: at the
//! root of an MCP result, and in operations' `meta` (the `_meta` of the MCP result it
//! wraps). Built, small records take about eleven times their text; kept as
//! [`JsonText`], their size once.

use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::{
    DecodeOptions, FormatId, decode_value, identified, keys_for_detection, mcp, operations,
};
use crate::error::Result;
use crate::json::parse::MAX_NESTING;
use crate::json::reader::Reader;
use crate::json::root::may_hold_key;
use crate::model::{Envelope, JsonText};

/// An MCP result's `_meta`.
const META: &str = "_meta";

/// operations' `meta`.
const OPERATIONS_META: &str = "meta";

/// A document read with its `_meta` texts kept: `null` in their places in `root`.
pub(crate) struct Read<'i> {
    /// The document, `null` where a text was kept.
    root: Value,
    /// The root's `_meta` (the last of a repeated key, as serde_json's map keeps).
    meta: Option<&'i [u8]>,
    /// `meta._meta` (of the last `meta`).
    in_meta: Option<&'i [u8]>,
}

/// Reads `input` as [`json::from_slice`](crate::json::from_slice) does (the same acceptance
/// and errors), with the `_meta` texts kept. A document without `"_meta"` anywhere is
/// parsed as before.
pub(crate) fn read(input: &[u8]) -> Result<Read<'_>> {
    let kept = match may_hold_key(input, META) {
        true => read_kept(input),
        false => None,
    };
    match kept {
        Some(read) => Ok(read),
        // Whatever the read with kept texts cannot vouch for is read whole (with its error).
        None => Ok(Read {
            root: crate::json::from_slice(input)?,
            meta: None,
            in_meta: None,
        }),
    }
}

/// The read with the `_meta` texts kept: one pass of serde_json over the document, the
/// texts passed over as they are written (`RawValue`), then checked with the pull reader as
/// serde_json would have read them where they are (numbers, escapes, nesting). `None` when
/// anything fails: the whole read says what.
fn read_kept(input: &[u8]) -> Option<Read<'_>> {
    let text = std::str::from_utf8(input).ok()?;
    let mut de = serde_json::Deserializer::from_str(text);
    let read = Root.deserialize(&mut de).ok()?;
    de.end().ok()?;
    let meta_ok = read.meta.is_none_or(|text| checked(text, 1));
    let in_meta_ok = read.in_meta.is_none_or(|text| checked(text, 2));
    (meta_ok && in_meta_ok).then_some(read)
}

/// Whether serde_json reads `text`, a value `level` containers deep in its document (its
/// nesting counts from there).
fn checked(text: &[u8], level: usize) -> bool {
    let mut reader = Reader::new(text);
    let mut deepest = 0;
    loop {
        match reader.next() {
            Ok(Some(_)) => deepest = deepest.max(reader.depth()),
            Ok(None) => return level + deepest <= MAX_NESTING,
            Err(_) => return false,
        }
    }
}

/// The root object, its `_meta` and its `meta`'s `_meta` passed over as written.
struct Root;

impl<'de> DeserializeSeed<'de> for Root {
    type Value = Read<'de>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> std::result::Result<Read<'de>, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Root {
    type Value = Read<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<Read<'de>, A::Error> {
        // As a `Value` is read: a repeated key keeps its first place and its last value.
        let (mut root, mut meta, mut in_meta) = (Map::new(), None, None);
        while let Some(key) = map.next_key::<String>()? {
            let value = match key.as_str() {
                META => {
                    let text: &'de RawValue = map.next_value()?;
                    meta = Some(text.get().as_bytes());
                    Value::Null
                }
                OPERATIONS_META => {
                    let (value, kept) = map.next_value_seed(OperationsMeta)?;
                    in_meta = kept;
                    value
                }
                _ => map.next_value()?,
            };
            root.insert(key, value);
        }
        Ok(Read {
            root: Value::Object(root),
            meta,
            in_meta,
        })
    }
}

/// operations' `meta`, its `_meta` passed over as written. Not an object: refused (the
/// whole read reads it).
struct OperationsMeta;

impl<'de> DeserializeSeed<'de> for OperationsMeta {
    type Value = (Value, Option<&'de [u8]>);
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> std::result::Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for OperationsMeta {
    type Value = (Value, Option<&'de [u8]>);

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object")
    }

    fn visit_map<A: MapAccess<'de>>(
        self,
        mut map: A,
    ) -> std::result::Result<Self::Value, A::Error> {
        let (mut meta, mut kept) = (Map::new(), None);
        while let Some(key) = map.next_key::<String>()? {
            let value = match key == META {
                true => {
                    let text: &'de RawValue = map.next_value()?;
                    kept = Some(text.get().as_bytes());
                    Value::Null
                }
                false => map.next_value()?,
            };
            meta.insert(key, value);
        }
        Ok((Value::Object(meta), kept))
    }
}

impl<'i> Read<'i> {
    /// A document read elsewhere: `root` with `null` in the place of its `_meta`, whose
    /// text is `meta` (checked JSON: read by a reader that accepts what serde_json does).
    pub(crate) fn from_parts(root: Value, meta: Option<&'i [u8]>) -> Self {
        Read {
            root,
            meta,
            in_meta: None,
        }
    }
}

impl Read<'_> {
    /// The format detection finds, from the names of the root `_meta`'s members (all it
    /// reads of it: ctxo's evidence).
    pub(crate) fn detect(&mut self) -> Result<FormatId> {
        let Some(text) = self.meta else {
            return identified(&self.root);
        };
        // The text was read already: serde_json reads it.
        let keys =
            keys_for_detection(text).map_err(|e| crate::json::parse::from_serde(&e, text))?;
        self.root[META] = keys;
        let format = identified(&self.root);
        self.root[META] = Value::Null;
        format
    }

    /// Decodes the document as `format`: MCP keeps its `_meta` as text, operations its
    /// `meta._meta` when the MCP result it wraps is its source; every other `_meta` is
    /// built, as the format reads it.
    pub(crate) fn decode(self, format: FormatId, options: &DecodeOptions) -> Result<Envelope> {
        let Read {
            mut root,
            meta,
            in_meta,
        } = self;
        let from_mcp = root.pointer("/meta/source").and_then(Value::as_str) == Some("mcp");
        let (kept, built_meta, built_in_meta) = match format {
            FormatId::Mcp => (meta, None, in_meta),
            FormatId::Operations if from_mcp => (in_meta, meta, None),
            _ => (None, meta, in_meta),
        };
        if let Some(text) = built_meta {
            root[META] = built(text)?;
        }
        if let Some(text) = built_in_meta {
            root[OPERATIONS_META][META] = built(text)?;
        }
        let Some(text) = kept else {
            return decode_value(format, root, options);
        };
        let text = JsonText::read(text).map_err(|e| crate::json::parse::from_serde(&e, text))?;
        let mut env = match format {
            FormatId::Mcp => mcp::decode_parts(root, Some(text))?,
            _ => operations::decode_parts(root, Some(text))?,
        };
        env.origin = Some(format);
        Ok(env)
    }
}

/// A kept text built (it was read already: serde_json reads it).
fn built(text: &[u8]) -> Result<Value> {
    serde_json::from_slice(text).map_err(|e| crate::json::parse::from_serde(&e, text))
}
