//! `envelope call --limit / --no-offload / --store / --redact`: the envelope of a real
//! command operation through the shaping pipeline — within the limit (newline counted),
//! valid for `envelope validate`, the full payload one `envelope artifact get` away.

mod common;

use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

/// `rows.big`: 3,000 rows (about 120 KB); `rows.secret`: a payload holding a token.
const REGISTRY: &str = r#"
[commands.rows.big]
command = ["python3", "-c", "import json; print(json.dumps({'rows': [{'i': i, 'name': 'row number %d' % i} for i in range(3000)]}))"]

[commands.rows.secret]
command = ["python3", "-c", "import json; print(json.dumps({'user': 'ada', 'token': 'ghp_' + 'a1B2c3D4e5' * 4}))"]
"#;

fn registry() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("envelope.toml"), REGISTRY).unwrap();
    dir
}

fn envelope_in(dir: &Path, args: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_envelope"));
    cmd.args(args)
        .current_dir(dir)
        .env_remove("ENVELOPE_STORE")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    common::feed(cmd.spawn().unwrap(), b"")
}

fn ok_line(out: &Output) -> (Vec<u8>, Value) {
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let value = serde_json::from_slice(&out.stdout).unwrap();
    (out.stdout.clone(), value)
}

/// `envelope validate` of `bytes` passes, as operations.
fn assert_valid(dir: &Path, bytes: &[u8]) {
    let file = dir.join("out.json");
    std::fs::write(&file, bytes).unwrap();
    let out = envelope_in(dir, &["validate", file.to_str().unwrap()]);
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && said.contains("operations"),
        "{said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_big_payload_is_offloaded_and_the_envelope_fits() {
    let dir = registry();
    let (_, whole) = ok_line(&envelope_in(dir.path(), &["call", "rows.big"]));
    assert_eq!(whole["data"]["rows"].as_array().unwrap().len(), 3000);

    let store = dir.path().join("store");
    let (bytes, shaped) = ok_line(&envelope_in(
        dir.path(),
        &[
            "call",
            "rows.big",
            "--limit",
            "1500",
            "--store",
            store.to_str().unwrap(),
        ],
    ));
    assert!(bytes.len() <= 1500, "{} bytes", bytes.len());
    assert!(bytes.ends_with(b"\n"));
    assert_valid(dir.path(), &bytes);
    assert_eq!(shaped["meta"]["operationId"], "rows.big");
    let digest = shaped["meta"]["artifact"]
        .as_str()
        .expect("an artifact digest");
    // The full payload, one read away.
    let out = envelope_in(
        dir.path(),
        &[
            "artifact",
            "get",
            digest,
            "--store",
            store.to_str().unwrap(),
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stored: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(stored, whole["data"]);
}

#[test]
fn without_offload_the_payload_is_cut_and_says_so() {
    let dir = registry();
    let (bytes, shaped) = ok_line(&envelope_in(
        dir.path(),
        &["call", "rows.big", "--limit", "1500", "--no-offload"],
    ));
    assert!(bytes.len() <= 1500, "{} bytes", bytes.len());
    assert_valid(dir.path(), &bytes);
    let kept = shaped["data"]["rows"].as_array().unwrap().len();
    assert!(kept > 0 && kept < 3000, "{kept}");
    assert_eq!(shaped["meta"]["budget"]["truncated"], true);
    assert_eq!(shaped["meta"]["budget"]["cuts"][0]["total"], 3000);
    assert!(
        !dir.path().join(".envelope").exists(),
        "no store is written"
    );
}

#[test]
fn a_small_result_under_the_limit_is_unchanged() {
    let dir = registry();
    let (whole, mut a) = ok_line(&envelope_in(dir.path(), &["call", "rows.secret"]));
    let (limited, mut b) = ok_line(&envelope_in(
        dir.path(),
        &["call", "rows.secret", "--limit", "100000", "--no-offload"],
    ));
    // Two calls, two timestamps (of the same number of digits): otherwise the same bytes.
    assert_eq!(whole.len(), limited.len());
    a["meta"]["timestamp"] = Value::Null;
    b["meta"]["timestamp"] = Value::Null;
    assert_eq!(a, b);
    assert!(b["meta"].get("budget").is_none());
}

#[test]
fn redact_masks_the_token() {
    let dir = registry();
    let (plain, _) = ok_line(&envelope_in(dir.path(), &["call", "rows.secret"]));
    assert!(String::from_utf8_lossy(&plain).contains("ghp_a1B2"));
    let (bytes, masked) = ok_line(&envelope_in(
        dir.path(),
        &["call", "rows.secret", "--redact"],
    ));
    assert!(
        !String::from_utf8_lossy(&bytes).contains("ghp_a1B2"),
        "{masked}"
    );
    assert_eq!(masked["data"]["user"], "ada");
    assert_valid(dir.path(), &bytes);
}

#[test]
fn a_limit_too_small_prints_nothing_and_says_why() {
    let dir = registry();
    let out = envelope_in(
        dir.path(),
        &["call", "rows.big", "--limit", "40", "--no-offload"],
    );
    assert_ne!(out.status.code(), Some(0));
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("40"), "{said}");
}

#[test]
fn store_flags_need_a_limit() {
    let dir = registry();
    for args in [
        &["call", "rows.big", "--store", "x"][..],
        &["call", "rows.big", "--no-offload"],
    ] {
        let out = envelope_in(dir.path(), args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("--limit"),
            "{args:?}"
        );
    }
}

/// `--limit-tokens`: the printed line, its newline counted, is at most the limit as the
/// tokenizer counts it, and says so in `meta.budget`; with `--limit` too, both hold.
#[test]
fn a_token_limit_holds_on_the_printed_line() {
    use envelope::tokens::Tokenizer;
    let dir = registry();
    for (args, tokenizer) in [
        (
            &["call", "rows.big", "--limit-tokens", "400"][..],
            "o200k_base",
        ),
        (
            &[
                "call",
                "rows.big",
                "--limit-tokens",
                "400",
                "--tokenizer",
                "cl100k_base",
            ][..],
            "cl100k_base",
        ),
        (
            &[
                "call",
                "rows.big",
                "--limit-tokens",
                "2000",
                "--limit",
                "1500",
                "--no-offload",
            ][..],
            "o200k_base",
        ),
    ] {
        let (bytes, shaped) = ok_line(&envelope_in(dir.path(), args));
        let line = String::from_utf8(bytes.clone()).unwrap();
        assert!(line.ends_with('\n'));
        let limit: usize = args[3].parse().unwrap();
        let count = Tokenizer::by_name(tokenizer).unwrap().count(&line);
        assert!(count <= limit, "{args:?}: {count} tokens");
        assert!(
            count >= limit / 2 || bytes.len() > 1400,
            "{args:?}: {count} tokens"
        );
        assert_eq!(shaped["meta"]["budget"]["tokenLimit"], limit, "{args:?}");
        assert_eq!(shaped["meta"]["budget"]["tokenizer"], tokenizer, "{args:?}");
        if args.contains(&"--limit") {
            assert!(bytes.len() <= 1500, "{} bytes", bytes.len());
        }
        assert_valid(dir.path(), &bytes);
    }
    // Too small, and an unknown tokenizer: nothing printed, the reason said.
    let out = envelope_in(dir.path(), &["call", "rows.big", "--limit-tokens", "5"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    assert!(String::from_utf8_lossy(&out.stderr).contains("budget.too-small"));
    let out = envelope_in(
        dir.path(),
        &[
            "call",
            "rows.big",
            "--limit-tokens",
            "400",
            "--tokenizer",
            "nope",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("known: o200k_base"));
}

/// `envelope shape --limit-tokens` on a file: the output with its newline within the limit.
#[test]
fn shape_holds_a_token_limit_with_its_newline() {
    use envelope::tokens::Tokenizer;
    let dir = tempfile::tempdir().unwrap();
    let rows: Vec<Value> = (0..2000)
        .map(|i| serde_json::json!({"id": i, "text": "ᚠ 1234567 ﷽ word ".repeat(3)}))
        .collect();
    let file = dir.path().join("big.json");
    let doc = serde_json::json!({"content": [], "structuredContent": {"rows": rows}});
    std::fs::write(&file, serde_json::to_vec(&doc).unwrap()).unwrap();
    for limit in [150usize, 1000, 6000] {
        let out = envelope_in(
            dir.path(),
            &[
                "shape",
                "--no-offload",
                "--limit-tokens",
                &limit.to_string(),
                file.to_str().unwrap(),
            ],
        );
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8(out.stdout).unwrap();
        let count = Tokenizer::O200kBase.count(&text);
        assert!(
            count <= limit && count * 10 >= limit * 7,
            "{limit}: {count} tokens"
        );
    }
}
