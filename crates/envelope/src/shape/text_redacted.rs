//! Redaction of an MCP result whose payload is one long text block, a piece at a time
//! ([`redact::pieces`](super::redact::pieces)), the text never held whole both decoded and
//! masked: on its way to the store ([`offload`]), into one string when the text is needed
//! whole ([`redacted`]), or kept as its first bytes, length and size when a limit keeps no
//! more of it ([`for_limit`]).
//!
//! What each gives is what the whole path gives (decode the document, redact the envelope,
//! then offload or cut it): the same output, stored text, summary and redaction report
//! (`tests/text_offload.rs` compares them). Whatever cannot be done the same way goes to the
//! whole path (`None`, nothing stored): a text that may be a document (JSON, base64), a sink
//! that takes whole artifacts only, a masked text that turns out small enough to stay
//! inline.

use super::bounded::{self, MaskedText, SkimmedEnvelope};
use super::offload::{ArtifactSink, OffloadOptions, PREVIEW_LIMIT, finish_begun, summary};
use super::passthrough::Passed;
use super::redact::pieces::{Pieces, mask_literal_with};
use super::redact::{Redaction, redact_envelope};
use super::text_result::{KIND, PIECE, text_result, undecodable};
use crate::error::{Error, Result, SinkError};
use crate::formats::{DecodeOptions, FormatId};
use crate::json::size::escaped_len;
use crate::json::skim::{self, LongString};
use crate::model::{Envelope, Payload};

/// The payload stage of the offload, redacting: `env` is the result read with its long text
/// (`long`, in `input`) as a prefix.
pub(super) fn offload(
    input: &[u8],
    mut env: Envelope,
    long: LongString,
    options: &OffloadOptions,
    sink: &mut dyn ArtifactSink,
) -> Result<Option<Passed>> {
    if long.len <= options.inline_threshold {
        // Inline: the text is needed whole.
        return Ok(None);
    }
    let Some(mut writer) = sink.begin() else {
        return Ok(None);
    };
    let raw = &input[long.span];
    // The first bytes of the masked text (the summary's preview), and its length.
    let mut head = Head::new(PREVIEW_LIMIT);
    let mut size = 0;
    let rules = redact_raw(raw, |masked| {
        head.push(masked);
        size += masked.len();
        writer.write(masked.as_bytes())
    })
    .map_err(Error::Store)?;
    let Some(rules) = rules else {
        return Ok(None);
    };
    // The payload is the first field redaction reports (at `payload`); the rest of the
    // envelope is redacted as the pipeline redacts it.
    let redactions = redact_around_text(&mut env, rules);
    // The preview needs the masked text's first bytes only.
    let preview = Payload::Text(head.text);
    let summary = |env: &Envelope| summary(env, KIND, size);
    let offloaded = finish_begun(&mut env, writer, KIND, size, options, preview, summary)?;
    let Some(offloaded) = offloaded else {
        return Ok(None);
    };
    Ok(Some(Passed {
        format: FormatId::Mcp,
        env,
        offloaded,
        redactions: Some(redactions),
        // A result of text blocks has no presentation.
        had_presentation: false,
    }))
}

/// With redaction and no store to take the text (or a text to keep inline): the result of
/// one long text block, its text redacted a piece at a time into one string (never decoded
/// whole beside its masked copy), and what was masked; `None` when the result is not one,
/// or its text must be redacted whole.
pub(super) fn redacted(
    input: &[u8],
    from: Option<FormatId>,
    decode: &DecodeOptions,
) -> Result<Option<(Envelope, Vec<Redaction>)>> {
    let Some((mut env, long)) = text_result(input, from, decode) else {
        return Ok(None);
    };
    // The decoded length, and a little room for masks longer than what they replace.
    let mut text = String::with_capacity(long.len + long.len / 64 + 64);
    let rules = redact_raw(&input[long.span], |masked| {
        text.push_str(masked);
        Ok(())
    })
    .map_err(Error::Store)?;
    let Some(rules) = rules else {
        return Ok(None);
    };
    let redactions = redact_around_text(&mut env, rules);
    env.payload = Payload::Text(text);
    Ok(Some((env, redactions)))
}

/// Decodes the string text `raw` (between its quotes, valid) a piece at a time, redacts it
/// ([`Pieces`]) and hands the masked text to `out`: the rules that fired, or `None` when
/// the text must be redacted whole (it may be a document).
pub(super) fn redact_raw(
    raw: &[u8],
    out: impl FnMut(&str) -> std::result::Result<(), SinkError>,
) -> std::result::Result<Option<Vec<&'static str>>, SinkError> {
    redact_raw_with(raw, Pieces::new(), out)
}

/// [`redact_raw`] with `pieces` (one that takes the text for plain text whatever it starts
/// with, [`Pieces::plain`], never says it must be redacted whole).
pub(super) fn redact_raw_with(
    raw: &[u8],
    pieces: Pieces,
    mut out: impl FnMut(&str) -> std::result::Result<(), SinkError>,
) -> std::result::Result<Option<Vec<&'static str>>, SinkError> {
    mask_literal_with(raw, pieces, PIECE, &mut out, undecodable)
}

/// Redacts the envelope around its text (`env`'s payload is left empty) as the pipeline
/// redacts an envelope: the report starts with the text's rules (the payload is the first
/// field it redacts, at `payload`).
fn redact_around_text(env: &mut Envelope, rules: Vec<&'static str>) -> Vec<Redaction> {
    env.payload = Payload::Text(String::new());
    let mut redactions: Vec<Redaction> = rules
        .into_iter()
        .map(|rule| Redaction {
            rule: rule.to_string(),
            at: "payload".to_string(),
        })
        .collect();
    redactions.extend(redact_envelope(env));
    redactions
}

/// With redaction and a limit, no store: the result of one long text block read for the
/// limit ([`bounded::decode_masked_text`]), its text redacted a piece at a time and kept as
/// its first bytes, length and size only (never whole), and what was masked.
pub(super) fn for_limit(
    input: &[u8],
    from: Option<FormatId>,
    decode: &DecodeOptions,
    limit: usize,
) -> Result<Option<(SkimmedEnvelope, Vec<Redaction>)>> {
    let Some((_, long)) = text_result(input, from, decode) else {
        return Ok(None);
    };
    // A few bytes more than read: the prefix is cut at a character boundary.
    let Some((rules, masked)) = masked_text(&input[long.span], skim::kept_bytes(limit) + 4)? else {
        return Ok(None);
    };
    let mut redactions = Vec::new();
    let skimmed = bounded::decode_masked_text(input, from, decode, limit, masked, |env| {
        redactions = redact_around_text(env, rules);
    });
    Ok(skimmed.map(|skimmed| (skimmed, redactions)))
}

/// The string whose literal's text is `raw` (valid), redacted a piece at a time and kept as
/// its first `keep` bytes (at a character boundary), its length and its compact JS size
/// (quotes included); and the rules that fired. `Ok(None)`: the text must be redacted whole
/// (it may be a document).
pub(super) fn masked_text(
    raw: &[u8],
    keep: usize,
) -> Result<Option<(Vec<&'static str>, MaskedText)>> {
    let mut head = Head::new(keep);
    let (mut len, mut size) = (0, 2);
    let rules = redact_raw(raw, |masked| {
        head.push(masked);
        len += masked.len();
        // Each piece's literal without its quotes: escapes are per character.
        size += escaped_len(masked) - 2;
        Ok(())
    })
    .map_err(Error::Store)?;
    Ok(rules.map(|rules| {
        let masked = MaskedText {
            prefix: head.text,
            len,
            size,
        };
        (rules, masked)
    }))
}

/// The first bytes of a text handed out a piece at a time, up to a length (at a character
/// boundary).
pub(super) struct Head {
    /// The first bytes.
    pub(super) text: String,
    max: usize,
    /// Whether the text is complete (a character did not fit: nothing after it may join).
    full: bool,
}

impl Head {
    pub(super) fn new(max: usize) -> Self {
        Head {
            text: String::new(),
            max,
            full: false,
        }
    }

    pub(super) fn push(&mut self, piece: &str) {
        if self.full {
            return;
        }
        let mut end = (self.max - self.text.len()).min(piece.len());
        while !piece.is_char_boundary(end) {
            end -= 1;
        }
        self.text.push_str(&piece[..end]);
        self.full = end < piece.len();
    }
}
