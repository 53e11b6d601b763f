//! The built `envelope` binary: stdout, stderr and exit codes.

mod common;

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

fn examples() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples")
}

fn run(args: &[&str], stdin: Option<&[u8]>, env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_envelope"));
    cmd.args(args).env_remove("CTXO_RESPONSE_LIMIT");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    common::feed(cmd.spawn().unwrap(), stdin.unwrap_or_default())
}

fn ok(args: &[&str], stdin: Option<&[u8]>) -> String {
    let out = run(args, stdin, &[]);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn example(name: &str) -> String {
    examples().join(name).to_string_lossy().into_owned()
}

#[test]
fn detect_prints_the_format_id() {
    for id in [
        "tool-envelope-v1",
        "ctxo",
        "operations",
        "protocol-v1",
        "tool-result-envelope",
        "mcp",
    ] {
        assert_eq!(
            ok(&["detect", &example(&format!("{id}.json"))], None),
            format!("{id}\n")
        );
    }
    let json_out: Value = serde_json::from_str(&ok(
        &["detect", "--json", "-"],
        Some(br#"{"data":1,"meta":{"source":"http"}}"#),
    ))
    .unwrap();
    assert_eq!(json_out["format"], "operations");
    assert!(json_out["reason"].as_str().unwrap().contains("meta.source"));
}

#[test]
fn exit_codes() {
    let bad = run(&["detect"], Some(b"{\"a\":\n  tru}"), &[]);
    assert_eq!(bad.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&bad.stderr);
    assert!(stderr.contains("line 2 column"), "{stderr}");
    assert!(bad.stdout.is_empty());

    let undetected = run(&["detect"], Some(b"{\"plain\":1}"), &[]);
    assert_eq!(undetected.status.code(), Some(1));

    let missing = run(&["detect", "/nonexistent/file.json"], None, &[]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("cannot read"));

    assert_eq!(
        run(
            &["convert", "--to", "nope", &example("mcp.json")],
            None,
            &[]
        )
        .status
        .code(),
        Some(2)
    );
    assert_eq!(run(&["frobnicate"], None, &[]).status.code(), Some(2));
    assert_eq!(
        run(
            &["wrap", "--format", "mcp", "--meta", "colour=blue", "-"],
            Some(b"{}"),
            &[]
        )
        .status
        .code(),
        Some(2)
    );
    assert_eq!(
        run(
            &["wrap", "--format", "mcp", "--ts", "yesterday", "-"],
            Some(b"{}"),
            &[]
        )
        .status
        .code(),
        Some(2)
    );
    assert_eq!(
        run(
            &["unwrap", "--from", "protocol-v1", "-"],
            Some(b"\xff\xfe"),
            &[]
        )
        .status
        .code(),
        Some(1)
    );
}

#[test]
fn convert_with_loss_report() {
    let out = run(
        &[
            "convert",
            "--to",
            "mcp",
            "--report",
            &example("protocol-v1.json"),
        ],
        None,
        &[],
    );
    assert!(out.status.success());
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        result["structuredContent"]["message"],
        "Hello from inline envelope"
    );
    let report: Value = serde_json::from_slice(&out.stderr).unwrap();
    let fields: Vec<&str> = report["lost"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["field"].as_str().unwrap())
        .collect();
    for f in [
        "command",
        "timestamp",
        "duration_ms",
        "workspace",
        "/meta/runner",
        "/meta/source",
        "/meta/skill_version",
    ] {
        assert!(fields.contains(&f), "{f} missing from {fields:?}");
    }
    // Same format: byte-exact, nothing lost.
    let out = run(
        &[
            "convert",
            "--to",
            "protocol-v1",
            "--from",
            "protocol-v1",
            "--report",
            &example("protocol-v1.json"),
        ],
        None,
        &[],
    );
    assert_eq!(
        out.stdout,
        std::fs::read(example("protocol-v1.json")).unwrap()
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim(),
        r#"{"lost":[]}"#
    );
}

#[test]
fn wrap_tool_envelope_v1() {
    let out = ok(
        &[
            "wrap",
            "--format",
            "tool-envelope-v1",
            "--tool",
            "code-review",
            "--ts",
            "2026-07-04T00:00:00Z",
            "--summary",
            "Looks good",
            "-",
        ],
        Some(b"{\"issues\":[]}"),
    );
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["content"][0]["text"], "Looks good");
    let block = v["content"][1]["text"].as_str().unwrap();
    let inner =
        envelope::base64::decode_strict(block.strip_prefix("__ENVELOPE_V1__:").unwrap().as_bytes())
            .unwrap();
    assert_eq!(
        String::from_utf8(inner).unwrap(),
        r#"{"payload":{"issues":[]},"meta":{"tool":"code-review","ts":"2026-07-04T00:00:00Z","version":1}}"#
    );
}

#[test]
fn wrap_ctxo_honours_the_limit_env_flag_and_workspace() {
    let items: Vec<Value> = (0..50)
        .map(|i| json!({"symbolId": format!("s{i}")}))
        .collect();
    let payload = json!({"results": items}).to_string();
    let with_env = run(
        &["wrap", "--format", "ctxo", "-"],
        Some(payload.as_bytes()),
        &[("CTXO_RESPONSE_LIMIT", "300abc")],
    );
    let doc: Value = serde_json::from_slice(&with_env.stdout).unwrap();
    assert_eq!(doc["_meta"]["truncated"], true);
    assert!(with_env.stdout.len() <= 301, "{}", with_env.stdout.len());
    // --limit wins over the environment.
    let with_flag = run(
        &[
            "wrap",
            "--format",
            "ctxo",
            "--limit",
            "100000",
            "--workspace-root",
            "/repo",
            "-",
        ],
        Some(payload.as_bytes()),
        &[("CTXO_RESPONSE_LIMIT", "300")],
    );
    let doc: Value = serde_json::from_slice(&with_flag.stdout).unwrap();
    assert_eq!(doc["_meta"]["truncated"], false);
    assert_eq!(doc["_meta"]["workspace"], json!({"root": "/repo"}));
}

#[test]
fn wrap_with_meta_keys() {
    let out = ok(
        &[
            "wrap",
            "--format",
            "tool-result-envelope",
            "--ts",
            "2026-01-02T03:04:05Z",
            "--meta",
            "provider=OpenAI",
            "--meta",
            "model=gpt",
            "--meta",
            "toolCallId=c1",
            "--meta",
            "contentType=List",
            "--meta",
            "payloadPath=list",
            "-",
        ],
        Some(b"[1,2]"),
    );
    assert_eq!(
        out.trim_end(),
        r#"{"list":[1,2],"__envelope":{"version":"1","tool":null,"provider":"OpenAI","model":"gpt","toolCallId":"c1","contentType":2,"payloadPath":"list","schemaRef":null,"compat":["result","list","items"],"createdUtc":"2026-01-02T03:04:05Z","tags":[]}}"#
    );
    let out = ok(
        &[
            "wrap",
            "--format",
            "operations",
            "--ts",
            "2026-07-04T00:00:00Z",
            "--meta",
            "operationId=math.add",
            "-",
        ],
        Some(b"5"),
    );
    assert_eq!(
        out.trim_end(),
        r#"{"data":5,"meta":{"source":"local","operationId":"math.add","timestamp":1783123200000}}"#
    );
    let out = ok(
        &[
            "wrap",
            "--format",
            "protocol-v1",
            "--ts",
            "2026-07-04T00:00:00Z",
            "--meta",
            "command=fs/ls",
            "--meta",
            "durationMs=12",
            "-",
        ],
        Some(b"{\"b\":1,\"a\":2}"),
    );
    assert_eq!(
        out,
        "{\"version\":1,\"status\":\"ok\",\"command\":\"fs/ls\",\"data\":{\"a\":2,\"b\":1},\"meta\":{\"ts\":\"2026-07-04T00:00:00Z\",\"duration_ms\":12},\"error\":{}}\n"
    );
}

#[test]
fn unwrap_prints_the_payload() {
    assert_eq!(
        ok(&["unwrap", &example("operations.json")], None),
        "{\"sum\":5,\"operands\":[2,3]}\n"
    );
    assert_eq!(
        ok(&["unwrap", &example("tool-result-envelope.json")], None),
        "\"A haiku about envelopes.\"\n"
    );
    assert_eq!(
        ok(&["unwrap", &example("ctxo.json")], None),
        "{\"symbolId\":\"s\",\"impactedSymbols\":[{\"symbolId\":\"a\"},{\"symbolId\":\"b\"}]}\n"
    );
    let tev1 = std::fs::read_to_string(example("tool-envelope-v1.json")).unwrap();
    assert!(
        ok(&["unwrap", "-"], Some(tev1.as_bytes())).starts_with("{\"displayName\":\"System Design")
    );
    // URL-safe base64 needs --lenient.
    let inner = br#"{"payload":"?>?>","meta":{"tool":"t","ts":"x","version":1}}"#;
    let url_safe = envelope::base64::encode(inner)
        .replace('+', "-")
        .replace('/', "_")
        .trim_end_matches('=')
        .to_string();
    assert!(url_safe.contains('-') || url_safe.contains('_'));
    let doc = json!({"content": [{"type": "text", "text": "s"}, {"type": "text", "text": format!("__ENVELOPE_V1__:{url_safe}")}]}).to_string();
    assert_eq!(
        run(&["unwrap", "-"], Some(doc.as_bytes()), &[])
            .status
            .code(),
        Some(1)
    );
    assert_eq!(
        ok(&["unwrap", "--lenient", "-"], Some(doc.as_bytes())),
        "\"?>?>\"\n"
    );
}

#[test]
fn demo_runs_on_the_bundled_examples_and_the_local_store() {
    let store = std::env::temp_dir().join(format!("envelope-cli-demo-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&store);
    let out = run(
        &["demo"],
        None,
        &[("ENVELOPE_STORE", store.to_str().unwrap())],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text.matches("round trip byte-exact").count(), 6, "{text}");
    assert!(text.contains("redacted 2000 secrets"), "{text}");
    // It says where it writes its store, and why there.
    assert!(
        text.contains(&format!("store: {} (from ENVELOPE_STORE)", store.display())),
        "{text}"
    );
    let digest = text
        .split(" as sha256:")
        .nth(1)
        .unwrap()
        .split(';')
        .next()
        .unwrap();
    assert!(store.join("sha256").join(digest).exists(), "{text}");
    let fitted: usize = text
        .split("fitted into ")
        .nth(1)
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(fitted <= 4096);
    assert!(
        !text.contains("ghp_0123456789"),
        "a secret reached the output"
    );
}

#[test]
fn shape_fits_the_limit_or_fails_without_output() {
    let items: Vec<Value> = (0..500)
        .map(|i| json!({"id": i, "name": format!("n{i}")}))
        .collect();
    let payload = json!({"results": items}).to_string();
    let wrapped = ok(&["wrap", "--format", "mcp", "-"], Some(payload.as_bytes()));
    let out = run(
        &["shape", "--limit", "1000", "-"],
        Some(wrapped.as_bytes()),
        &[],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stdout.len() <= 1000, "{}", out.stdout.len());
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        doc["_meta"]["dev.envelope/budget"]["cuts"][0]["pointer"],
        "/results"
    );
    assert!(
        doc["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("/results kept")
    );
    // Into another format, with the same bound.
    let out = run(
        &[
            "shape",
            "--limit",
            "700",
            "--format",
            "protocol-v1",
            "--ts",
            "2026-07-04T00:00:00Z",
            "-",
        ],
        Some(wrapped.as_bytes()),
        &[],
    );
    assert!(out.status.success() && out.stdout.len() <= 700);
    let too_small = run(
        &["shape", "--limit", "20", "-"],
        Some(wrapped.as_bytes()),
        &[],
    );
    assert_eq!(too_small.status.code(), Some(1));
    assert!(too_small.stdout.is_empty());
    assert!(String::from_utf8_lossy(&too_small.stderr).contains("error[budget.too-small]"));
}

/// `shape --no-offload` and `convert --to ctxo` read a large payload for the cut (items no
/// cut can keep are sized, not built); the bytes are those of reading it whole, which
/// `shape` does when a high inline threshold keeps the payload inline instead.
#[test]
fn large_payloads_read_for_the_cut_give_the_bytes_of_a_whole_read() {
    let items: Vec<Value> = (0..5000)
        .map(|i| json!({"symbolId": format!("src/m{i}.ts::f"), "line": i, "confidence": 0.25}))
        .collect();
    let document = json!({"version": 1, "status": "ok", "command": "code/impact",
        "data": {"symbolId": "main", "impactedSymbols": items},
        "meta": {"ts": "2026-07-04T00:00:00Z", "duration_ms": 3}, "error": null})
    .to_string();
    for format in ["protocol-v1", "ctxo", "mcp", "tool-envelope-v1"] {
        let shape = |how: &[&str]| {
            let mut args = vec!["shape", "--limit", "4096", "--format", format];
            args.extend_from_slice(how);
            args.push("-");
            ok(&args, Some(document.as_bytes()))
        };
        let skimmed = shape(&["--no-offload"]);
        let whole = shape(&["--inline-threshold", "100000000"]);
        assert_eq!(skimmed, whole, "{format}");
        assert!(skimmed.len() <= 4096, "{format}: {} bytes", skimmed.len());
        assert!(
            skimmed.contains("/impactedSymbols"),
            "{format}: the cut is named"
        );
    }
    let converted = ok(
        &["convert", "--to", "ctxo", "--limit", "4096", "-"],
        Some(document.as_bytes()),
    );
    let doc: Value = serde_json::from_str(&converted).unwrap();
    assert_eq!(doc["_meta"]["totalItems"], 5000);
    assert_eq!(doc["_meta"]["truncated"], true);
    let kept = doc["impactedSymbols"].as_array().unwrap();
    assert_eq!(doc["_meta"]["returnedItems"], kept.len());
    assert_eq!(kept[..], items[..kept.len()]);
    assert!(converted.trim_end().len() <= 4096);
}

#[test]
fn shape_redacts_before_writing() {
    let doc = r#"{"version":1,"status":"ok","command":"a/b","data":{"db":{"password":"hunter2"},"log":"curl -H 'Authorization: Bearer tok_abc123'","max_tokens":5},"meta":{"ts":"2026-07-04T00:00:00Z"},"error":{}}"#;
    let out = run(
        &["shape", "--redact", "--report", "-"],
        Some(doc.as_bytes()),
        &[],
    );
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        !text.contains("hunter2") && !text.contains("tok_abc123"),
        "{text}"
    );
    assert!(
        text.contains(r#""password":"***""#)
            && text.contains("Bearer ***")
            && text.contains(r#""max_tokens":5"#)
    );
    let report: Value = serde_json::from_slice(&out.stderr).unwrap();
    assert_eq!(
        report["redacted"],
        json!([{"rule": "key:password", "at": "payload/db/password"}, {"rule": "text:bearer", "at": "payload/log"}])
    );
    assert!(!String::from_utf8_lossy(&out.stderr).contains("hunter2"));
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("envelope-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn artifact_put_get_verify_ls_gc() {
    let dir = temp_dir("artifact");
    let store = dir.join("store");
    let s = store.to_str().unwrap();
    let bytes: Vec<u8> = (0..=255u8).cycle().take(100_000).collect();
    let digest = ok(
        &[
            "artifact",
            "put",
            "--store",
            s,
            "--kind",
            "application/octet-stream",
            "-",
        ],
        Some(&bytes),
    );
    let digest = digest.trim();
    assert!(
        digest.starts_with("sha256:") && digest.len() == 71,
        "{digest}"
    );
    let got = run(&["artifact", "get", "--store", s, digest], None, &[]);
    assert!(got.status.success());
    assert_eq!(got.stdout, bytes, "get returns the exact bytes");
    assert_eq!(
        ok(&["artifact", "verify", "--store", s], None),
        format!("ok {digest}\n")
    );
    assert!(
        ok(&["artifact", "ls", "--store", s], None)
            .starts_with(&format!("{digest}\t100000\tapplication/octet-stream\t"))
    );

    // Corrupt the blob: get and verify exit 1.
    let blob = store.join("sha256").join(&digest[7..]);
    let mut broken = bytes.clone();
    broken[0] ^= 1;
    std::fs::write(&blob, &broken).unwrap();
    let got = run(&["artifact", "get", "--store", s, digest], None, &[]);
    assert_eq!(got.status.code(), Some(1));
    assert!(got.stdout.is_empty());
    assert!(String::from_utf8_lossy(&got.stderr).contains("error[store.corrupted]"));
    let verify = run(&["artifact", "verify", "--store", s, digest], None, &[]);
    assert_eq!(verify.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&verify.stdout).starts_with("FAILED"));

    let gc: Value = serde_json::from_str(&ok(
        &["artifact", "gc", "--store", s, "--older-than", "0"],
        None,
    ))
    .unwrap();
    assert_eq!(gc["removed"], json!([digest]));
    assert_eq!(ok(&["artifact", "ls", "--store", s], None), "");
}

/// gc's limits on use: --ttl expires the idle, --max-results and --max-store-bytes evict
/// the least recently used; a get is a use. Time is set on the blob files.
#[test]
fn artifact_gc_limits_evict_the_least_recently_used() {
    let dir = temp_dir("gc-limits");
    let store = dir.join("store");
    let s = store.to_str().unwrap();
    let put = |bytes: &[u8]| {
        ok(&["artifact", "put", "--store", s, "-"], Some(bytes))
            .trim()
            .to_string()
    };
    let aged = |digest: &str, secs_ago: u64| {
        std::fs::File::options()
            .write(true)
            .open(store.join("sha256").join(&digest[7..]))
            .unwrap()
            .set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(secs_ago))
            .unwrap();
    };
    let d: Vec<String> = (0..5)
        .map(|i| put(format!("{i}").repeat(100).as_bytes()))
        .collect();
    for (i, digest) in d.iter().enumerate() {
        aged(digest, 5000 - 1000 * i as u64); // d[0] least recently used
    }
    // Reading d[0] makes it the most recently used.
    assert!(
        run(&["artifact", "get", "--store", s, &d[0]], None, &[])
            .status
            .success()
    );
    let gc = |args: &[&str]| -> Value {
        let mut all = vec!["artifact", "gc", "--store", s];
        all.extend_from_slice(args);
        serde_json::from_str(&ok(&all, None)).unwrap()
    };
    let sorted = |mut v: Vec<&String>| {
        v.sort();
        json!(v)
    };
    // Idle for more than 3500 s: d[1] (4000 s ago); d[0] was just read.
    let report = gc(&["--ttl", "3500"]);
    assert_eq!(report["expired"], json!([d[1]]));
    assert_eq!(report["evicted"], json!([]));
    assert_eq!(report["removed"], json!([]));
    // At most 2 results: d[2] and d[3] go, d[4] and the read d[0] stay.
    let report = gc(&["--max-results", "2"]);
    assert_eq!(report["evicted"], sorted(vec![&d[2], &d[3]]));
    // At most 150 bytes: one of 100 bytes is left, the least recently used goes (d[4]).
    let report = gc(&["--max-store-bytes", "150"]);
    assert_eq!(report["evicted"], json!([d[4]]));
    assert_eq!(
        ok(&["artifact", "ls", "--store", s], None).lines().count(),
        1
    );
    // --older-than works beside them.
    let report = gc(&["--older-than", "0", "--max-results", "5"]);
    assert_eq!(report["removed"], json!([d[0]]));
    assert_eq!(report["evicted"], json!([]));
    assert_eq!(ok(&["artifact", "ls", "--store", s], None), "");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Issue 26: one stray link in the store made gc stop having collected nothing.
#[cfg(unix)]
#[test]
fn artifact_gc_skips_a_stray_link_and_collects_the_rest() {
    let dir = temp_dir("gc-link");
    let store = dir.join("store");
    let s = store.to_str().unwrap();
    let one = ok(&["artifact", "put", "--store", s, "-"], Some(b"one"));
    let two = ok(&["artifact", "put", "--store", s, "-"], Some(b"two"));
    let victim = dir.join("victim");
    std::fs::write(&victim, b"must survive").unwrap();
    let link = store.join("sha256").join("0".repeat(64));
    std::os::unix::fs::symlink(&victim, &link).unwrap();
    let out = run(
        &["artifact", "gc", "--store", s, "--older-than", "0"],
        None,
        &[],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let gc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut removed = vec![one.trim().to_string(), two.trim().to_string()];
    removed.sort();
    assert_eq!(gc["removed"], json!(removed));
    assert_eq!(gc["skipped"][0]["path"], link.to_str().unwrap());
    assert_eq!(gc["skipped"][0]["code"], "store.link");
    assert!(
        stderr.contains("warning[store.link]") && stderr.contains(link.to_str().unwrap()),
        "{stderr}"
    );
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(std::fs::read(&victim).unwrap(), b"must survive");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn malformed_digests_exit_1_without_touching_the_store() {
    let dir = temp_dir("malformed");
    let store = dir.join("never-created");
    for bad in [
        "sha256:../../etc/passwd",
        "sha256:ABC",
        "md5:d41d8cd98f00b204e9800998ecf8427e",
    ] {
        for cmd in ["get", "verify"] {
            let out = run(
                &["artifact", cmd, "--store", store.to_str().unwrap(), bad],
                None,
                &[],
            );
            assert_eq!(out.status.code(), Some(1), "{cmd} {bad}");
            assert!(String::from_utf8_lossy(&out.stderr).contains("error[store.invalid-digest]"));
        }
    }
    assert!(!store.exists());
}

#[test]
fn default_store_is_envelope_store_in_the_current_folder_or_env() {
    let dir = temp_dir("default");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_envelope"));
    let out = cmd
        .args(["artifact", "put", "-"])
        .current_dir(&dir)
        .env_remove("ENVELOPE_STORE")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .map(|c| common::feed(c, b"hello"))
        .unwrap();
    let digest = String::from_utf8(out.stdout).unwrap();
    assert!(
        dir.join(".envelope/store/sha256")
            .join(&digest.trim()[7..])
            .exists()
    );
    let elsewhere = dir.join("elsewhere");
    let out = run(
        &["artifact", "put", "-"],
        Some(b"hello"),
        &[("ENVELOPE_STORE", elsewhere.to_str().unwrap())],
    );
    assert!(out.status.success());
    assert!(elsewhere.join("sha256").exists());
}

#[test]
fn a_full_disk_is_a_clear_error_with_nothing_half_written() {
    // A file size limit makes writes fail as on a full disk (SIGXFSZ ignored, so write()
    // returns an error instead of killing the process).
    let dir = temp_dir("full");
    let store = dir.join("store");
    let input = dir.join("big.bin");
    std::fs::write(&input, vec![7u8; 200_000]).unwrap();
    let script = format!(
        "trap '' XFSZ; ulimit -f 16; exec '{}' artifact put --store '{}' '{}'",
        env!("CARGO_BIN_EXE_envelope"),
        store.display(),
        input.display()
    );
    let out = Command::new("sh").arg("-c").arg(&script).output().unwrap();
    // A store that cannot be written is an I/O error: exit 2 (issue 12, item 12).
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("error[store.io]"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let left: Vec<_> = std::fs::read_dir(store.join("sha256")).unwrap().collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn shape_offloads_large_payloads_to_the_store() {
    let dir = temp_dir("offload");
    let store = dir.join("store");
    let s = store.to_str().unwrap();
    let rows: Vec<Value> = (0..400)
        .map(|i| json!({"id": i, "text": "t".repeat(100)}))
        .collect();
    let doc = json!({"version": 1, "status": "ok", "command": "fs/ls", "data": {"rows": rows}, "meta": {"ts": "2026-07-04T00:00:00Z"}, "error": {}}).to_string();
    let out = run(
        &["shape", "--store", s, "--limit", "2000", "-"],
        Some(doc.as_bytes()),
        &[],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stdout.len() <= 2000);
    let shaped: Value = serde_json::from_slice(&out.stdout).unwrap();
    let digest = shaped["data"]["artifact"].as_str().unwrap();
    assert_eq!(shaped["meta"]["cas_digest"], json!(digest));
    // The store gives back exactly the payload as protocol-v1 writes it.
    let got = run(&["artifact", "get", "--store", s, digest], None, &[]);
    let original: Value = serde_json::from_str(&doc).unwrap();
    assert_eq!(
        serde_json::from_slice::<Value>(&got.stdout).unwrap(),
        original["data"]
    );
    // Over the capture limit: an error envelope, nothing stored.
    let capped = run(
        &[
            "shape",
            "--store",
            dir.join("other").to_str().unwrap(),
            "--max-capture",
            "40000",
            "-",
        ],
        Some(doc.as_bytes()),
        &[],
    );
    let shaped: Value = serde_json::from_slice(&capped.stdout).unwrap();
    assert_eq!(shaped["error"]["code"], "EOUTPUT_TOO_LARGE");
    assert!(!dir.join("other").exists());
}

fn fixture(path: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/fixtures/protocol-v1")
        .join(path)
        .to_string_lossy()
        .into_owned()
}

#[test]
fn validate_exit_codes_and_text_output() {
    let inline = fixture("envelopes/ok-inline.json");
    // Valid under compat, invalid under spec (the command is not group/name).
    let compat = ok(&["validate", "--profile", "compat", &inline], None);
    assert!(
        compat.starts_with("valid (protocol-v1, profile compat"),
        "{compat}"
    );
    let spec = run(&["validate", &inline], None, &[]);
    assert_eq!(spec.status.code(), Some(1));
    let text = String::from_utf8(spec.stdout).unwrap();
    assert!(
        text.starts_with("error[pv1.command-pattern] at /command:"),
        "{text}"
    );
    assert_eq!(
        run(&["validate", "--profile", "lax", &inline], None, &[])
            .status
            .code(),
        Some(2)
    );
    assert_eq!(
        run(&["validate", "/nonexistent/envelope.json"], None, &[])
            .status
            .code(),
        Some(2)
    );
    assert_eq!(
        run(&["validate", "--format", "nope", &inline], None, &[])
            .status
            .code(),
        Some(2)
    );
}

#[test]
fn validate_json_report_lists_every_finding() {
    let doc = br#"{"version":2,"status":"done","command":"","meta":{"ts":""},"error":{}}"#;
    let out = run(
        &["validate", "--json", "--format", "protocol-v1"],
        Some(doc),
        &[],
    );
    assert_eq!(out.status.code(), Some(1));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["valid"], json!(false));
    let rules: Vec<&str> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["rule"].as_str().unwrap())
        .collect();
    assert_eq!(
        rules,
        ["pv1.version", "pv1.command", "pv1.status", "pv1.ts"]
    );
    assert_eq!(report["errors"], json!(4));
    assert_eq!(report["findings"][3]["pointer"], json!("/meta/ts"));
}

#[test]
fn validate_emits_the_reference_envelopes() {
    let doc = br#"{"version":1,"status":"ok","command":"fs/ls","meta":{},"error":{}}"#;
    let out = run(&["validate", "--emit", "protocol-v1"], Some(doc), &[]);
    assert_eq!(out.status.code(), Some(1));
    let env: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(env["status"], json!("error"));
    assert_eq!(env["command"], json!("foxctl.proto.validate"));
    assert_eq!(env["error"]["code"], json!("EENVELOPE"));
    assert_eq!(
        env["error"]["message"],
        json!("invalid envelope: meta.ts is required")
    );
    assert_eq!(
        env["data"]["validation_errors"],
        json!(["meta.ts is required"])
    );
    // The emitted envelope is itself a valid protocol-v1 envelope under compat.
    let again = run(&["validate", "--profile", "compat"], Some(&out.stdout), &[]);
    assert!(
        again.status.success(),
        "{}",
        String::from_utf8_lossy(&again.stdout)
    );

    let good = br#"{"version":1,"status":"ok","command":"fs/ls","meta":{"ts":"2026-01-01T00:00:00Z"},"error":{}}"#;
    let out = run(&["validate", "--emit", "protocol-v1"], Some(good), &[]);
    assert!(out.status.success());
    let env: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(env["status"], json!("ok"));
    assert_eq!(env["data"]["valid"], json!(true));
}

#[test]
fn validate_ndjson_streams_from_a_file_or_stdin() {
    let jobs = fixture("envelopes/progress-stream.ndjson");
    assert!(ok(&["validate", "--ndjson", &jobs], None).starts_with("valid"));
    let stream = concat!(
        r#"{"version":1,"status":"progress","command":"fs/index","data":{"pct":10},"meta":{"ts":"2026-01-01T00:00:00Z","seq":0}}"#,
        "\r\n",
        r#"{"version":1,"status":"progress","command":"fs/index","data":{"pct":5},"meta":{"ts":"2026-01-01T00:00:01Z","seq":1}}"#,
        "\r\n",
    );
    let out = run(
        &["validate", "--ndjson", "--json"],
        Some(stream.as_bytes()),
        &[],
    );
    assert_eq!(out.status.code(), Some(1));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let found: Vec<(String, u64)> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["rule"].as_str().unwrap().to_string(),
                f["line"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    assert_eq!(
        found,
        [
            ("stream.pct".to_string(), 2),
            ("stream.terminal".to_string(), 0)
        ]
    );
}

#[test]
fn validate_output_schema_revision_and_rule_list() {
    let dir = std::env::temp_dir().join(format!("envelope-cli-validate-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let schema = dir.join("schema.json");
    std::fs::write(
        &schema,
        r#"{"type":"object","required":["sum"],"properties":{"sum":{"type":"integer"}}}"#,
    )
    .unwrap();
    let schema = schema.to_string_lossy().into_owned();
    let good =
        br#"{"data":{"sum":5},"meta":{"source":"local","operationId":"math.add","timestamp":1}}"#;
    let bad =
        br#"{"data":{"sum":"5"},"meta":{"source":"local","operationId":"math.add","timestamp":1}}"#;
    assert!(
        run(&["validate", "--output-schema", &schema], Some(good), &[])
            .status
            .success()
    );
    let out = run(
        &["validate", "--json", "--output-schema", &schema],
        Some(bad),
        &[],
    );
    assert_eq!(out.status.code(), Some(1));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["findings"][0]["rule"], json!("ops.output-schema"));
    assert_eq!(report["findings"][0]["pointer"], json!("/data/sum"));
    // A schema that does not compile, or a missing one, is a usage error.
    let broken = dir.join("broken.json");
    std::fs::write(&broken, r#"{"type": 5}"#).unwrap();
    let broken = broken.to_string_lossy().into_owned();
    assert_eq!(
        run(&["validate", "--output-schema", &broken], Some(good), &[])
            .status
            .code(),
        Some(2)
    );
    assert_eq!(
        run(
            &["validate", "--output-schema", "/nonexistent.json"],
            Some(good),
            &[]
        )
        .status
        .code(),
        Some(2)
    );

    let link = br#"{"content":[{"type":"resource_link","uri":"file:///a","name":"a"}]}"#;
    assert!(run(&["validate"], Some(link), &[]).status.success());
    let out = run(
        &["validate", "--mcp-revision", "2025-03-26"],
        Some(link),
        &[],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("error[mcp.revision]"));
    assert_eq!(
        run(
            &["validate", "--mcp-revision", "1999-01-01"],
            Some(link),
            &[]
        )
        .status
        .code(),
        Some(2)
    );

    let rules = ok(&["validate", "--list-rules"], None);
    assert!(
        rules
            .lines()
            .any(|l| l.starts_with("pv1.ts ") && l.contains("compat"))
    );
    assert!(
        rules
            .lines()
            .any(|l| l.starts_with("pv1.unknown-field ") && l.contains("strict"))
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn store_faults_exit_2_with_one_line_naming_the_store() {
    let dir = temp_dir("store-faults");
    // A store path that exists but is a file.
    let file = dir.join("not-a-folder");
    std::fs::write(&file, b"x").unwrap();
    let f = file.to_str().unwrap();
    let put = run(&["artifact", "put", "--store", f, "-"], Some(b"data"), &[]);
    assert_eq!(put.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&put.stderr);
    assert!(
        stderr.contains("error[store.io]") && stderr.contains(f),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    let big = json!({"data": {"rows": vec!["x".repeat(100); 1000]}, "meta": {"source": "local"}});
    let shaped = run(
        &["shape", "--store", f, "--limit", "4096"],
        Some(big.to_string().as_bytes()),
        &[],
    );
    assert_eq!(shaped.status.code(), Some(2));
    assert!(shaped.stdout.is_empty());
    assert!(String::from_utf8_lossy(&shaped.stderr).contains("error[store.io]"));

    // A link planted below the root is refused, with exit 2.
    #[cfg(unix)]
    {
        let store = dir.join("store");
        let outside = dir.join("outside");
        std::fs::create_dir_all(&store).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::os::unix::fs::symlink(&outside, store.join("sha256")).unwrap();
        let s = store.to_str().unwrap();
        let put = run(&["artifact", "put", "--store", s, "-"], Some(b"data"), &[]);
        assert_eq!(put.status.code(), Some(2));
        assert!(String::from_utf8_lossy(&put.stderr).contains("error[store.link]"));
        assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
    }
}

#[test]
fn a_reader_that_stops_reading_ends_the_command_quietly() {
    // `envelope unwrap big.json | head -c 1`: the pipe closes before the output is written.
    let rows: Vec<Value> = (0..200_000).map(|i| json!({"id": i})).collect();
    let input = json!({"data": rows, "meta": {"source": "local"}}).to_string();
    let mut child = Command::new(env!("CARGO_BIN_EXE_envelope"))
        .arg("unwrap")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = common::feed(child, input.as_bytes());
    assert_eq!(out.status.code(), Some(0));
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// (rule, line) of every finding of a `--json` validation report.
fn report_lines(stdout: &[u8]) -> (Value, Vec<(String, Option<u64>)>) {
    let report: Value = serde_json::from_slice(stdout).unwrap();
    let found = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["rule"].as_str().unwrap().to_string(), f["line"].as_u64()))
        .collect();
    (report, found)
}

const PV1_PROGRESS_0: &str = r#"{"version":1,"status":"progress","command":"fs/index","data":{"pct":10},"meta":{"ts":"2026-01-01T00:00:00Z","seq":0},"error":{}}"#;
const PV1_OK: &str = r#"{"version":1,"status":"ok","command":"fs/index","data":{"files":3},"meta":{"ts":"2026-01-01T00:00:02Z"},"error":{}}"#;

/// Issue 12 item 10: every finding of a stream line has its line, in the JSON report and in
/// the text output (not only syntax errors).
#[test]
fn validate_ndjson_gives_every_finding_its_line() {
    // Line 2 breaks a document rule (a timestamp that is not UTC), not the syntax.
    let line2 = r#"{"version":1,"status":"progress","command":"fs/index","data":{"pct":20},"meta":{"ts":"2026-01-01T00:00:01+02:00","seq":1},"error":{}}"#;
    let stream = format!("{PV1_PROGRESS_0}\n{line2}\n{PV1_OK}\n");
    for profile in ["compat", "strict", "spec"] {
        let out = run(
            &["validate", "--ndjson", "--json", "--profile", profile],
            Some(stream.as_bytes()),
            &[],
        );
        assert_eq!(out.status.code(), Some(1), "{profile}");
        let (report, found) = report_lines(&out.stdout);
        assert_eq!(found, [("pv1.ts".to_string(), Some(2))], "{profile}");
        assert_eq!(report["findings"][0]["pointer"], json!("/meta/ts"));
        assert_eq!(report["stream"], json!("progress"));
    }
    let out = run(&["validate", "--ndjson"], Some(stream.as_bytes()), &[]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.starts_with("error[pv1.ts] line 2 at /meta/ts: "),
        "{text}"
    );
    assert!(
        text.ends_with("(protocol-v1 progress stream, profile spec)\n"),
        "{text}"
    );
}

/// Issue 12 item 10: a job-event stream is a protocol-v1 stream, and the report says so (it
/// used to say "unknown format").
#[test]
fn validate_ndjson_names_the_format_of_a_job_event_stream() {
    let jobs = fixture("envelopes/progress-stream.ndjson");
    let text = ok(&["validate", "--ndjson", &jobs], None);
    assert_eq!(
        text,
        "valid (protocol-v1 job-event stream, profile spec; 0 warnings)\n"
    );
    let (report, found) =
        report_lines(ok(&["validate", "--ndjson", "--json", &jobs], None).as_bytes());
    assert!(found.is_empty());
    assert_eq!(report["format"], json!("protocol-v1"));
    assert_eq!(report["formats"], json!(["protocol-v1"]));
    assert_eq!(report["stream"], json!("job-events"));
    // --format protocol-v1 takes job-event streams too.
    let text = ok(
        &["validate", "--ndjson", "--format", "protocol-v1", &jobs],
        None,
    );
    assert!(
        text.starts_with("valid (protocol-v1 job-event stream"),
        "{text}"
    );
}

/// Issue 12 item 10: `--independent` validates a batch of unrelated envelopes, each line as
/// a document of its own; without it the batch is judged as one stream.
#[test]
fn validate_ndjson_independent_lines() {
    let mcp = r#"{"content":[{"type":"text","text":"2 open issues"}]}"#;
    let operations = r#"{"data":{"sum":5},"meta":{"source":"local","operationId":"math.add","timestamp":1783123200000}}"#;
    let batch = format!("{mcp}\n{PV1_OK}\n{operations}\n");
    let out = run(
        &["validate", "--ndjson", "--independent"],
        Some(batch.as_bytes()),
        &[],
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert_eq!(
        text,
        "valid (independent lines (mcp, protocol-v1, operations), profile spec; 0 warnings)\n"
    );
    let out = run(
        &["validate", "--ndjson", "--independent", "--json"],
        Some(batch.as_bytes()),
        &[],
    );
    let (report, found) = report_lines(&out.stdout);
    assert!(found.is_empty());
    assert_eq!(report["valid"], json!(true));
    assert_eq!(report["format"], Value::Null);
    assert_eq!(
        report["formats"],
        json!(["mcp", "protocol-v1", "operations"])
    );
    assert_eq!(report["stream"], json!("independent"));

    // Without the flag: one stream, of the first line's kind.
    let out = run(
        &["validate", "--ndjson", "--json"],
        Some(batch.as_bytes()),
        &[],
    );
    assert_eq!(out.status.code(), Some(1));
    let (_, found) = report_lines(&out.stdout);
    assert_eq!(
        found,
        [
            ("stream.kind".to_string(), Some(2)),
            ("stream.kind".to_string(), Some(3))
        ]
    );
    // With the protocol-v1 line first it is judged as a progress stream.
    let reordered = format!("{PV1_OK}\n{mcp}\n{operations}\n");
    let out = run(
        &["validate", "--ndjson", "--json"],
        Some(reordered.as_bytes()),
        &[],
    );
    assert_eq!(out.status.code(), Some(1));
    let (report, _) = report_lines(&out.stdout);
    assert_eq!(report["stream"], json!("progress"));
    assert!(
        ok(
            &["validate", "--ndjson", "--independent"],
            Some(reordered.as_bytes())
        )
        .starts_with("valid")
    );

    // A line's own findings keep their line; no rule across lines.
    let log = format!("{PV1_OK}\n{PV1_OK}\n{{\"x\":1}}\n{PV1_PROGRESS_0}\n");
    let out = run(
        &["validate", "--ndjson", "--independent", "--json"],
        Some(log.as_bytes()),
        &[],
    );
    assert_eq!(out.status.code(), Some(1));
    let (_, found) = report_lines(&out.stdout);
    assert_eq!(found, [("format.undetected".to_string(), Some(3))]);

    // The flag is documented, and needs --ndjson.
    let help = ok(&["validate", "--help"], None);
    assert!(help.contains("--independent"), "{help}");
    assert!(help.contains("independent envelopes"), "{help}");
    let out = run(&["validate", "--independent"], Some(PV1_OK.as_bytes()), &[]);
    assert_eq!(out.status.code(), Some(2));
}

/// Issue 12 item 11: compat gives the Go reference's verdicts on the text: a byte-order mark
/// and trailing data are invalid (Go's json.Unmarshal refuses them), invalid UTF-8 inside a
/// string and a lone surrogate are not.
#[test]
fn validate_compat_refuses_what_the_go_reference_refuses() {
    let doc = r#"{"version":1,"status":"ok","command":"fs/ls","data":{"name":"a"},"meta":{"ts":"2026-01-01T00:00:00Z"},"error":{}}"#;
    let compat = |bytes: &[u8]| {
        run(
            &["validate", "--profile", "compat", "--json"],
            Some(bytes),
            &[],
        )
    };
    let bom = [b"\xEF\xBB\xBF".as_slice(), doc.as_bytes()].concat();
    for (what, bytes, rule) in [
        ("bom", bom, "text.bom"),
        (
            "trailing",
            format!("{doc} {{}}").into_bytes(),
            "text.trailing-data",
        ),
    ] {
        let out = compat(&bytes);
        assert_eq!(out.status.code(), Some(1), "{what}");
        let (_, found) = report_lines(&out.stdout);
        assert_eq!(found[0].0, rule, "{what}");
    }
    let mut bad_utf8 = doc.as_bytes().to_vec();
    bad_utf8[doc.find("\"a\"").unwrap() + 1] = 0xFF;
    let surrogate = doc.replacen("\"a\"", "\"\\ud800\"", 1).into_bytes();
    let repeated = doc
        .replacen(
            "\"error\":{}",
            "\"meta\":{\"source\":\"run\"},\"error\":{}",
            1,
        )
        .into_bytes();
    for (what, bytes) in [
        ("utf8", bad_utf8),
        ("surrogate", surrogate),
        ("repeated meta", repeated),
    ] {
        let out = compat(&bytes);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{what}: {}",
            String::from_utf8_lossy(&out.stdout)
        );
        // strict reports what Go reads past.
        let strict = run(&["validate", "--profile", "strict"], Some(&bytes), &[]);
        assert_eq!(strict.status.code(), Some(1), "{what}");
    }
}

/// Issue 12 item 11: `convert --to tool-result-envelope` of a tool-result-envelope document
/// writes the defaults the reference writes for the keys it lacks.
#[test]
fn convert_to_tool_result_envelope_writes_the_reference_defaults() {
    let doc = r#"{"result":"hi","__envelope":{"version":"1","tool":"t","createdUtc":"2026-01-02T03:04:05Z"}}"#;
    let out = ok(
        &[
            "convert",
            "--from",
            "tool-result-envelope",
            "--to",
            "tool-result-envelope",
        ],
        Some(doc.as_bytes()),
    );
    let written: Value = serde_json::from_str(&out).unwrap();
    let meta = &written["__envelope"];
    assert_eq!(meta["schemaRef"], Value::Null);
    assert!(meta.as_object().unwrap().contains_key("schemaRef"), "{out}");
    assert_eq!(meta["compat"], json!(["result", "list", "items"]));
    assert_eq!(meta["tags"], json!([]));
    assert_eq!(meta["payloadPath"], json!("result"));
    // Detected (no --from) alike, and the output is valid.
    let again = ok(
        &["convert", "--to", "tool-result-envelope"],
        Some(doc.as_bytes()),
    );
    assert_eq!(again, out);
    assert!(ok(&["validate"], Some(out.as_bytes())).starts_with("valid"));
}
