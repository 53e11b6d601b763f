//! Every message the proxy sends a client is masked: results, errors, notifications and the
//! upstream's own requests, whatever their method.
//!
//! The upstream (`fixtures/secret_server.py`) generates its messages from the Python MCP
//! SDK's types, with a secret in every string, a secret key in every open object and base64
//! of a secret in every base64 field: every server-to-client request and notification type,
//! one of an unknown method, the result type of every client request method, and an error.

mod common;

use std::collections::BTreeSet;
use std::time::Duration;

use base64::Engine as _;
use common::{Client, config, fixture};
use envelope_mcp::config::UpstreamSpec;
use serde_json::{Value, json};

/// What the fixture plants, each in a form that holds none of the others.
const PLANTED: [&str; 8] = [
    "ghp_0123456789abcdefghij",
    "ghp_A123456789abcdefghij",
    "AKIAABCDEFGHIJKLMNOP",
    "abcDEF123456xyz987",
    "MIIEowIBAAKCAQEAx1Vt",
    "eyJzdWIiOiIxMjM0NTY3ODkwIn0",
    "hunter2-correct-horse",
    "sk_live_abcdefghij0123456789",
];

fn secret_server() -> UpstreamSpec {
    let sdk = std::process::Command::new("python3")
        .args(["-c", "import mcp.types"])
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        sdk,
        "python3 with the `mcp` SDK is missing: run `bash scripts/install-mcp-tools.sh`"
    );
    UpstreamSpec::Command {
        program: "python3".into(),
        args: vec![fixture("secret_server.py").to_string_lossy().into_owned()],
    }
}

/// Every frame the client gets for: `initialize`, what the upstream sends on
/// `notifications/initialized`, one request of every client method the SDK knows, and a
/// request the upstream answers with an error.
async fn everything(redact: bool) -> (Vec<Value>, BTreeSet<String>) {
    let (mut config, _store) = config(secret_server());
    config.redact = redact;
    let mut client = Client::start(config);
    let mut frames = Vec::new();
    client
        .request(json!(0), "initialize", json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}))
        .await;
    frames.push(client.answer(&json!(0)).await);
    client.notify("notifications/initialized", json!({})).await;
    let mut notified = BTreeSet::new();
    loop {
        let frame = client
            .next_raw(Duration::from_secs(20))
            .await
            .expect("the upstream's messages arrive");
        let value: Value = serde_json::from_slice(&frame).expect("JSON");
        let method = value["method"].as_str().unwrap_or_default().to_string();
        if method == "test/done" {
            break;
        }
        notified.insert(method);
        frames.push(value);
    }
    client
        .request(json!("methods"), "test/methods", json!({}))
        .await;
    let methods = client.answer(&json!("methods")).await["result"]["methods"].clone();
    let methods: Vec<String> = serde_json::from_value(methods).unwrap();
    assert!(methods.len() >= 10, "{methods:?}");
    for (i, method) in methods.iter().enumerate() {
        if method == "initialize" {
            continue;
        }
        let params = match method.as_str() {
            "tools/call" => json!({"name": "anything", "arguments": {}}),
            "resources/read" => json!({"uri": "file:///notes.txt"}),
            _ => json!({}),
        };
        client.request(json!(i), method, params).await;
        let answer = client.answer(&json!(i)).await;
        assert!(answer.get("result").is_some(), "{method}: {answer}");
        frames.push(answer);
    }
    client
        .request(json!("error"), "test/error", json!({}))
        .await;
    frames.push(client.answer(&json!("error")).await);
    client.close().await;
    (frames, notified)
}

/// Every string in `value` (keys too), and the text of every string that is base64 of text.
fn texts(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) => {
            out.push(s.clone());
            if let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(s)
                && let Ok(text) = String::from_utf8(bytes)
            {
                out.push(text);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| texts(v, out)),
        Value::Object(members) => {
            for (key, v) in members {
                out.push(key.clone());
                texts(v, out);
            }
        }
        _ => {}
    }
}

fn leaks(frame: &Value) -> Vec<String> {
    let mut all = Vec::new();
    texts(frame, &mut all);
    all.into_iter()
        .filter(|text| PLANTED.iter().any(|p| text.contains(p)))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_message_to_the_client_is_masked() {
    let (frames, notified) = everything(true).await;
    // Every notification and request type of the SDK, and the unknown one, arrived.
    for method in [
        "notifications/progress",
        "notifications/message",
        "notifications/cancelled",
        "notifications/resources/updated",
        "sampling/createMessage",
        "elicitation/create",
        "roots/list",
        "x/unknown",
    ] {
        assert!(notified.contains(method), "{method} missing: {notified:?}");
    }
    let mut checked = 0;
    for frame in &frames {
        let leaked = leaks(frame);
        assert!(leaked.is_empty(), "leaked {leaked:?} in {frame}");
        // Masked, not dropped: the message still carries its (masked) strings.
        assert!(
            frame.to_string().contains("***"),
            "nothing masked in {frame}"
        );
        checked += 1;
    }
    assert!(checked >= 25, "{checked} messages");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_no_redact_the_planted_secrets_arrive() {
    // The same run with `--no-redact`: the fixture does plant what the test looks for.
    let (frames, _) = everything(false).await;
    let leaking = frames.iter().filter(|f| !leaks(f).is_empty()).count();
    // tools/call results are shaped, and shaping honours --no-redact too.
    assert!(leaking >= frames.len() - 1, "{leaking} of {}", frames.len());
}
