//! from_mcp against `mcp-server-git` (the Python reference server, stdio) on a temporary
//! repository: its tools are operations, a read is a query with text data, a failure of the
//! tool (a revision that does not exist) is an `isError` envelope, not a CallError.

mod common;
mod mcp_common;

use std::path::Path;
use std::process::Command;

use envelope_ops::{Context, OperationType};
use mcp_common::{load, tools};
use serde_json::json;

fn git(repo: &Path, args: &[&str]) {
    let status = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(args)
        .status()
        .expect("git runs");
    assert!(status.success(), "git {args:?}");
}

#[tokio::test]
async fn git_tools_are_operations() {
    tools::python_module("mcp_server_git");
    let repo = tempfile::tempdir().unwrap();
    git(repo.path(), &["init", "-q"]);
    std::fs::write(repo.path().join("hello.txt"), "hello\n").unwrap();
    git(repo.path(), &["add", "hello.txt"]);
    git(repo.path(), &["commit", "-q", "-m", "first commit"]);
    let repo_path = repo.path().to_str().unwrap();
    let loaded = load(json!({"mcpServers": {"git": {
        "command": "python3",
        "args": ["-m", "mcp_server_git", "--repository", repo_path],
    }}}))
    .await;
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let registry = &loaded.registry;
    assert_eq!(
        registry.spec("git.git_log").unwrap().kind,
        OperationType::Query
    );
    assert_eq!(
        registry.spec("git.git_commit").unwrap().kind,
        OperationType::Mutation
    );

    let log = registry
        .execute(
            "git.git_log",
            json!({"repo_path": repo_path}),
            &Context::default(),
        )
        .await
        .unwrap()
        .envelope;
    assert_eq!(log["meta"]["isError"], false, "{log}");
    let text = log["data"][0]["text"].as_str().unwrap();
    assert!(text.contains("first commit"), "{text}");
    common::assert_valid_envelope(&log);

    let missing = registry
        .execute(
            "git.git_show",
            json!({"repo_path": repo_path, "revision": "no-such-revision"}),
            &Context::default(),
        )
        .await
        .expect("a tool failure is an envelope")
        .envelope;
    assert_eq!(missing["meta"]["isError"], true, "{missing}");
    assert!(
        missing["data"][0]["text"]
            .as_str()
            .unwrap()
            .contains("no-such-revision")
    );
    common::assert_valid_envelope(&missing);
}
