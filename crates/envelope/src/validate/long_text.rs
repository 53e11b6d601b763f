//! The root `content` of a large document, read for the abridged validation
//! ([`abridged`](super::abridged)) with each long text of its blocks kept as a prefix and the
//! place of the whole text in the document, so that no copy of it is made: a 500 MB text
//! block (an MCP result, or a tool-envelope-v1 envelope block) would otherwise be held
//! twice, in the input and in the tree.
//!
//! A text is kept as a prefix only where every reader of the abridged root reads the same
//! in the prefix as in the whole, or can be given the whole: it is longer than
//! [`LONG_TEXT`], its start is not only white space, and an `__ENVELOPE_V` start is a whole
//! tool-envelope-v1 prefix within the kept part. A text that starts (after white space)
//! with `{` or `[` is kept as a prefix too, though the MCP mirror rule and ctxo's embedded
//! document parse it: the abridged validation accepts it only as the mirror of
//! `structuredContent`, proven on the document's text (`abridged::settle_mirrors`). Its
//! place is known when it is written without escapes (serde_json hands it out borrowed from
//! the document: the bytes in the document are the text); a long escaped text valid as it
//! is written is read without being decoded, and its literal's place is known; another
//! escaped text is decoded by serde_json into its own buffer, and only its prefix is kept.
//! The validation then accepts a shortened text only for the formats whose rules need no
//! more of it (MCP), or whose rules are given the whole text from its place
//! (tool-envelope-v1's block 1).

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;
use std::ops::Range;

use serde::Deserialize;
use serde::de::{DeserializeSeed, Deserializer, Error as _, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::json::{skim, unescape};

/// A block text longer than this (in bytes) may be kept as a prefix.
pub(crate) const LONG_TEXT: usize = 64 * 1024;

/// The bytes of a long text kept (fewer, to end on a character boundary).
const KEPT: usize = 1024;

/// The long texts of the root's `content` blocks that the abridged root holds a prefix of,
/// by block index.
pub(crate) type LongTexts = BTreeMap<usize, LongText>;

/// Where a long text whose prefix the abridged root holds is in the document's text.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct LongText {
    /// The byte range of the whole text (`None`: written with escapes, the document's
    /// bytes are not the text).
    pub(crate) place: Option<Range<usize>>,
    /// The byte range of its literal between the quotes, escapes as written (`None`: not
    /// known, the text was decoded by serde_json).
    pub(crate) literal: Option<Range<usize>>,
}

/// The root member `content`, read with its long block texts shortened (see the module's
/// documentation). `doc` is the document's text, which every borrowed
/// string is a part of.
pub(crate) struct Content<'l> {
    pub(crate) doc: &'l str,
    pub(crate) long: &'l mut LongTexts,
}

impl<'de> DeserializeSeed<'de> for Content<'_> {
    type Value = Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        // A repeated `content` keeps its last value only.
        self.long.clear();
        d.deserialize_any(self)
    }
}

/// The `visit_*` methods of a value read as a `serde_json::Value` reads it, but for the
/// ones a reader defines itself.
macro_rules! like_a_value {
    () => {
        like_a_value!(strings_elsewhere);
        fn visit_str<E>(self, v: &str) -> Result<Value, E> {
            Ok(Value::String(v.to_owned()))
        }
    };
    (strings_elsewhere) => {
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("any JSON value")
        }
        fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
            Ok(Value::Bool(v))
        }
        fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
            Ok(Value::from(v))
        }
        fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
            Ok(Value::from(v))
        }
        fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
            Ok(Value::from(v))
        }
        fn visit_string<E>(self, v: String) -> Result<Value, E> {
            Ok(Value::String(v))
        }
        fn visit_unit<E>(self) -> Result<Value, E> {
            Ok(Value::Null)
        }
    };
}

pub(super) use like_a_value;

/// An object read as a `Value` reads it: a repeated key keeps its first place and its last
/// value.
fn object<'de, A: MapAccess<'de>>(mut map: A) -> Result<Value, A::Error> {
    let mut object = Map::new();
    while let Some((key, value)) = map.next_entry::<String, Value>()? {
        object.insert(key, value);
    }
    Ok(Value::Object(object))
}

/// An array read as a `Value` reads it.
pub(super) fn array<'de, A: SeqAccess<'de>>(mut seq: A) -> Result<Value, A::Error> {
    let mut items = Vec::new();
    while let Some(item) = seq.next_element::<Value>()? {
        items.push(item);
    }
    Ok(Value::Array(items))
}

impl<'de> Visitor<'de> for Content<'_> {
    type Value = Value;
    like_a_value!();

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut blocks = Vec::new();
        loop {
            let block = Block {
                doc: self.doc,
                index: blocks.len(),
                long: &mut *self.long,
            };
            match seq.next_element_seed(block)? {
                Some(block) => blocks.push(block),
                None => return Ok(Value::Array(blocks)),
            }
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Value, A::Error> {
        object(map)
    }
}

/// A content block: its `text` may be long.
struct Block<'l> {
    doc: &'l str,
    index: usize,
    long: &'l mut LongTexts,
}

impl<'de> DeserializeSeed<'de> for Block<'_> {
    type Value = Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Block<'_> {
    type Value = Value;
    like_a_value!();

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Value, A::Error> {
        array(seq)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut block = Map::new();
        while let Some(key) = map.next_key_seed(Key)? {
            if key != "text" {
                block.insert(key.into_owned(), map.next_value::<Value>()?);
                continue;
            }
            // Where the value is, when the key was read in place (no escape in it).
            let literal = match &key {
                Cow::Borrowed(key) => long_literal_after(self.doc, key),
                Cow::Owned(_) => None,
            };
            let mut whole = None;
            let text = map.next_value_seed(Text {
                doc: self.doc,
                literal,
                whole: &mut whole,
            })?;
            // The last `text` is the one a `Value` keeps.
            match whole {
                Some(place) => self.long.insert(self.index, place),
                None => self.long.remove(&self.index),
            };
            block.insert(key.into_owned(), text);
        }
        Ok(Value::Object(block))
    }
}

/// A key, borrowed from the document when it has no escape (so that its place is known).
struct Key;

impl<'de> DeserializeSeed<'de> for Key {
    type Value = Cow<'de, str>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for Key {
    type Value = Cow<'de, str>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a key")
    }

    fn visit_borrowed_str<E>(self, key: &'de str) -> Result<Self::Value, E> {
        Ok(Cow::Borrowed(key))
    }

    fn visit_str<E>(self, key: &str) -> Result<Self::Value, E> {
        Ok(Cow::Owned(key.to_owned()))
    }
}

/// The string literal that is the value after `key` (a key read in place in `doc`) and its
/// place, when that literal is longer than [`LONG_TEXT`] bytes, has escapes, and is valid
/// (serde_json would read it without an error): such a text is read without being decoded.
/// Anything else is read as a `Value` reads it, errors at their places included.
fn long_literal_after<'d>(doc: &'d str, key: &str) -> Option<(&'d str, usize)> {
    let bytes = doc.as_bytes();
    let mut at = key.as_ptr() as usize - doc.as_ptr() as usize + key.len() + 1;
    let blank = |at: &mut usize| {
        while bytes
            .get(*at)
            .is_some_and(|b| matches!(b, b' ' | b'\n' | b'\r' | b'\t'))
        {
            *at += 1;
        }
    };
    blank(&mut at);
    if bytes.get(at) != Some(&b':') {
        return None;
    }
    at += 1;
    blank(&mut at);
    if bytes.get(at) != Some(&b'"') {
        return None;
    }
    let from = at + 1;
    // The closing quote: the first after an even run of backslashes.
    let mut end = from;
    loop {
        end += memchr::memchr(b'"', &bytes[end..])?;
        let backslashes = bytes[from..end]
            .iter()
            .rev()
            .take_while(|&&b| b == b'\\')
            .count();
        if backslashes % 2 == 0 {
            break;
        }
        end += 1;
    }
    let inner = &bytes[from..end];
    let long = inner.len() > LONG_TEXT && memchr::memchr(b'\\', inner).is_some();
    (long && unescape::is_valid(inner)).then(|| (&doc[at..=end], at))
}

/// A block's `text`: a prefix when it is a long text that may be shortened.
struct Text<'w> {
    doc: &'w str,
    /// The value's literal and its place, when it is a long valid escaped string (see
    /// [`long_literal_after`]).
    literal: Option<(&'w str, usize)>,
    /// Set when the value is a prefix: where the whole text is.
    whole: &'w mut Option<LongText>,
}

impl<'de> DeserializeSeed<'de> for Text<'_> {
    type Value = Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        let Some((literal, at)) = self.literal else {
            return d.deserialize_any(self);
        };
        // Checked by serde_json, not decoded: serde_json decodes an escaped string into a
        // buffer that grows by doubling, the old one held while the new one fills (a 200 MB
        // escaped text took about 2.5 times its size at once).
        let raw: &'de RawValue = Deserialize::deserialize(d)?;
        if raw.get().as_ptr() as usize - self.doc.as_ptr() as usize != at {
            return Err(D::Error::custom(
                "the block's text is not where it was found",
            ));
        }
        let inner = &literal[1..literal.len() - 1];
        let (_, len) = skim::escaped_string_sizes(inner.as_bytes())
            .ok_or_else(|| D::Error::custom("a text checked valid does not decode"))?;
        let start = &inner[..skim::raw_end_for(inner.as_bytes(), KEPT)];
        let start = unescape::unescape(start.as_bytes())
            .map(|(text, _)| text)
            .unwrap_or_default();
        match kept_prefix(len, &start) {
            Some(prefix) => {
                let from = at + 1;
                *self.whole = Some(LongText {
                    place: None,
                    literal: Some(from..from + inner.len()),
                });
                Ok(Value::String(prefix.to_owned()))
            }
            // Its start does not decide: decoded whole, as a `Value` reads it.
            None => unescape::unescape(inner.as_bytes())
                .map(|(text, _)| Value::String(text))
                .ok_or_else(|| D::Error::custom("a text checked valid does not decode")),
        }
    }
}

impl<'de> Visitor<'de> for Text<'_> {
    type Value = Value;
    like_a_value!(strings_elsewhere);

    fn visit_borrowed_str<E>(self, text: &'de str) -> Result<Value, E> {
        let start = text.as_ptr() as usize - self.doc.as_ptr() as usize;
        Ok(self.keep(text, Some(start..start + text.len())))
    }

    fn visit_str<E>(self, text: &str) -> Result<Value, E> {
        Ok(self.keep(text, None))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Value, A::Error> {
        array(seq)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Value, A::Error> {
        object(map)
    }
}

impl Text<'_> {
    /// `text` as the value keeps it: whole, or its prefix with its place noted.
    fn keep(self, text: &str, place: Option<Range<usize>>) -> Value {
        match kept_prefix(text.len(), text) {
            Some(prefix) => {
                *self.whole = Some(LongText {
                    literal: place.clone(),
                    place,
                });
                Value::String(prefix.to_owned())
            }
            None => Value::String(text.to_owned()),
        }
    }
}

/// The prefix a text of `len` bytes that starts with `start` (all of it, or at least its
/// first [`KEPT`] bytes) is kept as, when it may be shortened (see the module's
/// documentation).
fn kept_prefix(len: usize, text: &str) -> Option<&str> {
    if len <= LONG_TEXT {
        return None;
    }
    let mut end = KEPT;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let prefix = &text[..end];
    let start = prefix.trim_start();
    let decided = !start.is_empty()
        && (!prefix.starts_with("__ENVELOPE_V")
            || crate::formats::tool_envelope_v1::split_prefix(prefix).is_some());
    decided.then_some(prefix)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(doc: &str) -> (Value, LongTexts) {
        let mut long = LongTexts::new();
        let mut de = serde_json::Deserializer::from_str(doc);
        let value = Content {
            doc,
            long: &mut long,
        }
        .deserialize(&mut de)
        .unwrap();
        (value, long)
    }

    #[test]
    fn long_texts_are_kept_as_a_prefix_with_their_place() {
        let long = "a".repeat(LONG_TEXT + 1);
        let doc = format!(
            r#"[{{"type":"text","text":"short"}},{{"type":"text","text":"{long}","x":[1]}},7]"#
        );
        let (value, places) = read(&doc);
        let kept = value[1]["text"].as_str().unwrap();
        assert_eq!(kept, &long[..KEPT]);
        assert_eq!(value[0]["text"], "short");
        assert_eq!(value[1]["x"], serde_json::json!([1]));
        assert_eq!(value[2], 7);
        let range = places[&1].place.clone().unwrap();
        assert_eq!(&doc[range], long);
        assert_eq!(places[&1].literal, places[&1].place);
        assert_eq!(places.len(), 1);
    }

    #[test]
    fn texts_whose_start_does_not_decide_are_kept_whole() {
        let filler = "b".repeat(LONG_TEXT);
        for text in [
            " ".repeat(LONG_TEXT + 1),
            format!("__ENVELOPE_V{}", "1".repeat(LONG_TEXT)),
        ] {
            let doc = format!(r#"[{{"type":"text","text":"{text}"}}]"#);
            let (value, places) = read(&doc);
            assert!(places.is_empty(), "{}", &text[..20]);
            assert!(value[0]["text"].as_str().unwrap().len() > LONG_TEXT);
        }
        // Texts that may be JSON documents are shortened (the abridged validation accepts
        // them as proven mirrors only).
        for text in [format!("{{{filler}"), format!("  [{filler}")] {
            let doc = format!(r#"[{{"type":"text","text":"{text}"}}]"#);
            let (value, places) = read(&doc);
            assert_eq!(value[0]["text"].as_str().unwrap(), &text[..KEPT]);
            assert_eq!(&doc[places[&0].place.clone().unwrap()], text);
        }
        // Escaped: shortened, its literal's place known, but not the text's.
        let doc = format!(r#"[{{"type":"text","text":"\n{filler}"}}]"#);
        let (value, places) = read(&doc);
        assert_eq!(
            value[0]["text"].as_str().unwrap(),
            format!("\n{}", &filler[..KEPT - 1])
        );
        assert_eq!(places[&0].place, None);
        let literal = places[&0].literal.clone().unwrap();
        assert_eq!(&doc[literal], format!("\\n{filler}"));
        // A character cut at the prefix's end is left out whole.
        let text = format!("{}é{filler}", "c".repeat(KEPT - 1));
        let doc = format!(r#"[{{"type":"text","text":"{text}"}}]"#);
        let (value, places) = read(&doc);
        assert_eq!(value[0]["text"].as_str().unwrap(), &text[..KEPT - 1]);
        assert_eq!(places.len(), 1);
    }

    #[test]
    fn the_last_of_repeated_texts_counts() {
        let long = "d".repeat(LONG_TEXT + 1);
        let doc = format!(r#"[{{"text":"{long}","text":"short"}},{{"text":"x","text":"{long}"}}]"#);
        let (value, places) = read(&doc);
        assert_eq!(value[0]["text"], "short");
        assert_eq!(places.keys().copied().collect::<Vec<_>>(), [1]);
    }
}
