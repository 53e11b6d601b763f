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
//!   JSON type that keep the members some rule reads (see [`Placeholder`] and
//!   [`is_payload_member`]). This holds for
//!   the formats and cases [`abridgeable`] accepts: protocol-v1, whose rules read only
//!   `data.artifact` and `data.summary` in the payload and whose schema takes any `data`;
//!   tool-result-envelope, whose rules read `__envelope` and the root's keys; MCP, unless an
//!   output schema or a text block that may mirror it needs the whole `structuredContent`;
//!   operations, unless an output schema or `meta.structuredContent` needs the whole `data`;
//!   ctxo, whose rules read `_meta` and the number of items of the root's arrays (counted
//!   as they are walked: [`Abridged::items`]). Every other case (tool-envelope-v1, whose
//!   payload is inside a text block; a root that is not an object) is validated whole
//!   ([`validate`] says `None`).
//!
//! The memory is the input's and the envelope's: the payload is read with borrowed strings
//! and nothing is kept of it. A long text of a root content block (an MCP result's text, a
//! tool-envelope-v1 envelope block) is not copied either: the root holds its prefix and
//! where it is ([`long_text`](super::long_text)); MCP's rules read no more of it, and
//! tool-envelope-v1's are given the whole text from the document, decoding the block and
//! reading the `{payload, meta}` inside with its `payload` abridged in turn.

use std::collections::HashMap;
use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use super::long_text::{Content, LongTexts};
use super::{Context, Report, View, text};
use crate::formats::abridge::{Placeholder, is_payload_member, skip_items};
use crate::formats::findings::{Findings, Options};
use crate::formats::{AbridgedRoot, FormatId};

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
    let Abridged {
        root,
        items,
        long_texts,
    } = parsed.value?;
    let mut root = Value::Object(root);
    // Texts that may be JSON documents: proven mirrors of `structuredContent`, or the
    // document is validated whole.
    if !super::mirror::settle_mirrors(&mut root, &long_texts, &parsed.text) {
        return None;
    }
    let format = match options.format {
        Some(format) => format,
        None => crate::detect::detect_value(&root).ok()?.format,
    };
    super::keys_only::restore(&mut root, &parsed.text, format)?;
    if !abridgeable(format, &root, options, &long_texts) {
        return None;
    }
    text::duplicate_keys(&parsed.text, &mut findings);
    // tool-envelope-v1's rules read block 1 whole: from the document when it is shortened.
    let block = long_texts
        .get(&1)
        .and_then(|text| text.place.as_ref())
        .map(|range| &parsed.text[range.clone()]);
    let (format, _) = super::check_value_view(
        &root,
        Some(&parsed.text),
        options,
        &mut findings,
        Context::Document,
        Some(View {
            items: &items,
            tev1_block: block,
        }),
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
/// the whole document: the format says ([`Format::reads_abridged`](crate::formats::Format::reads_abridged)).
fn abridgeable(format: FormatId, root: &Value, options: &Options, long: &LongTexts) -> bool {
    let shortened: Vec<(usize, bool)> = long
        .iter()
        .map(|(&block, text)| (block, text.place.is_some()))
        .collect();
    let abridged = AbridgedRoot {
        root,
        shortened: &shortened,
    };
    crate::formats::get(format).reads_abridged(&abridged, options)
}

/// A root object read with its payload members abridged.
pub(crate) struct Abridged {
    /// The root, each payload member ([`is_payload_member`]) a [`Placeholder`].
    pub(crate) root: Map<String, Value>,
    /// The number of items of each payload member that is an array (of the last occurrence
    /// of its key, the one the root keeps): the placeholder has none.
    pub(crate) items: ItemCounts,
    /// The texts of `content` blocks the root holds a prefix of, and where they are.
    pub(crate) long_texts: LongTexts,
}

/// The number of items of the root's abridged arrays, by key.
pub(crate) type ItemCounts = HashMap<String, usize>;

/// Reads the first document of `text`: its root object abridged (`None`: the root is not
/// an object, walked only), and the error about what follows it.
fn read(text: &str) -> Result<(Option<Abridged>, Option<serde_json::Error>), serde_json::Error> {
    let mut de = serde_json::Deserializer::from_str(text);
    let root = Root { doc: text }.deserialize(&mut de)?;
    Ok((root, de.end().err()))
}

/// The root: an object whose payload members are placeholders. `doc`: the text read, for
/// the places of long texts.
struct Root<'d> {
    doc: &'d str,
}

impl<'de> DeserializeSeed<'de> for Root<'_> {
    type Value = Option<Abridged>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Root<'_> {
    type Value = Option<Abridged>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        // As a `Value` is read: a repeated key keeps its first place and its last value.
        let mut root = Map::new();
        let mut items = ItemCounts::new();
        let mut long_texts = LongTexts::new();
        while let Some(key) = map.next_key::<String>()? {
            if key == "content" {
                let content = map.next_value_seed(Content {
                    doc: self.doc,
                    long: &mut long_texts,
                })?;
                root.insert(key, content);
                continue;
            }
            // An MCP result's `_meta` as its keys (read whole again for other formats).
            if super::keys_only::holds_keys_only(&key) {
                let value = map.next_value_seed(super::keys_only::member(&key))?;
                root.insert(key, value);
                continue;
            }
            if !is_payload_member(&key) {
                root.insert(key, map.next_value::<Value>()?);
                continue;
            }
            let mut count = None;
            let value = map.next_value_seed(Placeholder {
                items: Some(&mut count),
                every_key: false,
            })?;
            match count {
                Some(n) => items.insert(key.clone(), n),
                None => items.remove(&key),
            };
            root.insert(key, value);
        }
        Ok(Some(Abridged {
            root,
            items,
            long_texts,
        }))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        skip_items(seq).map(|_| None)
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
        let mirror = r#"{"content":[{"type":"text","text":" {1}"}],"structuredContent":{}}"#;
        assert!(!abridged(mirror, &spec));
        assert!(abridged(&mirror.replace(" {1}", "done"), &spec));
        let tev1 = r#"{"content":[{"type":"text","text":"__ENVELOPE_V1__:e30="}]}"#;
        assert!(abridged(tev1, &spec));
        // An error (block 0 rendered from its payload) or a dual emit (compared with the
        // block's document) needs the block's payload.
        assert!(!abridged(
            &tev1.replace("]}", r#"],"isError":true}"#),
            &spec
        ));
        assert!(!abridged(
            &tev1.replace("]}", r#"],"structuredContent":{}}"#),
            &spec
        ));
        assert!(!abridged(r#"[{"data":1}]"#, &spec));
        assert!(!abridged(r#"{"data":1}"#, &spec));
    }

    #[test]
    fn a_structured_result_with_its_mirror_is_read_abridged() {
        let spec = Options::new(None, Profile::Spec);
        let rows: Vec<String> = (0..10_000).map(|i| format!(r#"{{"id":{i}}}"#)).collect();
        let payload = format!(r#"{{"rows":[{}]}}"#, rows.join(","));
        let mirror = serde_json::to_string(&payload).unwrap();
        let doc = |text: &str, payload: &str| {
            format!(
                r#"{{"content":[{{"type":"text","text":{text}}}],"structuredContent":{payload}}}"#
            )
        };
        // The mirror is the very text of structuredContent: long or short.
        assert!(abridged(&doc(&mirror, &payload), &spec));
        assert!(abridged(&doc(r#""{\"a\":1}""#, r#"{"a":1}"#), &spec));
        // The same text but for white space between tokens (an indented mirror): abridged.
        let spaced = payload.replacen(':', ": ", 1);
        assert!(abridged(&doc(&mirror, &spaced), &spec));
        assert!(abridged(&doc(r#""{\"a\": 1}""#, r#"{"a":1}"#), &spec));
        // Another text (though maybe the same value), or a ctxo document that detection
        // would find in the mirror: whole.
        assert!(!abridged(&doc(r#""{\"a\":2}""#, r#"{"a":1}"#), &spec));
        assert!(!abridged(&doc(r#""{\"a\":1.0}""#, r#"{"a":1}"#), &spec));
        let late = mirror.replacen("9999", "9998", 1);
        assert!(!abridged(&doc(&late, &payload), &spec));
        let ctxo = payload.replacen(
            '{',
            r#"{"_meta":{"totalItems":1,"returnedItems":1,"truncated":false,"totalBytes":9},"#,
            1,
        );
        let ctxo_mirror = serde_json::to_string(&ctxo).unwrap();
        assert!(!abridged(&doc(&ctxo_mirror, &ctxo), &spec));
        // A long JSON text without structuredContent: whole (detection would parse it).
        let alone = format!(r#"{{"content":[{{"type":"text","text":{mirror}}}]}}"#);
        assert!(!abridged(&alone, &spec));
    }

    #[test]
    fn a_placeholder_keeps_its_type_and_the_members_rules_read() {
        let read = |doc: &str| read(doc).unwrap().0;
        let abridged = read(
            r#"{"data":{"rows":[1,2],"artifact":"a","summary":{"preview":[1]},"artifact":"b"},"Data":[[1],[]],"x":"s","y":5,"z":null,"meta":{"k":[1]},"w":[0],"w":{}}"#,
        )
        .unwrap();
        let expected = serde_json::json!({
            "data": {"artifact": "b", "summary": {"preview": [1]}},
            "Data": [], "x": "", "y": 0, "z": null, "meta": {"k": [1]}, "w": {},
        });
        assert_eq!(Value::Object(abridged.root), expected);
        // Counted for the arrays the root keeps.
        assert_eq!(abridged.items, ItemCounts::from([("Data".to_string(), 2)]));
        assert!(read("[1,{}]").is_none());
    }
}
