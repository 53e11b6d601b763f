//! A stored result cut into the pieces the full-text index holds, each with the place
//! `envelope_read` reads on from: a JSON Pointer into the stored `CallToolResult` and an
//! offset counted as `envelope_read` counts it (characters of a string, items of an array).
//!
//! - A text block (`/content/i/text`, or an embedded resource's `/content/i/resource/text`):
//!   one chunk per non-blank line, at the character offset where the line starts. The JSON
//!   a text block may hold is indexed as its lines too (pretty JSON has one member a line;
//!   compact JSON is one long line, cut into pieces as any long line is).
//! - `structuredContent`: each item of an array is one chunk (its compact JSON, or the
//!   string itself) at the array's pointer and the item's index, so a hit reads on with
//!   `offset` = the item; a string member is indexed as lines, like a text block; the
//!   scalars of an object are one chunk at the object's pointer.
//! - A text block that is the JSON mirror of `structuredContent` is left out (the records
//!   are indexed once, as records), and so is a string of `structuredContent` that repeats
//!   a text block word for word (server-filesystem's `read_text_file` sends the file twice).
//!
//! Lines longer than [`MAX_CHUNK_CHARS`] are cut into pieces of that many characters (each at
//! its own offset): a hit shows the piece that matched, not a megabyte of one line.

use serde_json::Value;

/// The most characters of one chunk.
pub const MAX_CHUNK_CHARS: usize = 400;

/// How deep `structuredContent` is walked for arrays and strings; deeper values are indexed
/// as the compact JSON of their parent's member.
const MAX_DEPTH: usize = 4;

/// Whether a chunk's offset counts characters of a string or items of an array.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// A line (or piece of one) of a string: the offset is a character index.
    Char,
    /// An item of an array: the offset is its index.
    Item,
}

impl Unit {
    /// The code kept in the index.
    pub fn code(self) -> &'static str {
        match self {
            Unit::Char => "c",
            Unit::Item => "i",
        }
    }
}

/// One indexed piece of a stored result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chunk {
    /// The JSON Pointer `envelope_read` takes.
    pub pointer: String,
    /// Where `envelope_read` starts: a character index or an item index ([`Unit`]).
    pub offset: usize,
    /// What the offset counts.
    pub unit: Unit,
    /// The text indexed (and shown in a hit).
    pub text: String,
}

/// What a stored result holds: the `kind` of `envelope_list`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Text blocks only (not JSON).
    Text,
    /// `structuredContent` (or a text block's JSON) with an array of items.
    Records,
    /// JSON that is not a list of records.
    Json,
}

impl Kind {
    /// `text`, `records` or `json`.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Text => "text",
            Kind::Records => "records",
            Kind::Json => "json",
        }
    }
}

/// The chunks of a stored `CallToolResult`, its kind and a one-line summary.
pub struct Split {
    /// Every chunk, in the order of the result.
    pub chunks: Vec<Chunk>,
    /// What the result holds.
    pub kind: Kind,
    /// One line: what it is and how big.
    pub summary: String,
}

/// Splits a stored result (see the [module documentation](self)). A value that is not a
/// `CallToolResult` is indexed as `structuredContent` would be, at the root pointer.
pub fn split(result: &Value) -> Split {
    let mut chunks = Vec::new();
    let structured = result.get("structuredContent");
    let mut texts: Vec<&str> = Vec::new();
    let mut first_json: Option<Value> = None;
    if let Some(blocks) = result.get("content").and_then(Value::as_array) {
        for (i, block) in blocks.iter().enumerate() {
            let (pointer, text) = match block.get("type").and_then(Value::as_str) {
                Some("text") => (format!("/content/{i}/text"), block.get("text")),
                Some("resource") => (
                    format!("/content/{i}/resource/text"),
                    block.get("resource").and_then(|r| r.get("text")),
                ),
                _ => continue,
            };
            let Some(text) = text.and_then(Value::as_str) else {
                continue;
            };
            let parsed = json_of(text);
            if let (Some(structured), Some(parsed)) = (structured, &parsed)
                && parsed == structured
            {
                continue;
            }
            if first_json.is_none() {
                first_json = parsed;
            }
            texts.push(text);
            lines(text, &pointer, &mut chunks);
        }
    }
    if let Some(structured) = structured {
        walk(structured, "/structuredContent", &texts, 0, &mut chunks);
    } else if result.get("content").is_none() {
        walk(result, "", &texts, 0, &mut chunks);
    }
    // A `structuredContent` of strings beside text blocks (server-filesystem's
    // `{"content": "<the file>"}`) is the text again: the result is text.
    let wrapper = structured
        .and_then(Value::as_object)
        .is_some_and(|members| !texts.is_empty() && members.values().all(Value::is_string));
    let described = structured.filter(|_| !wrapper).or(first_json.as_ref());
    let kind = match described {
        Some(value) if records(value).is_some() => Kind::Records,
        Some(_) => Kind::Json,
        None if result.get("content").is_none() => Kind::Json,
        None => Kind::Text,
    };
    let summary = summary(kind, described, &texts);
    Split {
        chunks,
        kind,
        summary,
    }
}

/// The JSON a text holds, when it is an object or an array.
fn json_of(text: &str) -> Option<Value> {
    let start = text.trim_start().as_bytes().first()?;
    if *start != b'{' && *start != b'[' {
        return None;
    }
    serde_json::from_str(text).ok()
}

/// The first array of records in `value`: itself, or one of its members (with its name).
fn records(value: &Value) -> Option<(Option<&str>, &Vec<Value>)> {
    match value {
        Value::Array(items) => Some((None, items)),
        Value::Object(members) => members
            .iter()
            .find_map(|(name, v)| v.as_array().map(|a| (Some(name.as_str()), a))),
        _ => None,
    }
}

/// One line: `records`: how many and their fields; `json`: the keys; `text`: the lines and
/// the first one.
fn summary(kind: Kind, value: Option<&Value>, texts: &[&str]) -> String {
    let line = match (kind, value) {
        (Kind::Records, Some(value)) => {
            let (name, items) = records(value).expect("records");
            let fields: Vec<&str> = items
                .first()
                .and_then(Value::as_object)
                .map(|o| o.keys().map(String::as_str).take(8).collect())
                .unwrap_or_default();
            let place = name.map_or(String::new(), |n| format!(" in {n}"));
            match fields.is_empty() {
                true => format!("{} items{place}", items.len()),
                false => format!(
                    "{} records{place}, fields: {}",
                    items.len(),
                    fields.join(", ")
                ),
            }
        }
        (Kind::Json, Some(Value::Object(members))) => {
            let keys: Vec<&str> = members.keys().map(String::as_str).take(8).collect();
            format!("JSON object, keys: {}", keys.join(", "))
        }
        _ => {
            let count: usize = texts.iter().map(|t| t.lines().count()).sum();
            let first = texts
                .iter()
                .flat_map(|t| t.lines())
                .map(str::trim)
                .find(|l| !l.is_empty())
                .unwrap_or("");
            let lines = if count == 1 { "line" } else { "lines" };
            format!("{count} {lines}: {first}")
        }
    };
    cut_chars(&line, 160)
}

/// `text` cut to `max` characters, with `…` when cut.
pub fn cut_chars(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

/// The non-blank lines of `text` as chunks at their character offsets, long lines in pieces.
fn lines(text: &str, pointer: &str, chunks: &mut Vec<Chunk>) {
    let mut offset = 0;
    for line in text.split('\n') {
        let length = line.chars().count();
        if !line.trim().is_empty() {
            pieces(line, offset, pointer, chunks);
        }
        // The line and its '\n'.
        offset += length + 1;
    }
}

/// `line` (starting at character `offset`) as chunks of at most [`MAX_CHUNK_CHARS`].
fn pieces(line: &str, offset: usize, pointer: &str, chunks: &mut Vec<Chunk>) {
    let line = line.strip_suffix('\r').unwrap_or(line);
    let mut start = 0;
    let mut at = offset;
    while start < line.len() {
        let end = line[start..]
            .char_indices()
            .nth(MAX_CHUNK_CHARS)
            .map_or(line.len(), |(i, _)| start + i);
        let piece = &line[start..end];
        chunks.push(Chunk {
            pointer: pointer.to_string(),
            offset: at,
            unit: Unit::Char,
            text: piece.to_string(),
        });
        at += piece.chars().count();
        start = end;
    }
}

/// `structuredContent` (or any JSON value) at `pointer`.
fn walk(value: &Value, pointer: &str, texts: &[&str], depth: usize, chunks: &mut Vec<Chunk>) {
    match value {
        Value::Array(items) => {
            for (index, item) in items.iter().enumerate() {
                let text = match item {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                let before = chunks.len();
                pieces(&text, 0, pointer, chunks);
                // Every piece of an item reads on from the item.
                for chunk in &mut chunks[before..] {
                    chunk.offset = index;
                    chunk.unit = Unit::Item;
                }
            }
        }
        Value::String(text) => {
            if !texts.contains(&text.as_str()) {
                lines(text, pointer, chunks);
            }
        }
        Value::Object(members) => {
            let mut scalars = Vec::new();
            for (name, member) in members {
                let inner = format!("{pointer}/{}", escape_token(name));
                match member {
                    Value::Array(_) | Value::String(_) | Value::Object(_) if depth < MAX_DEPTH => {
                        walk(member, &inner, texts, depth + 1, chunks)
                    }
                    other => scalars.push(format!("{name}: {other}")),
                }
            }
            if !scalars.is_empty() {
                let before = chunks.len();
                pieces(&scalars.join(", "), 0, pointer, chunks);
                // An object is read whole: the offset means nothing to envelope_read.
                for chunk in &mut chunks[before..] {
                    chunk.offset = 0;
                    chunk.unit = Unit::Item;
                }
            }
        }
        scalar => chunks.push(Chunk {
            pointer: pointer.to_string(),
            offset: 0,
            unit: Unit::Item,
            text: scalar.to_string(),
        }),
    }
}

/// A member name as a JSON Pointer reference token (RFC 6901: `~` → `~0`, `/` → `~1`).
fn escape_token(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn text_lines_at_character_offsets() {
        let result = json!({"content": [{"type": "text", "text": "héllo\n\nwörld two\r\nlast"}]});
        let split = split(&result);
        let got: Vec<(usize, &str)> = split
            .chunks
            .iter()
            .map(|c| (c.offset, c.text.as_str()))
            .collect();
        assert_eq!(got, vec![(0, "héllo"), (7, "wörld two"), (18, "last")]);
        assert!(split.chunks.iter().all(|c| c.pointer == "/content/0/text"));
        assert_eq!(split.kind, Kind::Text);
        assert_eq!(split.summary, "4 lines: héllo");
    }

    #[test]
    fn long_lines_are_cut_into_pieces_at_their_offsets() {
        let line = "é".repeat(MAX_CHUNK_CHARS * 2 + 5);
        let result = json!({"content": [{"type": "text", "text": format!("a\n{line}")}]});
        let offsets: Vec<usize> = split(&result).chunks.iter().map(|c| c.offset).collect();
        assert_eq!(
            offsets,
            vec![0, 2, 2 + MAX_CHUNK_CHARS, 2 + 2 * MAX_CHUNK_CHARS]
        );
    }

    #[test]
    fn records_are_items_and_the_mirror_is_not_indexed_twice() {
        let structured =
            json!({"rows": [{"id": 1, "name": "ada"}, {"id": 2, "name": "bob"}], "n": 2});
        let result = json!({
            "content": [{"type": "text", "text": structured.to_string()}],
            "structuredContent": structured,
        });
        let split = split(&result);
        let got: Vec<(&str, usize, Unit)> = split
            .chunks
            .iter()
            .map(|c| (c.pointer.as_str(), c.offset, c.unit))
            .collect();
        assert_eq!(
            got,
            vec![
                ("/structuredContent/rows", 0, Unit::Item),
                ("/structuredContent/rows", 1, Unit::Item),
                ("/structuredContent", 0, Unit::Item),
            ]
        );
        assert_eq!(split.kind, Kind::Records);
        assert_eq!(split.summary, "2 records in rows, fields: id, name");
    }

    #[test]
    fn a_string_repeating_a_text_block_is_indexed_once() {
        let file = "alpha\nbeta";
        let result = json!({
            "content": [{"type": "text", "text": file}],
            "structuredContent": {"content": file, "path/x": "gamma"},
        });
        let split = split(&result);
        let got: Vec<(&str, &str)> = split
            .chunks
            .iter()
            .map(|c| (c.pointer.as_str(), c.text.as_str()))
            .collect();
        assert_eq!(
            got,
            vec![
                ("/content/0/text", "alpha"),
                ("/content/0/text", "beta"),
                ("/structuredContent/path~1x", "gamma"),
            ]
        );
        assert_eq!(split.kind, Kind::Text);
        assert_eq!(split.summary, "2 lines: alpha");
    }
}
