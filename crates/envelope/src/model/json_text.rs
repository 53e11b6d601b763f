//! A JSON value the envelope carries but never reads, kept as text.

use std::sync::Arc;

use serde_json::Value;

use crate::json::Dialect;

/// A JSON value kept as its compact JS-dialect text (what `JSON.stringify` writes): an MCP
/// result's `_meta`, which the envelope carries from one format to another without reading
/// it. As a `serde_json::Value`, small records take about eleven times their text; as text
/// they take their size once, and a clone (a cut's base, say) shares it.
///
/// ```
/// use envelope::model::JsonText;
/// use serde_json::json;
///
/// let meta = JsonText::read(br#"{ "trace": [1.0, 2.50], "dev.envelope/budget": {"truncated": true} }"#)?;
/// assert_eq!(meta.as_str(), r#"{"trace":[1,2.5],"dev.envelope/budget":{"truncated":true}}"#);
/// assert_eq!(meta.member("dev.envelope/budget")?, Some(json!({"truncated": true})));
/// assert_eq!(meta, JsonText::from_value(&json!({"trace": [1, 2.5], "dev.envelope/budget": {"truncated": true}})));
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JsonText(Arc<String>);

impl JsonText {
    /// The value of the JSON text `text`, read without building it (see
    /// [`json::rewrite`](crate::json::rewrite::rewrite): numbers, escapes and the members of
    /// repeated keys as serde_json reads them).
    ///
    /// # Errors
    ///
    /// serde_json's error when `text` is not one JSON value it reads.
    pub fn read(text: &[u8]) -> Result<JsonText, serde_json::Error> {
        let mut out = Vec::with_capacity(text.len());
        crate::json::rewrite::rewrite(text, Dialect::Js, &mut out)?;
        Ok(JsonText::from_js(out))
    }

    /// The text of `value`.
    pub fn from_value(value: &Value) -> JsonText {
        JsonText::from_js(crate::json::to_vec(value, Dialect::Js))
    }

    /// Text the JSON writer wrote in the JS dialect, compact (the caller vouches for it).
    pub(crate) fn from_js(bytes: Vec<u8>) -> JsonText {
        let text = String::from_utf8(bytes).expect("the JSON writer writes UTF-8");
        // An `Arc<String>`, not an `Arc<str>`: the text is moved in, not copied.
        JsonText(Arc::new(text))
    }

    /// The compact JS-dialect text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The length of the text, in bytes: what the value takes in a JS-dialect document.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether the text is empty (never: a JSON value has at least one byte).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether the value is an object.
    pub fn is_object(&self) -> bool {
        self.0.starts_with('{')
    }

    /// The value built.
    ///
    /// # Errors
    ///
    /// None in practice: the text is what the JSON writer wrote of a value serde_json read.
    pub fn to_value(&self) -> Result<Value, serde_json::Error> {
        serde_json::from_str(&self.0)
    }

    /// The value of the member `key` when the value is an object that has it (built; the
    /// other members are skipped).
    ///
    /// # Errors
    ///
    /// None in practice, as for [`JsonText::to_value`].
    pub fn member(&self, key: &str) -> Result<Option<Value>, serde_json::Error> {
        use crate::json::reader::{Event, Reader};
        let mut reader = Reader::new(self.0.as_bytes());
        if !matches!(reader.next()?, Some(Event::BeginObject)) {
            return Ok(None);
        }
        // The text holds each key once (the writer wrote a map).
        while let Some(Event::Key(name)) = reader.next()? {
            let span = reader.skip()?;
            if name.value() == key
                && let Some(span) = span
            {
                return serde_json::from_str(&self.0[span]).map(Some);
            }
        }
        Ok(None)
    }
}
