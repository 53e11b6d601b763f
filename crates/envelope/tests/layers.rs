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

mod modules;

use std::path::Path;

use modules::{code_only, dependencies};

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

fn graph() -> std::collections::BTreeMap<Vec<String>, std::collections::BTreeSet<Vec<String>>> {
    modules::graph(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"))
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
    if let Some(circle) = modules::circle(&graph()) {
        panic!("modules import each other in a circle: {circle}");
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
