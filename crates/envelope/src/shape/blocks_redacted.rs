//! Redaction of an MCP result whose payload is its content blocks (a summary and a long
//! log, several pages of text), read as the pass-through reads it (long texts as prefixes):
//! each long text is decoded and redacted a piece at a time
//! ([`redact_raw`](super::text_redacted::redact_raw)), the other blocks whole, and the
//! masked blocks go to the store a piece at a time ([`offload`]) or are kept as their first
//! bytes, lengths and sizes for a limit ([`for_limit`]).
//!
//! What each gives is the whole path's (decode the document, redact the envelope: the
//! blocks first, each at `payload/<i>`; then offload or cut): the same output, stored
//! blocks, summary and report (`tests/payload_redacted.rs` compares them). Whatever cannot
//! be done so goes to the whole path (`None`, nothing stored): a long text that may be a
//! document (JSON, base64), a long text in a block with more than a type and a text, a sink
//! that takes whole artifacts only, an output dialect other than JS, masked blocks small
//! enough to stay inline.

use serde_json::Value;

use super::bounded::{self, Decoded};
use super::offload::{ArtifactSink, OffloadOptions, PREVIEW_LIMIT, finish_begun, summary_skimmed};
use super::passthrough::{Passed, Read, checked_splice, texts_as_pieces};
use super::redact::{KeysAcross, Redaction, redact_envelope, redact_value};
use super::spliced::{Piece, Spliced};
use super::text_redacted::{Head, redact_raw};
use crate::error::{Error, Result, SinkError};
use crate::formats::{self, EncodeOptions, FormatId};
use crate::json::Dialect;
use crate::json::skim::{LongString, kept_bytes};
use crate::json::writer::write_escaped;
use crate::model::{Envelope, Payload};

/// The media type of stored blocks (what `offload::artifact_bytes` gives).
const KIND: &str = "application/json";

/// The blocks once masked: each long text kept as its first bytes (`strings` says what the
/// whole masked text is), the others whole; the size of their compact JS text; what was
/// masked in them, in the whole path's order.
struct Masked {
    blocks: Vec<Value>,
    strings: Vec<LongString>,
    size: usize,
    report: Vec<Redaction>,
}

/// Masks `blocks` (the payload of `input`'s envelope, its long texts `strings` read as
/// prefixes), handing the masked blocks' compact JS text to `out` a piece at a time, and
/// keeping at least `keep` bytes of each long text. `Ok(None)`: take the whole path.
fn mask(
    input: &[u8],
    blocks: &[Value],
    strings: &[LongString],
    keep: usize,
    mut out: impl FnMut(&[u8]) -> std::result::Result<(), SinkError>,
) -> std::result::Result<Option<Masked>, SinkError> {
    // Long texts of plain text blocks only: anything else read as a prefix cannot be
    // written whole.
    let at_text = |s: &LongString| {
        s.pointer
            .strip_prefix('/')
            .and_then(|rest| rest.strip_suffix("/text"))
            .is_some_and(|i| i.parse::<usize>().is_ok())
    };
    if !strings.iter().all(at_text) {
        return Ok(None);
    }
    let mut masked = Masked {
        blocks: Vec::with_capacity(blocks.len()),
        strings: Vec::new(),
        size: 0,
        report: Vec::new(),
    };
    let mut write = |bytes: &[u8], size: &mut usize| {
        *size += bytes.len();
        out(bytes)
    };
    write(b"[", &mut masked.size)?;
    let mut keys = KeysAcross::default();
    for (i, block) in blocks.iter().enumerate() {
        if i > 0 {
            write(b",", &mut masked.size)?;
        }
        let at = format!("payload/{i}");
        let text_at = format!("/{i}/text");
        let Some(long) = strings.iter().find(|s| s.pointer == text_at) else {
            let mut block = block.clone();
            // The rest of a key a text block before left open, masked as the whole path
            // masks it; not known after a long text: the whole path tells.
            if keys.block(&mut block, &at, &mut masked.report).is_err() {
                return Ok(None);
            }
            redact_value(&mut block, &at, &mut masked.report);
            write(&crate::json::to_vec(&block, Dialect::Js), &mut masked.size)?;
            masked.blocks.push(block);
            continue;
        };
        // A long text after a text block that ended inside a key block (or maybe did): the
        // whole path masks the rest of the key at its start.
        if keys != KeysAcross::Closed {
            return Ok(None);
        }
        // Whether the text ends inside a private key block is not known without reading its
        // end as the whole path does, unless it holds no key header at all: a header's five
        // dashes are in the literal's text as they are or as `\u002d` escapes.
        let raw = &input[long.span.clone()];
        let may_hold_header = |raw: &[u8]| {
            [&b"-----"[..], b"\\u002d", b"\\u002D"]
                .iter()
                .any(|needle| memchr::memmem::find(raw, needle).is_some())
        };
        keys = match may_hold_header(raw) {
            false => KeysAcross::Closed,
            true => KeysAcross::Unknown,
        };
        let Some(members) = plain_text_keys(block) else {
            return Ok(None);
        };
        let mut head = Head::new(keep + 4);
        let (mut len, mut text_size) = (0, 2);
        let mut escaped = Vec::new();
        let mut size = masked.size;
        write(b"{", &mut size)?;
        for (k, key) in members.iter().enumerate() {
            if k > 0 {
                write(b",", &mut size)?;
            }
            match *key {
                "type" => write(br#""type":"text""#, &mut size)?,
                _ => {
                    write(br#""text":""#, &mut size)?;
                    let rules = redact_raw(raw, |piece| {
                        head.push(piece);
                        len += piece.len();
                        escaped.clear();
                        write_escaped(&mut escaped, piece, Dialect::Js);
                        // Escapes are per character: each piece's literal without quotes.
                        text_size += escaped.len() - 2;
                        write(&escaped[1..escaped.len() - 1], &mut size)
                    })?;
                    let Some(rules) = rules else {
                        return Ok(None);
                    };
                    masked
                        .report
                        .extend(rules.into_iter().map(|rule| Redaction {
                            rule: rule.to_string(),
                            at: format!("{at}/text"),
                        }));
                    write(b"\"", &mut size)?;
                }
            }
        }
        write(b"}", &mut size)?;
        masked.size = size;
        let mut end = keep.min(head.text.len());
        while !head.text.is_char_boundary(end) {
            end -= 1;
        }
        let whole = len <= keep;
        let text = match whole {
            true => head.text,
            false => head.text[..end].to_string(),
        };
        if !whole {
            masked.strings.push(LongString {
                pointer: text_at,
                len,
                size: text_size,
                span: long.span.clone(),
            });
        }
        let mut block = block.clone();
        block["text"] = Value::String(text);
        masked.blocks.push(block);
    }
    write(b"]", &mut masked.size)?;
    Ok(Some(masked))
}

/// The keys of `{"type":"text","text":…}` in their order, when the block is that and
/// nothing else.
fn plain_text_keys(block: &Value) -> Option<Vec<&'static str>> {
    let block = block.as_object()?;
    let plain = block.len() == 2
        && block.get("type").and_then(Value::as_str) == Some("text")
        && block.get("text").is_some_and(Value::is_string);
    plain.then(|| {
        block
            .keys()
            .map(|k| match k.as_str() {
                "type" => "type",
                _ => "text",
            })
            .collect()
    })
}

/// The blocks of `read` (an MCP result's), and the rest of its envelope redacted as the
/// pipeline redacts it, its payload left out: the report of the rest.
fn blocks_and_rest(read: &mut Read<'_>) -> Option<(Vec<Value>, Vec<Redaction>)> {
    if read.format != FormatId::Mcp || !read.tails.is_empty() {
        return None;
    }
    let Payload::Blocks(blocks) = std::mem::take(&mut read.env.payload) else {
        return None;
    };
    Some((blocks, redact_envelope(&mut read.env)))
}

/// The payload stage of the offload, redacting the blocks of `read` (read from `input`) on
/// their way to the store. `Ok(None)`: take the whole path (nothing stored).
pub(super) fn offload(
    input: &[u8],
    mut read: Read<'_>,
    output_format: Option<FormatId>,
    options: &OffloadOptions,
    sink: &mut dyn ArtifactSink,
) -> Result<Option<Passed>> {
    let dialect = formats::get(output_format.unwrap_or(read.format)).dialect();
    if dialect != Dialect::Js {
        return Ok(None);
    }
    let Some((blocks, rest)) = blocks_and_rest(&mut read) else {
        return Ok(None);
    };
    let Some(mut writer) = sink.begin() else {
        return Ok(None);
    };
    let masked = mask(
        input,
        &blocks,
        &read.strings,
        kept_bytes(PREVIEW_LIMIT),
        |bytes| writer.write(bytes),
    )
    .map_err(Error::Store)?;
    let Some(masked) = masked else {
        return Ok(None);
    };
    let mut env = read.env;
    let size = masked.size;
    let strings = masked.strings;
    let preview = Payload::Blocks(masked.blocks);
    let summary = |env: &Envelope| summary_skimmed(env, KIND, size, &[], &strings);
    let offloaded = finish_begun(&mut env, writer, KIND, size, options, preview, summary)?;
    let Some(offloaded) = offloaded else {
        return Ok(None);
    };
    let mut redactions = masked.report;
    redactions.extend(rest);
    Ok(Some(Passed {
        format: FormatId::Mcp,
        env,
        offloaded,
        redactions: Some(redactions),
        // A result of text blocks has no presentation.
        had_presentation: false,
    }))
}

/// With redaction only (no limit, store or capture limit): the result written as `to`,
/// each long text of its blocks masked a piece at a time as it is written
/// ([`Piece::MaskedText`]); the report is the one [`mask`] finds (the texts read once more
/// for it, nothing kept). `Ok(None)`: take the whole path; a target that writes the
/// payload as one piece (ctxo, tool-envelope-v1) among the cases.
pub(super) fn spliced<'a>(
    input: &'a [u8],
    mut read: Read<'_>,
    to: FormatId,
    options: &EncodeOptions,
) -> Result<Option<(Spliced<'a>, Vec<Redaction>)>> {
    if matches!(to, FormatId::Ctxo | FormatId::ToolEnvelopeV1) || read.strings.is_empty() {
        return Ok(None);
    }
    let Some((blocks, rest)) = blocks_and_rest(&mut read) else {
        return Ok(None);
    };
    let masked = mask(input, &blocks, &read.strings, 0, |_| Ok(())).map_err(Error::Store)?;
    let Some(masked) = masked else {
        return Ok(None);
    };
    let mut blocks = masked.blocks;
    let mut stand_ins = Vec::new();
    let base = "/content";
    if texts_as_pieces(
        &mut blocks,
        &read.strings,
        base,
        input,
        Piece::MaskedText,
        &mut stand_ins,
    )
    .is_none()
    {
        return Ok(None);
    }
    let mut env = read.env;
    env.payload = Payload::Blocks(blocks);
    let encoded = formats::encode(to, &env, options)?;
    let Some(spliced) = checked_splice(encoded, &stand_ins, to, input) else {
        return Ok(None);
    };
    let mut redactions = masked.report;
    redactions.extend(rest);
    Ok(Some((spliced, redactions)))
}

/// With redaction and a limit, no store: the blocks of `read` (read from `input`) masked
/// and read for the limit (each long text as its first bytes, length and size), and what
/// was masked. `Ok(None)`: take the whole path.
pub(super) fn for_limit(
    input: &[u8],
    mut read: Read<'_>,
    limit: usize,
) -> Result<Option<(Decoded, Vec<Redaction>)>> {
    let Some((blocks, rest)) = blocks_and_rest(&mut read) else {
        return Ok(None);
    };
    let masked =
        mask(input, &blocks, &read.strings, kept_bytes(limit), |_| Ok(())).map_err(Error::Store)?;
    let Some(masked) = masked else {
        return Ok(None);
    };
    let mut env = read.env;
    env.payload = Payload::Blocks(masked.blocks);
    let decoded = bounded::skimmed_or_whole(FormatId::Mcp, env, Vec::new(), masked.strings, limit);
    let mut redactions = masked.report;
    redactions.extend(rest);
    Ok(Some((decoded, redactions)))
}
