//! Whether an MCP result's last text block holds a ctxo document, told without building the
//! whole text as a `Value` (a large `structuredContent` has its JSON mirror there).

use std::fmt;

use serde::Deserialize;
use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::Value;

use super::codec::is_ctxo_meta;

/// Whether `text` is a JSON object whose `_meta` is a ctxo `_meta`: what parsing it into a
/// `Value` and looking at its `_meta` tells. A probe reads the top-level `_meta` alone (the
/// other members are skipped, which reads more loosely than a `Value` does: no depth
/// limit, no number range), so a no is a no for the `Value` too; a yes, rare, is confirmed
/// by the whole parse.
pub(super) fn holds_ctxo_document(text: &str) -> bool {
    may_hold_ctxo_document(text.as_bytes())
        && serde_json::from_str::<Value>(text)
            .is_ok_and(|doc| doc.get("_meta").is_some_and(is_ctxo_meta))
}

/// The probe of [`holds_ctxo_document`] alone, on JSON text: `false` is certain, `true`
/// may be a document a `Value` would not read.
pub(crate) fn may_hold_ctxo_document(text: &[u8]) -> bool {
    serde_json::from_slice::<TopMeta>(text)
        .is_ok_and(|TopMeta(meta)| meta.as_ref().is_some_and(is_ctxo_meta))
}

/// [`may_hold_ctxo_document`] on JSON text read from `text` (a string's decoded text, a
/// piece at a time): the same answer, the text never held whole.
pub(crate) fn may_hold_ctxo_document_read(text: impl std::io::Read) -> bool {
    serde_json::from_reader::<_, TopMeta>(text)
        .is_ok_and(|TopMeta(meta)| meta.as_ref().is_some_and(is_ctxo_meta))
}

/// The `_meta` member of a JSON object, read alone (the last one when the key repeats, as a
/// `Value` keeps it).
struct TopMeta(Option<Value>);

impl<'de> Deserialize<'de> for TopMeta {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(TopMetaVisitor)
    }
}

struct TopMetaVisitor;

impl<'de> Visitor<'de> for TopMetaVisitor {
    type Value = TopMeta;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<TopMeta, A::Error> {
        let mut meta = None;
        while let Some(key) = map.next_key::<String>()? {
            if key == "_meta" {
                meta = Some(map.next_value::<Value>()?);
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(TopMeta(meta))
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::Value;

    use super::super::codec::is_ctxo_meta;
    use super::holds_ctxo_document;

    /// What detection asked before: the whole text parsed as a `Value`.
    fn by_value(text: &str) -> bool {
        serde_json::from_str::<Value>(text)
            .is_ok_and(|doc| doc.get("_meta").is_some_and(is_ctxo_meta))
    }

    #[test]
    fn tricky_documents_are_told_as_a_value_tells_them() {
        let deep = format!("{}1{}", "[".repeat(200), "]".repeat(200));
        let cases = [
            r#"{"a":1,"_meta":{"truncated":true}}"#.to_string(),
            r#"{"_meta":{"truncated":true},"_meta":{"x":1}}"#.to_string(),
            r#"{"_meta":{"x":1},"_meta":{"truncated":true}}"#.to_string(),
            r#"{"\u005fmeta":{"truncated":true}}"#.to_string(),
            r#"{"_meta":{"truncated":true},"n":1e400}"#.to_string(),
            format!(r#"{{"_meta":{{"truncated":true}},"deep":{deep}}}"#),
            r#"{"_meta":{"truncated":true}} trailing"#.to_string(),
            r#"{"_meta":{"truncated":true},}"#.to_string(),
            r#"{"_meta":"truncated"}"#.to_string(),
            r#"[{"_meta":{"truncated":true}}]"#.to_string(),
            r#"{"rows":[1,2,{"_meta":{"truncated":true}}]}"#.to_string(),
        ];
        for text in &cases {
            assert_eq!(holds_ctxo_document(text), by_value(text), "{text}");
        }
        // The cases hold both answers.
        assert!(cases.iter().any(|t| by_value(t)));
        assert!(cases.iter().any(|t| !by_value(t)));
    }

    fn piece() -> impl Strategy<Value = &'static str> {
        prop::sample::select(vec![
            "{",
            "}",
            "[",
            "]",
            ",",
            ":",
            "\"_meta\"",
            "\"a\"",
            "\"truncated\"",
            "true",
            "1",
            "1e400",
            "null",
            "\"x\"",
            " ",
            "{\"truncated\":true}",
            "\"\\u005fmeta\"",
            "\"_meta\":{\"truncated\":true}",
            "\"a\":1",
            "\"a\":[[[1]]]",
        ])
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4096))]

        #[test]
        fn the_probe_tells_what_a_value_tells(pieces in prop::collection::vec(piece(), 0..40)) {
            let text = format!("{{{}", pieces.concat());
            prop_assert_eq!(holds_ctxo_document(&text), by_value(&text), "{}", text);
        }
    }
}
