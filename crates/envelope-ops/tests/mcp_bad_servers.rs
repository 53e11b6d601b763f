//! from_mcp bad input: a command that does not exist, a server that never answers
//! initialize, an unreachable URL. Each is a warning naming the source within a bounded
//! time, and the rest of the registry keeps working.

mod mcp_common;

use std::time::{Duration, Instant};

use envelope_ops::Context;
use mcp_common::{free_port, load};
use serde_json::json;

fn upper() -> serde_json::Value {
    json!({"text": {"up": {"command": ["tr", "a-z", "A-Z"], "outputSchema": {"type": "string"}}}})
}

#[tokio::test]
async fn a_command_that_does_not_exist_names_the_source() {
    let loaded = load(json!({
        "commands": upper(),
        "mcpServers": {"ghost": {"command": "/nonexistent/mcp-server", "args": ["x"]}},
    }))
    .await;
    assert_eq!(loaded.warnings.len(), 1, "{:?}", loaded.warnings);
    let w = &loaded.warnings[0];
    assert!(w.starts_with("mcpServers.ghost: not registered: "), "{w}");
    assert!(w.contains("/nonexistent/mcp-server"), "{w}");
    let env = loaded
        .registry
        .execute("text.up", json!("abc"), &Context::default())
        .await
        .unwrap()
        .envelope;
    assert_eq!(env["data"], "ABC", "the commands still work");
}

#[tokio::test]
async fn a_server_that_never_answers_initialize_times_out() {
    let started = Instant::now();
    let loaded = load(json!({
        "commands": upper(),
        "mcpServers": {"mute": {"command": "sleep", "args": ["60"], "connectTimeout": 1}},
    }))
    .await;
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(
        loaded.warnings,
        ["mcpServers.mute: not registered: no answer to initialize within 1 s"]
    );
    assert!(loaded.registry.spec("text.up").is_some());
}

#[tokio::test]
async fn a_server_that_exits_at_once_names_how() {
    let loaded = load(json!({
        "mcpServers": {"quits": {"command": "sh", "args": ["-c", "exit 7"]}},
    }))
    .await;
    let w = &loaded.warnings[0];
    assert!(
        w.starts_with("mcpServers.quits: not registered: initialize failed"),
        "{w}"
    );
    assert!(w.contains("exited with status 7"), "{w}");
}

#[tokio::test]
async fn an_unreachable_url_names_the_source() {
    let port = free_port(); // bound then released: nothing listens
    let url = format!("http://127.0.0.1:{port}/mcp");
    let started = Instant::now();
    let loaded = load(json!({"commands": upper(), "mcpServers": {"far": {"url": url}}})).await;
    assert!(started.elapsed() < Duration::from_secs(10));
    let w = &loaded.warnings[0];
    assert!(w.starts_with("mcpServers.far: not registered: "), "{w}");
    assert!(w.contains("cannot reach"), "{w}");
    assert_eq!(loaded.registry.len(), 1);
}

#[tokio::test]
async fn servers_start_side_by_side() {
    // Three servers that never answer, 2 s each: one after the other would take 6 s.
    let mute = json!({"command": "sleep", "args": ["60"], "connectTimeout": 2});
    let started = Instant::now();
    let loaded = load(json!({"mcpServers": {"a": mute, "b": mute, "c": mute}})).await;
    let took = started.elapsed();
    assert_eq!(loaded.warnings.len(), 3, "{:?}", loaded.warnings);
    assert!(
        took < Duration::from_secs(5),
        "the starts did not overlap: {took:?}"
    );
}

#[tokio::test]
async fn a_url_of_another_scheme_is_refused_with_the_reason() {
    let loaded = load(json!({"mcpServers": {"ftp": {"url": "ftp://127.0.0.1:1/mcp"}}})).await;
    let w = &loaded.warnings[0];
    assert!(w.starts_with("mcpServers.ftp: not registered: "), "{w}");
    assert!(w.contains("is not an http:// or https:// URL"), "{w}");
}
