//! Error ids: one catalogue (docs/errors.md), one dotted style, the same id for the same
//! failure in every command; flags that do not apply are refused; shape ends its output
//! with a newline.

mod common;
use common::run;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The ids in the table of docs/errors.md.
fn catalogue() -> BTreeSet<String> {
    let text = std::fs::read_to_string(root().join("docs/errors.md")).unwrap();
    text.lines()
        .filter_map(|line| line.strip_prefix("| `"))
        .map(|rest| rest.split('`').next().unwrap().to_string())
        .collect()
}

/// `domain.name`, lower case, words joined by `-` (the style of the validation rule ids).
fn is_dotted(id: &str) -> bool {
    let Some((domain, name)) = id.split_once('.') else {
        return false;
    };
    let word = |w: &str| {
        !w.is_empty()
            && w.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
    };
    word(domain) && name.split(['-', '.']).all(word)
}

/// The string literals that follow each `needle` in `text` (rustfmt may break the line
/// after the parenthesis).
fn literals_after(text: &str, needle: &str) -> Vec<String> {
    text.match_indices(needle)
        .filter_map(|(at, _)| {
            let rest = text[at + needle.len()..].trim_start();
            let rest = rest.strip_prefix('"')?;
            Some(rest.split('"').next().unwrap().to_string())
        })
        .collect()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Every id the binary gives its own failures: `Failure::usage("…"`, `Failure::invalid("…"`,
/// the constants they use and the `error[…]` lines written directly.
fn cli_ids() -> BTreeSet<String> {
    let mut files = Vec::new();
    rust_files(&root().join("crates/envelope-cli/src"), &mut files);
    let mut ids = BTreeSet::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        for needle in [
            "Failure::usage(",
            "Failure::invalid(",
            "const NOT_APPLICABLE: &str =",
        ] {
            ids.extend(literals_after(&text, needle));
        }
        for (at, _) in text.match_indices("error[") {
            let id: String = text[at + 6..].chars().take_while(|&c| c != ']').collect();
            if id
                .chars()
                .all(|c| c.is_ascii_lowercase() || c == '.' || c == '-')
            {
                ids.insert(id);
            }
        }
    }
    ids.remove(""); // `error[{id}]` in the constructors themselves
    ids
}

/// The codes written in the `code()` match of an error type's source.
fn codes_in(path: &str) -> BTreeSet<String> {
    let text = std::fs::read_to_string(root().join(path)).unwrap();
    literals_after(&text, "=> ").into_iter().collect()
}

#[test]
fn the_catalogue_lists_every_id_and_each_is_dotted() {
    let documented = catalogue();
    for id in &documented {
        assert!(is_dotted(id), "{id} is not dotted like the rule ids");
    }
    let library: BTreeSet<String> = envelope::Error::CODES
        .iter()
        .map(|c| c.to_string())
        .collect();
    let store: BTreeSet<String> = envelope_store::StoreError::CODES
        .iter()
        .map(|c| c.to_string())
        .collect();
    // The constants list what `code()` returns.
    assert_eq!(library, codes_in("crates/envelope/src/error.rs"));
    assert_eq!(store, codes_in("crates/envelope-store/src/error.rs"));
    let serve: BTreeSet<String> = envelope_serve::Error::CODES
        .iter()
        .map(|c| c.to_string())
        .collect();
    assert_eq!(serve, codes_in("crates/envelope-serve/src/error.rs"));
    let mut every: BTreeSet<String> = cli_ids();
    every.extend(library);
    every.extend(store);
    every.extend(serve);
    assert_eq!(
        documented, every,
        "docs/errors.md must list exactly the ids the tool can print"
    );
    // The ids that name a defect `validate` also finds are its rule ids.
    for id in [
        "json.syntax",
        "json.eof",
        "json.depth",
        "text.utf8",
        "text.bom",
    ] {
        assert!(envelope::validate::rule(id).is_ok(), "{id}");
    }
}

/// The id of an `envelope: error[ID]: …` line, checking the line's form.
fn error_id(out: &Output) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr);
    let line = stderr
        .lines()
        .find(|l| l.starts_with("envelope: error["))
        .unwrap_or_else(|| panic!("no error line in {stderr:?}"));
    let id = line["envelope: error[".len()..].split(']').next().unwrap();
    assert!(is_dotted(id), "{line}");
    assert!(catalogue().contains(id), "{id} is not in docs/errors.md");
    id.to_string()
}

/// The rule ids of the findings of `validate --json`.
fn rules(out: &Output) -> Vec<String> {
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["rule"].as_str().unwrap().to_string())
        .collect()
}

/// The message of an `envelope: error[ID]: …` line without the id and the location:
/// `invalid JSON (line 1 column 1, byte 0): empty input…` → `empty input…`.
fn error_message(out: &Output) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr);
    let line = stderr
        .lines()
        .find(|l| l.starts_with("envelope: error["))
        .unwrap_or_else(|| panic!("no error line in {stderr:?}"));
    let text = line.split_once("]: ").unwrap().1;
    match text.split_once("): ") {
        Some((_, message)) if text.starts_with("invalid JSON (") => message.to_string(),
        _ => text.to_string(),
    }
}

/// The message of the first `validate --json` finding with rule `id`.
fn finding_message(out: &Output, id: &str) -> String {
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == id)
        .and_then(|f| f["message"].as_str())
        .unwrap_or_else(|| panic!("no {id} finding in {report}"))
        .to_string()
}

#[test]
fn the_same_bad_input_has_the_same_id_in_every_command() {
    let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
    let cases: [(&str, &[u8]); 9] = [
        ("json.eof", b""),
        ("json.eof", b" \n "),
        ("json.syntax", b"{\"content\": [1,,]}"),
        ("json.eof", b"{\"content\": [{\"type\":"),
        ("json.depth", deep.as_bytes()),
        ("text.utf8", b"{\"content\": \"\xff\xfe\"}"),
        ("text.bom", b"\xEF\xBB\xBF{\"content\": []}"),
        ("text.trailing-data", b"{\"content\": []} x"),
        ("format.undetected", b"{\"nothing\": \"known\"}"),
    ];
    let commands: [&[&str]; 6] = [
        &["detect", "-"],
        &["convert", "--to", "mcp", "-"],
        &["unwrap", "-"],
        &["shape", "--no-offload", "-"],
        &[
            "shape",
            "--no-offload",
            "--limit",
            "100",
            "--format",
            "ctxo",
            "-",
        ],
        &["wrap", "--format", "mcp", "-"],
    ];
    for (id, input) in cases {
        // One wording too: every command's message, and validate's finding, for the JSON
        // defects they all find (format.undetected is not a finding of validate).
        let mut wordings = std::collections::BTreeMap::new();
        for args in commands {
            if id == "format.undetected" && args[0] == "wrap" {
                continue; // any JSON is a payload to wrap
            }
            let out = run(args, input);
            assert_eq!(out.status.code(), Some(1), "{args:?} {id}");
            assert!(out.stdout.is_empty(), "{args:?} {id}");
            assert_eq!(error_id(&out), id, "{args:?}");
            wordings
                .entry(error_message(&out))
                .or_insert_with(Vec::new)
                .push(args[0]);
        }
        let out = run(&["validate", "--json", "-"], input);
        assert_eq!(out.status.code(), Some(1), "validate {id}");
        assert!(
            rules(&out).contains(&id.to_string()),
            "validate {id}: {:?}",
            rules(&out)
        );
        assert_eq!(error_id(&out), "validate.invalid");
        if id.starts_with("json.") || id == "text.trailing-data" {
            wordings
                .entry(finding_message(&out, id))
                .or_insert_with(Vec::new)
                .push("validate");
        }
        assert_eq!(wordings.len(), 1, "{id} {input:?}: {wordings:#?}");
    }
}

#[test]
fn store_and_usage_failures_have_ids() {
    let store = std::env::temp_dir().join(format!("envelope-errors-{}", std::process::id()));
    let store = store.to_str().unwrap();
    let digest = format!("sha256:{}", "0".repeat(64));
    let cases: [(&[&str], i32, &str); 10] = [
        (
            &["artifact", "--store", store, "get", "sha256:xyz"],
            1,
            "store.invalid-digest",
        ),
        (
            &[
                "artifact",
                "--store",
                store,
                "get",
                "envelope://artifact/sha256/xyz",
            ],
            1,
            "store.invalid-digest",
        ),
        (
            &["artifact", "--store", store, "verify", "nope"],
            1,
            "store.invalid-digest",
        ),
        (
            &["artifact", "--store", store, "get", &digest],
            1,
            "store.not-found",
        ),
        (&["convert", "--to", "bogus", "-"], 2, "format.unknown"),
        (&["validate", "--format", "bogus", "-"], 2, "format.unknown"),
        (&["shape", "--format", "bogus", "-"], 2, "format.unknown"),
        (&["detect", "/no/such/file"], 2, "input.unreadable"),
        (&["detect", "--no-such-flag"], 2, "usage.invalid"),
        (
            &["wrap", "--format", "mcp", "--ts", "yesterday", "-"],
            2,
            "usage.bad-value",
        ),
    ];
    for (args, exit, id) in cases {
        let out = run(args, b"{}");
        assert_eq!(out.status.code(), Some(exit), "{args:?}");
        assert_eq!(error_id(&out), id, "{args:?}");
    }
    let _ = std::fs::remove_dir_all(store);
}

#[test]
fn flags_that_do_not_apply_are_refused() {
    let payload = br#"{"rows":[1,2,3]}"#;
    let mcp = run(&["wrap", "--format", "mcp", "-"], payload).stdout;
    let refused: [(&[&str], &[u8], &str); 9] = [
        (
            &["convert", "--to", "mcp", "--limit", "100", "-"],
            &mcp,
            "--limit",
        ),
        (
            &["wrap", "--format", "operations", "--limit", "100", "-"],
            payload,
            "--limit",
        ),
        (
            &["convert", "--to", "ctxo", "--dual-emit", "-"],
            &mcp,
            "--dual-emit",
        ),
        (
            &["wrap", "--format", "mcp", "--indented", "-"],
            payload,
            "--indented",
        ),
        (&["validate", "--line-cap", "10", "-"], &mcp, "--line-cap"),
        (
            &[
                "validate",
                "--format",
                "ctxo",
                "--output-schema",
                "s.json",
                "-",
            ],
            &mcp,
            "--output-schema",
        ),
        (
            &[
                "validate",
                "--format",
                "ctxo",
                "--mcp-revision",
                "2025-06-18",
                "-",
            ],
            &mcp,
            "--mcp-revision",
        ),
        (
            &["shape", "--no-offload", "--store", "x", "-"],
            &mcp,
            "--store",
        ),
        (
            &["shape", "--no-offload", "--inline-threshold", "5", "-"],
            &mcp,
            "--inline-threshold",
        ),
    ];
    for (args, input, flag) in refused {
        let out = run(args, input);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}");
        assert_eq!(error_id(&out), "usage.not-applicable", "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains(flag) && stderr.contains("applies only")
                || stderr.contains("does not apply"),
            "{stderr}"
        );
    }
    // A detected format without an output: refused after detection, not ignored.
    let schema = std::env::temp_dir().join(format!(
        "envelope-errors-schema-{}.json",
        std::process::id()
    ));
    std::fs::write(&schema, br#"{"type":"object"}"#).unwrap();
    let schema = schema.to_str().unwrap();
    let ctxo = std::fs::read(root().join("examples/ctxo.json")).unwrap();
    let out = run(&["validate", "--output-schema", schema, "-"], &ctxo);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(error_id(&out), "usage.not-applicable");
    // Where they apply, they work.
    let applied: [(&[&str], &[u8]); 6] = [
        (&["convert", "--to", "ctxo", "--limit", "100", "-"], &mcp),
        (
            &["wrap", "--format", "tool-envelope-v1", "--dual-emit", "-"],
            payload,
        ),
        (
            &[
                "wrap",
                "--format",
                "tool-result-envelope",
                "--indented",
                "-",
            ],
            payload,
        ),
        (&["validate", "--ndjson", "--line-cap", "1000", "-"], &mcp),
        (&["validate", "--output-schema", schema, "-"], &mcp),
        (
            &[
                "shape",
                "--inline-threshold",
                "5",
                "--store",
                store_dir(),
                "-",
            ],
            &mcp,
        ),
    ];
    for (args, input) in applied {
        let out = run(args, input);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

fn store_dir() -> &'static str {
    let dir = std::env::temp_dir().join(format!("envelope-errors-store-{}", std::process::id()));
    Box::leak(dir.to_string_lossy().into_owned().into_boxed_str())
}

#[test]
fn shape_ends_its_output_with_a_newline_within_the_limit() {
    let items: Vec<Value> = (0..300).map(|i| serde_json::json!({"id": i})).collect();
    let payload = serde_json::json!({"results": items}).to_string();
    for format in [
        "tool-envelope-v1",
        "ctxo",
        "operations",
        "protocol-v1",
        "tool-result-envelope",
        "mcp",
    ] {
        let doc = run(
            &[
                "wrap",
                "--format",
                format,
                "--ts",
                "2026-07-04T00:00:00Z",
                "-",
            ],
            payload.as_bytes(),
        )
        .stdout;
        let shaped = run(&["shape", "--no-offload", "-"], &doc);
        assert!(shaped.status.success(), "{format}");
        assert!(
            shaped.stdout.ends_with(b"}\n") || shaped.stdout.ends_with(b"]\n"),
            "{format}"
        );
        // The smallest output the error names (newline counted) is exactly what fits.
        let too_small = run(&["shape", "--no-offload", "--limit", "10", "-"], &doc);
        assert_eq!(error_id(&too_small), "budget.too-small", "{format}");
        let stderr = String::from_utf8_lossy(&too_small.stderr);
        assert!(stderr.contains("fits in 10 bytes"), "{stderr}");
        let smallest: usize = stderr
            .split("the smallest is ")
            .nth(1)
            .unwrap()
            .split(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        for limit in [smallest, smallest + 40, 1000] {
            let out = run(
                &["shape", "--no-offload", "--limit", &limit.to_string(), "-"],
                &doc,
            );
            assert!(
                out.status.success(),
                "{format} {limit}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            assert!(
                out.stdout.len() <= limit,
                "{format}: {} > {limit}",
                out.stdout.len()
            );
            assert!(
                out.stdout.ends_with(b"\n") && !out.stdout.ends_with(b"\n\n"),
                "{format}"
            );
        }
        let below = run(
            &[
                "shape",
                "--no-offload",
                "--limit",
                &(smallest - 1).to_string(),
                "-",
            ],
            &doc,
        );
        assert_eq!(below.status.code(), Some(1), "{format}");
    }
}

#[test]
fn nesting_past_the_limit_beyond_detects_window_is_json_depth_too() {
    // detect reads a document over its 16 MiB window as a stream: the same id and words.
    let input = format!(
        "{{\"pad\":\"{}\",\"a\":{}{}}}",
        "x".repeat(17 << 20),
        "[".repeat(200),
        "]".repeat(200)
    );
    let small = format!("{}{}", "[".repeat(200), "]".repeat(200));
    let expected = error_message(&run(&["detect", "-"], small.as_bytes()));
    let out = run(&["detect", "-"], input.as_bytes());
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(error_id(&out), "json.depth");
    assert_eq!(error_message(&out), expected);
}

#[test]
fn usage_errors_are_one_line_with_their_tip_and_usage() {
    let cases: [(&[&str], &[&str]); 6] = [
        (
            &["detect", "--bogus"],
            &["'--bogus'", "tip: ", "usage: envelope detect"],
        ),
        (&["convert"], &["--to <ID>", "usage: envelope convert"]),
        (&["bogus"], &["'bogus'", "usage: envelope <COMMAND>"]),
        (&["shape", "--limit", "x"], &["'x'", "--limit"]),
        (
            &["convert", "--to", "mcp", "--tos", "x"],
            &["'--tos'", "'--to'"],
        ),
        (&["proxy", "--timeout"], &["--timeout"]),
    ];
    for (args, parts) in cases {
        let out = run(args, b"");
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.ends_with('\n'), "{args:?}: {stderr:?}");
        assert!(
            stderr.starts_with("envelope: error[usage.invalid]: "),
            "{args:?}: {stderr}"
        );
        assert!(!stderr.contains("For more information"), "{stderr}");
        for part in parts {
            assert!(stderr.contains(part), "{args:?}: {part} not in {stderr}");
        }
    }
}
