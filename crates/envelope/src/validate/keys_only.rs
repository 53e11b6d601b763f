//! An MCP result's `_meta` read for validation as its keys only: MCP's and operations'
//! rules and schemas read no more of it than that it is an object (and detection reads its
//! keys: ctxo's evidence), so a large one is never built. For every other format it is read
//! again whole (ctxo's rules read its `_meta`).

use std::fmt;
use std::ops::Range;

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use super::long_text::{array, like_a_value};
use crate::formats::FormatId;
use crate::formats::abridge::Placeholder;

/// The members read as their keys only, by where they are, with the format whose rules and
/// schema read no more of them: an MCP result's `_meta`, and the one operations carries in
/// `meta._meta`.
const KEYS_ONLY: [(&[&str], FormatId); 2] = [
    (&["_meta"], FormatId::Mcp),
    (&["meta", "_meta"], FormatId::Operations),
];

/// Whether the root member `key` holds a member read as its keys only (or is one).
pub(super) fn holds_keys_only(key: &str) -> bool {
    KEYS_ONLY.iter().any(|(path, _)| path[0] == key)
}

/// The root member `key` read as a `Value` is, but for what [`KEYS_ONLY`] reads as keys.
pub(super) fn member(key: &str) -> KeysOnly<'static> {
    KeysOnly {
        paths: KEYS_ONLY
            .iter()
            .filter(|(path, _)| path[0] == key)
            .map(|(path, _)| &path[1..])
            .collect(),
    }
}

/// The first document of `text`, read as [`text`](super::text)'s reader reads it, but with
/// the members of [`KEYS_ONLY`] as their keys; and the error about what follows it.
pub(super) fn read(text: &str) -> Result<(Value, Option<serde_json::Error>), serde_json::Error> {
    let mut de = serde_json::Deserializer::from_str(text);
    let root = KeysOnly {
        paths: KEYS_ONLY.iter().map(|(path, _)| *path).collect(),
    };
    let value = root.deserialize(&mut de)?;
    Ok((value, de.end().err()))
}

/// Reads whole again, from `text` (the document `root` was read from), what was read as
/// keys for a format other than the one `format` is; `None` when it cannot be found (never:
/// it was read).
pub(super) fn restore(root: &mut Value, text: &str, format: FormatId) -> Option<()> {
    for (path, owner) in KEYS_ONLY {
        let pointer: String = path.iter().map(|key| format!("/{key}")).collect();
        if format != owner && root.pointer(&pointer).is_some() {
            let span = span_at(text, path)?;
            *root.pointer_mut(&pointer)? = serde_json::from_str(&text[span]).ok()?;
        }
    }
    Some(())
}

/// Where the value at `path` is in the document `text` (at each step the last of a repeated
/// key, the one serde_json's map keeps).
fn span_at(text: &str, path: &[&str]) -> Option<Range<usize>> {
    use crate::json::reader::{Event, Reader};
    let mut span = 0..text.len();
    for key in path {
        let mut reader = Reader::new(text[span.clone()].as_bytes());
        if !matches!(reader.next().ok()?, Some(Event::BeginObject)) {
            return None;
        }
        let mut found = None;
        while let Some(Event::Key(name)) = reader.next().ok()? {
            let member = reader.skip().ok()??;
            if name.value() == *key {
                found = Some(member);
            }
        }
        let found = found?;
        span = span.start + found.start..span.start + found.end;
    }
    Some(span)
}

/// A value read as serde_json's `Value` reads it (the same calls of the parser: the same
/// errors), but for the members at `paths` (from it; an empty path: the value itself), read
/// as their keys: each value a [`Placeholder`].
pub(super) struct KeysOnly<'p> {
    paths: Vec<&'p [&'p str]>,
}

impl<'de> DeserializeSeed<'de> for KeysOnly<'_> {
    type Value = Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        // An empty path: this value itself.
        if self.paths.iter().any(|path| path.is_empty()) {
            let keys = Placeholder {
                items: None,
                every_key: true,
            };
            return keys.deserialize(d);
        }
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for KeysOnly<'_> {
    type Value = Value;

    like_a_value!();

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut object = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let below: Vec<&[&str]> = self
                .paths
                .iter()
                .filter(|path| path.first() == Some(&key.as_str()))
                .map(|path| &path[1..])
                .collect();
            let value = match below.is_empty() {
                true => map.next_value::<Value>()?,
                false => map.next_value_seed(KeysOnly { paths: below })?,
            };
            object.insert(key, value);
        }
        Ok(Value::Object(object))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Value, A::Error> {
        array(seq)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_members_are_read_as_their_keys_and_read_whole_again_for_other_formats() {
        let text = r#"{"_meta":{"a":[1,2],"b":{"c":1}},"meta":{"source":"mcp","_meta":{"x":"y"},"k":[1.5]},"n":[1,{"_meta":{"z":1}}]}"#;
        let (mut value, rest) = read(text).unwrap();
        assert!(rest.is_none());
        assert_eq!(
            value,
            serde_json::json!({"_meta": {"a": [], "b": {}}, "meta": {"source": "mcp", "_meta": {"x": ""}, "k": [1.5]}, "n": [1, {"_meta": {"z": 1}}]})
        );
        let whole: Value = serde_json::from_str(text).unwrap();
        restore(&mut value, text, FormatId::Ctxo).unwrap();
        assert_eq!(value, whole);
        // Each for the other's format only.
        let (mut mcp, _) = read(text).unwrap();
        restore(&mut mcp, text, FormatId::Mcp).unwrap();
        assert_eq!(mcp["_meta"], serde_json::json!({"a": [], "b": {}}));
        assert_eq!(mcp["meta"]["_meta"], whole["meta"]["_meta"]);
        // A root member read on its own (as the abridged read reads them).
        let mut de = serde_json::Deserializer::from_str(r#"{"a":[1],"b":{"c":2}}"#);
        let meta = member("_meta").deserialize(&mut de).unwrap();
        assert_eq!(meta, serde_json::json!({"a": [], "b": {}}));
        let mut de = serde_json::Deserializer::from_str(r#"{"_meta":{"a":[1]},"b":[2]}"#);
        let meta = member("meta").deserialize(&mut de).unwrap();
        assert_eq!(meta, serde_json::json!({"_meta": {"a": []}, "b": [2]}));
        // What serde_json refuses is refused at the same place.
        let deep = format!(
            r#"{{"_meta":{{"a":{}{}}}}}"#,
            "[".repeat(200),
            "]".repeat(200)
        );
        let expected = serde_json::from_str::<Value>(&deep)
            .unwrap_err()
            .to_string();
        assert_eq!(read(&deep).unwrap_err().to_string(), expected);
    }
}
