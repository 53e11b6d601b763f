//! The answer of `envelope_read`: a window of the selected value that fits the byte limit.
//!
//! An array is windowed in items, a string in Unicode scalar values (Rust `char`s: an emoji
//! is one, a letter with a combining mark is two), anything else is answered whole. The answer
//! is a `CallToolResult` whose `structuredContent` is
//! `{items | text | value, offset, next_offset, total}` and whose one text block is the
//! compact JSON of that same object; the compact JSON of the whole result is at most the
//! limit. The window is the longest one from `offset` (at most `count` long) that fits;
//! `next_offset` is where the next window starts, `null` at the end.

use serde_json::{Value, json};

use super::args::kind;

/// Builds the answer for `value` from `offset`, at most `count` items or characters long,
/// within `limit` bytes.
///
/// # Errors
///
/// A sentence when no answer fits: `offset` past the end, one item (or the whole value)
/// larger than the limit, or `offset`/`count` given for a value that is neither an array
/// nor a string.
pub(crate) fn answer(
    value: Value,
    offset: Option<usize>,
    count: Option<usize>,
    limit: usize,
) -> Result<Value, String> {
    match value {
        Value::Array(items) => array_window(&items, offset.unwrap_or(0), count, limit),
        Value::String(text) => text_window(&text, offset.unwrap_or(0), count, limit),
        other if offset.is_some() || count.is_some() => Err(format!(
            "`offset` and `limit` page through an array or a string; the value here is {} \
             (select an array or a string with `pointer` or `jq`)",
            kind(&other)
        )),
        other => whole_value(other, limit),
    }
}

/// The result carrying `structured` in both channels.
pub fn result(structured: Value) -> Value {
    let text = structured.to_string();
    json!({"content": [{"type": "text", "text": text}], "structuredContent": structured})
}

/// The compact JSON size of `value`, without building the text.
pub fn json_size(value: &Value) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    // Writing a Value to a counter cannot fail.
    let _ = serde_json::to_writer(&mut count, value);
    count.0
}

fn array_window(
    items: &[Value],
    offset: usize,
    count: Option<usize>,
    limit: usize,
) -> Result<Value, String> {
    past_end(offset, items.len())?;
    array_window_from(&items[offset..], offset, items.len(), count, limit).map(|(_, answer)| answer)
}

/// The window of an array of `total` items from `offset`, given `tail`: its items from
/// `offset` on (all of them, or the first ones: the paging index reads no more than can
/// fit). Returns how many items of `tail` the answer holds, and the answer; a caller that
/// gave fewer items than are left checks whether all of them were taken.
pub(crate) fn array_window_from(
    tail: &[Value],
    offset: usize,
    total: usize,
    count: Option<usize>,
    limit: usize,
) -> Result<(usize, Value), String> {
    let rest = past_end(offset, total)?;
    let wanted = count.map_or(rest, |c| c.min(rest)).min(tail.len());
    // Every item appears at least once in the answer: a bound on how many can fit, found
    // without serialising more than about `limit` bytes.
    let mut most = 0;
    let mut bytes = 0;
    for item in &tail[..wanted] {
        bytes += json_size(item) + 1;
        if bytes > limit {
            break;
        }
        most += 1;
    }
    let build = |n: usize| {
        result(json!({
            "items": &tail[..n],
            "offset": offset,
            "next_offset": next(offset, n, total),
            "total": total,
        }))
    };
    let (n, answer) = longest_fitting(most, limit, build)?;
    if n == 0 && wanted > 0 {
        return Err(format!(
            "item {offset} alone ({} bytes of JSON) does not fit in an answer of {limit} bytes; \
             read part of it with `pointer` (…/{offset}/...) or `jq`",
            json_size(&tail[0])
        ));
    }
    Ok((n, answer))
}

fn text_window(
    text: &str,
    offset: usize,
    count: Option<usize>,
    limit: usize,
) -> Result<Value, String> {
    let total = text.chars().count();
    past_end(offset, total)?;
    let tail = &text[byte_index(text, offset)..];
    text_window_from(tail, offset, total, count, limit)
}

/// The window of a string of `total` characters from `offset`, given `tail`: its text
/// from `offset` on, at least [`text_wanted`] characters of it (the paging index decodes no
/// more).
pub(crate) fn text_window_from(
    tail: &str,
    offset: usize,
    total: usize,
    count: Option<usize>,
    limit: usize,
) -> Result<Value, String> {
    let rest = past_end(offset, total)?;
    let most = text_wanted(rest, count, limit);
    let build = |n: usize| {
        result(json!({
            "text": &tail[..byte_index(tail, n)],
            "offset": offset,
            "next_offset": next(offset, n, total),
            "total": total,
        }))
    };
    let (n, answer) = longest_fitting(most, limit, build)?;
    if n == 0 && rest > 0 && count != Some(0) {
        return Err(format!(
            "an answer of {limit} bytes cannot hold even one character"
        ));
    }
    Ok(answer)
}

/// The most characters a window can hold when `rest` are left: every character takes at
/// least one byte, and appears at least once.
pub(crate) fn text_wanted(rest: usize, count: Option<usize>, limit: usize) -> usize {
    count.map_or(rest, |c| c.min(rest)).min(limit)
}

fn whole_value(value: Value, limit: usize) -> Result<Value, String> {
    let size = json_size(&value);
    let answer = result(json!({"value": value, "offset": 0, "next_offset": null, "total": 1}));
    if json_size(&answer) <= limit {
        return Ok(answer);
    }
    let hint = match &answer["structuredContent"]["value"] {
        Value::Object(map) => {
            let keys: Vec<String> = map.keys().take(20).map(|k| format!("{k:?}")).collect();
            format!(
                "; select a member with `pointer` or `jq` (its keys: {}{})",
                keys.join(", "),
                if map.len() > 20 { ", ..." } else { "" }
            )
        }
        _ => String::new(),
    };
    Err(format!(
        "the value here is {} of {size} bytes of JSON, more than fits in an answer of {limit} bytes{hint}",
        kind(&answer["structuredContent"]["value"])
    ))
}

/// The items or characters left from `offset`, or an error when it is past the end.
pub(crate) fn past_end(offset: usize, total: usize) -> Result<usize, String> {
    total
        .checked_sub(offset)
        .ok_or_else(|| format!("`offset` {offset} is past the end: there are {total}"))
}

fn next(offset: usize, n: usize, total: usize) -> Value {
    if offset + n < total {
        json!(offset + n)
    } else {
        Value::Null
    }
}

/// The byte index of the `chars`-th character of `text` (its length when there are fewer).
fn byte_index(text: &str, chars: usize) -> usize {
    text.char_indices()
        .nth(chars)
        .map_or(text.len(), |(i, _)| i)
}

/// The largest `n <= most` whose answer `build(n)` fits in `limit`, found by bisection
/// (`build` grows with `n`, up to the width of `next_offset`, so any `n` found fits even
/// where that is not strictly so). Errors when not even `build(0)` fits.
fn longest_fitting(
    most: usize,
    limit: usize,
    build: impl Fn(usize) -> Value,
) -> Result<(usize, Value), String> {
    let fits = |answer: &Value| json_size(answer) <= limit;
    let empty = build(0);
    if !fits(&empty) {
        return Err(format!(
            "an answer of {limit} bytes is too small to hold even an empty window"
        ));
    }
    let (mut lo, mut best, mut hi) = (0, empty, most);
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        let answer = build(mid);
        if fits(&answer) {
            lo = mid;
            best = answer;
        } else {
            hi = mid - 1;
        }
    }
    Ok((lo, best))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn structured(answer: &Value) -> &Value {
        &answer["structuredContent"]
    }

    #[test]
    fn the_text_mirrors_the_structured_content() {
        let answer = answer(json!([1, "two", {"3": [4]}]), None, None, 1000).unwrap();
        let text = answer["content"][0]["text"].as_str().unwrap();
        assert_eq!(
            serde_json::from_str::<Value>(text).unwrap(),
            *structured(&answer)
        );
        assert_eq!(
            *structured(&answer),
            json!({"items": [1, "two", {"3": [4]}], "offset": 0, "next_offset": null, "total": 3})
        );
    }

    #[test]
    fn a_window_shrinks_to_fit_and_says_where_to_go_on() {
        let items: Vec<Value> = (0..1000).map(|i| json!(format!("item-{i:04}"))).collect();
        let answer = answer(Value::Array(items.clone()), Some(10), None, 600).unwrap();
        assert!(json_size(&answer) <= 600);
        let s = structured(&answer);
        let n = s["items"].as_array().unwrap().len();
        assert!(n > 5, "{n}");
        assert_eq!(s["items"].as_array().unwrap()[..], items[10..10 + n]);
        assert_eq!(s["next_offset"], json!(10 + n));
        // One more item would not have fit.
        let bigger = result(
            json!({"items": &items[10..11 + n], "offset": 10, "next_offset": 11 + n, "total": 1000}),
        );
        assert!(json_size(&bigger) > 600);
    }

    #[test]
    fn strings_are_windowed_in_scalar_values() {
        // "e" + combining acute is two scalar values; the emoji is one.
        let text = "ae\u{301}😀z";
        let answer = answer(json!(text), Some(1), Some(3), 1000).unwrap();
        assert_eq!(
            *structured(&answer),
            json!({"text": "e\u{301}😀", "offset": 1, "next_offset": 4, "total": 5})
        );
        let end = super::answer(json!(text), Some(5), None, 1000).unwrap();
        assert_eq!(
            *structured(&end),
            json!({"text": "", "offset": 5, "next_offset": null, "total": 5})
        );
    }

    #[test]
    fn what_cannot_fit_is_explained() {
        let err = answer(json!([1, 2]), Some(3), None, 1000).unwrap_err();
        assert!(
            err.contains("`offset` 3 is past the end: there are 2"),
            "{err}"
        );
        let err = answer(json!(["x".repeat(500)]), None, None, 300).unwrap_err();
        assert!(err.contains("item 0 alone (502 bytes"), "{err}");
        let err = answer(json!({"a": "x".repeat(500), "b": 1}), None, None, 300).unwrap_err();
        assert!(
            err.contains("an object of") && err.contains("\"a\", \"b\""),
            "{err}"
        );
        let err = answer(json!({"a": 1}), Some(0), None, 300).unwrap_err();
        assert!(err.contains("the value here is an object"), "{err}");
        let err = answer(json!("abc"), None, None, 40).unwrap_err();
        assert!(err.contains("too small"), "{err}");
    }

    #[test]
    fn small_values_are_answered_whole() {
        let answer = answer(json!({"a": 1}), None, None, 1000).unwrap();
        assert_eq!(
            *structured(&answer),
            json!({"value": {"a": 1}, "offset": 0, "next_offset": null, "total": 1})
        );
    }
}
