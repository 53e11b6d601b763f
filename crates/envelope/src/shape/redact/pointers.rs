//! Keys inside JSON Pointers: the pointers of extensions (and the MCP result's key order)
//! name keys of the input, so a key holding a secret is masked there as in a payload.
//!
//! Every pointer segment that holds a secret gets the masked text
//! [`rename_keys`](super::value::rename_keys) gives it among its siblings (the segments
//! under the same parent, and the root keys of the document when their order is known), so
//! two pointers through the same key stay under one masked key, and two secret keys under
//! one parent stay two keys.

use std::collections::HashMap;

use super::Redaction;
use super::value::{Renamed, rename_keys};
use crate::json::pointer;

/// The new segment of each (parent pointer, segment) that holds a secret.
pub(super) struct PointerRenames {
    renamed: HashMap<(String, String), String>,
}

/// A pointer's segments as (parent pointer as written, segment unescaped); `#` (entering an
/// embedded document) stays part of the parent.
fn segments(ptr: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut parent = String::new();
    for (i, doc) in ptr.split('#').enumerate() {
        if i > 0 {
            parent.push('#');
        }
        for token in doc.split('/').skip(1) {
            out.push((parent.clone(), pointer::unescape(token)));
            parent.push('/');
            parent.push_str(token);
        }
    }
    out
}

impl PointerRenames {
    /// The renames for `pointers`; `root_keys` are the document's root keys in order, when
    /// known (they are siblings of the pointers' first segments).
    pub(super) fn new<'p>(
        pointers: impl Iterator<Item = &'p str>,
        root_keys: &[String],
        at: &str,
        report: &mut Vec<Redaction>,
    ) -> Self {
        // Siblings by parent, in order of first appearance.
        let mut parents: Vec<(String, Vec<String>)> = vec![(String::new(), root_keys.to_vec())];
        for ptr in pointers {
            for (parent, token) in segments(ptr) {
                let i = match parents.iter().position(|(p, _)| *p == parent) {
                    Some(i) => i,
                    None => {
                        parents.push((parent, Vec::new()));
                        parents.len() - 1
                    }
                };
                if !parents[i].1.contains(&token) {
                    parents[i].1.push(token);
                }
            }
        }
        let mut renamed = HashMap::new();
        for (parent, siblings) in parents {
            let renames = rename_keys(siblings.iter().map(String::as_str));
            for (old, rename) in siblings.into_iter().zip(renames) {
                if let Some(Renamed { key, rules }) = rename {
                    let here = format!("{at}{}", pointer::join(&parent, &key));
                    report.extend(rules.into_iter().map(|rule| Redaction {
                        rule,
                        at: here.clone(),
                    }));
                    renamed.insert((parent.clone(), old), key);
                }
            }
        }
        PointerRenames { renamed }
    }

    /// The new name of a root key (unchanged when it holds no secret).
    pub(super) fn root_key(&self, key: &str) -> Option<&str> {
        self.renamed
            .get(&(String::new(), key.to_string()))
            .map(String::as_str)
    }

    /// `ptr` with its secret segments masked.
    pub(super) fn apply(&self, ptr: &str) -> String {
        let mut out = String::new();
        let mut parent_before = String::new();
        for (i, doc) in ptr.split('#').enumerate() {
            if i > 0 {
                out.push('#');
                parent_before.push('#');
            }
            for token in doc.split('/').skip(1) {
                let key = (parent_before.clone(), pointer::unescape(token));
                out.push('/');
                match self.renamed.get(&key) {
                    Some(new) => out.push_str(&pointer::escape(new)),
                    None => out.push_str(token),
                }
                parent_before.push('/');
                parent_before.push_str(token);
            }
        }
        out
    }
}
