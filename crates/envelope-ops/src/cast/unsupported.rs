//! The schemas the cast cannot satisfy, found before any value is seen.

use serde_json::{Map, Value};

use super::create::create_object_schema;
use crate::schema::is_valid;

/// A place in a schema the cast cannot satisfy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unsupported {
    /// JSON Pointer into the schema.
    pub pointer: String,
    /// Why.
    pub reason: String,
}

/// Keywords the cast does not apply: a value failing them stays failing.
const NOT_CAST: [&str; 21] = [
    "not",
    "if",
    "then",
    "else",
    "allOf",
    "patternProperties",
    "$ref",
    "$dynamicRef",
    "dependentSchemas",
    "dependentRequired",
    "dependencies",
    "propertyNames",
    "contains",
    "minContains",
    "maxContains",
    "prefixItems",
    "additionalItems",
    "unevaluatedProperties",
    "unevaluatedItems",
    "minProperties",
    "maxProperties",
];

/// Keywords that say nothing about validity; anything else beside `anyOf`/`oneOf` is a
/// constraint the union cast ignores.
const ANNOTATIONS: [&str; 11] = [
    "$schema",
    "$id",
    "$comment",
    "$defs",
    "definitions",
    "title",
    "description",
    "default",
    "examples",
    "readOnly",
    "deprecated",
];

/// Every place in `schema` the cast documents as unsupported: a keyword it does not apply
/// (`not`, `if`/`then`/`else`, `allOf`, `patternProperties`, `$ref`, …), a string `pattern`
/// or `format` without a `default` (no value can be created), `anyOf`/`oneOf` beside other
/// constraints, the `false` schema, a schema that does not compile, and a schema whose
/// created value fails it (contradictory bounds, a `default` or `const` outside the schema,
/// `exclusiveMinimum` or `multipleOf` that the created number misses). An empty list means
/// the cast of any value validates, except for what [`super::Cast::unresolved`] reports.
///
/// ```
/// use envelope_ops::cast::unsupported;
/// use serde_json::json;
///
/// assert!(unsupported(&json!({"type": "array", "items": {"type": "string"}})).is_empty());
/// let found = unsupported(&json!({"properties": {"id": {"type": "string", "pattern": "^a"}}}));
/// assert_eq!(found[0].pointer, "/properties/id");
/// ```
pub fn unsupported(schema: &Value) -> Vec<Unsupported> {
    let mut found = Vec::new();
    if let Err(e) = jsonschema::validator_for(schema) {
        found.push(Unsupported {
            pointer: String::new(),
            reason: format!("not a valid JSON Schema: {e}"),
        });
        return found;
    }
    walk(schema, &mut String::new(), &mut found);
    found
}

fn walk(schema: &Value, at: &mut String, found: &mut Vec<Unsupported>) {
    let mut report = |reason: String| {
        found.push(Unsupported {
            pointer: at.clone(),
            reason,
        })
    };
    let s = match schema {
        Value::Object(s) => s,
        Value::Bool(false) => return report("the false schema accepts nothing".into()),
        _ => return,
    };
    for keyword in NOT_CAST.iter().filter(|k| s.contains_key(**k)) {
        report(format!("{keyword} is not applied by the cast"));
    }
    if s.get("items").is_some_and(Value::is_array) {
        report("items as an array (tuples) is not applied by the cast".into());
    }
    let string_like =
        matches!(s.get("type"), Some(Value::String(t)) if t == "string") || !s.contains_key("type");
    if string_like && !s.contains_key("default") {
        for keyword in ["pattern", "format"].iter().filter(|k| s.contains_key(**k)) {
            report(format!(
                "a string with {keyword} and no default cannot be created"
            ));
        }
    }
    let union = s.contains_key("anyOf") || s.contains_key("oneOf");
    if union {
        let others: Vec<&String> = s
            .keys()
            .filter(|k| {
                !["anyOf", "oneOf"].contains(&k.as_str()) && !ANNOTATIONS.contains(&k.as_str())
            })
            .collect();
        if !others.is_empty() {
            report(format!("anyOf/oneOf beside other constraints {others:?}"));
        }
    }
    let created = create_object_schema(s);
    if !is_valid(schema, &created) {
        report(format!(
            "the created value {created} does not validate against the schema"
        ));
    }
    // A `type` array is a union of one variant per type: each may be cast to.
    for t in s
        .get("type")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let mut variant = s.clone();
        variant.remove("default");
        variant.insert("type".into(), t.clone());
        let variant = Value::Object(variant);
        let created = super::create(&variant);
        if !is_valid(&variant, &created) {
            report(format!(
                "the created value {created} of type {t} does not validate"
            ));
        }
    }
    for (keyword, sub) in subschemas(s) {
        let len = at.len();
        at.push_str(&keyword);
        walk(sub, at, found);
        at.truncate(len);
    }
}

/// The subschemas the cast descends into, with their pointer suffix.
fn subschemas(s: &Map<String, Value>) -> Vec<(String, &Value)> {
    let escape = |k: &str| k.replace('~', "~0").replace('/', "~1");
    let mut subs = Vec::new();
    if let Some(properties) = s.get("properties").and_then(Value::as_object) {
        for (key, sub) in properties {
            subs.push((format!("/properties/{}", escape(key)), sub));
        }
    }
    // `additionalProperties: false` is satisfied by dropping the others; `items: false` is not.
    if let Some(sub) = s.get("additionalProperties").filter(|v| v.is_object()) {
        subs.push(("/additionalProperties".into(), sub));
    }
    if let Some(sub) = s.get("items").filter(|v| !v.is_array()) {
        subs.push(("/items".into(), sub));
    }
    for keyword in ["anyOf", "oneOf"] {
        for (i, sub) in s
            .get(keyword)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            subs.push((format!("/{keyword}/{i}"), sub));
        }
    }
    subs
}
