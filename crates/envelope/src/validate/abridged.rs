//! Validating a large document without building its payload: the envelope is read into a
//! `serde_json::Value` with each payload member replaced by a placeholder, and the
//! payload's bytes are only walked.
//!
//! Why the findings are the whole-tree validator's:
//! - The text: one serde_json pass reads the whole document with `deserialize_any`, as
//!   reading a `Value` does, so its errors (syntax, depth, numbers out of range, lone
//!   surrogates, data after the document) are the same, at the same places; whatever is
//!   built of it. The duplicate keys are found by the same separate pass as before.
//! - The rules and the schema see a root whose payload members are placeholders of the same
//!   JSON type that keep the members some rule reads (see [`placeholder`]). This holds for
//!   the formats and cases [`abridgeable`] accepts: protocol-v1, whose rules read only
//!   `data.artifact` and `data.summary` in the payload and whose schema takes any `data`;
//!   operations, unless an output schema or `meta.structuredContent` needs the whole `data`.
//!   Every other case is validated whole ([`validate`] says `None`).
//!
//! The memory is the input's and the envelope's: the payload is read with borrowed strings
//! and nothing is kept of it.

use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use super::{Context, Report, text};
use crate::formats::FormatId;
use crate::formats::findings::{Findings, Options};

/// Whether the root member `key` is read abridged: `data` (in any case, as Go's decoder
/// reads protocol-v1) and every member that no format's detection reads. The members
/// detection reads are kept whole, so the format detected is the whole document's.
pub(crate) fn is_payload_member(key: &str) -> bool {
    key.eq_ignore_ascii_case("data")
        || !crate::detect::DETECTION_KEYS
            .iter()
            .any(|k| k.eq_ignore_ascii_case(key))
}

/// The members of a payload object that the rules read (protocol-v1's `data.artifact`,
/// `data.summary.preview` and `data.summary.status_code`): kept whole in a placeholder.
const READ_MEMBERS: [&str; 2] = ["artifact", "summary"];

/// Validates `input` with its payload abridged; `None` when the document must be validated
/// whole (its root is not an object, or its format's rules or schema need the payload).
pub(super) fn validate(input: &[u8], options: &Options) -> Option<Report> {
    let mut findings = Findings::new(options.profile);
    let Some(parsed) = text::read_with(input, &mut findings, read) else {
        // Not JSON: the findings about the text are the report, as in the whole tree's.
        return Some(Report {
            format: options.format,
            formats: options.format.into_iter().collect(),
            stream: None,
            profile: options.profile,
            findings: findings.into_vec(),
        });
    };
    let root = Value::Object(parsed.value?);
    let format = match options.format {
        Some(format) => format,
        None => crate::detect::detect_value(&root).ok()?.format,
    };
    if !abridgeable(format, &root, options) {
        return None;
    }
    text::duplicate_keys(&parsed.text, &mut findings);
    let (format, _) = super::check_value_view(
        &root,
        Some(&parsed.text),
        options,
        &mut findings,
        Context::Document,
        true,
    );
    Some(Report {
        format,
        formats: format.into_iter().collect(),
        stream: None,
        profile: options.profile,
        findings: findings.into_vec(),
    })
}

/// Whether the rules and the schema of `format` find the same in the abridged `root` as in
/// the whole document (see the module's documentation).
fn abridgeable(format: FormatId, root: &Value, options: &Options) -> bool {
    match format {
        FormatId::ProtocolV1 => true,
        // `ops.mcp-data` compares `data` with `meta.structuredContent`, and an output
        // schema reads all of `data`.
        FormatId::Operations => {
            options.output_schema.is_none()
                && root
                    .get("meta")
                    .and_then(|m| m.get("structuredContent"))
                    .is_none()
        }
        _ => false,
    }
}

/// Reads the first document of `text`: its root object with the payload members
/// ([`is_payload_member`]) abridged (`None`: the root is not an object, walked only), and
/// the error about what follows it.
fn read(
    text: &str,
) -> Result<(Option<Map<String, Value>>, Option<serde_json::Error>), serde_json::Error> {
    let mut de = serde_json::Deserializer::from_str(text);
    let root = Root.deserialize(&mut de)?;
    Ok((root, de.end().err()))
}

/// The root: an object whose payload members are placeholders.
struct Root;

impl<'de> DeserializeSeed<'de> for Root {
    type Value = Option<Map<String, Value>>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Root {
    type Value = Option<Map<String, Value>>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        // As a `Value` is read: a repeated key keeps its first place and its last value.
        let mut root = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let value = if is_payload_member(&key) {
                map.next_value_seed(Placeholder)?
            } else {
                map.next_value::<Value>()?
            };
            root.insert(key, value);
        }
        Ok(Some(root))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        Skip.visit_seq(seq).map(|()| None)
    }
    fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
}

/// A payload value, read as a placeholder of its JSON type: an object keeps only its
/// [`READ_MEMBERS`] (whole), an array is empty, a string `""`, a number `0`; `true`, `false`
/// and `null` are themselves.
pub(crate) struct Placeholder;

impl<'de> DeserializeSeed<'de> for Placeholder {
    type Value = Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Placeholder {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut kept = Map::new();
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
        Skip.visit_seq(seq).map(|()| Value::Array(Vec::new()))
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

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(Skip)?.is_some() {}
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::findings::Profile;

    const META_PV1: &str = r#""meta":{"ts":"2026-01-01T00:00:00Z"},"error":{}"#;

    fn abridged(doc: &str, options: &Options) -> bool {
        validate(doc.as_bytes(), options).is_some()
    }

    #[test]
    fn protocol_v1_and_operations_are_read_abridged() {
        let spec = Options::new(None, Profile::Spec);
        let compat = Options::new(None, Profile::Compat);
        let pv1 = format!(r#"{{"version":1,"status":"ok","command":"a/b","data":[1],{META_PV1}}}"#);
        let ops = r#"{"data":[1],"meta":{"source":"local","operationId":"a","timestamp":1}}"#;
        for options in [&spec, &compat] {
            assert!(abridged(&pv1, options));
            assert!(abridged(ops, options));
        }
        // Not JSON: the text's findings, whatever the format.
        assert!(abridged("{\"data\":", &spec));
    }

    #[test]
    fn what_needs_the_whole_payload_is_read_whole() {
        let spec = Options::new(None, Profile::Spec);
        let mirrored = r#"{"data":{},"meta":{"source":"mcp","isError":false,"content":[],"structuredContent":{}}}"#;
        assert!(!abridged(mirrored, &spec));
        let schema = serde_json::json!({"type": "object"});
        let with_schema = spec.clone().with_output_schema(&schema).unwrap();
        let ops = r#"{"data":{},"meta":{"source":"local","operationId":"a","timestamp":1}}"#;
        assert!(!abridged(ops, &with_schema));
        // Other formats, roots that are not objects, documents of no format.
        assert!(!abridged(r#"{"content":[],"data":[1]}"#, &spec));
        assert!(!abridged(r#"[{"data":1}]"#, &spec));
        assert!(!abridged(r#"{"data":1}"#, &spec));
    }

    #[test]
    fn a_placeholder_keeps_its_type_and_the_members_rules_read() {
        let read = |doc: &str| read(doc).unwrap().0.map(Value::Object);
        let root = read(
            r#"{"data":{"rows":[1,2],"artifact":"a","summary":{"preview":[1]},"artifact":"b"},"Data":[[1]],"x":"s","y":5,"z":null,"meta":{"k":[1]}}"#,
        );
        let expected = serde_json::json!({
            "data": {"artifact": "b", "summary": {"preview": [1]}},
            "Data": [], "x": "", "y": 0, "z": null, "meta": {"k": [1]},
        });
        assert_eq!(root, Some(expected));
        assert_eq!(read("[1,{}]"), None);
    }
}
