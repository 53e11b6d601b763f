//! `envelope proxy` in front of a real SQLite MCP server (PyPI `sqlite-mcp-server`, installed
//! by scripts/install-mcp-tools.sh into a venv of its own) over 100,000 rows, driven by the
//! Python SDK client: the cut result's notice holds the facts of the records — how many,
//! their fields and types, the first ones — and its calls work as written: the query counts
//! what SQL counts, the read-on call returns the next rows.

mod common;

#[path = "../../envelope-mcp/tests/common/tools.rs"]
mod tools;

use std::path::Path;

use serde_json::{Value, json};

const ROWS: usize = 100_000;
const LIMIT: usize = 16_384;

/// A database of `ROWS` items: id, name, kind (file, dir, link in turn), score, path.
fn database(path: &Path) {
    let script = format!(
        r#"
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.execute("create table items (id integer primary key, name text, kind text, score real, path text)")
c.executemany("insert into items values (?,?,?,?,?)",
    [(i, f"item {{i}}", ["file", "dir", "link"][i % 3], (i % 1000) / 4, f"src/module_{{i % 97}}/file_{{i}}.rs")
     for i in range({ROWS})])
c.commit()
"#
    );
    let status = std::process::Command::new("python3")
        .args(["-c", &script])
        .arg(path)
        .status()
        .expect("python3 runs");
    assert!(status.success());
}

/// `envelope proxy --store STORE -- sqlite-mcp-server` as an argument list.
fn proxied(store: &Path) -> Vec<String> {
    vec![
        env!("CARGO_BIN_EXE_envelope").to_string(),
        "proxy".into(),
        "--store".into(),
        store.display().to_string(),
        "--limit".into(),
        LIMIT.to_string(),
        "--".into(),
        tools::tool("sqlite-venv/bin/sqlite-mcp-server")
            .display()
            .to_string(),
    ]
}

fn run(plan: &Value, command: &[String]) -> Value {
    tools::python_module("mcp");
    let report = common::python_client(&common::sdk_client_script(), &plan.to_string(), command);
    for (i, step) in report["steps"].as_array().unwrap().iter().enumerate() {
        assert!(step.get("error").is_none(), "step {i}: {step}");
    }
    report
}

/// The arguments of the call a notice shows after `label`.
fn call_after(notice: &str, label: &str) -> Value {
    let (_, rest) = notice
        .split_once(label)
        .unwrap_or_else(|| panic!("no {label:?} in {notice}"));
    let mut calls = serde_json::Deserializer::from_str(rest).into_iter::<Value>();
    calls.next().unwrap().unwrap()
}

#[test]
fn the_notice_of_100000_rows_holds_their_facts_and_its_calls_work() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("items.sqlite");
    database(&db);
    let store = dir.path().join("store");
    let query = json!({"db_path": db.display().to_string(), "query": "SELECT * FROM items"});
    let plan =
        json!([{"op": "list_tools"}, {"op": "call", "name": "execute_query", "args": query}]);
    let report = run(&plan, &proxied(&store));
    // The SDK checked structuredContent against the tool's outputSchema (else an error).
    let shaped = &report["steps"][1];
    assert_ne!(shaped["isError"], true, "{shaped}");
    let mut wire = shaped.clone();
    wire.as_object_mut()
        .unwrap()
        .retain(|k, _| !k.starts_with('_'));
    assert!(
        wire.to_string().len() <= LIMIT,
        "{}",
        wire.to_string().len()
    );

    // What the notice says: how many records, their fields and types.
    let notice = shaped["content"][0]["text"].as_str().unwrap();
    let rows = shaped["structuredContent"]["result"].as_array().unwrap();
    let kept = rows.len();
    assert!(kept > 20, "{kept} rows kept");
    assert!(
        notice.starts_with(&format!(
            "Output truncated to fit {LIMIT} bytes: /structuredContent/result kept {kept} of {ROWS} items."
        )),
        "{notice}"
    );
    assert!(
        notice.contains("/structuredContent/result: records; fields: id (number), name (string), kind (string), score (number), path (string)."),
        "{notice}"
    );
    // The first records, whole, in order (numbers as JSON means them: the server's `0.0`
    // is written `0`, as a JavaScript client reads it).
    assert_eq!(
        rows[1],
        json!({"id": 1, "name": "item 1", "kind": "dir", "score": 0.25, "path": "src/module_1/file_1.rs"})
    );
    assert_eq!(rows[0]["score"].as_f64(), Some(0.0));
    assert_eq!(rows[kept - 1]["id"], kept - 1);

    // Its calls, made as written through a second proxy on the same store.
    let group = call_after(notice, "Query: envelope_read ");
    assert_eq!(group["pointer"], "/structuredContent/result");
    let read_on = call_after(notice, "Read on: envelope_read ");
    assert_eq!(read_on["offset"], kept);
    let plan = json!([
        {"op": "call", "name": "envelope_read", "args": group},
        {"op": "call", "name": "envelope_read", "args": read_on},
    ]);
    let report = run(&plan, &proxied(&store));
    // Grouped by the field whose values repeat: what `GROUP BY kind` counts.
    let grouped = &report["steps"][0];
    let groups = &grouped["structuredContent"];
    assert_eq!(
        groups["items"],
        json!([{"kind": "dir", "count": 33_333}, {"kind": "file", "count": 33_334}, {"kind": "link", "count": 33_333}]),
        "{grouped}"
    );
    assert_eq!(groups["total"], 3, "{groups}");
    // The next rows, from where the cut stopped.
    let next = &report["steps"][1]["structuredContent"];
    assert_eq!(next["offset"], kept, "{next}");
    assert_eq!(next["total"], ROWS, "{next}");
    assert_eq!(next["items"][0]["id"], kept, "{next}");
    assert_eq!(next["items"][0]["name"], format!("item {kept}"), "{next}");
}
