//! The redaction corpus (`tests/data/secrets.json`, `tests/data/lookalikes.json`, written by
//! `tests/data/gen_corpus.py`; every value synthetic): each secret is masked wherever it
//! stands, and each look-alike comes out unchanged.
//!
//! Placements: the text alone, after other words in a line, as a `key: value` line, as a
//! JSON string value of a payload, inside escaped JSON in a log line, and in a long text
//! redacted a piece at a time (the MCP text block path).

use envelope::shape::redact::{redact_text, redact_value};
use serde_json::{Value, json};

#[derive(serde::Deserialize)]
struct Secret {
    text: String,
    /// What must be gone from the redacted text.
    secret: Vec<String>,
}

fn secrets() -> Vec<Secret> {
    serde_json::from_str(include_str!("data/secrets.json")).expect("secrets.json")
}

fn lookalikes() -> Vec<String> {
    serde_json::from_str(include_str!("data/lookalikes.json")).expect("lookalikes.json")
}

/// Every placement of `text`, each as the redaction's output (the text itself when nothing
/// was masked).
fn placements(text: &str) -> Vec<(&'static str, String)> {
    let masked = |t: String| redact_text(&t).map_or(t, |(m, _)| m);
    let in_value = |v: Value| {
        let mut v = v;
        redact_value(&mut v, "payload", &mut Vec::new());
        serde_json::to_string(&v).expect("JSON")
    };
    let escaped = serde_json::to_string(text).expect("a string");
    vec![
        ("alone", masked(text.to_string())),
        ("in a line", masked(format!("found: {text}\n"))),
        ("key: value", masked(format!("data: {text}"))),
        ("json value", in_value(json!({"data": text}))),
        (
            "escaped json",
            in_value(json!({"log": format!("event {{\"data\":{escaped}}} done")})),
        ),
    ]
}

/// The pieces of a secret that must be gone: its lines of 8 characters or more, as they
/// are and as JSON writes them.
fn must_vanish(secret: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in secret.lines().filter(|l| l.len() >= 8) {
        out.push(line.to_string());
        let escaped = serde_json::to_string(line).expect("a string");
        out.push(escaped[1..escaped.len() - 1].to_string());
    }
    out
}

#[test]
fn the_corpus_is_big_enough() {
    assert!(secrets().len() >= 200, "{}", secrets().len());
    assert!(lookalikes().len() >= 150, "{}", lookalikes().len());
}

#[test]
fn every_secret_is_masked_in_every_placement() {
    let mut failures = Vec::new();
    for secret in secrets() {
        for (placement, out) in placements(&secret.text) {
            for gone in secret.secret.iter().flat_map(|s| must_vanish(s)) {
                if out.contains(&gone) {
                    failures.push(format!("{placement}: {:?} -> {out:?}", secret.text));
                    break;
                }
            }
            if !out.contains("***") {
                failures.push(format!("{placement}: no mask: {:?}", secret.text));
            }
        }
        // A second pass finds nothing.
        if let Some((masked, _)) = redact_text(&secret.text) {
            assert_eq!(redact_text(&masked), None, "{masked:?}");
        }
    }
    assert!(
        failures.is_empty(),
        "{}\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn every_lookalike_is_kept_in_every_placement() {
    let mut failures = Vec::new();
    for text in lookalikes() {
        for (placement, out) in placements(&text) {
            let expected = match placement {
                "alone" => text.clone(),
                "in a line" => format!("found: {text}\n"),
                "key: value" => format!("data: {text}"),
                "json value" => serde_json::to_string(&json!({"data": text})).unwrap(),
                _ => {
                    let escaped = serde_json::to_string(&text).unwrap();
                    serde_json::to_string(
                        &json!({"log": format!("event {{\"data\":{escaped}}} done")}),
                    )
                    .unwrap()
                }
            };
            if out != expected {
                failures.push(format!("{placement}: {text:?} -> {out:?}"));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{}\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn secrets_and_lookalikes_together_in_one_long_text() {
    // One log: every look-alike, then every secret, each on its own lines.
    let mut log = String::new();
    for text in lookalikes() {
        log.push_str(&text);
        log.push('\n');
    }
    let secrets = secrets();
    for secret in &secrets {
        log.push_str("line: ");
        log.push_str(&secret.text);
        log.push('\n');
    }
    let (masked, _) = redact_text(&log).expect("secrets in the log");
    for secret in &secrets {
        for gone in secret.secret.iter().flat_map(|s| must_vanish(s)) {
            assert!(!masked.contains(&gone), "{:?}", secret.text);
        }
    }
    for text in lookalikes() {
        assert!(masked.contains(&text), "{text:?}");
    }
}

#[test]
fn values_under_secret_names_and_their_lookalikes() {
    let mut v = json!({
        "passwords": ["a1", "b2"],
        "db_pass": "zqDbPass1",
        "DB_PASS": "zqDbPass2",
        "password_hash": "$2b$12$zqHashHashHash",
        "identitytoken": "zqIdentity3",
        "auths": {"registry": {"identitytoken": "zqIdentity4"}},
        "pwd": "zqNotAPath5",
        "db_pw": "zqPw6",
        "access_tokens": ["zqAccess7"],
        "api_keys": {"a": "zqApi8"},
    });
    let mut report = Vec::new();
    redact_value(&mut v, "payload", &mut report);
    let out = v.to_string();
    assert!(!out.contains("zq"), "{out}");
    let keep = json!({
        "pwd": "/home/ann/x",
        "PWD": "~/work",
        "access-control-allow-credentials": "true",
        "Access-Control-Allow-Credentials": true,
        "withCredentials": true,
        "max_tokens": 4096,
        "input_tokens": 12,
        "tokens": 7,
        "token_count": 5,
        "pass": "/tmp/x",
        "db_pass": "~/secrets/db.txt",
        "pw": "not a name on its own",
        "bypass": "yes",
        "password": "",
    });
    let mut kept = keep.clone();
    let mut report = Vec::new();
    redact_value(&mut kept, "payload", &mut report);
    assert_eq!(kept, keep);
    assert!(report.is_empty(), "{report:?}");
}

/// An MCP result whose private key is split across two text blocks, through the pipeline.
fn split_key_result(log_lines: usize) -> (String, Vec<String>) {
    let body: Vec<String> = (0..6)
        .map(|i| format!("MIIEzq{i}AbCdEfGhIjKlMnOpQrStUvWxYz0123456789+/AbCdEfGhIjKlMnOp"))
        .collect();
    let first = format!(
        "{}key follows\n-----BEGIN RSA PRIVATE KEY-----\n{}\n",
        "a plain line of a log, nothing secret in it at all\n".repeat(log_lines),
        body[..3].join("\n")
    );
    let second = format!(
        "{}\n-----END RSA PRIVATE KEY-----\nand the log goes on",
        body[3..].join("\n")
    );
    let doc = json!({"content": [
        {"type": "text", "text": first},
        {"type": "text", "text": second},
    ]});
    (doc.to_string(), body)
}

#[test]
fn a_private_key_split_across_two_text_blocks_is_masked_on_both_sides() {
    use envelope::FormatId;
    use envelope::shape::Pipeline;
    // Short blocks, and a long first block (read a piece at a time, then handed to the
    // whole path).
    for log_lines in [1, 6000] {
        let (doc, body) = split_key_result(log_lines);
        for to in [FormatId::Mcp, FormatId::ProtocolV1] {
            let shaped = Pipeline::new(doc.as_bytes())
                .input_format(FormatId::Mcp)
                .output_format(to)
                .redact(true)
                .run()
                .unwrap_or_else(|e| panic!("{to}: {e}"));
            let out = String::from_utf8_lossy(&shaped.bytes);
            for line in &body {
                assert!(!out.contains(line.as_str()), "{to} {log_lines}: {line}");
            }
            assert!(out.contains("and the log goes on"), "{to} {log_lines}");
        }
    }
}
