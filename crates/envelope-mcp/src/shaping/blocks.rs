//! The content blocks of a large result, read from its text without building the rest: the
//! text an error result quotes, while `structuredContent` and other members are only
//! skipped over.

use std::fmt;

use serde::Deserializer as _;
use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use super::link;

/// The result's text for an error result, at most `max` bytes, as
/// [`link::excerpt`] gives it.
pub(crate) fn excerpt(full: &[u8], max: usize) -> Result<link::Excerpt, serde_json::Error> {
    Ok(link::excerpt(&content(full, max)?, max))
}

/// `{"content": [...]}` of the result: each block whole, except the `text` of text blocks,
/// which is cut to `keep_text` bytes.
fn content(full: &[u8], keep_text: usize) -> Result<Value, serde_json::Error> {
    // Not an object (the cut refuses it): no blocks.
    if full.first() != Some(&b'{') {
        return Ok(serde_json::json!({}));
    }
    let mut de = serde_json::Deserializer::from_slice(full);
    let (blocks, structured) = de.deserialize_map(ResultVisitor { keep_text })?;
    de.end()?;
    // `structuredContent` only says that there is one (for [`link::excerpt`]).
    Ok(match structured {
        true => serde_json::json!({ "content": blocks, "structuredContent": {} }),
        false => serde_json::json!({ "content": blocks }),
    })
}

/// The result: its `content` member read, every other member skipped (and whether one of
/// them is `structuredContent`).
struct ResultVisitor {
    keep_text: usize,
}

impl<'de> Visitor<'de> for ResultVisitor {
    type Value = (Vec<Value>, bool);

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a CallToolResult object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(Vec<Value>, bool), A::Error> {
        let mut blocks = Vec::new();
        let mut structured = false;
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            match key.as_ref() {
                // The last `content` wins, as in the parsed value.
                "content" => blocks = map.next_value_seed(BlocksSeed(self.keep_text))?,
                other => {
                    structured |= other == "structuredContent";
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok((blocks, structured))
    }
}

/// `content`: a list of blocks (anything else reads as no blocks, as the cut sees it).
struct BlocksSeed(usize);

impl<'de> DeserializeSeed<'de> for BlocksSeed {
    type Value = Vec<Value>;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Vec<Value>, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for BlocksSeed {
    type Value = Vec<Value>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("content blocks")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<Value>, A::Error> {
        let mut blocks = Vec::new();
        while let Some(block) = seq.next_element_seed(BlockSeed(self.0))? {
            blocks.push(block);
        }
        Ok(blocks)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Vec<Value>, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Vec::new())
    }

    fn visit_str<E>(self, _: &str) -> Result<Vec<Value>, E> {
        Ok(Vec::new())
    }

    fn visit_bool<E>(self, _: bool) -> Result<Vec<Value>, E> {
        Ok(Vec::new())
    }

    fn visit_u64<E>(self, _: u64) -> Result<Vec<Value>, E> {
        Ok(Vec::new())
    }

    fn visit_i64<E>(self, _: i64) -> Result<Vec<Value>, E> {
        Ok(Vec::new())
    }

    fn visit_f64<E>(self, _: f64) -> Result<Vec<Value>, E> {
        Ok(Vec::new())
    }

    fn visit_unit<E>(self) -> Result<Vec<Value>, E> {
        Ok(Vec::new())
    }
}

/// One block. A text block's `text` is cut when its `type` came first, as
/// writers put it; read whole otherwise, since the block may turn out not to be text. (The
/// text read has no duplicate keys: it is the compact JSON of a parsed value.)
struct BlockSeed(usize);

impl<'de> DeserializeSeed<'de> for BlockSeed {
    type Value = Value;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for BlockSeed {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a content block")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut block = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let is_text = block.get("type").and_then(Value::as_str) == Some("text");
            let value = match (key.as_str(), is_text) {
                ("text", true) => match map.next_value::<Value>()? {
                    Value::String(s) => Value::String(link::prefix(&s, self.0).to_string()),
                    other => other,
                },
                _ => map.next_value::<Value>()?,
            };
            block.insert(key, value);
        }
        Ok(Value::Object(block))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Value, A::Error> {
        serde::Deserialize::deserialize(serde::de::value::SeqAccessDeserializer::new(seq))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
}
