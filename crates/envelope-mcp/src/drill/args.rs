//! The arguments of an `envelope_read` call, checked.

use serde_json::Value;

/// The arguments `envelope_read` accepts, in the order the tool's schema lists them.
pub const NAMES: [&str; 5] = ["uri", "pointer", "offset", "limit", "jq"];

/// The longest `jq` filter accepted, in bytes: a filter is a query, not a program.
pub const MAX_JQ_LEN: usize = 4096;

/// A checked `envelope_read` call.
#[derive(Debug, PartialEq)]
pub struct ReadArgs {
    /// The artifact URI.
    pub uri: String,
    /// A JSON Pointer into the stored result (`""`: the whole result).
    pub pointer: String,
    /// The first item or character of the window (`None`: 0).
    pub offset: Option<usize>,
    /// At most this many items or characters (`None`: as many as fit).
    pub count: Option<usize>,
    /// A jq filter run on the value the pointer addresses.
    pub jq: Option<String>,
}

impl ReadArgs {
    /// Checks `arguments` (the `tools/call` `arguments` member; absent reads as `{}`).
    ///
    /// # Errors
    ///
    /// A sentence naming the argument and what is wrong with it.
    pub(crate) fn parse(arguments: &Value) -> Result<ReadArgs, String> {
        let empty = serde_json::Map::new();
        let args = match arguments {
            Value::Object(map) => map,
            Value::Null => &empty,
            other => {
                return Err(format!(
                    "the arguments must be an object with at least `uri`, not {}",
                    kind(other)
                ));
            }
        };
        if let Some(unknown) = args.keys().find(|k| !NAMES.contains(&k.as_str())) {
            return Err(format!(
                "unknown argument `{unknown}` (the arguments are {})",
                NAMES.map(|n| format!("`{n}`")).join(", ")
            ));
        }
        let uri = match args.get("uri") {
            Some(Value::String(uri)) => uri.clone(),
            None => return Err("the argument `uri` is required (an envelope://artifact/sha256/... URI from a cut result)".into()),
            Some(other) => return Err(format!("`uri` must be a string, not {}", kind(other))),
        };
        let pointer = match args.get("pointer") {
            None | Some(Value::Null) => String::new(),
            Some(Value::String(p)) if p.is_empty() || p.starts_with('/') => p.clone(),
            Some(Value::String(p)) => {
                return Err(format!(
                    "`pointer` must be a JSON Pointer: empty or starting with `/` (like `/structuredContent/items`), not {p:?}"
                ));
            }
            Some(other) => return Err(format!("`pointer` must be a string, not {}", kind(other))),
        };
        let jq = match args.get("jq") {
            None | Some(Value::Null) => None,
            Some(Value::String(f)) if f.len() > MAX_JQ_LEN => {
                return Err(format!(
                    "`jq` is {} bytes long; at most {MAX_JQ_LEN} are accepted",
                    f.len()
                ));
            }
            Some(Value::String(f)) => Some(f.clone()),
            Some(other) => return Err(format!("`jq` must be a string, not {}", kind(other))),
        };
        Ok(ReadArgs {
            uri,
            pointer,
            offset: whole_number(args, "offset", 0)?,
            count: whole_number(args, "limit", 1)?,
            jq,
        })
    }
}

/// The argument `name` as an integer >= `min`; absent or null is `None`. A float with no
/// fraction (`3.0`) is accepted: some clients send every number as a float.
fn whole_number(
    args: &serde_json::Map<String, Value>,
    name: &str,
    min: u64,
) -> Result<Option<usize>, String> {
    let value = match args.get(name) {
        None | Some(Value::Null) => return Ok(None),
        Some(value) => value,
    };
    let number = value.as_u64().or_else(|| {
        value
            .as_f64()
            .filter(|f| f.fract() == 0.0 && *f >= 0.0 && *f < 2f64.powi(53))
            .map(|f| f as u64)
    });
    match number {
        Some(n) if n >= min => Ok(Some(usize::try_from(n).unwrap_or(usize::MAX))),
        _ => Err(format!(
            "`{name}` must be an integer >= {min}, not {}",
            short(value)
        )),
    }
}

/// A JSON type's name with its article, for messages.
pub fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A value for a message: its JSON when short, else its kind.
fn short(value: &Value) -> String {
    let text = value.to_string();
    if text.len() <= 40 {
        text
    } else {
        kind(value).to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_full_call_is_read() {
        let args = ReadArgs::parse(&json!({
            "uri": "envelope://x", "pointer": "/a/0", "offset": 3, "limit": 2.0, "jq": ".x"
        }))
        .unwrap();
        assert_eq!(
            args,
            ReadArgs {
                uri: "envelope://x".into(),
                pointer: "/a/0".into(),
                offset: Some(3),
                count: Some(2),
                jq: Some(".x".into()),
            }
        );
        let args = ReadArgs::parse(&json!({"uri": "u", "pointer": null})).unwrap();
        assert_eq!(
            (args.pointer.as_str(), args.offset, args.count, args.jq),
            ("", None, None, None)
        );
    }

    #[test]
    fn each_wrong_argument_is_named() {
        for (args, words) in [
            (json!(null), "`uri` is required"),
            (json!([1]), "must be an object"),
            (json!({"uri": 3}), "`uri` must be a string"),
            (json!({"uri": "u", "pointer": "a/b"}), "JSON Pointer"),
            (
                json!({"uri": "u", "pointer": 1}),
                "`pointer` must be a string",
            ),
            (
                json!({"uri": "u", "offset": -1}),
                "`offset` must be an integer >= 0, not -1",
            ),
            (
                json!({"uri": "u", "offset": 1.5}),
                "`offset` must be an integer",
            ),
            (
                json!({"uri": "u", "offset": "3"}),
                "`offset` must be an integer >= 0, not \"3\"",
            ),
            (
                json!({"uri": "u", "limit": 0}),
                "`limit` must be an integer >= 1, not 0",
            ),
            (json!({"uri": "u", "jq": true}), "`jq` must be a string"),
            (json!({"uri": "u", "jq": "x".repeat(5000)}), "at most 4096"),
            (
                json!({"uri": "u", "query": "."}),
                "unknown argument `query`",
            ),
        ] {
            let err = ReadArgs::parse(&args).unwrap_err();
            assert!(err.contains(words), "{args}: {err}");
        }
    }
}
