//! Fair cuts of a JSON value to a byte budget, from one measuring pass.
//!
//! A cut is chosen by one level `c`: every array, at any depth, keeps its first `c` items and
//! every string keeps its first `STRING_BYTES_PER_LEVEL * c` bytes (at a UTF-8 boundary).
//! Object keys are never removed. The serialized size grows with `c`, so the largest `c` that
//! fits is found by binary search — on sizes computed from the measured tree, without
//! serializing anything again.

use serde_json::{Map, Value};

use crate::json::pointer;
use crate::model::{Cut, CutUnit};

/// String bytes kept per level: strings shrink 16 times faster than arrays lose items.
pub const STRING_BYTES_PER_LEVEL: usize = 16;

/// The measured shape of a value: one node per value in pre-order, in one allocation.
pub struct Measured {
    nodes: Vec<Node>,
}

#[derive(Clone, Copy)]
struct Node {
    /// Compact JS-dialect size of the value.
    size: usize,
    /// Longest array in the subtree (items).
    max_array: usize,
    /// Longest string value in the subtree (bytes).
    max_string: usize,
    /// Index one past the subtree: the next sibling's node.
    end: usize,
}

impl Node {
    fn untouched_at(&self, level: usize) -> bool {
        self.max_array <= level && self.max_string <= level * STRING_BYTES_PER_LEVEL
    }
}

impl Measured {
    /// One pass over `value`.
    pub fn new(value: &Value) -> Self {
        let mut nodes = Vec::new();
        measure(value, &mut nodes);
        Measured { nodes }
    }

    /// Compact JS-dialect size of the whole value.
    pub fn size(&self) -> usize {
        self.nodes[0].size
    }

    /// The smallest level at which nothing is cut.
    pub fn full_level(&self) -> usize {
        let root = self.nodes[0];
        root.max_array
            .max(root.max_string.div_ceil(STRING_BYTES_PER_LEVEL))
    }

    /// Size of `value` cut at `level`.
    pub fn size_at(&self, value: &Value, level: usize) -> usize {
        self.size_of(0, value, level)
    }

    fn size_of(&self, at: usize, value: &Value, level: usize) -> usize {
        let node = self.nodes[at];
        if node.untouched_at(level) {
            return node.size;
        }
        match value {
            Value::String(s) => escaped_len(prefix(s, level * STRING_BYTES_PER_LEVEL)),
            Value::Array(items) => {
                let kept = items.len().min(level);
                let mut child = at + 1;
                let mut size = 2 + kept.saturating_sub(1);
                for item in items.iter().take(kept) {
                    size += self.size_of(child, item, level);
                    child = self.nodes[child].end;
                }
                size
            }
            Value::Object(map) => {
                let mut child = at + 1;
                let mut size = 2 + map.len().saturating_sub(1);
                for (k, v) in map {
                    size += escaped_len(k) + 1 + self.size_of(child, v, level);
                    child = self.nodes[child].end;
                }
                size
            }
            _ => node.size,
        }
    }

    /// The largest level whose cut is at most `budget` bytes (`None`: not even level 0).
    pub fn level_for(&self, value: &Value, budget: usize) -> Option<usize> {
        if self.size() <= budget {
            return Some(self.full_level());
        }
        if self.size_at(value, 0) > budget {
            return None;
        }
        let (mut lo, mut hi) = (0, self.full_level());
        while lo < hi {
            let mid = lo + (hi - lo).div_ceil(2);
            if self.size_at(value, mid) <= budget {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        Some(lo)
    }

    /// `value` cut at `level`, and what was cut (pointers below `at`).
    pub fn cut(&self, value: &Value, level: usize, at: &str, cuts: &mut Vec<Cut>) -> Value {
        self.cut_of(0, value, level, at, cuts)
    }

    fn cut_of(
        &self,
        node: usize,
        value: &Value,
        level: usize,
        at: &str,
        cuts: &mut Vec<Cut>,
    ) -> Value {
        if self.nodes[node].untouched_at(level) {
            return value.clone();
        }
        match value {
            Value::String(s) => {
                let kept = prefix(s, level * STRING_BYTES_PER_LEVEL);
                cuts.push(Cut {
                    pointer: at.to_string(),
                    kept: kept.len() as u64,
                    total: s.len() as u64,
                    unit: CutUnit::Bytes,
                });
                Value::String(kept.to_string())
            }
            Value::Array(items) => {
                let kept = items.len().min(level);
                if kept < items.len() {
                    cuts.push(Cut {
                        pointer: at.to_string(),
                        kept: kept as u64,
                        total: items.len() as u64,
                        unit: CutUnit::Items,
                    });
                }
                let mut child = node + 1;
                let mut out = Vec::with_capacity(kept);
                for (i, item) in items.iter().take(kept).enumerate() {
                    out.push(self.cut_of(child, item, level, &format!("{at}/{i}"), cuts));
                    child = self.nodes[child].end;
                }
                Value::Array(out)
            }
            Value::Object(map) => {
                let mut child = node + 1;
                let mut out = Map::with_capacity(map.len());
                for (k, v) in map {
                    out.insert(
                        k.clone(),
                        self.cut_of(child, v, level, &pointer::join(at, k), cuts),
                    );
                    child = self.nodes[child].end;
                }
                Value::Object(out)
            }
            other => other.clone(),
        }
    }
}

/// Appends the nodes of `value` (pre-order) and returns its own.
fn measure(value: &Value, nodes: &mut Vec<Node>) -> Node {
    let at = nodes.len();
    nodes.push(Node {
        size: 0,
        max_array: 0,
        max_string: 0,
        end: 0,
    });
    let mut node = Node {
        size: 0,
        max_array: 0,
        max_string: 0,
        end: 0,
    };
    match value {
        Value::String(s) => {
            node.size = escaped_len(s);
            node.max_string = s.len();
        }
        Value::Array(items) => {
            node.size = 2 + items.len().saturating_sub(1);
            node.max_array = items.len();
            for item in items {
                let child = measure(item, nodes);
                node.size += child.size;
                node.max_array = node.max_array.max(child.max_array);
                node.max_string = node.max_string.max(child.max_string);
            }
        }
        Value::Object(map) => {
            node.size = 2 + map.len().saturating_sub(1);
            for (k, v) in map {
                let child = measure(v, nodes);
                node.size += escaped_len(k) + 1 + child.size;
                node.max_array = node.max_array.max(child.max_array);
                node.max_string = node.max_string.max(child.max_string);
            }
        }
        Value::Number(n) => node.size = crate::json::number::js_len(n),
        Value::Bool(true) | Value::Null => node.size = 4,
        Value::Bool(false) => node.size = 5,
    }
    node.end = nodes.len();
    nodes[at] = node;
    node
}

/// The longest prefix of `s` of at most `max` bytes that ends on a character boundary.
pub fn prefix(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// Bytes a character's escape adds in the JS dialect: 1 for `\n`-style escapes, 5 for
/// `\u00xx`, 0 for everything copied as is.
const fn escape_extra() -> [u8; 256] {
    let mut table = [0u8; 256];
    let mut i = 0;
    while i < 0x20 {
        table[i] = 5;
        i += 1;
    }
    table[0x08] = 1;
    table[0x09] = 1;
    table[0x0a] = 1;
    table[0x0c] = 1;
    table[0x0d] = 1;
    table[b'"' as usize] = 1;
    table[b'\\' as usize] = 1;
    table
}
static ESCAPE_EXTRA: [u8; 256] = escape_extra();

/// Length of `s` as a JS-dialect string literal, quotes included.
pub fn escaped_len(s: &str) -> usize {
    2 + s.len()
        + s.bytes()
            .map(|b| usize::from(ESCAPE_EXTRA[usize::from(b)]))
            .sum::<usize>()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn measured_sizes_equal_serialized_sizes_at_every_level() {
        let v = json!({"a": [1, 2, 3, {"b": "héllo\n\"wörld\"", "c": [[1, 2], [3]]}], "d": "x".repeat(40), "3": null});
        let m = Measured::new(&v);
        assert_eq!(
            m.size(),
            crate::json::to_vec(&v, crate::json::Dialect::Js).len()
        );
        for level in 0..=m.full_level() + 1 {
            let mut cuts = Vec::new();
            let cut = m.cut(&v, level, "", &mut cuts);
            let written = crate::json::to_vec(&cut, crate::json::Dialect::Js).len();
            assert_eq!(m.size_at(&v, level), written, "level {level}");
        }
    }

    #[test]
    fn cuts_keep_prefixes_and_say_what_was_cut() {
        let v = json!({"items": [1, 2, 3, 4], "text": "é".repeat(20)});
        let m = Measured::new(&v);
        let mut cuts = Vec::new();
        let cut = m.cut(&v, 2, "", &mut cuts);
        assert_eq!(cut["items"], json!([1, 2]));
        // 32 bytes at level 2: sixteen two-byte characters.
        assert_eq!(cut["text"], json!("é".repeat(16)));
        assert_eq!(
            cuts,
            vec![
                Cut {
                    pointer: "/items".into(),
                    kept: 2,
                    total: 4,
                    unit: CutUnit::Items
                },
                Cut {
                    pointer: "/text".into(),
                    kept: 32,
                    total: 40,
                    unit: CutUnit::Bytes
                },
            ]
        );
    }

    #[test]
    fn escaped_len_matches_the_writer_on_every_byte_pattern() {
        let mut samples = vec![String::new()];
        for b in 0u8..=0x7f {
            // Each ASCII byte alone, and at every position of a 17-byte string.
            samples.push(char::from(b).to_string());
            for at in 0..17 {
                let mut s: String = "abcdefghijklmnopq".into();
                s.replace_range(at..=at, &char::from(b).to_string());
                samples.push(s);
            }
        }
        samples.push("é😀\u{2028}\"\\\n".repeat(9));
        for s in samples {
            let written =
                crate::json::to_vec(&Value::String(s.clone()), crate::json::Dialect::Js).len();
            assert_eq!(escaped_len(&s), written, "{s:?}");
        }
    }

    #[test]
    fn level_for_finds_the_largest_fit() {
        let v = json!({"items": (0..100).collect::<Vec<_>>()});
        let m = Measured::new(&v);
        for budget in [12, 13, 50, 200, 1000] {
            let level = m.level_for(&v, budget).unwrap();
            assert!(m.size_at(&v, level) <= budget);
            if level < m.full_level() {
                assert!(m.size_at(&v, level + 1) > budget);
            }
        }
        // `{"items":[]}` is 12 bytes: nothing smaller exists.
        assert_eq!(m.level_for(&v, 11), None);
    }
}
