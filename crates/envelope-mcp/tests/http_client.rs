//! The Streamable HTTP upstream (`--upstream-url`) against a real server: the Python `mcp`
//! SDK's MCPServer (the conformance fixture) over streamable-http on 127.0.0.1.

mod http_support;

use std::process::Stdio;
use std::time::Duration;

use envelope_mcp::transport::http_client;
use envelope_mcp::transport::{Incoming, Link};
use http_support::{fixture, free_port, python, wait_for_port};
use serde_json::{Value, json};

/// The fixture server on a free port; killed when dropped. Its stderr goes to a file the
/// tests read (it logs session ends).
struct Fixture {
    child: tokio::process::Child,
    port: u16,
    log: tempfile::NamedTempFile,
}

impl Fixture {
    async fn start() -> Fixture {
        let port = free_port();
        let log = tempfile::NamedTempFile::new().unwrap();
        let child = tokio::process::Command::new(python())
            .arg(fixture("conformance_server.py"))
            .args(["http", &port.to_string()])
            .stdout(Stdio::null())
            .stderr(log.reopen().unwrap())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        wait_for_port(port, Duration::from_secs(30)).await;
        Fixture { child, port, log }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.log.path()).unwrap()
    }
}

async fn send(link: &Link, message: Value) {
    link.outbound
        .send(serde_json::to_vec(&message).unwrap())
        .await
        .unwrap();
}

/// The next message from the upstream (panics on Closed or after 20 s).
async fn next(link: &mut Link) -> Value {
    match tokio::time::timeout(Duration::from_secs(20), link.inbound.recv()).await {
        Ok(Some(Incoming::Frame(frame))) => {
            serde_json::from_slice(&frame).expect("frames are JSON")
        }
        other => panic!("expected a frame, got {other:?}"),
    }
}

async fn request(link: &mut Link, id: i64, method: &str, params: Value) -> Value {
    send(
        link,
        json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
    )
    .await;
    let answer = next(link).await;
    assert_eq!(answer["id"], id, "{answer}");
    answer
}

async fn initialized(url: &str) -> Link {
    let mut link = http_client::connect(url, &[("X-Envelope-Test".into(), "1".into())])
        .await
        .unwrap();
    let params = json!({"protocolVersion": "2025-06-18", "capabilities": {"sampling": {}},
        "clientInfo": {"name": "envelope-test", "version": "1"}});
    let answer = request(&mut link, 1, "initialize", params).await;
    assert_eq!(
        answer["result"]["serverInfo"]["name"],
        "envelope-conformance-fixture"
    );
    send(
        &link,
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .await;
    link
}

fn call(name: &str, arguments: Value) -> Value {
    json!({"name": name, "arguments": arguments})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_with_the_python_sdk_server() {
    let server = Fixture::start().await;
    let mut link = initialized(&server.url()).await;

    let tools = request(&mut link, 2, "tools/list", json!({})).await;
    let names: Vec<&str> = tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"test_simple_text") && names.contains(&"big_text"),
        "{names:?}"
    );

    // Progress notifications come before the response, in order (an SSE answer).
    let params = json!({"name": "test_tool_with_progress", "arguments": {}, "_meta": {"progressToken": "p"}});
    send(
        &link,
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": params}),
    )
    .await;
    let mut progress = Vec::new();
    let response = loop {
        let message = next(&mut link).await;
        if message["method"] == "notifications/progress" {
            assert_eq!(message["params"]["progressToken"], "p");
            progress.push(message["params"]["progress"].as_f64().unwrap());
        } else {
            break message;
        }
    };
    assert_eq!(progress, [0.0, 50.0, 100.0]);
    assert_eq!(response["id"], 3);
    assert_eq!(
        response["result"]["content"][0]["text"],
        "Tool with progress executed successfully"
    );

    // A server-to-client request (sampling) reaches us; our answer goes back up.
    let params = call("test_sampling", json!({"prompt": "2+2?"}));
    send(
        &link,
        json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": params}),
    )
    .await;
    let sampling = next(&mut link).await;
    assert_eq!(sampling["method"], "sampling/createMessage", "{sampling}");
    let answer =
        json!({"role": "assistant", "content": {"type": "text", "text": "4"}, "model": "m"});
    send(
        &link,
        json!({"jsonrpc": "2.0", "id": sampling["id"], "result": answer}),
    )
    .await;
    let result = next(&mut link).await;
    assert_eq!(result["id"], 4);
    assert_eq!(result["result"]["content"][0]["text"], "LLM response: 4");

    // Two calls in flight: the slow one (logging, ~100 ms) does not hold back the fast one.
    send(&link, json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": call("test_tool_with_logging", json!({}))})).await;
    send(&link, json!({"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": call("test_simple_text", json!({}))})).await;
    let mut order = Vec::new();
    while order.len() < 2 {
        let message = next(&mut link).await;
        if let Some(id) = message["id"].as_i64() {
            order.push(id);
        }
    }
    assert_eq!(order, [6, 5]);

    // A big answer arrives whole.
    let big = request(
        &mut link,
        7,
        "tools/call",
        call("big_text", json!({"size": 3_000_000})),
    )
    .await;
    assert_eq!(
        big["result"]["content"][0]["text"].as_str().unwrap().len(),
        3_000_000
    );

    // Tool errors and unknown methods are the server's own answers, passed on.
    let failed = request(
        &mut link,
        8,
        "tools/call",
        call("test_error_handling", json!({})),
    )
    .await;
    assert_eq!(failed["result"]["isError"], true);
    let unknown = request(&mut link, 9, "no/such/method", json!({})).await;
    assert_eq!(unknown["error"]["code"], -32601, "{unknown}");

    // Closing the link ends the session with DELETE.
    let Link {
        mut inbound,
        outbound,
    } = link;
    drop(outbound);
    let closed = tokio::time::timeout(Duration::from_secs(10), inbound.recv())
        .await
        .unwrap();
    assert!(matches!(closed, Some(Incoming::Closed(_))), "{closed:?}");
    let mut ended = false;
    for _ in 0..50 {
        ended = server.log().contains("Terminating session");
        if ended {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(ended, "no DELETE in the server's log:\n{}", server.log());
}

#[tokio::test]
async fn http_errors_become_json_rpc_errors() {
    let server = Fixture::start().await;
    // A path the server does not serve: 404 before any session.
    let mut link = http_client::connect(&format!("http://127.0.0.1:{}/nope", server.port), &[])
        .await
        .unwrap();
    let answer = request(
        &mut link,
        1,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}),
    )
    .await;
    assert_eq!(answer["error"]["code"], -32603);
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("HTTP 404"),
        "{answer}"
    );
}

#[tokio::test]
async fn a_server_that_dies_answers_later_requests_with_errors() {
    let mut server = Fixture::start().await;
    let mut link = initialized(&server.url()).await;
    server.child.kill().await.unwrap();
    let answer = request(&mut link, 2, "tools/list", json!({})).await;
    assert_eq!(answer["error"]["code"], -32603);
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("upstream HTTP request failed"),
        "{answer}"
    );
}

/// A session that answers every request with an empty result (for transport-only tests).
fn empty_answers() -> envelope_mcp::transport::http_server::SessionStarter {
    std::sync::Arc::new(|mut link: Link, _| {
        tokio::spawn(async move {
            while let Some(Incoming::Frame(frame)) = link.inbound.recv().await {
                let request: Value = serde_json::from_slice(&frame).unwrap();
                if let Some(id) = request.get("id") {
                    let answer = json!({"jsonrpc": "2.0", "id": id, "result": {"protocolVersion": "2025-06-18"}});
                    let _ = link
                        .outbound
                        .send(serde_json::to_vec(&answer).unwrap())
                        .await;
                }
            }
        });
    })
}

#[tokio::test]
async fn headers_go_with_every_request() {
    // Our own server with a token: only requests with the right header get through.
    use envelope_mcp::transport::http_server::{self, DEFAULT_IDLE_TIMEOUT, ListenOptions};
    let options = ListenOptions {
        addr: "127.0.0.1:0".parse().unwrap(),
        tokens: vec!["tok-0123456789abcdef".into()],
        idle_timeout: DEFAULT_IDLE_TIMEOUT,
        limits: Default::default(),
    };
    let server = http_server::bind(options, empty_answers()).await.unwrap();
    let url = format!(
        "http://127.0.0.1:{}/mcp",
        server.local_addr().unwrap().port()
    );
    tokio::spawn(server.run());
    let init = json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}});

    let mut without = http_client::connect(&url, &[]).await.unwrap();
    let refused = request(&mut without, 1, "initialize", init.clone()).await;
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("HTTP 401"),
        "{refused}"
    );

    let header = [(
        "Authorization".to_owned(),
        "Bearer tok-0123456789abcdef".to_owned(),
    )];
    let mut with = http_client::connect(&url, &header).await.unwrap();
    let accepted = request(&mut with, 1, "initialize", init).await;
    assert_eq!(
        accepted["result"]["protocolVersion"], "2025-06-18",
        "{accepted}"
    );
    // Later requests carry the session id the server gave (else they would get 400).
    send(
        &with,
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .await;
    let later = request(&mut with, 2, "ping", json!({})).await;
    assert!(later.get("result").is_some(), "{later}");
}
