//! An MCP result's `_meta` read as text, never built, where a format carries one: at the
//! root of an MCP result, and in operations' `meta` (the `_meta` of the MCP result it
//! wraps). Built, small records take about eleven times their text; kept as
//! [`JsonText`], their size once.

use serde_json::Value;

use super::{
    DecodeOptions, FormatId, decode_value, identified, keys_for_detection, mcp, operations,
};
use crate::error::Result;
use crate::json::root::{checked_without, may_hold_key, read_root};
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
/// parsed in one pass, as before.
pub(crate) fn read(input: &[u8]) -> Result<Read<'_>> {
    if !may_hold_key(input, META) {
        return Ok(Read {
            root: crate::json::from_slice(input)?,
            meta: None,
            in_meta: None,
        });
    }
    let (mut meta, mut in_meta) = (None, None);
    let root = read_root(input, &mut |key, text| match key {
        META => {
            meta = Some(text);
            Ok(Value::Null)
        }
        OPERATIONS_META => {
            let (value, kept) = checked_without(text, META)?;
            in_meta = kept;
            Ok(value)
        }
        _ => serde_json::from_slice(text),
    })?;
    Ok(Read {
        root,
        meta,
        in_meta,
    })
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
