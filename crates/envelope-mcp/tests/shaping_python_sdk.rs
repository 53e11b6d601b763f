//! Shaped results as the Python MCP SDK client sees them: each parses as the SDK's
//! `CallToolResult` and passes the SDK's own output-schema check (`validate_tool_result`,
//! which `ClientSession.call_tool` runs on every result that is not an error).
//!
//! Needs `python3` with the `mcp` package (`bash scripts/install-mcp-tools.sh`); fails,
//! never skips, without it.

mod common;

use std::io::Write;
use std::process::{Command, Stdio};

use common::*;
use envelope_mcp::revision::Revision;
use envelope_mcp::shaping::{CallContext, ToolSettings, shape_result};
use serde_json::{Value, json};

/// Runs the checker on `entries`; one verdict per entry (`None`: accepted).
fn sdk_verdicts(entries: &[Value]) -> Vec<Option<String>> {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/python/check_results.py");
    let probe = Command::new("python3").args(["-c", "import mcp"]).output();
    assert!(
        probe.as_ref().is_ok_and(|o| o.status.success()),
        "python3 with the `mcp` package is missing: run `bash scripts/install-mcp-tools.sh` ({probe:?})"
    );
    let mut child = Command::new("python3")
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let input: String = entries.iter().map(|e| format!("{e}\n")).collect();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(output.status.success(), "the checker failed");
    let verdicts: Vec<Option<String>> = String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            (v["ok"] != true).then(|| v["error"].as_str().unwrap_or("").to_string())
        })
        .collect();
    assert_eq!(verdicts.len(), entries.len());
    verdicts
}

#[test]
fn the_python_sdk_accepts_every_shaped_result_and_refuses_a_dishonest_one() {
    let schemas = [
        rows_schema(),
        // Any cut of these breaks the schema: the shaped result must be an error result.
        json!({"type": "object", "properties": {"rows": {"type": "array", "minItems": 1000}}, "required": ["rows"]}),
        json!({"type": "object", "properties": {"rows": {"type": "array", "items": {"type": "object", "properties": {"name": {"enum": ["row 1 alpha beta gamma delta"]}}}}}}),
    ];
    let mut entries = Vec::new();
    let mut shaped = 0;
    let mut errors = 0;
    for seed in 1..=40u64 {
        let revision = [
            Revision::V2025_06_18,
            Revision::V2025_11_25,
            Revision::V2026_07_28,
        ][seed as usize % 3];
        let schema = &schemas[seed as usize % schemas.len()];
        let n = (seed * 97 % 1500) as usize;
        let rows: Vec<Value> = (0..n)
            .map(|i| json!({"id": i, "name": format!("row {i} alpha beta gamma delta"), "token": if i % 50 == 7 { json!(GITHUB_TOKEN) } else { json!(null) }}))
            .collect();
        let sc = json!({"rows": rows, "total": n});
        let result = json!({"content": [text(&sc.to_string())], "structuredContent": sc});
        let store = TempStore::new();
        let call = CallContext::new("rows", Some(schema), revision);
        let settings = ToolSettings {
            limit: 1_000 + (seed as usize * 613) % 15_000,
            ..ToolSettings::default()
        };
        let outcome = shape_result(
            result.to_string().as_bytes(),
            &call,
            &settings,
            &store.store,
        )
        .unwrap();
        // A result passed on unchanged is the upstream's own (a 7-row result under
        // `minItems: 1000` is refused by the SDK whether or not a proxy stands between):
        // what is checked here is what shaping made.
        if !outcome.changed {
            continue;
        }
        shaped += 1;
        let result: Value = serde_json::from_slice(&outcome.bytes).unwrap();
        errors += usize::from(result["isError"] == true);
        entries.push(json!({"name": "rows", "schema": schema, "result": result}));
    }
    assert!(shaped > 30, "most of these results are shaped: {shaped}");
    // Both kinds are checked: cuts the schema allows, and error results for those it does not.
    assert!(
        errors > 5 && shaped - errors > 5,
        "{errors} error results of {shaped}"
    );
    // A control: structuredContent that breaks the schema, which the SDK must refuse.
    entries.push(json!({"name": "rows", "schema": rows_schema(), "result": {"content": [], "structuredContent": {"rows": "cut"}}}));
    let verdicts = sdk_verdicts(&entries);
    let (control, shaped) = verdicts.split_last().unwrap();
    assert!(
        control
            .as_deref()
            .is_some_and(|e| e.contains("Invalid structured content")),
        "the control must be refused: {control:?}"
    );
    for (entry, verdict) in entries.iter().zip(shaped) {
        assert_eq!(verdict, &None, "{entry}");
    }
}
