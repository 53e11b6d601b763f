//! `envelope shape --redact` through the built binary (issue 12 item 2): for every input
//! format, secrets planted in every channel the format has (payload values and keys,
//! embedded JSON and base64, presentation blocks, the MCP mirror and `_meta`, metadata
//! fields, unknown fields and their keys, the error) appear nowhere in stdout, in the
//! `--report`, or in the store folder, written in every output format; and the output is
//! still detected as its format and valid whenever the unredacted output is.

mod common;
use common::run as envelope;

#[path = "../../envelope/tests/redaction/leaks.rs"]
mod leaks;

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

const FORMATS: [&str; 6] = [
    "mcp",
    "ctxo",
    "operations",
    "protocol-v1",
    "tool-envelope-v1",
    "tool-result-envelope",
];

fn channels() -> (Vec<(String, String)>, Vec<String>) {
    let doc: Value =
        serde_json::from_str(include_str!("../../envelope/tests/redaction/channels.json")).unwrap();
    let documents = doc["documents"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(name, d)| (name.clone(), d.to_string()))
        .collect();
    let secrets = doc["secrets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect();
    (documents, secrets)
}

fn temp_dir(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("envelope-cli-redact-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn assert_nothing_leaks(what: &str, out: &Output, store: Option<&Path>, secrets: &[String]) {
    assert!(
        out.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    for secret in secrets {
        assert!(
            !leaks::leaks(&out.stdout, secret),
            "{what}: {secret} in stdout {}",
            String::from_utf8_lossy(&out.stdout)
        );
        assert!(
            !leaks::leaks(&out.stderr, secret),
            "{what}: {secret} in the report {}",
            String::from_utf8_lossy(&out.stderr)
        );
        for (path, bytes) in store.map(leaks::files_under).unwrap_or_default() {
            assert!(
                !leaks::leaks(&bytes, secret),
                "{what}: {secret} in the stored {}",
                path.display()
            );
        }
    }
}

/// The output is detected as `format`, and valid when the unredacted output is.
fn assert_as_valid_as_unredacted(what: &str, input: &str, format: &str, redacted: &[u8]) {
    let plain = envelope(
        &["shape", "--no-offload", "--format", format, "-"],
        input.as_bytes(),
    );
    assert!(plain.status.success(), "{what}: unredacted");
    let detected =
        |bytes: &[u8]| String::from_utf8(envelope(&["detect", "-"], bytes).stdout).unwrap();
    if detected(&plain.stdout).trim() == format {
        assert_eq!(detected(redacted).trim(), format, "{what}");
    }
    let valid = |bytes: &[u8]| {
        envelope(&["validate", "--format", format, "-"], bytes)
            .status
            .success()
    };
    if valid(&plain.stdout) {
        let out = envelope(&["validate", "--format", format, "-"], redacted);
        assert!(
            out.status.success(),
            "{what}: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(redacted)
        );
    }
}

#[test]
fn shape_redact_leaks_no_secret_from_any_channel_of_any_format() {
    let (documents, secrets) = channels();
    assert_eq!(documents.len(), 7);
    for (name, input) in &documents {
        let detected = envelope(&["detect", "-"], input.as_bytes());
        let from = String::from_utf8(detected.stdout).unwrap();
        assert!(
            name.starts_with(from.trim()),
            "{name} is detected as {from}"
        );
        for format in FORMATS {
            let what = format!("{name} -> {format}");
            let out = envelope(
                &[
                    "shape",
                    "--redact",
                    "--report",
                    "--no-offload",
                    "--format",
                    format,
                    "-",
                ],
                input.as_bytes(),
            );
            assert_nothing_leaks(&what, &out, None, &secrets);
            assert_as_valid_as_unredacted(&what, input, format, &out.stdout);
            // The report is JSON and names places.
            let report: Value = serde_json::from_slice(&out.stderr).unwrap();
            assert!(!report["redacted"].as_array().unwrap().is_empty(), "{what}");

            // Offloaded: the stored payload is the redacted one.
            let store = temp_dir(&format!("{name}-{format}"));
            let out = envelope(
                &[
                    "shape",
                    "--redact",
                    "--report",
                    "--store",
                    store.to_str().unwrap(),
                    "--inline-threshold",
                    "0",
                    "--format",
                    format,
                    "-",
                ],
                input.as_bytes(),
            );
            assert_nothing_leaks(&format!("{what} (offloaded)"), &out, Some(&store), &secrets);
            let _ = std::fs::remove_dir_all(&store);

            // Cut to a limit: the markers name masked places only (or, when no envelope
            // fits, the error says nothing of the input either).
            let out = envelope(
                &[
                    "shape",
                    "--redact",
                    "--report",
                    "--no-offload",
                    "--limit",
                    "700",
                    "--format",
                    format,
                    "-",
                ],
                input.as_bytes(),
            );
            for secret in &secrets {
                assert!(
                    !leaks::leaks(&out.stdout, secret) && !leaks::leaks(&out.stderr, secret),
                    "{what} (limit): {secret} in {}{}",
                    String::from_utf8_lossy(&out.stdout),
                    String::from_utf8_lossy(&out.stderr)
                );
            }
        }
    }
}

#[test]
fn shape_redact_keeps_what_is_not_a_secret() {
    let input = r#"{"data":{"token_count":12,"max_tokens":4096,"auth_method":"oauth","author":"Ann","note":"the bearer of this letter"},"meta":{"source":"local","operationId":"a.b","timestamp":1}}"#;
    let out = envelope(&["shape", "--redact", "--report", "-"], input.as_bytes());
    assert!(out.status.success());
    // Byte for byte, and the line ends like every command's output.
    assert_eq!(String::from_utf8(out.stdout).unwrap(), format!("{input}\n"));
    let report: Value = serde_json::from_slice(&out.stderr).unwrap();
    // Nothing redacted: the report lists none.
    assert!(
        report["redacted"].as_array().is_none_or(Vec::is_empty),
        "{report}"
    );
}
