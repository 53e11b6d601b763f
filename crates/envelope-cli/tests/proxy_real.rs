//! `envelope proxy` between real MCP clients and real MCP servers (installed by
//! scripts/install-mcp-tools.sh): the Python SDK client and the Inspector CLI, in front of
//! server-everything, server-filesystem and mcp-server-git.

mod common;

#[path = "../../envelope-mcp/tests/common/tools.rs"]
mod tools;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../envelope-mcp/tests/fixtures")
        .join(name)
}

/// `envelope proxy --store STORE --stats STATS EXTRA… -- UPSTREAM…` as an argument list.
fn proxy_command(store: &Path, stats: &Path, extra: &[&str], upstream: &[String]) -> Vec<String> {
    let mut command = vec![
        env!("CARGO_BIN_EXE_envelope").to_string(),
        "proxy".into(),
        "--store".into(),
        store.display().to_string(),
        "--stats".into(),
        stats.display().to_string(),
    ];
    command.extend(extra.iter().map(|s| s.to_string()));
    command.push("--".into());
    command.extend(upstream.iter().cloned());
    command
}

/// Runs the Python SDK client with `plan` against `command`; its report.
fn sdk_client(plan: &Value, command: &[String]) -> Value {
    tools::python_module("mcp");
    common::python_client(&common::sdk_client_script(), &plan.to_string(), command)
}

/// The JSON a client printed, once it succeeded.
fn json_stdout(output: &std::process::Output, client: &str) -> Value {
    assert!(
        output.status.success(),
        "{client} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&output.stdout)))
}

fn everything() -> Vec<String> {
    vec![
        tools::node22().display().to_string(),
        tools::npm("@modelcontextprotocol/server-everything/dist/index.js")
            .display()
            .to_string(),
        "stdio".into(),
    ]
}

fn read_stats(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).expect("the --stats file is written on exit"))
        .unwrap()
}

fn step_ok(report: &Value, index: usize) -> &Value {
    let step = &report["steps"][index];
    assert!(step.get("error").is_none(), "step {index}: {step}");
    step
}

#[test]
fn sdk_client_through_the_proxy_to_server_everything() {
    let dir = tempfile::tempdir().unwrap();
    let (store, stats) = (dir.path().join("store"), dir.path().join("stats.json"));
    // A full result stored beforehand, read back through the proxy's own additions.
    let full = br#"{"content":[{"type":"text","text":"the stored full result"}]}"#;
    let sidecar = envelope_store::open(store.to_str().unwrap())
        .unwrap()
        .put(full, "application/json", &[])
        .unwrap();
    let uri = envelope_mcp::drill::artifact_uri(&sidecar.digest);
    let plan = json!([
        {"op": "list_tools"},
        {"op": "call", "name": "echo", "args": {"message": "hi there"}},
        // outputSchema + structuredContent: the SDK validates one against the other.
        {"op": "call", "name": "get-structured-content", "args": {"location": "Chicago"}},
        // Progress notifications pass through while the call is in flight.
        {"op": "call", "name": "trigger-long-running-operation", "args": {"duration": 1, "steps": 2}, "progress": true},
        {"op": "read", "uri": uri},
        {"op": "call", "name": "envelope_read", "args": {"uri": uri}},
    ]);
    let report = sdk_client(&plan, &proxy_command(&store, &stats, &[], &everything()));
    assert!(report["initialize"]["capabilities"]["resources"].is_object());
    let names: Vec<&str> = step_ok(&report, 0)["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"echo") && names.contains(&"get-structured-content"),
        "{names:?}"
    );
    assert_eq!(
        names[names.len() - 3..],
        ["envelope_read", "envelope_search", "envelope_list"]
    );
    assert_eq!(step_ok(&report, 1)["content"][0]["text"], "Echo: hi there");
    let structured = step_ok(&report, 2);
    assert!(
        structured["structuredContent"]["temperature"].is_number(),
        "{structured}"
    );
    let progress = step_ok(&report, 3)["_progress"].as_array().unwrap().len();
    assert_eq!(progress, 2, "{}", report["steps"][3]);
    let read = step_ok(&report, 4);
    assert_eq!(read["contents"][0]["uri"], uri.as_str());
    assert!(
        read["contents"][0]["text"]
            .as_str()
            .unwrap()
            .contains("the stored full result")
    );
    let drilled = step_ok(&report, 5);
    assert!(
        drilled.to_string().contains("the stored full result"),
        "{drilled}"
    );
    let stats = read_stats(&stats);
    assert_eq!(stats["calls"], 3, "{stats}");
    assert_eq!(stats["per_tool"]["echo"]["calls"], 1);
    assert!(stats["bytes_from_upstream"].as_u64().unwrap() > 0);
}

#[test]
fn sdk_client_gets_a_big_result_cut_to_the_limit_and_reads_it_back() {
    let dir = tempfile::tempdir().unwrap();
    let (store, stats) = (dir.path().join("store"), dir.path().join("stats.json"));
    let upstream = vec![
        "python3".to_string(),
        fixture("fault_server.py").display().to_string(),
    ];
    let plan = json!([
        {"op": "call", "name": "huge", "args": {"mb": 0.1}},
        {"op": "read", "uri_from": 0},
        {"op": "call", "name": "envelope_read", "uri_from": 0},
        {"op": "call", "name": "envelope_read", "uri_from": 0, "args": {"pointer": "/content/0/text", "offset": 100}},
    ]);
    let report = sdk_client(
        &plan,
        &proxy_command(&store, &stats, &["--limit", "16384"], &upstream),
    );
    let shaped = step_ok(&report, 0);
    let mut wire = shaped.clone();
    wire.as_object_mut()
        .unwrap()
        .retain(|k, _| !k.starts_with('_') && k != "resultType");
    assert!(wire.to_string().len() <= 16384, "{wire}");
    let link = shaped["content"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["type"] == "resource_link");
    let uri = link.expect("a resource_link to the full result")["uri"]
        .as_str()
        .unwrap();
    assert!(uri.starts_with("envelope://artifact/sha256/"), "{uri}");
    let full = step_ok(&report, 1)["contents"][0]["text"].as_str().unwrap();
    let payload: Value = serde_json::from_str(full).unwrap();
    assert_eq!(
        payload["content"][0]["text"].as_str().unwrap().len(),
        104_857
    );
    // The whole result does not fit one answer: the model is told how to narrow it.
    let whole = step_ok(&report, 2);
    assert_eq!(whole["isError"], true, "{whole}");
    assert!(whole.to_string().contains("pointer"), "{whole}");
    // A window of the text block, paged from offset 100.
    let drilled = step_ok(&report, 3);
    assert_ne!(drilled["isError"], true, "{drilled}");
    let window = &drilled["structuredContent"];
    assert_eq!(window["offset"], 100, "{window}");
    assert_eq!(window["total"], 104_857, "{window}");
    let text = window["text"].as_str().unwrap();
    let next = window["next_offset"].as_u64().unwrap();
    assert_eq!(next, 100 + text.chars().count() as u64);
    assert_eq!(
        text,
        &payload["content"][0]["text"].as_str().unwrap()[100..next as usize]
    );
    let stats = read_stats(&stats);
    assert_eq!(stats["results_offloaded"], 1, "{stats}");
    assert!(stats["bytes_saved"].as_u64().unwrap() > 80_000, "{stats}");
}

#[test]
fn inspector_cli_through_the_proxy() {
    let dir = tempfile::tempdir().unwrap();
    let (store, stats) = (dir.path().join("store"), dir.path().join("stats.json"));
    let inspector = tools::npm("@modelcontextprotocol/inspector/clients/launcher/build/index.js");
    let run = |method_args: &[&str]| -> Value {
        let output = Command::new(tools::node22())
            .arg(&inspector)
            .arg("--cli")
            .args(proxy_command(
                &store,
                &stats,
                &["--log-level", "off"],
                &everything(),
            ))
            .args(method_args)
            .output()
            .expect("node runs");
        json_stdout(&output, "the Inspector CLI")
    };
    let listed = run(&["--method", "tools/list"]);
    let names: Vec<&str> = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"echo") && names.contains(&"envelope_read"),
        "{names:?}"
    );
    let echoed = run(&[
        "--method",
        "tools/call",
        "--tool-name",
        "echo",
        "--tool-arg",
        "message=inspected",
    ]);
    assert_eq!(echoed["content"][0]["text"], "Echo: inspected");
    let templates = run(&["--method", "resources/templates/list"]);
    let uris = templates.to_string();
    assert!(uris.contains("envelope://artifact/sha256/"), "{uris}");
}

/// Calls a tool through a proxy at the default limit (16 KiB) and reads the full result back
/// by its link: (the cut result as the SDK gave it — the SDK checked its `structuredContent`
/// against the tool's `outputSchema` — and the stored full result).
fn cut_and_read_back(upstream: &[String], call: &Value, dir: &Path) -> (Value, Value) {
    let (store, stats) = (dir.join("store-cut"), dir.join("stats-cut.json"));
    let plan = json!([{"op": "list_tools"}, call, {"op": "read", "uri_from": 1}]);
    let report = sdk_client(&plan, &proxy_command(&store, &stats, &[], upstream));
    let shaped = step_ok(&report, 1).clone();
    let mut wire = shaped.clone();
    wire.as_object_mut()
        .unwrap()
        .retain(|k, _| !k.starts_with('_') && k != "resultType");
    assert!(wire.to_string().len() <= 16384, "{wire}");
    assert_ne!(shaped["isError"], true, "{shaped}");
    let stored = step_ok(&report, 2)["contents"][0]["text"].as_str().unwrap();
    let stats = read_stats(&stats);
    assert_eq!(stats["results_offloaded"], 1, "{stats}");
    (shaped, serde_json::from_str(stored).unwrap())
}

#[test]
fn server_filesystem_big_directory_tree_arrives_whole_and_schema_valid() {
    let dir = tempfile::tempdir().unwrap();
    let (store, stats) = (dir.path().join("store"), dir.path().join("stats.json"));
    let tree = dir.path().join("tree");
    for a in 0..30 {
        let sub = tree.join(format!("directory-{a:02}"));
        std::fs::create_dir_all(&sub).unwrap();
        for b in 0..60 {
            std::fs::write(sub.join(format!("file-with-a-long-name-{b:03}.txt")), b"x").unwrap();
        }
    }
    let upstream = vec![
        tools::node22().display().to_string(),
        tools::npm("@modelcontextprotocol/server-filesystem/dist/index.js")
            .display()
            .to_string(),
        tree.display().to_string(),
    ];
    let plan = json!([
        {"op": "list_tools"},
        {"op": "call", "name": "directory_tree", "args": {"path": tree.display().to_string()}},
    ]);
    // A limit above the result: it reaches the client unchanged (behaviour 2).
    let report = sdk_client(
        &plan,
        &proxy_command(&store, &stats, &["--limit", "100000000"], &upstream),
    );
    let tools_listed = step_ok(&report, 0)["tools"].as_array().unwrap();
    let tree_tool = tools_listed
        .iter()
        .find(|t| t["name"] == "directory_tree")
        .unwrap();
    assert!(tree_tool.get("outputSchema").is_some(), "{tree_tool}");
    // The SDK validated structuredContent against that schema (else the step is an error).
    let result = step_ok(&report, 1);
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(text.len() > 100_000, "{} bytes", text.len());
    assert_eq!(text.matches("file-with-a-long-name-").count(), 30 * 60);
    let stats = read_stats(&stats);
    assert_eq!(stats["per_tool"]["directory_tree"]["calls"], 1);
    assert!(
        stats["bytes_from_upstream"].as_u64().unwrap() > 200_000,
        "{stats}"
    );
    // At the default limit: cut, schema-valid, and the full result one read away.
    let (cut, stored) = cut_and_read_back(&upstream, &plan[1], dir.path());
    assert!(cut.get("structuredContent").is_some(), "{cut}");
    assert_eq!(stored["content"][0]["text"].as_str(), Some(text));
    assert_eq!(stored["structuredContent"], result["structuredContent"]);
}

#[test]
fn mcp_server_git_long_log() {
    tools::python_module("mcp_server_git");
    let dir = tempfile::tempdir().unwrap();
    let (store, stats) = (dir.path().join("store"), dir.path().join("stats.json"));
    let repo = dir.path().join("repo");
    let git = |args: &[&str]| {
        let status = Command::new("git")
            .args(args)
            .current_dir(&repo)
            .status()
            .unwrap();
        assert!(status.success(), "git {args:?}");
    };
    std::fs::create_dir_all(&repo).unwrap();
    git(&["init", "-q", "-b", "main"]);
    // 1,500 commits in one fast-import stream.
    let mut stream = String::new();
    for i in 0..1500 {
        stream.push_str(&format!(
            "commit refs/heads/main\ncommitter T <t@example.com> {} +0000\ndata <<EOM\ncommit number {i} of the long history\nEOM\n",
            1_700_000_000 + i
        ));
        // No `from`: each commit continues the branch's tip.
        stream.push('\n');
    }
    let mut import = Command::new("git")
        .args(["fast-import", "--quiet"])
        .current_dir(&repo)
        .stdin(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write as _;
    import
        .stdin
        .take()
        .unwrap()
        .write_all(stream.as_bytes())
        .unwrap();
    assert!(import.wait().unwrap().success());
    git(&["reset", "-q", "--hard", "main"]);
    let upstream = vec![
        "python3".to_string(),
        "-m".into(),
        "mcp_server_git".into(),
        "--repository".into(),
        repo.display().to_string(),
    ];
    let plan = json!([
        {"op": "call", "name": "git_log", "args": {"repo_path": repo.display().to_string(), "max_count": 1500}},
    ]);
    let report = sdk_client(
        &plan,
        &proxy_command(&store, &stats, &["--limit", "100000000"], &upstream),
    );
    let text = step_ok(&report, 0).to_string();
    assert!(
        text.contains("commit number 1499 of") && text.contains("commit number 0 of"),
        "{}",
        &text[..text.len().min(500)]
    );
    let stats = read_stats(&stats);
    assert_eq!(stats["per_tool"]["git_log"]["calls"], 1, "{stats}");
    // At the default limit: cut, and the full log one read away.
    let full = step_ok(&report, 0).clone();
    let (cut, stored) = cut_and_read_back(&upstream, &plan[0], dir.path());
    assert!(cut.to_string().contains("commit number 1499 of"), "{cut}");
    assert_eq!(stored["content"], full["content"]);
}

/// A child process killed when the test ends, however it ends.
struct Killed(std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn upstream_url_fronts_a_streamable_http_server() {
    tools::python_module("mcp");
    let port = free_port();
    let server = envelope_mcp_fixture("http/conformance_server.py");
    let _server = Killed(
        Command::new("python3")
            .args([server.as_str(), "http", &port.to_string()])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    );
    wait_until_listening(port, "the server");
    let dir = tempfile::tempdir().unwrap();
    let (store, stats) = (dir.path().join("store"), dir.path().join("stats.json"));
    let command: Vec<String> = [
        env!("CARGO_BIN_EXE_envelope"),
        "proxy",
        "--store",
        store.to_str().unwrap(),
        "--stats",
        stats.to_str().unwrap(),
        "--upstream-url",
        &format!("http://127.0.0.1:{port}/mcp"),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let plan = json!([
        {"op": "list_tools"},
        {"op": "call", "name": "test_simple_text", "args": {}},
        {"op": "call", "name": "big_text", "args": {"size": 100000}},
        {"op": "read", "uri_from": 2},
    ]);
    let report = sdk_client(&plan, &command);
    let names = step_ok(&report, 0)["tools"].to_string();
    assert!(
        names.contains("test_simple_text") && names.contains("envelope_read"),
        "{names}"
    );
    let simple = step_ok(&report, 1);
    assert_eq!(simple["content"][0]["type"], "text", "{simple}");
    let big = step_ok(&report, 2);
    assert!(big.to_string().len() < 20_000, "{big}");
    let full = step_ok(&report, 3)["contents"][0]["text"].as_str().unwrap();
    assert!(
        full.contains(&"x".repeat(100_000)),
        "the stored result is whole"
    );
    let stats = read_stats(&stats);
    assert_eq!(stats["results_offloaded"], 1, "{stats}");
}

/// A CA and a certificate for 127.0.0.1 that it signed, made with the openssl CLI in `dir`:
/// (CA bundle, certificate, key).
fn test_ca_and_localhost_cert(dir: &Path) -> (PathBuf, PathBuf, PathBuf) {
    let openssl = |args: &[&str]| {
        let out = Command::new("openssl")
            .args(args)
            .current_dir(dir)
            .output()
            .expect("the openssl CLI makes the test certificates");
        assert!(
            out.status.success(),
            "openssl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let ec = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
    ];
    openssl(
        &[
            &["req", "-x509"][..],
            &ec,
            &[
                "-keyout",
                "ca.key",
                "-out",
                "ca.pem",
                "-days",
                "2",
                "-subj",
                "/CN=envelope test CA",
            ],
        ]
        .concat(),
    );
    openssl(
        &[
            &["req"][..],
            &ec,
            &[
                "-keyout",
                "leaf.key",
                "-out",
                "leaf.csr",
                "-subj",
                "/CN=127.0.0.1",
            ],
        ]
        .concat(),
    );
    std::fs::write(
        dir.join("leaf.ext"),
        "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n",
    )
    .unwrap();
    openssl(&[
        "x509",
        "-req",
        "-in",
        "leaf.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-out",
        "leaf.pem",
        "-days",
        "2",
        "-extfile",
        "leaf.ext",
    ]);
    (
        dir.join("ca.pem"),
        dir.join("leaf.pem"),
        dir.join("leaf.key"),
    )
}

/// `--upstream-url https://` and a registry's `https://` MCP source: the Python SDK's server
/// behind TLS with a certificate from a CA made for the test. Trusted through
/// `SSL_CERT_FILE`, the session works end to end; trusting another CA, the certificate is
/// refused (verification is real, not skipped).
#[test]
fn upstream_url_over_tls_verifies_the_server() {
    tools::python_module("mcp");
    let dir = tempfile::tempdir().unwrap();
    let (ca, cert, key) = test_ca_and_localhost_cert(dir.path());
    // Another CA, which did not sign the server's certificate.
    let other = dir.path().join("other");
    std::fs::create_dir(&other).unwrap();
    let (other_ca, _, _) = test_ca_and_localhost_cert(&other);
    let port = free_port();
    let server = envelope_mcp_fixture("http/conformance_server.py");
    let _server = Killed(
        Command::new("python3")
            .args([server.as_str(), "https", &port.to_string()])
            .arg(&cert)
            .arg(&key)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    );
    wait_until_listening(port, "the TLS server");
    let store = dir.path().join("store");
    let proxy = |trust: &Path| -> Vec<String> {
        // The SDK client gives its server a minimal environment: `env` sets the bundle.
        let mut command = vec!["env".to_string()];
        command.push(format!("SSL_CERT_FILE={}", trust.display()));
        command.extend(
            [
                env!("CARGO_BIN_EXE_envelope"),
                "proxy",
                "--store",
                store.to_str().unwrap(),
                "--upstream-url",
                &format!("https://127.0.0.1:{port}/mcp"),
            ]
            .map(String::from),
        );
        command
    };
    let plan = json!([
        {"op": "list_tools"},
        {"op": "call", "name": "test_simple_text", "args": {}},
    ]);
    let report = sdk_client(&plan, &proxy(&ca));
    assert!(
        step_ok(&report, 0)["tools"]
            .to_string()
            .contains("test_simple_text"),
        "{report}"
    );
    assert_eq!(
        step_ok(&report, 1)["content"][0]["type"],
        "text",
        "{report}"
    );

    // Trusting another CA: the client's initialize fails with the certificate named.
    let refused = Command::new("python3")
        .arg(fixture("sdk_client.py"))
        .arg(plan.to_string())
        .arg("--")
        .args(proxy(&other_ca))
        .output()
        .unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&refused.stdout),
        String::from_utf8_lossy(&refused.stderr)
    );
    assert!(
        !refused.status.success() || !said.contains("test_simple_text"),
        "an untrusted server was talked to: {said}"
    );
    assert!(said.to_lowercase().contains("certificate"), "{said}");

    // A registry's MCP source over TLS: the same client, the same verification.
    let registry = dir.path().join("tls.json");
    let url = format!("https://127.0.0.1:{port}/mcp");
    std::fs::write(
        &registry,
        json!({"mcpServers": {"tls": {"url": url}}}).to_string(),
    )
    .unwrap();
    let list = |trust: &Path| {
        Command::new(env!("CARGO_BIN_EXE_envelope"))
            .args(["ops", "list", "--registry"])
            .arg(&registry)
            .env("SSL_CERT_FILE", trust)
            .output()
            .unwrap()
    };
    let trusted = list(&ca);
    let listed = String::from_utf8_lossy(&trusted.stdout);
    assert!(
        listed.contains("tls.test_simple_text"),
        "{listed}{}",
        String::from_utf8_lossy(&trusted.stderr)
    );
    let untrusted = list(&other_ca);
    assert!(!String::from_utf8_lossy(&untrusted.stdout).contains("tls.test_simple_text"));
    let warning = String::from_utf8_lossy(&untrusted.stderr).to_lowercase();
    assert!(
        warning.contains("mcpservers.tls") && warning.contains("certificate"),
        "{warning}"
    );
}

#[test]
fn sdk_http_client_through_proxy_listen() {
    tools::python_module("mcp");
    let port = free_port();
    let dir = tempfile::tempdir().unwrap();
    let (store, stats) = (dir.path().join("store"), dir.path().join("stats.json"));
    let fixture = envelope_mcp_fixture("http/conformance_server.py");
    let proxy = proxy_command(
        &store,
        &stats,
        &["--listen", &format!("127.0.0.1:{port}")],
        &["python3".into(), fixture, "stdio".into()],
    );
    let _proxy = Killed(
        Command::new(&proxy[0])
            .args(&proxy[1..])
            .env_remove("ENVELOPE_STORE")
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    );
    wait_until_listening(port, "the proxy");
    let plan = json!([
        {"op": "list_tools"},
        {"op": "call", "name": "big_text", "args": {"size": 100000}},
        {"op": "read", "uri_from": 1},
        {"op": "call", "name": "envelope_read", "uri_from": 1, "args": {"pointer": "/content/0/text", "limit": 10}},
    ]);
    let report = sdk_client(&plan, &[format!("http://127.0.0.1:{port}/mcp")]);
    let names = step_ok(&report, 0)["tools"].to_string();
    assert!(
        names.contains("big_text") && names.contains("envelope_read"),
        "{names}"
    );
    let big = step_ok(&report, 1);
    assert!(big.to_string().len() < 20_000, "{big}");
    let full = step_ok(&report, 2)["contents"][0]["text"].as_str().unwrap();
    assert!(
        full.contains(&"x".repeat(100_000)),
        "the stored result is whole"
    );
    let window = &step_ok(&report, 3)["structuredContent"];
    assert_eq!(window["text"], "x".repeat(10), "{window}");
    assert_eq!(window["next_offset"], 10, "{window}");
}

fn envelope_mcp_fixture(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../envelope-mcp/tests/fixtures")
        .join(name)
        .display()
        .to_string()
}

/// A port free on 127.0.0.1 at the time of asking.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Waits up to 30 s for something (`what`) to listen on 127.0.0.1:`port`.
fn wait_until_listening(port: u16, what: &str) {
    let ready = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(std::time::Instant::now() < ready, "{what} did not listen");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// The `envelope_read` call a cut result's notice ends with: its arguments.
/// The arguments of the call a notice shows after `label` (`Query: envelope_read `).
fn call_after(notice: &str, label: &str) -> Value {
    let (_, rest) = notice
        .split_once(label)
        .unwrap_or_else(|| panic!("no {label:?} in {notice}"));
    let mut calls = serde_json::Deserializer::from_str(rest).into_iter::<Value>();
    calls
        .next()
        .unwrap()
        .unwrap_or_else(|e| panic!("{e}: {rest}"))
}

fn read_on_call(notice: &str) -> Value {
    let (_, call) = notice
        .rsplit_once("Read on: envelope_read ")
        .unwrap_or_else(|| panic!("the notice names no envelope_read call: {notice}"));
    serde_json::from_str(call).unwrap_or_else(|e| panic!("{e}: {call}"))
}

/// Lines a model reads as lines: the text blocks after the notice, with no JSON string
/// escapes in them (a `\n` escaped twice would show as a backslash and an `n`).
fn readable_bytes(shaped: &Value) -> usize {
    shaped["content"].as_array().unwrap()[1..]
        .iter()
        .filter(|b| b["type"] == "text")
        .map(|b| b["text"].as_str().unwrap())
        .inspect(|t| {
            assert!(
                !t.contains("\\n") && !t.contains("\\\""),
                "escaped text: {t}"
            )
        })
        .map(str::len)
        .sum()
}

#[test]
fn server_filesystem_cut_text_stays_lines_and_the_notice_reads_on() {
    let dir = tempfile::tempdir().unwrap();
    let (store, stats) = (dir.path().join("store"), dir.path().join("stats.json"));
    let root = dir.path().join("files");
    std::fs::create_dir_all(&root).unwrap();
    let log: String = (0..40_000)
        .map(|i| {
            format!(
                "2026-11-27T12:00:{:02} {} worker \"w{}\" handled request {i}\n",
                i % 60,
                if i % 1000 == 999 { "ERROR" } else { "INFO" },
                i % 7
            )
        })
        .collect();
    let log_path = root.join("big.log");
    std::fs::write(&log_path, &log).unwrap();
    for a in 0..20 {
        let sub = root.join(format!("directory-{a:02}"));
        std::fs::create_dir_all(&sub).unwrap();
        for b in 0..40 {
            std::fs::write(sub.join(format!("file-with-a-long-name-{b:03}.txt")), b"x").unwrap();
        }
    }
    let upstream = vec![
        tools::node22().display().to_string(),
        tools::npm("@modelcontextprotocol/server-filesystem/dist/index.js")
            .display()
            .to_string(),
        root.display().to_string(),
    ];
    let limit = 16_384;
    let plan = json!([
        {"op": "list_tools"},
        {"op": "call", "name": "read_text_file", "args": {"path": log_path.display().to_string()}},
        {"op": "call", "name": "directory_tree", "args": {"path": root.display().to_string()}},
    ]);
    let report = sdk_client(&plan, &proxy_command(&store, &stats, &[], &upstream));
    let mut reads = Vec::new();
    let mut queries = Vec::new();
    let mut searches = Vec::new();
    for (step, min_share) in [(1, 45), (2, 40)] {
        // The SDK checked structuredContent against the tool's outputSchema (else an error).
        let shaped = step_ok(&report, step).clone();
        assert_ne!(shaped["isError"], true, "{shaped}");
        let mut wire = shaped.clone();
        wire.as_object_mut()
            .unwrap()
            .retain(|k, _| !k.starts_with('_') && k != "resultType");
        assert!(
            wire.to_string().len() <= limit,
            "{}",
            wire.to_string().len()
        );
        // Lines, as the server wrote them: many, none escaped, the start of the file.
        let text = shaped["content"][1]["text"].as_str().unwrap();
        assert!(text.lines().count() > 50, "{text}");
        let readable = readable_bytes(&shaped);
        assert!(
            readable * 100 >= limit * min_share,
            "{readable} of {limit} bytes readable"
        );
        assert!(
            text.ends_with('\n'),
            "cut at a line boundary: {:?}",
            &text[text.len() - 80..]
        );
        // Every pointer the budget marker names is one envelope_read takes.
        let marker = &shaped["_meta"]["dev.envelope/budget"];
        for cut in marker["cuts"].as_array().unwrap() {
            let pointer = cut["pointer"].as_str().unwrap();
            assert!(
                pointer == "/content/0/text" || pointer.starts_with("/structuredContent/"),
                "{pointer}"
            );
        }
        let notice = shaped["content"][0]["text"].as_str().unwrap();
        let call = read_on_call(notice);
        assert_eq!(call["pointer"], "/content/0/text", "{notice}");
        // What the cut text holds, and a query to run on it, as written.
        let fact = match step {
            1 => "/content/0/text: 40000 lines.".to_string(),
            // The root holds 20 folders and the log.
            _ => "JSON text: an array of 21 items at /content/0/text.".to_string(),
        };
        assert!(notice.contains(&fact), "{notice}");
        queries.push(call_after(notice, "Query: envelope_read "));
        // The catalog beside the store offers search: the notice shows a search call.
        assert!(notice.contains("Search: envelope_search {"), "{notice}");
        if step == 1 {
            searches.push(call_after(notice, "Search: envelope_search "));
        }
        assert_eq!(
            call["offset"].as_u64().unwrap() as usize,
            text.chars().count()
        );
        reads.push((call, text.to_string()));
    }
    assert!(
        report["steps"][1]["content"][1]["text"]
            .as_str()
            .is_some_and(|t| log.starts_with(t)),
        "the file's first lines as they are"
    );
    // The directory tree is JSON text, kept as that text (not a JSON string of it).
    assert!(reads[1].1.starts_with("[\n  {\n"), "{}", &reads[1].1[..40]);
    // The notice's call, passed as it is, reads on from where the cut stopped.
    let plan: Vec<Value> = reads
        .iter()
        .map(|(call, _)| call)
        .chain(&queries)
        .map(|call| json!({"op": "call", "name": "envelope_read", "args": call}))
        .chain(
            searches
                .iter()
                .map(|call| json!({"op": "call", "name": "envelope_search", "args": call})),
        )
        .collect();
    let report = sdk_client(&json!(plan), &proxy_command(&store, &stats, &[], &upstream));
    let mut tree = String::new();
    for (i, (call, kept)) in reads.iter().enumerate() {
        let answer = step_ok(&report, i);
        assert_ne!(answer["isError"], true, "{answer}");
        let window = &answer["structuredContent"];
        assert_eq!(window["offset"], call["offset"], "{window}");
        let next = window["text"].as_str().unwrap();
        assert!(!next.is_empty());
        if i == 0 {
            let at = kept.len();
            assert_eq!(&log[at..at + next.len()], next);
        } else {
            tree = format!("{kept}{next}");
        }
    }
    assert!(tree.contains("directory-00"), "{tree}");
    // The log's query counts its lines that say "error": one in a thousand.
    let counted = step_ok(&report, 2);
    assert_eq!(counted["structuredContent"]["value"], 40, "{counted}");
    // The tree's query reads the JSON it holds.
    let counted = step_ok(&report, 3);
    assert_eq!(counted["structuredContent"]["value"], 21, "{counted}");
    // The notice's search finds the log's error lines.
    let found = step_ok(&report, 4);
    let hits = found["structuredContent"]["hits"].as_array().unwrap();
    assert!(!hits.is_empty(), "{found}");
    assert!(
        hits.iter()
            .all(|h| h["text"].as_str().unwrap().contains("ERROR")),
        "{found}"
    );
}

/// server-everything's results are small (its largest, ten resource links, is 1.7 KB): cut to
/// 1,400 bytes, the notice says how many blocks were kept of how many, the links it keeps
/// are whole, and its read-on call, made as written through a second proxy, returns the
/// blocks from where the cut stopped. (A notice takes at most a sixteenth of the limit for
/// the records' facts: at this limit the hint and the calls fill it.)
#[test]
fn server_everything_resource_links_cut_whole_and_the_notice_reads_on() {
    let dir = tempfile::tempdir().unwrap();
    let (store, stats) = (dir.path().join("store"), dir.path().join("stats.json"));
    let plan = json!([{"op": "call", "name": "get-resource-links", "args": {"count": 10}}]);
    let command = proxy_command(&store, &stats, &["--limit", "1400"], &everything());
    let report = sdk_client(&plan, &command);
    let shaped = step_ok(&report, 0);
    let mut wire = shaped.clone();
    wire.as_object_mut()
        .unwrap()
        .retain(|k, _| !k.starts_with('_') && k != "resultType");
    assert!(wire.to_string().len() <= 1400, "{wire}");
    let blocks = shaped["content"].as_array().unwrap();
    let notice = blocks[0]["text"].as_str().unwrap();
    // The blocks between the notice and the link to the full result are the ones kept.
    let kept = blocks.len() - 2;
    assert!(kept >= 1, "{shaped}");
    assert!(
        notice.starts_with(&format!(
            "Output truncated to fit 1400 bytes: /content kept {kept} of 11 items"
        )),
        "{notice}"
    );
    // A link the server gave is kept whole, never cut.
    for link in &blocks[1..blocks.len() - 1] {
        if link["type"] == "resource_link" {
            assert!(
                link["uri"]
                    .as_str()
                    .unwrap()
                    .starts_with("demo://resource/dynamic/"),
                "{link}"
            );
            assert!(
                link["description"]
                    .as_str()
                    .unwrap()
                    .starts_with("Resource ")
            );
        }
    }
    let read_on = read_on_call(notice);
    assert_eq!(read_on["pointer"], "/content");
    assert_eq!(read_on["offset"], kept);
    let plan = json!([{"op": "call", "name": "envelope_read", "args": read_on}]);
    let report = sdk_client(&plan, &command);
    let next = &step_ok(&report, 0)["structuredContent"];
    assert_eq!(next["offset"], kept, "{next}");
    assert_eq!(next["total"], 11, "{next}");
    assert_eq!(next["items"][0]["type"], "resource_link", "{next}");
    assert_eq!(
        next["items"][0]["uri"],
        format!(
            "demo://resource/dynamic/{}/{kept}",
            if kept.is_multiple_of(2) {
                "text"
            } else {
                "blob"
            }
        ),
        "{next}"
    );
}
