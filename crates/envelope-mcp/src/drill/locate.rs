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
pub(crate) fn resolve(mut value: Value, pointer: &str) -> Result<Value, String> {
    if pointer.is_empty() {
        return Ok(value);
    }
    let Some(rest) = pointer.strip_prefix('/') else {
        return Err(format!("the pointer {pointer:?} does not start with `/`"));
    };
    // The steps taken so far, for messages.
    let mut at = String::new();
    for raw in rest.split('/') {
        let token = raw.replace("~1", "/").replace("~0", "~");
        if let Value::String(text) = &value {
            value = match serde_json::from_str::<Value>(text) {
                Ok(inner @ (Value::Object(_) | Value::Array(_))) => inner,
                _ => {
                    return Err(format!(
                        "the pointer {pointer:?} goes past {}: a string that is not a JSON array or object",
                        place(&at)
                    ));
                }
            };
        }
        value = match value {
            Value::Object(mut map) => match map.get_mut(&token) {
                Some(member) => member.take(),
                None => {
                    let mut keys: Vec<String> = map
                        .keys()
                        .take(KEYS_SHOWN)
                        .map(|k| format!("{k:?}"))
                        .collect();
                    if map.len() > KEYS_SHOWN {
                        keys.push(format!("... ({} keys in all)", map.len()));
                    }
                    return Err(format!(
                        "the pointer {pointer:?}: {} has no member {token:?} (its keys: {})",
                        place(&at),
                        if keys.is_empty() {
                            "none".to_string()
                        } else {
                            keys.join(", ")
                        }
                    ));
                }
            },
            Value::Array(mut items) => {
                let len = items.len();
                match array_index(&token) {
                    Some(i) if i < len => items.swap_remove(i),
                    Some(i) => {
                        return Err(format!(
                            "the pointer {pointer:?}: {} has {len} items, there is no item {i}",
                            place(&at)
                        ));
                    }
                    None => {
                        return Err(format!(
                            "the pointer {pointer:?}: {} is an array, {token:?} is not an index",
                            place(&at)
                        ));
                    }
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

/// An array index as RFC 6901 spells it: digits, no leading zero.
fn array_index(token: &str) -> Option<usize> {
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
