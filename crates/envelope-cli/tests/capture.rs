//! `envelope shape --max-capture`: one definition on every path (issue 12, item 8).
//!
//! A payload serialized larger than `--max-capture` bytes (as the store would hold it, in
//! the output format's dialect) becomes the `EOUTPUT_TOO_LARGE` error envelope below the
//! inline threshold, with `--no-offload`, with a store, with `--limit`, in every output
//! format; exactly `--max-capture` bytes are kept; nothing is stored.

mod common;
use common::run;

use std::path::{Path, PathBuf};

use envelope::shape::offload::artifact_bytes;
use envelope::{DecodeOptions, FormatId};

/// Runs `shape` and returns its stdout, asserting exit 0.
fn shape(args: &[&str], input: &[u8]) -> Vec<u8> {
    let mut all = vec!["shape", "--ts", "2026-07-04T00:00:00Z"];
    all.extend_from_slice(args);
    all.push("-");
    let out = run(&all, input);
    assert!(
        out.status.success(),
        "{all:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "envelope-cli-capture-{name}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Whether `dir` holds a file at any depth.
fn holds_a_file(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|entries| {
        entries.flatten().any(|e| {
            let path = e.path();
            path.is_file() || (path.is_dir() && holds_a_file(&path))
        })
    })
}

#[test]
fn max_capture_applies_on_every_path_and_in_every_format() {
    let dir = temp_dir("paths");
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let mut checked = 0;
    for name in [
        "ctxo.json",
        "mcp.json",
        "operations.json",
        "protocol-v1.json",
        "tool-envelope-v1.json",
        "tool-result-envelope.json",
    ] {
        let input = std::fs::read(examples.join(name)).unwrap();
        let (_, env) =
            envelope::formats::decode_any(&input, None, &DecodeOptions::default()).unwrap();
        for to in FormatId::ALL {
            let Some(size) = artifact_bytes(&env.payload, to).map(|(b, _)| b.len()) else {
                continue;
            };
            let format = to.as_str();
            let exact = size.to_string();
            let over = (size - 1).to_string();
            let kept_store = dir.join(format!("{name}-{format}-kept"));
            let refused_store = dir.join(format!("{name}-{format}-refused"));
            // Every path: no store, a store below and above the inline threshold, a limit.
            let paths = |store: &Path| -> Vec<Vec<String>> {
                let store = store.to_str().unwrap().to_string();
                [
                    &["--no-offload"][..],
                    &["--store", &store],
                    &["--store", &store, "--inline-threshold", "1"],
                    &["--no-offload", "--limit", "100000"],
                    &["--store", &store, "--limit", "100000"],
                ]
                .iter()
                .map(|p| p.iter().map(|s| s.to_string()).collect())
                .collect()
            };
            let with = |max: Option<&str>, path: &[String]| {
                let mut args = vec!["--format", format];
                if let Some(max) = max {
                    args.extend(["--max-capture", max]);
                }
                args.extend(path.iter().map(String::as_str));
                shape(&args, &input)
            };
            let mut refusals = Vec::new();
            for (kept_path, refused_path) in paths(&kept_store).iter().zip(paths(&refused_store)) {
                let at = format!("{name} → {format} {refused_path:?}");
                // Exactly the limit: as without one.
                let kept = with(Some(&exact), kept_path);
                assert_eq!(kept, with(None, kept_path), "{at}: changed at the limit");
                // One byte over: the error envelope, nothing stored.
                let refused = with(Some(&over), &refused_path);
                let back = envelope::decode(to, &refused, &DecodeOptions::default())
                    .unwrap_or_else(|e| panic!("{at}: {e}"));
                let said = format!(
                    "{} {}",
                    back.error.as_ref().map_or("", |e| e.message.as_str()),
                    back.payload.json()
                );
                assert!(
                    said.contains(&format!(
                        "output of {size} bytes exceeds the capture limit of {over} bytes"
                    )),
                    "{at}: {}",
                    String::from_utf8_lossy(&refused)
                );
                assert!(!holds_a_file(&refused_store), "{at}: stored");
                refusals.push(refused);
                checked += 1;
            }
            // The same error envelope whichever the path.
            assert!(
                refusals.windows(2).all(|w| w[0] == w[1]),
                "{name} → {format}: the paths differ"
            );
        }
    }
    assert!(checked >= 5 * 30, "only {checked} paths checked");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_mcp_result_with_is_error_false_over_max_capture_has_one_is_error() {
    let input = br#"{"content":[{"type":"text","text":"hello world"}],"isError":false}"#;
    let out = shape(&["--no-offload", "--max-capture", "5"], input);
    assert_eq!(
        String::from_utf8(out).unwrap(),
        // Shape's output ends with a newline, like every command's.
        concat!(
            r#"{"content":[{"type":"text","text":"output of 11 bytes exceeds the capture limit of 5 bytes"}],"isError":true}"#,
            "\n"
        )
    );
    // The input's own `isError` is reported as dropped.
    let report = run(
        &[
            "shape",
            "--no-offload",
            "--max-capture",
            "5",
            "--report",
            "-",
        ],
        input,
    );
    let stderr = String::from_utf8(report.stderr).unwrap();
    assert!(stderr.contains(r#""field":"/isError""#), "{stderr}");
}
