//! Reading JSON text into `serde_json::Value` with errors that say where.

use serde_json::Value;

use crate::error::{Error, JsonErrorKind, Location};

/// Parses one JSON document. Trailing whitespace is allowed, anything else after it is not.
///
/// Nesting deeper than serde_json's limit (128) is a syntax error, not a stack overflow.
pub fn from_slice(input: &[u8]) -> Result<Value, Error> {
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
            kind: JsonErrorKind::Syntax,
            message: "byte-order mark before the document (JSON text must not start with one)"
                .into(),
            location: location_at(input, 0),
        });
    }
    if input.iter().all(u8::is_ascii_whitespace) {
        return Err(Error::Json {
            kind: JsonErrorKind::Eof,
            message: "empty input: expected a JSON document".into(),
            location: location_at(input, input.len()),
        });
    }
    // Already validated as UTF-8: `from_str` does not check it a second time.
    serde_json::from_str(text).map_err(|e| from_serde(&e, input))
}

/// Parses JSON from a `&str` (already known to be UTF-8).
pub fn from_str(input: &str) -> Result<Value, Error> {
    from_slice(input.as_bytes())
}

/// Turns a serde_json error into ours, adding the byte offset.
pub fn from_serde(e: &serde_json::Error, input: &[u8]) -> Error {
    use serde_json::error::Category;
    let kind = match e.classify() {
        Category::Eof => JsonErrorKind::Eof,
        _ => JsonErrorKind::Syntax,
    };
    let message = message_of(e);
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

/// serde_json's message without its " at line L column C" (we print locations ourselves).
pub fn message_of(e: &serde_json::Error) -> String {
    let text = e.to_string();
    match text.rsplit_once(" at line ") {
        Some((message, _)) => message.to_string(),
        None => text,
    }
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
