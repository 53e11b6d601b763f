//! The modules of a crate and what each imports, read from its sources: every `crate::…`
//! (and `super::…`) path in `use` lines and in code, not in comments or strings, names a
//! module the file depends on. Shared by the crates' `layers` tests.
#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

pub fn source_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            source_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The module a file is, as `["formats", "ctxo", "codec"]`.
pub fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap();
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_string())
        .collect();
    if parts.last().is_some_and(|p| p == "mod" || p == "lib") {
        parts.pop();
    }
    parts
}

/// The code of a file without comments and string literals (a doc link or a message
/// naming a module is not a dependency).
pub fn code_only(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let mut in_string = false;
        let mut escaped = false;
        let bytes = line.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            let b = bytes[i];
            if in_string {
                if escaped {
                    escaped = false;
                } else if b == b'\\' {
                    escaped = true;
                } else if b == b'"' {
                    in_string = false;
                }
            } else if b == b'"' {
                in_string = true;
            } else if b == b'/' && bytes.get(i + 1) == Some(&b'/') {
                break;
            } else {
                out.push(b as char);
            }
            i += 1;
        }
        out.push('\n');
    }
    out
}

/// Every module path (`crate::a::b`, two levels at most) the code of `module` refers to,
/// including the groups of a `use crate::{a, b::c}` line and `super::` paths. Unit tests
/// (from the first `#[cfg(test)]` on) are left out: their `super` is the file itself.
pub fn dependencies(module: &[String], code: &str) -> BTreeSet<Vec<String>> {
    let code = code.split("#[cfg(test)]").next().unwrap_or_default();
    let parent = module[..module.len().saturating_sub(1)].join("::");
    let code = if parent.is_empty() {
        code.replace("super::", "crate::")
    } else {
        code.replace("super::", &format!("crate::{parent}::"))
    };
    let mut deps = BTreeSet::new();
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    let mut rest = code.as_str();
    while let Some(at) = rest.find("crate::") {
        rest = &rest[at + "crate::".len()..];
        for root in group(rest) {
            let first = ident(root);
            if first.is_empty() {
                continue;
            }
            let after = root[first.len()..].strip_prefix("::").unwrap_or("");
            // `crate::a::{b, c}` (a `super::{b, c}` too): each of the group is a path.
            let seconds: Vec<String> = if after.starts_with('{') {
                group(after).into_iter().map(ident).collect()
            } else {
                vec![ident(after)]
            };
            for second in seconds {
                let mut path = vec![first.clone()];
                // A lower-case name is a module (or a function: harmless for layers).
                if second.starts_with(|c: char| c.is_ascii_lowercase()) {
                    path.push(second);
                }
                deps.insert(path);
            }
        }
    }
    deps
}

/// The paths of a `{a, b::c}` group at the start of `text` (each with what follows it),
/// or `text` itself when no group starts it. Nested groups are kept whole in their item.
fn group(text: &str) -> Vec<&str> {
    let Some(inner) = text.strip_prefix('{') else {
        return vec![text];
    };
    let mut items = Vec::new();
    let (mut depth, mut start) = (0usize, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => {
                items.push(inner[start..i].trim());
                break;
            }
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(inner[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    items
}

/// Each module two levels deep (`formats::ctxo`, `shape::cut`) of the crate whose sources
/// are in `src`, and the module paths its files refer to.
pub fn graph(src: &Path) -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
    let src = src.to_path_buf();
    let mut files = Vec::new();
    source_files(&src, &mut files);
    let mut graph: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
    for file in files {
        let module = module_of(&src, &file);
        let code = code_only(&std::fs::read_to_string(&file).unwrap());
        let deps = dependencies(&module, &code);
        let node = module.iter().take(2).cloned().collect();
        graph.entry(node).or_default().extend(deps);
    }
    graph
}

/// A circle of modules that import each other (`a -> b -> a`), if there is one in `graph`.
pub fn circle(graph: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>) -> Option<String> {
    // Nodes are modules two levels deep (`formats::ctxo`, `shape::cut`); a module and its
    // own parent (`formats` and `formats::ctxo`) are one unit, so edges between them are
    // not counted.
    let related = |a: &[String], b: &[String]| a.starts_with(b) || b.starts_with(a);
    let mut edges: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
    for (module, deps) in graph {
        if module.is_empty() {
            continue;
        }
        for dep in deps {
            if !related(module, dep) {
                edges.entry(module.clone()).or_default().insert(dep.clone());
            }
        }
    }
    // Depth-first search for a back edge, reporting the circle.
    fn visit(
        node: &Vec<String>,
        edges: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
        state: &mut BTreeMap<Vec<String>, u8>,
        stack: &mut Vec<Vec<String>>,
    ) -> Option<Vec<String>> {
        match state.get(node) {
            Some(1) => {
                let from = stack.iter().position(|n| n == node).unwrap();
                let mut circle: Vec<String> = stack[from..].iter().map(|n| n.join("::")).collect();
                circle.push(node.join("::"));
                return Some(circle);
            }
            Some(_) => return None,
            None => {}
        }
        state.insert(node.clone(), 1);
        stack.push(node.clone());
        for next in edges.get(node).into_iter().flatten() {
            if let Some(circle) = visit(next, edges, state, stack) {
                return Some(circle);
            }
        }
        stack.pop();
        state.insert(node.clone(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for node in edges.keys() {
        if let Some(circle) = visit(node, &edges, &mut state, &mut Vec::new()) {
            return Some(circle.join(" -> "));
        }
    }
    None
}
