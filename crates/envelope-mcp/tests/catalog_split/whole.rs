//! The oracle of `tests/catalog_split.rs`: the catalog's reading of a stored result as it
//! was before it read with the pull reader — the result parsed whole into a `Value` and
//! walked — kept as the whole read the pull reader's is compared with (as the core's
//! streaming paths are compared with its whole read).

use std::borrow::Cow;

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

/// One indexed piece of a stored result, borrowed from the result while it is inserted:
/// chunks are made one at a time ([`Split::each_chunk`]), never all held at once (a 50 MB
/// log is about two million of them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Chunk<'a> {
    /// The JSON Pointer `envelope_read` takes.
    pub pointer: &'a str,
    /// Where `envelope_read` starts: a character index or an item index ([`Unit`]).
    pub offset: usize,
    /// What the offset counts.
    pub unit: Unit,
    /// The text indexed (and shown in a hit).
    pub text: &'a str,
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

/// A stored `CallToolResult` read for the index: its kind and a one-line summary, and what
/// its chunks are made of ([`Split::each_chunk`]).
pub struct Split<'v> {
    /// What the result holds.
    pub kind: Kind,
    /// One line: what it is and how big.
    pub summary: String,
    /// The text blocks indexed as lines (not the mirror of `structuredContent`), with
    /// their pointers.
    texts: Vec<(String, &'v str)>,
    /// What is walked as JSON: `structuredContent`, or a root that is no `CallToolResult`.
    walked: Option<(&'v Value, &'static str)>,
}

/// Reads a stored result (see the [module documentation](self)). A value that is not a
/// `CallToolResult` is indexed as `structuredContent` would be, at the root pointer.
pub fn split(result: &Value) -> Split<'_> {
    let structured = result.get("structuredContent");
    let mut texts: Vec<(String, &str)> = Vec::new();
    let mut first_json: Option<Shape> = None;
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
            if let Some(structured) = structured
                && json_of(text).is_some_and(|parsed| parsed == *structured)
            {
                continue;
            }
            if first_json.is_none() {
                first_json = json_of(text).map(|parsed| Shape::of_value(&parsed));
            }
            texts.push((pointer, text));
        }
    }
    let walked = match structured {
        Some(structured) => Some((structured, "/structuredContent")),
        None if result.get("content").is_none() => Some((result, "")),
        None => None,
    };
    let text_values: Vec<&str> = texts.iter().map(|(_, text)| *text).collect();
    // A `structuredContent` of strings beside text blocks (server-filesystem's
    // `{"content": "<the file>"}`) is the text again: the result is text.
    let wrapper = structured
        .and_then(Value::as_object)
        .is_some_and(|members| !texts.is_empty() && members.values().all(Value::is_string));
    let described = match structured.filter(|_| !wrapper) {
        Some(structured) => Some(Shape::of_value(structured)),
        None => first_json,
    };
    let kind = match &described {
        Some(Shape::Records { .. }) => Kind::Records,
        Some(_) => Kind::Json,
        None if result.get("content").is_none() => Kind::Json,
        None => Kind::Text,
    };
    let summary = summary(described.as_ref(), &text_values);
    Split {
        kind,
        summary,
        texts,
        walked,
    }
}

impl Split<'_> {
    /// Hands `each` every chunk, in the order of the result, one at a time; stops at its
    /// first error.
    pub fn each_chunk<E>(&self, each: &mut dyn FnMut(Chunk<'_>) -> Result<(), E>) -> Result<(), E> {
        for (pointer, text) in &self.texts {
            lines(text, pointer, each)?;
        }
        if let Some((value, pointer)) = self.walked {
            let texts: Vec<&str> = self.texts.iter().map(|(_, text)| *text).collect();
            walk(value, pointer, &texts, 0, each)?;
        }
        Ok(())
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

/// What JSON holds, as far as a summary says: the first array of records (itself, or one
/// of its members, with its name), else an object's keys.
#[derive(Debug, PartialEq, Eq)]
enum Shape {
    Records {
        name: Option<String>,
        count: usize,
        /// The first item's keys (at most [`SUMMARY_KEYS`]) when it is an object.
        fields: Vec<String>,
    },
    Object {
        /// The first [`SUMMARY_KEYS`] keys.
        keys: Vec<String>,
    },
    Other,
}

/// The most keys a summary names.
const SUMMARY_KEYS: usize = 8;

impl Shape {
    fn of_value(value: &Value) -> Shape {
        let keys_of = |value: &Value| -> Vec<String> {
            value.as_object().map_or(Vec::new(), |members| {
                members.keys().take(SUMMARY_KEYS).cloned().collect()
            })
        };
        let records = |name: Option<&str>, items: &Vec<Value>| Shape::Records {
            name: name.map(str::to_string),
            count: items.len(),
            fields: items.first().map_or(Vec::new(), keys_of),
        };
        match value {
            Value::Array(items) => records(None, items),
            Value::Object(members) => members
                .iter()
                .find_map(|(name, v)| v.as_array().map(|items| records(Some(name), items)))
                .unwrap_or_else(|| Shape::Object {
                    keys: keys_of(value),
                }),
            _ => Shape::Other,
        }
    }
}

/// One line: `records`: how many and their fields; `json`: the keys; `text`: the lines and
/// the first one.
fn summary(shape: Option<&Shape>, texts: &[&str]) -> String {
    let line = match shape {
        Some(Shape::Records {
            name,
            count,
            fields,
        }) => {
            let place = name.as_ref().map_or(String::new(), |n| format!(" in {n}"));
            match fields.is_empty() {
                true => format!("{count} items{place}"),
                false => format!("{count} records{place}, fields: {}", fields.join(", ")),
            }
        }
        Some(Shape::Object { keys }) => format!("JSON object, keys: {}", keys.join(", ")),
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

/// Where a chunk reads on from: the character it starts at (advancing along a line's
/// pieces), or an item (every piece of it reads on from the item).
#[derive(Clone, Copy)]
enum Place {
    Char(usize),
    Item(usize),
}

/// The non-blank lines of `text` as chunks at their character offsets, long lines in pieces.
fn lines<E>(
    text: &str,
    pointer: &str,
    each: &mut dyn FnMut(Chunk<'_>) -> Result<(), E>,
) -> Result<(), E> {
    let mut offset = 0;
    for line in text.split('\n') {
        let length = line.chars().count();
        if !line.trim().is_empty() {
            pieces(line, Place::Char(offset), pointer, each)?;
        }
        // The line and its '\n'.
        offset += length + 1;
    }
    Ok(())
}

/// `line` (read on from `place`) as chunks of at most [`MAX_CHUNK_CHARS`].
fn pieces<E>(
    line: &str,
    place: Place,
    pointer: &str,
    each: &mut dyn FnMut(Chunk<'_>) -> Result<(), E>,
) -> Result<(), E> {
    let line = line.strip_suffix('\r').unwrap_or(line);
    let mut start = 0;
    let mut place = place;
    while start < line.len() {
        let end = line[start..]
            .char_indices()
            .nth(MAX_CHUNK_CHARS)
            .map_or(line.len(), |(i, _)| start + i);
        let piece = &line[start..end];
        let (offset, unit) = match place {
            Place::Char(at) => (at, Unit::Char),
            Place::Item(index) => (index, Unit::Item),
        };
        each(Chunk {
            pointer,
            offset,
            unit,
            text: piece,
        })?;
        if let Place::Char(at) = &mut place {
            *at += piece.chars().count();
        }
        start = end;
    }
    Ok(())
}

/// `structuredContent` (or any JSON value) at `pointer`.
fn walk<E>(
    value: &Value,
    pointer: &str,
    texts: &[&str],
    depth: usize,
    each: &mut dyn FnMut(Chunk<'_>) -> Result<(), E>,
) -> Result<(), E> {
    match value {
        Value::Array(items) => {
            for (index, item) in items.iter().enumerate() {
                let text = match item {
                    Value::String(s) => Cow::Borrowed(s.as_str()),
                    other => Cow::Owned(other.to_string()),
                };
                pieces(&text, Place::Item(index), pointer, each)?;
            }
        }
        Value::String(text) => {
            if !texts.contains(&text.as_str()) {
                lines(text, pointer, each)?;
            }
        }
        Value::Object(members) => {
            let mut scalars = Vec::new();
            for (name, member) in members {
                match member {
                    Value::Array(_) | Value::String(_) | Value::Object(_) if depth < MAX_DEPTH => {
                        let inner = format!("{pointer}/{}", escape_token(name));
                        walk(member, &inner, texts, depth + 1, each)?;
                    }
                    other => scalars.push(format!("{name}: {other}")),
                }
            }
            if !scalars.is_empty() {
                // An object is read whole: the offset means nothing to envelope_read.
                pieces(&scalars.join(", "), Place::Item(0), pointer, each)?;
            }
        }
        scalar => each(Chunk {
            pointer,
            offset: 0,
            unit: Unit::Item,
            text: &scalar.to_string(),
        })?,
    }
    Ok(())
}

/// A member name as a JSON Pointer reference token (RFC 6901: `~` → `~0`, `/` → `~1`).
fn escape_token(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}
