//! Reading JSON text into `serde_json::Value` with errors that say where.

use serde_json::Value;

use crate::error::{Error, JsonErrorKind, Location};

/// The most arrays and objects serde_json reads nested inside each other: its counter
/// starts at 128 and an opening bracket that brings it to 0 is refused, so 127 levels read
/// and the 128th is a "recursion limit exceeded" syntax error at that bracket.
pub(crate) const MAX_NESTING: usize = 127;

/// Parses one JSON document. Trailing whitespace is allowed, anything else after it is not.
///
/// Nesting deeper than serde_json's limit (127 levels) is a syntax error, not a stack
/// overflow.
pub fn from_slice(input: &[u8]) -> Result<Value, Error> {
    let text = checked_text(input)?;
    // Already validated as UTF-8: `from_str` does not check it a second time. What
    // `serde_json::from_str` does, with the error about data after the document told apart.
    let mut de = serde_json::Deserializer::from_str(text);
    let value = serde::Deserialize::deserialize(&mut de).map_err(|e| from_serde(&e, input))?;
    de.end().map_err(|e| trailing(&e, input))?;
    Ok(value)
}

/// The error [`from_slice`] gives for data after the document.
pub(crate) fn trailing(e: &serde_json::Error, input: &[u8]) -> Error {
    match from_serde(e, input) {
        Error::Json { location, .. } => Error::Json {
            kind: JsonErrorKind::TrailingData,
            message: TRAILING_DATA.into(),
            location,
        },
        other => other,
    }
}

/// `input` as text, or the error [`from_slice`] gives for bytes that are not UTF-8, start
/// with a byte-order mark, or hold only white space.
pub(crate) fn checked_text(input: &[u8]) -> Result<&str, Error> {
    let text = match std::str::from_utf8(input) {
        Ok(text) => text,
        Err(e) => {
            return Err(Error::Json {
                kind: JsonErrorKind::Utf8,
                message: "input is not valid UTF-8".into(),
                location: location_at(input, e.valid_up_to()),
            });
        }
    };
    if input.starts_with(b"\xEF\xBB\xBF") {
        return Err(Error::Json {
            kind: JsonErrorKind::Bom,
            message: "byte-order mark before the document (JSON text must not start with one)"
                .into(),
            location: location_at(input, 0),
        });
    }
    if input.iter().all(u8::is_ascii_whitespace) {
        return Err(Error::Json {
            kind: JsonErrorKind::Eof,
            message: EMPTY_INPUT.into(),
            location: location_at(input, input.len()),
        });
    }
    Ok(text)
}

/// Parses JSON from a `&str` (already known to be UTF-8).
pub fn from_str(input: &str) -> Result<Value, Error> {
    from_slice(input.as_bytes())
}

/// Turns a serde_json error reading `input` (from its start) into ours, adding the byte
/// offset; the nesting limit is [`JsonErrorKind::Depth`].
pub fn from_serde(e: &serde_json::Error, input: &[u8]) -> Error {
    use serde_json::error::Category;
    let (kind, message) = match e.classify() {
        Category::Eof => (JsonErrorKind::Eof, message_of(e)),
        _ if is_nesting_limit(input, e) => (JsonErrorKind::Depth, depth_message()),
        _ => (JsonErrorKind::Syntax, message_of(e)),
    };
    let offset = offset_of(input, e.line(), e.column());
    Error::Json {
        kind,
        message,
        location: Location {
            line: Some(e.line()),
            column: Some(e.column()),
            offset: Some(offset),
            pointer: None,
        },
    }
}

/// The message of an input with no document in it (nothing, or only whitespace), the same
/// for every command (`validate`'s `json.eof` finding too).
pub(crate) const EMPTY_INPUT: &str = "empty input: expected a JSON document";

/// The message of [`JsonErrorKind::TrailingData`], the same for every command.
pub(crate) const TRAILING_DATA: &str = "data after the end of the document";

/// The message of [`JsonErrorKind::Depth`], the same for every command.
pub(crate) fn depth_message() -> String {
    format!(
        "arrays and objects nested deeper than {MAX_NESTING} levels (the limit of every command)"
    )
}

/// serde_json's message without its " at line L column C" (we print locations ourselves).
pub fn message_of(e: &serde_json::Error) -> String {
    let text = e.to_string();
    match text.rsplit_once(" at line ") {
        Some((message, _)) => message.to_string(),
        None => text,
    }
}

/// Whether `e`, the error of serde_json reading `input` from its start, is its nesting limit
/// ([`MAX_NESTING`]). Told by position, not by the message: a syntax error at a `[` or `{`
/// that starts a value with [`MAX_NESTING`] containers open around it. Everything before
/// the error is the start of a valid document (serde_json stops at the first problem), so
/// a scan that only tracks strings, brackets and the last token reads it right.
pub(crate) fn is_nesting_limit(input: &[u8], e: &serde_json::Error) -> bool {
    if e.classify() != serde_json::error::Category::Syntax {
        return false;
    }
    let at = offset_of(input, e.line(), e.column());
    if !matches!(input.get(at), Some(b'[' | b'{')) {
        return false;
    }
    // Containers open before `at` (`true`: an array) and the last token outside strings.
    let mut open: Vec<bool> = Vec::new();
    let mut last = None;
    let (mut in_string, mut escaped) = (false, false);
    for &b in &input[..at] {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b' ' | b'\t' | b'\n' | b'\r' => continue,
            b'[' | b'{' => open.push(b == b'['),
            b']' | b'}' => {
                open.pop();
            }
            b'"' => in_string = true,
            _ => {}
        }
        last = Some(b);
    }
    // Where a value starts: after `:`, `[`, or `,` in an array (after `{` or `,` in an
    // object a key is expected: a bracket there is another syntax error).
    let value_expected = match last {
        Some(b':' | b'[') => true,
        Some(b',') => open.last() == Some(&true),
        _ => false,
    };
    value_expected && open.len() == MAX_NESTING
}

/// Byte offset of a 1-based line and column (serde_json counts columns in bytes).
fn offset_of(input: &[u8], line: usize, column: usize) -> usize {
    let mut line_start = 0;
    for _ in 1..line {
        match input[line_start..].iter().position(|&b| b == b'\n') {
            Some(p) => line_start += p + 1,
            None => break,
        }
    }
    (line_start + column.saturating_sub(1)).min(input.len())
}

/// Line and column of a byte offset.
pub fn location_at(input: &[u8], offset: usize) -> Location {
    let before = &input[..offset.min(input.len())];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let line_start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |p| p + 1);
    Location {
        line: Some(line),
        column: Some(offset - line_start + 1),
        offset: Some(offset),
        pointer: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nested(depth: usize) -> String {
        format!("{}{}", "[".repeat(depth), "]".repeat(depth))
    }

    fn error_of(text: &str) -> serde_json::Error {
        serde_json::from_str::<Value>(text).unwrap_err()
    }

    #[test]
    fn serde_json_reads_127_levels_and_refuses_the_128th() {
        assert!(serde_json::from_str::<Value>(&nested(MAX_NESTING)).is_ok());
        let e = error_of(&nested(MAX_NESTING + 1));
        assert!(is_nesting_limit(nested(MAX_NESTING + 1).as_bytes(), &e));
        // At the 128th bracket.
        assert_eq!((e.line(), e.column()), (1, MAX_NESTING + 1));
        let objects = format!("{}1{}", r#"{"a":"#.repeat(200), "}".repeat(200));
        assert!(is_nesting_limit(objects.as_bytes(), &error_of(&objects)));
    }

    #[test]
    fn the_nesting_limit_is_told_by_position() {
        // `n` arrays open, then `inner`.
        let deep = |n: usize, inner: &str| format!("{}{inner}", "[".repeat(n));
        let all = MAX_NESTING;
        let cases = [
            // The limit, wherever the 128th container starts a value.
            (deep(all, "{"), true),
            (deep(all - 1, r#"{"a":["#), true),
            (deep(all, "1,\n  {"), true),
            (deep(all, r#""]]]\"[", ["#), true),
            (format!("{}  [", " [\r\n".repeat(all)), true),
            // Other errors at a bracket, with as many containers open.
            (deep(all - 1, r#"{"a" ["#), false),
            (deep(all - 1, r#"{"a":1, {"#), false),
            (deep(all - 1, "{["), false),
            (deep(all, "1 ["), false),
            // Not at a bracket, or not that deep.
            (deep(all, "1,]"), false),
            (deep(all, "tru"), false),
            (deep(all - 1, "1,\n  {"), false),
            ("[[{]".to_string(), false),
            (nested(all + 1).replacen('[', "\"[\"", 1), false),
        ];
        for (text, expected) in cases {
            let e = error_of(&text);
            assert_eq!(
                is_nesting_limit(text.as_bytes(), &e),
                expected,
                "{text:?}: {e}"
            );
            // The position agrees with serde_json's message (checked here only).
            let by_message = e.to_string().contains("recursion limit");
            assert_eq!(by_message, expected, "{text:?}: {e}");
        }
    }
}
