//! The offload of a payload that passes through unchanged: stored as the bytes it already
//! has in the input, without building it.
//!
//! Offloading reads the document, serializes the payload in the output format's dialect and
//! stores those bytes. When a format moves its payload out of one root member untouched
//! ([`PayloadSource::Member`]) and that member's text is already exactly what the writer
//! would write ([`canonical::is_written_as`](crate::json::canonical)), the serialization is
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
use crate::json::canonical::is_written_as;
use crate::json::skim;
use crate::model::{Envelope, Payload};

/// What the pass-through offload did: the format read, the envelope after the offload.
pub(super) struct Passed {
    pub format: FormatId,
    pub env: Envelope,
    pub offloaded: Offloaded,
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
    if formats::identify_text(input).is_some() {
        return Ok(None);
    }
    let Some(doc) = skim::read(input, PREVIEW_LIMIT) else {
        return Ok(None);
    };
    let format = match from {
        Some(f) => f,
        None => match crate::detect::detect_value(&doc.value) {
            Ok(found) => found.format,
            Err(_) => return Ok(None),
        },
    };
    let Ok(mut env) = formats::decode_value(format, doc.value, decode) else {
        return Ok(None);
    };
    let skimmed = !doc.tails.is_empty();
    let Some(tails) = in_payload(formats::get(format), &env, doc.tails) else {
        return Ok(None);
    };
    let Some(PayloadSource::Member(key)) = formats::get(format).payload_source(&env) else {
        return Ok(None);
    };
    // Of duplicate keys, the last is the payload (serde_json keeps the last value).
    let Some((_, span)) = doc.members.iter().rev().find(|(k, _)| *k == key) else {
        return Ok(None);
    };
    let bytes = &input[span.clone()];
    let dialect = formats::get(output_format.unwrap_or(format)).dialect();
    if !matches!(env.payload, Payload::Json(_)) || !is_written_as(bytes, dialect) {
        return Ok(None);
    }
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
        if skimmed {
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
