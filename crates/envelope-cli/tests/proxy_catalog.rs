//! `envelope_list` and `envelope_search` through `envelope proxy` (issue 28), with the Python
//! SDK client (which checks each answer against the tool's `outputSchema`) and
//! server-filesystem, installed by scripts/install-mcp-tools.sh.

mod common;

#[path = "../../envelope-mcp/tests/common/tools.rs"]
mod tools;

use std::path::Path;

use serde_json::{Value, json};

/// Runs the Python SDK client with `plan` against `command`; its report.
fn sdk_client(plan: &Value, command: &[String]) -> Value {
    tools::python_module("mcp");
    common::python_client(&common::sdk_client_script(), &plan.to_string(), command)
}

fn step_ok(report: &Value, index: usize) -> &Value {
    let step = &report["steps"][index];
    assert!(step.get("error").is_none(), "step {index}: {step}");
    assert_ne!(step["isError"], true, "step {index}: {step}");
    step
}

fn filesystem(root: &Path) -> Vec<String> {
    vec![
        tools::node22().display().to_string(),
        tools::npm("@modelcontextprotocol/server-filesystem/dist/index.js")
            .display()
            .to_string(),
        root.display().to_string(),
    ]
}

#[test]
fn server_filesystem_result_is_listed_searched_and_read_at_the_hit() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let root = dir.path().join("files");
    std::fs::create_dir_all(&root).unwrap();
    let needle = "2026-11-27T12:31:37 ERROR payment gateway timeout for order 31337";
    let log: String = (0..40_000)
        .map(|i| match i {
            31_337 => format!("{needle}\n"),
            _ => format!(
                "2026-11-27T12:00:{:02} INFO worker w{} handled request {i}\n",
                i % 60,
                i % 7
            ),
        })
        .collect();
    let log_path = root.join("big.log");
    std::fs::write(&log_path, &log).unwrap();
    let proxy = vec![
        env!("CARGO_BIN_EXE_envelope").to_string(),
        "proxy".into(),
        "--store".into(),
        store.display().to_string(),
        "--".into(),
    ];
    let command: Vec<String> = proxy.into_iter().chain(filesystem(&root)).collect();
    let path = log_path.display().to_string();
    let plan = json!([
        {"op": "list_tools"},
        {"op": "call", "name": "read_text_file", "args": {"path": path}},
        {"op": "call", "name": "envelope_list", "args": {}},
        {"op": "call", "name": "envelope_search", "args": {"query": "gateway TIMEOUT"}},
        {"op": "call", "name": "envelope_read", "hit_from": 3, "args": {"limit": 200}},
        {"op": "call", "name": "envelope_search", "args": {"query": "\"no such phrase here\""}},
    ]);
    let report = sdk_client(&plan, &command);
    let tools: Vec<&str> = step_ok(&report, 0)["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    for name in ["envelope_read", "envelope_search", "envelope_list"] {
        assert!(tools.contains(&name), "{tools:?}");
    }
    let uri = step_ok(&report, 1)["content"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["type"] == "resource_link")
        .map(|b| b["uri"].as_str().unwrap().to_string())
        .expect("the cut result links the stored one");

    let listed = &step_ok(&report, 2)["structuredContent"];
    assert_eq!(listed["total"], 1, "{listed}");
    let entry = &listed["results"][0];
    assert_eq!(entry["uri"], uri.as_str());
    assert_eq!(entry["tool"], "read_text_file");
    assert_eq!(entry["kind"], "text");
    assert!(entry["size"].as_u64().unwrap() > log.len() as u64);
    // The digest of the canonical arguments, never the arguments themselves.
    let canonical = format!("{{\"path\":{}}}", Value::from(path.as_str()));
    let expected = format!("sha256:{}", sha256_hex(canonical.as_bytes()));
    assert_eq!(entry["arguments_digest"], expected.as_str());
    assert!(!listed.to_string().contains("big.log"), "{listed}");
    assert!(
        entry["summary"]
            .as_str()
            .unwrap()
            .starts_with("40000 lines: 2026-11-27T12:00:00 INFO"),
        "{entry}"
    );

    let found = &step_ok(&report, 3)["structuredContent"];
    assert_eq!(found["matched"], "all");
    let hit = &found["hits"][0];
    assert_eq!(hit["uri"], uri.as_str());
    assert_eq!(hit["text"], needle);
    assert_eq!(hit["pointer"], "/content/0/text");
    assert!(
        hit["before"]
            .as_str()
            .unwrap()
            .ends_with("handled request 31336"),
        "{hit}"
    );
    assert!(
        hit["after"]
            .as_str()
            .unwrap()
            .ends_with("handled request 31338"),
        "{hit}"
    );
    // The file's text is sent twice by server-filesystem (text and structuredContent): one hit.
    assert_eq!(found["hits"].as_array().unwrap().len(), 1, "{found}");

    // envelope_read at the hit's pointer and offset starts at the matching line.
    let read = &step_ok(&report, 4)["structuredContent"];
    let text = read["text"].as_str().unwrap();
    assert!(text.starts_with(needle), "{text}");
    assert_eq!(read["offset"], hit["offset"]);
    // The line's first character in the file (README's example shows this call).
    let offset = log.find(needle).map(|b| log[..b].chars().count()).unwrap();
    assert_eq!(hit["offset"], offset);

    let nothing = &step_ok(&report, 5)["structuredContent"];
    assert_eq!(nothing["hits"], json!([]));
    assert_eq!(nothing["more"], false);
    assert!(store.join("catalog.sqlite3").is_file());
}

/// SHA-256 of `bytes` as hex (the store's digest).
fn sha256_hex(bytes: &[u8]) -> String {
    envelope_store::Digest::of(bytes).hex()
}
