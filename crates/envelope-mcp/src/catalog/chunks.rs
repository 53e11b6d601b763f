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

use std::borrow::Cow;

use envelope::json::reader::{Event, Reader};
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
            // Only a text beside `structuredContent` is parsed (to be compared with it);
            // otherwise its JSON is described by the pull reader, nothing built (a 10 MB
            // JSON text parsed whole took 9x its size).
            if let Some(structured) = structured
                && json_of(text).is_some_and(|parsed| parsed == *structured)
            {
                continue;
            }
            if first_json.is_none() {
                first_json = Shape::of_text(text);
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

    /// The shape of the JSON `text` holds, when it is an object or an array (all of it
    /// JSON), read with the pull reader: items counted and values passed over, nothing
    /// built. As [`Shape::of_value`] of its parse but for a key written twice (the first
    /// place's value is the one looked at).
    fn of_text(text: &str) -> Option<Shape> {
        let start = text.trim_start().as_bytes().first()?;
        if *start != b'{' && *start != b'[' {
            return None;
        }
        let mut reader = Reader::new(text.as_bytes());
        let shape = match reader.next().ok()?? {
            Event::BeginArray => {
                let (count, fields) = items(&mut reader)?;
                Shape::Records {
                    name: None,
                    count,
                    fields,
                }
            }
            _ => {
                let mut keys: Vec<String> = Vec::new();
                let mut records = None;
                while let Event::Key(key) = reader.next().ok()?? {
                    let name = key.value().into_owned();
                    if records.is_some() {
                        reader.skip().ok()?;
                    } else {
                        let depth = reader.depth();
                        if reader.next().ok()?? == Event::BeginArray {
                            let (count, fields) = items(&mut reader)?;
                            records = Some((name.clone(), count, fields));
                        }
                        // The rest of a value that was not an array.
                        while reader.depth() > depth {
                            reader.next().ok()??;
                        }
                    }
                    if keys.len() < SUMMARY_KEYS && !keys.contains(&name) {
                        keys.push(name);
                    }
                }
                match records {
                    Some((name, count, fields)) => Shape::Records {
                        name: Some(name),
                        count,
                        fields,
                    },
                    None => Shape::Object { keys },
                }
            }
        };
        // All of the text is the one value.
        reader.next().ok()?.is_none().then_some(shape)
    }
}

/// The items of an array whose `[` was read: how many, and the first one's keys when it is
/// an object; the reader is left after the `]`.
fn items(reader: &mut Reader<'_>) -> Option<(usize, Vec<String>)> {
    let mut fields = Vec::new();
    match reader.next().ok()?? {
        Event::EndArray => return Some((0, fields)),
        Event::BeginObject => {
            while let Event::Key(key) = reader.next().ok()?? {
                let name = key.value().into_owned();
                if fields.len() < SUMMARY_KEYS && !fields.contains(&name) {
                    fields.push(name);
                }
                reader.skip().ok()?;
            }
        }
        Event::BeginArray => {
            let depth = reader.depth();
            while reader.depth() >= depth {
                reader.next().ok()??;
            }
        }
        _ => {}
    }
    let mut count = 1;
    while reader.skip().ok()?.is_some() {
        count += 1;
    }
    Some((count, fields))
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// JSON values of every kind, records among them.
    fn json_value() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i32>().prop_map(Value::from),
            "[a-c\\\"é ]{0,4}".prop_map(Value::from),
        ];
        leaf.prop_recursive(4, 40, 6, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                proptest::collection::vec(("[a-e]{1,2}", inner), 0..6)
                    .prop_map(|members| Value::Object(members.into_iter().collect())),
            ]
        })
    }

    proptest::proptest! {
        /// The pull reader's description of a JSON text is its parse's, compact or pretty,
        /// and a text that is not all JSON has none.
        #[test]
        fn a_json_text_is_described_as_its_parse(value in json_value(), pretty: bool, tail: bool) {
            let mut text = match pretty {
                true => serde_json::to_string_pretty(&value).unwrap(),
                false => value.to_string(),
            };
            if tail {
                text.push_str(" x");
            }
            let expected = json_of(&text).map(|parsed| Shape::of_value(&parsed));
            proptest::prop_assert_eq!(Shape::of_text(&text), expected);
        }
    }

    #[test]
    fn a_large_json_text_is_summarized_as_records_without_being_parsed() {
        let rows: Vec<Value> = (0..3)
            .map(|i| json!({"id": i, "name": "n", "id2": [i]}))
            .collect();
        let text = json!({"total": 3, "rows": rows, "more": {"a": [1]}}).to_string();
        let result = json!({"content": [{"type": "text", "text": text}]});
        let split = split(&result);
        assert_eq!(split.kind, Kind::Records);
        assert_eq!(split.summary, "3 records in rows, fields: id, name, id2");
    }

    /// Every chunk of `split`, owned: (pointer, offset, unit, text).
    fn all(split: &Split<'_>) -> Vec<(String, usize, Unit, String)> {
        let mut out = Vec::new();
        let mut keep = |c: Chunk<'_>| -> Result<(), ()> {
            out.push((c.pointer.to_string(), c.offset, c.unit, c.text.to_string()));
            Ok(())
        };
        split.each_chunk(&mut keep).unwrap();
        out
    }

    #[test]
    fn text_lines_at_character_offsets() {
        let result = json!({"content": [{"type": "text", "text": "héllo\n\nwörld two\r\nlast"}]});
        let split = split(&result);
        let chunks = all(&split);
        let got: Vec<(usize, &str)> = chunks.iter().map(|c| (c.1, c.3.as_str())).collect();
        assert_eq!(got, vec![(0, "héllo"), (7, "wörld two"), (18, "last")]);
        assert!(chunks.iter().all(|c| c.0 == "/content/0/text"));
        assert_eq!(split.kind, Kind::Text);
        assert_eq!(split.summary, "4 lines: héllo");
    }

    #[test]
    fn long_lines_are_cut_into_pieces_at_their_offsets() {
        let line = "é".repeat(MAX_CHUNK_CHARS * 2 + 5);
        let result = json!({"content": [{"type": "text", "text": format!("a\n{line}")}]});
        let offsets: Vec<usize> = all(&split(&result)).iter().map(|c| c.1).collect();
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
        let chunks = all(&split);
        let got: Vec<(&str, usize, Unit)> =
            chunks.iter().map(|c| (c.0.as_str(), c.1, c.2)).collect();
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
        let chunks = all(&split);
        let got: Vec<(&str, &str)> = chunks
            .iter()
            .map(|c| (c.0.as_str(), c.3.as_str()))
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
