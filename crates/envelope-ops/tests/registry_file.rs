//! The registry file: TOML or JSON, commands registered, MCP and OpenAPI sections checked
//! (their adapters come later: a warning each), errors naming the key and the line.

mod common;
use common::{assert_valid_envelope, runtime};

use envelope_ops::file::{AuthKind, McpTransport, RegistryFile};
use envelope_ops::{Context, OperationType};
use serde_json::json;

const TOML: &str = r#"
title = "my tools"

[commands.text.upper]
command = ["tr", "a-z", "A-Z"]
type = "query"
description = "Upper-cases its input"
timeout = 5

[commands.text.echo]
command = ["cat"]
inputSchema = { type = "object", properties = { msg = { type = "string" } }, required = ["msg"] }
accessControl = { requiredScopes = ["text:write"] }

[mcpServers.git]
# A program that is nowhere: loading must not start a real `uvx` (it would fetch packages).
command = "/nonexistent/uvx"
args = ["mcp-server-git"]
env = { GIT_DIR = "/tmp/x" }

[mcpServers.remote]
url = "https://example.invalid/mcp"
headers = { Authorization = "Bearer t" }

[openapi.pets]
spec = "petstore.yaml"
baseUrl = "http://127.0.0.1:4010"
auth = { type = "apiKey", tokenEnv = "PETS_KEY", headerName = "X-Api-Key" }
timeout = 2.5
"#;

#[test]
fn a_toml_file_registers_its_commands_and_warns_about_the_rest() {
    let file = RegistryFile::from_toml(TOML).unwrap();
    assert_eq!(file.unknown_keys, ["title"]);
    assert!(
        matches!(&file.mcp_servers["git"].transport, McpTransport::Stdio { command, args, env, .. }
        if command == "/nonexistent/uvx" && args == &["mcp-server-git"] && env["GIT_DIR"] == "/tmp/x")
    );
    assert!(
        matches!(&file.mcp_servers["remote"].transport, McpTransport::Http { headers, .. } if headers["Authorization"] == "Bearer t")
    );
    assert_eq!(
        file.openapi["pets"].auth.as_ref().unwrap().kind,
        AuthKind::ApiKey
    );
    assert_eq!(file.openapi["pets"].timeout.unwrap().as_secs_f64(), 2.5);

    let loaded = runtime().block_on(file.load());
    let ids: Vec<String> = loaded.registry.specs().map(|s| s.id()).collect();
    assert_eq!(ids, ["text.echo", "text.upper"]);
    let upper = loaded.registry.spec("text.upper").unwrap();
    assert_eq!(
        (upper.kind, upper.description.as_str()),
        (OperationType::Query, "Upper-cases its input")
    );
    let warnings = loaded.warnings.join("\n");
    assert!(warnings.contains("\"title\""), "{warnings}");
    assert!(
        warnings.contains("mcpServers.git: not registered"),
        "{warnings}"
    );
    assert!(
        warnings.contains("mcpServers.remote: not registered"),
        "{warnings}"
    );
    assert!(
        warnings.contains("openapi.pets: not registered"),
        "{warnings}"
    );

    let rt = runtime();
    let done = rt
        .block_on(
            loaded
                .registry
                .execute("text.upper", json!("abc"), &Context::default()),
        )
        .unwrap();
    assert_eq!(
        done.envelope["data"],
        json!("ABC"),
        "stdin \"abc\" upper-cased is JSON again"
    );
    assert_valid_envelope(&done.envelope);
    let e = rt
        .block_on(
            loaded
                .registry
                .execute("text.echo", json!({"msg": "hi"}), &Context::default()),
        )
        .unwrap_err();
    assert_eq!(e.code, "ACCESS_DENIED");
}

#[test]
fn a_claude_desktop_file_is_a_valid_registry_as_is() {
    let text = r#"{
  "globalShortcut": "Ctrl+Space",
  "mcpServers": {
    "filesystem": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-filesystem", "/Users/me/Desktop"]
    },
    "everything": {"type": "stdio", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything"], "env": {"A": "1"}}
  }
}"#;
    let file = RegistryFile::from_json(text).unwrap();
    assert_eq!(file.unknown_keys, ["globalShortcut"]);
    assert_eq!(file.mcp_servers.len(), 2);
    // Not loaded here: loading starts the servers (`npx -y` would fetch packages). A desktop
    // file with real servers is loaded in mcp_everything.rs and envelope-cli's ops_mcp_cli.rs.
}

#[test]
fn a_json_file_has_the_same_structure() {
    let text = r#"{"commands": {"sys": {"id": {"command": ["printf", "%s", "{\"ok\":true}"], "type": "query"}}}}"#;
    let file = RegistryFile::from_json(text).unwrap();
    let loaded = runtime().block_on(file.load());
    let done = runtime()
        .block_on(
            loaded
                .registry
                .execute("sys.id", json!({}), &Context::default()),
        )
        .unwrap();
    assert_eq!(done.envelope["data"], json!({"ok": true}));
}

/// The warning of `text`'s one source, which must be malformed: the file is read, the
/// source left out. Returned from its line on (`line N: cause`), after checking it names
/// the source.
fn toml_error(text: &str) -> String {
    one_source_error(RegistryFile::from_toml(text).unwrap(), text)
}

fn one_source_error(file: RegistryFile, text: &str) -> String {
    assert!(
        file.commands.is_empty() && file.mcp_servers.is_empty() && file.openapi.is_empty(),
        "{text}"
    );
    assert_eq!(
        file.invalid_sources.len(),
        1,
        "{text}: {:?}",
        file.invalid_sources
    );
    let warning = &file.invalid_sources[0];
    let (source, rest) = warning
        .split_once(": not registered: ")
        .unwrap_or_else(|| panic!("{warning}"));
    assert!(
        [
            "commands.a.b",
            "commands.a.b.c",
            "mcpServers.x",
            "openapi.x"
        ]
        .contains(&source),
        "{warning}"
    );
    rest.to_string()
}

/// The error refusing `text` (TOML) whole: an unknown key in one of its sources.
fn refused(text: &str) -> String {
    match RegistryFile::from_toml(text) {
        Ok(file) => panic!("{text}: read, with {:?} left out", file.invalid_sources),
        Err(e) => e.to_string(),
    }
}

#[test]
fn an_unknown_key_inside_a_source_is_an_error_naming_the_source_key_and_line() {
    let e = refused("[commands.a.b]\ncommand = [\"true\"]\n\nshell = true\n");
    assert!(e.starts_with("line 4"), "{e}");
    assert!(e.contains("shell"), "{e}");
    assert!(
        e.starts_with("line 4: commands.a.b: unknown field `shell`"),
        "{e}"
    );
    let e = refused("[mcpServers.x]\ncommand = \"srv\"\nautoApprove = []\n");
    assert!(e.starts_with("line 3") && e.contains("autoApprove"), "{e}");
    let e = refused("[openapi.x]\nspec = \"a.yaml\"\nbase_url = \"http://h\"\n");
    assert!(e.starts_with("line 3") && e.contains("base_url"), "{e}");
    let text = "{\"mcpServers\": {\"x\": {\n  \"command\": \"srv\",\n  \"disabled\": true}}}";
    let e = RegistryFile::from_json(text).unwrap_err().to_string();
    assert!(e.starts_with("line 3") && e.contains("disabled"), "{e}");
    assert!(e.contains("mcpServers.x: unknown field `disabled`"), "{e}");
}

/// Issue 29: a typo such as `timeoutSecs` for `timeout` used to leave the source out with a
/// warning, the other sources served: operations silently gone. It refuses the file now,
/// whatever else the file holds.
#[test]
fn an_unknown_key_refuses_the_file_even_beside_good_and_malformed_sources() {
    let text = "\
[commands.text.upper]
command = [\"tr\", \"a-z\", \"A-Z\"]

[openapi.pets]
spec = \"p.yaml\"
timeoutSecs = 10
";
    let e = refused(text);
    assert!(
        e.starts_with("line 6: openapi.pets: unknown field `timeoutSecs`, expected one of"),
        "{e}"
    );
    // After a source that is only malformed (which alone is left out): the strict parser
    // stops at the malformed one, the unknown key is still found, with its own line.
    let text = "\
[commands.text.bad]
command = \"tr a-z A-Z\"

[mcpServers.git]
command = \"git-mcp\"
retries = 3
";
    let e = refused(text);
    assert!(
        e.starts_with("line 6: mcpServers.git: unknown field `retries`"),
        "{e}"
    );
    // Inside a source's table (`auth`) too.
    let text = "[openapi.x]\nspec = \"a.yaml\"\n[openapi.x.auth]\ntype = \"bearer\"\ntokenEnv = \"T\"\nscheme = \"b\"\n";
    let e = refused(text);
    assert!(e.contains("openapi.x: unknown field `scheme`"), "{e}");
    assert!(e.starts_with("line 6"), "{e}");
    // Through `read`: the file's name first.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("envelope.toml");
    std::fs::write(&path, "[commands.a.b]\ncommand = [\"true\"]\nretries = 2\n").unwrap();
    let e = RegistryFile::read(&path).unwrap_err();
    assert_eq!(e.code(), "registry.invalid");
    assert!(
        e.to_string()
            .contains("envelope.toml: line 3: commands.a.b: unknown field `retries`"),
        "{e}"
    );
}

#[test]
fn malformed_sources_are_left_out_with_their_line_and_cause() {
    let cases = [
        ("[commands.a.b]\ncommand = []\n", "non-empty argv"),
        ("[commands.a.b]\ncommand = \"ls -l\"\n", "sequence"),
        (
            "[commands.a.b]\ncommand = [\"true\"]\ntimeout = -1\n",
            "positive number of seconds",
        ),
        (
            "[commands.a.b]\ncommand = [\"true\"]\ntype = \"read\"\n",
            "read",
        ),
        (
            "[commands.a.b]\ncommand = [\"true\"]\ninputSchema = { type = \"nope\" }\n",
            "inputSchema",
        ),
        (
            "[commands.\"a.b\".c]\ncommand = [\"true\"]\n",
            "contain no '.'",
        ),
        ("[mcpServers.x]\nargs = [\"a\"]\n", "needs `command`"),
        (
            "[mcpServers.x]\ncommand = \"a\"\nurl = \"http://h\"\n",
            "not both",
        ),
        (
            "[mcpServers.x]\nurl = \"http://h\"\nargs = [\"a\"]\n",
            "apply to `command`",
        ),
        ("[mcpServers.x]\nurl = \"ftp://h\"\n", "not an http"),
        ("[openapi.x]\nbaseUrl = \"http://h\"\n", "spec"),
        (
            "[openapi.x]\nspec = \"a.yaml\"\nauth = { type = \"oauth\", tokenEnv = \"T\" }\n",
            "oauth",
        ),
    ];
    for (text, cause) in cases {
        let e = toml_error(text);
        assert!(e.starts_with("line "), "{text}: {e}");
        assert!(e.contains(cause), "{text}: {e} (expected {cause:?})");
    }
}

#[test]
fn a_file_is_read_by_its_extension_and_io_errors_name_it() {
    let dir = tempfile::tempdir().unwrap();
    let json_file = dir.path().join("reg.json");
    std::fs::write(
        &json_file,
        r#"{"commands": {"a": {"b": {"command": ["true"]}}}}"#,
    )
    .unwrap();
    assert_eq!(
        RegistryFile::read(&json_file).unwrap().commands["a"].len(),
        1
    );
    let toml_file = dir.path().join("envelope.toml");
    std::fs::write(&toml_file, "[commands.a.b]\ncommand = [\"true\"]\n").unwrap();
    assert_eq!(
        RegistryFile::read(&toml_file).unwrap().commands["a"].len(),
        1
    );
    let e = RegistryFile::read(&dir.path().join("missing.toml")).unwrap_err();
    assert_eq!(e.code(), "registry.io");
    assert!(e.to_string().contains("missing.toml"), "{e}");
    std::fs::write(&toml_file, "[commands.a.b\n").unwrap();
    let e = RegistryFile::read(&toml_file).unwrap_err();
    assert_eq!(e.code(), "registry.invalid");
    assert!(e.to_string().contains("envelope.toml: line 1"), "{e}");
}

#[test]
fn a_malformed_source_does_not_keep_the_others_out() {
    let text = "\
[commands.text.upper]
command = [\"tr\", \"a-z\", \"A-Z\"]

[commands.text.bad]
command = \"tr a-z A-Z\"

[mcpServers.git]
command = 5

[mcpServers.ok]
url = \"http://127.0.0.1:1/mcp\"

[openapi.pets]
spec = \"p.yaml\"
timeout = 0
";
    let file = RegistryFile::from_toml(text).unwrap();
    assert_eq!(
        file.invalid_sources,
        [
            "commands.text.bad: not registered: line 5: invalid type: string \"tr a-z A-Z\", expected a sequence",
            "mcpServers.git: not registered: line 7: invalid type: integer `5`, expected a string",
            "openapi.pets: not registered: line 13: `timeout` must be a positive number of seconds, not 0",
        ]
    );
    assert_eq!(file.commands["text"].len(), 1);
    assert!(file.mcp_servers.contains_key("ok"));
    let loaded = runtime().block_on(file.load());
    assert!(loaded.registry.spec("text.upper").is_some());
    let warnings = loaded.warnings.join("\n");
    assert!(
        warnings.contains("commands.text.bad: not registered: line 5"),
        "{warnings}"
    );
    assert!(
        warnings.contains("mcpServers.ok: not registered"),
        "{warnings}"
    );

    // JSON: the same, a Claude Desktop file with one broken server.
    let text = "{\"mcpServers\": {\n  \"good\": {\"url\": \"http://127.0.0.1:1/mcp\"},\n  \"broken\": {\"command\": [\"a\"]}\n}}";
    let file = RegistryFile::from_json(text).unwrap();
    assert_eq!(
        file.invalid_sources,
        ["mcpServers.broken: not registered: line 3: invalid type: sequence, expected a string"]
    );
    assert!(file.mcp_servers.contains_key("good"));
}

#[test]
fn a_file_that_is_not_a_registry_is_still_refused_whole() {
    assert!(
        RegistryFile::from_toml("[commands\n")
            .unwrap_err()
            .message()
            .starts_with("line 1")
    );
    assert!(
        RegistryFile::from_toml("commands = 5\n")
            .unwrap_err()
            .message()
            .starts_with("line 1")
    );
    assert!(
        RegistryFile::from_json("[1]")
            .unwrap_err()
            .message()
            .starts_with("line 1")
    );
}
