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
//! The result is read with the pull reader over its bytes, never parsed whole: a text
//! block is decoded, an item of `structuredContent` parsed alone, a mirror compared with
//! `structuredContent` side by side. As a parse would read it, but for a member name
//! written twice in `structuredContent`: each place is indexed (a parse keeps the last).
//!
//! Lines longer than [`MAX_CHUNK_CHARS`] are cut into pieces of that many characters (each at
//! its own offset): a hit shows the piece that matched, not a megabyte of one line.

use std::borrow::Cow;

use envelope::json::reader::{Event, Piece, Reader, Str};
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
/// its chunks are made of ([`Split::each_chunk`]), all borrowed from its bytes.
pub struct Split<'v> {
    /// What the result holds.
    pub kind: Kind,
    /// One line: what it is and how big.
    pub summary: String,
    /// The text blocks indexed as lines (not the mirror of `structuredContent`), with
    /// their pointers, as written: read in pieces, never decoded whole (a text that may
    /// hold JSON is decoded for a moment, to compare and describe it).
    texts: Vec<(String, Str<'v>)>,
    /// What is walked as JSON, as written: `structuredContent`, or a root that is no
    /// `CallToolResult`.
    walked: Option<(&'v [u8], &'static str)>,
}

/// Reads a stored result (see the [module documentation](self)) with the pull reader: only
/// the text blocks are decoded (each once), and the items of `structuredContent` are parsed
/// one at a time. A value that is not a `CallToolResult` is indexed as
/// `structuredContent` would be, at the root pointer.
///
/// # Errors
///
/// serde_json's, when `result` is not JSON.
pub fn split(result: &[u8]) -> Result<Split<'_>, serde_json::Error> {
    let mut check = Reader::new(result);
    check.skip()?;
    check.next()?;
    let [structured, content] = members_named(result, ["structuredContent", "content"]);
    let mut texts: Vec<(String, Str<'_>)> = Vec::new();
    let mut first_json: Option<Shape> = None;
    for (i, block) in content.map(items).into_iter().flatten().enumerate() {
        let [kind, text, resource] = members_named(block, ["type", "text", "resource"]);
        let (pointer, text) = match kind.and_then(string_of).as_deref() {
            Some("text") => (format!("/content/{i}/text"), text),
            Some("resource") => (
                format!("/content/{i}/resource/text"),
                resource.and_then(|r| members_named(r, ["text"])[0]),
            ),
            _ => continue,
        };
        let Some(text) = text.and_then(written_string) else {
            continue;
        };
        // A mirror, or JSON to describe, is an object or an array written as text.
        if starts_container(&text) {
            let decoded = text.value();
            if structured.is_some_and(|structured| same_json(decoded.as_bytes(), structured)) {
                continue;
            }
            if first_json.is_none() {
                first_json = Shape::of_text(decoded.as_bytes());
            }
        }
        texts.push((pointer, text));
    }
    let walked = match structured {
        Some(structured) => Some((structured, "/structuredContent")),
        None if content.is_none() => Some((result, "")),
        None => None,
    };
    // A `structuredContent` of strings beside text blocks (server-filesystem's
    // `{"content": "<the file>"}`) is the text again: the result is text.
    let wrapper = structured.is_some_and(|structured| {
        structured.first() == Some(&b'{')
            && !texts.is_empty()
            && members(structured).all(|(_, value)| value.first() == Some(&b'"'))
    });
    let described = match structured.filter(|_| !wrapper) {
        Some(structured) => Some(Shape::of_text(structured).unwrap_or(Shape::Other)),
        None => first_json,
    };
    let kind = match &described {
        Some(Shape::Records { .. }) => Kind::Records,
        Some(_) => Kind::Json,
        None if content.is_none() => Kind::Json,
        None => Kind::Text,
    };
    let written: Vec<Str<'_>> = texts.iter().map(|(_, text)| *text).collect();
    let summary = summary(described.as_ref(), TextLines::of_written(&written));
    Ok(Split {
        kind,
        summary,
        texts,
        walked,
    })
}

impl Split<'_> {
    /// Hands `each` every chunk, in the order of the result, one at a time; stops at its
    /// first error.
    pub fn each_chunk<E>(&self, each: &mut dyn FnMut(Chunk<'_>) -> Result<(), E>) -> Result<(), E> {
        for (pointer, text) in &self.texts {
            written_lines(text, pointer, each)?;
        }
        if let Some((value, pointer)) = self.walked {
            let texts: Vec<Str<'_>> = self.texts.iter().map(|(_, text)| *text).collect();
            walk(value, pointer, &texts, 0, each)?;
        }
        Ok(())
    }
}

/// The members of the object `value` is (none when it is not one): each name, decoded, with
/// its value as written. A name written twice comes twice.
fn members(value: &[u8]) -> impl Iterator<Item = (Cow<'_, str>, &[u8])> {
    let mut reader = Reader::new(value);
    let open = matches!(reader.next(), Ok(Some(Event::BeginObject)));
    std::iter::from_fn(move || {
        if !open {
            return None;
        }
        let Event::Key(key) = reader.next().ok()?? else {
            return None;
        };
        let span = reader.skip().ok()??;
        Some((key.value(), &value[span]))
    })
}

/// The items of the array `value` is (none when it is not one), each as written.
fn items(value: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut reader = Reader::new(value);
    let open = matches!(reader.next(), Ok(Some(Event::BeginArray)));
    std::iter::from_fn(move || {
        if !open {
            return None;
        }
        let span = reader.skip().ok()??;
        Some(&value[span])
    })
}

/// The values of the members `names` of the object `value` is, as written, in one pass:
/// for a name written twice, the last (as a parse keeps it).
fn members_named<'a, const N: usize>(value: &'a [u8], names: [&str; N]) -> [Option<&'a [u8]>; N] {
    let mut found = [None; N];
    for (key, member) in members(value) {
        if let Some(at) = names.iter().position(|name| key == *name) {
            found[at] = Some(member);
        }
    }
    found
}

/// The string `value` is, decoded (borrowed when it has no escapes).
fn string_of(value: &[u8]) -> Option<Cow<'_, str>> {
    written_string(value).map(|text| text.value())
}

/// The string `value` is, as written (read in pieces, not decoded).
fn written_string(value: &[u8]) -> Option<Str<'_>> {
    match Reader::new(value).next() {
        Ok(Some(Event::String(text))) => Some(text),
        _ => None,
    }
}

/// Whether the string `text` starts as an object or an array would (white space aside),
/// read from its first pieces.
fn starts_container(text: &Str<'_>) -> bool {
    for piece in text.pieces() {
        let first = match piece {
            Piece::Text(run) => run.trim_ascii_start().chars().next(),
            Piece::Char(c) => Some(c).filter(|c| !c.is_ascii_whitespace()),
        };
        if let Some(first) = first {
            return matches!(first, '{' | '[');
        }
    }
    false
}

/// Whether the string written as `written` is `text`, compared piece by piece (neither is
/// decoded whole).
fn same_string(written: &Str<'_>, text: &str) -> bool {
    let mut rest = text;
    for piece in written.pieces() {
        match piece {
            Piece::Text(run) => match rest.strip_prefix(run) {
                Some(after) => rest = after,
                None => return false,
            },
            Piece::Char(c) => match rest.strip_prefix(c) {
                Some(after) => rest = after,
                None => return false,
            },
        }
    }
    rest.is_empty()
}

/// A value as written, as its compact JSON (as `serde_json` writes it: what an item or a
/// scalar is indexed as). Parsed alone: one item at a time is held.
fn compact(value: &[u8]) -> String {
    serde_json::from_slice::<Value>(value).map_or_else(|_| String::new(), |v| v.to_string())
}

/// Whether JSON `text` is the same value as `value` (as their parses compare: `1` is not
/// `1.0`, objects whatever their order), read side by side by the pull reader, nothing
/// built. Objects written in another order are parsed and compared when both are small;
/// a large one is taken as another value (its text is then indexed too: the same hits
/// twice, never a hit lost).
fn same_json(text: &[u8], value: &[u8]) -> bool {
    const PARSED_UP_TO: usize = 1 << 20;
    let (mut a, mut b) = (Reader::new(text), Reader::new(value));
    loop {
        let (Ok(x), Ok(y)) = (a.next(), b.next()) else {
            return false;
        };
        let same = match (x, y) {
            (None, None) => return true,
            (Some(Event::Number(x)), Some(Event::Number(y))) => number(x) == number(y),
            (Some(Event::String(x)), Some(Event::String(y))) => x.value() == y.value(),
            (Some(Event::Key(x)), Some(Event::Key(y))) if x.value() != y.value() => {
                // Another order, perhaps.
                return text.len() + value.len() <= PARSED_UP_TO
                    && serde_json::from_slice::<Value>(text).ok()
                        == serde_json::from_slice::<Value>(value).ok();
            }
            (Some(Event::Key(_)), Some(Event::Key(_))) => true,
            (x, y) => x == y,
        };
        if !same {
            return false;
        }
    }
}

/// Whether `text` starts as an object or an array would (white space aside).
fn holds_container(text: &[u8]) -> bool {
    matches!(text.trim_ascii_start().first(), Some(b'{' | b'['))
}

/// A number as a parse reads it.
fn number(written: &str) -> Option<serde_json::Number> {
    serde_json::from_str(written).ok()
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
    /// The shape of the JSON `text` holds, when it is an object or an array (all of it
    /// JSON), read with the pull reader: items counted and values passed over, nothing
    /// built. As `Shape::of_value` of its parse (the tests' oracle) but for a key written twice (the first
    /// place's value is the one looked at).
    fn of_text(text: &[u8]) -> Option<Shape> {
        if !holds_container(text) {
            return None;
        }
        let mut reader = Reader::new(text);
        let shape = match reader.next().ok()?? {
            Event::BeginArray => {
                let (count, fields) = count_items(&mut reader)?;
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
                            let (count, fields) = count_items(&mut reader)?;
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
fn count_items(reader: &mut Reader<'_>) -> Option<(usize, Vec<String>)> {
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

/// The lines of the text blocks, as a summary says them: how many (as `str::lines` counts
/// them) and the first that is not blank, trimmed (its first [`FIRST_LINE_BYTES`] at most:
/// the summary shows 160 characters).
struct TextLines {
    count: usize,
    first: String,
}

/// How much of the first line [`TextLines`] keeps: more than a summary's 160 characters
/// of any width.
const FIRST_LINE_BYTES: usize = 1024;

impl TextLines {
    /// The lines of `texts` read in pieces: a line is held only while it may be the first
    /// that is not blank, and only its first [`FIRST_LINE_BYTES`].
    fn of_written(texts: &[Str<'_>]) -> TextLines {
        let mut lines = TextLines {
            count: 0,
            first: String::new(),
        };
        let mut line = FirstLine::default();
        let mut found = false;
        let mut char_buffer = [0u8; 4];
        for text in texts {
            // Whether the line read so far has any character.
            let mut line_empty = true;
            for piece in text.pieces() {
                let run: &str = match piece {
                    Piece::Char('\n') => {
                        lines.count += 1;
                        found = found || line.end(&mut lines.first);
                        line_empty = true;
                        continue;
                    }
                    Piece::Char(c) => c.encode_utf8(&mut char_buffer),
                    Piece::Text(run) => run,
                };
                line_empty &= run.is_empty();
                if !found {
                    line.push(run);
                }
            }
            // The last line counts unless it is empty (as `str::lines` counts).
            if !line_empty {
                lines.count += 1;
            }
            found = found || line.end(&mut lines.first);
        }
        lines
    }
}

/// A line that may be the first that is not blank, as read: its start (leading white space
/// left out) up to [`FIRST_LINE_BYTES`], and whether text comes after that.
#[derive(Default)]
struct FirstLine {
    kept: String,
    /// Characters were left out after `kept`.
    capped: bool,
    /// Some of them are not white space.
    text_after: bool,
}

impl FirstLine {
    fn push(&mut self, run: &str) {
        let run = match self.kept.is_empty() {
            true => run.trim_start(),
            false => run,
        };
        let room = FIRST_LINE_BYTES.saturating_sub(self.kept.len());
        let cut = (0..=room.min(run.len()))
            .rev()
            .find(|at| run.is_char_boundary(*at))
            .unwrap_or(0);
        self.kept.push_str(&run[..cut]);
        if cut < run.len() {
            self.capped = true;
            self.text_after |= !run[cut..].trim().is_empty();
        }
    }

    /// Ends the line: puts it in `first` when it is not blank (trimmed as `str::trim` would
    /// trim the whole line) and says so; starts the next.
    fn end(&mut self, first: &mut String) -> bool {
        let line = std::mem::take(self);
        // With text after the part kept, the line's end is not white space: only its
        // start is trimmed (done as it was read).
        let trimmed = match line.capped && line.text_after {
            true => line.kept.as_str(),
            false => line.kept.trim(),
        };
        if trimmed.is_empty() {
            return false;
        }
        *first = trimmed.to_string();
        true
    }
}

/// One line: `records`: how many and their fields; `json`: the keys; `text`: the lines and
/// the first one.
fn summary(shape: Option<&Shape>, lines: TextLines) -> String {
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
            let TextLines { count, first } = lines;
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
        offset = line_at(line, offset, pointer, each)?;
    }
    Ok(())
}

/// [`lines`] of a string as written, read in pieces: one line is held at a time, at its
/// exact size (read ahead to its end first: a growing buffer would take up to twice the
/// longest line, a JSON text's one line being all of it), or borrowed when it is written
/// as one run (a text without escapes is one line).
fn written_lines<E>(
    text: &Str<'_>,
    pointer: &str,
    each: &mut dyn FnMut(Chunk<'_>) -> Result<(), E>,
) -> Result<(), E> {
    if !text.has_escapes() {
        return line_at(text.raw(), 0, pointer, each).map(drop);
    }
    let mut offset = 0;
    let mut line = String::new();
    let mut rest = text.pieces();
    loop {
        let mut ahead = rest.clone();
        let (mut parts, mut len, mut ended) = (0, 0, false);
        for piece in ahead.by_ref() {
            match piece {
                Piece::Char('\n') => {
                    ended = true;
                    break;
                }
                Piece::Char(c) => len += c.len_utf8(),
                Piece::Text(run) => len += run.len(),
            }
            parts += 1;
        }
        let current = match (parts, rest.clone().next()) {
            (0, _) => "",
            (1, Some(Piece::Text(run))) => run,
            _ => {
                line.clear();
                line.reserve_exact(len);
                for piece in rest.take(parts) {
                    match piece {
                        Piece::Char(c) => line.push(c),
                        Piece::Text(run) => line.push_str(run),
                    }
                }
                line.as_str()
            }
        };
        offset = line_at(current, offset, pointer, each)?;
        if !ended {
            return Ok(());
        }
        rest = ahead;
    }
}

/// The line at character `offset` as chunks (none when it is blank); the offset of the
/// next line (after this one and its '\n').
fn line_at<E>(
    line: &str,
    offset: usize,
    pointer: &str,
    each: &mut dyn FnMut(Chunk<'_>) -> Result<(), E>,
) -> Result<usize, E> {
    if !line.trim().is_empty() {
        pieces(line, Place::Char(offset), pointer, each)?;
    }
    Ok(offset + line.chars().count() + 1)
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

/// `structuredContent` (or any JSON value, as written) at `pointer`.
fn walk<E>(
    value: &[u8],
    pointer: &str,
    texts: &[Str<'_>],
    depth: usize,
    each: &mut dyn FnMut(Chunk<'_>) -> Result<(), E>,
) -> Result<(), E> {
    match value.first() {
        Some(b'[') => {
            for (index, item) in items(value).enumerate() {
                let text = string_of(item).unwrap_or_else(|| Cow::Owned(compact(item)));
                pieces(&text, Place::Item(index), pointer, each)?;
            }
        }
        Some(b'"') => {
            let text = string_of(value).unwrap_or_default();
            if !texts.iter().any(|written| same_string(written, &text)) {
                lines(&text, pointer, each)?;
            }
        }
        Some(b'{') => {
            let mut scalars = Vec::new();
            for (name, member) in members(value) {
                match member.first() {
                    Some(b'[' | b'"' | b'{') if depth < MAX_DEPTH => {
                        let inner = format!("{pointer}/{}", escape_token(&name));
                        walk(member, &inner, texts, depth + 1, each)?;
                    }
                    _ => scalars.push(format!("{name}: {}", compact(member))),
                }
            }
            if !scalars.is_empty() {
                // An object is read whole: the offset means nothing to envelope_read.
                pieces(&scalars.join(", "), Place::Item(0), pointer, each)?;
            }
        }
        _ => each(Chunk {
            pointer,
            offset: 0,
            unit: Unit::Item,
            text: &compact(value),
        })?,
    }
    Ok(())
}

/// A member name as a JSON Pointer reference token (RFC 6901: `~` → `~0`, `/` → `~1`).
fn escape_token(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}

#[cfg(test)]
mod tests;
