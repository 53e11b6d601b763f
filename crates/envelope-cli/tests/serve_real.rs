//! `envelope serve` with real clients (installed by scripts/install-mcp-tools.sh): the Python
//! MCP SDK client over stdio and over Streamable HTTP with tokens, the Inspector CLI, and
//! for the HTTP view a real OpenAPI validator and a generic OpenAPI client (schemathesis).
//! The registry holds command operations and an MCP server (server-everything).

mod serve_common;

use serve_common::{free_port, sdk_client, spawn, step_ok, tools, wait_until_listening};

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

/// A secret one operation prints: it must never reach a client.
const SECRET: &str = "ghp_0123456789abcdefghijklmnopqrstuvwxyz";

const ALICE: &str = "alice-token-0123456789";
const BOB: &str = "bob-token-0123456789ab";

/// A registry of command operations plus server-everything, written into `dir`.
fn registry(dir: &Path, with_everything: bool) -> PathBuf {
    let rows = format!(
        "import json; print(json.dumps({{'rows': [{{'id': i, 'name': 'row %d' % i, 'token': '{SECRET}'}} for i in range(2000)]}}))"
    );
    let mut text = format!(
        r#"
[commands.text.upper]
command = ["tr", "a-z", "A-Z"]
type = "query"
description = "Upper-cases its input"
inputSchema = {{ type = "string" }}
outputSchema = {{ type = "string" }}

[commands.data.rows]
command = ["python3", "-c", "{rows}"]
type = "query"
description = "Many rows"
outputSchema = {{ type = "object", properties = {{ rows = {{ type = "array" }} }}, required = ["rows"] }}

[commands.clock.ticks]
command = ["sh", "-c", "for i in 1 2 3; do echo \"{{\\\"tick\\\": $i}}\"; done"]
type = "subscription"

[commands.admin.wipe]
command = ["echo", "{{\"wiped\": true}}"]
accessControl = {{ requiredScopes = ["admin"] }}
"#
    );
    if with_everything {
        text.push_str(&format!(
            "\n[mcpServers.everything]\ncommand = {:?}\nargs = [{:?}, \"stdio\"]\n",
            tools::node22().display().to_string(),
            tools::npm("@modelcontextprotocol/server-everything/dist/index.js")
                .display()
                .to_string()
        ));
    }
    let path = dir.join("envelope.toml");
    std::fs::write(&path, text).unwrap();
    path
}

fn tokens(dir: &Path) -> PathBuf {
    let path = dir.join("tokens.json");
    let text = json!({
        ALICE: {"id": "alice", "scopes": ["admin"]},
        BOB: {"id": "bob", "scopes": []},
    });
    std::fs::write(&path, text.to_string()).unwrap();
    path
}

fn tool_names(listed: &Value) -> Vec<String> {
    listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

/// `envelope serve --registry R --store S EXTRA…`.
fn serve_command(registry: &Path, store: &Path, extra: &[&str]) -> Vec<String> {
    let mut command = vec![
        env!("CARGO_BIN_EXE_envelope").to_owned(),
        "serve".into(),
        "--registry".into(),
        registry.display().to_string(),
        "--store".into(),
        store.display().to_string(),
    ];
    command.extend(extra.iter().map(|s| s.to_string()));
    command
}

#[test]
fn sdk_client_over_stdio_calls_commands_and_an_mcp_server_and_reads_results_back() {
    let dir = tempfile::tempdir().unwrap();
    let registry = registry(dir.path(), true);
    let command = serve_command(&registry, &dir.path().join("store"), &[]);
    let plan = json!([
        {"op": "list_tools"},
        {"op": "call", "name": "text_upper", "args": {"input": "quiet"}},
        {"op": "call", "name": "data_rows", "args": {}},
        {"op": "read", "uri_from": 2},
        {"op": "call", "name": "envelope_read", "uri_from": 2, "args": {"pointer": "/structuredContent/rows", "offset": 1998}},
        {"op": "call", "name": "clock_ticks", "args": {}, "progress": true},
        {"op": "call", "name": "everything_echo", "args": {"message": "through serve"}},
        {"op": "call", "name": "admin_wipe", "args": {}},
    ]);
    let report = sdk_client(&plan, &command, None);
    assert_eq!(report["initialize"]["serverInfo"]["name"], "envelope-serve");
    let names = tool_names(step_ok(&report, 0));
    for expected in [
        "text_upper",
        "data_rows",
        "clock_ticks",
        "everything_echo",
        "envelope_read",
    ] {
        assert!(
            names.contains(&expected.to_owned()),
            "{expected} in {names:?}"
        );
    }
    assert!(
        !names.contains(&"admin_wipe".to_owned()),
        "no identity: no admin"
    );

    let upper = step_ok(&report, 1);
    assert_eq!(upper["structuredContent"], json!({"result": "QUIET"}));

    // Cut to the default 16 KiB, the SDK having checked it against the outputSchema.
    let rows = step_ok(&report, 2);
    let text = rows.to_string();
    assert!(text.len() < 17_000, "{} bytes", text.len());
    assert!(!text.contains(SECRET));
    let stored: Value =
        serde_json::from_str(step_ok(&report, 3)["contents"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(
        stored["structuredContent"]["rows"]
            .as_array()
            .unwrap()
            .len(),
        2000
    );
    assert!(
        !stored.to_string().contains(SECRET),
        "the store holds the secret"
    );
    let window = &step_ok(&report, 4)["structuredContent"];
    assert_eq!(window["items"][0]["id"], 1998);
    assert_eq!(window["total"], 2000);

    let ticks = step_ok(&report, 5);
    assert_eq!(ticks["structuredContent"], json!({"tick": 3}));
    assert_eq!(ticks["_progress"], json!([1.0, 2.0, 3.0]));
    let first: Value =
        serde_json::from_str(ticks["_progress_messages"][0].as_str().unwrap()).unwrap();
    assert_eq!(first["data"], json!({"tick": 1}));

    // An MCP source's tool: its own result, as its server gave it.
    let echoed = step_ok(&report, 6);
    assert_eq!(echoed["content"][0]["text"], "Echo: through serve");

    let wiped = step_ok(&report, 7);
    assert_eq!(wiped["isError"], true, "{wiped}");
    assert!(
        wiped["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("ACCESS_DENIED")
    );
}

#[test]
fn an_mcp_sources_resources_and_prompts_are_relayed_under_its_namespace() {
    let dir = tempfile::tempdir().unwrap();
    let registry = registry(dir.path(), true);
    let command = serve_command(&registry, &dir.path().join("store"), &[]);
    let resource = "envelope+mcp://everything/demo://resource/static/document/architecture.md";
    let plan = json!([
        {"op": "list_resources"},
        {"op": "read", "uri": resource},
        {"op": "list_resource_templates"},
        {"op": "list_prompts"},
        {"op": "get_prompt", "name": "everything_args-prompt", "args": {"city": "Lyon"}},
        {"op": "read", "uri": "envelope+mcp://nowhere/x://y"},
    ]);
    let report = sdk_client(&plan, &command, None);
    let uris: Vec<&str> = step_ok(&report, 0)["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["uri"].as_str().unwrap())
        .collect();
    assert!(uris.contains(&resource), "{uris:?}");
    assert!(
        uris.iter()
            .all(|u| u.starts_with("envelope+mcp://everything/"))
    );
    let read = step_ok(&report, 1);
    assert_eq!(read["contents"][0]["uri"], resource);
    assert!(!read["contents"][0]["text"].as_str().unwrap().is_empty());
    let templates = step_ok(&report, 2)["resourceTemplates"].to_string();
    assert!(
        templates.contains("envelope://artifact/sha256/{digest}"),
        "{templates}"
    );
    assert!(
        templates.contains("envelope+mcp://everything/demo://resource/dynamic/text/{resourceId}"),
        "{templates}"
    );
    let prompts = step_ok(&report, 3)["prompts"].to_string();
    assert!(prompts.contains("everything_simple-prompt"), "{prompts}");
    let prompt = step_ok(&report, 4).to_string();
    assert!(prompt.contains("Lyon"), "{prompt}");
    let missing = &report["steps"][5]["error"];
    assert!(missing.as_str().unwrap().contains("not found"), "{missing}");
}

#[test]
fn sdk_client_over_http_calls_as_its_tokens_identity() {
    let dir = tempfile::tempdir().unwrap();
    let registry = registry(dir.path(), false);
    let port = free_port();
    let listen = format!("127.0.0.1:{port}");
    let tokens = tokens(dir.path()).display().to_string();
    let command = serve_command(
        &registry,
        &dir.path().join("store"),
        &["--listen", &listen, "--tokens", &tokens],
    );
    let _serve = spawn(&command);
    wait_until_listening(port);
    let url = format!("http://{listen}/mcp");

    let plan = json!([
        {"op": "list_tools"},
        {"op": "call", "name": "admin_wipe", "args": {}},
        {"op": "call", "name": "data_rows", "args": {}},
        {"op": "read", "uri_from": 2},
    ]);
    let alice = sdk_client(&plan, std::slice::from_ref(&url), Some(ALICE));
    assert!(tool_names(step_ok(&alice, 0)).contains(&"admin_wipe".to_owned()));
    assert_eq!(
        step_ok(&alice, 1)["structuredContent"],
        json!({"wiped": true})
    );
    assert!(step_ok(&alice, 2).to_string().len() < 17_000);
    let stored = step_ok(&alice, 3)["contents"][0]["text"].as_str().unwrap();
    assert!(stored.contains("row 1999") && !stored.contains(SECRET));

    let first_two = Value::from(plan.as_array().unwrap()[..2].to_vec());
    let bob = sdk_client(&first_two, std::slice::from_ref(&url), Some(BOB));
    assert!(!tool_names(step_ok(&bob, 0)).contains(&"admin_wipe".to_owned()));
    assert_eq!(step_ok(&bob, 1)["isError"], true);

    // Without a token, or with an unknown one: 401 before any session.
    let initialize = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;
    for auth in [None, Some("Bearer not-a-known-token-at-all")] {
        let mut headers = mcp_post_headers();
        if let Some(auth) = auth {
            headers.push(("authorization", auth.to_owned()));
        }
        let status = post_status(port, &headers, initialize);
        assert_eq!(status, 401, "{auth:?}");
    }
}

/// The headers of a raw MCP POST.
fn mcp_post_headers() -> Vec<(&'static str, String)> {
    vec![
        ("content-type", "application/json".to_owned()),
        ("accept", "application/json, text/event-stream".to_owned()),
    ]
}

/// The status of a raw HTTP/1.1 POST to /mcp on 127.0.0.1:`port`.
fn post_status(port: u16, headers: &[(&str, String)], body: &str) -> u16 {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    let mut request = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    stream.write_all(request.as_bytes()).unwrap();
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    answer
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("not an HTTP answer: {answer}"))
}

#[test]
fn inspector_cli_lists_and_calls_through_serve() {
    let dir = tempfile::tempdir().unwrap();
    let registry = registry(dir.path(), false);
    let inspector = tools::npm("@modelcontextprotocol/inspector/clients/launcher/build/index.js");
    let run = |method_args: &[&str]| -> Value {
        let output = Command::new(tools::node22())
            .arg(&inspector)
            .arg("--cli")
            .args(serve_command(&registry, &dir.path().join("store"), &[]))
            .args(method_args)
            .output()
            .expect("node runs");
        assert!(
            output.status.success(),
            "the Inspector CLI failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        serde_json::from_slice(&output.stdout).unwrap()
    };
    let names = tool_names(&run(&["--method", "tools/list"]));
    assert!(names.contains(&"text_upper".to_owned()), "{names:?}");
    let called = run(&[
        "--method",
        "tools/call",
        "--tool-name",
        "text_upper",
        "--tool-arg",
        "input=inspected",
    ]);
    assert_eq!(called["structuredContent"], json!({"result": "INSPECTED"}));
}

/// The OpenAPI tools' venv (scripts/install-mcp-tools.sh).
fn openapi_tool(name: &str) -> PathBuf {
    tools::tool(&format!("openapi-venv/bin/{name}"))
}

#[test]
fn the_openapi_document_validates_and_a_generic_client_finds_every_answer_conformant() {
    let dir = tempfile::tempdir().unwrap();
    let registry = registry(dir.path(), false);
    let port = free_port();
    let http = format!("127.0.0.1:{port}");
    let _serve = spawn(&serve_command(
        &registry,
        &dir.path().join("store"),
        &["--http", &http],
    ));
    wait_until_listening(port);
    let url = format!("http://{http}/openapi.json");
    let document = dir.path().join("openapi.json");
    let fetched = Command::new("python3")
        .args(["-c", "import sys, urllib.request; open(sys.argv[2], 'wb').write(urllib.request.urlopen(sys.argv[1]).read())"])
        .arg(&url)
        .arg(&document)
        .status()
        .unwrap();
    assert!(fetched.success());

    let validated = Command::new(openapi_tool("openapi-spec-validator"))
        .arg(&document)
        .output()
        .unwrap();
    assert!(
        validated.status.success(),
        "openapi-spec-validator: {}{}",
        String::from_utf8_lossy(&validated.stdout),
        String::from_utf8_lossy(&validated.stderr)
    );

    // Every operation called with generated inputs, valid and invalid; every answer checked
    // against the document (status, content type, schema). A failing operation's 500 is a
    // documented answer, so "no server error" is left out.
    // Run from the test's folder: schemathesis writes a `.schemathesis` cache where it runs.
    let checked = Command::new(openapi_tool("st"))
        .current_dir(dir.path())
        .args(["run", &url, "--max-examples", "25", "--seed", "1"])
        .args(["--exclude-checks", "not_a_server_error"])
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&checked.stdout);
    assert!(
        checked.status.success(),
        "schemathesis found failures:\n{out}"
    );
    assert!(out.contains("passed"), "{out}");
}

#[test]
fn an_mcp_sources_resources_and_prompts_reach_the_client_masked() {
    // The MCP source plants secrets in every string of every message it sends (generated
    // from the Python SDK's types: crates/envelope-mcp/tests/fixtures/secret_server.py).
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../envelope-mcp/tests/fixtures/secret_server.py");
    let dir = tempfile::tempdir().unwrap();
    let registry = dir.path().join("envelope.toml");
    let text = format!(
        "[mcpServers.planted]\ncommand = \"python3\"\nargs = [{:?}]\n",
        fixture.display().to_string()
    );
    std::fs::write(&registry, text).unwrap();
    let command = serve_command(&registry, &dir.path().join("store"), &[]);
    let plan = json!([
        {"op": "list_resources"},
        {"op": "read", "uri": "envelope+mcp://planted/file:///notes.txt"},
        {"op": "list_resource_templates"},
        {"op": "list_prompts"},
    ]);
    let report = sdk_client(&plan, &command, None);
    for step in 0..4 {
        let answer = step_ok(&report, step).to_string();
        assert!(
            answer.contains("***"),
            "step {step}: nothing masked in {answer}"
        );
    }
    let all = report.to_string();
    for planted in [
        "ghp_0123456789abcdefghij",
        "AKIAABCDEFGHIJKLMNOP",
        "abcDEF123456xyz987",
        "MIIEowIBAAKCAQEAx1Vt",
        "hunter2-correct-horse",
        "sk_live_abcdefghij0123456789",
    ] {
        assert!(
            !all.contains(planted),
            "{planted} reached the client: {all}"
        );
    }
}

#[test]
fn an_mcp_sources_access_control_hides_and_denies_its_resources_and_prompts() {
    let dir = tempfile::tempdir().unwrap();
    let registry = registry(dir.path(), true);
    // The source's tools, resources and prompts need the admin scope.
    let text = std::fs::read_to_string(&registry).unwrap().replace(
        "[mcpServers.everything]\n",
        "[mcpServers.everything]\naccessControl = { requiredScopes = [\"admin\"] }\n",
    );
    std::fs::write(&registry, text).unwrap();
    let port = free_port();
    let listen = format!("127.0.0.1:{port}");
    let tokens = tokens(dir.path()).display().to_string();
    let command = serve_command(
        &registry,
        &dir.path().join("store"),
        &["--listen", &listen, "--tokens", &tokens],
    );
    let _serve = spawn(&command);
    wait_until_listening(port);
    let url = format!("http://{listen}/mcp");
    let resource = "envelope+mcp://everything/demo://resource/static/document/architecture.md";
    let plan = json!([
        {"op": "list_resources"},
        {"op": "read", "uri": resource},
        {"op": "list_prompts"},
        {"op": "get_prompt", "name": "everything_simple-prompt", "args": {}},
        {"op": "list_resource_templates"},
    ]);
    let alice = sdk_client(&plan, std::slice::from_ref(&url), Some(ALICE));
    assert!(step_ok(&alice, 0).to_string().contains(resource));
    assert!(step_ok(&alice, 1)["contents"][0]["text"].is_string());
    assert!(
        step_ok(&alice, 2)
            .to_string()
            .contains("everything_simple-prompt")
    );
    assert!(step_ok(&alice, 3)["messages"].is_array());

    let bob = sdk_client(&plan, std::slice::from_ref(&url), Some(BOB));
    assert_eq!(step_ok(&bob, 0)["resources"], json!([]), "{bob}");
    let denied = bob["steps"][1]["error"].as_str().unwrap_or_default();
    assert!(denied.contains("not found"), "{bob}");
    assert_eq!(step_ok(&bob, 2)["prompts"], json!([]), "{bob}");
    let unknown = bob["steps"][3]["error"].as_str().unwrap_or_default();
    assert!(unknown.contains("unknown prompt"), "{bob}");
    // Only the artifact template: none of the source's.
    assert_eq!(
        step_ok(&bob, 4)["resourceTemplates"]
            .as_array()
            .unwrap()
            .len(),
        1,
        "{bob}"
    );
}
