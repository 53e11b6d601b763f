//! Content blocks that are not text (images, audio, embedded resources, links, unknown
//! types): the library's cut would shorten their strings (half an image is no image), so
//! they are kept whole or, when that does not fit, replaced by a text line saying what was
//! there and that it is in the full result.

use envelope::json::Dialect;
use envelope_store::Digest;
use serde_json::{Value, json};

/// A block of the result that must not be cut: where it is, what it is, and the digest of
/// its compact JSON (to tell, in a shaped result, a block kept whole from a cut one without
/// keeping the block itself).
#[derive(Clone, Debug)]
pub(crate) struct Atomic {
    /// Its index in `content`.
    pub(crate) index: usize,
    /// Its compact JSON's length in bytes.
    pub(crate) size: usize,
    /// A line saying what the block was, to stand in its place.
    pub(crate) placeholder: String,
    digest: Digest,
}

impl Atomic {
    /// Every content block of `result` that is not a text block.
    pub(crate) fn of(result: &Value) -> Vec<Atomic> {
        let Some(blocks) = result.get("content").and_then(Value::as_array) else {
            return Vec::new();
        };
        blocks
            .iter()
            .enumerate()
            .filter(|(_, b)| !is_text(b))
            .map(|(index, block)| {
                let bytes = envelope::json::to_vec(block, Dialect::Js);
                Atomic {
                    index,
                    size: bytes.len(),
                    placeholder: placeholder(block, bytes.len()),
                    digest: Digest::of(&bytes),
                }
            })
            .collect()
    }

    /// Whether `block` (of a shaped result) is one of `atomic`, whole.
    pub(crate) fn is_whole(block: &Value, atomic: &[Atomic]) -> bool {
        let digest = Digest::of(&envelope::json::to_vec(block, Dialect::Js));
        atomic.iter().any(|a| a.digest == digest)
    }
}

/// A text block (the one kind the cut may shorten).
pub(crate) fn is_text(block: &Value) -> bool {
    block.get("type").and_then(Value::as_str) == Some("text")
}

/// `[image block (image/png, 48213 bytes) left out to fit the limit: it is in the full result]`.
fn placeholder(block: &Value, size: usize) -> String {
    let kind = block.get("type").and_then(Value::as_str).unwrap_or("?");
    let mime = block
        .get("mimeType")
        .or_else(|| block.get("resource").and_then(|r| r.get("mimeType")))
        .and_then(Value::as_str);
    let what = match mime {
        Some(m) => format!("{m}, {size} bytes"),
        None => format!("{size} bytes"),
    };
    format!("[{kind} block ({what}) left out to fit the limit: it is in the full result]")
}

/// `result` with the blocks at `indices` replaced by their placeholders.
pub(crate) fn replace(result: &mut Value, atomic: &[Atomic], indices: &[usize]) {
    let Some(blocks) = result.get_mut("content").and_then(Value::as_array_mut) else {
        return;
    };
    for a in atomic.iter().filter(|a| indices.contains(&a.index)) {
        if let Some(block) = blocks.get_mut(a.index) {
            *block = json!({"type": "text", "text": a.placeholder});
        }
    }
}
