//! `convert --report` names what the target really drops: a ctxo document's `_meta` counts
//! have no place in another format's budget marker.

mod common;
use common::run;

use std::process::Output;

use serde_json::Value;

/// The `reason` of every `budget` entry of the loss report on stderr.
fn budget_losses(out: &Output) -> Vec<String> {
    let stderr = String::from_utf8_lossy(&out.stderr);
    let report: Value = serde_json::from_str(stderr.lines().last().unwrap()).unwrap();
    report["lost"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["field"] == "budget")
        .map(|l| l["reason"].as_str().unwrap().to_string())
        .collect()
}

const TARGETS: [&str; 5] = [
    "mcp",
    "tool-envelope-v1",
    "operations",
    "protocol-v1",
    "tool-result-envelope",
];

#[test]
fn a_truncated_ctxo_document_reports_its_item_counts_as_dropped() {
    let rows: Vec<Value> = (1..=30).map(|i| serde_json::json!({"id": i})).collect();
    let payload = serde_json::json!({"results": rows}).to_string();
    let ctxo = run(
        &["wrap", "--format", "ctxo", "--limit", "250", "-"],
        payload.as_bytes(),
    )
    .stdout;
    let doc: Value = serde_json::from_slice(&ctxo).unwrap();
    assert_eq!(doc["_meta"]["returnedItems"], 9);
    for to in TARGETS {
        let out = run(
            &[
                "convert",
                "--from",
                "ctxo",
                "--to",
                to,
                "--report",
                "--ts",
                "2026-07-04T00:00:00Z",
                "-",
            ],
            &ctxo,
        );
        assert!(out.status.success(), "{to}");
        let converted = String::from_utf8(out.stdout.clone()).unwrap();
        // The marker keeps truncated, totalBytes and the hint; the counts are gone (in
        // tool-envelope-v1 the marker is inside the base64 block)...
        if to != "tool-envelope-v1" {
            assert!(
                converted.contains("\"totalBytes\":304"),
                "{to}: {converted}"
            );
        }
        assert!(!converted.contains("returnedItems"), "{to}: {converted}");
        // ...and the report says so, with their values.
        let lost = budget_losses(&out);
        assert_eq!(lost.len(), 1, "{to}: {lost:?}");
        assert!(
            lost[0].contains("totalItems 30") && lost[0].contains("returnedItems 9"),
            "{to}: {lost:?}"
        );
    }
    // ctxo to ctxo drops nothing.
    let same = run(
        &["convert", "--from", "ctxo", "--to", "ctxo", "--report", "-"],
        &ctxo,
    );
    assert!(budget_losses(&same).is_empty());
    assert_eq!(same.stdout, ctxo);
}

#[test]
fn an_untruncated_ctxo_document_reports_its_whole_meta_as_dropped() {
    let ctxo = std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/ctxo.json"),
    )
    .unwrap();
    for to in TARGETS {
        let out = run(
            &[
                "convert",
                "--from",
                "ctxo",
                "--to",
                to,
                "--report",
                "--ts",
                "2026-07-04T00:00:00Z",
                "-",
            ],
            &ctxo,
        );
        assert!(out.status.success(), "{to}");
        assert!(
            !String::from_utf8_lossy(&out.stdout).contains("totalBytes"),
            "{to}"
        );
        let lost = budget_losses(&out);
        assert_eq!(lost.len(), 1, "{to}: {lost:?}");
        assert!(
            lost[0].contains("totalItems 2")
                && lost[0].contains("returnedItems 2")
                && lost[0].contains("truncated false")
                && lost[0].contains("totalBytes 70"),
            "{to}: {lost:?}"
        );
    }
}
