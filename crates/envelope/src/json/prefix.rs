//! Reading the beginning of a JSON value whose end was not read: what detection keeps of a
//! member too large to hold (see [`detect_reader`](crate::detect::detect_reader)).
//!
//! [`parse_prefix`] builds the value the text would start with: containers keep their
//! complete items and members, a string cut short keeps the characters read, and whatever
//! was cut before it could be told (half a number, a key without its value, a literal) is
//! left out. Text that is wrong before it ends is refused (`None`): the prefix must be the
//! start of valid JSON.

use serde_json::{Map, Value};

/// The value `bytes` starts; `None` when they are not the start of a JSON value:
/// `{"a":[1,2,"xy` reads as `{"a":[1,2,"xy"]}` (the unit tests below have more).
pub(crate) fn parse_prefix(bytes: &[u8]) -> Option<Value> {
    let mut reader = Prefix { bytes, at: 0 };
    reader.skip_ws();
    match reader.value(0)? {
        Partial::Done(v) | Partial::Cut(Some(v)) => Some(v),
        Partial::Cut(None) => None,
    }
}

/// A value read to its end, or cut by the end of the text (with what could be kept of it).
enum Partial {
    Done(Value),
    Cut(Option<Value>),
}

/// Containers nested deeper than this are refused, as the whole read refuses them.
const MAX_DEPTH: usize = crate::json::parse::MAX_NESTING;

struct Prefix<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Prefix<'_> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    fn value(&mut self, depth: usize) -> Option<Partial> {
        let Some(first) = self.peek() else {
            return Some(Partial::Cut(None));
        };
        match first {
            b'{' | b'[' if depth >= MAX_DEPTH => None,
            b'{' => self.object(depth + 1),
            b'[' => self.array(depth + 1),
            b'"' => self.string(),
            _ => self.scalar(),
        }
    }

    fn array(&mut self, depth: usize) -> Option<Partial> {
        self.at += 1;
        let mut items = Vec::new();
        self.skip_ws();
        if self.peek() == Some(b']') {
            self.at += 1;
            return Some(Partial::Done(Value::Array(items)));
        }
        loop {
            self.skip_ws();
            match self.value(depth)? {
                Partial::Done(v) => items.push(v),
                Partial::Cut(v) => {
                    items.extend(v);
                    return Some(Partial::Cut(Some(Value::Array(items))));
                }
            }
            self.skip_ws();
            match self.peek() {
                None => return Some(Partial::Cut(Some(Value::Array(items)))),
                Some(b',') => self.at += 1,
                Some(b']') => {
                    self.at += 1;
                    return Some(Partial::Done(Value::Array(items)));
                }
                Some(_) => return None,
            }
        }
    }

    fn object(&mut self, depth: usize) -> Option<Partial> {
        self.at += 1;
        let mut map = Map::new();
        let cut = |map| Some(Partial::Cut(Some(Value::Object(map))));
        self.skip_ws();
        if self.peek() == Some(b'}') {
            self.at += 1;
            return Some(Partial::Done(Value::Object(map)));
        }
        loop {
            self.skip_ws();
            match self.peek() {
                None => return cut(map),
                Some(b'"') => {}
                Some(_) => return None,
            }
            // A key cut short names nothing: the member is left out.
            let Partial::Done(Value::String(key)) = self.string()? else {
                return cut(map);
            };
            self.skip_ws();
            match self.peek() {
                None => return cut(map),
                Some(b':') => self.at += 1,
                Some(_) => return None,
            }
            self.skip_ws();
            match self.value(depth)? {
                Partial::Done(v) => {
                    map.insert(key, v);
                }
                Partial::Cut(v) => {
                    if let Some(v) = v {
                        map.insert(key, v);
                    }
                    return cut(map);
                }
            }
            self.skip_ws();
            match self.peek() {
                None => return cut(map),
                Some(b',') => self.at += 1,
                Some(b'}') => {
                    self.at += 1;
                    return Some(Partial::Done(Value::Object(map)));
                }
                Some(_) => return None,
            }
        }
    }

    /// A string: decoded by serde_json when whole; cut short, the characters before the cut
    /// (a half escape or half a UTF-8 character left out).
    fn string(&mut self) -> Option<Partial> {
        let start = self.at;
        let mut i = start + 1;
        while i < self.bytes.len() {
            match self.bytes[i] {
                b'"' => {
                    self.at = i + 1;
                    let text = std::str::from_utf8(&self.bytes[start..self.at]).ok()?;
                    return serde_json::from_str(text).ok().map(Partial::Done);
                }
                b'\\' => i += 2,
                _ => i += 1,
            }
        }
        self.at = self.bytes.len();
        let body = &self.bytes[start + 1..];
        Some(Partial::Cut(Some(Value::String(cut_string(body)?))))
    }

    /// A number or literal: kept only when something after it shows that it ended.
    fn scalar(&mut self) -> Option<Partial> {
        let start = self.at;
        while self
            .peek()
            .is_some_and(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'+' | b'.'))
        {
            self.at += 1;
        }
        if self.at == self.bytes.len() {
            return Some(Partial::Cut(None));
        }
        let text = std::str::from_utf8(&self.bytes[start..self.at]).ok()?;
        serde_json::from_str(text).ok().map(Partial::Done)
    }
}

/// The characters of a string's body cut short: up to its last whole escape and its last
/// whole UTF-8 character; `None` when the part read is not valid.
fn cut_string(body: &[u8]) -> Option<String> {
    // Drop a trailing escape that the cut split (`\`, `\u12`).
    let mut end = body.len();
    if let Some(slash) = body.iter().rposition(|&b| b == b'\\') {
        // Backslashes before it pair up: an odd run ends in an escape that starts here.
        let run = body[..=slash]
            .iter()
            .rev()
            .take_while(|&&b| b == b'\\')
            .count();
        if run % 2 == 1 {
            let whole = match body.get(slash + 1) {
                Some(b'u') => slash + 6,
                Some(_) => slash + 2,
                None => usize::MAX,
            };
            if whole > body.len() {
                end = slash;
            }
        }
    }
    let body = &body[..end];
    // Half a UTF-8 character at the cut is left out.
    let body = match std::str::from_utf8(body) {
        Ok(_) => body,
        Err(e) if e.error_len().is_none() => &body[..e.valid_up_to()],
        Err(_) => return None,
    };
    let mut quoted = Vec::with_capacity(body.len() + 2);
    quoted.push(b'"');
    quoted.extend_from_slice(body);
    quoted.push(b'"');
    match serde_json::from_slice::<Value>(&quoted).ok()? {
        Value::String(s) => Some(s),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn whole_values_read_as_serde_json_reads_them() {
        for text in [
            r#"{"a":[1,2.5,"x\n",true,null],"b":{}}"#,
            "[]",
            r#""é\u00e9""#,
            " [ 1 , 2 ] ",
        ] {
            let whole: Value = serde_json::from_str(text).unwrap();
            assert_eq!(parse_prefix(text.as_bytes()), Some(whole), "{text}");
        }
    }

    #[test]
    fn cut_values_keep_what_was_whole() {
        let cases = [
            (r#"{"a":[1,2,"xy"#, json!({"a": [1, 2, "xy"]})),
            (r#"{"a":[1,2"#, json!({"a": [1]})),
            (r#"{"a":1,"b"#, json!({"a": 1})),
            (r#"{"a":1,"b":"#, json!({"a": 1})),
            (r#"{"a":tru"#, json!({})),
            (r#"{"a":"x\"#, json!({"a": "x"})),
            (r#"{"a":"x\u00"#, json!({"a": "x"})),
            (r#"{"a":"x\\"#, json!({"a": "x\\"})),
            ("{\"a\":\"\u{e9}\u{e9}", json!({"a": "éé"})),
            (
                r#"[{"content":[{"type":"text","text":"__ENVELOPE_V1__:abc"#,
                json!([{"content": [{"type": "text", "text": "__ENVELOPE_V1__:abc"}]}]),
            ),
        ];
        for (text, expected) in cases {
            assert_eq!(parse_prefix(text.as_bytes()), Some(expected), "{text}");
        }
        // Half of a two-byte character.
        assert_eq!(parse_prefix(b"[\"a\xC3"), Some(json!(["a"])));
    }

    #[test]
    fn wrong_text_is_refused() {
        for text in ["{1:2", "[1 2", r#"{"a" 1"#, "[tru]", "]", "[\"\\x\"]"] {
            assert_eq!(parse_prefix(text.as_bytes()), None, "{text}");
        }
        assert_eq!(parse_prefix(b"[\"a\xFF\"]"), None);
        assert_eq!(parse_prefix(b""), None);
    }
}
