//! An MCP result whose payload is one long text block (a `git log`, a file), read with its
//! text as a prefix (`json::skim::read_for_cut`): what the text offload
//! ([`text_offload`](super::text_offload)) and the piecewise redaction
//! ([`text_redacted`](super::text_redacted)) start from, so that the text is never decoded
//! whole.

use super::offload::PREVIEW_LIMIT;
use crate::formats::{self, DecodeOptions, FormatId};
use crate::json::skim::{self, LongString};
use crate::model::{Envelope, Payload, Status};
use serde_json::Value;

/// Inputs from this size on are tried here (below, the whole path costs little).
const FROM: usize = 256 << 10;

/// The text is decoded and stored this many bytes of the input at a time.
pub(super) const PIECE: usize = 64 << 10;

/// The media type of a text payload in the store (what `offload::artifact_bytes` gives).
pub(super) const KIND: &str = "text/plain";

/// The envelope of `input` when it is an error of a format other than MCP's (and
/// tool-envelope-v1's, whose message is in base64 too) whose message is the document's one
/// long string, read with the message as a prefix (protocol-v1's `error.message`, ctxo's
/// `message`): no payload, no summary, no content blocks; and the message's place and
/// length. The format is the one `from` names, or the one detection finds in the document
/// read (which sees the message's start, as the whole read's detection would).
pub(super) fn error_message_result(
    input: &[u8],
    from: Option<FormatId>,
    decode: &DecodeOptions,
) -> Option<(Envelope, LongString)> {
    if input.len() < FROM {
        return None;
    }
    let mut doc = skim::read_for_cut(input, PREVIEW_LIMIT)?;
    let [long] = doc.strings.as_slice() else {
        return None;
    };
    let prefix = doc.value.pointer(&long.pointer)?.as_str()?.to_string();
    let format = match from {
        Some(format) => format,
        None => crate::detect::detect_value(&doc.value).ok()?.format,
    };
    if matches!(format, FormatId::Mcp | FormatId::ToolEnvelopeV1) {
        return None;
    }
    let long = doc.strings.pop()?;
    let env = formats::decode_value(format, doc.value, decode).ok()?;
    // The decoder took the message from the long string, as it is there.
    let error = env.status == Status::Error
        && matches!(env.payload, Payload::None)
        && env.presentation.is_none()
        && env.summary.is_none()
        && env.error.as_ref().is_some_and(|e| e.message == prefix);
    error.then_some((env, long))
}

/// The envelope of `input` when it is an MCP result of one long plain text block (its
/// payload holding the text's prefix), and that text's place and length.
pub(super) fn text_result(
    input: &[u8],
    from: Option<FormatId>,
    decode: &DecodeOptions,
) -> Option<(Envelope, LongString)> {
    let (env, long) = one_text_block(input, from, decode)?;
    let plain = matches!(env.payload, Payload::Text(_))
        && env.status == Status::Ok
        && env.presentation.is_none()
        && env.summary.is_none()
        && env.error.is_none();
    plain.then_some((env, long))
}

/// What `unwrap` writes of an MCP result of one long plain text block: the text as a JSON
/// string, which is the block's string literal in `input`, and whether that literal is
/// written as the JS writer writes it (else the caller rewrites it). `None`: unwrap it
/// whole (a short text, another shape, a result cut by us: its payload is what the marker
/// says was kept).
pub(crate) fn unwrapped_text<'a>(
    input: &'a [u8],
    from: Option<FormatId>,
    decode: &DecodeOptions,
) -> Option<(&'a [u8], bool)> {
    let (env, long) = text_result(input, from, decode)?;
    if crate::shape::kept::marker(&env).is_some() {
        return None;
    }
    let literal = &input[long.span.start.checked_sub(1)?..long.span.end + 1];
    let written = crate::json::canonical::is_written_as(literal, crate::json::Dialect::Js);
    Some((literal, written))
}

/// The envelope of `input` when it is an MCP error result of one long plain text block
/// (`isError: true`, and nothing else but `_meta`): no payload, its error's message holding
/// the text's prefix; and that text's place and length.
pub(super) fn error_text_result(
    input: &[u8],
    from: Option<FormatId>,
    decode: &DecodeOptions,
) -> Option<(Envelope, LongString)> {
    let (env, long) = one_text_block(input, from, decode)?;
    let error = env.status == Status::Error
        && matches!(env.payload, Payload::None)
        && env.presentation.is_none()
        && env.summary.is_none()
        && env.error.is_some();
    error.then_some((env, long))
}

/// The envelope of `input` when it is an MCP result of one long plain text block (and
/// nothing else but `_meta` and `isError`), read with the text as a prefix; and the text's
/// place and length.
fn one_text_block(
    input: &[u8],
    from: Option<FormatId>,
    decode: &DecodeOptions,
) -> Option<(Envelope, LongString)> {
    if input.len() < FROM || !names_mcp(input, from) {
        return None;
    }
    let mut doc = skim::read_for_cut(input, PREVIEW_LIMIT)?;
    let long = match doc.strings.as_slice() {
        [long] if long.pointer == "/content/0/text" => doc.strings.pop()?,
        _ => return None,
    };
    if from.is_none() {
        // Detection parses the last text block for a ctxo document: a text that may be
        // one must be read whole to tell.
        let text = doc.value.pointer(&long.pointer).and_then(Value::as_str);
        if text.is_none_or(|t| t.trim_start().starts_with('{')) {
            return None;
        }
        // The format the whole path would find (the text's start is in the prefix).
        let detected = crate::detect::detect_value(&doc.value).map(|d| d.format);
        if detected.ok() != Some(FormatId::Mcp) {
            return None;
        }
    }
    if !doc.tails.is_empty() || !is_one_text_block(&doc.value) {
        return None;
    }
    let env = formats::decode_value(FormatId::Mcp, doc.value, decode).ok()?;
    Some((env, long))
}

/// Whether the document is an MCP result: `from` says so, or the top of the document does.
pub(super) fn names_mcp(input: &[u8], from: Option<FormatId>) -> bool {
    names(input, from, FormatId::Mcp)
}

/// Whether the document is in `format`: `from` says so, or the top of the document does.
pub(super) fn names(input: &[u8], from: Option<FormatId>, format: FormatId) -> bool {
    if let Some(from) = from {
        return from == format;
    }
    let top = &input[..input.len().min(64 << 10)];
    crate::json::prefix::parse_prefix(top)
        .and_then(|doc| formats::identify(&doc).map(|(format, _)| format.id()))
        == Some(format)
}

/// `{"content":[{"type":"text","text":…}]}` and nothing else but `_meta` and `isError`:
/// the one shape whose payload (or error message) is the block's text as it is.
fn is_one_text_block(doc: &Value) -> bool {
    let Some(root) = doc.as_object() else {
        return false;
    };
    let others_plain = root.iter().all(|(key, value)| match key.as_str() {
        "content" | "_meta" => true,
        "isError" => value.is_boolean(),
        _ => false,
    });
    let block = root
        .get("content")
        .and_then(Value::as_array)
        .and_then(|blocks| match blocks.as_slice() {
            [only] => only.as_object(),
            _ => None,
        });
    others_plain
        && block.is_some_and(|block| {
            block.len() == 2
                && block.get("type") == Some(&Value::from("text"))
                && block.get("text").is_some_and(Value::is_string)
        })
}

/// A text the skimmed read checked did not decode (it cannot happen): stored nothing.
pub(super) fn undecodable() -> crate::error::SinkError {
    crate::error::SinkError::new("text", "the text checked valid did not decode")
}
