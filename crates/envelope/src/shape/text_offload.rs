//! The offload of an MCP result whose payload is one long text block (a `git log`, a file),
//! streamed to the store from the input's bytes: the text is decoded a piece at a time into
//! the store, never whole.
//!
//! The whole path decodes the document (the text whole, in serde_json's buffer that grows
//! by doubling), then stores the text: about three times the input at once. Here the
//! document is read with the long text as a prefix (`json::skim::read_for_cut`: enough for
//! the summary's preview), the envelope is decoded from that, and the text goes to the sink
//! from its place in the input. The result is the whole path's (`tests/text_offload.rs`
//! compares both); anything this path is not sure of is left to the whole path (`None`).
//!
//! With redaction, when the document holds nothing to redact (the same pass that redacts
//! JSON text tells, without writing), redacting the envelope changes nothing either, since
//! every string of this envelope is a string of the document, read the same way; when it
//! does, the text is redacted a piece at a time on its way to the store
//! ([`text_redacted`](super::text_redacted)).

use super::offload::{ArtifactSink, OffloadOptions, stored, summary, too_large};
use super::passthrough::Passed;
use super::text_result::{KIND, PIECE, text_result, undecodable};
use crate::error::{Error, Result};
use crate::formats::{DecodeOptions, FormatId};
use crate::json::skim::decode_in_pieces;
use crate::json::unescape::unescape;

/// The payload stage of the offload on `input`, when it is an MCP result whose payload is
/// one long text block over the inline threshold; `Ok(None)` otherwise (nothing stored).
pub(super) fn offload(
    input: &[u8],
    from: Option<FormatId>,
    decode: &DecodeOptions,
    redact: bool,
    options: &OffloadOptions,
    sink: &mut dyn ArtifactSink,
) -> Result<Option<Passed>> {
    let Some((mut env, long)) = text_result(input, from, decode) else {
        return Ok(None);
    };
    if redact {
        // Redacted on the way (clean or not: telling which costs as much); a text that
        // may be a document is stored as it is when there is nothing to redact.
        let redacted =
            super::text_redacted::offload(input, env.clone(), long.clone(), options, sink)?;
        if redacted.is_some() || !nothing_to_redact(input) {
            return Ok(redacted);
        }
    }
    let size = long.len;
    if let Some(max) = options.max_capture.filter(|&max| size > max) {
        let offloaded = too_large(&mut env, size, max);
        return Ok(Some(Passed {
            format: FormatId::Mcp,
            env,
            offloaded,
            redactions: None,
            // A result of text blocks has no presentation.
            had_presentation: false,
        }));
    }
    if size <= options.inline_threshold {
        // Inline: the text is needed whole.
        return Ok(None);
    }
    let artifact = store(&input[long.span], sink).map_err(Error::Store)?;
    // The preview needs less than the prefix the payload holds.
    let summary = summary(&env, KIND, size);
    let offloaded = stored(&mut env, artifact, summary, size);
    Ok(Some(Passed {
        format: FormatId::Mcp,
        env,
        offloaded,
        redactions: None,
        // A result of text blocks has no presentation.
        had_presentation: false,
    }))
}

/// Whether `input` is an MCP result of one long text block holding nothing to redact:
/// redacting it changes nothing, so it may be read as it is (its text as a prefix).
pub(super) fn nothing_to_redact_in_text_result(
    input: &[u8],
    from: Option<FormatId>,
    decode: &DecodeOptions,
) -> bool {
    text_result(input, from, decode).is_some() && nothing_to_redact(input)
}

/// Whether redacting the document would change nothing (see the module's documentation).
fn nothing_to_redact(input: &[u8]) -> bool {
    std::str::from_utf8(input)
        .is_ok_and(|text| crate::shape::redact::is_clean_document(text, 0) == Some(true))
}

/// Decodes the string text `raw` (between its quotes, valid: the skimmed read checked it) a
/// piece at a time into a new artifact of `sink`.
fn store(
    raw: &[u8],
    sink: &mut dyn ArtifactSink,
) -> std::result::Result<crate::model::ArtifactRef, crate::error::SinkError> {
    let Some(mut writer) = sink.begin() else {
        // A sink that takes whole artifacts only: decode it whole.
        let (text, _) = unescape(raw).ok_or_else(undecodable)?;
        return sink.put(text.as_bytes(), KIND);
    };
    let mut write = |piece: &str| writer.write(piece.as_bytes());
    decode_in_pieces(raw, PIECE, &mut write, undecodable)?;
    writer.finish(KIND)
}
