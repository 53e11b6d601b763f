//! `envelope ops list` and `envelope call` over a registry file of real commands: the
//! envelope on stdout (valid for `envelope validate`), a failed call as one JSON line on
//! stderr with exit 1, usage and registry errors with exit 2.

mod common;

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const REGISTRY: &str = r#"
[commands.text.upper]
command = ["tr", "a-z", "A-Z"]
type = "query"
description = "Upper-cases its input"
inputSchema = { type = "string" }

[commands.text.echo]
command = ["cat"]
inputSchema = { type = "object", properties = { msg = { type = "string" }, n = { type = "integer" } }, required = ["msg"] }
outputSchema = { type = "object", properties = { msg = { type = "string" } }, required = ["msg"] }

[commands.text.words]
command = ["printf", "%s", "no JSON; $HOME"]
accessControl = { requiredScopes = ["text:read"] }

[commands.sys.fail]
command = ["sh", "-c", "echo 'it broke' >&2; exit 4"]

[commands.sys.hang]
command = ["sleep", "30"]

[mcpServers.git]
# Nowhere: `ops list` must not start a real `uvx` (it would fetch packages).
command = "/nonexistent/uvx"
args = ["mcp-server-git"]
"#;

/// A folder holding `envelope.toml` with `text`.
fn registry(text: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("envelope.toml"), text).unwrap();
    dir
}

/// Runs `envelope ARGS` in `dir` with `stdin`.
fn envelope_in(dir: &Path, args: &[&str], stdin: &[u8]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_envelope"));
    cmd.args(args)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    common::feed(cmd.spawn().unwrap(), stdin)
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).unwrap()
}

/// The one envelope line on stdout, after checking that `envelope validate` accepts it.
fn envelope_of(out: &Output) -> Value {
    assert_eq!(out.status.code(), Some(0), "stderr: {}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.ends_with('\n') && stdout.trim_end().lines().count() == 1,
        "{stdout:?}"
    );
    let check = common::run(
        &["validate", "--format", "operations", "-"],
        stdout.as_bytes(),
    );
    assert_eq!(
        check.status.code(),
        Some(0),
        "envelope validate refused {stdout}: {}",
        text(&check.stdout)
    );
    serde_json::from_str(&stdout).unwrap()
}

/// The CallError line on stderr of a call that exited 1.
fn call_error(out: &Output) -> Value {
    assert_eq!(
        out.status.code(),
        Some(1),
        "stdout {} stderr {}",
        text(&out.stdout),
        text(&out.stderr)
    );
    assert!(out.stdout.is_empty());
    let stderr = text(&out.stderr);
    let last = stderr.trim_end().lines().last().unwrap_or("");
    let e: Value =
        serde_json::from_str(last).unwrap_or_else(|_| panic!("not a JSON line: {stderr:?}"));
    let keys: Vec<&String> = e.as_object().unwrap().keys().collect();
    assert!(
        keys.iter()
            .all(|k| ["code", "message", "details"].contains(&k.as_str())),
        "{e}"
    );
    e
}

#[test]
fn ops_list_prints_one_line_per_operation_and_warns_about_unbuilt_sources() {
    let dir = registry(REGISTRY);
    let out = envelope_in(dir.path(), &["ops", "list"], b"");
    assert_eq!(out.status.code(), Some(0));
    let stdout = text(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 5, "{stdout}");
    assert!(
        lines.contains(
            &"text.upper\tquery\tUpper-cases its input\tinput={\"type\":\"string\"}\toutput={}"
        ),
        "{stdout}"
    );
    assert!(
        text(&out.stderr).contains("mcpServers.git: not registered"),
        "{}",
        text(&out.stderr)
    );

    let out = envelope_in(dir.path(), &["ops", "list", "--json"], b"");
    let specs: Vec<Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(specs.len(), 5);
    let words = specs.iter().find(|s| s["name"] == "words").unwrap();
    assert_eq!(words["namespace"], "text");
    assert_eq!(words["type"], "mutation");
    assert_eq!(words["version"], "1.0.0");
    assert_eq!(
        words["accessControl"]["requiredScopes"],
        json!(["text:read"])
    );
}

#[test]
fn call_prints_the_envelope_of_a_command() {
    let dir = registry(REGISTRY);
    let env = envelope_of(&envelope_in(
        dir.path(),
        &["call", "text.upper", "--input", "\"abc\""],
        b"",
    ));
    assert_eq!(env["data"], "ABC");
    assert_eq!(env["meta"]["operationId"], "text.upper");
    // Input from a file and from stdin.
    std::fs::write(dir.path().join("in.json"), r#"{"msg": "hi", "n": 2}"#).unwrap();
    let env = envelope_of(&envelope_in(
        dir.path(),
        &["call", "text.echo", "--input", "@in.json"],
        b"",
    ));
    assert_eq!(env["data"], json!({"msg": "hi", "n": 2}));
    let env = envelope_of(&envelope_in(
        dir.path(),
        &["call", "text.echo", "--input", "@-"],
        br#"{"msg": "stdin"}"#,
    ));
    assert_eq!(env["data"], json!({"msg": "stdin"}));
}

#[test]
fn call_checks_access_with_the_scopes_given() {
    let dir = registry(REGISTRY);
    let e = call_error(&envelope_in(dir.path(), &["call", "text.words"], b""));
    assert_eq!(e["code"], "ACCESS_DENIED");
    let e = call_error(&envelope_in(
        dir.path(),
        &["call", "text.words", "--scope", "other"],
        b"",
    ));
    assert_eq!(e["code"], "ACCESS_DENIED");
    let out = envelope_in(
        dir.path(),
        &[
            "call",
            "text.words",
            "--scope",
            "other",
            "--scope",
            "text:read",
        ],
        b"",
    );
    assert_eq!(
        envelope_of(&out)["data"],
        "no JSON; $HOME",
        "text kept as text, no shell"
    );
}

#[test]
fn failed_calls_are_one_json_line_on_stderr_with_exit_1() {
    let dir = registry(REGISTRY);
    let e = call_error(&envelope_in(dir.path(), &["call", "text.nope"], b""));
    assert_eq!(e["code"], "OPERATION_NOT_FOUND");
    let e = call_error(&envelope_in(
        dir.path(),
        &["call", "text.echo", "--input", r#"{"n": "x"}"#],
        b"",
    ));
    assert_eq!(e["code"], "VALIDATION_ERROR");
    let pointers: Vec<&str> = e["details"]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["pointer"].as_str().unwrap())
        .collect();
    assert!(pointers.contains(&"") && pointers.contains(&"/n"), "{e}");
    let e = call_error(&envelope_in(dir.path(), &["call", "sys.fail"], b""));
    assert_eq!(e["code"], "EXECUTION_ERROR");
    assert_eq!(e["details"]["exitStatus"], 4);
    assert_eq!(e["details"]["stderr"], "it broke\n");
}

#[test]
fn call_timeout_stops_a_hanging_command() {
    let dir = registry(REGISTRY);
    let started = Instant::now();
    let e = call_error(&envelope_in(
        dir.path(),
        &["call", "sys.hang", "--timeout", "0.5"],
        b"",
    ));
    assert_eq!(e["code"], "TIMEOUT");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn output_off_its_schema_is_cast_with_a_warning() {
    let dir = registry(REGISTRY);
    // text.echo's output must have a string msg; the input schema lets an extra n through.
    let out = envelope_in(
        dir.path(),
        &["call", "text.echo", "--input", r#"{"msg": "m"}"#],
        b"",
    );
    assert!(
        !text(&out.stderr).contains("warning: text.echo"),
        "{}",
        text(&out.stderr)
    );
    let dir = registry(&REGISTRY.replace(
        "outputSchema = { type = \"object\", properties = { msg = { type = \"string\" } }, required = [\"msg\"] }",
        "outputSchema = { type = \"object\", properties = { msg = { type = \"integer\" } }, required = [\"msg\"] }",
    ));
    let out = envelope_in(
        dir.path(),
        &["call", "text.echo", "--input", r#"{"msg": "m"}"#],
        b"",
    );
    let env = envelope_of(&out);
    assert_eq!(env["data"], json!({"msg": 0}));
    assert!(
        text(&out.stderr).contains("envelope: warning: text.echo: data/msg does not match"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn usage_and_registry_errors_exit_2_with_their_id() {
    let dir = registry(REGISTRY);
    let cases: [(&[&str], &str); 6] = [
        (
            &["call", "text.echo", "--input", "{nope"],
            "error[usage.bad-value]",
        ),
        (
            &["call", "text.echo", "--input", "@missing.json"],
            "error[input.unreadable]",
        ),
        (
            &["call", "text.echo", "--timeout=-1"],
            "error[usage.bad-value]",
        ),
        (
            &["call", "text.echo", "--timeout", "0"],
            "error[usage.bad-value]",
        ),
        (
            &["call", "text.echo", "--registry", "absent.toml"],
            "error[ops.registry]",
        ),
        (
            &["ops", "list", "--registry", "absent.toml"],
            "error[ops.registry]",
        ),
    ];
    for (args, id) in cases {
        let out = envelope_in(dir.path(), args, b"");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(
            text(&out.stderr).starts_with(&format!("envelope: {id}: ")),
            "{args:?}: {}",
            text(&out.stderr)
        );
    }
    // A malformed source is left out with a warning naming it, the file and the line.
    let bad = registry("[commands.a.b]\ncommand = [\"true\"]\ntimeout = 0\n");
    let out = envelope_in(bad.path(), &["ops", "list"], b"");
    assert_eq!(out.status.code(), Some(0));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("commands.a.b: not registered: envelope.toml: line 1")
            && stderr.contains("`timeout` must be a positive number"),
        "{stderr}"
    );
    // An unknown key in a source (a typo) refuses the file: exit 2, the key and its line.
    let bad = registry("[commands.a.b]\ncommand = [\"true\"]\nshel = true\n");
    for args in [&["ops", "list"][..], &["call", "a.b"]] {
        let out = envelope_in(bad.path(), args, b"");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = text(&out.stderr);
        assert!(
            stderr.starts_with("envelope: error[ops.registry]: ")
                && stderr.contains("envelope.toml: line 3: commands.a.b: unknown field `shel`"),
            "{stderr}"
        );
    }
    // A file that is not a registry at all is still refused.
    let bad = registry("[commands.a.b\n");
    let out = envelope_in(bad.path(), &["ops", "list"], b"");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("envelope.toml: line 1"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn a_json_registry_is_read_by_its_extension() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("claude_desktop_config.json"),
        // The server's program is nowhere: loading starts MCP servers, and `npx x` would fetch one.
        r#"{"mcpServers": {"fs": {"command": "/nonexistent/npx", "args": ["x"]}}, "commands": {"a": {"b": {"command": ["printf", "[1]"]}}}}"#,
    )
    .unwrap();
    let out = envelope_in(
        dir.path(),
        &["call", "a.b", "--registry", "claude_desktop_config.json"],
        b"",
    );
    assert_eq!(envelope_of(&out)["data"], json!([1]));
}

/// A folder whose `envelope.toml` names the stdio fixture server tests/fixtures/mcp/call_server.py.
fn call_server_registry() -> tempfile::TempDir {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mcp/call_server.py");
    registry(&format!(
        "[mcpServers.fs]\ncommand = \"python3\"\nargs = [{:?}]\n",
        script.display().to_string()
    ))
}

#[test]
fn call_of_an_mcp_tool_prints_its_result_once() {
    let dir = call_server_registry();
    let out = envelope_in(dir.path(), &["call", "fs.read"], b"");
    assert_eq!(out.status.code(), Some(0), "stderr: {}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let env: Value = serde_json::from_str(&stdout).unwrap();
    let file = "line one\nline two\n".repeat(50);
    assert_eq!(env["data"], json!({"content": file}));
    // The file's text is printed once: data holds it; structuredContent (= data) and the
    // text block (= data.content) are left out.
    assert_eq!(stdout.matches("line two").count(), 50, "{stdout}");
    assert_eq!(env["meta"].get("structuredContent"), None, "{stdout}");
    assert_eq!(env["meta"]["content"], json!([]));
    let check = common::run(
        &["validate", "--format", "operations", "-"],
        stdout.as_bytes(),
    );
    assert_eq!(check.status.code(), Some(0), "{}", text(&check.stdout));

    // A JSON mirror goes too; a block that says something else stays.
    let out = envelope_in(dir.path(), &["call", "fs.stats"], b"");
    let env: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(env["data"], json!({"files": 3, "bytes": 1200}));
    assert_eq!(env["meta"]["content"], json!([]));
    let out = envelope_in(dir.path(), &["call", "fs.summed"], b"");
    let env: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        env["meta"]["content"],
        json!([{"type": "text", "text": "3 files"}])
    );

    // --full: the envelope as the tool's result gave it.
    let out = envelope_in(dir.path(), &["call", "fs.read", "--full"], b"");
    assert_eq!(out.status.code(), Some(0), "stderr: {}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert_eq!(stdout.matches("line two").count(), 150);
    let env: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(env["meta"]["structuredContent"], env["data"]);
    assert_eq!(env["meta"]["content"][0]["text"], file);
}

#[test]
fn call_of_an_mcp_tool_error_exits_1_with_its_text_on_stderr() {
    let dir = call_server_registry();
    let out = envelope_in(dir.path(), &["call", "fs.fail"], b"");
    assert_eq!(out.status.code(), Some(1), "stderr: {}", text(&out.stderr));
    let stderr = text(&out.stderr);
    assert_eq!(
        stderr,
        "envelope: error[ops.tool-error]: fs.fail: the tool answered with an error: \
         ENOENT: no such file or directory, open '/nope'\n",
        "one line, no warning about the output schema"
    );
    let env: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(env["meta"]["isError"], true);
    assert_eq!(
        env["data"][0]["text"],
        "ENOENT: no such file or directory, open '/nope'"
    );
}

#[test]
fn a_validation_error_counts_its_findings_in_words_that_agree() {
    let dir = registry(REGISTRY);
    for (input, count) in [
        (r#"{}"#, "(1 finding)"),
        (r#"{"msg": 5, "n": "x"}"#, "(2 findings)"),
    ] {
        let out = envelope_in(dir.path(), &["call", "text.echo", "--input", input], b"");
        assert_eq!(out.status.code(), Some(1));
        // The registry's warnings come first; the error is the last line.
        let stderr = text(&out.stderr);
        let error: Value = serde_json::from_str(stderr.lines().last().unwrap()).unwrap();
        assert_eq!(error["code"], "VALIDATION_ERROR");
        let message = error["message"].as_str().unwrap();
        assert!(message.ends_with(count), "{input}: {message}");
    }
}
