//! No two modules of the operations engine import each other in a circle (read from the source, as the
//! core's `layers` test reads its own).

#[path = "../../envelope/tests/modules/mod.rs"]
mod modules;

use std::path::Path;

#[test]
fn no_module_cycles() {
    let graph = modules::graph(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    assert!(graph.len() > 10, "the sources were read: {}", graph.len());
    if let Some(circle) = modules::circle(&graph) {
        panic!("modules import each other in a circle: {circle}");
    }
}
