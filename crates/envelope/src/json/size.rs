//! Sizing JSON without writing it: how many bytes a value takes when the JS-dialect writer
//! writes it compactly. Every stage that budgets (the ctxo truncation, the hard budget, the
//! skim reader, offload previews) asks this module; none keeps an escape table of its own.

use serde_json::Value;

use super::writer::JS_ESCAPES;

/// Size of a scalar (a string cut at `max_string` bytes).
pub(crate) fn scalar_size(value: &Value, max_string: usize) -> usize {
    match value {
        Value::String(s) => escaped_len(prefix(s, max_string)),
        Value::Number(n) => crate::json::number::js_len(n),
        Value::Bool(false) => 5,
        _ => 4,
    }
}

/// Size of `value` at level 0 (every array empty, every string empty): no cut is smaller.
pub(crate) fn skeleton_size(value: &Value) -> usize {
    match value {
        Value::Array(_) | Value::String(_) => 2,
        Value::Object(map) => {
            2 + map.len().saturating_sub(1)
                + map
                    .iter()
                    .map(|(k, v)| escaped_len(k) + 1 + skeleton_size(v))
                    .sum::<usize>()
        }
        scalar => scalar_size(scalar, 0),
    }
}

/// Compact JS-dialect size of `value` in bytes: the length of
/// [`json::to_vec(value, Dialect::Js)`](crate::json::to_vec), computed without writing
/// anything (strings are scanned eight bytes at a time, numbers measured without being
/// formatted).
///
/// ```
/// use envelope::json::size::js_size;
/// use envelope::json::{Dialect, to_vec};
/// use serde_json::json;
///
/// let value = json!({"text": "line\nbreak", "n": 1.5e21, "ok": true});
/// assert_eq!(js_size(&value), to_vec(&value, Dialect::Js).len());
/// // `{"text":"line\nbreak","n":1.5e+21,"ok":true}`
/// assert_eq!(js_size(&value), 44);
/// ```
pub fn js_size(value: &Value) -> usize {
    match value {
        Value::Array(items) => {
            2 + items.len().saturating_sub(1) + items.iter().map(js_size).sum::<usize>()
        }
        Value::Object(map) => {
            2 + map.len().saturating_sub(1)
                + map
                    .iter()
                    .map(|(k, v)| escaped_len(k) + 1 + js_size(v))
                    .sum::<usize>()
        }
        scalar => scalar_size(scalar, usize::MAX),
    }
}

/// The longest prefix of `s` of at most `max` bytes that ends on a character boundary.
pub(crate) fn prefix(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// Bytes a character's escape adds in the JS dialect: 1 for `\n`-style escapes, 5 for
/// `\u00xx`, 0 for everything copied as is. Derived from the writer's own escape table, so
/// sizes and written bytes cannot disagree.
const fn escape_extra_table() -> [u8; 256] {
    let mut table = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        table[i] = match JS_ESCAPES[i] {
            0 => 0,
            b'u' => 5,
            _ => 1,
        };
        i += 1;
    }
    table
}
static ESCAPE_EXTRA: [u8; 256] = escape_extra_table();

/// Whether the JS writer escapes byte `b` of a string: exactly the bytes JSON text cannot
/// hold raw inside a string (control characters, the quote, the backslash).
pub(crate) fn needs_escape(b: u8) -> bool {
    escape_extra(b) != 0
}

/// Bytes the JS writer adds to escape byte `b` of a string (0: copied as it is).
pub(crate) fn escape_extra(b: u8) -> usize {
    usize::from(ESCAPE_EXTRA[usize::from(b)])
}

/// The bytes of `word` (eight bytes of a string, little-endian) that the writer escapes
/// ([`needs_escape`]), as their high bits: the bit tricks for "has a zero byte" and "has a
/// byte less than n". Bits above the lowest may be false positives (a borrow runs upward);
/// the lowest is always right, and no escaped byte is ever missed.
pub(crate) fn escape_stops(word: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let zeros = |v: u64| v.wrapping_sub(ONES) & !v & HIGHS;
    let control = word.wrapping_sub(ONES * 0x20) & !word & HIGHS;
    zeros(word ^ (ONES * u64::from(b'"'))) | zeros(word ^ (ONES * u64::from(b'\\'))) | control
}

/// The plain run of a string's bytes from `at`: the index of the first byte after it that
/// the writer escapes ([`needs_escape`]: the closing quote, a backslash, a control
/// character), with every byte of the run OR-ed together (a high bit: the run holds
/// non-ASCII text, to be checked as UTF-8). `None` when the input ends first.
///
/// Eight bytes at a time up to the word holding the stop, then byte by byte near the end
/// of the input: every JSON string of the core's readers is scanned here.
#[inline(always)]
pub(crate) fn plain_run(bytes: &[u8], mut at: usize) -> Option<(usize, u64)> {
    let mut high = 0u64;
    loop {
        let Some(chunk) = bytes.get(at..at + 8) else {
            loop {
                let b = *bytes.get(at)?;
                if needs_escape(b) {
                    return Some((at, high));
                }
                high |= u64::from(b);
                at += 1;
            }
        };
        let word = u64::from_le_bytes(chunk.try_into().unwrap_or_default());
        let stops = escape_stops(word);
        if stops != 0 {
            // The lowest stop is always a real one (see `escape_stops`).
            let inside = (stops.trailing_zeros() / 8) as usize;
            high |= word & ((1u64 << (8 * inside)) - 1);
            return Some((at + inside, high));
        }
        high |= word;
        at += 8;
    }
}

/// Whether `bytes` may hold a byte the writer escapes (`false`: certainly none), eight
/// bytes at a time: words that cover every byte, overlapping where the length is not a
/// multiple of eight (short strings are read as one word of their bytes, repeated).
fn may_escape(bytes: &[u8]) -> bool {
    let word = |b: &[u8]| u64::from_le_bytes(b.try_into().unwrap_or_default());
    let len = bytes.len();
    let stops = match len {
        0 => 0,
        1..4 => {
            let (first, middle, last) = (bytes[0], bytes[len / 2], bytes[len - 1]);
            escape_stops(u64::from_le_bytes([
                first, middle, last, first, first, first, first, first,
            ]))
        }
        4..8 => {
            let head = u32::from_le_bytes(bytes[..4].try_into().unwrap_or_default());
            let tail = u32::from_le_bytes(bytes[len - 4..].try_into().unwrap_or_default());
            escape_stops(u64::from(head) | (u64::from(tail) << 32))
        }
        _ => {
            let mut words = bytes.chunks_exact(8);
            if words.any(|w| escape_stops(word(w)) != 0) {
                return true;
            }
            escape_stops(word(&bytes[len - 8..]))
        }
    };
    stops != 0
}

/// Length of `s` as a JS-dialect string literal, quotes included.
///
/// This runs over every string of every payload that gets a budget, and most strings
/// escape nothing: they are checked eight bytes at a time, and only a string that may
/// escape something is counted byte by byte.
pub(crate) fn escaped_len(s: &str) -> usize {
    let bytes = s.as_bytes();
    let extra = if may_escape(bytes) {
        bytes.iter().map(|&b| escape_extra(b)).sum()
    } else {
        0
    };
    2 + bytes.len() + extra
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every stop byte at every position across the eight-byte words, from every start,
    /// with and without non-ASCII text before it: the first stop is found, the run's high
    /// bit says whether it held non-ASCII text, and a run to the end is `None`.
    #[test]
    fn plain_run_stops_at_the_first_byte_the_writer_escapes() {
        let plain_bytes: Vec<u8> = (0x20..=0xff).filter(|b| !needs_escape(*b)).collect();
        for len in 0..26 {
            let base: Vec<u8> = (0..len).map(|i| b'a' + (i % 26) as u8).collect();
            for from in 0..=len {
                assert_eq!(plain_run(&base, from).map(|(at, _)| at), None);
            }
            for stop_at in 0..len {
                for stop in [b'"', b'\\', 0x00, 0x1f, b'\n'] {
                    for non_ascii in [None, Some(0), Some(stop_at / 2)] {
                        let mut text = base.clone();
                        text[stop_at] = stop;
                        if let Some(at) = non_ascii.filter(|at| *at < stop_at) {
                            text[at] = 0xc3;
                        }
                        // A second stop after the first changes nothing.
                        if stop_at + 3 < len {
                            text[stop_at + 3] = b'"';
                        }
                        for from in 0..=stop_at {
                            let (at, high) = plain_run(&text, from).expect("a stop");
                            assert_eq!(at, stop_at, "{text:?} from {from}");
                            let held = text[from..stop_at].iter().any(|b| *b >= 0x80);
                            assert_eq!(high & 0x8080_8080_8080_8080 != 0, held, "{text:?}");
                        }
                    }
                }
            }
        }
        // No byte the writer copies is ever taken for a stop.
        for b in plain_bytes {
            assert_eq!(plain_run(&[b; 17], 0), None, "{b:#x}");
        }
    }

    #[test]
    fn escaped_len_matches_the_writer_on_every_byte_pattern() {
        let mut samples = vec![String::new()];
        for b in 0u8..=0x7f {
            // Each ASCII byte at every position of strings of every length up to 17 (short
            // strings, whole words, overlapping last words).
            for len in 1..=17 {
                for at in 0..len {
                    let mut s: String = "abcdefghijklmnopq"[..len].into();
                    s.replace_range(at..=at, &char::from(b).to_string());
                    samples.push(s);
                }
            }
        }
        samples.push("é😀\u{2028}\"\\\n".repeat(9));
        for s in samples {
            let written =
                crate::json::to_vec(&Value::String(s.clone()), crate::json::Dialect::Js).len();
            assert_eq!(escaped_len(&s), written, "{s:?}");
        }
    }
}
