//! The offload of a payload that passes through unchanged: stored as the bytes it already
//! has in the input, without building it.
//!
//! Offloading reads the document, serializes the payload in the output format's dialect and
//! stores those bytes. When a format moves its payload out of one root member untouched
//! ([`PayloadSource::Member`]) and that member's text is already exactly what the writer
//! would write (`json::canonical::is_written_as`), the serialization is
//! those bytes: they are stored as they are, and the document is read with `json::skim`,
//! which builds only what the summary's preview can show (array items past the preview
//! limit are sized, never built). A 500 MB payload then costs the input and a few
//! kilobytes, not a tree several times its size, and is hashed at the store's speed.
//!
//! Anything else takes the whole path, with the same result: a text form, a format that
//! decodes its payload (mcp, tool-envelope-v1), a payload spread over the root
//! ([`PayloadSource::RootWithout`]), text the writer would spell otherwise, or a skimmed
//! payload that would stay inline. `tests/passthrough.rs` compares both paths byte for byte.

use super::bounded::in_payload;
use super::offload::{
    ArtifactSink, OffloadOptions, Offloaded, PREVIEW_LIMIT, stored, summary_skimmed, too_large,
};
use crate::error::{Error, Result};
use crate::formats::{self, DecodeOptions, FormatId, PayloadSource};
use crate::json::Dialect;
use crate::json::canonical::is_written_as;
use crate::json::skim::{self, Tail};
use crate::model::{Envelope, Payload};

/// What the pass-through offload did: the format read, the envelope after the offload.
pub(super) struct Passed {
    pub format: FormatId,
    pub env: Envelope,
    pub offloaded: Offloaded,
}

/// A document whose payload is a root member already written as `dialect` writes it.
struct Read<'a> {
    format: FormatId,
    /// The envelope, its payload's large arrays skimmed (see `tails`).
    env: Envelope,
    /// The payload's skimmed arrays, pointers from the payload's root.
    tails: Vec<Tail>,
    /// The payload's text in the input.
    bytes: &'a [u8],
}

/// Reads `input` for its payload's bytes; `None` when the payload is not a root member
/// moved into the envelope untouched and written as `dialect` writes it (`output_format`'s,
/// else the input format's).
fn read<'a>(
    input: &'a [u8],
    from: Option<FormatId>,
    decode: &DecodeOptions,
    output_format: Option<FormatId>,
) -> Option<Read<'a>> {
    if formats::identify_text(input).is_some() {
        return None;
    }
    let doc = skim::read(input, PREVIEW_LIMIT)?;
    let format = match from {
        Some(f) => f,
        None => crate::detect::detect_value(&doc.value).ok()?.format,
    };
    let env = formats::decode_value(format, doc.value, decode).ok()?;
    let tails = in_payload(formats::get(format), &env, doc.tails)?;
    let Some(PayloadSource::Member(key)) = formats::get(format).payload_source(&env) else {
        return None;
    };
    // Of duplicate keys, the last is the payload (serde_json keeps the last value).
    let (_, span) = doc.members.iter().rev().find(|(k, _)| *k == key)?;
    let bytes = &input[span.clone()];
    let dialect = formats::get(output_format.unwrap_or(format)).dialect();
    if !matches!(env.payload, Payload::Json(_)) || !is_written_as(bytes, dialect) {
        return None;
    }
    Some(Read {
        format,
        env,
        tails,
        bytes,
    })
}

/// The payload of the envelope `input` as compact JSON in `dialect`, when it is a root
/// member of the document already written that way (what `envelope unwrap` prints):
/// the bytes of the input, nothing parsed but the rest of the document. `None`: decode the
/// document and write its payload (the same bytes, or the error).
///
/// ```
/// use envelope::json::Dialect;
/// use envelope::shape::passthrough::payload_as_written;
///
/// let doc = br#"{"data":{"rows":[1,2,3]},"meta":{"source":"local"}}"#;
/// let payload = payload_as_written(doc, None, &Default::default(), Dialect::Js);
/// assert_eq!(payload, Some(&br#"{"rows":[1,2,3]}"#[..]));
/// // Indented text is not what the writer writes: decode and write it.
/// let doc = br#"{"data":{"rows": [1, 2, 3]},"meta":{"source":"local"}}"#;
/// assert_eq!(payload_as_written(doc, None, &Default::default(), Dialect::Js), None);
/// ```
pub fn payload_as_written<'a>(
    input: &'a [u8],
    from: Option<FormatId>,
    decode: &DecodeOptions,
    dialect: Dialect,
) -> Option<&'a [u8]> {
    let read = read(input, from, decode, None)?;
    // The input format's dialect was checked; another needs its own check.
    let same = formats::get(read.format).dialect() == dialect;
    (same || is_written_as(read.bytes, dialect)).then_some(read.bytes)
}

/// The payload stage of [`offload`](super::offload::offload) on the document `input`,
/// its payload stored as the bytes it has there; `Ok(None)` when that is not certain to
/// give what the whole path gives (then nothing was stored).
pub(super) fn offload(
    input: &[u8],
    from: Option<FormatId>,
    decode: &DecodeOptions,
    output_format: Option<FormatId>,
    options: &OffloadOptions,
    sink: &mut dyn ArtifactSink,
) -> Result<Option<Passed>> {
    let Some(Read {
        format,
        mut env,
        tails,
        bytes,
    }) = read(input, from, decode, output_format)
    else {
        return Ok(None);
    };
    let size = bytes.len();
    if let Some(max) = options.max_capture.filter(|&max| size > max) {
        let offloaded = too_large(&mut env, size, max);
        return Ok(Some(Passed {
            format,
            env,
            offloaded,
        }));
    }
    if size <= options.inline_threshold {
        if !tails.is_empty() {
            // The payload stays inline: it is needed whole.
            return Ok(None);
        }
        return Ok(Some(Passed {
            format,
            env,
            offloaded: Offloaded::Inline,
        }));
    }
    let kind = "application/json";
    let artifact = sink.put(bytes, kind).map_err(Error::Store)?;
    let summary = summary_skimmed(&env, kind, size, &tails);
    let offloaded = stored(&mut env, artifact, summary, size);
    Ok(Some(Passed {
        format,
        env,
        offloaded,
    }))
}
