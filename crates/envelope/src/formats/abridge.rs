//! Reading a payload without building it, for validating a large document in bounded
//! memory (see [`validate`](crate::validate)): which root members are payload, and the
//! serde readers that walk them. They read with serde_json's `deserialize_any`, as reading a
//! `Value` does, so the errors in a payload are a `Value`'s, at the same places.

use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// Whether the root member `key` is read abridged: `data` (in any case, as Go's decoder
/// reads protocol-v1) and every member that no format's detection reads, but MCP's
/// `isError` and `resultType`. The members detection reads are kept whole, so the format
/// detected is the whole document's.
pub(crate) fn is_payload_member(key: &str) -> bool {
    let kept = |k: &&str| k.eq_ignore_ascii_case(key);
    key.eq_ignore_ascii_case("data")
        || !(super::DETECTION_KEYS.iter().any(kept) || MCP_SCALARS.iter().any(kept))
}

/// MCP's root members besides `content`, `_meta` and the payload (`structuredContent`):
/// the schema's message about a wrong one prints its value. (Today an `mcp.shape` finding
/// at the same place hides that message; kept whole so that a change there cannot make the
/// abridged findings differ.)
const MCP_SCALARS: [&str; 2] = ["isError", "resultType"];

/// The members of a payload object that the rules read (protocol-v1's `data.artifact`,
/// `data.summary.preview` and `data.summary.status_code`): kept whole in a placeholder.
const READ_MEMBERS: [&str; 2] = ["artifact", "summary"];

/// A payload value, read as a placeholder of its JSON type: an object keeps only its
/// [`READ_MEMBERS`] (whole), an array is empty, a string `""`, a number `0`; `true`, `false`
/// and `null` are themselves.
#[derive(Default)]
pub(crate) struct Placeholder<'c> {
    /// Where to write the number of items, when the value is an array.
    pub(crate) items: Option<&'c mut Option<usize>>,
    /// An object keeps every key, each value a placeholder in turn (what detection reads
    /// of an MCP result's `_meta`, and all MCP's rules and schema read of it).
    pub(crate) every_key: bool,
}

impl<'de> DeserializeSeed<'de> for Placeholder<'_> {
    type Value = Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Placeholder<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut kept = Map::new();
        if self.every_key {
            while let Some(key) = map.next_key::<String>()? {
                kept.insert(key, map.next_value_seed(Placeholder::default())?);
            }
            return Ok(Value::Object(kept));
        }
        while let Some(key) = map.next_key_seed(Key)? {
            match key {
                Some(key) => {
                    kept.insert(key.to_string(), map.next_value::<Value>()?);
                }
                None => map.next_value_seed(Skip)?,
            }
        }
        Ok(Value::Object(kept))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Value, A::Error> {
        let n = skip_items(seq)?;
        if let Some(items) = self.items {
            *items = Some(n);
        }
        Ok(Value::Array(Vec::new()))
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, _: i64) -> Result<Value, E> {
        Ok(Value::from(0))
    }
    fn visit_u64<E>(self, _: u64) -> Result<Value, E> {
        Ok(Value::from(0))
    }
    fn visit_f64<E>(self, _: f64) -> Result<Value, E> {
        Ok(Value::from(0))
    }
    fn visit_str<E>(self, _: &str) -> Result<Value, E> {
        Ok(Value::String(String::new()))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
}

/// A key of a payload object: which of [`READ_MEMBERS`] it is, if any (nothing allocated).
struct Key;

impl<'de> DeserializeSeed<'de> for Key {
    type Value = Option<&'static str>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for Key {
    type Value = Option<&'static str>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a key")
    }

    fn visit_str<E>(self, key: &str) -> Result<Self::Value, E> {
        Ok(READ_MEMBERS.iter().copied().find(|k| *k == key))
    }
}

/// The `visit_*` methods of a visitor that walks a JSON scalar and keeps nothing of it.
macro_rules! scalars_walked {
    () => {
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
    };
}

/// Walks the items of an array; returns how many there were.
pub(crate) fn skip_items<'de, A: SeqAccess<'de>>(mut seq: A) -> Result<usize, A::Error> {
    let mut n = 0;
    while seq.next_element_seed(Skip)?.is_some() {
        n += 1;
    }
    Ok(n)
}

/// A value walked and dropped. `deserialize_any`, not serde's `IgnoredAny` (whose
/// serde_json reader skips without checking numbers): the errors must be a `Value`'s.
struct Skip;

impl<'de> DeserializeSeed<'de> for Skip {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Skip {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while map.next_key_seed(Key)?.is_some() {
            map.next_value_seed(Skip)?;
        }
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<(), A::Error> {
        skip_items(seq).map(drop)
    }
    scalars_walked!();
}

/// The `{payload, meta}` document of a tool-envelope-v1 block, read with its `payload`
/// abridged (a [`Placeholder`]) and the rest whole; a document that is not an object is
/// read as a placeholder of its type (its rules only look for an object).
pub(crate) struct Inner;

impl<'de> DeserializeSeed<'de> for Inner {
    type Value = Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Inner {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        // As a `Value` is read: a repeated key keeps its first place and its last value.
        let mut inner = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let value = match key.as_str() {
                "payload" => map.next_value_seed(Placeholder::default())?,
                _ => map.next_value::<Value>()?,
            };
            inner.insert(key, value);
        }
        Ok(Value::Object(inner))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Value, A::Error> {
        Placeholder::default().visit_seq(seq)
    }
    fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<Value, E> {
        Placeholder::default().visit_bool(v)
    }
    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Value, E> {
        Placeholder::default().visit_i64(v)
    }
    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Value, E> {
        Placeholder::default().visit_u64(v)
    }
    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Value, E> {
        Placeholder::default().visit_f64(v)
    }
    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Value, E> {
        Placeholder::default().visit_str(v)
    }
    fn visit_unit<E: serde::de::Error>(self) -> Result<Value, E> {
        Placeholder::default().visit_unit()
    }
}
