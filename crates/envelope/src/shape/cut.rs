//! Fair cuts of a JSON value to a byte budget, from one measuring pass.
//!
//! A cut is chosen by one level `c`: every array, at any depth, keeps its first `c` items and
//! every string keeps its first `STRING_BYTES_PER_LEVEL * c` bytes (at a UTF-8 boundary).
//! Object keys are never removed. The serialized size grows with `c`, so the largest `c` that
//! fits is found by binary search — on sizes computed from the measured tree, without
//! serializing anything again.
//!
//! A digest (`sha256:<64 hex>`: the artifact reference offload writes into the payload, or
//! one the payload had) is never cut: half a digest names nothing. It is kept whole or,
//! with the item holding it, left out.

use serde_json::{Map, Value};

use crate::json::pointer;
use crate::json::size::{escaped_len, js_size, prefix, scalar_size};
use crate::json::skim::{LongString, TailIndex};
use crate::model::{Cut, CutUnit, is_digest};

/// String bytes kept per level: strings shrink 16 times faster than arrays lose items.
pub const STRING_BYTES_PER_LEVEL: usize = 16;

/// The measured shape of a value: a node per array and object in pre-order, in one
/// allocation (scalars are cheap to measure again and get no node).
///
/// Measured for a budget ([`Measured::bounded`]), an array's items past the point where
/// even their smallest forms (level 0) no longer fit are only sized, not given nodes: no
/// level that fits keeps them. Sizes at such levels are reported as `usize::MAX`.
pub struct Measured {
    root: Node,
    nodes: Vec<Node>,
    /// The strings read as prefixes: (address, prefix length) → (whole length).
    strings: Vec<(usize, usize, usize)>,
}

#[derive(Clone, Copy)]
struct Node {
    /// Compact JS-dialect size of the value.
    size: usize,
    /// Longest array in the subtree (items).
    max_array: usize,
    /// Longest string value in the subtree (bytes).
    max_string: usize,
    /// Index one past the subtree's container nodes: the next container sibling's node.
    end: usize,
    /// Size at level 0 (every array empty, every string empty): no cut is smaller.
    skeleton: usize,
    /// Arrays: the leading items that have nodes; a level keeping more cannot fit.
    reach: usize,
    /// Arrays: how many items the array has (skimmed ones included).
    len: usize,
}

impl Node {
    fn untouched_at(&self, level: usize) -> bool {
        self.max_array <= level && self.max_string <= level * STRING_BYTES_PER_LEVEL
    }
}

fn is_container(v: &Value) -> bool {
    matches!(v, Value::Array(_) | Value::Object(_))
}

/// Whether a string is kept whole at every level (a digest).
fn never_cut(s: &str) -> bool {
    is_digest(s)
}

/// Size of a scalar cut at `level` (a digest whole at every level).
fn scalar_size_at(scalar: &Value, level: usize) -> usize {
    match scalar {
        Value::String(s) if never_cut(s) => escaped_len(s),
        _ => scalar_size(scalar, level * STRING_BYTES_PER_LEVEL),
    }
}

impl Measured {
    /// One pass over `value`.
    pub fn new(value: &Value) -> Self {
        Self::bounded(value, usize::MAX)
    }

    /// One pass over `value`, for cuts of at most `limit` bytes.
    pub fn bounded(value: &Value, limit: usize) -> Self {
        Self::skimmed(value, limit, &TailIndex::default())
    }

    /// One pass over `value` as `json::skim::read` read it for `limit`:
    /// the arrays `tails` finds in it hold only the items that were read, and count their
    /// tails' items and sizes as theirs.
    pub fn skimmed(value: &Value, limit: usize, tails: &TailIndex<'_>) -> Self {
        Self::read_for_cut(value, limit, tails, &StringIndex::default())
    }

    /// [`Measured::skimmed`] of a value read by `json::skim::read_for_cut`: the strings
    /// `strings` finds in it are prefixes, measured as the whole strings they stand for.
    /// Sizes that differ from the whole read's are over `limit` in both (see
    /// `json::skim::kept_bytes`), and only cuts that fit are made, so
    /// every cut of at most `limit` bytes is the whole read's.
    pub fn read_for_cut(
        value: &Value,
        limit: usize,
        tails: &TailIndex<'_>,
        strings: &StringIndex<'_>,
    ) -> Self {
        let mut nodes = Vec::new();
        let root = measure(value, &mut nodes, limit, &Index { tails, strings });
        Measured {
            root,
            nodes,
            strings: strings.clone_index(),
        }
    }

    /// Compact JS-dialect size of the whole value.
    pub fn size(&self) -> usize {
        self.root.size
    }

    /// The smallest level at which nothing is cut.
    pub fn full_level(&self) -> usize {
        self.root
            .max_array
            .max(self.root.max_string.div_ceil(STRING_BYTES_PER_LEVEL))
    }

    /// Size of `value` cut at `level` (`usize::MAX` if that level is beyond the bound).
    pub fn size_at(&self, value: &Value, level: usize) -> usize {
        if self.root.untouched_at(level) {
            return self.root.size;
        }
        self.size_of(0, value, level)
    }

    /// Size of `value` (whose node, if it is a container, is `at`) cut at `level`.
    fn size_of(&self, at: usize, value: &Value, level: usize) -> usize {
        match value {
            Value::Array(items) => {
                let node = self.nodes[at];
                if node.untouched_at(level) {
                    return node.size;
                }
                let kept = node.len.min(level);
                if kept > node.reach {
                    return usize::MAX;
                }
                let mut child = at + 1;
                let mut size = 2 + kept.saturating_sub(1);
                for item in items.iter().take(kept) {
                    size = size.saturating_add(self.size_of(child, item, level));
                    if is_container(item) {
                        child = self.nodes[child].end;
                    }
                }
                size
            }
            Value::Object(map) => {
                let node = self.nodes[at];
                if node.untouched_at(level) {
                    return node.size;
                }
                let mut child = at + 1;
                let mut size = 2 + map.len().saturating_sub(1);
                for (k, v) in map {
                    size = size.saturating_add(escaped_len(k) + 1);
                    size = size.saturating_add(self.size_of(child, v, level));
                    if is_container(v) {
                        child = self.nodes[child].end;
                    }
                }
                size
            }
            scalar => scalar_size_at(scalar, level),
        }
    }

    /// The measured size of item `index` of `value`, an array (strings read as prefixes
    /// counted whole); `None` for a scalar item or one past the measured reach.
    pub fn item_size(&self, value: &Value, index: usize) -> Option<usize> {
        let items = value.as_array()?;
        let item = items.get(index)?;
        if !is_container(item) || index >= self.nodes.first()?.reach {
            return None;
        }
        let mut child = 1;
        for earlier in &items[..index] {
            if is_container(earlier) {
                child = self.nodes[child].end;
            }
        }
        Some(self.nodes[child].size)
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
        if self.root.untouched_at(level) {
            return value.clone();
        }
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
        if is_container(value) && self.nodes[node].untouched_at(level) {
            return value.clone();
        }
        match value {
            Value::String(s) if never_cut(s) => value.clone(),
            Value::String(s) => {
                let kept = prefix(s, level * STRING_BYTES_PER_LEVEL);
                let total = self.whole_len(s);
                if kept.len() < total {
                    cuts.push(Cut {
                        pointer: at.to_string(),
                        kept: kept.len() as u64,
                        total: total as u64,
                        unit: CutUnit::Bytes,
                    });
                }
                Value::String(kept.to_string())
            }
            Value::Array(items) => {
                let len = self.nodes[node].len;
                let kept = len.min(level);
                assert!(
                    kept <= self.nodes[node].reach,
                    "cut at a level that cannot fit"
                );
                if kept < len {
                    cuts.push(Cut {
                        pointer: at.to_string(),
                        kept: kept as u64,
                        total: len as u64,
                        unit: CutUnit::Items,
                    });
                }
                let mut child = node + 1;
                let mut out = Vec::with_capacity(kept);
                for (i, item) in items.iter().take(kept).enumerate() {
                    out.push(self.cut_of(child, item, level, &format!("{at}/{i}"), cuts));
                    if is_container(item) {
                        child = self.nodes[child].end;
                    }
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
                    if is_container(v) {
                        child = self.nodes[child].end;
                    }
                }
                Value::Object(out)
            }
            other => other.clone(),
        }
    }
}

impl Measured {
    /// The length of the string `s` stands for: its own, unless it was read as a prefix.
    fn whole_len(&self, s: &str) -> usize {
        match self.strings.is_empty() {
            true => s.len(),
            false => lookup(&self.strings, s).unwrap_or(s.len()),
        }
    }
}

/// The whole length of the string whose prefix is `s`, in `strings` (sorted (address,
/// prefix length, whole length)).
fn lookup(strings: &[(usize, usize, usize)], s: &str) -> Option<usize> {
    if s.is_empty() {
        return None;
    }
    let key = (s.as_ptr() as usize, s.len());
    strings
        .binary_search_by_key(&key, |&(address, len, _)| (address, len))
        .ok()
        .map(|i| strings[i].2)
}

/// The strings of a value read as prefixes by `json::skim::read_for_cut`, each found in the
/// value once by its pointer, then looked up by the string itself (its identity: the
/// address of its text) while measuring, in a borrow of the value.
#[derive(Debug, Default)]
pub struct StringIndex<'a> {
    /// (address of the prefix's text, its length, the string), sorted.
    strings: Vec<(usize, usize, &'a LongString)>,
    root: std::marker::PhantomData<&'a Value>,
}

impl<'a> StringIndex<'a> {
    /// Finds each of `strings` in `root` by its pointer; `None` unless each names a string
    /// of `root` shorter than the one it stands for (a prefix: never empty).
    pub fn new(root: &'a Value, strings: &'a [LongString]) -> Option<Self> {
        let mut found = Vec::with_capacity(strings.len());
        for long in strings {
            let s = root.pointer(&long.pointer)?.as_str()?;
            if s.is_empty() || s.len() >= long.len {
                return None;
            }
            found.push((s.as_ptr() as usize, s.len(), long));
        }
        found.sort_unstable_by_key(|&(address, len, _)| (address, len));
        if found.windows(2).any(|w| w[0].0 == w[1].0) {
            return None;
        }
        Some(StringIndex {
            strings: found,
            root: std::marker::PhantomData,
        })
    }

    /// What the string `s` of the value stands for, if it was read as a prefix.
    fn get(&self, s: &str) -> Option<&'a LongString> {
        if self.strings.is_empty() || s.is_empty() {
            return None;
        }
        let key = (s.as_ptr() as usize, s.len());
        self.strings
            .binary_search_by_key(&key, |&(address, len, _)| (address, len))
            .ok()
            .map(|i| self.strings[i].2)
    }

    fn clone_index(&self) -> Vec<(usize, usize, usize)> {
        self.strings
            .iter()
            .map(|&(address, len, long)| (address, len, long.len))
            .collect()
    }
}

/// What a value was read without: its skimmed arrays' tails, its strings' rests.
struct Index<'t, 's> {
    tails: &'t TailIndex<'t>,
    strings: &'s StringIndex<'s>,
}

/// The compact JS size of `value`, its strings read as prefixes counted whole.
fn js_size_in(value: &Value, index: &Index<'_, '_>) -> usize {
    if index.strings.strings.is_empty() {
        return js_size(value);
    }
    match value {
        Value::String(s) => index
            .strings
            .get(s)
            .map_or_else(|| escaped_len(s), |l| l.size),
        Value::Array(items) => {
            2 + items.len().saturating_sub(1)
                + items.iter().map(|v| js_size_in(v, index)).sum::<usize>()
        }
        Value::Object(map) => {
            2 + map.len().saturating_sub(1)
                + map
                    .iter()
                    .map(|(k, v)| escaped_len(k) + 1 + js_size_in(v, index))
                    .sum::<usize>()
        }
        scalar => js_size(scalar),
    }
}

/// Measures `value`, appending nodes for it (if a container) and its container descendants
/// within reach of cuts of at most `limit` bytes.
fn measure(value: &Value, nodes: &mut Vec<Node>, limit: usize, index: &Index<'_, '_>) -> Node {
    let tails = index.tails;
    let mut node = Node {
        size: 0,
        max_array: 0,
        max_string: 0,
        end: 0,
        skeleton: 0,
        reach: 0,
        len: 0,
    };
    let at = nodes.len();
    match value {
        Value::Array(items) => {
            nodes.push(node);
            if let Some(tail) = tails.get(items) {
                node.len = items.len() + tail.items;
                node.size = tail.size;
                node.max_array = tail.max_array;
                node.max_string = tail.max_string;
            } else {
                node.len = items.len();
            }
            node.size += 2 + node.len.saturating_sub(1);
            node.max_array = node.max_array.max(node.len);
            node.skeleton = 2;
            node.reach = items.len();
            // The smallest the first i items can be: once over the limit, a level keeping
            // them does not fit, and later items are only sized (`skim` stopped reading them
            // at the same point).
            let mut smallest = 2usize;
            for (i, item) in items.iter().enumerate() {
                if i >= node.reach {
                    node.size += js_size_in(item, index);
                    continue;
                }
                let child = measure(item, nodes, limit, index);
                node.size += child.size;
                node.max_array = node.max_array.max(child.max_array);
                node.max_string = node.max_string.max(child.max_string);
                smallest = smallest.saturating_add(child.skeleton + usize::from(i > 0));
                if smallest > limit {
                    node.reach = i + 1;
                }
            }
        }
        Value::Object(map) => {
            nodes.push(node);
            node.size = 2 + map.len().saturating_sub(1);
            node.skeleton = node.size;
            for (k, v) in map {
                let child = measure(v, nodes, limit, index);
                let key = escaped_len(k) + 1;
                node.size += key + child.size;
                node.skeleton = node.skeleton.saturating_add(key + child.skeleton);
                node.max_array = node.max_array.max(child.max_array);
                node.max_string = node.max_string.max(child.max_string);
            }
        }
        Value::String(s) => {
            // Read as a prefix: measured as the whole string (never a digest).
            if let Some(long) = index.strings.get(s) {
                node.size = long.size;
                node.max_string = long.len;
                node.skeleton = 2;
                return node;
            }
            node.size = escaped_len(s);
            if never_cut(s) {
                node.skeleton = node.size;
            } else {
                node.max_string = s.len();
                node.skeleton = 2;
            }
            return node;
        }
        scalar => {
            node.size = scalar_size(scalar, 0);
            node.skeleton = node.size;
            return node;
        }
    }
    node.end = nodes.len();
    nodes[at] = node;
    node
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn measured_sizes_equal_serialized_sizes_at_every_level() {
        let v = json!({"a": [1, 2, 3, {"b": "héllo\n\"wörld\"", "c": [[1, 2], [3]]}], "d": "x".repeat(40), "3": null});
        let m = Measured::new(&v);
        let written = crate::json::to_vec(&v, crate::json::Dialect::Js).len();
        assert_eq!(m.size(), written);
        assert_eq!(crate::json::size::js_size(&v), written);
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
