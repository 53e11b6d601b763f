//! What detection reads of a document's bytes: the root members its evidence reads, each
//! whole (a text block's text only as far as evidence reads it), every other member `null`
//! in its place. One pass that builds nothing else; in the format layer so that a whole
//! read ([`decode_any`](super::decode_any)) can ask it before it builds a document of no
//! format, as [`detect`](crate::detect::detect) does.

use serde_json::Value;

use crate::error::Result;

/// Inputs this large or larger are detected from their bytes before they are read whole:
/// reading a smaller one whole costs little.
pub(crate) const REFUSE_FROM: usize = 1 << 20;

/// The root members detection reads of `input` ([`super::DETECTION_WHOLE`]), each whole,
/// every other member `null` (its place kept); a root that is not an object reads as an
/// empty value of its kind. The document is checked in the same pass (serde_json's
/// acceptance and errors).
pub(crate) fn members(input: &[u8]) -> Result<Value> {
    root_members(input, &super::DETECTION_WHOLE)
}

/// A value of the kind of the (checked) JSON text `text`: an empty string, object or
/// array; a scalar as it is.
fn kind_of(text: &[u8]) -> Result<Value, serde_json::Error> {
    Ok(match text.iter().find(|b| !b.is_ascii_whitespace()) {
        Some(b'"') => Value::String(String::new()),
        Some(b'{') => Value::Object(serde_json::Map::new()),
        Some(b'[') => Value::Array(Vec::new()),
        _ => serde_json::from_slice(text)?,
    })
}

/// What [`json::from_slice`](crate::json::from_slice) gives, with only the root members named in `keep` read (each
/// whole) and every other member `null` (its place kept): the document checked in one pass
/// that builds nothing else ([`reader`](crate::json::reader): serde_json's acceptance and
/// errors). A root that is not an object reads as an empty value of its kind. What
/// detection reads of a large document, in the size of the members it reads.
fn root_members(input: &[u8], keep: &[&str]) -> Result<Value> {
    crate::json::root::read_root(input, &mut |key, text| {
        Ok(match keep.contains(&key) {
            true if key == "content" => content_for_detection(text)?,
            true if key == "_meta" => super::keys_for_detection(text)?,
            // An MCP source's `_meta` in operations' `meta`: no evidence reads it.
            true if key == "meta" => crate::json::root::checked_without(text, "_meta")?.0,
            // Only their kinds are evidence (ctxo's `{"error": true, "message": "…"}`): a
            // failing command's whole log as a message is not built.
            true if key == "error" || key == "message" => kind_of(text)?,
            true => serde_json::from_slice(text)?,
            false => Value::Null,
        })
    })
}

/// The `content` member (`text`: its JSON, checked already) as detection reads it: every
/// block whole, but of a text block's `text` that cannot hold a document (its first
/// character after white space is not `{`) only the start, with a tool-envelope-v1 marker
/// whole: no format's evidence reads further (tool-envelope-v1 looks for the
/// `__ENVELOPE_V1__:` prefix; ctxo parses a last block that holds a document). So a result of
/// a 100 MB log is detected without its text being built.
fn content_for_detection(text: &[u8]) -> std::result::Result<Value, serde_json::Error> {
    use crate::json::reader::Reader;
    let mut blocks = Reader::new(text);
    if !matches!(blocks.next()?, Some(crate::json::reader::Event::BeginArray)) {
        return serde_json::from_slice(text);
    }
    let mut out = Vec::new();
    while let Some(item) = blocks.skip()? {
        let item = &text[item];
        if item.first() != Some(&b'{') {
            out.push(serde_json::from_slice(item)?);
            continue;
        }
        let mut members = Reader::new(item);
        members.next()?;
        let mut block = serde_json::Map::new();
        while let Some(crate::json::reader::Event::Key(key)) = members.next()? {
            let key = key.value().into_owned();
            let Some(span) = members.skip()? else { break };
            let value = &item[span];
            let value = match (key.as_str(), text_start(value)?) {
                ("text", Some(start)) => Value::String(start),
                // A text that holds a document is read whole only when it may be a ctxo
                // document (ctxo's evidence parses it); any other, a `structuredContent`'s
                // mirror most often, stands as `{}`, which no evidence tells apart from it.
                ("text", None) if !text_may_hold_ctxo(value)? => Value::String("{}".into()),
                _ => serde_json::from_slice(value)?,
            };
            block.insert(key, value);
        }
        out.push(Value::Object(block));
    }
    Ok(Value::Array(out))
}

/// Whether the string literal `literal` may hold a ctxo document
/// ([`may_hold_ctxo_document`](super::ctxo::may_hold_ctxo_document)),
/// its text decoded a piece at a time as the probe reads it, never whole. A literal that
/// is not a string may hold anything.
fn text_may_hold_ctxo(literal: &[u8]) -> std::result::Result<bool, serde_json::Error> {
    use crate::json::reader::{Event, Reader};
    let mut reader = Reader::new(literal);
    let Some(Event::String(text)) = reader.next()? else {
        return Ok(true);
    };
    Ok(super::ctxo::may_hold_ctxo_document_read(PiecesReader::new(
        text.pieces(),
    )))
}

/// A string's decoded text as [`std::io::Read`], a piece at a time.
struct PiecesReader<'a> {
    pieces: crate::json::reader::Pieces<'a>,
    /// What is left of the piece being read.
    pending: &'a [u8],
    /// An escaped character's UTF-8 bytes, and how many of them are read.
    char_bytes: ([u8; 4], usize, usize),
}

impl<'a> PiecesReader<'a> {
    fn new(pieces: crate::json::reader::Pieces<'a>) -> Self {
        PiecesReader {
            pieces,
            pending: &[],
            char_bytes: ([0; 4], 0, 0),
        }
    }
}

impl std::io::Read for PiecesReader<'_> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        use crate::json::reader::Piece;
        loop {
            let (bytes, at, len) = &mut self.char_bytes;
            if *at < *len {
                let n = (*len - *at).min(out.len());
                out[..n].copy_from_slice(&bytes[*at..*at + n]);
                *at += n;
                return Ok(n);
            }
            if !self.pending.is_empty() {
                let n = self.pending.len().min(out.len());
                out[..n].copy_from_slice(&self.pending[..n]);
                self.pending = &self.pending[n..];
                return Ok(n);
            }
            match self.pieces.next() {
                None => return Ok(0),
                Some(Piece::Text(text)) => self.pending = text.as_bytes(),
                Some(Piece::Char(c)) => {
                    let mut buffer = [0; 4];
                    let len = c.encode_utf8(&mut buffer).len();
                    self.char_bytes = (buffer, 0, len);
                }
            }
        }
    }
}

/// The start of the string literal `literal` as detection reads it (see
/// [`content_for_detection`]); `None` when it is to be read whole: not a string, or a text
/// whose first character after white space is `{`.
fn text_start(literal: &[u8]) -> std::result::Result<Option<String>, serde_json::Error> {
    use crate::json::reader::{Event, Piece, Reader};
    /// Characters kept: a marker, `__ENVELOPE_V1__:`, is 16.
    const KEPT: usize = 64;
    const MARKER: &str = "__ENVELOPE_V";
    let mut reader = Reader::new(literal);
    let Some(Event::String(text)) = reader.next()? else {
        return Ok(None);
    };
    let mut start = String::new();
    // Whether more is needed: 64 characters, and a marker's digits and the `__:` after them.
    let wants_more = |start: &str| {
        start.len() < KEPT
            || start.strip_prefix(MARKER).is_some_and(|tail| {
                let digits = tail.bytes().take_while(u8::is_ascii_digit).count();
                tail.len() < digits + 3
            })
    };
    let mut leading_space = true;
    for piece in text.pieces() {
        let chars: Box<dyn Iterator<Item = char>> = match piece {
            Piece::Char(c) => Box::new(std::iter::once(c)),
            Piece::Text(run) => Box::new(run.chars()),
        };
        for c in chars {
            if leading_space && c.is_whitespace() {
                // White space before the first character: one stands for all of it.
                if start.is_empty() {
                    start.push(' ');
                }
                continue;
            }
            if leading_space {
                leading_space = false;
                if c == '{' {
                    return Ok(None);
                }
            }
            if !wants_more(&start) {
                return Ok(Some(start));
            }
            start.push(c);
        }
    }
    Ok(Some(start))
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::text_may_hold_ctxo;
    use crate::formats::ctxo::may_hold_ctxo_document;

    /// Pieces of JSON text that the probe must read as the decoded whole reads them.
    fn piece() -> impl Strategy<Value = String> {
        prop_oneof![
            Just(r#"{"_meta":{"truncated":true}}"#.to_string()),
            Just(r#"{"a":[1,2.50,{"b":"é😀"}],"_meta":{"totalItems":3}}"#.to_string()),
            Just(r#"{"_meta":{"x":1}}"#.to_string()),
            Just(r#"{"_meta":1,"_meta":{"truncated":false}}"#.to_string()),
            Just("{".to_string()),
            Just("}".to_string()),
            Just(" \n\t".to_string()),
            Just("\u{2028}é😀\u{0}".to_string()),
            "[a-z\"\\\\{}:,_ ]{0,12}",
        ]
    }

    proptest! {
        /// The text is decoded a piece at a time (escapes, surrogate pairs, runs) and the
        /// probe says what it says of the decoded text held whole.
        #[test]
        fn the_streamed_probe_answers_as_the_whole_text(
            pieces in proptest::collection::vec(piece(), 0..6),
        ) {
            let text: String = pieces.concat();
            // Written as the JS writer writes it, and with every character escaped.
            let plain = serde_json::to_string(&text).unwrap();
            let escaped: String = std::iter::once("\"".to_string())
                .chain(text.encode_utf16().map(|unit| format!("\\u{unit:04x}")))
                .chain(std::iter::once("\"".to_string()))
                .collect();
            let expected = may_hold_ctxo_document(text.as_bytes());
            prop_assert_eq!(text_may_hold_ctxo(plain.as_bytes()).unwrap(), expected);
            prop_assert_eq!(text_may_hold_ctxo(escaped.as_bytes()).unwrap(), expected);
        }
    }

    #[test]
    fn a_mirror_is_not_read_whole_but_a_ctxo_document_is() {
        let mirror = serde_json::to_string(r#"{"rows":[1,2,3]}"#).unwrap();
        assert!(!text_may_hold_ctxo(mirror.as_bytes()).unwrap());
        let ctxo = serde_json::to_string(r#"{"results":[],"_meta":{"truncated":true}}"#).unwrap();
        assert!(text_may_hold_ctxo(ctxo.as_bytes()).unwrap());
        // Not a string: read whole, as before.
        assert!(text_may_hold_ctxo(b"12").unwrap());
    }
}
