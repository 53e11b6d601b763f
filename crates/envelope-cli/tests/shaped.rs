//! `envelope shape --limit` then `envelope unwrap`: the report names what the cut dropped,
//! and unwrap prints the payload the output kept, never the truncation notice (issue 12,
//! item 5 and the big-result loss report).

mod common;
use common::run;

use std::path::PathBuf;
use std::process::Output;

use serde_json::{Value, json};

fn ok(args: &[&str], stdin: &[u8]) -> Output {
    let out = run(args, stdin);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn big_result() -> Vec<u8> {
    std::fs::read(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/big-result.json"))
        .unwrap()
}

/// A store folder of this test's own, removed at the end.
struct TempStore(PathBuf);

impl TempStore {
    fn new(name: &str) -> Self {
        let dir =
            std::env::temp_dir().join(format!("envelope-shaped-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        TempStore(dir)
    }

    fn path(&self) -> &str {
        self.0.to_str().unwrap()
    }
}

impl Drop for TempStore {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn lost(stderr: &[u8]) -> Vec<String> {
    let report: Value = serde_json::from_slice(stderr).unwrap();
    report["lost"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["field"].as_str().unwrap().to_string())
        .collect()
}

/// The bug as reported: the text block "320 matches for \"handler\"" was dropped, and
/// `--report` said `"lost":[]` (with the default store, and without one).
#[test]
fn shape_with_a_limit_reports_the_text_block_it_drops() {
    let store = TempStore::new("report");
    let input = big_result();
    for extra in [vec!["--store", store.path()], vec!["--no-offload"]] {
        let mut args = vec!["shape", "--limit", "1500", "--report"];
        args.extend(&extra);
        args.push("-");
        let out = ok(&args, &input);
        assert!(out.stdout.len() <= 1501, "{}", out.stdout.len());
        assert!(!String::from_utf8_lossy(&out.stdout).contains("320 matches"));
        let lost = lost(&out.stderr);
        assert!(
            lost.contains(&"presentation".to_string()),
            "{extra:?}: {lost:?}"
        );
    }
    // Cut without a store, the report names the cut array as the notice does.
    let out = ok(
        &["shape", "--limit", "1500", "--report", "--no-offload", "-"],
        &input,
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let notice = doc["content"][0]["text"].as_str().unwrap();
    assert!(notice.contains("/matches kept"), "{notice}");
    assert!(lost(&out.stderr).contains(&"payload/matches".to_string()));
}

/// A text result (the notice and the text are both text blocks) and a structured one.
#[test]
fn unwrap_of_a_shaped_mcp_result_prints_the_kept_payload_not_the_notice() {
    let input = big_result();
    let whole: Value = serde_json::from_slice(&input).unwrap();
    let shaped = ok(&["shape", "--limit", "1500", "--no-offload", "-"], &input).stdout;
    let out = ok(&["unwrap", "-"], &shaped);
    let kept: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(kept["query"], whole["structuredContent"]["query"]);
    let matches = kept["matches"].as_array().unwrap();
    assert!(!matches.is_empty() && matches.len() < 320);
    assert_eq!(matches[0]["id"], 1);

    let input = json!({"content": [{"type": "text", "text": "t".repeat(900)}]}).to_string();
    // A part kept: the text, cut.
    let shaped = ok(&["shape", "--limit", "600", "-"], input.as_bytes()).stdout;
    assert!(String::from_utf8_lossy(&shaped).contains("Output truncated"));
    let out = ok(&["unwrap", "-"], &shaped);
    let text: Value = serde_json::from_slice(&out.stdout).unwrap();
    let text = text
        .as_str()
        .unwrap_or_else(|| panic!("not a text payload: {text}"));
    assert!(
        !text.is_empty() && text.bytes().all(|b| b == b't'),
        "{text}"
    );
    // Nothing kept: an error, not the notice as the payload (at every limit where the
    // notice is written and the text is not).
    let mut notices = 0;
    for limit in (150..400).step_by(10) {
        let shaped = ok(
            &["shape", "--limit", &limit.to_string(), "-"],
            input.as_bytes(),
        )
        .stdout;
        let doc: Value = serde_json::from_slice(&shaped).unwrap();
        if doc["content"].as_array().unwrap().iter().any(|b| {
            b["text"]
                .as_str()
                .is_some_and(|t| t.contains('t') && !t.contains(' '))
        }) {
            continue;
        }
        notices += usize::from(
            doc["content"][0]["text"]
                .as_str()
                .is_some_and(|t| t.contains("left out")),
        );
        let out = run(&["unwrap", "-"], &shaped);
        assert_eq!(
            out.status.code(),
            Some(1),
            "{}",
            String::from_utf8_lossy(&out.stdout)
        );
        assert!(out.stdout.is_empty());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("error[payload.left-out]"), "{stderr}");
    }
    assert!(notices > 0);
}
