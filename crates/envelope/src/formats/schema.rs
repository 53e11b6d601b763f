//! The wire types of the six formats, from which the published JSON Schemas (draft 2020-12,
//! `schemas/<format>.schema.json`) are generated, and the compiled validators for them.
//!
//! The protocol-v1 types are also what the stream validator's fast path deserializes into,
//! so a line that deserializes has the shape its schema describes. A test compares the
//! generated schemas with the published files (`ENVELOPE_UPDATE_SCHEMAS=1` rewrites them).

use std::sync::LazyLock;

use serde_json::Value;

use crate::formats::FormatId;

/// Where the schemas are published (their `$id`s).
pub(crate) const BASE_URI: &str = "https://example.invalid/envelope/schemas/";

/// The JSON Schema (draft 2020-12) of `format`, generated from its wire types: `$schema`
/// first, then `$id` (`<base>/<format>.schema.json`), then the schema. It is the content of
/// the published `schemas/<format>.schema.json` (a test keeps them equal).
pub fn generate(format: FormatId) -> Value {
    let schema = crate::formats::get(format).schema();
    let mut value = schema.to_value();
    if let Some(obj) = value.as_object_mut() {
        // `$schema` first, then `$id`, then what schemars wrote.
        let rest = std::mem::take(obj);
        obj.insert(
            "$schema".into(),
            Value::String("https://json-schema.org/draft/2020-12/schema".into()),
        );
        obj.insert(
            "$id".into(),
            Value::String(format!("{BASE_URI}{}.schema.json", format.as_str())),
        );
        for (k, v) in rest {
            if k != "$schema" {
                obj.insert(k, v);
            }
        }
    }
    value
}

/// The published schema file's name for `format` (`protocol-v1.schema.json`).
pub fn file_name(format: FormatId) -> String {
    format!("{}.schema.json", format.as_str())
}

static VALIDATORS: LazyLock<Vec<(FormatId, jsonschema::Validator)>> = LazyLock::new(|| {
    FormatId::ALL
        .into_iter()
        .map(|format| {
            let validator = jsonschema::draft202012::new(&generate(format))
                .expect("a generated schema compiles");
            (format, validator)
        })
        .collect()
});

/// The compiled validator of `format`'s schema (each compiled once, on first use).
///
/// ```
/// use envelope::FormatId;
/// use envelope::formats::schema::validator;
///
/// let example: serde_json::Value =
///     serde_json::from_str(include_str!("../../../../examples/protocol-v1.json")).unwrap();
/// assert!(validator(FormatId::ProtocolV1).is_valid(&example));
/// assert!(!validator(FormatId::ProtocolV1).is_valid(&serde_json::json!({"version": 2})));
/// ```
pub fn validator(format: FormatId) -> &'static jsonschema::Validator {
    &VALIDATORS
        .iter()
        .find(|(f, _)| *f == format)
        .expect("every format has a schema")
        .1
}
