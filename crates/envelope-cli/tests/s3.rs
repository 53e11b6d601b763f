//! The S3 backend against a real S3-compatible server (moto) on 127.0.0.1, started and
//! stopped by the test. scripts/test.sh installs moto (`pip install 'moto[server]'`).

mod common;

#[path = "../../envelope-mcp/tests/common/tools.rs"]
mod tools;

use common::moto::{Moto, http, s3_env};

use std::net::TcpListener;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

fn envelope(endpoint: &str, args: &[&str], stdin: &[u8]) -> Output {
    let child = Command::new(env!("CARGO_BIN_EXE_envelope"))
        .args(args)
        .envs(s3_env(endpoint))
        .env_remove("ENVELOPE_STORE")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    common::feed(child, stdin)
}

#[test]
fn artifacts_and_offload_in_s3() {
    let moto = Moto::start();
    assert_eq!(http(moto.port, "PUT", "/envelope-test", b""), Some(200));
    let ep = moto.endpoint();
    let store = "s3://envelope-test/runs/1";

    let bytes: Vec<u8> = (0..=255u8).cycle().take(300_000).collect();
    let put = envelope(
        &ep,
        &[
            "artifact",
            "put",
            "--store",
            store,
            "--kind",
            "application/octet-stream",
            "-",
        ],
        &bytes,
    );
    assert!(
        put.status.success(),
        "{}",
        String::from_utf8_lossy(&put.stderr)
    );
    let digest = String::from_utf8(put.stdout).unwrap().trim().to_string();
    let get = envelope(&ep, &["artifact", "get", "--store", store, &digest], b"");
    assert!(get.status.success());
    assert_eq!(get.stdout, bytes, "the exact bytes come back");
    let verify = envelope(&ep, &["artifact", "verify", "--store", store], b"");
    assert_eq!(
        String::from_utf8(verify.stdout).unwrap(),
        format!("ok {digest}\n")
    );
    let ls = envelope(&ep, &["artifact", "ls", "--store", store, "--json"], b"");
    let sidecar: Value = serde_json::from_slice(&ls.stdout).unwrap();
    assert_eq!(sidecar["digest"], json!(digest));
    assert_eq!(sidecar["size_bytes"], 300_000);

    // Offload through shape into the bucket.
    let rows: Vec<Value> = (0..500)
        .map(|i| json!({"id": i, "text": "t".repeat(100)}))
        .collect();
    let doc =
        json!({"content": [{"type": "text", "text": "rows"}], "structuredContent": {"rows": rows}})
            .to_string();
    let shaped = envelope(&ep, &["shape", "--store", store, "-"], doc.as_bytes());
    assert!(
        shaped.status.success(),
        "{}",
        String::from_utf8_lossy(&shaped.stderr)
    );
    let result: Value = serde_json::from_slice(&shaped.stdout).unwrap();
    let artifact = result["structuredContent"]["artifact"]
        .as_str()
        .unwrap()
        .to_string();
    let link = result["content"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["type"] == "resource_link")
        .unwrap();
    assert_eq!(link["uri"], json!(artifact));
    let stored = envelope(&ep, &["artifact", "get", "--store", store, &artifact], b"");
    let original: Value = serde_json::from_str(&doc).unwrap();
    assert_eq!(
        serde_json::from_slice::<Value>(&stored.stdout).unwrap(),
        original["structuredContent"]
    );

    // Corrupt the blob behind the store's back: get fails verification.
    let key = format!("runs/1/sha256/{}", &digest[7..]);
    let script = format!(
        "import boto3; boto3.client('s3', endpoint_url='{ep}', aws_access_key_id='test', aws_secret_access_key='test', region_name='us-east-1').put_object(Bucket='envelope-test', Key='{key}', Body=b'tampered')"
    );
    assert!(
        Command::new("python3")
            .args(["-c", &script])
            .status()
            .unwrap()
            .success()
    );
    let get = envelope(&ep, &["artifact", "get", "--store", store, &digest], b"");
    assert_eq!(get.status.code(), Some(1));
    assert!(get.stdout.is_empty());
    assert!(String::from_utf8_lossy(&get.stderr).contains("error[store.corrupted]"));

    let gc = envelope(
        &ep,
        &["artifact", "gc", "--store", store, "--older-than", "0"],
        b"",
    );
    let report: Value = serde_json::from_slice(&gc.stdout).unwrap();
    assert_eq!(report["removed"].as_array().unwrap().len(), 2);
}

#[test]
fn a_server_that_is_down_is_a_clear_error_quickly() {
    // A port with nothing listening on it.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let started = Instant::now();
    let out = envelope(
        &format!("http://127.0.0.1:{port}"),
        &["artifact", "put", "--store", "s3://envelope-test/x", "-"],
        b"data",
    );
    // An unreachable store is an I/O error (exit 2), not a fault of the input.
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("error[store.backend]") && stderr.contains("s3://envelope-test/x"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty());
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn without_credentials_no_request_is_made_and_the_metadata_service_is_not_asked() {
    // No credentials: object_store would ask the instance metadata service (a link-local
    // address) and wait for it; the store refuses at once instead, naming what it needs.
    let started = Instant::now();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_envelope"));
    for key in [
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AWS_WEB_IDENTITY_TOKEN_FILE",
        "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
        "AWS_CONTAINER_CREDENTIALS_FULL_URI",
        "AWS_SKIP_SIGNATURE",
        "ENVELOPE_S3_INSTANCE_METADATA",
        "ENVELOPE_STORE",
    ] {
        cmd.env_remove(key);
    }
    let out = cmd
        .args(["artifact", "ls", "--store", "s3://envelope-test/x"])
        .env("AWS_ENDPOINT", "http://127.0.0.1:9")
        .env("AWS_ALLOW_HTTP", "true")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("error[store.backend]")
            && stderr.contains("s3://envelope-test/x")
            && stderr.contains("no S3 credentials"),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
}

/// The Python SDK client (the proxy's real-server fixture) with `plan`, against `command`;
/// its report, every step answered.
fn sdk_client(plan: &Value, command: &[String]) -> Value {
    tools::python_module("mcp");
    let report = common::python_client(&common::sdk_client_script(), &plan.to_string(), command);
    for step in report["steps"].as_array().unwrap() {
        assert!(step.get("error").is_none(), "{step}");
    }
    report
}

/// `envelope_read` pages a large result stored in S3 by ranged GETs: a window far into a
/// 3 MB file read through server-filesystem comes back exactly, from a second proxy that
/// builds the index from the stored object.
#[test]
fn envelope_read_pages_a_result_stored_in_s3() {
    let moto = Moto::start();
    assert_eq!(http(moto.port, "PUT", "/envelope-test", b""), Some(200));
    let ep = moto.endpoint();
    let dir = tempfile::tempdir().unwrap();
    let log: String = (0..60_000)
        .map(|i| format!("2026-11-28T05:00:00Z line {i} of the log, \"quoted\"\n"))
        .collect();
    let path = dir.path().join("big.log");
    std::fs::write(&path, &log).unwrap();
    // The SDK starts its server with a few safe variables only: the S3 settings are set
    // on the command line.
    let mut proxy = vec!["env".to_string()];
    proxy.extend(s3_env(&ep).into_iter().map(|(k, v)| format!("{k}={v}")));
    proxy.extend([
        env!("CARGO_BIN_EXE_envelope").to_string(),
        "proxy".into(),
        "--store".into(),
        "s3://envelope-test/paging".into(),
        "--".into(),
        tools::node22().display().to_string(),
        tools::npm("@modelcontextprotocol/server-filesystem/dist/index.js")
            .display()
            .to_string(),
        dir.path().display().to_string(),
    ]);
    let plan = json!([{"op": "call", "name": "read_text_file", "args": {"path": path.display().to_string()}}]);
    let report = sdk_client(&plan, &proxy);
    let link = report["steps"][0]["content"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["type"] == "resource_link")
        .expect("the cut result links the stored one")
        .clone();
    let read = |offset: usize| json!({"op": "call", "name": "envelope_read", "args": {"uri": link["uri"], "pointer": "/content/0/text", "offset": offset}});
    let report = sdk_client(&json!([read(1_000_000), read(2_900_000)]), &proxy);
    for (step, offset) in [(0, 1_000_000), (1, 2_900_000)] {
        let window = &report["steps"][step]["structuredContent"];
        assert_eq!(window["offset"], offset, "{window}");
        assert_eq!(window["total"], log.len(), "{window}");
        let text = window["text"].as_str().unwrap();
        assert!(text.len() > 4000, "{window}");
        assert_eq!(text, &log[offset..offset + text.len()]);
    }
}
