//! The official MCP conformance suite (`@modelcontextprotocol/conformance`, server mode, all
//! scenarios: active and pending) against `envelope serve --listen` serving a registry of
//! command operations that implement the suite's fixture tools
//! (tests/fixtures/serve/conformance.toml). The full results are in docs/serve.md.

#[path = "../../envelope-mcp/tests/common/tools.rs"]
mod tools;

use std::path::PathBuf;

use serde_json::Value;

/// The scenarios issue 15 names; every one must pass.
const REQUIRED: [&str; 9] = [
    "server-initialize",
    "ping",
    "tools-list",
    "tools-call-simple-text",
    "tools-call-error",
    "json-schema-2020-12",
    "resources-list",
    "server-sse-multiple-streams",
    "dns-rebinding-protection",
];

#[test]
fn the_conformance_suite_passes_against_envelope_serve() {
    tools::node22(); // fails with the install hint when Node 22 is missing
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let registry = root.join("tests/fixtures/serve/conformance.toml");
    let store = tempfile::tempdir().unwrap();
    let output = std::process::Command::new("bash")
        .arg(root.join("../../scripts/conformance.sh"))
        .args([
            "--suite",
            "all",
            "--",
            env!("CARGO_BIN_EXE_envelope"),
            "serve",
        ])
        .arg("--registry")
        .arg(&registry)
        .arg("--store")
        .arg(store.path())
        .args(["--listen", "127.0.0.1:{port}"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "conformance.sh failed: {stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let summary: Value = serde_json::from_str(stdout.trim()).expect("the script prints JSON");
    eprintln!("conformance against envelope serve: {summary}");
    let passed: Vec<&str> = summary["passed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect();
    let missing: Vec<&&str> = REQUIRED.iter().filter(|s| !passed.contains(s)).collect();
    assert!(missing.is_empty(), "not passed: {missing:?}\n{summary}");
}
