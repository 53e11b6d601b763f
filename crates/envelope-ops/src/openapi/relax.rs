//! What real documents contain that JSON Schema 2020-12 refuses, read the sensible way with a
//! warning naming the place, so that no operation is dropped for it:
//!
//! - `$recursiveAnchor` / `$dynamicAnchor` (2019-09's and 2020-12's dynamic scopes) are
//!   removed, and a `$recursiveRef` / `$dynamicRef` is not followed: that place accepts
//!   anything (with a `$comment` saying why), as a recursive `$ref` does once expanded
//!   ([`super::refs`]). Local `$ref`s are inlined, so the resources these keywords
//!   address no longer exist as such;
//! - a boolean `exclusiveMinimum` / `exclusiveMaximum` in a 3.1 document (OpenAPI 3.0's
//!   form) is read as 3.0 reads it: `true` makes `minimum` / `maximum` exclusive, `false`
//!   is dropped (3.0 documents are converted without a warning: it is their form);
//! - a `required` list naming a property twice is read with each name once;
//! - a numeric bound written as text (`maximum: 1e400` in YAML, beyond a double, is read
//!   as a string) is that number, or no bound when it is infinite.
//!
//! Values that are data rather than schemas (`example`, `examples`, `default`, `enum`,
//! `const`, `x-` extensions) are left as they are.

use serde_json::{Map, Value, json};

use super::document::Version;

/// At most this many warnings are listed; the rest are counted.
pub const MAX_WARNINGS: usize = 20;

/// Rewrites `doc` in place; one warning per place changed (`<place>: …`, the place as
/// `paths./a.get.requestBody…`).
///
/// ```
/// use envelope_ops::openapi::document::Version;
/// use envelope_ops::openapi::relax::relax;
/// use serde_json::json;
///
/// let mut doc = json!({"components": {"schemas": {"N": {
///     "type": "integer", "minimum": 0, "exclusiveMinimum": true, "required": ["a", "a"]}}}});
/// let warnings = relax(&mut doc, Version::V31);
/// assert_eq!(doc["components"]["schemas"]["N"], json!({"type": "integer", "exclusiveMinimum": 0, "required": ["a"]}));
/// assert_eq!(warnings.len(), 2);
/// assert!(warnings[0].starts_with("components.schemas.N: "), "{warnings:?}");
/// ```
pub fn relax(doc: &mut Value, version: Version) -> Vec<String> {
    let mut warnings = Vec::new();
    let mut place = Vec::new();
    walk(doc, version, false, &mut place, &mut warnings);
    warnings
}

/// Keys whose value is a map of names (schemas by name, properties…), not keywords.
const NAME_MAPS: &[&str] = &[
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
    "schemas",
    "paths",
    "webhooks",
    "responses",
    "content",
    "parameters",
    "requestBodies",
    "headers",
    "callbacks",
    "pathItems",
    "encoding",
];

/// Keys whose value is data, not a schema.
const DATA: &[&str] = &["example", "examples", "default", "enum", "const"];

fn walk(
    value: &mut Value,
    version: Version,
    names: bool,
    place: &mut Vec<String>,
    warnings: &mut Vec<String>,
) {
    match value {
        Value::Object(map) => {
            if !names {
                relax_here(map, version, place, warnings);
            }
            for (key, child) in map.iter_mut() {
                if !names && (DATA.contains(&key.as_str()) || key.starts_with("x-")) {
                    continue;
                }
                place.push(key.clone());
                let child_names = !names && NAME_MAPS.contains(&key.as_str());
                walk(child, version, child_names, place, warnings);
                place.pop();
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter_mut().enumerate() {
                place.push(i.to_string());
                walk(item, version, false, place, warnings);
                place.pop();
            }
        }
        _ => {}
    }
}

fn relax_here(
    map: &mut Map<String, Value>,
    version: Version,
    place: &[String],
    warnings: &mut Vec<String>,
) {
    let at = || match place.is_empty() {
        true => "the document".to_owned(),
        false => place.join("."),
    };
    for anchor in ["$recursiveAnchor", "$dynamicAnchor"] {
        if let Some(value) = map.remove(anchor) {
            warnings.push(format!("{}: {anchor} {value} ignored", at()));
        }
    }
    for reference in ["$recursiveRef", "$dynamicRef"] {
        if let Some(target) = map.remove(reference) {
            let why = format!("{reference} {target} not followed: accepts anything");
            warnings.push(format!("{}: {why}", at()));
            map.entry("$comment").or_insert_with(|| Value::from(why));
        }
    }
    // A bound written as text (YAML reads `1e400`, beyond a double, as a string): its
    // number, and an infinite one bounds nothing.
    for bound in [
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
    ] {
        let Some(Value::String(text)) = map.get(bound) else {
            continue;
        };
        let Ok(number) = text.trim().parse::<f64>() else {
            continue;
        };
        let text = text.clone();
        match serde_json::Number::from_f64(number) {
            Some(n) => {
                warnings.push(format!("{}: {bound} {text:?} read as the number {n}", at()));
                map.insert(bound.into(), Value::Number(n));
            }
            None => {
                warnings.push(format!(
                    "{}: {bound} {text:?} is beyond any number: no bound",
                    at()
                ));
                map.remove(bound);
            }
        }
    }
    if version == Version::V31 {
        for (flag, bound) in [
            ("exclusiveMinimum", "minimum"),
            ("exclusiveMaximum", "maximum"),
        ] {
            let Some(Value::Bool(exclusive)) = map.get(flag).cloned() else {
                continue;
            };
            map.remove(flag);
            let limit = match exclusive {
                true => map.remove(bound),
                false => None,
            };
            match limit {
                Some(limit) => {
                    warnings.push(format!(
                        "{}: a boolean {flag} (OpenAPI 3.0's form) read as {flag}: {limit}",
                        at()
                    ));
                    map.insert(flag.into(), limit);
                }
                None => warnings.push(format!(
                    "{}: a boolean {flag} (OpenAPI 3.0's form) without {bound} ignored",
                    at()
                )),
            }
        }
    }
    if let Some(Value::Array(required)) = map.get_mut("required") {
        let mut seen = Vec::new();
        let mut twice = Vec::new();
        required.retain(|name| {
            if seen.contains(name) {
                twice.push(name.to_string());
                false
            } else {
                seen.push(name.clone());
                true
            }
        });
        if !twice.is_empty() {
            twice.dedup();
            warnings.push(format!(
                "{}: `required` names {} more than once (read once)",
                at(),
                twice.join(", ")
            ));
        }
    }
}

/// `warnings` cut to [`MAX_WARNINGS`], the rest counted in a last line.
pub fn listed(mut warnings: Vec<String>) -> Vec<String> {
    if warnings.len() > MAX_WARNINGS {
        let more = warnings.len() - MAX_WARNINGS;
        warnings.truncate(MAX_WARNINGS);
        warnings.push(format!("… and {more} more places read the same way"));
    }
    warnings
}

/// A schema as JSON Schema 2020-12: OpenAPI 3.0's `nullable: true` becomes a `null` in
/// `type`, and its boolean `exclusiveMinimum`/`exclusiveMaximum` the numeric form. 3.1
/// schemas are JSON Schema already.
pub fn normalised(schema: &Value, version: Version) -> Value {
    let mut schema = schema.clone();
    if version == Version::V30 {
        from_30(&mut schema);
    }
    schema
}

fn from_30(value: &mut Value) {
    match value {
        Value::Object(map) => {
            if map.remove("nullable") == Some(Value::Bool(true)) {
                match map.get_mut("type") {
                    Some(Value::String(t)) => {
                        let t = std::mem::take(t);
                        map.insert("type".into(), json!([t, "null"]));
                    }
                    Some(_) => {}
                    None => {}
                }
            }
            for (flag, bound) in [
                ("exclusiveMinimum", "minimum"),
                ("exclusiveMaximum", "maximum"),
            ] {
                if let Some(Value::Bool(exclusive)) = map.get(flag).cloned() {
                    map.remove(flag);
                    if exclusive && let Some(limit) = map.remove(bound) {
                        map.insert(flag.into(), limit);
                    }
                }
            }
            for item in map.values_mut() {
                from_30(item);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(from_30),
        _ => {}
    }
}
