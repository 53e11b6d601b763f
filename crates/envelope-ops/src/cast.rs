//! Cast: `data` normalised to a JSON Schema, TypeBox's `Value.Cast` restated for JSON
//! Schema (the rules are in docs/operations.md).
//!
//! A value that validates is returned unchanged. Otherwise objects are rebuilt from their
//! declared properties, arrays padded, cut and de-duplicated, unions cast to their
//! best-scoring variant, and anything else replaced by the schema's `default` or a
//! created value. Cast never converts between types (`"5"` cast to a number is `0`).
//!
//! Some schemas cannot be satisfied this way; [`unsupported`] lists them for a schema, and
//! [`Cast::unresolved`] what a particular value left unresolved. With neither, the cast
//! validates (a property test checks it).

mod create;
mod unsupported;

pub use create::create;
pub use unsupported::{Unsupported, unsupported};

use serde_json::{Map, Value};

use crate::schema::is_valid;

/// The cast value and what it could not resolve.
#[derive(Clone, Debug, PartialEq)]
pub struct Cast {
    /// The normalised value.
    pub value: Value,
    /// Places where the value still fails the schema, and why (empty when the schema is
    /// supported and the cast validates).
    pub unresolved: Vec<Unresolved>,
}

/// A place the cast could not make valid.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unresolved {
    /// JSON Pointer into the cast value.
    pub pointer: String,
    /// Why.
    pub reason: &'static str,
}

/// `uniqueItems` with duplicate objects or arrays (the cast drops duplicate scalars only).
pub const DUPLICATE_OBJECTS: &str = "uniqueItems: duplicate objects or arrays are not dropped";
/// `uniqueItems` left fewer items than `minItems`.
pub const TOO_FEW_UNIQUE: &str = "uniqueItems: fewer than minItems distinct items are left";
/// A `oneOf` value that matches more than one variant.
pub const ONE_OF_OVERLAP: &str = "oneOf: the value matches more than one variant";

/// Casts `value` to `schema`.
///
/// ```
/// use envelope_ops::cast::cast;
/// use serde_json::json;
///
/// let schema = json!({
///     "type": "object",
///     "properties": {"n": {"type": "number"}, "tags": {"type": "array", "maxItems": 1}},
///     "required": ["n"]
/// });
/// let cast = cast(&schema, json!({"n": "5", "tags": [1, 2], "extra": true}));
/// assert_eq!(cast.value, json!({"n": 0, "tags": [1]}));
/// assert!(cast.unresolved.is_empty());
/// ```
pub fn cast(schema: &Value, value: Value) -> Cast {
    let mut unresolved = Vec::new();
    let value = cast_at(schema, value, &mut String::new(), &mut unresolved);
    Cast { value, unresolved }
}

fn cast_at(schema: &Value, value: Value, at: &mut String, out: &mut Vec<Unresolved>) -> Value {
    if is_valid(schema, &value) {
        return value;
    }
    let Value::Object(s) = schema else {
        return value; // `false`: nothing validates (listed by `unsupported`)
    };
    if s.contains_key("anyOf")
        || s.contains_key("oneOf")
        || s.get("type").is_some_and(Value::is_array)
    {
        return union(s, value, at, out);
    }
    if s.contains_key("const") || s.contains_key("enum") {
        return default_or_create(s);
    }
    match create::kind(s) {
        create::Kind::Object => match value {
            Value::Object(m) => object(s, m, at, out),
            _ => default_or_create(s),
        },
        create::Kind::Array => match value {
            Value::Array(items) => array(s, items, at, out),
            _ => default_or_create(s),
        },
        create::Kind::Scalar => default_or_create(s),
    }
}

fn default_or_create(s: &Map<String, Value>) -> Value {
    s.get("default")
        .cloned()
        .unwrap_or_else(|| create::create_object_schema(s))
}

/// Runs `f` with `key` pushed onto the pointer `at`.
fn nested<T>(at: &mut String, key: &str, f: impl FnOnce(&mut String) -> T) -> T {
    let len = at.len();
    at.push('/');
    at.push_str(&key.replace('~', "~0").replace('/', "~1"));
    let result = f(at);
    at.truncate(len);
    result
}

/// An object rebuilt from the declared properties (required ones cast or created, optional
/// ones cast when present), then the others, kept only under an `additionalProperties` schema.
fn object(
    s: &Map<String, Value>,
    mut value: Map<String, Value>,
    at: &mut String,
    out: &mut Vec<Unresolved>,
) -> Value {
    let empty = Map::new();
    let properties = s
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let required: Vec<&str> = s
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let additional = s.get("additionalProperties").filter(|a| a.is_object());
    let mut result = Map::new();
    for (key, property) in properties {
        match value.remove(key) {
            Some(v) => {
                let v = nested(at, key, |at| cast_at(property, v, at, out));
                result.insert(key.clone(), v);
            }
            None if required.contains(&key.as_str()) => {
                result.insert(key.clone(), create(property));
            }
            None => {}
        }
    }
    // Required but undeclared: governed by additionalProperties, when it is a schema.
    let undeclared_schema = additional.cloned().unwrap_or(Value::Bool(true));
    for key in required.iter().filter(|k| !properties.contains_key(**k)) {
        let v = match value.remove(*key) {
            Some(v) => nested(at, key, |at| cast_at(&undeclared_schema, v, at, out)),
            None => create(&undeclared_schema),
        };
        result.insert(key.to_string(), v);
    }
    if let Some(additional) = additional {
        for (key, v) in value {
            let v = nested(at, &key, |at| cast_at(additional, v, at, out));
            result.insert(key, v);
        }
    }
    Value::Object(result)
}

/// Items cast; padded to `minItems` with `null` (then cast), cut to `maxItems`; with
/// `uniqueItems`, later duplicate scalars dropped.
fn array(
    s: &Map<String, Value>,
    mut items: Vec<Value>,
    at: &mut String,
    out: &mut Vec<Unresolved>,
) -> Value {
    let min = s.get("minItems").and_then(Value::as_u64).unwrap_or(0) as usize;
    if items.len() < min {
        items.resize(min, Value::Null);
    }
    if let Some(max) = s.get("maxItems").and_then(Value::as_u64) {
        items.truncate(max as usize);
    }
    if let Some(item_schema) = s.get("items").filter(|i| i.is_object() || i.is_boolean()) {
        items = items
            .into_iter()
            .enumerate()
            .map(|(i, v)| nested(at, &i.to_string(), |at| cast_at(item_schema, v, at, out)))
            .collect();
    }
    if s.get("uniqueItems") == Some(&Value::Bool(true)) {
        let mut kept: Vec<Value> = Vec::with_capacity(items.len());
        for item in items {
            let scalar = !item.is_object() && !item.is_array();
            if scalar && kept.contains(&item) {
                continue;
            }
            if !scalar && kept.contains(&item) {
                out.push(Unresolved {
                    pointer: at.clone(),
                    reason: DUPLICATE_OBJECTS,
                });
            }
            kept.push(item);
        }
        if kept.len() < min {
            out.push(Unresolved {
                pointer: at.clone(),
                reason: TOO_FEW_UNIQUE,
            });
        }
        items = kept;
    }
    Value::Array(items)
}

/// The variants of a union: `anyOf`/`oneOf`, or one schema per entry of a `type` array.
fn variants(s: &Map<String, Value>) -> Vec<Value> {
    if let Some(v) = s
        .get("anyOf")
        .or_else(|| s.get("oneOf"))
        .and_then(Value::as_array)
    {
        return v.clone();
    }
    let types = s
        .get("type")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    types
        .into_iter()
        .map(|t| {
            let mut variant = s.clone();
            variant.remove("default");
            variant.insert("type".into(), t);
            Value::Object(variant)
        })
        .collect()
}

/// The union's default; else the value when a variant accepts it; else the value cast to
/// the best-scoring variant (ties to the first).
fn union(
    s: &Map<String, Value>,
    value: Value,
    at: &mut String,
    out: &mut Vec<Unresolved>,
) -> Value {
    if let Some(default) = s.get("default") {
        return default.clone();
    }
    let variants = variants(s);
    let one_of = s.contains_key("oneOf");
    let matching = |v: &Value| {
        variants
            .iter()
            .filter(|variant| is_valid(variant, v))
            .count()
    };
    let result = if matching(&value) > 0 {
        value
    } else {
        let mut best: Option<(&Value, u64)> = None;
        for variant in &variants {
            let score = score(variant, &value);
            if best.is_none_or(|(_, b)| score > b) {
                best = Some((variant, score));
            }
        }
        match best {
            Some((variant, _)) => cast_at(variant, value, at, out),
            None => value,
        }
    };
    if one_of && matching(&result) > 1 {
        out.push(Unresolved {
            pointer: at.clone(),
            reason: ONE_OF_OVERLAP,
        });
    }
    result
}

/// TypeBox's variant score: per declared property, 100 for a matching `const`, 10 when the
/// value's property validates, 1 when it is present. Arrays are scored as objects (by index).
fn score(variant: &Value, value: &Value) -> u64 {
    let Some(properties) = variant.get("properties").and_then(Value::as_object) else {
        return 0;
    };
    let member = |key: &str| match value {
        Value::Object(m) => m.get(key),
        Value::Array(a) => key.parse::<usize>().ok().and_then(|i| a.get(i)),
        _ => None,
    };
    properties
        .iter()
        .map(|(key, property)| match member(key) {
            None => 0,
            Some(v) => {
                let literal = if property.get("const") == Some(v) {
                    100
                } else {
                    0
                };
                let checks = if is_valid(property, v) { 10 } else { 0 };
                literal + checks + 1
            }
        })
        .sum()
}

#[cfg(test)]
mod tests;
