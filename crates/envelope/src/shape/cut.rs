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

/// The measured shape of one value (sizes in compact JS-dialect bytes).
pub struct Measured {
    size: usize,
    /// Longest array in the subtree (items).
    max_array: usize,
    /// Longest string value in the subtree (bytes).
    max_string: usize,
    children: Vec<Measured>,
}

impl Measured {
    /// One pass over `value`.
    pub fn new(value: &Value) -> Self {
        match value {
            Value::String(s) => Measured {
                size: escaped_len(s),
                max_array: 0,
                max_string: s.len(),
                children: Vec::new(),
            },
            Value::Array(items) => {
                let children: Vec<Measured> = items.iter().map(Measured::new).collect();
                Measured {
                    size: 2
                        + children.iter().map(|c| c.size).sum::<usize>()
                        + items.len().saturating_sub(1),
                    max_array: children
                        .iter()
                        .map(|c| c.max_array)
                        .max()
                        .unwrap_or(0)
                        .max(items.len()),
                    max_string: children.iter().map(|c| c.max_string).max().unwrap_or(0),
                    children,
                }
            }
            Value::Object(map) => {
                let children: Vec<Measured> = map.values().map(Measured::new).collect();
                let keys: usize = map.keys().map(|k| escaped_len(k) + 1).sum();
                Measured {
                    size: 2
                        + keys
                        + children.iter().map(|c| c.size).sum::<usize>()
                        + map.len().saturating_sub(1),
                    max_array: children.iter().map(|c| c.max_array).max().unwrap_or(0),
                    max_string: children.iter().map(|c| c.max_string).max().unwrap_or(0),
                    children,
                }
            }
            scalar => Measured {
                size: match scalar {
                    Value::Number(n) => crate::json::number::js_len(n),
                    Value::Bool(true) => 4,
                    Value::Bool(false) => 5,
                    _ => 4,
                },
                max_array: 0,
                max_string: 0,
                children: Vec::new(),
            },
        }
    }

    /// Compact JS-dialect size of the whole value.
    pub fn size(&self) -> usize {
        self.size
    }

    /// The smallest level at which nothing is cut.
    pub fn full_level(&self) -> usize {
        self.max_array
            .max(self.max_string.div_ceil(STRING_BYTES_PER_LEVEL))
    }

    fn untouched_at(&self, level: usize) -> bool {
        self.max_array <= level && self.max_string <= level * STRING_BYTES_PER_LEVEL
    }

    /// Size of `value` cut at `level`.
    pub fn size_at(&self, value: &Value, level: usize) -> usize {
        if self.untouched_at(level) {
            return self.size;
        }
        match value {
            Value::String(s) => escaped_len(prefix(s, level * STRING_BYTES_PER_LEVEL)),
            Value::Array(items) => {
                let kept = items.len().min(level);
                2 + items
                    .iter()
                    .zip(&self.children)
                    .take(kept)
                    .map(|(v, m)| m.size_at(v, level))
                    .sum::<usize>()
                    + kept.saturating_sub(1)
            }
            Value::Object(map) => {
                let keys: usize = map.keys().map(|k| escaped_len(k) + 1).sum();
                2 + keys
                    + map
                        .values()
                        .zip(&self.children)
                        .map(|(v, m)| m.size_at(v, level))
                        .sum::<usize>()
                    + map.len().saturating_sub(1)
            }
            _ => self.size,
        }
    }

    /// The largest level whose cut is at most `budget` bytes (`None`: not even level 0).
    pub fn level_for(&self, value: &Value, budget: usize) -> Option<usize> {
        if self.size <= budget {
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
        if self.untouched_at(level) {
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
                Value::Array(
                    items
                        .iter()
                        .zip(&self.children)
                        .take(kept)
                        .enumerate()
                        .map(|(i, (v, m))| m.cut(v, level, &format!("{at}/{i}"), cuts))
                        .collect(),
                )
            }
            Value::Object(map) => Value::Object(
                map.iter()
                    .zip(&self.children)
                    .map(|((k, v), m)| (k.clone(), m.cut(v, level, &pointer::join(at, k), cuts)))
                    .collect::<Map<String, Value>>(),
            ),
            other => other.clone(),
        }
    }
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

/// Length of `s` as a JS-dialect string literal, quotes included.
pub fn escaped_len(s: &str) -> usize {
    2 + s
        .bytes()
        .map(|b| match b {
            b'"' | b'\\' | 0x08 | 0x09 | 0x0a | 0x0c | 0x0d => 2,
            0..=0x1f => 6,
            _ => 1,
        })
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
