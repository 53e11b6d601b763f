//! The value a schema creates when a value must be replaced (TypeBox's `Value.Create`).

use serde_json::{Map, Value};

/// What a schema without a union describes, from `type` or, without one, its keywords.
pub(crate) enum Kind {
    Object,
    Array,
    Scalar,
}

const OBJECT_KEYWORDS: [&str; 3] = ["properties", "required", "additionalProperties"];
const ARRAY_KEYWORDS: [&str; 4] = ["items", "minItems", "maxItems", "uniqueItems"];

pub(crate) fn kind(s: &Map<String, Value>) -> Kind {
    match s.get("type").and_then(Value::as_str) {
        Some("object") => Kind::Object,
        Some("array") => Kind::Array,
        Some(_) => Kind::Scalar,
        None if OBJECT_KEYWORDS.iter().any(|k| s.contains_key(*k)) => Kind::Object,
        None if ARRAY_KEYWORDS.iter().any(|k| s.contains_key(*k)) => Kind::Array,
        None => Kind::Scalar,
    }
}

/// The value `schema` creates: its `default`; else its `const`, its first `enum` value, its
/// first union variant's value; else by type: `minimum` (or 0) for numbers, `minLength`
/// spaces for strings, `false`, `null`, `minItems` created items, an object of the
/// required properties created. A schema with no type creates `null`.
///
/// ```
/// use envelope_ops::cast::create;
/// use serde_json::json;
///
/// assert_eq!(create(&json!({"type": "string", "minLength": 2})), json!("  "));
/// assert_eq!(
///     create(&json!({"type": "object", "properties": {"n": {"type": "integer", "minimum": 3}}, "required": ["n"]})),
///     json!({"n": 3})
/// );
/// ```
pub fn create(schema: &Value) -> Value {
    match schema {
        Value::Object(s) => create_object_schema(s),
        _ => Value::Null,
    }
}

pub(crate) fn create_object_schema(s: &Map<String, Value>) -> Value {
    if let Some(v) = s.get("default").or_else(|| s.get("const")) {
        return v.clone();
    }
    if let Some(first) = s
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|e| e.first())
    {
        return first.clone();
    }
    if let Some(first) = s
        .get("anyOf")
        .or_else(|| s.get("oneOf"))
        .and_then(Value::as_array)
        .and_then(|v| v.first())
    {
        return create(first);
    }
    let ty = match s.get("type") {
        Some(Value::String(t)) => Some(t.as_str()),
        Some(Value::Array(types)) => types.first().and_then(Value::as_str),
        _ => None,
    };
    match ty {
        Some("object") => object(s),
        Some("array") => array(s),
        Some("string") => {
            let len = s.get("minLength").and_then(Value::as_u64).unwrap_or(0);
            Value::String(" ".repeat(len as usize))
        }
        Some("number" | "integer") => s.get("minimum").cloned().unwrap_or(Value::from(0)),
        Some("boolean") => Value::Bool(false),
        Some(_) => Value::Null,
        None => match kind(s) {
            Kind::Object => object(s),
            Kind::Array => array(s),
            Kind::Scalar => Value::Null,
        },
    }
}

fn object(s: &Map<String, Value>) -> Value {
    let properties = s.get("properties").and_then(Value::as_object);
    let undeclared = s.get("additionalProperties").filter(|a| a.is_object());
    let mut result = Map::new();
    for key in s
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let Some(key) = key.as_str() else { continue };
        let property = properties.and_then(|p| p.get(key)).or(undeclared);
        result.insert(key.to_string(), property.map(create).unwrap_or(Value::Null));
    }
    Value::Object(result)
}

fn array(s: &Map<String, Value>) -> Value {
    let min = s.get("minItems").and_then(Value::as_u64).unwrap_or(0) as usize;
    let item = s.get("items").map(create).unwrap_or(Value::Null);
    Value::Array(vec![item; min])
}
