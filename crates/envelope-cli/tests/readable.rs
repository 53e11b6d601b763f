//! What the binary writes is read back by it (issue 12, items 4 and 6): an output that
//! would be invalid is refused with exit 1 and nothing on stdout; `wrap` refuses flags that
//! would make an invalid envelope with exit 2, naming the flag; nesting around the one
//! depth limit (127 levels) is processed or refused with `json.depth`, in every command.

mod common;
use common::run;

use std::path::PathBuf;
use std::process::Output;

fn example(name: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    std::fs::read(path.join(name)).unwrap()
}

/// Exit `code`, nothing on stdout, and stderr containing each of `says`.
#[track_caller]
fn refused(out: &Output, code: i32, says: &[&str]) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(code), "stderr: {stderr}");
    assert!(
        out.stdout.is_empty(),
        "wrote {}",
        String::from_utf8_lossy(&out.stdout)
    );
    for s in says {
        assert!(stderr.contains(s), "{s:?} not in {stderr}");
    }
}

/// Whether a budget marker in `output` says the cut kept nothing at the root (a cut of
/// pointer `""` that kept 0): the payload was left out to fit the limit.
fn payload_left_out(output: &[u8]) -> bool {
    fn search(v: &serde_json::Value) -> bool {
        match v {
            serde_json::Value::Object(map) => {
                let root_left_out = map
                    .get("cuts")
                    .and_then(|c| c.as_array())
                    .is_some_and(|cuts| cuts.iter().any(|c| c["pointer"] == "" && c["kept"] == 0));
                root_left_out || map.values().any(search)
            }
            serde_json::Value::Array(items) => items.iter().any(search),
            _ => false,
        }
    }
    serde_json::from_slice(output).is_ok_and(|v| search(&v))
}

/// Exit 0, and stdout is valid (`envelope validate`) and detected as `format`; `unwrap`
/// prints its payload, or, only when its budget marker says the payload was left out,
/// fails with `payload.left-out` (nothing on stdout).
#[track_caller]
fn readable(out: &Output, format: &str) {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let detected = run(&["detect", "-"], &out.stdout);
    assert_eq!(String::from_utf8_lossy(&detected.stdout).trim(), format);
    let validated = run(&["validate", "-"], &out.stdout);
    assert!(
        validated.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&validated.stdout),
        String::from_utf8_lossy(&out.stdout)
    );
    let unwrapped = run(&["unwrap", "--from", format, "-"], &out.stdout);
    if payload_left_out(&out.stdout) {
        refused(&unwrapped, 1, &["payload.left-out"]);
    } else {
        assert!(
            unwrapped.status.success(),
            "{}",
            String::from_utf8_lossy(&unwrapped.stderr)
        );
    }
}

#[test]
fn wrap_refuses_flags_that_would_make_an_invalid_envelope() {
    let payload = br#"{"rows":[1,2]}"#;
    let cases: [(&[&str], &[&str]); 6] = [
        (
            &[
                "--format",
                "protocol-v1",
                "--ts",
                "2026-07-04T02:00:00+02:00",
            ],
            &["--ts", "UTC"],
        ),
        (
            &[
                "--format",
                "tool-result-envelope",
                "--ts",
                "2026-07-04T00:00:00-05:00",
            ],
            &["--ts", "UTC"],
        ),
        (
            &["--format", "protocol-v1", "--tool", "Get Weather"],
            &["--tool", "<group>/<name>"],
        ),
        (
            &["--format", "protocol-v1", "--meta", "command=search.index"],
            &["--meta command", "<group>/<name>"],
        ),
        (
            &[
                "--format",
                "tool-result-envelope",
                "--meta",
                "contentType=9",
            ],
            &["contentType", "0-5"],
        ),
        (
            &["--format", "operations", "--meta", "statusCode=700"],
            &["statusCode", "100-599"],
        ),
    ];
    for (flags, says) in cases {
        let args = [&["wrap"][..], flags, &["-"]].concat();
        refused(&run(&args, payload), 2, says);
    }
    // The same flags, valid: written and readable.
    for (format, flags) in [
        ("protocol-v1", &["--tool", "weather/get"][..]),
        ("protocol-v1", &["--ts", "2026-07-04T00:00:00Z"][..]),
        (
            "tool-result-envelope",
            &["--meta", "contentType=Object"][..],
        ),
        ("operations", &["--meta", "statusCode=201"][..]),
    ] {
        let args = [&["wrap", "--format", format][..], flags, &["-"]].concat();
        readable(&run(&args, payload), format);
    }
}

#[test]
fn an_output_that_would_be_invalid_is_refused_with_exit_1_and_nothing_written() {
    // A protocol-v1 error with a code outside the catalogue, carried through
    // tool-envelope-v1 (which has no catalogue): protocol-v1 cannot write it validly.
    let tev1 = run(
        &["convert", "--to", "tool-envelope-v1", "-"],
        &example("protocol-v1-error.json"),
    );
    readable(&tev1, "tool-envelope-v1");
    for command in [
        &["convert", "--to", "protocol-v1", "-"][..],
        &["shape", "--format", "protocol-v1", "--no-offload", "-"][..],
    ] {
        refused(
            &run(command, &tev1.stdout),
            1,
            &["error[output.invalid]", "pv1.error-code", "/error/code"],
        );
    }
}

#[test]
fn classes_that_were_invalid_are_now_written_valid() {
    let mcp_error = br#"{"content":[{"type":"text","text":"boom"}],"isError":true}"#;
    let pv1_error = example("protocol-v1-error.json");
    let cases: [(&[u8], &str); 6] = [
        // operations from an MCP error: `data` was missing.
        (mcp_error, "operations"),
        // error envelopes to ctxo (no `_meta`) and to tool-envelope-v1 (meta.tool).
        (mcp_error, "ctxo"),
        (&pv1_error, "ctxo"),
        (mcp_error, "tool-envelope-v1"),
        // a tool-envelope-v1 tool name that is no protocol-v1 command.
        (&example("tool-envelope-v1.json"), "protocol-v1"),
        (&example("ctxo.json"), "protocol-v1"),
    ];
    for (input, to) in cases {
        readable(&run(&["convert", "--to", to, "-"], input), to);
    }
    // protocol-v1 with a hard budget: `meta.budget` is part of the shape. At 600 bytes
    // not even the smallest cut of the payload fits (it was left out: `unwrap` says so),
    // at 900 some of it is kept (`unwrap` prints it).
    let big = example("big-result.json");
    for (limit, left_out) in [("600", true), ("900", false)] {
        let shaped = run(
            &[
                "shape",
                "--format",
                "protocol-v1",
                "--limit",
                limit,
                "--no-offload",
                "-",
            ],
            &big,
        );
        assert!(String::from_utf8_lossy(&shaped.stdout).contains(r#""budget":"#));
        assert_eq!(payload_left_out(&shaped.stdout), left_out, "at {limit}");
        readable(&shaped, "protocol-v1");
    }
}

fn nested(levels: usize) -> String {
    format!("{}1{}", "[".repeat(levels), "]".repeat(levels))
}

#[test]
fn every_command_reads_or_refuses_at_the_depth_limit_with_one_error() {
    // A payload of 127 levels is read; wrapped, it is one or two levels deeper.
    for format in [
        "tool-envelope-v1",
        "ctxo",
        "operations",
        "protocol-v1",
        "tool-result-envelope",
        "mcp",
    ] {
        for levels in [120, 125, 126, 127] {
            let out = run(
                &["wrap", "--format", format, "-"],
                nested(levels).as_bytes(),
            );
            if out.status.success() {
                readable(&out, format);
            } else {
                refused(&out, 1, &["error[json.depth]", "127 levels"]);
            }
        }
    }
    // 128 levels are refused on reading, by every command.
    let too_deep = nested(128);
    let wrapped = format!(r#"{{"data":{too_deep},"meta":{{"source":"local"}}}}"#);
    for (args, input) in [
        (&["wrap", "--format", "mcp", "-"][..], too_deep.as_str()),
        (&["convert", "--to", "mcp", "-"][..], wrapped.as_str()),
        (&["shape", "--no-offload", "-"][..], wrapped.as_str()),
        (
            &["shape", "--limit", "500", "--no-offload", "-"][..],
            wrapped.as_str(),
        ),
        (&["unwrap", "-"][..], wrapped.as_str()),
        (&["detect", "-"][..], wrapped.as_str()),
    ] {
        refused(
            &run(args, input.as_bytes()),
            1,
            &["error[json.depth]", "127 levels"],
        );
    }
}
