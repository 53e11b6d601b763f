//! The skimmed read's fast path: sizing a skimmed item whose text is plain.
//!
//! Most items of a large array are written by a JSON writer: no whitespace, no escapes, keys
//! few and distinct, numbers such as `42` or `5.25`. For such an item every token is spelled
//! as the JS writer would spell it, so its size is the length of its text, and only what the
//! slow path ([`Reader::size`]) would also find is left to find: the longest string and
//! array in it, whether it is syntactically sound, whether a key repeats, and the spelling
//! check of its keys and strings. [`Reader::size_plain`] scans it with none of the slow
//! path's per-token bookkeeping (no sizes added up, no whitespace skipped, no escapes
//! decoded, no number parsed).
//!
//! On anything else — whitespace, an escape, a number that is not short and plain, an
//! object of more than 16 keys, a repeated key, bad syntax, deep nesting — it gives up and
//! leaves the item, untouched, to [`Reader::size`] (the oracle: the unit tests compare both
//! on random documents). Giving up costs a second scan of the item's start, so after many
//! misses the fast path is no longer tried.

use super::{MAX_DEPTH, Reader, Sized};
use crate::json::Dialect;
use crate::json::canonical::{key_written, string_written};
use crate::json::keys::key_class;
use crate::json::size::plain_run;

/// The high bit of each byte of a word: set for bytes of non-ASCII text.
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// Keys of one object the fast path compares on the reader's stack (the slow path's limit:
/// past it, the slow path keeps them in a set).
const MAX_KEYS: usize = 16;

/// Fast-path misses after which it is tried no more, unless it also hit 16 times as often.
const MISSES_ALLOWED: usize = 64;

/// What the fast path found in the item, besides its size (its text's length).
#[derive(Default)]
struct Found {
    max_array: usize,
    max_string: usize,
}

impl<'a> Reader<'a> {
    /// Sizes the skimmed item at the current position: by [`size_plain`](Self::size_plain)
    /// when it can, else by [`size`](Self::size).
    pub(super) fn size_skimmed(&mut self) -> Option<Sized> {
        if self.plain_tries_left() {
            if let Some(item) = self.size_plain() {
                self.plain_hits += 1;
                return Some(item);
            }
            self.plain_misses += 1;
        }
        self.size()
    }

    /// Whether the fast path is still worth trying (always while it rarely misses).
    fn plain_tries_left(&self) -> bool {
        self.plain
            && (self.plain_misses < MISSES_ALLOWED || self.plain_misses * 16 < self.plain_hits)
    }

    /// The size of the item at the current position when its text is plain (see the
    /// module's documentation), consumed; `None` when it is not: then nothing is consumed
    /// and nothing changed.
    pub(super) fn size_plain(&mut self) -> Option<Sized> {
        let start = self.at;
        let (depth, written) = (self.depth, self.written);
        let mut found = Found::default();
        if self.plain_value(&mut found).is_some() {
            return Some(Sized {
                size: self.at - start,
                max_array: found.max_array,
                max_string: found.max_string,
            });
        }
        self.at = start;
        self.depth = depth;
        self.written = written;
        None
    }

    fn plain_value(&mut self, found: &mut Found) -> Option<()> {
        match *self.bytes.get(self.at)? {
            b'"' => {
                let len = self.plain_string()?;
                found.max_string = found.max_string.max(len);
                Some(())
            }
            b'{' => self.plain_object(found),
            b'[' => self.plain_array(found),
            b't' => self.plain_word(b"true"),
            b'f' => self.plain_word(b"false"),
            b'n' => self.plain_word(b"null"),
            _ => self.plain_number(),
        }
    }

    /// Enters a container (at its bracket).
    fn plain_enter(&mut self) -> Option<()> {
        self.depth += 1;
        self.at += 1;
        (self.depth <= MAX_DEPTH).then_some(())
    }

    /// After an item of a container that ends with `close`: `true` if another follows.
    #[inline(always)]
    fn plain_next(&mut self, close: u8) -> Option<bool> {
        let b = *self.bytes.get(self.at)?;
        self.at += 1;
        if b == b',' {
            return Some(true);
        }
        if b == close {
            self.depth -= 1;
            return Some(false);
        }
        None
    }

    fn plain_array(&mut self, found: &mut Found) -> Option<()> {
        self.plain_enter()?;
        if *self.bytes.get(self.at)? == b']' {
            self.at += 1;
            self.depth -= 1;
            return Some(());
        }
        let mut len = 0;
        loop {
            self.plain_value(found)?;
            len += 1;
            if !self.plain_next(b']')? {
                break;
            }
        }
        found.max_array = found.max_array.max(len);
        Some(())
    }

    fn plain_object(&mut self, found: &mut Found) -> Option<()> {
        self.plain_enter()?;
        if *self.bytes.get(self.at)? == b'}' {
            self.at += 1;
            self.depth -= 1;
            return Some(());
        }
        // The object's keys so far, on the stack (the slow path's limit: it keeps more in a
        // set). As the slow path does, a key of a class not seen in the object is new without
        // a comparison.
        let mut keys: [&'a [u8]; MAX_KEYS] = [&[]; MAX_KEYS];
        let mut count = 0;
        let mut classes = 0u64;
        let mut last: Option<&'a [u8]> = None;
        loop {
            if count == MAX_KEYS || *self.bytes.get(self.at)? != b'"' {
                return None;
            }
            let start = self.at + 1;
            self.plain_string()?;
            let key = &self.bytes[start..self.at - 1];
            let class = key_class(key);
            if classes & class != 0 && keys[..count].contains(&key) {
                return None;
            }
            classes |= class;
            keys[count] = key;
            count += 1;
            if let Some(dialect) = self.dialect {
                self.written &= key_written(key, false, last, dialect);
                last = Some(key);
            }
            if *self.bytes.get(self.at)? != b':' {
                return None;
            }
            self.at += 1;
            self.plain_value(found)?;
            if !self.plain_next(b'}')? {
                return Some(());
            }
        }
    }

    /// A string without escapes at the current position (a quote), consumed; its length.
    /// Non-ASCII text is checked as UTF-8, and as the slow path checks its spelling.
    #[inline(always)]
    fn plain_string(&mut self) -> Option<usize> {
        let bytes = self.bytes;
        let start = self.at + 1;
        // The string's bytes OR-ed together: a high bit means non-ASCII text.
        let (at, high) = plain_run(bytes, start)?;
        // An escape or a control character: the slow path's.
        if bytes[at] != b'"' {
            return None;
        }
        self.at = at + 1;
        if high & HIGHS != 0 {
            let text = &bytes[start..at];
            std::str::from_utf8(text).ok()?;
            // What `check_key` and `check_string` check of unescaped non-ASCII text.
            if let Some(dialect) = self.dialect {
                self.written &= string_written(text, dialect);
            }
        }
        Some(at - start)
    }

    fn plain_word(&mut self, word: &[u8]) -> Option<()> {
        let end = self.at + word.len();
        (self.bytes.get(self.at..end)? == word).then(|| self.at = end)
    }

    /// A number the JS writer spells as it is and every dialect's spelling check passes
    /// without a closer look (see `Reader::check_number` and `is_written_as_spelled`): an
    /// integer of at most 15 digits but `-0`, or a decimal without exponent or trailing
    /// zero, of at most 15 significant digits, at least 1e-6 (not checked in Newtonsoft's
    /// dialect, where decimals are looked at closely).
    fn plain_number(&mut self) -> Option<()> {
        let bytes = self.bytes;
        let negative = bytes.get(self.at) == Some(&b'-');
        let int_start = self.at + usize::from(negative);
        let digits = |from: usize| {
            let mut at = from;
            while bytes.get(at).is_some_and(u8::is_ascii_digit) {
                at += 1;
            }
            at
        };
        let int_end = match *bytes.get(int_start)? {
            b'0' => int_start + 1,
            b'1'..=b'9' => digits(int_start + 1),
            _ => return None,
        };
        let int_len = int_end - int_start;
        let zero = bytes[int_start] == b'0';
        let end = match bytes.get(int_end) {
            Some(b'.') => {
                let end = digits(int_end + 1);
                let fraction = &bytes[int_end + 1..end];
                let significant = match zero {
                    true => {
                        let zeros = fraction.iter().take_while(|&&b| b == b'0').count();
                        (zeros <= 5).then_some(fraction.len() - zeros)?
                    }
                    false => int_len + fraction.len(),
                };
                let newtonsoft = self.dialect == Some(Dialect::Newtonsoft);
                if fraction.last().is_none_or(|&b| b == b'0') || significant > 15 || newtonsoft {
                    return None;
                }
                end
            }
            _ if int_len > 15 || (negative && zero) => return None,
            _ => int_end,
        };
        if matches!(bytes.get(end), Some(b'e' | b'E')) {
            return None;
        }
        self.at = end;
        Some(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::Skimmed;
    use super::*;
    use proptest::prelude::*;

    /// `read_checking` with the fast path on or off (the slow path is the oracle).
    fn read_with(text: &[u8], limit: usize, dialect: Option<Dialect>, plain: bool) -> Reading {
        let mut reader = Reader::new(text, limit);
        reader.dialect = dialect;
        reader.plain = plain;
        let value = reader.value();
        let ended = reader.peek().is_none();
        let read = value.filter(|_| ended).map(|value| Skimmed {
            value,
            tails: reader.tails,
            members: reader.members,
            written: reader.written_members,
            strings: reader.strings,
        });
        Reading {
            read,
            hits: reader.plain_hits,
        }
    }

    struct Reading {
        read: Option<Skimmed>,
        hits: usize,
    }

    /// Compares the two paths on `text` in every dialect and at limits that skim most
    /// items, some, or none; the number of items the fast path sized.
    fn agree(text: &str) -> usize {
        let dialects = [
            None,
            Some(Dialect::Js),
            Some(Dialect::Go),
            Some(Dialect::Newtonsoft),
            Some(Dialect::Jcs),
        ];
        let mut hits = 0;
        for dialect in dialects {
            for limit in [0, 8, 60, 1 << 20] {
                let fast = read_with(text.as_bytes(), limit, dialect, true);
                let slow = read_with(text.as_bytes(), limit, dialect, false);
                let (fast_read, slow_read) = (&fast.read, &slow.read);
                assert_eq!(
                    fast_read.is_some(),
                    slow_read.is_some(),
                    "{dialect:?} {limit} {text}"
                );
                if let (Some(f), Some(s)) = (fast_read, slow_read) {
                    assert_eq!(f.value, s.value, "{dialect:?} {limit} {text}");
                    assert_eq!(f.tails, s.tails, "{dialect:?} {limit} {text}");
                    assert_eq!(f.members, s.members, "{dialect:?} {limit} {text}");
                    assert_eq!(f.written, s.written, "{dialect:?} {limit} {text}");
                }
                assert_eq!(slow.hits, 0);
                hits += fast.hits;
            }
        }
        hits
    }

    /// Scalars as they may be spelled: mostly as writers write them, sometimes not, now
    /// and then not JSON at all.
    fn scalar() -> impl Strategy<Value = String> {
        let spelled = prop::sample::select(vec![
            "0",
            "-0",
            "7",
            "-12",
            "123456789012345",
            "1234567890123456",
            "-123456789012345678",
            "18446744073709551616",
            "5.25",
            "-0.5",
            "5.250",
            "0.000001",
            "0.0000001",
            "1.23456789012345",
            "1.234567890123456",
            "0.1",
            "1e5",
            "1E+2",
            "-1e-7",
            "01",
            "1.",
            "-",
            "1e400",
            "true",
            "false",
            "null",
            "tru",
            "nul",
            "\"\"",
            "\"a\"",
            "\"row 12\"",
            "\"é\"",
            "\"\u{2028}\"",
            "\"\u{85}x\"",
            "\"a\\nb\"",
            "\"\\u00e9\"",
            "\"\\u2028\"",
            "\"\\ud800\"",
            "\"\\/\"",
            "\"a\u{1}\"",
            "\"\\x\"",
            "\"src/module_1/file_12.rs\"",
            "\"0123456789abcdefghij\"",
        ]);
        prop_oneof![
            6 => spelled.prop_map(str::to_string),
            2 => any::<i64>().prop_map(|n| n.to_string()),
            2 => any::<f64>().prop_map(|f| serde_json::to_string(&f).unwrap()),
            2 => "[ -~é\u{2029}]{0,20}".prop_map(|s| serde_json::to_string(&s).unwrap()),
        ]
    }

    /// Keys from a small set, so that objects repeat some and are out of order in others.
    fn key() -> impl Strategy<Value = String> {
        prop::sample::select(vec![
            "\"a\"",
            "\"b\"",
            "\"id\"",
            "\"name\"",
            "\"ab\"",
            "\"ba\"",
            "\"1\"",
            "\"é\"",
            "\"k\\n\"",
            "\"tags\"",
            "\"score\"",
            "\"z\"",
            "\"\"",
        ])
        .prop_map(str::to_string)
    }

    /// A separator: mostly none, sometimes whitespace.
    fn gap() -> impl Strategy<Value = &'static str> {
        prop::sample::select(vec!["", "", "", "", "", "", " ", "\n"])
    }

    /// JSON-ish text: values as writers write them, with whitespace, odd spellings,
    /// repeated keys and broken syntax mixed in.
    fn text() -> impl Strategy<Value = String> {
        scalar().prop_recursive(5, 64, 20, |inner| {
            prop_oneof![
                prop::collection::vec((inner.clone(), gap()), 0..6).prop_map(|items| {
                    let items: Vec<String> =
                        items.into_iter().map(|(v, g)| format!("{g}{v}")).collect();
                    format!("[{}]", items.join(","))
                }),
                prop::collection::vec((key(), inner, gap()), 0..20).prop_map(|members| {
                    let members: Vec<String> = members
                        .into_iter()
                        .map(|(k, v, g)| format!("{k}:{g}{v}"))
                        .collect();
                    format!("{{{}}}", members.join(","))
                }),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        /// The fast path sizes, checks and refuses exactly as the slow path does, in
        /// documents with large arrays of items such as writers write and such as they do
        /// not.
        #[test]
        fn the_fast_path_agrees_with_the_slow_one(
            items in prop::collection::vec(text(), 1..40),
            first in text(),
        ) {
            let rows = format!("[{}]", items.join(","));
            agree(&rows);
            agree(&format!(r#"{{"first":{first},"data":{{"rows":{rows}}},"n":1}}"#));
        }
    }

    #[test]
    fn plain_items_take_the_fast_path() {
        let row = |i: usize| {
            format!(
                r#"{{"id":{i},"name":"row {i}","path":"src/é/file_{i}.rs","score":{i}.25,"tags":["a","b"],"ok":true,"x":null,"n":[[],{{}}]}}"#
            )
        };
        let rows: Vec<String> = (0..200).map(row).collect();
        let doc = format!(r#"{{"data":{{"rows":[{}]}}}}"#, rows.join(","));
        // Every item past the first few, in every dialect but Newtonsoft (decimals).
        let hits = agree(&doc);
        assert!(hits > 4 * 3 * 150, "{hits}");
        let fast = read_with(doc.as_bytes(), 100, Some(Dialect::Go), true);
        let tail = &fast.read.unwrap().tails[0];
        assert_eq!(tail.pointer, "/data/rows");
        assert_eq!(tail.max_string, "src/é/file_199.rs".len());
        assert_eq!(tail.max_array, 2);
    }

    #[test]
    fn many_misses_turn_the_fast_path_off() {
        // Whitespace after each comma: every item is the slow path's.
        let rows: Vec<String> = (0..500).map(|i| format!("{{\"i\": {i}}}")).collect();
        let doc = format!("[{}]", rows.join(","));
        let mut reader = Reader::new(doc.as_bytes(), 0);
        assert!(reader.value().is_some());
        assert_eq!(reader.plain_hits, 0);
        assert_eq!(reader.plain_misses, MISSES_ALLOWED);
    }
}
