//! An encoded document around a payload that passes through as the bytes it has in the
//! input ([`convert_as_written`](super::passthrough::convert_as_written)): the envelope is
//! encoded around a stand-in of the payload, and each place where the encoder wrote the
//! stand-in takes the payload's bytes instead. A format may write its payload more than
//! once: operations writes `data` and `meta.structuredContent`, and the text mirror in
//! `meta.content` (the payload's JSON text, escaped in a string); MCP writes
//! `structuredContent` and its mirror. The output is written a piece at a time, the payload
//! never copied.

use std::io::Write;
use std::ops::Range;

use crate::formats::LossReport;
use crate::json::Dialect;
use crate::json::writer::write_escaped;

/// An encoded document whose payload is borrowed from the input (see the module's
/// documentation).
#[derive(Debug)]
pub struct Spliced<'a> {
    /// The document as encoded around the stand-in.
    encoded: Vec<u8>,
    /// Where the stand-in was written, in order, and how the payload is written there.
    places: Vec<(Range<usize>, Spelling)>,
    /// The payload, borrowed from the input: the JSON text the encoder would write for it.
    pub payload: &'a [u8],
    /// What the target format could not hold (as [`convert`](crate::convert::convert)
    /// reports it).
    pub losses: LossReport,
}

/// How the payload is written at one of its places.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Spelling {
    /// As the JSON value it is.
    Value,
    /// As the text of a JSON string holding it (a text mirror), escaped as JS escapes it.
    InString,
}

impl<'a> Spliced<'a> {
    /// The document `encoded` around `stand_in` (the stand-in's JSON text in `dialect`),
    /// with `payload` in its places: where the stand-in's text is, and (in the JS dialect)
    /// where that text is held escaped in a string. `None` when there is no such place, or
    /// a trace of the stand-in is left outside them (it was written some other way): then
    /// the splice would not be the whole encoding.
    pub(super) fn new(
        encoded: Vec<u8>,
        stand_in: &[u8],
        mark: &str,
        dialect: Dialect,
        payload: &'a [u8],
        losses: LossReport,
    ) -> Option<Self> {
        let in_string = escaped_text(stand_in);
        let mut places: Vec<(Range<usize>, Spelling)> = Vec::new();
        for (pattern, spelling) in [
            (stand_in, Spelling::Value),
            (&in_string[..], Spelling::InString),
        ] {
            for at in memchr::memmem::find_iter(&encoded, pattern) {
                places.push((at..at + pattern.len(), spelling));
            }
        }
        places.sort_by_key(|(range, _)| range.start);
        // The escaped payload is the JS text escaped: only a JS writer's mirror holds it.
        let escapes_js =
            dialect == Dialect::Js || places.iter().all(|(_, s)| *s == Spelling::Value);
        let apart = places.windows(2).all(|w| w[0].0.end <= w[1].0.start);
        if places.is_empty() || !escapes_js || !apart {
            return None;
        }
        // No trace of the stand-in outside its places (the mark, in any spelling, holds its
        // distinctive middle).
        let middle = mark.trim_matches('\u{0}').as_bytes();
        let mut from = 0;
        for (range, _) in places.iter().chain(std::iter::once(&(
            encoded.len()..encoded.len(),
            Spelling::Value,
        ))) {
            if memchr::memmem::find(&encoded[from..range.start], middle).is_some() {
                return None;
            }
            from = range.end;
        }
        Some(Spliced {
            encoded,
            places,
            payload,
            losses,
        })
    }

    /// Writes the whole output to `out`, a piece at a time.
    ///
    /// # Errors
    ///
    /// The writer's.
    pub fn write_to(&self, out: &mut dyn Write) -> std::io::Result<()> {
        let mut from = 0;
        for (range, spelling) in &self.places {
            out.write_all(&self.encoded[from..range.start])?;
            match spelling {
                Spelling::Value => out.write_all(self.payload)?,
                Spelling::InString => write_in_string(self.payload, out)?,
            }
            from = range.end;
        }
        out.write_all(&self.encoded[from..])
    }

    /// The whole output in one buffer.
    pub fn to_vec(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.write_to(&mut out)
            .expect("writing to a Vec does not fail");
        out
    }
}

/// The text of the JSON string holding `text` (JS escapes), without its quotes.
fn escaped_text(text: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    write_escaped(&mut out, &String::from_utf8_lossy(text), Dialect::Js);
    out[1..out.len() - 1].to_vec()
}

/// Writes `text` (UTF-8: JSON text from the input) escaped as in a JS string, without
/// quotes, a piece at a time.
fn write_in_string(text: &[u8], out: &mut dyn Write) -> std::io::Result<()> {
    const PIECE: usize = 64 << 10;
    let mut buffer = Vec::with_capacity(PIECE + PIECE / 8);
    let mut at = 0;
    while at < text.len() {
        let mut end = (at + PIECE).min(text.len());
        // Cut between characters (continuation bytes are 0b10xx_xxxx).
        while end < text.len() && text[end] & 0xC0 == 0x80 {
            end -= 1;
        }
        let piece = std::str::from_utf8(&text[at..end]).map_err(std::io::Error::other)?;
        buffer.clear();
        write_escaped(&mut buffer, piece, Dialect::Js);
        out.write_all(&buffer[1..buffer.len() - 1])?;
        at = end;
    }
    Ok(())
}
