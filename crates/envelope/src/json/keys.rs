//! Object keys read without copying them, and the set of keys seen in one object: what
//! readers that never build a `Value` need to catch duplicate keys.

use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, Visitor};

/// One of 64 classes of a key, from its length and its first and last bytes (as a bit):
/// keys of different classes differ, so most keys are found new without a comparison.
pub(crate) fn key_class(bytes: &[u8]) -> u64 {
    let first = usize::from(bytes.first().copied().unwrap_or(0));
    let last = usize::from(bytes.last().copied().unwrap_or(0));
    1 << ((3 * bytes.len() + 5 * first + 7 * last) % 64)
}

/// The keys of one object so far: the first eight without allocating (objects in
/// envelopes are small), the rest hashed (a hostile object may have a million keys).
#[derive(Default)]
pub(crate) struct KeySet<'de> {
    inline: [Cow<'de, str>; 8],
    len: usize,
    spill: HashSet<Cow<'de, str>>,
}

impl<'de> KeySet<'de> {
    /// Adds `key`; `false` if it was there already.
    pub(crate) fn insert(&mut self, key: Cow<'de, str>) -> bool {
        let inline = &self.inline[..self.len.min(self.inline.len())];
        if inline.contains(&key) || self.spill.contains(&key) {
            return false;
        }
        match self.inline.get_mut(self.len) {
            Some(slot) => *slot = key,
            None => {
                self.spill.insert(key);
            }
        }
        self.len += 1;
        true
    }
}

/// An object key, borrowed from the input when it has no escapes.
pub(crate) struct Key;

impl<'de> DeserializeSeed<'de> for Key {
    type Value = Cow<'de, str>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Cow<'de, str>, D::Error> {
        d.deserialize_str(KeyVisitor)
    }
}

struct KeyVisitor;

impl<'de> Visitor<'de> for KeyVisitor {
    type Value = Cow<'de, str>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string")
    }
    fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Cow<'de, str>, E> {
        Ok(Cow::Borrowed(s))
    }
    fn visit_str<E>(self, s: &str) -> Result<Cow<'de, str>, E> {
        Ok(Cow::Owned(s.to_string()))
    }
}
