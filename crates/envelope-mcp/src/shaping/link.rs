//! The link to the stored full result, and the `isError` result that names it when no
//! shaped form can be sent.

use envelope::json::Dialect;
use serde_json::{Map, Value, json};

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

/// An `isError` result of at most `limit` bytes saying `reason`, naming the stored result,
/// with as much of `excerpt` (the result's text, or its error message) as fits. Smaller
/// forms are tried in turn: without the excerpt, then one line with the URI.
///
/// Clients do not check an `isError` result against the tool's `outputSchema` (the Python
/// SDK skips them), so this is what is sent when no shaped form satisfies the schema.
pub(crate) fn error_result(
    reason: &str,
    excerpt: &str,
    stored: &Stored,
    revision: Revision,
    limit: usize,
) -> Result<Vec<u8>, ShapeError> {
    let link = block(stored, revision);
    let with = |blocks: Vec<Value>| result(blocks, revision);
    if !excerpt.is_empty() {
        let without = with(vec![text(reason), link.clone()]).len();
        // The excerpt block's text grows by at most 6 bytes per byte (`\u0000`): start from
        // what surely fits, then grow towards the room left.
        let room = limit.saturating_sub(without + 40);
        let mut keep = room.min(excerpt.len());
        for _ in 0..8 {
            let part = prefix(excerpt, keep);
            if part.is_empty() {
                break;
            }
            let bytes = with(vec![text(reason), text(part), link.clone()]);
            if bytes.len() <= limit {
                return Ok(bytes);
            }
            keep = keep.saturating_sub(bytes.len() - limit).min(keep - 1);
        }
    }
    let bytes = with(vec![text(reason), link]);
    if bytes.len() <= limit {
        return Ok(bytes);
    }
    let bytes = with(vec![text(format!(
        "Result too large; the full result is {}",
        stored.uri()
    ))]);
    if bytes.len() <= limit {
        return Ok(bytes);
    }
    Err(ShapeError::LimitTooSmall {
        limit,
        minimum: bytes.len(),
    })
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
/// error result quotes of a result it cannot send.
pub(crate) fn excerpt(result: &Value, max: usize) -> String {
    let mut out = String::new();
    let blocks = result.get("content").and_then(Value::as_array);
    for t in blocks
        .into_iter()
        .flatten()
        .filter_map(|b| (b.get("type")? == "text").then(|| b.get("text")?.as_str())?)
    {
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(prefix(t, max.saturating_sub(out.len())));
        if out.len() >= max {
            break;
        }
    }
    out
}
