//! An encoded document around parts of the input that pass through as the bytes they have
//! there: the envelope is encoded around stand-ins, and each place where the encoder wrote
//! a stand-in takes the input's bytes instead, written when the output is
//! ([`Spliced::write_to`]), never copied. The parts:
//! - a payload that is a root member ([`convert_as_written`](super::passthrough::convert_as_written)),
//!   which a format may write more than once: operations writes `data` and
//!   `meta.structuredContent`, and the text mirror in `meta.content` (the payload's JSON
//!   text, escaped in a string); MCP writes `structuredContent` and its mirror;
//! - the long text of an MCP error result, which is its message
//!   ([`error_text`](super::error_text)), or the payload of a result of one such text:
//!   written as the text of a string with the target writer's escapes, as it is in the
//!   input or, with redaction, masked a piece at a time as it is written
//!   ([`Pipeline::run_spliced`](super::Pipeline::run_spliced));
//! - the payload (or an error's message) inside tool-envelope-v1's envelope block: the
//!   block's base64 text is the stand-in, and the base64 of the inner document around the
//!   piece is written in its place.
//!
//! A stand-in written any other way (a trace of its mark outside the places found) makes
//! [`Spliced::new`] give up: the caller then encodes the whole envelope.

use std::io::Write;
use std::ops::Range;
use std::sync::Arc;

use super::redact::pieces::mask_literal;
use crate::formats::LossReport;
use crate::json::Dialect;
use crate::json::canonical::string_written;
use crate::json::skim::decode_in_pieces;
use crate::json::writer::write_escaped;
use crate::model::JsonText;

/// An encoded document whose parts are borrowed from the input (see the module's
/// documentation).
#[derive(Debug)]
pub struct Spliced<'a> {
    /// The document as encoded around the stand-ins.
    encoded: Vec<u8>,
    /// Where a stand-in was written, in order, and what takes its place.
    places: Vec<(Range<usize>, Piece<'a>)>,
    /// What the target format could not hold (as [`convert`](crate::convert::convert)
    /// reports it).
    pub losses: LossReport,
    /// The escapes of the target format's writer: texts are written with them.
    dialect: Dialect,
}

/// The bytes a piece is written from: a part of the input, or a part of a text made from
/// one (a payload rewritten as the target's writer writes it), which the output holds and
/// its places share.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Bytes<'a> {
    Input(&'a [u8]),
    /// Held in the `Vec` it was written into (an `Arc<[u8]>` would copy it).
    Made(Arc<Vec<u8>>, Range<usize>),
    /// A part of a text the envelope kept (a result's `_meta`), shared with it.
    Kept(JsonText, Range<usize>),
}

impl Bytes<'_> {
    /// A text made from the input, whole.
    pub(crate) fn made(bytes: Vec<u8>) -> Self {
        let len = bytes.len();
        Bytes::Made(Arc::new(bytes), 0..len)
    }

    /// A text the envelope kept, whole.
    pub(crate) fn kept(text: JsonText) -> Self {
        let len = text.len();
        Bytes::Kept(text, 0..len)
    }

    /// The part at `range` of these bytes.
    pub(crate) fn part(&self, range: Range<usize>) -> Self {
        match self {
            Bytes::Input(bytes) => Bytes::Input(&bytes[range]),
            Bytes::Made(made, at) => {
                Bytes::Made(made.clone(), at.start + range.start..at.start + range.end)
            }
            Bytes::Kept(text, at) => {
                Bytes::Kept(text.clone(), at.start + range.start..at.start + range.end)
            }
        }
    }
}

impl std::ops::Deref for Bytes<'_> {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            Bytes::Input(bytes) => bytes,
            Bytes::Made(made, at) => &made[at.clone()],
            Bytes::Kept(text, at) => &text.as_str().as_bytes()[at.clone()],
        }
    }
}

/// What takes a stand-in's place: a part of the input, and how it is written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Piece<'a> {
    /// JSON text, as it is.
    Json(Bytes<'a>),
    /// JSON text (UTF-8), as the text of a JS string holding it (a text mirror).
    JsonInString(Bytes<'a>),
    /// The text between a valid string literal's quotes, written as the text of the
    /// string holding the same characters (with the writer's escapes).
    Text(&'a [u8]),
    /// The same, the string redacted as a plain text (`redact::pieces`) as it is written.
    MaskedText(&'a [u8]),
    /// A piece between the encoder's `head` and `tail` (an inner document), written as the
    /// base64 of the three (tool-envelope-v1's envelope block).
    Base64 {
        head: Vec<u8>,
        middle: Box<Piece<'a>>,
        tail: Vec<u8>,
    },
}

impl<'a> Spliced<'a> {
    /// The document `encoded` (by a writer of `dialect`) with each `(pattern, piece)` of
    /// `stand_ins`: wherever the pattern is, the piece takes its place. `None` when no
    /// pattern is found, places overlap, or a trace of the stand-ins' `mark` (its text
    /// without its NULs) is left outside them.
    pub(crate) fn new(
        encoded: Vec<u8>,
        stand_ins: &[(Vec<u8>, Piece<'a>)],
        mark: &str,
        losses: LossReport,
        dialect: Dialect,
    ) -> Option<Self> {
        let mut places: Vec<(Range<usize>, Piece<'a>)> = Vec::new();
        for (pattern, piece) in stand_ins {
            for at in memchr::memmem::find_iter(&encoded, pattern) {
                places.push((at..at + pattern.len(), piece.clone()));
            }
        }
        places.sort_by_key(|(range, _)| range.start);
        let apart = places.windows(2).all(|w| w[0].0.end <= w[1].0.start);
        if places.is_empty() || !apart {
            return None;
        }
        let middle = mark.trim_matches('\u{0}').as_bytes();
        let mut from = 0;
        let end = encoded.len()..encoded.len();
        for range in places.iter().map(|(range, _)| range).chain([&end]) {
            if memchr::memmem::find(&encoded[from..range.start], middle).is_some() {
                return None;
            }
            from = range.end;
        }
        Some(Spliced {
            encoded,
            places,
            losses,
            dialect,
        })
    }

    /// A document with nothing spliced in: `bytes` as they are (its losses are told apart).
    pub(crate) fn whole(bytes: Vec<u8>) -> Self {
        Spliced {
            encoded: bytes,
            places: Vec::new(),
            losses: LossReport::default(),
            dialect: Dialect::Js,
        }
    }

    /// The whole output in one buffer, its own when nothing is borrowed (no copy).
    pub(crate) fn into_vec(self) -> Vec<u8> {
        match self.places.is_empty() {
            true => self.encoded,
            false => self.to_vec(),
        }
    }

    /// Writes the whole output to `out`, a piece at a time.
    ///
    /// # Errors
    ///
    /// The writer's.
    pub fn write_to(&self, out: &mut dyn Write) -> std::io::Result<()> {
        let mut from = 0;
        for (range, piece) in &self.places {
            out.write_all(&self.encoded[from..range.start])?;
            write_piece(piece, self.dialect, out)?;
            from = range.end;
        }
        out.write_all(&self.encoded[from..])
    }

    /// Whether the whole output is `bytes`, compared a piece at a time (nothing is copied).
    pub(crate) fn is(&self, bytes: &[u8]) -> bool {
        let mut same = SameAs { rest: bytes };
        self.write_to(&mut same).is_ok() && same.rest.is_empty()
    }

    /// The whole output in one buffer.
    pub fn to_vec(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.write_to(&mut out)
            .expect("writing to a Vec does not fail");
        out
    }
}

/// A writer that takes only the bytes `rest` starts with, and fails at the first other.
struct SameAs<'b> {
    rest: &'b [u8],
}

impl Write for SameAs<'_> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        match self.rest.strip_prefix(bytes) {
            Some(rest) => {
                self.rest = rest;
                Ok(bytes.len())
            }
            None => Err(std::io::Error::other("the output differs")),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// tool-envelope-v1's envelope block around a stand-in: the base64 of the inner document
/// around the stand-in (found there once) stands for the base64 of that document around
/// the piece.
pub(crate) struct EnvelopeBlock<'a> {
    /// The block's base64, and what takes its place.
    pub stand_in: (Vec<u8>, Piece<'a>),
}

impl<'a> EnvelopeBlock<'a> {
    /// The block of `env` encoded around `stand_in` (its text in the inner document, JS's),
    /// which `piece` replaces; `None` when the stand-in is not in the inner document once.
    pub(crate) fn new(
        env: &crate::model::Envelope,
        options: &crate::formats::EncodeOptions,
        stand_in: &[u8],
        piece: Piece<'a>,
    ) -> Option<Self> {
        let inner = crate::formats::tool_envelope_v1::inner_document(env, options);
        let at = found_once(&inner, stand_in)?;
        let pattern = crate::base64::encode(&inner).into_bytes();
        let piece = Piece::Base64 {
            head: inner[..at].to_vec(),
            middle: Box::new(piece),
            tail: inner[at + stand_in.len()..].to_vec(),
        };
        Some(EnvelopeBlock {
            stand_in: (pattern, piece),
        })
    }

    /// `options` with the time to write pinned (tool-envelope-v1 writes one in the inner
    /// document): the block computed here and the one the encoder writes hold the same.
    pub(crate) fn pinned(options: &crate::formats::EncodeOptions) -> crate::formats::EncodeOptions {
        let now = options
            .now
            .clone()
            .unwrap_or_else(|| crate::time::now_rfc3339(true));
        crate::formats::EncodeOptions {
            now: Some(now),
            ..options.clone()
        }
    }

    /// Whether the block is in `encoded` exactly once (as the encoder writes it).
    pub(crate) fn found_once_in(&self, encoded: &[u8]) -> bool {
        found_once(encoded, &self.stand_in.0).is_some()
    }
}

/// Where `pattern` is in `bytes`, when it is there exactly once.
fn found_once(bytes: &[u8], pattern: &[u8]) -> Option<usize> {
    let mut found = memchr::memmem::find_iter(bytes, pattern);
    let at = found.next()?;
    found.next().is_none().then_some(at)
}

/// The text of the JSON string holding `text` (JS escapes), without its quotes.
pub(crate) fn escaped_text(text: &str) -> Vec<u8> {
    let mut out = Vec::new();
    write_escaped(&mut out, text, Dialect::Js);
    out[1..out.len() - 1].to_vec()
}

/// The bytes of the input taken a piece at a time.
const PIECE: usize = 64 << 10;

/// Writes `text` (UTF-8: JSON text from the input) escaped as in a string of `dialect`,
/// without quotes, a piece at a time.
fn write_in_string(text: &[u8], dialect: Dialect, out: &mut dyn Write) -> std::io::Result<()> {
    let mut buffer = Vec::new();
    let mut at = 0;
    while at < text.len() {
        let mut end = (at + PIECE).min(text.len());
        // Cut between characters (continuation bytes are 0b10xx_xxxx).
        while end < text.len() && text[end] & 0xC0 == 0x80 {
            end -= 1;
        }
        let piece = std::str::from_utf8(&text[at..end]).map_err(std::io::Error::other)?;
        write_escaped_text(piece, dialect, &mut buffer, out)?;
        at = end;
    }
    Ok(())
}

/// Writes the string whose literal's text is `raw` (valid) as the text of a string of
/// `dialect`, decoded a piece at a time, and redacted as a plain text with `masked`.
fn write_text(
    raw: &[u8],
    masked: bool,
    dialect: Dialect,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let undecodable = || std::io::Error::other("a string checked valid does not decode");
    let mut buffer = Vec::new();
    let mut write = |text: &str| write_escaped_text(text, dialect, &mut buffer, out);
    if masked {
        // The caller redacted the text first: it is plain text.
        return match mask_literal(raw, PIECE, &mut write, undecodable)? {
            Some(_) => Ok(()),
            None => Err(std::io::Error::other("a text told plain may be a document")),
        };
    }
    decode_in_pieces(raw, PIECE, &mut write, undecodable)
}

/// Writes `piece` in a document of `dialect`'s writer.
fn write_piece(piece: &Piece<'_>, dialect: Dialect, out: &mut dyn Write) -> std::io::Result<()> {
    match piece {
        Piece::Json(json) => out.write_all(json),
        Piece::JsonInString(json) => write_in_string(json, dialect, out),
        Piece::Text(raw) if string_written(raw, dialect) => out.write_all(raw),
        Piece::Text(raw) => write_text(raw, false, dialect, out),
        Piece::MaskedText(raw) => write_text(raw, true, dialect, out),
        Piece::Base64 { head, middle, tail } => {
            // The inner document is JS's (tool-envelope-v1 writes it with JSON.stringify).
            let mut base64 = Base64Writer::new(out);
            base64.write_all(head)?;
            write_piece(middle, Dialect::Js, &mut base64)?;
            base64.write_all(tail)?;
            base64.finish()
        }
    }
}

/// Writes the base64 of the bytes written to it, as one text (the padding at the end only,
/// [`finish`](Base64Writer::finish)), a piece at a time.
struct Base64Writer<'w> {
    out: &'w mut dyn Write,
    /// Bytes waiting for a whole group of three.
    carry: Vec<u8>,
    text: String,
}

impl<'w> Base64Writer<'w> {
    fn new(out: &'w mut dyn Write) -> Self {
        Base64Writer {
            out,
            carry: Vec::new(),
            text: String::new(),
        }
    }

    /// Writes the last group, padded.
    fn finish(mut self) -> std::io::Result<()> {
        self.text.clear();
        crate::base64::encode_into(&self.carry, &mut self.text);
        self.out.write_all(self.text.as_bytes())
    }
}

impl Write for Base64Writer<'_> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        let taken = bytes.len().min(PIECE);
        self.carry.extend_from_slice(&bytes[..taken]);
        let whole = self.carry.len() - self.carry.len() % 3;
        self.text.clear();
        crate::base64::encode_into(&self.carry[..whole], &mut self.text);
        self.out.write_all(self.text.as_bytes())?;
        self.carry.drain(..whole);
        Ok(taken)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

/// Writes `text` escaped as in a string of `dialect`, without quotes, through `buffer`.
fn write_escaped_text(
    text: &str,
    dialect: Dialect,
    buffer: &mut Vec<u8>,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    buffer.clear();
    write_escaped(buffer, text, dialect);
    out.write_all(&buffer[1..buffer.len() - 1])
}
