//! A JSON Pointer into a stored result, stepping into JSON text on the way.
//!
//! RFC 6901, with one extension: when the pointer goes on past a string whose content is a
//! JSON array or object (a text block holding the payload as JSON, or JSON nested in JSON),
//! the string is parsed and the pointer continues inside it. So `/content/0/text/rows/3` reads
//! row 3 of a result whose first text block is `{"rows":[...]}`.

use serde_json::Value;

use super::args::kind;

/// How many keys an error message lists when a member is missing.
const KEYS_SHOWN: usize = 20;

/// The part of `value` that `pointer` addresses (`""`: all of it), taken out of `value`.
///
/// # Errors
///
/// A sentence naming the first step that does not exist and what is there instead.
pub(crate) fn resolve(value: Value, pointer: &str) -> Result<Value, String> {
    resolve_from(value, pointer, 0, "")
}

/// The steps of `pointer` as written (`~0`, `~1` kept), none for `""`.
///
/// # Errors
///
/// A pointer that is neither empty nor starts with `/`.
pub(crate) fn steps(pointer: &str) -> Result<Vec<&str>, String> {
    if pointer.is_empty() {
        return Ok(Vec::new());
    }
    match pointer.strip_prefix('/') {
        Some(rest) => Ok(rest.split('/').collect()),
        None => Err(format!("the pointer {pointer:?} does not start with `/`")),
    }
}

/// A step's member name or index: `~1` is `/`, `~0` is `~`.
pub(crate) fn token(raw: &str) -> String {
    raw.replace("~1", "/").replace("~0", "~")
}

/// [`resolve`] of the steps of `pointer` after the first `done`, taken already (they led to
/// `value`; `at` is the pointer they make): the paging index walks the first steps and hands
/// the rest to this, with the same messages.
pub(crate) fn resolve_from(
    mut value: Value,
    pointer: &str,
    done: usize,
    at: &str,
) -> Result<Value, String> {
    // The steps taken so far, for messages.
    let mut at = at.to_string();
    for raw in steps(pointer)?.into_iter().skip(done) {
        let token = token(raw);
        if let Value::String(text) = &value {
            value = match serde_json::from_str::<Value>(text) {
                Ok(inner @ (Value::Object(_) | Value::Array(_))) => inner,
                _ => return Err(not_json_text(pointer, &at)),
            };
        }
        value = match value {
            Value::Object(mut map) => match map.get_mut(&token) {
                Some(member) => member.take(),
                None => return Err(no_member(pointer, &at, &token, map.keys())),
            },
            Value::Array(mut items) => {
                let len = items.len();
                match array_index(&token) {
                    Some(i) if i < len => items.swap_remove(i),
                    Some(i) => return Err(no_item(pointer, &at, len, i)),
                    None => return Err(not_an_index(pointer, &at, &token)),
                }
            }
            other => {
                return Err(format!(
                    "the pointer {pointer:?}: {} is {}, it has no member {token:?}",
                    place(&at),
                    kind(&other)
                ));
            }
        };
        at.push('/');
        at.push_str(raw);
    }
    Ok(value)
}

/// The pointer goes on past a string at `at` that holds no JSON array or object.
pub(crate) fn not_json_text(pointer: &str, at: &str) -> String {
    format!(
        "the pointer {pointer:?} goes past {}: a string that is not a JSON array or object",
        place(at)
    )
}

/// The object at `at` (whose keys are `keys`, in order) has no member `token`.
pub(crate) fn no_member<'k>(
    pointer: &str,
    at: &str,
    token: &str,
    keys: impl ExactSizeIterator<Item = &'k String>,
) -> String {
    let count = keys.len();
    let mut shown: Vec<String> = keys.take(KEYS_SHOWN).map(|k| format!("{k:?}")).collect();
    if count > KEYS_SHOWN {
        shown.push(format!("... ({count} keys in all)"));
    }
    format!(
        "the pointer {pointer:?}: {} has no member {token:?} (its keys: {})",
        place(at),
        if shown.is_empty() {
            "none".to_string()
        } else {
            shown.join(", ")
        }
    )
}

/// The array at `at` has `len` items, fewer than `index + 1`.
pub(crate) fn no_item(pointer: &str, at: &str, len: usize, index: usize) -> String {
    format!(
        "the pointer {pointer:?}: {} has {len} items, there is no item {index}",
        place(at)
    )
}

/// `token` is no index of the array at `at`.
pub(crate) fn not_an_index(pointer: &str, at: &str, token: &str) -> String {
    format!(
        "the pointer {pointer:?}: {} is an array, {token:?} is not an index",
        place(at)
    )
}

/// An array index as RFC 6901 spells it: digits, no leading zero.
pub(crate) fn array_index(token: &str) -> Option<usize> {
    let digits = !token.is_empty() && token.bytes().all(|b| b.is_ascii_digit());
    if !digits || (token.len() > 1 && token.starts_with('0')) {
        return None;
    }
    token.parse().ok()
}

fn place(at: &str) -> String {
    if at.is_empty() {
        "the stored result".to_string()
    } else {
        format!("{at:?}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn doc() -> Value {
        json!({
            "content": [{"type": "text", "text": "{\"rows\":[10,11,{\"x\":\"[1,2]\"}]}"}],
            "structuredContent": {"a/b": {"~k": [1, 2, 3]}, "n": 5}
        })
    }

    #[test]
    fn rfc_6901_with_escapes() {
        assert_eq!(resolve(doc(), "").unwrap(), doc());
        assert_eq!(
            resolve(doc(), "/structuredContent/a~1b/~0k/2").unwrap(),
            json!(3)
        );
        assert_eq!(resolve(doc(), "/structuredContent/n").unwrap(), json!(5));
    }

    #[test]
    fn json_text_is_stepped_into() {
        assert_eq!(resolve(doc(), "/content/0/text/rows/1").unwrap(), json!(11));
        assert_eq!(
            resolve(doc(), "/content/0/text/rows/2/x/1").unwrap(),
            json!(2)
        );
        // Addressing the string itself gives the string.
        assert_eq!(
            resolve(doc(), "/content/0/text/rows/2/x").unwrap(),
            json!("[1,2]")
        );
    }

    #[test]
    fn missing_steps_are_explained() {
        let err = resolve(doc(), "/structuredContent/b").unwrap_err();
        assert!(
            err.contains("\"/structuredContent\" has no member \"b\"")
                && err.contains("\"a/b\", \"n\""),
            "{err}"
        );
        let err = resolve(doc(), "/content/3").unwrap_err();
        assert!(err.contains("has 1 items, there is no item 3"), "{err}");
        let err = resolve(doc(), "/content/01").unwrap_err();
        assert!(err.contains("not an index"), "{err}");
        let err = resolve(doc(), "/content/-").unwrap_err();
        assert!(err.contains("not an index"), "{err}");
        let err = resolve(doc(), "/structuredContent/n/x").unwrap_err();
        assert!(err.contains("is a number"), "{err}");
        let err = resolve(doc(), "/content/0/type/x").unwrap_err();
        assert!(err.contains("not a JSON array or object"), "{err}");
        let err = resolve(doc(), "/nope").unwrap_err();
        assert!(err.contains("the stored result has no member"), "{err}");
    }
}
