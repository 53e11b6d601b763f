//! The core's layers only point down, and no two of its modules import each other in a
//! circle. Read from the source: every `crate::…` path (in `use` lines and in code, not in
//! comments) names a module the file depends on.
//!
//! Layers, bottom up (docs/architecture.md):
//! 0. `error`, `base64`, `time`: leaf helpers;
//! 1. `json`: parse, write, size, skim;
//! 2. `model`: the canonical envelope;
//! 3. `formats`: one folder per format, the `Format` trait, the validation types;
//! 4. `shape`, `validate`, `detect`, `convert`: stages and services over the model.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const LAYERS: &[(&str, u8)] = &[
    ("error", 0),
    ("base64", 0),
    ("time", 0),
    ("json", 1),
    ("model", 2),
    ("formats", 3),
    ("shape", 4),
    ("validate", 4),
    ("detect", 4),
    ("convert", 4),
];

fn layer(module: &str) -> u8 {
    LAYERS
        .iter()
        .find(|(name, _)| *name == module)
        .unwrap_or_else(|| panic!("module {module} has no layer: add it to LAYERS"))
        .1
}

fn source_files(dir: &Path, out: &mut Vec<PathBuf>) {
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
fn module_of(src: &Path, file: &Path) -> Vec<String> {
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
fn code_only(text: &str) -> String {
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
fn dependencies(module: &[String], code: &str) -> BTreeSet<Vec<String>> {
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

fn graph() -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
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

#[test]
fn layers_only_point_down() {
    let mut upward = Vec::new();
    for (module, deps) in graph() {
        let Some(top) = module.first() else {
            continue; // lib.rs re-exports everything.
        };
        for dep in deps {
            if layer(&dep[0]) > layer(top) {
                upward.push(format!("{} -> {}", module.join("::"), dep.join("::")));
            }
        }
    }
    assert!(upward.is_empty(), "imports that point up: {upward:#?}");
}

#[test]
fn no_module_cycles() {
    // Nodes are modules two levels deep (`formats::ctxo`, `shape::cut`); a module and its
    // own parent (`formats` and `formats::ctxo`) are one unit, so edges between them are
    // not counted.
    let graph = graph();
    let related = |a: &[String], b: &[String]| a.starts_with(b) || b.starts_with(a);
    let mut edges: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
    for (module, deps) in &graph {
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
            panic!(
                "modules import each other in a circle: {}",
                circle.join(" -> ")
            );
        }
    }
}

#[test]
fn the_checker_sees_imports() {
    // The reader itself: a use group, a path in code, and nothing in comments or strings.
    let code = code_only(
        "use crate::{json::size, model};\nlet x = crate::shape::cut::f(); // crate::detect\nlet s = \"crate::validate\";\n",
    );
    let deps = dependencies(&["formats".into(), "ctxo".into()], &code);
    let names: Vec<String> = deps.iter().map(|d| d.join("::")).collect();
    assert_eq!(names, ["json::size", "model", "shape::cut"]);
    // `super::` in `formats/ctxo.rs` is `formats`.
    let deps = dependencies(&["formats".into(), "ctxo".into()], "use super::mcp::f;");
    assert!(deps.contains(&vec!["formats".to_string(), "mcp".to_string()]));
}
