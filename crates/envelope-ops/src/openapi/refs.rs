//! Resolving the local `$ref`s (`#/components/schemas/Pet`) of a document, once, before the
//! operations are derived. A reference to a document elsewhere (`other.yaml#/Pet`,
//! `https://…`) is refused with an error naming it. A reference met again while it is being
//! resolved (a recursive schema: a tree node whose children are nodes) is replaced by
//! [`placeholder`], a schema that accepts anything, so the result is finite.

use std::collections::HashMap;

use serde_json::{Map, Value, json};

/// The schema put where a reference would recurse: accepts anything, says why.
///
/// ```
/// use envelope_ops::openapi::refs::placeholder;
/// assert_eq!(placeholder("#/components/schemas/Node")["$comment"],
///            "circular $ref #/components/schemas/Node: not expanded");
/// ```
pub fn placeholder(reference: &str) -> Value {
    json!({ "$comment": format!("circular $ref {reference}: not expanded") })
}

/// The document with every local `$ref` replaced by what it points at. Keys beside a
/// `$ref` (3.1 allows `description`, `summary`…) are kept over the target's.
///
/// ```
/// use envelope_ops::openapi::refs::resolve;
/// use serde_json::json;
///
/// let doc = json!({"a": {"$ref": "#/defs/x"}, "defs": {"x": {"type": "string"}}});
/// assert_eq!(resolve(&doc).unwrap()["a"], json!({"type": "string"}));
/// let e = resolve(&json!({"a": {"$ref": "other.yaml#/x"}})).unwrap_err().to_string();
/// assert!(e.contains("other.yaml#/x") && e.contains("/a"), "{e}");
/// ```
pub fn resolve(doc: &Value) -> Result<Value, crate::error::TextError> {
    resolve_refs(doc).map_err(crate::error::TextError)
}

/// [`resolve`], its error a sentence.
fn resolve_refs(doc: &Value) -> Result<Value, String> {
    let mut resolver = Resolver {
        doc,
        stack: Vec::new(),
        done: HashMap::new(),
    };
    let mut at = String::new();
    resolver.walk(doc, &mut at).map(|(value, _)| value)
}

struct Resolver<'a> {
    doc: &'a Value,
    /// The references being resolved, outermost first (a repeat is a cycle).
    stack: Vec<String>,
    /// Resolved references whose expansion met no cycle: the same whatever the context.
    done: HashMap<String, Value>,
}

impl Resolver<'_> {
    /// The resolved value and the outermost open reference (its index in `stack`) that a
    /// cycle placeholder inside it stands for, if any: such a value depends on its context.
    fn walk(&mut self, value: &Value, at: &mut String) -> Result<(Value, Open), String> {
        match value {
            Value::Object(map) => {
                if let Some(reference) = map.get("$ref").and_then(Value::as_str) {
                    return self.follow(reference, map, at);
                }
                let mut out = Map::with_capacity(map.len());
                let mut open: Open = None;
                for (key, item) in map {
                    let len = at.len();
                    push_token(at, key);
                    let (item, c) = self.walk(item, at)?;
                    at.truncate(len);
                    open = outermost(open, c);
                    out.insert(key.clone(), item);
                }
                Ok((Value::Object(out), open))
            }
            Value::Array(items) => {
                let mut out = Vec::with_capacity(items.len());
                let mut open: Open = None;
                for (i, item) in items.iter().enumerate() {
                    let len = at.len();
                    push_token(at, &i.to_string());
                    let (item, c) = self.walk(item, at)?;
                    at.truncate(len);
                    open = outermost(open, c);
                    out.push(item);
                }
                Ok((Value::Array(out), open))
            }
            other => Ok((other.clone(), None)),
        }
    }

    fn follow(
        &mut self,
        reference: &str,
        siblings: &Map<String, Value>,
        at: &mut String,
    ) -> Result<(Value, Open), String> {
        let shown_at = if at.is_empty() { "/" } else { at.as_str() };
        let Some(fragment) = reference.strip_prefix('#') else {
            return Err(format!(
                "$ref {reference:?} at {shown_at}: external references are not supported (only local #/… ones)"
            ));
        };
        let (target, open) = if let Some(i) = self.stack.iter().position(|r| r == reference) {
            (placeholder(reference), Some(i))
        } else if let Some(done) = self.done.get(reference) {
            (done.clone(), None)
        } else {
            let pointer = decode_fragment(fragment);
            let Some(target) = self.doc.pointer(&pointer) else {
                return Err(format!(
                    "$ref {reference:?} at {shown_at}: points at nothing in the document"
                ));
            };
            let depth = self.stack.len();
            self.stack.push(reference.to_string());
            let mut target_at = pointer.clone();
            let walked = self.walk(target, &mut target_at);
            self.stack.pop();
            let (target, open) = walked?;
            // A cycle that closes on this reference is finished here: the expansion is the
            // same wherever the reference is met, so it is kept.
            let open = open.filter(|&i| i < depth);
            if open.is_none() {
                self.done.insert(reference.to_string(), target.clone());
            }
            (target, open)
        };
        if siblings.len() == 1 {
            return Ok((target, open));
        }
        let mut merged = match target {
            Value::Object(map) => map,
            other => return Ok((other, open)),
        };
        let mut open = open;
        for (key, value) in siblings.iter().filter(|(k, _)| *k != "$ref") {
            let len = at.len();
            push_token(at, key);
            let (value, c) = self.walk(value, at)?;
            at.truncate(len);
            open = outermost(open, c);
            merged.insert(key.clone(), value);
        }
        Ok((Value::Object(merged), open))
    }
}

/// The index in the resolver's stack of the outermost open reference a value depends on.
type Open = Option<usize>;

fn outermost(a: Open, b: Open) -> Open {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// A JSON Pointer token appended to `at` (`~` → `~0`, `/` → `~1`).
fn push_token(at: &mut String, token: &str) {
    at.push('/');
    at.push_str(&token.replace('~', "~0").replace('/', "~1"));
}

/// A URI fragment as a JSON Pointer: percent-decoded (`%7B` → `{`).
fn decode_fragment(fragment: &str) -> String {
    let bytes = fragment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2]))
        {
            out.push(h * 16 + l);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn hex(b: u8) -> Option<u8> {
    (b as char).to_digit(16).map(|d| d as u8)
}
