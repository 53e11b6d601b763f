//! from_mcp lifetimes, against a real Python SDK server (tests/fixtures/mcp_test_server.py):
//! a tool list that changes, a dropped call that cancels, a server that dies and is started
//! again, an `isError` result that is an envelope.

mod common;
mod mcp_common;

use std::time::{Duration, Instant};

use envelope_ops::{Context, OperationType};
use mcp_common::{load, python_server, wait_until};
use serde_json::json;

#[tokio::test]
async fn a_changed_tool_list_reaches_the_registry() {
    let markers = tempfile::tempdir().unwrap();
    let mut loaded = load(json!({"mcpServers": {"py": python_server(markers.path())}})).await;
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let registry = &mut loaded.registry;
    assert!(registry.spec("py.fresh").is_none());
    let env = registry
        .execute("py.grow", json!({"name": "fresh"}), &Context::default())
        .await
        .unwrap()
        .envelope;
    assert_eq!(env["meta"]["isError"], false, "{env}");
    tokio::time::timeout(Duration::from_secs(10), registry.updated())
        .await
        .expect("the list change is queued");
    let warnings = registry.apply_updates();
    assert!(warnings.is_empty(), "{warnings:?}");
    let fresh = registry
        .spec("py.fresh")
        .expect("the new tool is registered");
    assert_eq!(fresh.description, "added at run time: fresh");
    assert!(registry.spec("py.add").is_some(), "the old tools stay");
    let env = registry
        .execute("py.fresh", json!({}), &Context::default())
        .await
        .unwrap()
        .envelope;
    assert_eq!(env["meta"]["content"][0]["text"], "I am fresh");
}

/// Issue 29: `rename` gives a tool's operation another name; the tool is still called by
/// its own name on the server, and the tools listed after a change are renamed too.
#[tokio::test]
async fn a_renamed_tool_is_called_by_its_own_name() {
    let markers = tempfile::tempdir().unwrap();
    let mut server = python_server(markers.path());
    server["rename"] = json!({"add": "sum", "fresh": "newcomer"});
    // `fresh` is not listed yet: a rename of a tool the server does not have is an error.
    let loaded = load(json!({"mcpServers": {"py": server.clone()}})).await;
    assert_eq!(loaded.warnings.len(), 1, "{:?}", loaded.warnings);
    assert!(
        loaded.warnings[0].starts_with("mcpServers.py: not registered: ")
            && loaded.warnings[0].contains("\"fresh\""),
        "{:?}",
        loaded.warnings
    );
    server["rename"] = json!({"add": "sum"});
    let loaded = load(json!({"mcpServers": {"py": server.clone()}})).await;
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    assert!(loaded.registry.spec("py.add").is_none());
    assert_eq!(
        loaded.registry.spec("py.sum").unwrap().kind,
        OperationType::Query
    );
    let env = loaded
        .registry
        .execute("py.sum", json!({"a": 2, "b": 40}), &Context::default())
        .await
        .unwrap()
        .envelope;
    assert_eq!(env["data"], json!({"result": 42}));
    // A new name another tool has: an error naming both.
    server["rename"] = json!({"add": "slow"});
    let loaded = load(json!({"mcpServers": {"py": server}})).await;
    assert_eq!(loaded.warnings.len(), 1, "{:?}", loaded.warnings);
    let w = &loaded.warnings[0];
    assert!(
        w.contains("\"add\" (renamed to \"slow\")")
            && w.contains("\"slow\"")
            && w.contains("py.slow"),
        "{w}"
    );
    assert!(loaded.registry.spec("py.slow").is_none());
}

#[tokio::test]
async fn structured_output_and_read_only_hint() {
    let markers = tempfile::tempdir().unwrap();
    let loaded = load(json!({"mcpServers": {"py": python_server(markers.path())}})).await;
    let add = loaded.registry.spec("py.add").unwrap();
    assert_eq!(add.kind, OperationType::Query);
    assert_eq!(
        loaded.registry.spec("py.slow").unwrap().kind,
        OperationType::Mutation
    );
    assert_eq!(add.output_schema["type"], "object");
    let env = loaded
        .registry
        .execute("py.add", json!({"a": 2, "b": 40}), &Context::default())
        .await
        .unwrap()
        .envelope;
    assert_eq!(env["data"], json!({"result": 42}));
    common::assert_valid_envelope(&env);
}

#[tokio::test]
async fn is_error_is_an_envelope_not_an_error() {
    let markers = tempfile::tempdir().unwrap();
    let loaded = load(json!({"mcpServers": {"py": python_server(markers.path())}})).await;
    let env = loaded
        .registry
        .execute("py.fail", json!({}), &Context::default())
        .await
        .expect("isError is a result")
        .envelope;
    assert_eq!(env["meta"]["isError"], true);
    // The SDK names the tool (it keeps the exception's text to itself).
    let text = env["meta"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("fail"), "{text}");
    assert_eq!(env["data"], env["meta"]["content"]);
    common::assert_valid_envelope(&env);
}

#[tokio::test]
async fn a_call_dropped_at_its_deadline_is_cancelled_on_the_server() {
    let markers = tempfile::tempdir().unwrap();
    let loaded = load(json!({"mcpServers": {"py": python_server(markers.path())}})).await;
    let started = Instant::now();
    let context = Context::default().with_deadline(Instant::now() + Duration::from_millis(500));
    let e = loaded
        .registry
        .execute("py.slow", json!({"seconds": 30}), &context)
        .await
        .unwrap_err();
    assert_eq!(e.code, "TIMEOUT");
    assert!(started.elapsed() < Duration::from_secs(5));
    let marker = markers.path().join("cancelled");
    wait_until("the server records the cancellation", || marker.exists()).await;
    // The session is still good.
    let env = loaded
        .registry
        .execute("py.add", json!({"a": 1, "b": 1}), &Context::default())
        .await
        .unwrap()
        .envelope;
    assert_eq!(env["data"]["result"], 2);
}

#[tokio::test]
async fn the_source_timeout_bounds_each_call() {
    let markers = tempfile::tempdir().unwrap();
    let mut server = python_server(markers.path());
    server["timeout"] = json!(1);
    let loaded = load(json!({"mcpServers": {"py": server}})).await;
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let e = loaded
        .registry
        .execute("py.slow", json!({"seconds": 30}), &Context::default())
        .await
        .unwrap_err();
    assert_eq!(e.code, "TIMEOUT", "{e:?}");
    assert!(e.message.contains("mcpServers.py"), "{e:?}");
    let marker = markers.path().join("cancelled");
    wait_until("the server records the cancellation", || marker.exists()).await;
}

#[tokio::test]
async fn a_server_that_dies_is_an_error_then_started_again() {
    let markers = tempfile::tempdir().unwrap();
    let loaded = load(json!({"mcpServers": {"py": python_server(markers.path())}})).await;
    let e = loaded
        .registry
        .execute("py.die", json!({}), &Context::default())
        .await
        .unwrap_err();
    assert_eq!(e.code, "EXECUTION_ERROR", "{e:?}");
    assert!(e.message.contains("mcpServers.py"), "{e:?}");
    assert!(e.message.contains("exited with status 3"), "{e:?}");
    let env = loaded
        .registry
        .execute("py.add", json!({"a": 3, "b": 4}), &Context::default())
        .await
        .expect("the next call starts the server again")
        .envelope;
    assert_eq!(env["data"]["result"], 7);
}

#[tokio::test]
async fn a_paged_tool_list_is_followed_and_json_text_parsed_when_the_schema_asks() {
    mcp_common::tools::python_module("mcp");
    let script = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/mcp_paged_server.py");
    let loaded =
        load(json!({"mcpServers": {"paged": {"command": "python3", "args": [script]}}})).await;
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let ids: Vec<String> = loaded.registry.specs().map(|s| s.id()).collect();
    assert_eq!(
        ids,
        [
            "paged.report",
            "paged.t0",
            "paged.t1",
            "paged.t2",
            "paged.t3"
        ]
    );
    let report = loaded
        .registry
        .execute("paged.report", json!({}), &Context::default())
        .await
        .unwrap()
        .envelope;
    assert_eq!(report["data"], json!({"n": 7}), "{report}");
    assert!(report["meta"].get("structuredContent").is_none());
    let plain = loaded
        .registry
        .execute("paged.t2", json!({}), &Context::default())
        .await
        .unwrap()
        .envelope;
    assert_eq!(plain["data"], json!([{"type": "text", "text": "t2"}]));
}

/// Whether process `pid` is still running (gone, or a zombie left to be reaped, is not).
fn running(pid: u64) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let state = stat
        .rsplit(')')
        .next()
        .unwrap_or("")
        .trim_start()
        .chars()
        .next();
    !matches!(state, None | Some('Z') | Some('X'))
}

#[tokio::test]
async fn dropping_the_registry_ends_the_server() {
    let markers = tempfile::tempdir().unwrap();
    let loaded = load(json!({"mcpServers": {"py": python_server(markers.path())}})).await;
    let env = loaded
        .registry
        .execute("py.pid", json!({}), &Context::default())
        .await
        .unwrap()
        .envelope;
    let pid = env["data"]["result"].as_u64().expect("a pid");
    assert!(running(pid));
    drop(loaded);
    wait_until("the server ends once the registry is gone", || {
        !running(pid)
    })
    .await;
}
