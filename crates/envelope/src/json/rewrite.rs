//! JSON text written again as a dialect's writer writes its value, read with the
//! [pull reader](super::reader) and never built.
//!
//! [`rewrite`] gives the bytes of `json::to_vec(&serde_json::from_slice(text)?, dialect)`
//! without the tree in between: numbers re-spelled (`1.0` → `1` in JS), strings with the
//! dialect's escapes, each object's members in the order the dialect writes them, of
//! duplicate keys the last value in the first one's place (as serde_json keeps them). An
//! object already in the dialect's order is written as it is read; one that is not (a JS
//! array-index key, Go's unsorted keys, a duplicate key) is read again from its span, its
//! members ordered by their spans, so what is held is never more than the members' keys and
//! places. What is already spelled as the writer spells it is written, not proven.

use std::borrow::Cow;
use std::cmp::Ordering;
use std::ops::Range;

use super::Dialect;
use super::keys::KeySet;
use super::reader::{Event, Piece, Reader, Str};
use super::writer::{array_index, write_escaped, write_escaped_chars};

/// Appends to `out` the value of the JSON text `text` as `dialect`'s writer writes it: the
/// bytes of `json::to_vec` of the value serde_json reads from `text`.
///
/// ```
/// use envelope::json::Dialect;
/// use envelope::json::rewrite::rewrite;
///
/// let mut out = Vec::new();
/// rewrite(br#"{"b": 1.0, "2": [0.250, "\u00e9"], "a": 1e2}"#, Dialect::Js, &mut out)?;
/// assert_eq!(out, r#"{"2":[0.25,"é"],"b":1,"a":100}"#.as_bytes());
///
/// out.clear();
/// rewrite(br#"{"b": 1, "a": {"d": null, "c": true}}"#, Dialect::Go, &mut out)?;
/// assert_eq!(out, br#"{"a":{"c":true,"d":null},"b":1}"#);
/// # Ok::<(), serde_json::Error>(())
/// ```
///
/// # Errors
///
/// serde_json's error when `text` is not a JSON document it reads (`out` then holds part
/// of the output).
pub fn rewrite(text: &[u8], dialect: Dialect, out: &mut Vec<u8>) -> Result<(), serde_json::Error> {
    let mut reader = Reader::new(text);
    let rewriter = Rewriter {
        input: text,
        dialect,
    };
    let start = reader.offset();
    let first = reader.next()?.ok_or_else(eof)?;
    rewriter.value(&mut reader, first, start, out)?;
    match reader.next()? {
        None => Ok(()),
        Some(_) => unreachable!("the reader gives nothing after the root value"),
    }
}

fn eof() -> serde_json::Error {
    serde::de::Error::custom("EOF while parsing a value")
}

struct Rewriter<'a> {
    input: &'a [u8],
    dialect: Dialect,
}

impl<'a> Rewriter<'a> {
    /// Writes the value whose first event is `event` (read from `start` on).
    fn value(
        &self,
        reader: &mut Reader<'a>,
        event: Event<'a>,
        start: usize,
        out: &mut Vec<u8>,
    ) -> Result<(), serde_json::Error> {
        match event {
            Event::Null => out.extend_from_slice(b"null"),
            Event::Bool(true) => out.extend_from_slice(b"true"),
            Event::Bool(false) => out.extend_from_slice(b"false"),
            Event::Number(text) => self.number(text, out)?,
            Event::String(s) => self.string(s, out),
            Event::BeginArray => {
                out.push(b'[');
                let mut first = true;
                loop {
                    let at = reader.offset();
                    match reader.next()?.ok_or_else(eof)? {
                        Event::EndArray => break,
                        item => {
                            if !first {
                                out.push(b',');
                            }
                            first = false;
                            self.value(reader, item, at, out)?;
                        }
                    }
                }
                out.push(b']');
            }
            Event::BeginObject => self.object(reader, start, out)?,
            Event::Key(_) | Event::EndArray | Event::EndObject => {
                unreachable!("the reader gives a value here")
            }
        }
        Ok(())
    }

    /// Writes an object whose `{` the reader just read (`start`: where its text starts),
    /// as it is read while its keys come in the dialect's order, else from its members'
    /// spans ([`Rewriter::reordered`]).
    fn object(
        &self,
        reader: &mut Reader<'a>,
        start: usize,
        out: &mut Vec<u8>,
    ) -> Result<(), serde_json::Error> {
        let written_from = out.len();
        out.push(b'{');
        let mut seen = KeySet::default();
        let mut last: Option<Cow<'a, str>> = None;
        loop {
            let key = match reader.next()?.ok_or_else(eof)? {
                Event::EndObject => break,
                Event::Key(key) => key.value(),
                _ => unreachable!("a key or the end"),
            };
            if !self.in_order(last.as_deref(), &key) || !seen.insert(key.clone()) {
                // Read the rest of the object, then write it again from its members.
                reader.skip()?;
                loop {
                    match reader.next()?.ok_or_else(eof)? {
                        Event::EndObject => break,
                        _ => {
                            reader.skip()?;
                        }
                    }
                }
                out.truncate(written_from);
                return self.reordered(start..reader.offset(), out);
            }
            if last.is_some() {
                out.push(b',');
            }
            write_escaped_str(&key, self.dialect, out);
            out.push(b':');
            let at = reader.offset();
            let event = reader.next()?.ok_or_else(eof)?;
            self.value(reader, event, at, out)?;
            last = Some(key);
        }
        out.push(b'}');
        Ok(())
    }

    /// Whether `key` may follow `last` as the dialect writes an object's keys (a key equal
    /// to the last is a duplicate: not in order).
    fn in_order(&self, last: Option<&str>, key: &str) -> bool {
        match self.dialect {
            // Array-index keys go first, ascending: one anywhere means reordering.
            Dialect::Js => array_index(key).is_none(),
            Dialect::Newtonsoft => true,
            Dialect::Go => last.is_none_or(|last| last.as_bytes() < key.as_bytes()),
            Dialect::Jcs => last
                .is_none_or(|last| last.encode_utf16().cmp(key.encode_utf16()) == Ordering::Less),
        }
    }

    /// Writes the object at `span` of the input from its members: of duplicate keys the last
    /// value in the first one's place, in the dialect's order, each value rewritten from
    /// its span.
    fn reordered(&self, span: Range<usize>, out: &mut Vec<u8>) -> Result<(), serde_json::Error> {
        // The span may start with the comma and white space before the object.
        let lead = self.input[span.clone()]
            .iter()
            .take_while(|b| matches!(b, b' ' | b'\n' | b'\t' | b'\r' | b','))
            .count();
        let span = span.start + lead..span.end;
        let text: &'a [u8] = &self.input[span.clone()];
        let mut reader = Reader::new(text);
        let mut members: Vec<(Cow<'a, str>, Range<usize>)> = Vec::new();
        let mut index = std::collections::HashMap::new();
        reader.next()?; // `{`
        loop {
            let key = match reader.next()?.ok_or_else(eof)? {
                Event::EndObject => break,
                Event::Key(key) => key.value(),
                _ => unreachable!("a key or the end"),
            };
            let value = reader.skip()?.ok_or_else(eof)?;
            let value = value.start + span.start..value.end + span.start;
            match index.get(&key) {
                Some(&i) => members[i] = (key, value),
                None => {
                    index.insert(key.clone(), members.len());
                    members.push((key, value));
                }
            }
        }
        match self.dialect {
            Dialect::Js => members.sort_by_key(|(key, _)| match array_index(key) {
                Some(i) => (0, i),
                None => (1, 0),
            }),
            Dialect::Newtonsoft => {}
            Dialect::Go => members.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes())),
            Dialect::Jcs => members.sort_by(|a, b| a.0.encode_utf16().cmp(b.0.encode_utf16())),
        }
        out.push(b'{');
        for (i, (key, value)) in members.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            write_escaped_str(key, self.dialect, out);
            out.push(b':');
            rewrite(&self.input[value.clone()], self.dialect, out)?;
        }
        out.push(b'}');
        Ok(())
    }

    fn number(&self, text: &str, out: &mut Vec<u8>) -> Result<(), serde_json::Error> {
        // A plain integer of up to 15 digits is written as it is by every dialect (`-0`
        // is read as the integer 0).
        let digits = text.strip_prefix('-').unwrap_or(text);
        if digits.len() <= 15 && digits.bytes().all(|b| b.is_ascii_digit()) && text != "-0" {
            out.extend_from_slice(text.as_bytes());
            return Ok(());
        }
        let number: serde_json::Number = serde_json::from_str(text)?;
        super::number::write(out, &number, self.dialect);
        Ok(())
    }

    /// A string with escapes is written a piece at a time: a long one is never decoded
    /// whole beside its output.
    fn string(&self, s: Str<'a>, out: &mut Vec<u8>) {
        if !s.has_escapes() {
            return write_escaped_str(s.raw(), self.dialect, out);
        }
        // No reserve for the escaped length: the decoded text is shorter, and a reserve
        // past the caller's capacity would double the buffer.
        out.push(b'"');
        for piece in s.pieces() {
            match piece {
                Piece::Text(text) => write_escaped_chars(out, text, self.dialect),
                Piece::Char(c) => {
                    write_escaped_chars(out, c.encode_utf8(&mut [0; 4]), self.dialect)
                }
            }
        }
        out.push(b'"');
    }
}

/// A string (its value) as `dialect` writes it, quotes included.
fn write_escaped_str(s: &str, dialect: Dialect, out: &mut Vec<u8>) {
    write_escaped(out, s, dialect);
}
