//! The link to the stored full result, and the `isError` result that names it when no
//! shaped form can be sent.

use envelope::json::Dialect;
use serde_json::{Map, Value, json};

use super::limits::Limits;
use super::{ShapeError, Stored};
use crate::revision::Revision;

/// The link block: a `resource_link` where the revision has them, else a text line with the
/// URI. Both tell how to read the rest.
pub(crate) fn block(stored: &Stored, revision: Revision) -> Value {
    let uri = stored.uri();
    let how = "read it with resources/read, or page and query it with the envelope_read tool";
    if revision.supports_resource_link() {
        json!({
            "type": "resource_link",
            "uri": uri,
            "name": "full-result",
            "description": format!("The full result ({} bytes of JSON): {how}.", stored.size),
            "mimeType": "application/json",
            "size": stored.size,
        })
    } else {
        text(format!(
            "The full result ({} bytes of JSON) is {uri}: {how}.",
            stored.size
        ))
    }
}

fn text(text: impl Into<String>) -> Value {
    json!({"type": "text", "text": text.into()})
}

/// An `isError` result within `limits` (bytes, tokens or both) saying `reason`, naming the stored result,
/// with as much of `excerpt` (the result's text, or its error message) as fits. Smaller
/// forms are tried in turn: without the excerpt, then one line with the URI.
///
/// The reason ends with the `envelope_read` call that reads on from where the quote stops
/// (see [`Excerpt::read_on`]); only the last form, for a limit too small for anything
/// else (a few hundred bytes), names the URI alone.
///
/// Clients do not check an `isError` result against the tool's `outputSchema` (the Python
/// SDK skips them), so this is what is sent when no shaped form satisfies the schema.
pub(crate) fn error_result(
    reason: &str,
    excerpt: &Excerpt,
    stored: &Stored,
    revision: Revision,
    limits: &Limits,
) -> Result<Vec<u8>, ShapeError> {
    let link = block(stored, revision);
    let uri = stored.uri();
    let with = |blocks: Vec<Value>| result(blocks, revision);
    let reason_at = |quoted: usize| text(format!("{reason} {}", excerpt.read_on(&uri, quoted)));
    // Sizes are costs in bytes of the room (`Limits::cost`): bytes, or tokens scaled.
    let room = limits.room();
    if !excerpt.text.is_empty() {
        let without = limits.cost(&with(vec![reason_at(0), link.clone()]));
        // The excerpt block's text grows by at most 6 bytes per byte (`\u0000`): start from
        // what surely fits, then grow towards the room left.
        let left = room.saturating_sub(without.saturating_add(40));
        let mut keep = left.min(excerpt.text.len());
        for _ in 0..8 {
            let part = prefix(&excerpt.text, keep);
            if part.is_empty() {
                break;
            }
            let bytes = with(vec![reason_at(part.len()), text(part), link.clone()]);
            let cost = limits.cost(&bytes);
            if cost <= room {
                return Ok(bytes);
            }
            keep = keep.saturating_sub(cost - room).min(keep - 1);
        }
    }
    let bytes = with(vec![reason_at(0), link]);
    if limits.fits(&bytes) {
        return Ok(bytes);
    }
    let line = format!("Result too large; the full result is {uri}.");
    let bytes = with(vec![text(format!("{line} {}", excerpt.read_on(&uri, 0)))]);
    if limits.fits(&bytes) {
        return Ok(bytes);
    }
    let bytes = with(vec![text(line)]);
    if limits.fits(&bytes) {
        return Ok(bytes);
    }
    match limits.tokens {
        Some(t) if limits.byte_limit().is_none_or(|limit| bytes.len() <= limit) => {
            Err(ShapeError::TokenLimitTooSmall {
                limit: t.limit,
                tokenizer: t.tokenizer.name(),
                minimum: t.count(&bytes),
            })
        }
        _ => Err(ShapeError::LimitTooSmall {
            limit: limits.bytes,
            minimum: bytes.len(),
        }),
    }
}

/// `{"content":[…],"isError":true}` (and `"resultType":"complete"` where the revision has it).
fn result(content: Vec<Value>, revision: Revision) -> Vec<u8> {
    let mut map = Map::new();
    map.insert("content".into(), Value::Array(content));
    map.insert("isError".into(), Value::Bool(true));
    if revision.has_result_type() {
        map.insert("resultType".into(), json!("complete"));
    }
    envelope::json::to_vec(&Value::Object(map), Dialect::Js)
}

/// The longest prefix of `s` of at most `max` bytes that ends at a character boundary.
pub(crate) fn prefix(s: &str, max: usize) -> &str {
    if max >= s.len() {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// The text of a result's text blocks, joined by newlines, at most `max` bytes: what an
/// error result quotes of a result it cannot send, and where each block's part of it is.
#[derive(Clone, Debug, Default)]
pub(crate) struct Excerpt {
    /// The quoted text.
    pub(crate) text: String,
    /// `(index in content, where its text starts in `text`)` of each text block quoted,
    /// in order: the first one even when `max` is 0.
    parts: Vec<(usize, usize)>,
    /// Whether `text` holds every text block whole.
    complete: bool,
    /// Whether the result has `structuredContent`.
    structured: bool,
}

impl Excerpt {
    /// `Read on: envelope_read {…}`: the call that reads on from where the first `quoted`
    /// bytes of the excerpt stop (the character after them in the text block they end in;
    /// the next block when they end at a block's end), in the stored result `uri`. With no
    /// text block left to read, the call names `structuredContent` when there is one, else
    /// the whole stored result (`envelope_read` answers either whole, or lists its members
    /// when it is too big to answer).
    pub(crate) fn read_on(&self, uri: &str, quoted: usize) -> String {
        let done = self.complete && quoted >= self.text.len();
        let call = match self.at(quoted).filter(|_| !done) {
            Some((index, offset)) => json!({
                "uri": uri,
                "pointer": format!("/content/{index}/text"),
                "offset": offset,
            }),
            None if self.structured => json!({"uri": uri, "pointer": "/structuredContent"}),
            None => json!({"uri": uri, "pointer": ""}),
        };
        format!("Read on: envelope_read {call}")
    }

    /// The text block and character offset where the first `quoted` bytes stop.
    fn at(&self, quoted: usize) -> Option<(usize, usize)> {
        let quoted = quoted.min(self.text.len());
        // The last part that starts at or before the end of the quote: the quote ends in it,
        // or on the newline before the next part.
        let i = self.parts.iter().rposition(|&(_, start)| start <= quoted)?;
        let (index, start) = self.parts[i];
        match self.parts.get(i + 1) {
            // A block followed by another was quoted whole: a quote that ends with it reads
            // on from the next one.
            Some(&(next, next_start)) if quoted + 1 >= next_start => Some((next, 0)),
            _ => Some((index, self.text[start..quoted].chars().count())),
        }
    }
}

/// The [`Excerpt`] of `result` (its text blocks' text, at most `max` bytes).
pub(crate) fn excerpt(result: &Value, max: usize) -> Excerpt {
    let mut out = Excerpt {
        complete: true,
        structured: result.get("structuredContent").is_some(),
        ..Excerpt::default()
    };
    let blocks = result.get("content").and_then(Value::as_array);
    let texts = blocks
        .into_iter()
        .flatten()
        .enumerate()
        .filter_map(|(i, b)| {
            (b.get("type")? == "text").then(|| Some((i, b.get("text")?.as_str()?)))?
        });
    for (i, t) in texts {
        if !out.parts.is_empty() {
            if out.text.len() >= max {
                out.complete = false;
                break;
            }
            out.text.push('\n');
        }
        out.parts.push((i, out.text.len()));
        let room = max.saturating_sub(out.text.len());
        let part = prefix(t, room);
        out.complete &= part.len() == t.len();
        out.text.push_str(part);
    }
    // A text as long as `max` may have been cut before it got here (`blocks::excerpt`).
    out.complete &= out.text.len() < max;
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(excerpt: &Excerpt, quoted: usize) -> Value {
        let line = excerpt.read_on("envelope://artifact/sha256/x", quoted);
        let json = line.strip_prefix("Read on: envelope_read ").unwrap();
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn the_call_reads_on_in_the_block_the_quote_ends_in() {
        let result = json!({"content": [
            {"type": "text", "text": "héllo"},
            {"type": "image", "data": "QUJD", "mimeType": "image/png"},
            {"type": "text", "text": "wörld and more"},
        ]});
        let excerpt = excerpt(&result, 1000);
        assert_eq!(excerpt.text, "héllo\nwörld and more");
        // Inside the first block: characters, not bytes ("hé" is 3 bytes).
        assert_eq!(call(&excerpt, 3)["offset"], 2);
        assert_eq!(call(&excerpt, 3)["pointer"], "/content/0/text");
        // At the end of the first block: the next text block (index 2), from its start.
        for quoted in [6, 7] {
            assert_eq!(call(&excerpt, quoted)["pointer"], "/content/2/text");
            assert_eq!(call(&excerpt, quoted)["offset"], 0);
        }
        // Inside the second: "wö" is 3 bytes, 2 characters.
        assert_eq!(call(&excerpt, 10)["offset"], 2);
        // All of it quoted, nothing left in the text: the whole result (no structuredContent).
        assert_eq!(call(&excerpt, excerpt.text.len())["pointer"], "");
        assert!(call(&excerpt, excerpt.text.len()).get("offset").is_none());
    }

    #[test]
    fn a_quote_cut_short_reads_on_in_its_block_and_a_whole_one_in_structured_content() {
        let result =
            json!({"content": [{"type": "text", "text": "abcdef"}], "structuredContent": {"a": 1}});
        let short = excerpt(&result, 4);
        assert_eq!(short.text, "abcd");
        assert_eq!(call(&short, 4)["pointer"], "/content/0/text");
        assert_eq!(call(&short, 4)["offset"], 4);
        let whole = excerpt(&result, 100);
        assert_eq!(call(&whole, 6)["pointer"], "/structuredContent");
        // Nothing quoted: from the start of the first text block.
        let none = excerpt(&result, 0);
        assert_eq!(none.text, "");
        assert_eq!(call(&none, 0)["pointer"], "/content/0/text");
        assert_eq!(call(&none, 0)["offset"], 0);
        // No text block at all.
        let image =
            json!({"content": [{"type": "image", "data": "QUJD", "mimeType": "image/png"}]});
        assert_eq!(call(&excerpt(&image, 100), 0)["pointer"], "");
    }
}
