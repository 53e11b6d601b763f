//! The keys that appear twice in one object of a document (valid JSON text), found by
//! walking its bytes: strings are stepped over, never decoded (but for keys with escapes),
//! so a long escaped text costs no copy. (serde_json, asked for any value, decodes every
//! string into a buffer that grows by doubling: three times a 200 MB text at once.)

use std::borrow::Cow;
use std::collections::HashSet;

use crate::json::pointer;
use crate::json::unescape::unescape;

/// One open container of the walk.
enum Frame<'t> {
    Object {
        keys: HashSet<Cow<'t, str>>,
        /// The key of the member being read; `None` while a key is expected.
        key: Option<Cow<'t, str>>,
    },
    Array {
        index: usize,
    },
}

/// Every `(pointer of the object, key)` of a key that appears again in its object, in the
/// order of the repeats. `text` must be valid JSON (it is, once parsed).
pub(crate) fn find(text: &str) -> Vec<(String, String)> {
    let bytes = text.as_bytes();
    let mut found = Vec::new();
    let mut stack: Vec<Frame<'_>> = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        match bytes[at] {
            b'{' => stack.push(Frame::Object {
                keys: HashSet::new(),
                key: None,
            }),
            b'[' => stack.push(Frame::Array { index: 0 }),
            b'}' | b']' => {
                stack.pop();
            }
            b',' => match stack.last_mut() {
                Some(Frame::Array { index }) => *index += 1,
                Some(Frame::Object { key, .. }) => *key = None,
                None => {}
            },
            b'"' => {
                let end = string_end(bytes, at + 1);
                if let Some(Frame::Object { keys, key: None }) = stack.last_mut() {
                    let raw = &text[at + 1..end];
                    let name = match memchr::memchr(b'\\', raw.as_bytes()) {
                        None => Cow::Borrowed(raw),
                        Some(_) => Cow::Owned(
                            unescape(raw.as_bytes())
                                .map_or_else(|| raw.to_string(), |(decoded, _)| decoded),
                        ),
                    };
                    if !keys.insert(name.clone()) {
                        found.push((pointer_of(&stack[..stack.len() - 1]), name.to_string()));
                    }
                    if let Some(Frame::Object { key, .. }) = stack.last_mut() {
                        *key = Some(name);
                    }
                }
                at = end;
            }
            _ => {}
        }
        at += 1;
    }
    found
}

/// Where the closing quote of the string whose text starts at `from` is: the first quote
/// after an even run of backslashes (or the end of the text).
fn string_end(bytes: &[u8], from: usize) -> usize {
    let mut end = from;
    loop {
        let Some(quote) = memchr::memchr(b'"', &bytes[end..]) else {
            return bytes.len();
        };
        end += quote;
        let backslashes = bytes[from..end]
            .iter()
            .rev()
            .take_while(|&&b| b == b'\\')
            .count();
        if backslashes % 2 == 0 {
            return end;
        }
        end += 1;
    }
}

/// The JSON Pointer of the value the innermost of `frames` is reading.
fn pointer_of(frames: &[Frame<'_>]) -> String {
    frames.iter().fold(String::new(), |at, frame| match frame {
        Frame::Object { key, .. } => pointer::join(&at, key.as_deref().unwrap_or("")),
        Frame::Array { index } => format!("{at}/{index}"),
    })
}

#[cfg(test)]
mod tests {
    //! The serde_json walk this one replaced, kept as its oracle.

    use std::borrow::Cow;
    use std::collections::HashSet;
    use std::fmt;

    use proptest::prelude::*;
    use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

    use super::find;
    use crate::json::pointer;

    enum Place<'p> {
        Root,
        Member(&'p Place<'p>, &'p str),
        Item(&'p Place<'p>, usize),
    }

    impl Place<'_> {
        fn pointer(&self) -> String {
            match self {
                Place::Root => String::new(),
                Place::Member(parent, key) => pointer::join(&parent.pointer(), key),
                Place::Item(parent, i) => format!("{}/{i}", parent.pointer()),
            }
        }
    }

    struct Walk<'f, 'p> {
        at: &'p Place<'p>,
        found: &'f mut Vec<(String, String)>,
    }

    impl<'de> DeserializeSeed<'de> for Walk<'_, '_> {
        type Value = ();
        fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
            d.deserialize_any(self)
        }
    }

    impl<'de> Visitor<'de> for Walk<'_, '_> {
        type Value = ();

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("any JSON value")
        }

        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
            let mut seen = HashSet::new();
            while let Some(key) = map.next_key::<Cow<'de, str>>()? {
                if !seen.insert(key.clone()) {
                    self.found.push((self.at.pointer(), key.to_string()));
                }
                map.next_value_seed(Walk {
                    at: &Place::Member(self.at, &key),
                    found: self.found,
                })?;
            }
            Ok(())
        }

        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
            let mut i = 0usize;
            while seq
                .next_element_seed(Walk {
                    at: &Place::Item(self.at, i),
                    found: self.found,
                })?
                .is_some()
            {
                i += 1;
            }
            Ok(())
        }

        fn visit_bool<E>(self, _: bool) -> Result<(), E> {
            Ok(())
        }
        fn visit_i64<E>(self, _: i64) -> Result<(), E> {
            Ok(())
        }
        fn visit_u64<E>(self, _: u64) -> Result<(), E> {
            Ok(())
        }
        fn visit_f64<E>(self, _: f64) -> Result<(), E> {
            Ok(())
        }
        fn visit_str<E>(self, _: &str) -> Result<(), E> {
            Ok(())
        }
        fn visit_unit<E>(self) -> Result<(), E> {
            Ok(())
        }
    }

    fn by_serde(text: &str) -> Vec<(String, String)> {
        let mut found = Vec::new();
        let mut de = serde_json::Deserializer::from_str(text);
        Walk {
            at: &Place::Root,
            found: &mut found,
        }
        .deserialize(&mut de)
        .unwrap();
        found
    }

    /// JSON text with repeated keys, keys with escapes (`\"`, `\\`, `\u0061` for `a`),
    /// strings holding brackets, quotes and commas, nesting, white space.
    fn json() -> impl Strategy<Value = String> {
        let key = prop::sample::select(vec!["a", "b", "\\u0061", "a\\\"", "\\\\", "x/y~", ""]);
        let scalar = prop::sample::select(vec![
            "1",
            "-2.5e3",
            "true",
            "null",
            "\"s\"",
            "\"{[,:]}\\\"\\\\\"",
            "\"\\\\\"",
            "\"\"",
        ]);
        let leaf = scalar.prop_map(String::from);
        leaf.prop_recursive(4, 40, 5, move |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..5)
                    .prop_map(|items| format!("[ {} ]", items.join(" , "))),
                prop::collection::vec((key.clone(), inner), 0..5).prop_map(|members| {
                    let members: Vec<String> = members
                        .into_iter()
                        .map(|(k, v)| format!("\"{k}\" :\n{v}"))
                        .collect();
                    format!("{{{}}}", members.join(","))
                }),
            ]
        })
    }

    proptest! {
        #[test]
        fn the_walk_finds_what_serde_json_finds(text in json()) {
            prop_assert_eq!(find(&text), by_serde(&text), "{}", text);
        }
    }
}
