//! Compiled JSON Schemas and their findings as JSON Pointers.

use serde_json::{Value, json};

/// A schema compiled once, when the operation is registered.
pub(crate) struct Compiled {
    validator: jsonschema::Validator,
}

impl Compiled {
    /// Compiles `schema` (no network or file `$ref`s: jsonschema's default features are off).
    pub(crate) fn new(schema: &Value) -> Result<Self, String> {
        jsonschema::validator_for(schema)
            .map(|validator| Compiled { validator })
            .map_err(|e| format!("not a valid JSON Schema: {e}"))
    }

    pub(crate) fn is_valid(&self, value: &Value) -> bool {
        self.validator.is_valid(value)
    }

    /// Every finding: `{pointer, message}`, the pointer into `value` (`""` is the root).
    pub(crate) fn findings(&self, value: &Value) -> Vec<Value> {
        self.validator
            .iter_errors(value)
            .map(|e| json!({ "pointer": e.instance_path().to_string(), "message": e.to_string() }))
            .collect()
    }
}

/// Whether `value` validates against `schema`; a schema that does not compile accepts
/// nothing (the cast treats it as unsupported).
pub(crate) fn is_valid(schema: &Value, value: &Value) -> bool {
    jsonschema::validator_for(schema).is_ok_and(|v| v.is_valid(value))
}

/// Whether `schema` compiles (what [`crate::Registry::register`] requires).
pub(crate) fn compiles(schema: &Value) -> bool {
    jsonschema::validator_for(schema).is_ok()
}
