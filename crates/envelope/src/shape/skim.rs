//! Reading a JSON document for a byte budget: an array's items past the point where no cut
//! of at most `limit` bytes can keep them are skimmed — sized, never built.
//!
//! The point is the one [`Measured::bounded`](super::cut::Measured::bounded) finds: once the
//! smallest forms (level 0) of an array's first items add up to more than the limit, no
//! level that fits keeps those items, let alone the ones after them. Reading the 2.2 MB
//! payload of the shaping benchmark (cut to 8 KiB) this way builds 85 of its 10,000 items.
//!
//! What a skimmed array lost is kept in a [`Tail`] (how many items, their compact JS-dialect
//! size, the longest array and string in them), and the array ends with a mark: a string
//! naming the tail. The reader refuses a document in which a string of its own reads like
//! a mark, so marks cannot be forged; it also refuses (for the caller to read the document
//! whole) a duplicate key inside a skimmed item, where a sum of sizes would not be the size
//! of the value that `serde_json` builds (the last duplicate wins).

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

use super::cut::{escaped_len, skeleton_size};
use crate::json::keys::{Key, KeySet};
use crate::json::number::js_len;

/// What a skimmed array's last item says: the tail's index follows.
const MARK: &str = "\u{FFFF}envelope:skimmed:";

/// The items of an array that were skimmed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tail {
    /// How many items were skimmed.
    pub items: usize,
    /// Their compact JS-dialect sizes, summed (commas not included).
    pub size: usize,
    /// The longest array in them (items), their own count not included.
    pub max_array: usize,
    /// The longest string value in them (bytes).
    pub max_string: usize,
}

/// A document read for a budget.
#[derive(Debug)]
pub struct Skimmed {
    /// The document, each skimmed array ending with its mark.
    pub value: Value,
    /// The tails, indexed by the marks.
    pub tails: Vec<Tail>,
}

/// Reads `input` for cuts of at most `limit` bytes; `None` when it cannot be read this way
/// (not UTF-8, a byte-order mark, a syntax error, a string that reads like a mark, a
/// duplicate key in a skimmed item): read it whole, which also says what is wrong with it.
pub fn read(input: &[u8], limit: usize) -> Option<Skimmed> {
    let text = std::str::from_utf8(input).ok()?;
    if text.starts_with('\u{FEFF}') {
        return None;
    }
    let mut tails = Vec::new();
    let mut de = serde_json::Deserializer::from_str(text);
    let value = Build {
        limit,
        tails: &mut tails,
    }
    .deserialize(&mut de)
    .ok()?;
    de.end().ok()?;
    Some(Skimmed { value, tails })
}

/// The tail a skimmed array's items end with, and the items before its mark.
pub fn split_tail<'v>(items: &'v [Value], tails: &[Tail]) -> (&'v [Value], Option<Tail>) {
    if tails.is_empty() {
        return (items, None);
    }
    match items.split_last() {
        Some((Value::String(last), kept)) => match mark_index(last) {
            Some(i) => (kept, tails.get(i).copied()),
            None => (items, None),
        },
        _ => (items, None),
    }
}

/// The tail index a mark names (`None`: not a mark).
pub fn mark_index(s: &str) -> Option<usize> {
    s.strip_prefix(MARK)?.parse().ok()
}

/// Builds the value serde_json would build, skimming what no cut keeps.
struct Build<'t> {
    limit: usize,
    tails: &'t mut Vec<Tail>,
}

impl Build<'_> {
    fn child(&mut self) -> Build<'_> {
        Build {
            limit: self.limit,
            tails: self.tails,
        }
    }
}

impl<'de> DeserializeSeed<'de> for Build<'_> {
    type Value = Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Build<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    // The scalars as `serde_json::Value`'s own visitor makes them.
    fn visit_bool<E>(self, b: bool) -> Result<Value, E> {
        Ok(Value::Bool(b))
    }
    fn visit_i64<E>(self, i: i64) -> Result<Value, E> {
        Ok(Value::Number(i.into()))
    }
    fn visit_u64<E>(self, u: u64) -> Result<Value, E> {
        Ok(Value::Number(u.into()))
    }
    fn visit_f64<E>(self, f: f64) -> Result<Value, E> {
        Ok(Number::from_f64(f).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E: de::Error>(self, s: &str) -> Result<Value, E> {
        self.visit_string(s.to_owned())
    }
    fn visit_string<E: de::Error>(self, s: String) -> Result<Value, E> {
        if s.starts_with(MARK) {
            return Err(E::custom("a string that reads like a skim mark"));
        }
        Ok(Value::String(s))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let value = map.next_value_seed(self.child())?;
            out.insert(key, value);
        }
        Ok(Value::Object(out))
    }

    fn visit_seq<A: SeqAccess<'de>>(mut self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        // What `Measured::bounded` adds up: the array's brackets, then each item's level-0
        // size and its comma.
        let mut smallest = 2usize;
        while let Some(item) = seq.next_element_seed(self.child())? {
            smallest =
                smallest.saturating_add(skeleton_size(&item) + usize::from(!items.is_empty()));
            items.push(item);
            if smallest > self.limit {
                let mut tail = Tail::default();
                while let Some(Size(item)) = seq.next_element()? {
                    tail.items += 1;
                    tail.size += item.size;
                    tail.max_array = tail.max_array.max(item.max_array);
                    tail.max_string = tail.max_string.max(item.max_string);
                }
                if tail.items > 0 {
                    items.push(Value::String(format!("{MARK}{}", self.tails.len())));
                    self.tails.push(tail);
                }
                break;
            }
        }
        Ok(Value::Array(items))
    }
}

/// A value's compact JS-dialect size, and the longest array and string in it.
#[derive(Clone, Copy, Default)]
struct Sized {
    size: usize,
    max_array: usize,
    max_string: usize,
}

/// Reads a value without building it: its [`Sized`].
struct Size(Sized);

impl<'de> de::Deserialize<'de> for Size {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(SizeVisitor)
    }
}

struct SizeVisitor;

impl SizeVisitor {
    fn scalar(size: usize) -> Size {
        Size(Sized {
            size,
            ..Sized::default()
        })
    }
}

impl<'de> Visitor<'de> for SizeVisitor {
    type Value = Size;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, b: bool) -> Result<Size, E> {
        Ok(Self::scalar(if b { 4 } else { 5 }))
    }
    fn visit_i64<E>(self, i: i64) -> Result<Size, E> {
        Ok(Self::scalar(js_len(&i.into())))
    }
    fn visit_u64<E>(self, u: u64) -> Result<Size, E> {
        Ok(Self::scalar(js_len(&u.into())))
    }
    fn visit_f64<E>(self, f: f64) -> Result<Size, E> {
        Ok(Self::scalar(Number::from_f64(f).map_or(4, |n| js_len(&n))))
    }
    fn visit_str<E>(self, s: &str) -> Result<Size, E> {
        Ok(Size(Sized {
            size: escaped_len(s),
            max_array: 0,
            max_string: s.len(),
        }))
    }
    fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Size, E> {
        // Borrowed: the input had no escape in it, so the string has no control character,
        // quote or backslash, and the writer copies it as it is.
        debug_assert_eq!(escaped_len(s), s.len() + 2);
        Ok(Size(Sized {
            size: s.len() + 2,
            max_array: 0,
            max_string: s.len(),
        }))
    }
    fn visit_unit<E>(self) -> Result<Size, E> {
        Ok(Self::scalar(4))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Size, A::Error> {
        let mut out = Sized {
            size: 2,
            ..Sized::default()
        };
        let mut seen = KeySet::default();
        let mut len = 0usize;
        while let Some(key) = map.next_key_seed(Key)? {
            let Size(value) = map.next_value()?;
            let key_len = match &key {
                // As for borrowed strings: nothing in it is escaped.
                Cow::Borrowed(k) => k.len() + 2,
                Cow::Owned(k) => escaped_len(k),
            };
            out.size += key_len + 1 + value.size;
            out.max_array = out.max_array.max(value.max_array);
            out.max_string = out.max_string.max(value.max_string);
            len += 1;
            if !seen.insert(key) {
                return Err(de::Error::custom("a duplicate key in a skimmed item"));
            }
        }
        out.size += len.saturating_sub(1);
        Ok(Size(out))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Size, A::Error> {
        let mut out = Sized {
            size: 2,
            ..Sized::default()
        };
        let mut len = 0usize;
        while let Some(Size(item)) = seq.next_element()? {
            out.size += item.size;
            out.max_array = out.max_array.max(item.max_array);
            out.max_string = out.max_string.max(item.max_string);
            len += 1;
        }
        out.size += len.saturating_sub(1);
        out.max_array = out.max_array.max(len);
        Ok(Size(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shape::cut::js_size;
    use serde_json::json;

    fn skim(v: &Value, limit: usize) -> Skimmed {
        read(serde_json::to_string(v).unwrap().as_bytes(), limit).unwrap()
    }

    #[test]
    fn skimmed_items_are_sized_as_the_writer_would_write_them() {
        let items: Vec<Value> = (0..50)
            .map(|i| json!({"i": i, "f": i as f64 / 3.0, "s": "é\n\"".repeat(i), "n": [null, true, false, -1]}))
            .collect();
        let doc = json!({"items": items});
        let skimmed = skim(&doc, 200);
        let kept = skimmed.value["items"].as_array().unwrap();
        let (kept, tail) = split_tail(kept, &skimmed.tails);
        let tail = tail.unwrap();
        assert_eq!(kept, &items[..kept.len()]);
        assert_eq!(tail.items + kept.len(), 50);
        let rest = &items[kept.len()..];
        assert_eq!(tail.size, rest.iter().map(js_size).sum::<usize>());
        assert_eq!(
            tail.max_string,
            rest.iter()
                .map(|v| v["s"].as_str().unwrap().len())
                .max()
                .unwrap()
        );
        assert_eq!(tail.max_array, 4);
    }

    #[test]
    fn a_document_that_fits_is_read_whole() {
        let doc = json!({"a": [1, 2, 3], "b": {"c": ["x", "y"]}});
        let skimmed = skim(&doc, 1000);
        assert_eq!(skimmed.value, doc);
        assert!(skimmed.tails.is_empty());
    }

    #[test]
    fn refuses_forged_marks_and_duplicates_it_cannot_size() {
        let forged = format!(r#"{{"a": ["{MARK}0"]}}"#);
        assert!(read(forged.as_bytes(), 1000).is_none());
        // A duplicate key in a kept item is serde_json's business (the last one wins) ...
        let kept = read(br#"[{"a": 1, "a": 2}]"#, 1000).unwrap();
        assert_eq!(kept.value, json!([{"a": 2}]));
        // ... in a skimmed one it would make the sizes wrong.
        assert!(read(br#"[1, 2, 3, {"a": 1, "a": 2}]"#, 3).is_none());
        assert!(read(b"[1, 2", 3).is_none());
        assert!(read(b"\xEF\xBB\xBF[]", 3).is_none());
    }
}
