//! Schemas written with their repeated parts once (the cache, [`super::cache`]): a derived
//! operation's schemas have every `$ref` written out, so a component used by hundreds of
//! operations (GitHub's `repository`) is in each of them. Written to the cache, each
//! subtree met at least twice and not tiny becomes a *part*, kept once, and its places
//! hold `{"$envelope.part": N}`; read back, the parts an operation names are put back.
//!
//! Parts are found by hash-consing: every object and array gets an id from its members
//! (scalars as their JSON text, objects and arrays by their ids), so equal subtrees have
//! equal ids whatever their size, and the whole walk costs the size of the schemas once.
//! What is put back is equal to what was written, member order included: nothing is
//! re-derived.

use crate::error::TextError;
use std::collections::HashMap;

use serde_json::Value;

/// The key of a part's place.
pub const MARK: &str = "$envelope.part";

/// A subtree whose text is shorter than this stays where it is: its place would be
/// nearly as long, and each part costs a read and a digest.
const MIN_TEXT: usize = 256;

/// Counts subtrees ([`Sharer::count`] over every schema), then writes schemas with the
/// repeated ones as parts ([`Sharer::write`]).
#[derive(Default)]
pub struct Sharer {
    /// An object's or array's key (its members, children by id) → its id.
    ids: HashMap<Vec<u8>, usize>,
    /// By id: how often it was met, its text's length, its part (once written).
    counts: Vec<u32>,
    sizes: Vec<usize>,
    part_of: Vec<Option<usize>>,
    /// The parts' texts, by part number (a part may name parts before it).
    parts: Vec<Vec<u8>>,
    /// A schema of the document has the key [`MARK`]: no parts (a place could not be
    /// told from the document's own object).
    conflict: bool,
}

impl Sharer {
    /// First pass: counts the subtrees of `schema`.
    pub fn count(&mut self, schema: &Value) {
        self.walk(schema, None);
    }

    /// Second pass: writes `schema` as JSON into `out`, repeated subtrees as places.
    pub fn write(&mut self, schema: &Value, out: &mut Vec<u8>) {
        let start = out.len();
        if let Some(id) = self.walk(schema, Some(out)) {
            self.place(id, start, out);
        }
    }

    /// Whether places were written (none when the document uses [`MARK`] itself).
    pub fn shares(&self) -> bool {
        !self.conflict
    }

    /// The parts' texts, by number.
    pub fn into_parts(self) -> Vec<Vec<u8>> {
        self.parts
    }

    fn shared(&self, id: usize) -> bool {
        !self.conflict && self.counts[id] >= 2 && self.sizes[id] >= MIN_TEXT
    }

    /// The subtree of `id` just written at `out[start..]`, when shared, becomes a part
    /// (the first time) and its place.
    fn place(&mut self, id: usize, start: usize, out: &mut Vec<u8>) {
        if !self.shared(id) {
            return;
        }
        let part = match self.part_of[id] {
            Some(part) => part,
            None => {
                self.parts.push(out[start..].to_vec());
                self.part_of[id] = Some(self.parts.len() - 1);
                self.parts.len() - 1
            }
        };
        out.truncate(start);
        out.extend_from_slice(format!("{{\"{MARK}\":{part}}}").as_bytes());
    }

    /// The id of an object or array (`None` for a scalar); counted when `out` is `None`,
    /// else written into `out`.
    fn walk(&mut self, value: &Value, mut out: Option<&mut Vec<u8>>) -> Option<usize> {
        let counting = out.is_none();
        let mut key = Vec::new();
        let mut size = 2;
        match value {
            Value::Object(map) => {
                key.push(b'{');
                if let Some(out) = out.as_deref_mut() {
                    out.push(b'{');
                }
                for (i, (name, item)) in map.iter().enumerate() {
                    if name == MARK {
                        self.conflict = true;
                    }
                    let name = serde_json::to_vec(name).expect("a string serialises");
                    if let Some(out) = out.as_deref_mut() {
                        if i > 0 {
                            out.push(b',');
                        }
                        out.extend_from_slice(&name);
                        out.push(b':');
                    }
                    size += name.len() + 2;
                    key.extend_from_slice(&name);
                    key.push(b':');
                    size += self.member(item, &mut key, out.as_deref_mut());
                    key.push(b',');
                }
                if let Some(out) = out {
                    out.push(b'}');
                }
            }
            Value::Array(items) => {
                key.push(b'[');
                if let Some(out) = out.as_deref_mut() {
                    out.push(b'[');
                }
                for (i, item) in items.iter().enumerate() {
                    if i > 0
                        && let Some(out) = out.as_deref_mut()
                    {
                        out.push(b',');
                    }
                    size += 1 + self.member(item, &mut key, out.as_deref_mut());
                    key.push(b',');
                }
                if let Some(out) = out {
                    out.push(b']');
                }
            }
            _ => return None,
        }
        let next = self.counts.len();
        let id = *self.ids.entry(key).or_insert(next);
        if id == next {
            self.counts.push(0);
            self.sizes.push(size);
            self.part_of.push(None);
        }
        if counting {
            self.counts[id] = self.counts[id].saturating_add(1);
        }
        Some(id)
    }

    /// One member: a scalar's text, or an object's or array's id, into `key`; written into
    /// `out` (as a place when shared). Returns the length of its text.
    fn member(&mut self, item: &Value, key: &mut Vec<u8>, out: Option<&mut Vec<u8>>) -> usize {
        match item {
            Value::Object(_) | Value::Array(_) => {
                let (id, size) = match out {
                    Some(out) => {
                        let start = out.len();
                        let id = self.walk(item, Some(out)).expect("an object or array");
                        let size = self.sizes[id];
                        self.place(id, start, out);
                        (id, size)
                    }
                    None => {
                        let id = self.walk(item, None).expect("an object or array");
                        (id, self.sizes[id])
                    }
                };
                key.push(b'#');
                key.extend_from_slice(id.to_string().as_bytes());
                size
            }
            scalar => {
                let text = serde_json::to_vec(scalar).expect("a scalar serialises");
                key.extend_from_slice(&text);
                if let Some(out) = out {
                    out.extend_from_slice(&text);
                }
                text.len()
            }
        }
    }
}

/// Puts the parts back into `value`: each place `{"$envelope.part": N}` becomes part `N`
/// as `part(N)` gives it (already put back itself). A place naming a part `part` does not
/// have is an error.
pub fn expand(
    value: &mut Value,
    part: &mut dyn FnMut(usize) -> Result<Value, TextError>,
) -> Result<(), TextError> {
    match value {
        Value::Object(map) => {
            if map.len() == 1
                && let Some(n) = map.get(MARK)
            {
                let n = n
                    .as_u64()
                    .and_then(|n| usize::try_from(n).ok())
                    .ok_or_else(|| TextError(format!("a part's place names no part: {n}")))?;
                *value = part(n)?;
                return Ok(());
            }
            map.values_mut().try_for_each(|item| expand(item, part))
        }
        Value::Array(items) => items.iter_mut().try_for_each(|item| expand(item, part)),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Written with parts and put back, every schema is what it was, and a repeated large
    /// subtree is written once.
    #[test]
    fn repeated_subtrees_are_kept_once_and_put_back_equal() {
        let big = json!({"type": "object", "properties": {
            "name": {"type": "string", "description": "x".repeat(300)},
            "n": {"type": "integer", "minimum": 1.5}}});
        let schemas = [
            json!({"a": big, "b": [big, 1, "s"]}),
            json!({"type": "array", "items": big}),
            big.clone(),
            json!({"small": {"type": "string"}, "again": {"type": "string"}}),
        ];
        let mut sharer = Sharer::default();
        schemas.iter().for_each(|s| sharer.count(s));
        let written: Vec<Vec<u8>> = schemas
            .iter()
            .map(|s| {
                let mut out = Vec::new();
                sharer.write(s, &mut out);
                out
            })
            .collect();
        assert!(sharer.shares());
        let parts = sharer.into_parts();
        // `big`, its `properties` and their `name` (met as often, long enough); parts
        // name only parts before them.
        assert_eq!(parts.len(), 3, "{parts:?}");
        let total: usize = written.iter().map(Vec::len).sum();
        assert!(total < 200, "{total}");
        for (schema, text) in schemas.iter().zip(&written) {
            fn part(parts: &[Vec<u8>], n: usize) -> Result<Value, TextError> {
                let mut value: Value = serde_json::from_slice(&parts[n]).unwrap();
                expand(&mut value, &mut |m| {
                    assert!(m < n, "part {n} names part {m}");
                    part(parts, m)
                })?;
                Ok(value)
            }
            let mut back: Value = serde_json::from_slice(text).unwrap();
            expand(&mut back, &mut |n| part(&parts, n)).unwrap();
            assert_eq!(&back, schema);
            assert_eq!(
                serde_json::to_vec(&back).unwrap(),
                serde_json::to_vec(schema).unwrap()
            );
        }
    }

    /// A document whose schemas use the place's key itself gets no parts.
    #[test]
    fn a_schema_with_the_mark_as_a_key_turns_sharing_off() {
        let odd = json!({"x": {MARK: 0, "description": "y".repeat(300)}});
        let mut sharer = Sharer::default();
        sharer.count(&odd);
        sharer.count(&odd);
        let mut out = Vec::new();
        sharer.write(&odd, &mut out);
        assert!(!sharer.shares());
        assert_eq!(serde_json::from_slice::<Value>(&out).unwrap(), odd);
    }
}
