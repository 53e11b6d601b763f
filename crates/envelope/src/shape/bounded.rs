//! Decoding an envelope for a byte budget, from JSON text: what `envelope shape --limit`
//! and `envelope convert --to ctxo` do with a large payload.
//!
//! Parsing the whole document costs several serializations of it; cutting it to a few
//! kilobytes then costs almost nothing. Most of what a parse builds is cut right away, so
//! the document is read with [`skim`](crate::json::skim): array items no cut within the limit
//! can keep are sized, not built, and the result is the same bytes as parse-then-cut.
//!
//! A skimmed read is used only when that is certain; otherwise the document is read whole
//! ([`formats::decode_any`]), with the same result or the same error as without this module:
//! - the format decodes its payload by moving it out of the document, without looking at
//!   how long its arrays are: ctxo (not inside an MCP result), protocol-v1, operations and
//!   tool-result-envelope. mcp and tool-envelope-v1 (whose payload is also text in a block,
//!   or base64) are read whole. Detection decides by keys, and by the root `content` array
//!   only between mcp, tool-envelope-v1 and ctxo-inside-MCP, all three read whole.
//! - every skimmed array is in the payload, found there exactly once, with its mark last
//!   (a decoder that compared a skimmed array or left one outside the payload, such as
//!   operations' `meta.structuredContent` when it differs from `data`, fails this check);
//! - the document reads at all (any syntax or encoding error is reported by the whole read).

use serde_json::Value;

use super::budget::{Fitted, fit_measured, payload_value};
use super::cut::Measured;
use crate::error::Result;
use crate::formats::{self, DecodeOptions, EncodeOptions, Encoded, FormatId};
use crate::json::skim::{self, Tail, mark_index};
use crate::model::{Envelope, Payload};

/// A document decoded for a limit.
#[derive(Debug)]
pub enum Decoded {
    /// Everything was read: the envelope is the one [`formats::decode_any`] gives.
    Whole(FormatId, Envelope),
    /// Array items of the payload that no output within the limit can hold were skimmed.
    Skimmed(SkimmedEnvelope),
}

/// An envelope whose payload was read by [`skim`]: it can only be cut to its limit, never
/// written whole.
#[derive(Debug)]
pub struct SkimmedEnvelope {
    format: FormatId,
    env: Envelope,
    tails: Vec<Tail>,
    limit: usize,
}

/// Decodes `input` (as `from`, or the detected format) for outputs of at most `limit` bytes.
pub fn decode(
    input: &[u8],
    from: Option<FormatId>,
    options: &DecodeOptions,
    limit: usize,
) -> Result<Decoded> {
    let whole = || {
        let (format, env) = formats::decode_any(input, from, options)?;
        Ok(Decoded::Whole(format, env))
    };
    if input.starts_with(b"__ENVELOPE_V") {
        return whole();
    }
    let Some(doc) = skim::read(input, limit) else {
        return whole();
    };
    let format = match from {
        Some(f) => Ok(f),
        None => crate::detect::detect_value(&doc.value).map(|d| d.format),
    };
    if doc.tails.is_empty() {
        // Nothing skimmed: this is the parsed document.
        let format = format?;
        return Ok(Decoded::Whole(
            format,
            formats::decode_value(format, doc.value, options)?,
        ));
    }
    let Ok(format) = format else {
        return whole();
    };
    if !matches!(
        format,
        FormatId::Ctxo | FormatId::ProtocolV1 | FormatId::Operations | FormatId::ToolResultEnvelope
    ) {
        return whole();
    }
    let Ok(env) = formats::decode_value(format, doc.value, options) else {
        return whole();
    };
    let in_place = match &env.payload {
        Payload::Json(payload) => marks_in_place(payload, doc.tails.len()),
        _ => false,
    };
    if !in_place || env.layout.transport.is_some() {
        return whole();
    }
    Ok(Decoded::Skimmed(SkimmedEnvelope {
        format,
        env,
        tails: doc.tails,
        limit,
    }))
}

impl SkimmedEnvelope {
    /// The format the document was decoded from.
    pub fn format(&self) -> FormatId {
        self.format
    }

    /// [`fit`](super::fit) into the limit it was read for.
    pub fn fit(&self, format: FormatId, options: &EncodeOptions) -> Result<Fitted> {
        let payload = payload_value(&self.env.payload);
        let measured = Measured::skimmed(&payload, self.limit, &self.tails);
        // Every skimmed array is larger than the limit, so the payload is never written
        // whole: every output is a cut, and no cut that fits reaches a mark.
        assert!(measured.size() > self.limit);
        fit_measured(&self.env, &payload, &measured, format, self.limit, options)
    }

    /// The ctxo document with the compat truncation at `options.ctxo_limit` (ctxo's
    /// default when unset), or `None` when that needs skimmed items (the limit is not the
    /// one it was read for, or an array other than the one the truncation cuts was skimmed,
    /// or the payload is written whole): then decode the input whole.
    pub fn encode_ctxo(&self, options: &EncodeOptions) -> Result<Option<Encoded>> {
        let limit = options.ctxo_limit.unwrap_or(formats::ctxo::DEFAULT_LIMIT);
        if limit != self.limit {
            return Ok(None);
        }
        formats::encode_ctxo_skimmed(&self.env, options, &self.tails)
    }
}

/// Whether each of the `tails` marks is in `payload` exactly once, as the last item of an
/// array, and no mark is anywhere else.
fn marks_in_place(payload: &Value, tails: usize) -> bool {
    fn walk(value: &Value, seen: &mut [bool]) -> bool {
        match value {
            Value::Array(items) => {
                items
                    .iter()
                    .enumerate()
                    .all(|(i, item)| match item.as_str().and_then(mark_index) {
                        Some(k) if i + 1 == items.len() && k < seen.len() && !seen[k] => {
                            seen[k] = true;
                            true
                        }
                        Some(_) => false,
                        None => walk(item, seen),
                    })
            }
            Value::Object(map) => map.values().all(|v| walk(v, seen)),
            Value::String(s) => mark_index(s).is_none(),
            _ => true,
        }
    }
    let mut seen = vec![false; tails];
    walk(payload, &mut seen) && seen.iter().all(|&s| s)
}
