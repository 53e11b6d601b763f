//! The text mirror of an MCP result's `structuredContent`, proven on the document's text
//! for the abridged validation ([`abridged`](super::abridged)), which holds
//! `structuredContent` as a placeholder and a long text as its prefix.
//!
//! A text block that may be a JSON document (it starts, after white space, with `{` or `[`)
//! is read by two readers of the whole document: the rule `mcp.mirror` parses it and
//! compares it with `structuredContent`, and ctxo's detection parses the last text block
//! for a ctxo `_meta`. Neither can read a placeholder or a prefix. When the block's text is,
//! byte for byte, the text of `structuredContent` in the document, both answers are known
//! without building either: the parses are of the same text, so the rule finds them equal,
//! and ctxo's detection finds what a probe of `structuredContent`'s top-level `_meta` finds.
//! The same holds for the same text written with other white space between its tokens
//! (the Python SDK indents its mirror): what is left reads to the same value, or does not
//! read at all, and an unreadable text is no mirror to either reader (`json::minified`).
//! Such a text is then replaced in the abridged root by a text neither reader looks into
//! ([`PROVEN_MIRROR`]), which gives the same findings and the same detection. Any other
//! text that may be a document makes the whole document validated whole.

use serde_json::Value;

use super::long_text::LongTexts;
use crate::json::minified::{decodes_to_minified, same_minified};
use crate::json::skim;

/// What a proven mirror's text becomes in the abridged root: no JSON, no envelope block.
const PROVEN_MIRROR: &str = "(the text of structuredContent)";

/// Replaces in `root` (the abridged root of `doc`) each `content` text block that may be a
/// JSON document by [`PROVEN_MIRROR`], when it is proven to be the text of
/// `structuredContent` (white space aside); `false` when one is not (validate the document
/// whole then).
/// `long` says which texts `root` holds as prefixes, and where they are in `doc`.
pub(super) fn settle_mirrors(root: &mut Value, long: &LongTexts, doc: &str) -> bool {
    let Some(blocks) = root.get("content").and_then(Value::as_array) else {
        return true;
    };
    let may_be_json = |block: &Value| {
        block
            .get("text")
            .and_then(Value::as_str)
            .is_some_and(|t| t.trim_start().starts_with(['{', '[']))
    };
    let candidates: Vec<usize> = (0..blocks.len())
        .filter(|&i| may_be_json(&blocks[i]))
        .collect();
    if candidates.is_empty() {
        return true;
    }
    let has_structured = root.get("structuredContent").is_some();
    // Without `structuredContent`, no rule parses a text; detection reads a whole one.
    if !has_structured {
        return candidates.iter().all(|i| !long.contains_key(i));
    }
    let Some(structured) = structured_text(doc) else {
        return false;
    };
    let last_text = crate::formats::mcp::text_blocks(blocks)
        .next_back()
        .map(|(i, _)| i);
    for &i in &candidates {
        let text = blocks[i].get("text").and_then(Value::as_str);
        // The very text, or the same text indented (white space outside strings aside).
        let proven = match long.get(&i) {
            Some(whole) => whole.literal.as_ref().is_some_and(|raw| {
                let raw = &doc.as_bytes()[raw.clone()];
                skim::decodes_to(raw, structured) || decodes_to_minified(raw, structured)
            }),
            None => text.is_some_and(|t| {
                t.as_bytes() == structured || same_minified(t.as_bytes(), structured)
            }),
        };
        if !proven {
            return false;
        }
        // ctxo's detection would parse this text: it must find no ctxo document in it.
        if last_text == Some(i) && crate::formats::ctxo::may_hold_ctxo_document(structured) {
            return false;
        }
    }
    let blocks = root
        .get_mut("content")
        .and_then(Value::as_array_mut)
        .expect("read above");
    for i in candidates {
        blocks[i]["text"] = Value::String(PROVEN_MIRROR.to_string());
    }
    true
}

/// The text of the document's one root member `structuredContent`, however it is written
/// (`None`: none, or more than one).
fn structured_text(doc: &str) -> Option<&[u8]> {
    /// The root's `structuredContent` as it is written; the other members skipped.
    #[derive(serde::Deserialize)]
    struct Root<'a> {
        #[serde(borrow, rename = "structuredContent")]
        structured: Option<&'a serde_json::value::RawValue>,
    }
    let root: Root<'_> = serde_json::from_str(doc).ok()?;
    Some(root.structured?.get().as_bytes())
}
