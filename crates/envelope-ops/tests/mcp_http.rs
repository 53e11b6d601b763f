//! from_mcp over Streamable HTTP: `@modelcontextprotocol/server-everything streamableHttp`
//! started on 127.0.0.1 (a free port), with a header sent on every request.

mod common;
mod mcp_common;

use envelope_ops::Context;
use mcp_common::{free_port, load, tools, wait_for_port};
use serde_json::json;

#[tokio::test]
async fn a_streamable_http_server_is_a_source() {
    let port = free_port();
    let mut server = tokio::process::Command::new(tools::node22())
        .arg(tools::npm(
            "@modelcontextprotocol/server-everything/dist/index.js",
        ))
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("node starts");
    wait_for_port(port).await;
    let url = format!("http://127.0.0.1:{port}/mcp");
    let loaded = load(json!({"mcpServers": {"web": {
        "type": "http", "url": url, "headers": {"X-Client": "envelope-ops"},
    }}}))
    .await;
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let env = loaded
        .registry
        .execute(
            "web.get-structured-content",
            json!({"location": "New York"}),
            &Context::default(),
        )
        .await
        .unwrap()
        .envelope;
    assert_eq!(env["data"]["temperature"], 33);
    assert_eq!(env["meta"]["source"], "mcp");
    common::assert_valid_envelope(&env);
    let echo = loaded
        .registry
        .execute(
            "web.echo",
            json!({"message": "over http"}),
            &Context::default(),
        )
        .await
        .unwrap()
        .envelope;
    assert_eq!(echo["data"][0]["text"], "Echo: over http");
    drop(loaded);
    server.kill().await.unwrap();
}

#[tokio::test]
async fn headers_reach_the_server_and_list_changes_come_over_http() {
    tools::python_module("mcp");
    let markers = tempfile::tempdir().unwrap();
    let port = free_port();
    let script = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/mcp_test_server.py");
    let mut server = tokio::process::Command::new("python3")
        .arg(script)
        .arg(markers.path())
        .args(["http", &port.to_string()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("python3 starts");
    wait_for_port(port).await;
    let url = format!("http://127.0.0.1:{port}/mcp");
    let mut loaded = load(json!({"mcpServers": {"py": {
        "url": url, "headers": {"X-Client": "envelope-ops"},
    }}}))
    .await;
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let registry = &mut loaded.registry;
    let env = registry
        .execute(
            "py.header",
            json!({"name": "x-client"}),
            &Context::default(),
        )
        .await
        .unwrap()
        .envelope;
    assert_eq!(env["data"]["result"], "envelope-ops", "{env}");

    registry
        .execute("py.grow", json!({"name": "remote"}), &Context::default())
        .await
        .unwrap();
    tokio::time::timeout(std::time::Duration::from_secs(10), registry.updated())
        .await
        .expect("the list change arrives over HTTP");
    assert!(registry.apply_updates().is_empty());
    assert!(registry.spec("py.remote").is_some());
    drop(loaded);
    server.kill().await.unwrap();
}
