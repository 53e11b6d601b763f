//! A pull reader over JSON text: the document as a stream of events, nothing built.
//!
//! [`Reader::next`] hands out one [`Event`] at a time — the start and end of each object and
//! array, each key, each string (its text borrowed from the input, decoded in
//! [pieces](Str::pieces) when asked), each number *as it is written*, each `true`, `false`
//! and `null`. [`Reader::skip`] passes over a whole value and gives its span, so a value can
//! be copied as it is written without being read.
//!
//! It accepts exactly what `serde_json::from_slice::<Value>` accepts: the same grammar,
//! UTF-8 checked in strings only (elsewhere a byte past ASCII is a syntax error), escapes and
//! surrogate pairs checked as serde_json checks them when it reads a `String`, numbers whose
//! value is beyond a double refused, and the same nesting limit (127 levels: serde_json's
//! counter starts at 128). Its errors are serde_json's own, message and location: on a
//! defect the reader asks serde_json to read the document (building nothing) and hands back
//! what it says. The differential test (`tests/reader.rs`) and the fuzz target `reader`
//! hold the two to it.

use std::borrow::Cow;
use std::ops::Range;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

use super::parse::MAX_NESTING;
use super::size::plain_run;

/// What the reader saw next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event<'a> {
    /// `{`
    BeginObject,
    /// `}`
    EndObject,
    /// `[`
    BeginArray,
    /// `]`
    EndArray,
    /// A member's name (its value comes next).
    Key(Str<'a>),
    /// A string value.
    String(Str<'a>),
    /// A number, exactly as written (`1.0` stays `1.0`).
    Number(&'a str),
    /// `true` or `false`.
    Bool(bool),
    /// `null`.
    Null,
}

/// A string of the document: its text between the quotes, as written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Str<'a> {
    raw: &'a str,
    escaped: bool,
}

/// A piece of a string's characters ([`Str::pieces`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Piece<'a> {
    /// Characters written as themselves.
    Text(&'a str),
    /// One character written as an escape.
    Char(char),
}

impl<'a> Str<'a> {
    /// The text between the quotes, escapes as written (valid UTF-8: the reader checked it).
    pub fn raw(&self) -> &'a str {
        self.raw
    }

    /// Whether the text holds an escape (then [`raw`](Str::raw) is not the string's value).
    pub fn has_escapes(&self) -> bool {
        self.escaped
    }

    /// The string's characters, in pieces: runs written as themselves, borrowed, and each
    /// escape decoded. A long string is read this way without a copy of it.
    pub fn pieces(&self) -> Pieces<'a> {
        Pieces { rest: self.raw }
    }

    /// The string's value (borrowed when it holds no escape).
    pub fn value(&self) -> Cow<'a, str> {
        if !self.escaped {
            return Cow::Borrowed(self.raw);
        }
        let mut out = String::with_capacity(self.raw.len());
        for piece in self.pieces() {
            match piece {
                Piece::Text(text) => out.push_str(text),
                Piece::Char(c) => out.push(c),
            }
        }
        Cow::Owned(out)
    }
}

/// The pieces of a string ([`Str::pieces`]).
#[derive(Clone, Debug)]
pub struct Pieces<'a> {
    rest: &'a str,
}

impl<'a> Iterator for Pieces<'a> {
    type Item = Piece<'a>;

    fn next(&mut self) -> Option<Piece<'a>> {
        if self.rest.is_empty() {
            return None;
        }
        let bytes = self.rest.as_bytes();
        if bytes[0] != b'\\' {
            let end = memchr::memchr(b'\\', bytes).unwrap_or(bytes.len());
            let (text, rest) = self.rest.split_at(end);
            self.rest = rest;
            return Some(Piece::Text(text));
        }
        // The reader checked every escape: the forms here are the valid ones.
        let (c, len) = match bytes[1] {
            b'u' => {
                let first = hex4(&bytes[2..6]);
                if (0xD800..0xDC00).contains(&first) {
                    let second = hex4(&bytes[8..12]);
                    let code = 0x1_0000 + ((first - 0xD800) << 10) + (second - 0xDC00);
                    (char::from_u32(code).expect("a checked pair"), 12)
                } else {
                    (char::from_u32(first).expect("a checked escape"), 6)
                }
            }
            other => (simple_escape(other).expect("a checked escape"), 2),
        };
        self.rest = &self.rest[len..];
        Some(Piece::Char(c))
    }
}

/// The character of a one-letter escape (`\n`, `\"`, …).
fn simple_escape(letter: u8) -> Option<char> {
    Some(match letter {
        b'"' => '"',
        b'\\' => '\\',
        b'/' => '/',
        b'b' => '\u{8}',
        b'f' => '\u{c}',
        b'n' => '\n',
        b'r' => '\r',
        b't' => '\t',
        _ => return None,
    })
}

/// The value of four hex digits (checked by the reader).
fn hex4(digits: &[u8]) -> u32 {
    digits
        .iter()
        .fold(0, |n, d| n * 16 + (*d as char).to_digit(16).expect("hex"))
}

/// Where the reader is in the document's grammar.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Expect {
    /// The root value.
    Root,
    /// The first item of an array, or its end.
    FirstItem,
    /// A comma and an item, or the array's end.
    NextItem,
    /// The first key of an object, or its end.
    FirstKey,
    /// A comma and a key, or the object's end.
    NextKey,
    /// A member's value (the colon read).
    Value,
    /// Nothing but white space: the root value was read.
    End,
}

/// A pull reader over one JSON document (see the module's documentation).
///
/// ```
/// use envelope::json::reader::{Event, Reader};
///
/// let mut reader = Reader::new(br#"{"score": 1.0, "rows": [1, 2]}"#);
/// assert_eq!(reader.next()?, Some(Event::BeginObject));
/// let Some(Event::Key(key)) = reader.next()? else { panic!() };
/// assert_eq!(key.raw(), "score");
/// assert_eq!(reader.next()?, Some(Event::Number("1.0")));
/// reader.next()?; // the key "rows"
/// let span = reader.skip()?.expect("a value");
/// assert_eq!(&br#"{"score": 1.0, "rows": [1, 2]}"#[span], b"[1, 2]");
/// assert_eq!(reader.next()?, Some(Event::EndObject));
/// assert_eq!(reader.next()?, None);
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug)]
pub struct Reader<'a> {
    input: &'a [u8],
    at: usize,
    expect: Expect,
    /// For each open container, whether it is an object.
    open: Vec<bool>,
}

/// Not a document serde_json reads (the reader then asks serde_json why).
struct Defect;

impl<'a> Reader<'a> {
    /// A reader at the start of `input`.
    pub fn new(input: &'a [u8]) -> Self {
        Reader {
            input,
            at: 0,
            expect: Expect::Root,
            open: Vec::new(),
        }
    }

    /// Where the reader is: the offset of the first byte it has not read.
    pub fn offset(&self) -> usize {
        self.at
    }

    /// How many arrays and objects are open.
    pub fn depth(&self) -> usize {
        self.open.len()
    }

    /// The next event; `None` once the document was read to its end (white space only
    /// after it).
    ///
    /// # Errors
    ///
    /// serde_json's error for the document: it is not one serde_json reads.
    #[allow(clippy::should_implement_trait)] // fallible: not an Iterator
    pub fn next(&mut self) -> Result<Option<Event<'a>>, serde_json::Error> {
        self.step().map_err(|Defect| self.why())
    }

    /// Passes over the value whose first event would come next, and gives its span in the
    /// input (the value as written, without the white space around it); `None` when an
    /// array ends there instead (its end is read, as [`next`](Reader::next) would give
    /// [`Event::EndArray`]).
    ///
    /// # Errors
    ///
    /// As [`next`](Reader::next); and a misuse, said as an error, where no value can come
    /// next (a key's place, or after the root value).
    pub fn skip(&mut self) -> Result<Option<Range<usize>>, serde_json::Error> {
        if matches!(
            self.expect,
            Expect::FirstKey | Expect::NextKey | Expect::End
        ) {
            return Err(serde::de::Error::custom(format!(
                "no value to skip at byte {}: a key or the end comes next",
                self.at
            )));
        }
        self.skip_value().map_err(|Defect| self.why())
    }

    fn skip_value(&mut self) -> Result<Option<Range<usize>>, Defect> {
        let depth = self.open.len();
        let before = self.at;
        let event = self.step()?.ok_or(Defect)?;
        if event == Event::EndArray {
            return Ok(None);
        }
        // Where the value starts: past the white space and the comma before it.
        let start = before
            + self.input[before..]
                .iter()
                .position(|b| !skippable(*b))
                .unwrap_or(0);
        while self.open.len() > depth {
            self.step()?.ok_or(Defect)?;
        }
        Ok(Some(start..self.at))
    }

    /// What serde_json says of the document (the reader found a defect in it).
    fn why(&self) -> serde_json::Error {
        match serde_json::from_slice::<Checked>(self.input) {
            Err(e) => e,
            // The reader refused what serde_json reads: a bug of the reader, said as one.
            Ok(Checked) => serde::de::Error::custom(format!(
                "the pull reader refused at byte {} a document serde_json reads",
                self.at
            )),
        }
    }

    fn step(&mut self) -> Result<Option<Event<'a>>, Defect> {
        let byte = self.skip_space();
        match self.expect {
            Expect::End => match byte {
                None => Ok(None),
                Some(_) => Err(Defect),
            },
            Expect::Root | Expect::Value => self.value(byte),
            Expect::FirstItem if byte == Some(b']') => self.close(false),
            Expect::FirstItem => self.value(byte),
            Expect::NextItem => match byte {
                Some(b']') => self.close(false),
                Some(b',') => {
                    self.at += 1;
                    let byte = self.skip_space();
                    self.value(byte)
                }
                _ => Err(Defect),
            },
            Expect::FirstKey if byte == Some(b'}') => self.close(true),
            Expect::FirstKey => self.key(byte),
            Expect::NextKey => match byte {
                Some(b'}') => self.close(true),
                Some(b',') => {
                    self.at += 1;
                    let byte = self.skip_space();
                    self.key(byte)
                }
                _ => Err(Defect),
            },
        }
    }

    /// Skips white space; the byte after it.
    fn skip_space(&mut self) -> Option<u8> {
        while let Some(&b) = self.input.get(self.at) {
            if !matches!(b, b' ' | b'\n' | b'\t' | b'\r') {
                return Some(b);
            }
            self.at += 1;
        }
        None
    }

    fn key(&mut self, byte: Option<u8>) -> Result<Option<Event<'a>>, Defect> {
        if byte != Some(b'"') {
            return Err(Defect);
        }
        let key = self.string()?;
        if self.skip_space() != Some(b':') {
            return Err(Defect);
        }
        self.at += 1;
        self.expect = Expect::Value;
        Ok(Some(Event::Key(key)))
    }

    fn value(&mut self, byte: Option<u8>) -> Result<Option<Event<'a>>, Defect> {
        let event = match byte.ok_or(Defect)? {
            b'{' | b'[' => {
                if self.open.len() >= MAX_NESTING {
                    return Err(Defect);
                }
                let object = byte == Some(b'{');
                self.at += 1;
                self.open.push(object);
                self.expect = if object {
                    Expect::FirstKey
                } else {
                    Expect::FirstItem
                };
                return Ok(Some(if object {
                    Event::BeginObject
                } else {
                    Event::BeginArray
                }));
            }
            b'"' => Event::String(self.string()?),
            b't' => self.literal(b"true", Event::Bool(true))?,
            b'f' => self.literal(b"false", Event::Bool(false))?,
            b'n' => self.literal(b"null", Event::Null)?,
            b'-' | b'0'..=b'9' => Event::Number(self.number()?),
            _ => return Err(Defect),
        };
        self.after_value();
        Ok(Some(event))
    }

    fn close(&mut self, object: bool) -> Result<Option<Event<'a>>, Defect> {
        debug_assert_eq!(self.open.last(), Some(&object));
        self.at += 1;
        self.open.pop();
        self.after_value();
        Ok(Some(if object {
            Event::EndObject
        } else {
            Event::EndArray
        }))
    }

    /// What comes after a value, in the container around it.
    fn after_value(&mut self) {
        self.expect = match self.open.last() {
            None => Expect::End,
            Some(true) => Expect::NextKey,
            Some(false) => Expect::NextItem,
        };
    }

    fn literal(&mut self, word: &[u8], event: Event<'a>) -> Result<Event<'a>, Defect> {
        if !self.input[self.at..].starts_with(word) {
            return Err(Defect);
        }
        self.at += word.len();
        Ok(event)
    }

    /// A string from its opening quote; the reader is left past its closing quote.
    fn string(&mut self) -> Result<Str<'a>, Defect> {
        let start = self.at + 1;
        let mut at = start;
        let mut escaped = false;
        loop {
            (at, _) = plain_run(self.input, at).ok_or(Defect)?;
            match self.input[at] {
                b'"' => break,
                b'\\' => {
                    escaped = true;
                    at += escape_len(&self.input[at..]).ok_or(Defect)?;
                }
                _ => return Err(Defect), // a control character
            }
        }
        // (std's check runs a word at a time over ASCII: cheap beside the scan.)
        let raw = std::str::from_utf8(&self.input[start..at]).map_err(|_| Defect)?;
        self.at = at + 1;
        Ok(Str { raw, escaped })
    }

    /// A number from its first byte, as serde_json reads it; the text as written.
    fn number(&mut self) -> Result<&'a str, Defect> {
        let input = self.input;
        let start = self.at;
        let mut at = start;
        let digits = |at: &mut usize| {
            let from = *at;
            while input.get(*at).is_some_and(u8::is_ascii_digit) {
                *at += 1;
            }
            *at - from
        };
        if input[at] == b'-' {
            at += 1;
        }
        match input.get(at) {
            Some(b'0') => {
                at += 1;
                // serde_json refuses a leading zero before another digit.
                if input.get(at).is_some_and(u8::is_ascii_digit) {
                    return Err(Defect);
                }
            }
            Some(b'1'..=b'9') => {
                digits(&mut at);
            }
            _ => return Err(Defect),
        }
        let integer_end = at;
        if input.get(at) == Some(&b'.') {
            at += 1;
            if digits(&mut at) == 0 {
                return Err(Defect);
            }
        }
        if matches!(input.get(at), Some(b'e' | b'E')) {
            at += 1;
            if matches!(input.get(at), Some(b'+' | b'-')) {
                at += 1;
            }
            if digits(&mut at) == 0 {
                return Err(Defect);
            }
        }
        let text = std::str::from_utf8(&input[start..at]).expect("ASCII");
        // An integer of 19 digits or fewer is an i64 or a u64 (or a double near one); a
        // longer integer or any other number is a double, refused beyond a double's range.
        if at != integer_end || integer_end - start > 19 {
            let value: f64 = text.parse().map_err(|_| Defect)?;
            if !value.is_finite() {
                return Err(Defect);
            }
        }
        self.at = at;
        Ok(text)
    }
}

/// The length of the escape at the start of `text` (`\` first), checked as serde_json
/// checks it when it reads a `String`; `None`: refused.
fn escape_len(text: &[u8]) -> Option<usize> {
    match *text.get(1)? {
        b'u' => {
            let first = hex(text.get(2..6)?)?;
            if (0xDC00..0xE000).contains(&first) {
                return None; // a trailing surrogate first
            }
            if !(0xD800..0xDC00).contains(&first) {
                return Some(6);
            }
            if text.get(6..8)? != b"\\u" {
                return None;
            }
            let second = hex(text.get(8..12)?)?;
            (0xDC00..0xE000).contains(&second).then_some(12)
        }
        letter => simple_escape(letter).map(|_| 2),
    }
}

/// Four hex digits' value; `None`: not four hex digits.
fn hex(digits: &[u8]) -> Option<u32> {
    digits
        .iter()
        .try_fold(0, |n, d| Some(n * 16 + (*d as char).to_digit(16)?))
}

/// White space or the comma between values.
fn skippable(byte: u8) -> bool {
    matches!(byte, b' ' | b'\n' | b'\t' | b'\r' | b',')
}

/// A document read the way serde_json reads a `Value` (every check it makes then), with
/// nothing built: the reader's source of errors. Not `serde::de::IgnoredAny`, which skips
/// the checks of numbers' ranges and of strings' surrogates.
struct Checked;

impl<'de> Deserialize<'de> for Checked {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(CheckedVisitor)
    }
}

struct CheckedVisitor;

impl<'de> Visitor<'de> for CheckedVisitor {
    type Value = Checked;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<Checked, E> {
        Ok(Checked)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Checked, E> {
        Ok(Checked)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Checked, E> {
        Ok(Checked)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Checked, E> {
        Ok(Checked)
    }
    fn visit_str<E>(self, _: &str) -> Result<Checked, E> {
        Ok(Checked)
    }
    fn visit_unit<E>(self) -> Result<Checked, E> {
        Ok(Checked)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Checked, A::Error> {
        while seq.next_element::<Checked>()?.is_some() {}
        Ok(Checked)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Checked, A::Error> {
        // Keys are read as strings (checked like any string), values as values.
        while map.next_key::<KeyChecked>()?.is_some() {
            map.next_value::<Checked>()?;
        }
        Ok(Checked)
    }
}

/// A member's name, read as serde_json reads a `Value`'s keys (as a string).
struct KeyChecked;

impl<'de> Deserialize<'de> for KeyChecked {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer
            .deserialize_str(CheckedVisitor)
            .map(|_| KeyChecked)
    }
}
