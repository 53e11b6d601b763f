//! Redaction of a payload that is one root member of the document: a JSON payload
//! (protocol-v1 and operations `data`, tool-result-envelope's payload key, an MCP result's
//! `structuredContent` with its text mirror) in one pass over the member's text
//! ([`redact_json_text`]): the document is never built, nor the payload. What the pass
//! writes (the masked payload's compact JS text, or nothing when there is nothing to mask)
//! goes to the store ([`offload`]) or is read for the limit ([`for_limit`]).
//!
//! The document is read as the pass-through offload reads it
//! ([`read_member`](super::passthrough::read_member)): the envelope around the payload is
//! whole (an MCP result's mirror compared on the input's text), the payload skimmed. The
//! whole path decodes the document, redacts the envelope (the payload first, at `payload`,
//! as `redact_json_text` reports it), then offloads or cuts it: here the payload is
//! redacted from its text, the rest of the envelope as the pipeline redacts it, and the
//! masked text takes the payload's place. An MCP result's blocks, whose texts may be long,
//! are masked a piece at a time instead ([`blocks_redacted`](super::blocks_redacted)). The
//! result is the whole path's
//! (`tests/payload_redacted.rs` compares them); anything this module is not sure of goes to
//! the whole path (`None`, nothing stored): a payload whose text the pass cannot redact
//! alone (a key holding a secret, duplicate keys), an output dialect the masked text is not
//! written in.

use std::borrow::Cow;

use serde_json::{Value, json};

use super::bounded::{self, Decoded};
use super::offload::{ArtifactSink, OffloadOptions, PREVIEW_LIMIT};
use super::passthrough::{
    Passed, Read, Scratch, block_index, is_plain_text_block, offload_bytes, read_member,
    splice_payload,
};
use super::redact::pieces::Pieces;
use super::redact::{
    Apart, Redaction, redact_envelope_apart, redact_json_text, redact_json_text_in,
};
use super::spliced::{Bytes, Spliced};
use super::text_redacted::redact_raw_with;
use crate::error::Result;
use crate::formats::{self, DecodeOptions, EncodeOptions, FormatId};
use crate::json::Dialect;
use crate::json::canonical::is_written_as;
use crate::json::minified::decodes_to_minified;
use crate::json::skim;
use crate::model::Payload;

/// Inputs from this size on are tried here (below, the whole path costs little).
const FROM: usize = 256 << 10;

/// A document whose payload member was redacted from its text: the envelope around it
/// redacted too (its payload left out), the masked payload's compact JS text, and what was
/// masked, in the whole path's order.
struct Masked<'a> {
    read: Read<'a>,
    text: std::borrow::Cow<'a, [u8]>,
    redactions: Vec<Redaction>,
}

/// Reads `input` for its payload member (see the module's documentation); `None` when it
/// has none, or is too small to be worth it.
fn read<'a>(
    input: &'a [u8],
    scratch: &'a Scratch,
    from: Option<FormatId>,
    decode: &DecodeOptions,
    output_format: Option<FormatId>,
) -> Option<Read<'a>> {
    if input.len() < FROM {
        return None;
    }
    read_member(input, scratch, from, decode, output_format, None, None)
}

/// Redacts the JSON payload of `read` (read from `input`) from its text (see the module's
/// documentation); `None` when this cannot be done the whole path's way.
fn masked<'a>(input: &[u8], mut read: Read<'a>) -> Option<Masked<'a>> {
    if !matches!(read.env.payload, Payload::Json(_)) {
        return None;
    }
    // The blocks kept beside the payload are redacted too, their long texts apart.
    let apart = Apart {
        presentation_texts: presentation_texts(input, &read)?,
        ..Apart::default()
    };
    // What the read built of the payload (a long string's whole text, decoded) is not
    // needed: the payload is redacted from its text, and read again from the masked text.
    read.env.payload = Payload::None;
    let payload = redact_json_text(read.bytes, "payload")?;
    let text = payload
        .bytes
        .map_or(std::borrow::Cow::Borrowed(read.bytes), Into::into);
    // The payload is the first field redaction reports; the rest of the envelope is
    // redacted as the pipeline redacts it.
    let mut redactions = payload.report;
    redactions.extend(redact_envelope_apart(&mut read.env, apart));
    Some(Masked {
        read,
        text,
        redactions,
    })
}

/// What the whole path's redaction reports for each long text of the blocks `read` keeps
/// beside its payload (an indented mirror: the payload's text but for white space), by
/// block index; `None` when that is not known without decoding such a text whole.
///
/// The whole path redacts such a text as a string holding a JSON document (reported at
/// `presentation/<i>/text#…`, one document deep): it reads to the payload's value (the
/// same text but for white space, proven on the input's text), so the one-pass redaction
/// of the payload's text one document deep reports what that finds. When it finds nothing,
/// the whole path runs the free-text rules over the text as it is, which is done here a
/// piece at a time. (What the text becomes is not needed: an output made from this read
/// leaves the blocks out.)
fn presentation_texts(input: &[u8], read: &Read<'_>) -> Option<Vec<(usize, Vec<Redaction>)>> {
    let blocks = read.env.presentation.as_deref().unwrap_or_default();
    let mut reports = Vec::new();
    for long in &read.presentation_texts {
        let i = block_index(&long.pointer)?;
        if !is_plain_text_block(blocks.get(i)?) {
            return None;
        }
        let raw = &input[long.span.clone()];
        if !decodes_to_minified(raw, read.bytes) {
            return None;
        }
        let at = format!("presentation/{i}/text");
        let nested = redact_json_text_in(read.bytes, &format!("{at}#"), 1)?.report;
        let report = match nested.is_empty() {
            false => nested,
            true => {
                let rules = redact_raw_with(raw, Pieces::plain(), |_| Ok(())).ok()??;
                rules
                    .into_iter()
                    .map(|rule| Redaction {
                        rule: rule.to_string(),
                        at: at.clone(),
                    })
                    .collect()
            }
        };
        reports.push((i, report));
    }
    Some(reports)
}

/// The masked payload text `text` (the input's own bytes when nothing was masked;
/// `written`: they are written as the output's writer writes them) as `dialect`'s writer
/// writes the payload, rewritten where it is not ([`json::rewrite`](crate::json::rewrite));
/// `None`: take the whole path. Borrowed: the input's bytes as they are.
///
/// A masked text is written by the JS writer, which spells a double as the shortest text
/// that reads back to it (`1.0` as `1`) and an integer with all its digits: Go's writer
/// writes numbers from the same values, so the rewrite gives its bytes; Newtonsoft's
/// writes an integral double as `1.0`, which the masked text no longer tells from `1`.
fn in_dialect(text: Cow<'_, [u8]>, written: bool, dialect: Dialect) -> Option<Cow<'_, [u8]>> {
    match &text {
        Cow::Borrowed(input) if written || is_written_as(input, dialect) => return Some(text),
        Cow::Owned(_) if dialect == Dialect::Js => return Some(text),
        Cow::Owned(_) if dialect != Dialect::Go => return None,
        // Most often Go's already (its keys were in Go's order): no second copy.
        Cow::Owned(masked) if is_written_as(masked, dialect) => return Some(text),
        _ => {}
    }
    let mut rewritten = Vec::with_capacity(text.len());
    crate::json::rewrite::rewrite(&text, dialect, &mut rewritten).ok()?;
    Some(Cow::Owned(rewritten))
}

/// The payload stage of the offload, redacting: the masked payload goes to the store (or
/// stays inline, or is refused by the capture limit) as the whole path's would; an MCP
/// result's blocks are masked a piece at a time on their way there
/// ([`blocks_redacted`](super::blocks_redacted)). `Ok(None)`: take the whole path
/// (nothing stored).
pub(super) fn offload(
    input: &[u8],
    from: Option<FormatId>,
    decode: &DecodeOptions,
    output_format: Option<FormatId>,
    options: &OffloadOptions,
    sink: &mut dyn ArtifactSink,
) -> Result<Option<Passed>> {
    let scratch = Scratch::default();
    let Some(read) = read(input, &scratch, from, decode, output_format) else {
        return Ok(None);
    };
    if matches!(read.env.payload, Payload::Blocks(_)) {
        return super::blocks_redacted::offload(input, read, output_format, options, sink);
    }
    let Some(Masked {
        mut read,
        text,
        redactions,
    }) = masked(input, read)
    else {
        return Ok(None);
    };
    // The store holds the payload written in the output's dialect: the masked text
    // rewritten so where it is not (Go's key order, its escapes).
    let dialect = formats::get(output_format.unwrap_or(read.format)).dialect();
    let Some(text) = in_dialect(text, read.written, dialect) else {
        return Ok(None);
    };
    // A payload that is one long string is read as its prefix too: stored, its summary's
    // preview reads fewer bytes of it than the prefix holds (`offload::json_start`); kept
    // inline, the read goes whole (`offload_bytes`).
    let Some(payload) = skim::read_for_cut(&text, PREVIEW_LIMIT) else {
        return Ok(None);
    };
    read.env.payload = Payload::Json(payload.value);
    let masked = Read {
        format: read.format,
        env: read.env,
        tails: payload.tails,
        strings: payload.strings,
        bytes: &text,
        written: true,
        // Blocks held as prefixes make an inline payload go whole.
        presentation_texts: read.presentation_texts,
    };
    let passed = offload_bytes(masked, None, options, sink)?;
    Ok(passed.map(|passed| Passed {
        redactions: Some(redactions),
        ..passed
    }))
}

/// With redaction and a limit, no store: the document read for the limit with its payload
/// redacted from its text (an MCP result's blocks a piece at a time), and what was masked;
/// `Ok(None)`: take the whole path.
pub(super) fn for_limit(
    input: &[u8],
    from: Option<FormatId>,
    decode: &DecodeOptions,
    output_format: Option<FormatId>,
    limit: usize,
) -> Result<Option<(Decoded, Vec<Redaction>)>> {
    let scratch = Scratch::default();
    let Some(read) = read(input, &scratch, from, decode, None) else {
        return Ok(None);
    };
    if matches!(read.env.payload, Payload::Blocks(_)) {
        return super::blocks_redacted::for_limit(input, read, limit);
    }
    let Some(Masked {
        read,
        text,
        redactions,
    }) = masked(input, read)
    else {
        return Ok(None);
    };
    // The cut writes the values read from the masked text: the JS writer's, in which
    // Newtonsoft's integral doubles (`2.0`) are integers (see `in_dialect`).
    let dialect = formats::get(output_format.unwrap_or(read.format)).dialect();
    if matches!(text, Cow::Owned(_)) && dialect == Dialect::Newtonsoft {
        return Ok(None);
    }
    let held = !read.presentation_texts.is_empty();
    let decoded = bounded::with_payload_text(read.format, read.env, &text, limit);
    // Blocks kept beside the payload are written unless the payload is cut.
    if held && !matches!(decoded, Some(Decoded::Skimmed(_))) {
        return Ok(None);
    }
    Ok(decoded.map(|decoded| (decoded, redactions)))
}

/// With redaction only (no limit, store or capture limit): the document written as
/// `output_format` (or its own format) with its payload redacted from its text and
/// spliced into the output ([`splice_payload`](super::passthrough::splice_payload)),
/// never built; the format written and what was masked. What the read decodes or copies
/// (a tool-envelope-v1 result's inner document, a payload spread over the root) is kept
/// in a scratch the output then holds; a payload of blocks has each long text masked as
/// it is written ([`blocks_redacted::spliced`](super::blocks_redacted::spliced)).
/// `Ok(None)`: take the whole path (a long text of the blocks kept beside the payload that
/// redaction masks, among others).
pub(super) fn spliced<'a>(
    input: &'a [u8],
    from: Option<FormatId>,
    decode: &DecodeOptions,
    output_format: Option<FormatId>,
    options: &EncodeOptions,
) -> Result<Option<(FormatId, Spliced<'a>, Vec<Redaction>)>> {
    let scratch = Scratch::default();
    let Some(read) = read(input, &scratch, from, decode, output_format) else {
        return Ok(None);
    };
    let to = output_format.unwrap_or(read.format);
    if matches!(read.env.payload, Payload::Blocks(_)) {
        let spliced = super::blocks_redacted::spliced(input, read, to, options)?;
        return Ok(spliced.map(|(spliced, redactions)| (to, spliced, redactions)));
    }
    // The payload's kind, for the stand-in (the skimmed payload itself is not redacted:
    // it must not reach the output). ctxo writes an object payload's members as its own,
    // and tells by their keys whether it may cut one: it is given the skimmed payload,
    // whose keys redaction keeps (a key it would mask makes `masked` decline), to check
    // the output with; the output holds the stand-in's masked text.
    let kind = match &read.env.payload {
        Payload::Json(payload @ Value::Object(_)) if to == FormatId::Ctxo => payload.clone(),
        Payload::Json(Value::Object(_)) => json!({}),
        Payload::Json(Value::Array(_)) => json!([]),
        Payload::Json(Value::String(_)) => json!(""),
        _ => return Ok(None),
    };
    let written = read.written;
    let Some(Masked {
        read,
        text,
        redactions,
    }) = masked(input, read)
    else {
        return Ok(None);
    };
    let Read {
        mut env,
        presentation_texts,
        ..
    } = read;
    // Long texts of the blocks kept beside the payload (a mirror the decoder did not take
    // for one) are written from the input when redaction left them as they are; one it
    // masked is written whole.
    let masked_text = |long: &skim::LongString| {
        let at = block_index(&long.pointer).map(|i| format!("presentation/{i}/text"));
        at.is_none_or(|at| redactions.iter().any(|r| r.at.starts_with(&at)))
    };
    if presentation_texts.iter().any(masked_text) {
        return Ok(None);
    }
    // Where the masked text is: made by the redaction or the rewrite, in the input, or
    // in the scratch (a text redaction left as it is).
    let bytes = match in_dialect(text, written, formats::get(to).dialect()) {
        Some(Cow::Owned(text)) => Bytes::made(text),
        Some(Cow::Borrowed(text)) => {
            let at = (text.as_ptr() as usize, text.len());
            match super::envelope_block::bytes_at(input, at, None, scratch) {
                Some(bytes) => bytes,
                None => return Ok(None),
            }
        }
        None => return Ok(None),
    };
    env.payload = Payload::Json(kind);
    let spliced = splice_payload(input, env, bytes, &presentation_texts, to, options)?;
    Ok(spliced.map(|spliced| (to, spliced, redactions)))
}
