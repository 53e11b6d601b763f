//! The notice of a cut result: what was cut, what the cut part holds, and the exact calls
//! that query it and read on — what a model needs to act without guessing.
//!
//! ```text
//! Output truncated to fit 16384 bytes: /structuredContent/rows kept 120 of 100000 items.
//! Narrow the request or page through the rest. /structuredContent/rows: records;
//! fields: id (number), name (string), kind (string). Query: envelope_read {"uri":…,
//! "pointer":"/structuredContent/rows","jq":"group_by(.kind) | map({kind: .[0].kind,
//! count: length})"} Read on: envelope_read {"uri":…,"pointer":…,"offset":120}
//! ```
//!
//! The facts are read from the stored result's text with the library's pull reader (the
//! cut part only: what comes before it is passed over, nothing is built), and take at most
//! [`SHARE`] of the limit; what does not fit is left out, the call that reads on never. For
//! records: their fields and types (from the first [`SAMPLE`]; how many, the hint says). For a long text:
//! its lines, and an outline — the markdown headings with their line numbers, or the keys of
//! the JSON object it holds with their pointers.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};

use envelope::json::reader::{Event, Piece, Reader, Str};
use serde_json::json;

/// The most of the limit the facts and the query take, in the notice and its copy in the
/// `_meta` marker together: one eighth.
pub(crate) const SHARE: usize = 8;

/// Records whose fields are read.
const SAMPLE: usize = 20;

/// Headings or keys an outline names at most.
const OUTLINE: usize = 12;

/// The notices of one cut result (the cut is tried several times; the facts of a part are
/// read once).
pub(crate) struct Notices<'a> {
    /// The stored result's JSON.
    full: &'a [u8],
    /// The URI the calls name.
    uri: &'a str,
    /// Whether `envelope_search` is offered (then the facts show a search call too).
    search: bool,
    /// The facts of the last part asked for.
    facts: RefCell<Option<(String, Vec<String>)>>,
}

impl<'a> Notices<'a> {
    pub(crate) fn new(full: &'a [u8], uri: &'a str, search: bool) -> Self {
        Notices {
            full,
            uri,
            search,
            facts: RefCell::new(None),
        }
    }

    /// The notice: `hint` (what was cut), the facts of the cut part at `pointer` and a
    /// query, as many as fit in the share of `limit`, then the call that reads on from
    /// `offset`.
    pub(crate) fn compose(&self, hint: &str, read_on: Option<(&str, u64)>, limit: usize) -> String {
        let Some((pointer, offset)) = read_on else {
            return hint.to_string();
        };
        let mut cached = self.facts.borrow_mut();
        if cached.as_ref().is_none_or(|(p, _)| p != pointer) {
            *cached = Some((
                pointer.to_string(),
                facts(self.full, pointer, self.uri, self.search),
            ));
        }
        let parts = cached
            .as_ref()
            .map(|(_, f)| f.as_slice())
            .unwrap_or_default();
        // The notice is written twice (the text block and the marker's copy).
        let room = limit / SHARE / 2;
        let mut notice = hint.to_string();
        let mut used = 0;
        for part in parts {
            let cost = part.len() + 1;
            if used + cost > room {
                break;
            }
            used += cost;
            notice.push(' ');
            notice.push_str(part);
        }
        let call = json!({"uri": self.uri, "pointer": pointer, "offset": offset});
        notice.push_str(&format!(" Read on: envelope_read {call}"));
        notice
    }
}

/// [`Notices::compose`] for one notice.
#[cfg(test)]
fn compose(
    hint: &str,
    full: &[u8],
    read_on: Option<(&str, u64)>,
    uri: &str,
    limit: usize,
) -> String {
    Notices::new(full, uri, true).compose(hint, read_on, limit)
}

/// The sentences about the value at `pointer` of `full`, most useful first.
fn facts(full: &[u8], pointer: &str, uri: &str, search: bool) -> Vec<String> {
    let mut reader = Reader::new(full);
    let Some(first) = find(&mut reader, pointer) else {
        return Vec::new();
    };
    match first {
        Event::BeginArray => records(&mut reader, pointer, uri, search),
        Event::String(text) => {
            let Lines {
                lines,
                headings,
                first_char,
            } = lines_of(&text);
            let mut out = vec![format!("{pointer}: {lines} lines.")];
            let mut filter = r#"split("\n") | map(select(test("error"; "i"))) | length"#;
            if !headings.is_empty() {
                out.push(format!("Outline (line, heading): {}.", headings.join("; ")));
            } else if matches!(first_char, Some('{' | '[')) {
                let outline = json_outline(&text.value(), pointer);
                if !outline.is_empty() {
                    // JSON text: queried as the JSON it holds.
                    filter = match first_char {
                        Some('{') => "fromjson | keys",
                        _ => "fromjson | length",
                    };
                }
                out.extend(outline);
            }
            out.push(format!(
                "Query: envelope_read {}",
                json!({"uri": uri, "pointer": pointer, "jq": filter})
            ));
            if search {
                out.push(format!(
                    "Search: envelope_search {}",
                    json!({"query": "error", "uri": uri})
                ));
            }
            out
        }
        _ => Vec::new(),
    }
}

/// What the notice says of a long text: its lines, its markdown headings (at most
/// [`OUTLINE`], each with its line number) and its first character that is not white space
/// (`{` or `[`: the text may be JSON).
#[derive(Debug, PartialEq)]
struct Lines {
    lines: u64,
    headings: Vec<String>,
    first_char: Option<char>,
}

/// [`Lines`] of a string's text, read on its raw text an escape at a time (a text of a
/// million lines has a million `\n` escapes; decoding it a piece at a time took twice as
/// long). A line starts after an escaped newline, and a heading's `#`s and space are never
/// escaped, so a heading is told on the raw text too. Lines are counted as a person counts
/// them: a last line without a newline counts too.
fn lines_of(text: &Str<'_>) -> Lines {
    let raw = text.raw();
    let bytes = raw.as_bytes();
    let mut lines = 1u64;
    let mut headings = Vec::new();
    let heading_at = |at: usize, lines: u64, headings: &mut Vec<String>| {
        if headings.len() < OUTLINE && is_heading(&raw[at..]) {
            let run = memchr::memchr(b'\\', &bytes[at..]).map_or(raw.len(), |end| at + end);
            headings.push(format!("{lines} {:?}", cut(&raw[at..run], 60)));
        }
    };
    heading_at(0, lines, &mut headings);
    let mut ends_with_newline = false;
    let mut escape_end = 0;
    for at in memchr::memchr_iter(b'\\', bytes) {
        // A backslash inside the escape before (`\\`) starts none.
        if at < escape_end {
            continue;
        }
        let (newline, len) = match bytes[at + 1] {
            b'n' => (true, 2),
            b'u' => match u32::from_str_radix(&raw[at + 2..at + 6], 16) {
                // A surrogate pair: two escapes, one character.
                Ok(0xD800..0xDC00) => (false, 12),
                Ok(code) => (code == 0x0A, 6),
                Err(_) => (false, 6),
            },
            _ => (false, 2),
        };
        escape_end = at + len;
        ends_with_newline = newline && escape_end == bytes.len();
        if newline {
            lines += 1;
            heading_at(escape_end, lines, &mut headings);
        }
    }
    if ends_with_newline {
        lines -= 1;
    }
    let first_char = text.pieces().find_map(|piece| match piece {
        Piece::Char('\n') => None,
        Piece::Char(c) => Some(c),
        Piece::Text(run) => run.trim_start().chars().next(),
    });
    Lines {
        lines,
        headings,
        first_char,
    }
}

/// The facts of an array whose `[` was just read: for records, the fields and types of the
/// first [`SAMPLE`] (how many there are, the hint says), and a query that groups by the
/// first text field. Nothing after them is read.
fn records(reader: &mut Reader<'_>, pointer: &str, uri: &str, search: bool) -> Vec<String> {
    let mut fields: Vec<(String, &'static str)> = Vec::new();
    let mut objects = true;
    // A word of the records to show a search with: the first word of a text field.
    let mut first_word: Option<String> = None;
    // The values each text field takes in the sample: the one with the fewest is the one
    // worth grouping by (a kind, a status: not a name every record has its own of).
    let mut values: HashMap<String, HashSet<String>> = HashMap::new();
    let mut sampled = 0;
    for _ in 0..SAMPLE {
        match reader.next() {
            Ok(Some(Event::EndArray)) => break,
            Ok(Some(Event::BeginObject)) => {
                sampled += 1;
                if fields_of(reader, &mut fields, &mut values, &mut first_word).is_none() {
                    return Vec::new();
                }
            }
            Ok(Some(Event::BeginArray)) => {
                objects = false;
                if skip_rest(reader).is_none() {
                    return Vec::new();
                }
            }
            Ok(Some(_)) => objects = false,
            _ => return Vec::new(),
        }
    }
    if !objects || fields.is_empty() {
        return Vec::new();
    }
    let listed: Vec<String> = fields
        .iter()
        .take(OUTLINE)
        .map(|(name, kind)| format!("{name} ({kind})"))
        .collect();
    let more = match fields.len() > OUTLINE {
        true => format!(" and {} more", fields.len() - OUTLINE),
        false => String::new(),
    };
    let mut out = vec![format!(
        "{pointer}: records; fields: {}{more}.",
        listed.join(", ")
    )];
    // Grouped by the text field with the fewest values, when some repeat; else counted.
    let grouping = fields
        .iter()
        .filter(|(name, kind)| *kind == "string" && values.contains_key(name))
        .min_by_key(|(name, _)| values[name].len())
        .filter(|(name, _)| values[name].len() < sampled);
    let filter = match grouping {
        Some((name, _)) => {
            let name = serde_json::to_string(name).unwrap_or_default();
            format!("group_by(.[{name}]) | map({{({name}): .[0][{name}], count: length}})")
        }
        None => "length".to_string(),
    };
    out.push(format!(
        "Query: envelope_read {}",
        json!({"uri": uri, "pointer": pointer, "jq": filter})
    ));
    if let Some(word) = first_word.filter(|_| search) {
        out.push(format!(
            "Search: envelope_search {}",
            json!({"query": word, "uri": uri})
        ));
    }
    out
}

/// Adds the fields of the object whose `{` was just read to `fields` (new names last).
fn fields_of(
    reader: &mut Reader<'_>,
    fields: &mut Vec<(String, &'static str)>,
    values: &mut HashMap<String, HashSet<String>>,
    first_word: &mut Option<String>,
) -> Option<()> {
    loop {
        let name = match reader.next().ok()?? {
            Event::EndObject => return Some(()),
            Event::Key(key) => key.value().into_owned(),
            _ => return None,
        };
        let kind = match reader.next().ok()?? {
            Event::String(text) => {
                let value: String = text.value().chars().take(60).collect();
                values.entry(name.clone()).or_default().insert(value);
                if first_word.is_none() {
                    *first_word = text
                        .value()
                        .split(|c: char| !c.is_alphanumeric())
                        .find(|w| w.chars().count() >= 3)
                        .map(|w| w.chars().take(40).collect());
                }
                "string"
            }
            Event::Number(_) => "number",
            Event::Bool(_) => "boolean",
            Event::Null => "null",
            Event::BeginObject => {
                skip_rest(reader)?;
                "object"
            }
            Event::BeginArray => {
                skip_rest(reader)?;
                "array"
            }
            _ => return None,
        };
        match fields.iter_mut().find(|(n, _)| *n == name) {
            // A field seen with another type: null gives way to the type it has elsewhere.
            Some((_, seen)) if *seen == "null" => *seen = kind,
            Some(_) => {}
            None => fields.push((name, kind)),
        }
    }
}

/// Reads on to the end of the array or object whose first event was just read.
fn skip_rest(reader: &mut Reader<'_>) -> Option<()> {
    let depth = reader.depth();
    while reader.depth() >= depth {
        reader.next().ok()??;
    }
    Some(())
}

/// The outline of a JSON text: the members of the object (or the length of the array) it
/// holds, with the pointers that read them.
fn json_outline(text: &str, pointer: &str) -> Vec<String> {
    let mut reader = Reader::new(text.as_bytes());
    match reader.next() {
        Ok(Some(Event::BeginObject)) => {
            let mut keys = Vec::new();
            while let Ok(Some(Event::Key(key))) = reader.next() {
                let name = key.value().into_owned();
                let kind = match reader.next() {
                    Ok(Some(Event::BeginArray)) => {
                        let mut n = 0;
                        while let Ok(Some(_)) = reader.skip() {
                            n += 1;
                        }
                        format!("array of {n}")
                    }
                    Ok(Some(Event::BeginObject)) => {
                        if skip_rest(&mut reader).is_none() {
                            return Vec::new();
                        }
                        "object".to_string()
                    }
                    Ok(Some(Event::String(_))) => "string".to_string(),
                    Ok(Some(_)) => "scalar".to_string(),
                    _ => return Vec::new(),
                };
                if keys.len() < OUTLINE {
                    let step = name.replace('~', "~0").replace('/', "~1");
                    keys.push(format!("{pointer}/{step} ({kind})"));
                }
            }
            match keys.is_empty() {
                true => Vec::new(),
                false => vec![format!("JSON text; its members: {}.", keys.join(", "))],
            }
        }
        Ok(Some(Event::BeginArray)) => {
            let mut n = 0;
            while let Ok(Some(_)) = reader.skip() {
                n += 1;
            }
            vec![format!("JSON text: an array of {n} items at {pointer}.")]
        }
        _ => Vec::new(),
    }
}

/// Whether a line starting with `run` is a markdown heading (`#` to `######`, a space).
fn is_heading(run: &str) -> bool {
    let hashes = run.bytes().take_while(|b| *b == b'#').count();
    (1..=6).contains(&hashes) && run.as_bytes().get(hashes) == Some(&b' ')
}

/// At most `max` characters of `text`, with `…` when cut.
fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

/// Moves `reader` to the value at `pointer` and returns its first event; `None` when there
/// is none (or the text is not JSON).
fn find<'a>(reader: &mut Reader<'a>, pointer: &str) -> Option<Event<'a>> {
    use crate::drill::locate::{array_index, steps, token};
    let mut event = reader.next().ok()??;
    for raw in steps(pointer).ok()? {
        let token = token(raw);
        event = match event {
            Event::BeginObject => loop {
                match reader.next().ok()?? {
                    Event::Key(key) if key.value() == token => break reader.next().ok()??,
                    Event::Key(_) => {
                        reader.skip().ok()??;
                    }
                    _ => return None,
                }
            },
            Event::BeginArray => {
                for _ in 0..array_index(&token)? {
                    reader.skip().ok()??;
                }
                reader.next().ok()??
            }
            _ => return None,
        };
    }
    Some(event)
}

#[cfg(test)]
mod tests {
    use super::*;

    const URI: &str = "envelope://artifact/sha256/00";

    /// [`Lines`] as the text's decoded pieces give them, one at a time (what `lines_of`
    /// read before it read the raw text): the oracle of `lines_of`.
    fn lines_by_pieces(text: &Str<'_>) -> Lines {
        let mut lines = 1u64;
        let mut ends_with_newline = false;
        let mut line_start = true;
        let mut headings = Vec::new();
        let mut first_char = None;
        for piece in text.pieces() {
            match piece {
                Piece::Char('\n') => {
                    lines += 1;
                    line_start = true;
                    ends_with_newline = true;
                    continue;
                }
                Piece::Char(c) => {
                    first_char.get_or_insert(c);
                    line_start = false;
                }
                Piece::Text(run) => {
                    if first_char.is_none() {
                        first_char = run.trim_start().chars().next();
                    }
                    if line_start && headings.len() < OUTLINE && is_heading(run) {
                        headings.push(format!("{lines} {:?}", cut(run, 60)));
                    }
                    line_start = false;
                }
            }
            ends_with_newline = false;
        }
        if ends_with_newline {
            lines -= 1;
        }
        Lines {
            lines,
            headings,
            first_char,
        }
    }

    /// A string literal of `text`, each character escaped as `escape` says: 0 as
    /// serde_json writes it, 1 as `\uXXXX` (upper-case hex), 2 (lower-case hex).
    fn literal(text: &[(char, u8)]) -> String {
        let mut out = String::from("\"");
        for &(c, escape) in text {
            if escape == 0 || c == '\u{FFFF}' {
                let one = serde_json::to_string(&c.to_string()).unwrap();
                out.push_str(&one[1..one.len() - 1]);
                continue;
            }
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                match escape {
                    1 => out.push_str(&format!("\\u{unit:04X}")),
                    _ => out.push_str(&format!("\\u{unit:04x}")),
                }
            }
        }
        out.push('"');
        out
    }

    proptest::proptest! {
        /// Read on the raw text, the lines, headings and first character are those of the
        /// decoded text: newlines written `\n` or `\u000a`, escaped backslashes before an
        /// `n`, headings after either newline, surrogate pairs, texts ending in a newline.
        #[test]
        fn lines_read_on_the_raw_text_are_those_of_the_decoded_text(
            text in proptest::collection::vec(
                (proptest::sample::select(vec![
                    '\n', '\n', '#', '#', ' ', 'a', 'n', 'u', '\\', '"', '\t', '{', '[',
                    'é', '😀', '\u{FFFF}',
                ]), 0u8..3),
                0..60,
            )
        ) {
            let literal = literal(&text);
            let mut reader = Reader::new(literal.as_bytes());
            let Ok(Some(Event::String(s))) = reader.next() else {
                panic!("not a string: {literal}");
            };
            proptest::prop_assert_eq!(lines_of(&s), lines_by_pieces(&s), "{}", literal);
        }
    }

    #[test]
    fn a_log_of_headings_counts_its_lines_and_outlines_its_headings() {
        let text = "# One\nbody\n## Two \"quoted\"\n\n### Three\n";
        let literal = serde_json::to_string(text).unwrap();
        let mut reader = Reader::new(literal.as_bytes());
        let Ok(Some(Event::String(s))) = reader.next() else {
            panic!("a string");
        };
        let lines = lines_of(&s);
        assert_eq!(lines.lines, 5);
        assert_eq!(
            lines.headings,
            ["1 \"# One\"", "3 \"## Two \"", "5 \"### Three\""]
        );
        assert_eq!(lines.first_char, Some('#'));
    }

    #[test]
    fn records_say_how_many_their_fields_and_a_query() {
        let rows: Vec<_> = (0..500)
            .map(|i| json!({"id": i, "name": format!("row {i}"), "kind": if i % 2 == 0 {"file"} else {"dir"}, "tags": [], "note": null}))
            .collect();
        let full = json!({"content": [], "structuredContent": {"rows": rows}}).to_string();
        let notice = compose(
            "Output truncated.",
            full.as_bytes(),
            Some(("/structuredContent/rows", 10)),
            URI,
            16384,
        );
        assert!(notice.contains("/structuredContent/rows: records; fields: id (number), name (string), kind (string), tags (array), note (null)."), "{notice}");
        // Grouped by the field whose values repeat (`kind`), not by the first text field
        // (`name`: one group per record).
        assert!(
            notice.contains(
                r#""jq":"group_by(.[\"kind\"]) | map({(\"kind\"): .[0][\"kind\"], count: length})""#
            ),
            "{notice}"
        );
        assert!(
            notice.ends_with(&format!(
                " Read on: envelope_read {}",
                json!({"uri": URI, "pointer": "/structuredContent/rows", "offset": 10})
            )),
            "{notice}"
        );
        assert!(
            notice.contains(&format!(
                "Search: envelope_search {}",
                json!({"query": "row", "uri": URI})
            )),
            "{notice}"
        );
        // The query works as written.
        let filter = "group_by(.[\"kind\"]) | map({(\"kind\"): .[0][\"kind\"], count: length})";
        let counted = crate::drill::jq::run(filter, json!(rows)).unwrap();
        assert_eq!(
            counted,
            json!([{"kind": "dir", "count": 250}, {"kind": "file", "count": 250}])
        );
        // No text field repeats in the sample: the records are counted.
        let unique: Vec<_> = (0..50)
            .map(|i| json!({"id": i, "name": format!("row {i}")}))
            .collect();
        let full = json!({"structuredContent": {"rows": unique}}).to_string();
        let notice = compose(
            "Cut.",
            full.as_bytes(),
            Some(("/structuredContent/rows", 3)),
            URI,
            16384,
        );
        assert!(notice.contains(r#""jq":"length""#), "{notice}");
    }

    #[test]
    fn a_long_text_says_its_lines_and_its_outline() {
        let text = "# Title\nintro\n\n## Install\nrun it\n## Use\n#no heading\n".repeat(3);
        let full = json!({"content": [{"type": "text", "text": text}]}).to_string();
        let notice = compose(
            "Cut.",
            full.as_bytes(),
            Some(("/content/0/text", 5)),
            URI,
            16384,
        );
        assert!(notice.contains("/content/0/text: 21 lines."), "{notice}");
        assert!(notice.contains(r###"Outline (line, heading): 1 "# Title"; 4 "## Install"; 6 "## Use"; 8 "# Title""###), "{notice}");
        assert!(
            notice.contains(
                r#""jq":"split(\"\\n\") | map(select(test(\"error\"; \"i\"))) | length""#
            ),
            "{notice}"
        );
        assert!(notice.ends_with(r#""offset":5}"#), "{notice}");
        assert!(
            notice.contains(&format!(
                "Search: envelope_search {}",
                json!({"query": "error", "uri": URI})
            )),
            "{notice}"
        );
        // Without a catalog, no search is shown.
        let without = Notices::new(full.as_bytes(), URI, false).compose(
            "Cut.",
            Some(("/content/0/text", 5)),
            16384,
        );
        assert!(!without.contains("envelope_search"), "{without}");
        assert!(without.contains("/content/0/text: 21 lines."), "{without}");
    }

    #[test]
    fn a_json_text_is_outlined_by_its_members() {
        let inner = json!({"entries": [1, 2, 3], "meta": {"a": 1}, "a/b": "x"}).to_string();
        let full = json!({"content": [{"type": "text", "text": inner}]}).to_string();
        let notice = compose(
            "Cut.",
            full.as_bytes(),
            Some(("/content/0/text", 5)),
            URI,
            16384,
        );
        assert!(notice.contains("JSON text; its members: /content/0/text/entries (array of 3), /content/0/text/meta (object), /content/0/text/a~1b (string)."), "{notice}");
        assert!(notice.contains(r#""jq":"fromjson | keys""#), "{notice}");
        let keys = crate::drill::jq::run("fromjson | keys", json!(inner)).unwrap();
        assert_eq!(keys, json!(["a/b", "entries", "meta"]));
    }

    #[test]
    fn the_facts_keep_to_their_share_and_the_call_is_always_there() {
        let rows: Vec<_> = (0..50).map(|i| json!({"id": i})).collect();
        let full = json!({"structuredContent": {"rows": rows}}).to_string();
        let small = compose(
            "Cut.",
            full.as_bytes(),
            Some(("/structuredContent/rows", 1)),
            URI,
            200,
        );
        assert_eq!(
            small,
            format!(
                "Cut. Read on: envelope_read {}",
                json!({"uri": URI, "pointer": "/structuredContent/rows", "offset": 1})
            )
        );
        for limit in [400, 1000, 4000, 16384] {
            let notice = compose(
                "Cut.",
                full.as_bytes(),
                Some(("/structuredContent/rows", 1)),
                URI,
                limit,
            );
            assert!(
                notice.len() <= small.len() + limit / SHARE / 2,
                "{limit}: {notice}"
            );
        }
    }
}
