//! `envelope ops list` and `envelope call` with a Claude Desktop style JSON file
//! (`{"mcpServers": {...}}`) as the registry, as is: the tools of the real
//! `@modelcontextprotocol/server-everything` (stdio, Node 22) are operations end to end.

mod common;

#[path = "../../envelope-mcp/tests/common/tools.rs"]
mod tools;

use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

/// A folder holding `claude_desktop_config.json` with server-everything (and a setting
/// of the desktop app, which a registry ignores with a warning).
fn desktop_config() -> tempfile::TempDir {
    let node = tools::node22();
    let script = tools::npm("@modelcontextprotocol/server-everything/dist/index.js");
    let config = json!({
        "globalShortcut": "Ctrl+Space",
        "mcpServers": {"everything": {"command": node, "args": [script, "stdio"]}},
    });
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("claude_desktop_config.json"),
        serde_json::to_string_pretty(&config).unwrap(),
    )
    .unwrap();
    dir
}

fn envelope(dir: &tempfile::TempDir, args: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_envelope"));
    cmd.args(args)
        .args(["--registry", "claude_desktop_config.json"])
        .current_dir(dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    common::feed(cmd.spawn().unwrap(), b"")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn call_runs_a_tool_of_a_desktop_config_server() {
    let dir = desktop_config();
    let out = envelope(
        &dir,
        &["call", "everything.echo", "--input", r#"{"message":"hi"}"#],
    );
    assert_eq!(out.status.code(), Some(0), "stderr: {}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
    let env: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(env["data"], json!([{"type": "text", "text": "Echo: hi"}]));
    assert_eq!(env["meta"]["source"], "mcp");
    assert_eq!(env["meta"]["isError"], false);
    let check = common::run(
        &["validate", "--format", "operations", "-"],
        stdout.as_bytes(),
    );
    assert_eq!(check.status.code(), Some(0), "{}", text(&check.stdout));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("globalShortcut"), "{stderr}");
}

#[test]
fn call_with_bad_input_is_a_validation_error_and_list_shows_the_tools() {
    let dir = desktop_config();
    let out = envelope(
        &dir,
        &["call", "everything.echo", "--input", r#"{"message":5}"#],
    );
    assert_eq!(out.status.code(), Some(1), "stderr: {}", text(&out.stderr));
    let last = text(&out.stderr)
        .trim_end()
        .lines()
        .last()
        .unwrap_or("")
        .to_string();
    let e: Value = serde_json::from_str(&last).unwrap();
    assert_eq!(e["code"], "VALIDATION_ERROR");

    let out = envelope(&dir, &["ops", "list"]);
    assert_eq!(out.status.code(), Some(0), "stderr: {}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let echo = stdout
        .lines()
        .find(|l| l.starts_with("everything.echo\t"))
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(
        echo.starts_with("everything.echo\tquery\tEchoes back the input string"),
        "{echo}"
    );
}

#[test]
fn call_of_server_filesystem_read_text_file_prints_the_file_once() {
    // The real server answers the file as a text block and as structuredContent
    // {"content": text}: printed, the text is there once.
    let node = tools::node22();
    let script = tools::npm("@modelcontextprotocol/server-filesystem/dist/index.js");
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let line = "2026-11-27T18:00:00Z INFO request served in 12 ms\n";
    std::fs::write(data.join("app.log"), line.repeat(2000)).unwrap();
    let config = json!({"mcpServers": {"fs": {"command": node, "args": [script, &data]}}});
    std::fs::write(
        dir.path().join("claude_desktop_config.json"),
        config.to_string(),
    )
    .unwrap();
    let path = data.join("app.log").canonicalize().unwrap();
    let input = json!({"path": path}).to_string();
    let out = envelope(&dir, &["call", "fs.read_text_file", "--input", &input]);
    assert_eq!(out.status.code(), Some(0), "stderr: {}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert_eq!(stdout.matches("request served").count(), 2000);
    let env: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(env["data"]["content"], line.repeat(2000));
    assert_eq!(env["meta"]["content"], json!([]));
    // --full: as the server sent it, twice more.
    let out = envelope(
        &dir,
        &["call", "fs.read_text_file", "--full", "--input", &input],
    );
    assert_eq!(text(&out.stdout).matches("request served").count(), 6000);
    // A file that is not there: the tool's error, exit 1, its text on stderr.
    let missing = json!({"path": data.join("nope.log")}).to_string();
    let out = envelope(&dir, &["call", "fs.read_text_file", "--input", &missing]);
    assert_eq!(out.status.code(), Some(1), "stdout: {}", text(&out.stdout));
    let stderr = text(&out.stderr);
    let last = stderr.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("envelope: error[ops.tool-error]: fs.read_text_file: ")
            && last.contains("nope.log"),
        "{stderr}"
    );
    assert!(!stderr.contains("output schema"), "{stderr}");
    let env: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(env["meta"]["isError"], true);
}
