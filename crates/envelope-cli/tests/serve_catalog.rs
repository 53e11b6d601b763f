//! `envelope_search` and `envelope_list` through `envelope serve` over Streamable HTTP with
//! two tokens (issue 28's isolation): each identity lists and finds only the results it
//! stored; an administrator sees all. The Python SDK client checks every answer against the
//! tool's `outputSchema`.

mod serve_common;

use serve_common::{free_port, sdk_client, spawn, step_ok, wait_until_listening};

use serde_json::{Value, json};

const ALICE: &str = "alice-token-0123456789";
const BOB: &str = "bob-token-0123456789ab";
const ROOT: &str = "root-token-0123456789a";

/// A registry with one command whose text result is 4,000 lines, line 2777 naming its input.
fn registry(dir: &std::path::Path) -> std::path::PathBuf {
    let script = "import sys, json; w = sys.stdin.read().strip(); w = json.loads(w) if w[:1] == chr(34) else w; print(chr(10).join('line %d %s' % (i, w if i == 2777 else 'filler words') for i in range(4000)))";
    let text = format!(
        r#"
[commands.text.lines]
command = ["python3", "-c", "{script}"]
type = "query"
description = "Many lines, one naming the input"
inputSchema = {{ type = "string" }}
"#
    );
    let path = dir.join("envelope.toml");
    std::fs::write(&path, text).unwrap();
    path
}

fn tokens(dir: &std::path::Path) -> std::path::PathBuf {
    let path = dir.join("tokens.json");
    let text = json!({
        ALICE: {"id": "alice", "scopes": []},
        BOB: {"id": "bob", "scopes": []},
        ROOT: {"id": "root", "scopes": ["admin"]},
    });
    std::fs::write(&path, text.to_string()).unwrap();
    path
}

fn hits(step: &Value) -> Vec<Value> {
    assert_ne!(step["isError"], true, "{step}");
    step["structuredContent"]["hits"]
        .as_array()
        .unwrap()
        .clone()
}

#[test]
fn two_tokens_each_list_and_search_only_their_own_results() {
    let dir = tempfile::tempdir().unwrap();
    let registry = registry(dir.path());
    let port = free_port();
    let listen = format!("127.0.0.1:{port}");
    let tokens = tokens(dir.path()).display().to_string();
    let command = vec![
        env!("CARGO_BIN_EXE_envelope").to_owned(),
        "serve".into(),
        "--registry".into(),
        registry.display().to_string(),
        "--store".into(),
        dir.path().join("store").display().to_string(),
        "--listen".into(),
        listen.clone(),
        "--tokens".into(),
        tokens,
    ];
    let _serve = spawn(&command);
    wait_until_listening(port);
    let url = format!("http://{listen}/mcp");
    let plan = |word: &str, other: &str| {
        json!([
            {"op": "list_tools"},
            {"op": "call", "name": "text_lines", "args": {"input": word}},
            {"op": "call", "name": "envelope_search", "args": {"query": word}},
            {"op": "call", "name": "envelope_search", "args": {"query": other}},
            {"op": "call", "name": "envelope_list", "args": {}},
            {"op": "call", "name": "envelope_read", "hit_from": 2, "args": {"limit": 40}},
        ])
    };
    let alice = sdk_client(
        &plan("alicorn", "bobcat"),
        std::slice::from_ref(&url),
        Some(ALICE),
    );
    let names = step_ok(&alice, 0)["tools"].to_string();
    assert!(
        names.contains("envelope_search") && names.contains("envelope_list"),
        "{names}"
    );
    assert!(
        step_ok(&alice, 1).to_string().len() < 17_000,
        "the result was cut"
    );
    let bob = sdk_client(
        &plan("bobcat", "alicorn"),
        std::slice::from_ref(&url),
        Some(BOB),
    );

    for (report, word) in [(&alice, "alicorn"), (&bob, "bobcat")] {
        let own = hits(step_ok(report, 2));
        assert_eq!(own.len(), 1, "{word}: {own:?}");
        assert_eq!(own[0]["text"], format!("line 2777 {word}"));
        assert_eq!(own[0]["before"], "line 2776 filler words");
        assert!(
            hits(step_ok(report, 3)).is_empty(),
            "{word} finds the other's result"
        );
        let listed = &step_ok(report, 4)["structuredContent"];
        assert_eq!(listed["total"], 1, "{word}: {listed}");
        assert_eq!(listed["results"][0]["tool"], "text_lines");
        assert_eq!(listed["results"][0]["uri"], own[0]["uri"]);
        let read = &step_ok(report, 5)["structuredContent"];
        assert!(
            read["text"]
                .as_str()
                .unwrap()
                .starts_with(&format!("line 2777 {word}\nline 2778")),
            "{read}"
        );
    }
    // The other's URI named outright: as if it were never stored.
    let alice_uri = hits(step_ok(&alice, 2))[0]["uri"].clone();
    let probe = json!([{"op": "call", "name": "envelope_search", "args": {"query": "alicorn", "uri": alice_uri}}]);
    let bob = sdk_client(&probe, std::slice::from_ref(&url), Some(BOB));
    let answer = &bob["steps"][0];
    assert_eq!(answer["isError"], true, "{answer}");
    assert!(
        answer.to_string().contains("is not in the store"),
        "{answer}"
    );

    // An administrator sees both.
    let all = json!([
        {"op": "call", "name": "envelope_list", "args": {}},
        {"op": "call", "name": "envelope_search", "args": {"query": "alicorn OR bobcat"}},
    ]);
    let root = sdk_client(&all, std::slice::from_ref(&url), Some(ROOT));
    assert_eq!(step_ok(&root, 0)["structuredContent"]["total"], 2);
    let found = &step_ok(&root, 1)["structuredContent"];
    assert_eq!(found["matched"], "any", "{found}");
    assert_eq!(found["hits"].as_array().unwrap().len(), 2, "{found}");
}
