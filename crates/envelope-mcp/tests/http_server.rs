//! The Streamable HTTP server (`--listen`) with a real client (the Python `mcp` SDK) and raw
//! HTTP requests for the safety rules. Sessions are served by an echo starter of this file,
//! a tiny MCP server on the [`Link`], so these tests need no relay.

mod http_support;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use envelope_mcp::transport::http_server::{
    self, DEFAULT_IDLE_TIMEOUT, Limits, ListenError, ListenOptions, SessionStarter,
};
use envelope_mcp::transport::{Incoming, Link};
use http_support::{fixture, python, raw};
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};

/// What the echo sessions saw.
#[derive(Default)]
struct EchoLog {
    sessions: AtomicUsize,
    closed: Mutex<Vec<String>>,
}

fn echo_starter(log: Arc<EchoLog>) -> SessionStarter {
    Arc::new(move |link, _| {
        log.sessions.fetch_add(1, Ordering::SeqCst);
        tokio::spawn(echo_session(link, log.clone()));
    })
}

type Asks = Arc<Mutex<HashMap<String, oneshot::Sender<Value>>>>;

/// A small MCP server: `echo` (progress, a log line, an optional delay) and `ask` (a
/// sampling request to the client). Each request is answered on a task of its own.
async fn echo_session(mut link: Link, log: Arc<EchoLog>) {
    let asks = Asks::default();
    while let Some(incoming) = link.inbound.recv().await {
        let frame = match incoming {
            Incoming::Frame(frame) => frame,
            Incoming::Closed(reason) => {
                log.closed.lock().unwrap().push(reason);
                return;
            }
        };
        let message: Value = serde_json::from_slice(&frame).expect("the server passes JSON");
        match (message.get("method"), message.get("id")) {
            (Some(_), Some(_)) => {
                tokio::spawn(answer(message, link.outbound.clone(), asks.clone()));
            }
            (None, Some(id)) => {
                if let Some(waiting) = asks.lock().unwrap().remove(&id.to_string()) {
                    let _ = waiting.send(message);
                }
            }
            _ => {} // notifications
        }
    }
}

async fn send(out: &mpsc::Sender<Vec<u8>>, message: Value) {
    out.send(serde_json::to_vec(&message).unwrap())
        .await
        .unwrap();
}

async fn answer(request: Value, out: mpsc::Sender<Vec<u8>>, asks: Asks) {
    let id = request["id"].clone();
    let params = &request["params"];
    let result = match request["method"].as_str().unwrap() {
        "initialize" => json!({
            "protocolVersion": params["protocolVersion"],
            "capabilities": {"tools": {}, "logging": {}},
            "serverInfo": {"name": "echo-starter", "version": "1"},
        }),
        "ping" => json!({}),
        "tools/list" => json!({"tools": [
            {"name": "echo", "inputSchema": {"type": "object"}},
            {"name": "ask", "inputSchema": {"type": "object"}},
        ]}),
        "tools/call" if params["name"] == "echo" => {
            if let Some(token) = params.pointer("/_meta/progressToken") {
                for progress in [1, 2] {
                    let note = json!({"progressToken": token, "progress": progress, "total": 2});
                    send(&out, json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": note})).await;
                }
            }
            let line = json!({"level": "info", "data": "echoing"});
            send(
                &out,
                json!({"jsonrpc": "2.0", "method": "notifications/message", "params": line}),
            )
            .await;
            let delay = params["arguments"]["delay_ms"].as_u64().unwrap_or(0);
            tokio::time::sleep(Duration::from_millis(delay)).await;
            json!({"content": [{"type": "text", "text": params["arguments"]["text"]}]})
        }
        "tools/call" if params["name"] == "ask" => {
            let ask_id = format!("ask-{id}");
            let (waiting, answered) = oneshot::channel();
            asks.lock()
                .unwrap()
                .insert(Value::from(ask_id.clone()).to_string(), waiting);
            let question = json!({"role": "user", "content": {"type": "text", "text": params["arguments"]["question"]}});
            send(
                &out,
                json!({"jsonrpc": "2.0", "id": ask_id, "method": "sampling/createMessage",
                "params": {"messages": [question], "maxTokens": 10}}),
            )
            .await;
            let sampled = answered.await.unwrap();
            json!({"content": [{"type": "text", "text": sampled["result"]["content"]["text"]}]})
        }
        _ => {
            let error = json!({"code": -32601, "message": "method not found"});
            return send(&out, json!({"jsonrpc": "2.0", "id": id, "error": error})).await;
        }
    };
    send(&out, json!({"jsonrpc": "2.0", "id": id, "result": result})).await;
}

/// A server on a free loopback port, serving on a task of its own.
async fn start(token: Option<&str>, starter: SessionStarter) -> SocketAddr {
    start_on("127.0.0.1:0", token, starter).await
}

async fn start_on(addr: &str, token: Option<&str>, starter: SessionStarter) -> SocketAddr {
    start_with(addr, token, DEFAULT_IDLE_TIMEOUT, starter).await
}

async fn start_with(
    addr: &str,
    token: Option<&str>,
    idle_timeout: Duration,
    starter: SessionStarter,
) -> SocketAddr {
    start_limited(addr, token, idle_timeout, Limits::default(), starter).await
}

async fn start_limited(
    addr: &str,
    token: Option<&str>,
    idle_timeout: Duration,
    limits: Limits,
    starter: SessionStarter,
) -> SocketAddr {
    let options = ListenOptions {
        addr: addr.parse().unwrap(),
        tokens: token.map(str::to_owned).into_iter().collect(),
        idle_timeout,
        limits,
    };
    let server = http_server::bind(options, starter).await.unwrap();
    let addr = server.local_addr().unwrap();
    tokio::spawn(server.run());
    addr
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;

fn post_head(addr: SocketAddr, extra: &str) -> String {
    let mut head = format!(
        "POST /mcp HTTP/1.1\nHost: 127.0.0.1:{}\nContent-Type: application/json\nAccept: application/json, text/event-stream",
        addr.port()
    );
    if !extra.is_empty() {
        head.push('\n');
        head.push_str(extra);
    }
    head
}

/// Initializes a session over raw HTTP; its id.
async fn raw_session(addr: SocketAddr) -> String {
    let answer = raw(addr, &post_head(addr, ""), INITIALIZE).await;
    assert_eq!(answer.status, 200, "{answer:?}");
    answer
        .header("mcp-session-id")
        .expect("a session id")
        .to_owned()
}

async fn wait_until(what: &str, check: impl Fn() -> bool) {
    for _ in 0..100 {
        if check() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("timed out waiting until {what}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_sdk_clients_through_the_server() {
    let python = python();
    let log = Arc::new(EchoLog::default());
    let addr = start(None, echo_starter(log.clone())).await;
    let url = format!("http://127.0.0.1:{}/mcp", addr.port());
    let run = || {
        tokio::process::Command::new(python)
            .arg(fixture("sdk_client.py"))
            .arg(&url)
            .kill_on_drop(true)
            .output()
    };
    // Two clients at once: two sessions, each with its own echo.
    let (first, second) = tokio::time::timeout(Duration::from_secs(60), async {
        tokio::join!(run(), run())
    })
    .await
    .expect("the clients finish within 60 s");
    for output in [first.unwrap(), second.unwrap()] {
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "client failed: {stderr}");
        let seen: Value = serde_json::from_slice(&output.stdout).expect("the client prints JSON");
        assert_eq!(seen["server"], "echo-starter");
        assert_eq!(seen["tools"], json!(["echo", "ask"]));
        assert_eq!(seen["echo"], "hello");
        // Progress came on the call's own SSE stream, tied by its token.
        assert_eq!(seen["progress"], json!([1.0, 2.0]));
        // One log line per echo call: the lone call's on its stream, the concurrent calls'
        // on the session's GET stream.
        assert_eq!(seen["logs"], json!(["echoing", "echoing", "echoing"]));
        // The fast call was answered while the slow one was still in flight.
        assert_eq!(seen["finished"], json!(["fast", "slow"]));
        // A server-to-client request reached the client and its answer came back.
        assert_eq!(seen["asked"], "sampled: why?");
        assert_eq!(seen["ping"], true);
    }
    assert_eq!(log.sessions.load(Ordering::SeqCst), 2);
    // The SDK ends its session with DELETE on exit: the relay side reads Closed.
    wait_until("both sessions are closed", || {
        log.closed.lock().unwrap().len() == 2
    })
    .await;
    assert!(
        log.closed
            .lock()
            .unwrap()
            .iter()
            .all(|reason| reason.contains("DELETE"))
    );
}

#[tokio::test]
async fn json_answer_when_the_response_comes_first() {
    let addr = start(None, echo_starter(Arc::default())).await;
    let answer = raw(addr, &post_head(addr, ""), INITIALIZE).await;
    assert_eq!(answer.status, 200);
    assert_eq!(answer.header("content-type"), Some("application/json"));
    let body: Value = serde_json::from_str(&answer.body).unwrap();
    assert_eq!(body["result"]["serverInfo"]["name"], "echo-starter");
    assert_eq!(answer.header("mcp-session-id").map(str::len), Some(32));
}

#[tokio::test]
async fn sse_answer_when_other_messages_come_first() {
    let addr = start(None, echo_starter(Arc::default())).await;
    let session = raw_session(addr).await;
    let call = r#"{"jsonrpc":"2.0","id":"c1","method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},"_meta":{"progressToken":"tok"}}}"#;
    let head = post_head(addr, &format!("Mcp-Session-Id: {session}"));
    let answer = raw(addr, &head, call).await;
    assert_eq!(answer.status, 200);
    assert_eq!(answer.header("content-type"), Some("text/event-stream"));
    let progress = answer.body.find(r#""progress":1"#).expect("first progress");
    let progress2 = answer
        .body
        .find(r#""progress":2"#)
        .expect("second progress");
    let log_line = answer.body.find("echoing").expect("the log line");
    let response = answer.body.find(r#""result""#).expect("the response");
    assert!(
        progress < progress2 && progress2 < log_line && log_line < response,
        "{}",
        answer.body
    );
    assert!(
        answer.body.contains("event: message\ndata: {"),
        "{}",
        answer.body
    );
}

#[tokio::test]
async fn a_foreign_origin_is_forbidden() {
    let log = Arc::new(EchoLog::default());
    let addr = start(None, echo_starter(log.clone())).await;
    let answer = raw(
        addr,
        &post_head(addr, "Origin: http://evil.example"),
        INITIALIZE,
    )
    .await;
    assert_eq!(answer.status, 403, "{answer:?}");
    assert!(answer.body.contains("Origin"));
    let answer = raw(addr, &post_head(addr, "Origin: null"), INITIALIZE).await;
    assert_eq!(answer.status, 403);
    assert_eq!(
        log.sessions.load(Ordering::SeqCst),
        0,
        "a refused request starts no session"
    );
    for origin in [
        "http://localhost:5173",
        "https://127.0.0.1",
        "http://[::1]:8080",
    ] {
        let answer = raw(
            addr,
            &post_head(addr, &format!("Origin: {origin}")),
            INITIALIZE,
        )
        .await;
        assert_eq!(answer.status, 200, "{origin}: {answer:?}");
    }
}

#[tokio::test]
async fn a_non_loopback_host_is_refused() {
    let addr = start(None, echo_starter(Arc::default())).await;
    let head = post_head(addr, "").replace(
        &format!("Host: 127.0.0.1:{}", addr.port()),
        "Host: evil.example:80",
    );
    let answer = raw(addr, &head, INITIALIZE).await;
    assert_eq!(answer.status, 421, "{answer:?}");
    assert!(answer.body.contains("DNS-rebinding"));
    let head = post_head(addr, "").replace("Host: 127.0.0.1", "Host: localhost");
    assert_eq!(raw(addr, &head, INITIALIZE).await.status, 200);
}

#[tokio::test]
async fn with_a_token_requests_without_it_get_401() {
    let addr = start(Some("s3cret-0123456789"), echo_starter(Arc::default())).await;
    let missing = raw(addr, &post_head(addr, ""), INITIALIZE).await;
    assert_eq!(missing.status, 401);
    assert_eq!(missing.header("www-authenticate"), Some("Bearer"));
    let wrong = raw(
        addr,
        &post_head(addr, "Authorization: Bearer s3cret-0123456780"),
        INITIALIZE,
    )
    .await;
    assert_eq!(wrong.status, 401);
    let right = raw(
        addr,
        &post_head(addr, "Authorization: Bearer s3cret-0123456789"),
        INITIALIZE,
    )
    .await;
    assert_eq!(right.status, 200, "{right:?}");
}

#[tokio::test]
async fn with_several_tokens_a_session_belongs_to_the_token_that_opened_it() {
    let opened = Arc::new(Mutex::new(Vec::new()));
    let seen = opened.clone();
    let log = Arc::new(EchoLog::default());
    let starter: SessionStarter = Arc::new(move |link, who| {
        seen.lock().unwrap().push(who.token);
        tokio::spawn(echo_session(link, log.clone()));
    });
    let options = ListenOptions {
        addr: "127.0.0.1:0".parse().unwrap(),
        tokens: vec!["alpha-token-01234".into(), "bravo-token-01234".into()],
        idle_timeout: DEFAULT_IDLE_TIMEOUT,
        limits: Limits::default(),
    };
    let server = http_server::bind(options, starter).await.unwrap();
    let addr = server.local_addr().unwrap();
    tokio::spawn(server.run());

    let bravo = "Authorization: Bearer bravo-token-01234";
    let started = raw(addr, &post_head(addr, bravo), INITIALIZE).await;
    assert_eq!(started.status, 200, "{started:?}");
    assert_eq!(
        *opened.lock().unwrap(),
        [Some("bravo-token-01234".to_owned())]
    );
    let session = started.header("mcp-session-id").unwrap().to_owned();
    let ping = r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#;
    let with = |token: &str| format!("Authorization: Bearer {token}\nMcp-Session-Id: {session}");
    // The other valid token may not use bravo's session; bravo may.
    let stolen = raw(addr, &post_head(addr, &with("alpha-token-01234")), ping).await;
    assert_eq!(stolen.status, 403, "{stolen:?}");
    assert!(stolen.body.contains("another token"), "{stolen:?}");
    let own = raw(addr, &post_head(addr, &with("bravo-token-01234")), ping).await;
    assert_eq!(own.status, 200, "{own:?}");
    let unknown = raw(addr, &post_head(addr, &with("charlie-token-01234")), ping).await;
    assert_eq!(unknown.status, 401, "{unknown:?}");
}

#[tokio::test]
async fn a_non_loopback_bind_needs_a_token() {
    let options = ListenOptions {
        addr: "0.0.0.0:0".parse().unwrap(),
        tokens: Vec::new(),
        idle_timeout: DEFAULT_IDLE_TIMEOUT,
        limits: Limits::default(),
    };
    let error = http_server::bind(options, echo_starter(Arc::default()))
        .await
        .unwrap_err();
    assert!(error.to_string().contains("ENVELOPE_TOKEN"), "{error}");

    // With a token it binds, accepts any Host (it is meant for the network), still checks
    // Origin and the token.
    let addr = start_on(
        "0.0.0.0:0",
        Some("tok-0123456789abc"),
        echo_starter(Arc::default()),
    )
    .await;
    let local = SocketAddr::from(([127, 0, 0, 1], addr.port()));
    let head = post_head(local, "Authorization: Bearer tok-0123456789abc")
        .replace("Host: 127.0.0.1", "Host: proxy.lan");
    assert_eq!(raw(local, &head, INITIALIZE).await.status, 200);
    let foreign = format!("{head}\nOrigin: http://evil.example");
    assert_eq!(raw(local, &foreign, INITIALIZE).await.status, 403);
    assert_eq!(
        raw(local, &post_head(local, ""), INITIALIZE).await.status,
        401
    );
}

#[tokio::test]
async fn sessions_are_required_known_and_ended_by_delete() {
    let log = Arc::new(EchoLog::default());
    let addr = start(None, echo_starter(log.clone())).await;
    let ping = r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#;
    let without = raw(addr, &post_head(addr, ""), ping).await;
    assert_eq!(without.status, 400);
    assert!(without.body.contains("Mcp-Session-Id"));
    let unknown = raw(addr, &post_head(addr, "Mcp-Session-Id: nope"), ping).await;
    assert_eq!(unknown.status, 404);

    let session = raw_session(addr).await;
    let with = raw(
        addr,
        &post_head(addr, &format!("Mcp-Session-Id: {session}")),
        ping,
    )
    .await;
    assert_eq!(with.status, 200);
    assert!(with.body.contains(r#""result":{}"#), "{with:?}");
    let note = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let accepted = raw(
        addr,
        &post_head(addr, &format!("Mcp-Session-Id: {session}")),
        note,
    )
    .await;
    assert_eq!(accepted.status, 202);

    let delete = format!(
        "DELETE /mcp HTTP/1.1\nHost: 127.0.0.1:{}\nMcp-Session-Id: {session}",
        addr.port()
    );
    assert_eq!(raw(addr, &delete, "").await.status, 200);
    wait_until("the session is closed", || {
        log.closed.lock().unwrap().len() == 1
    })
    .await;
    let after = raw(
        addr,
        &post_head(addr, &format!("Mcp-Session-Id: {session}")),
        ping,
    )
    .await;
    assert_eq!(after.status, 404);
    assert_eq!(raw(addr, &delete, "").await.status, 404);
}

#[tokio::test]
async fn a_batch_in_a_session_is_answered_with_its_responses_in_order() {
    let addr = start(None, echo_starter(Arc::default())).await;
    let started = raw(addr, &post_head(addr, ""), INITIALIZE).await;
    let session = started.header("mcp-session-id").unwrap().to_owned();
    let head = post_head(addr, &format!("Mcp-Session-Id: {session}"));
    // The slow call first: the answers still come in the batch's order.
    let batch = r#"[{"jsonrpc":"2.0","id":"slow","method":"tools/call","params":{"name":"echo","arguments":{"text":"late","delay_ms":300}}},{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":7,"method":"ping"}]"#;
    let answer = raw(addr, &head, batch).await;
    assert_eq!(answer.status, 200, "{answer:?}");
    assert_eq!(answer.header("content-type"), Some("application/json"));
    let answers: Value = serde_json::from_str(&answer.body).unwrap();
    let ids: Vec<&Value> = answers
        .as_array()
        .unwrap()
        .iter()
        .map(|a| &a["id"])
        .collect();
    assert_eq!(ids, [&json!("slow"), &json!(7)]);
    assert_eq!(answers[0]["result"]["content"][0]["text"], "late");
    // Notifications only: 202. Refused whole: outside a session, empty, a non-message.
    let notes = r#"[{"jsonrpc":"2.0","method":"notifications/initialized"}]"#;
    assert_eq!(raw(addr, &head, notes).await.status, 202);
    let ping = r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#;
    assert_eq!(raw(addr, &post_head(addr, ""), ping).await.status, 400);
    assert_eq!(raw(addr, &head, "[]").await.status, 400);
    assert_eq!(
        raw(addr, &head, r#"[{"jsonrpc":"2.0","id":1}]"#)
            .await
            .status,
        400
    );
    // Over the batch limit: one JSON-RPC error saying so, never silence.
    let pings: Vec<String> = (0..20_000)
        .map(|i| format!(r#"{{"jsonrpc":"2.0","id":{i},"method":"ping"}}"#))
        .collect();
    let huge = raw(addr, &head, &format!("[{}]", pings.join(","))).await;
    assert_eq!(huge.status, 400, "{huge:?}");
    assert!(
        huge.body.contains("-32600") && huge.body.contains("over the limit of 1024"),
        "{huge:?}"
    );
    // At the limit: every request answered.
    let pings: Vec<String> = (0..1024)
        .map(|i| format!(r#"{{"jsonrpc":"2.0","id":{i},"method":"ping"}}"#))
        .collect();
    let full = raw(addr, &head, &format!("[{}]", pings.join(","))).await;
    assert_eq!(full.status, 200, "{full:?}");
    let answers: Value = serde_json::from_str(&full.body).unwrap();
    assert_eq!(answers.as_array().unwrap().len(), 1024);
}

#[tokio::test]
async fn bad_input_gets_clear_errors() {
    let addr = start(None, echo_starter(Arc::default())).await;
    let not_json = raw(addr, &post_head(addr, ""), "{not json").await;
    assert_eq!(not_json.status, 400);
    assert!(not_json.body.contains("-32700"), "{not_json:?}");
    let batch = raw(addr, &post_head(addr, ""), &format!("[{INITIALIZE}]")).await;
    assert_eq!(batch.status, 400);
    assert!(
        batch
            .body
            .contains("initialize must not be part of a batch"),
        "{batch:?}"
    );
    let no_message = raw(addr, &post_head(addr, ""), r#"{"jsonrpc":"2.0","id":1}"#).await;
    assert_eq!(no_message.status, 400);
    let text = post_head(addr, "").replace("application/json\n", "text/plain\n");
    assert_eq!(raw(addr, &text, INITIALIZE).await.status, 415);
    let version = post_head(addr, "MCP-Protocol-Version: latest");
    assert_eq!(raw(addr, &version, INITIALIZE).await.status, 400);
    let path = post_head(addr, "").replace("POST /mcp", "POST /other");
    assert_eq!(raw(addr, &path, INITIALIZE).await.status, 404);
    let put = post_head(addr, "").replace("POST", "PUT");
    let put = raw(addr, &put, INITIALIZE).await;
    assert_eq!(put.status, 405);
    assert_eq!(put.header("allow"), Some("GET, POST, DELETE"));
    let get = format!(
        "GET /mcp HTTP/1.1\nHost: 127.0.0.1:{}\nAccept: text/event-stream",
        addr.port()
    );
    assert_eq!(
        raw(addr, &get, "").await.status,
        400,
        "GET without a session"
    );
}

#[tokio::test]
async fn a_relay_that_stops_answers_with_errors_not_hangs() {
    // A relay that reads the first message, then stops without answering.
    let starter: SessionStarter = Arc::new(|mut link: Link, _| {
        tokio::spawn(async move {
            let _ = link.inbound.recv().await;
        });
    });
    let addr = start(None, starter).await;
    let answer = raw(addr, &post_head(addr, ""), INITIALIZE).await;
    assert_eq!(answer.status, 200);
    let body: Value = serde_json::from_str(&answer.body).unwrap();
    assert_eq!(body["id"], 1);
    assert_eq!(body["error"]["code"], -32603);
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("session ended")
    );
    // The session is gone: the client is told to start again.
    let session = answer.header("mcp-session-id").unwrap();
    let ping = r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#;
    let later = raw(
        addr,
        &post_head(addr, &format!("Mcp-Session-Id: {session}")),
        ping,
    )
    .await;
    assert_eq!(later.status, 404);

    // A relay that is gone before the first message: a clear error at once.
    let addr = start(None, Arc::new(|link, _| drop(link))).await;
    let answer = raw(addr, &post_head(addr, ""), INITIALIZE).await;
    assert_eq!(answer.status, 404, "{answer:?}");
    assert!(answer.body.contains("session ended"));
}

#[tokio::test]
async fn an_idle_session_is_ended() {
    let log = Arc::new(EchoLog::default());
    let idle = Duration::from_millis(300);
    let addr = start_with("127.0.0.1:0", None, idle, echo_starter(log.clone())).await;
    let session = raw_session(addr).await;
    let ping = r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#;
    let head = post_head(addr, &format!("Mcp-Session-Id: {session}"));
    // Used more often than the timeout: it stays.
    for _ in 0..4 {
        tokio::time::sleep(idle / 3).await;
        assert_eq!(raw(addr, &head, ping).await.status, 200);
    }
    // A call in flight longer than the timeout keeps it too.
    let slow = r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"s","delay_ms":900}}}"#;
    let answer = raw(addr, &head, slow).await;
    assert!(answer.body.contains(r#""text":"s""#), "{answer:?}");
    assert!(log.closed.lock().unwrap().is_empty());
    // Then left alone: ended, and the relay is told.
    wait_until("the idle session is ended", || {
        log.closed.lock().unwrap().len() == 1
    })
    .await;
    assert!(log.closed.lock().unwrap()[0].contains("idle"));
    assert_eq!(raw(addr, &head, ping).await.status, 404);
}

#[tokio::test]
async fn a_cancelled_request_is_answered_no_more() {
    let addr = start(None, echo_starter(Arc::default())).await;
    let session = raw_session(addr).await;
    let head = post_head(addr, &format!("Mcp-Session-Id: {session}"));
    let slow = r#"{"jsonrpc":"2.0","id":"slow","method":"tools/call","params":{"name":"echo","arguments":{"text":"late","delay_ms":5000}}}"#;
    let call = tokio::spawn({
        let head = head.clone();
        async move { raw(addr, &head, slow).await }
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let cancel =
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"slow"}}"#;
    assert_eq!(raw(addr, &head, cancel).await.status, 202);
    // The POST ends at once (well before the 5 s call), without the late result.
    let answer = tokio::time::timeout(Duration::from_secs(3), call)
        .await
        .unwrap()
        .unwrap();
    assert!(!answer.body.contains("late"), "{answer:?}");
}

#[tokio::test]
async fn a_get_stream_keeps_a_session_until_its_client_goes() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let log = Arc::new(EchoLog::default());
    let idle = Duration::from_millis(300);
    let addr = start_with("127.0.0.1:0", None, idle, echo_starter(log.clone())).await;
    let session = raw_session(addr).await;
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let get = format!(
        "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAccept: text/event-stream\r\nMcp-Session-Id: {session}\r\n\r\n",
        addr.port()
    );
    stream.write_all(get.as_bytes()).await.unwrap();
    let mut head = vec![0; 512];
    let read = stream.read(&mut head).await.unwrap();
    assert!(String::from_utf8_lossy(&head[..read]).contains("text/event-stream"));
    // While the stream is open the client is there: no idle end.
    tokio::time::sleep(idle * 3).await;
    assert!(log.closed.lock().unwrap().is_empty());
    // The client goes away without DELETE: the session ends once idle.
    drop(stream);
    wait_until("the abandoned session is ended", || {
        log.closed.lock().unwrap().len() == 1
    })
    .await;
}

#[tokio::test]
async fn a_token_under_16_characters_is_refused_at_start() {
    for (tokens, index) in [
        (vec!["s3cret".to_owned()], 1),
        (vec!["0123456789abcdef".to_owned(), "x".repeat(15)], 2),
    ] {
        let options = ListenOptions {
            addr: "127.0.0.1:0".parse().unwrap(),
            tokens,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            limits: Limits::default(),
        };
        let error = http_server::bind(options, echo_starter(Arc::default()))
            .await
            .unwrap_err();
        assert!(
            matches!(&error, ListenError::WeakToken { index: at, .. } if *at == index),
            "{error}"
        );
        let text = error.to_string();
        assert!(
            text.contains("ENVELOPE_TOKEN") && text.contains("at least 16"),
            "{text}"
        );
        assert!(
            !text.contains("s3cret"),
            "the error shows the token: {text}"
        );
    }
    // 16 is enough.
    let addr = start(Some("0123456789abcdef"), echo_starter(Arc::default())).await;
    let head = post_head(addr, "Authorization: Bearer 0123456789abcdef");
    assert_eq!(raw(addr, &head, INITIALIZE).await.status, 200);
}

#[tokio::test]
async fn the_bearer_scheme_is_case_insensitive() {
    let token = "case-token-0123456789";
    let addr = start(Some(token), echo_starter(Arc::default())).await;
    for scheme in ["Bearer", "bearer", "BEARER", "bEARER"] {
        let head = post_head(addr, &format!("Authorization: {scheme} {token}"));
        let answer = raw(addr, &head, INITIALIZE).await;
        assert_eq!(answer.status, 200, "{scheme}: {answer:?}");
    }
    let head = post_head(addr, &format!("Authorization: Basic {token}"));
    assert_eq!(raw(addr, &head, INITIALIZE).await.status, 401);
}

#[tokio::test]
async fn two_host_or_two_origin_headers_are_a_bad_request() {
    let log = Arc::new(EchoLog::default());
    let addr = start(None, echo_starter(log.clone())).await;
    let port = addr.port();
    for extra in [
        format!("Host: 127.0.0.1:{port}"),
        "Host: evil.example".to_owned(),
        "Origin: http://localhost:1\nOrigin: http://localhost:2".to_owned(),
        "Origin: http://localhost:1\nOrigin: http://evil.example".to_owned(),
    ] {
        let answer = raw(addr, &post_head(addr, &extra), INITIALIZE).await;
        assert_eq!(answer.status, 400, "{extra}: {answer:?}");
        assert!(answer.body.contains("more than one"), "{answer:?}");
    }
    assert_eq!(log.sessions.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn an_absolute_form_target_is_checked_like_host() {
    let log = Arc::new(EchoLog::default());
    let addr = start(None, echo_starter(log.clone())).await;
    let port = addr.port();
    let absolute = |authority: &str| {
        post_head(addr, "").replace("POST /mcp", &format!("POST http://{authority}/mcp"))
    };
    let foreign = raw(addr, &absolute("evil.example"), INITIALIZE).await;
    assert_eq!(foreign.status, 421, "{foreign:?}");
    assert!(foreign.body.contains("evil.example"), "{foreign:?}");
    assert_eq!(log.sessions.load(Ordering::SeqCst), 0);
    // Both checked: a loopback target with a foreign Host is refused too.
    let head = absolute(&format!("127.0.0.1:{port}"))
        .replace(&format!("Host: 127.0.0.1:{port}"), "Host: evil.example");
    assert_eq!(raw(addr, &head, INITIALIZE).await.status, 421);
    // A loopback target and Host pass.
    let fine = raw(addr, &absolute(&format!("localhost:{port}")), INITIALIZE).await;
    assert_eq!(fine.status, 200, "{fine:?}");
}

/// Reads whatever the server sends until it closes (or `limit` passes: then `None`).
async fn read_until_closed(stream: &mut tokio::net::TcpStream, limit: Duration) -> Option<String> {
    use tokio::io::AsyncReadExt;
    let mut got = Vec::new();
    match tokio::time::timeout(limit, stream.read_to_end(&mut got)).await {
        Ok(_) => Some(String::from_utf8_lossy(&got).into_owned()),
        Err(_) => None,
    }
}

#[tokio::test]
async fn slow_headers_close_the_connection() {
    use tokio::io::AsyncWriteExt;
    let limits = Limits::default().header_read_timeout(Duration::from_millis(300));
    let addr = start_limited(
        "127.0.0.1:0",
        None,
        DEFAULT_IDLE_TIMEOUT,
        limits,
        echo_starter(Arc::default()),
    )
    .await;
    // Headers a piece at a time, never finished: closed after the header timeout.
    let mut slow = tokio::net::TcpStream::connect(addr).await.unwrap();
    slow.write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        .await
        .unwrap();
    let started = std::time::Instant::now();
    for _ in 0..3 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let _ = slow.write_all(b"X-Slow: 1\r\n").await;
    }
    let closed = read_until_closed(&mut slow, Duration::from_secs(5)).await;
    assert!(closed.is_some(), "the connection stays open");
    assert!(started.elapsed() < Duration::from_secs(3));
    // Nothing at all: closed too.
    let mut idle = tokio::net::TcpStream::connect(addr).await.unwrap();
    assert!(
        read_until_closed(&mut idle, Duration::from_secs(5))
            .await
            .is_some(),
        "an idle connection stays open"
    );
    // A prompt client is served as before.
    assert_eq!(
        raw(addr, &post_head(addr, ""), INITIALIZE).await.status,
        200
    );
}

#[tokio::test]
async fn a_slow_body_gets_408() {
    use tokio::io::AsyncWriteExt;
    let limits = Limits::default().body_read_timeout(Duration::from_millis(300));
    let log = Arc::new(EchoLog::default());
    let addr = start_limited(
        "127.0.0.1:0",
        None,
        DEFAULT_IDLE_TIMEOUT,
        limits,
        echo_starter(log.clone()),
    )
    .await;
    // Headers in, then half the body: 408, and the connection closed.
    let mut body = tokio::net::TcpStream::connect(addr).await.unwrap();
    let head = post_head(addr, "").replace('\n', "\r\n");
    let request = format!(
        "{head}\r\nContent-Length: {}\r\n\r\n{}",
        INITIALIZE.len(),
        &INITIALIZE[..20]
    );
    body.write_all(request.as_bytes()).await.unwrap();
    let answer = read_until_closed(&mut body, Duration::from_secs(5))
        .await
        .expect("the server answers and closes");
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("did not arrive"), "{answer}");
    assert_eq!(log.sessions.load(Ordering::SeqCst), 0);
    // A prompt client is served as before.
    assert_eq!(
        raw(addr, &post_head(addr, ""), INITIALIZE).await.status,
        200
    );
}

#[tokio::test]
async fn beyond_the_connection_cap_a_new_connection_gets_503() {
    const CAP: usize = 4;
    let limits = Limits::default()
        .max_connections(CAP)
        .header_read_timeout(Duration::from_secs(30));
    let addr = start_limited(
        "127.0.0.1:0",
        None,
        DEFAULT_IDLE_TIMEOUT,
        limits,
        echo_starter(Arc::default()),
    )
    .await;
    // CAP slow clients that send nothing hold every connection.
    let mut holders = Vec::new();
    for _ in 0..CAP {
        holders.push(tokio::net::TcpStream::connect(addr).await.unwrap());
    }
    // The next one is refused at once, with 503 and a JSON-RPC error body.
    let mut refused = tokio::net::TcpStream::connect(addr).await.unwrap();
    let answer = read_until_closed(&mut refused, Duration::from_secs(5))
        .await
        .expect("the server answers and closes at once");
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
    assert!(answer.contains("too many connections"), "{answer}");
    assert!(answer.contains(r#""jsonrpc":"2.0""#), "{answer}");
    let answer = raw(addr, &post_head(addr, ""), INITIALIZE).await;
    assert_eq!(answer.status, 503, "{answer:?}");
    // The slow clients go: service resumes.
    drop(holders);
    for attempt in 0.. {
        let answer = raw(addr, &post_head(addr, ""), INITIALIZE).await;
        if answer.status == 200 {
            break;
        }
        assert!(attempt < 100, "still refused: {answer:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn beyond_the_sessions_of_one_client_initialize_gets_429() {
    const CAP: usize = 3;
    let log = Arc::new(EchoLog::default());
    let limits = Limits::default().max_sessions_per_client(CAP);
    let addr = start_limited(
        "127.0.0.1:0",
        None,
        DEFAULT_IDLE_TIMEOUT,
        limits,
        echo_starter(log.clone()),
    )
    .await;
    let mut sessions = Vec::new();
    for _ in 0..CAP {
        sessions.push(raw_session(addr).await);
    }
    let answer = raw(addr, &post_head(addr, ""), INITIALIZE).await;
    assert_eq!(answer.status, 429, "{answer:?}");
    let body: Value = serde_json::from_str(&answer.body).unwrap();
    assert_eq!(body["jsonrpc"], "2.0");
    assert_eq!(body["id"], 1, "the error answers the initialize");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("too many sessions"),
        "{body}"
    );
    assert_eq!(log.sessions.load(Ordering::SeqCst), CAP);
    // The sessions already open still work.
    let ping = r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#;
    let head = post_head(addr, &format!("Mcp-Session-Id: {}", sessions[0]));
    assert_eq!(raw(addr, &head, ping).await.status, 200);
    // One ended (DELETE): a new one may start.
    let delete = format!(
        "DELETE /mcp HTTP/1.1\nHost: 127.0.0.1:{}\nMcp-Session-Id: {}",
        addr.port(),
        sessions[0]
    );
    assert_eq!(raw(addr, &delete, "").await.status, 200);
    raw_session(addr).await;
}

#[tokio::test]
async fn by_default_local_clients_are_not_capped_per_address() {
    // Every local client shares 127.0.0.1: the default cap is for remote addresses.
    let log = Arc::new(EchoLog::default());
    let addr = start_limited(
        "127.0.0.1:0",
        None,
        DEFAULT_IDLE_TIMEOUT,
        Limits::default(),
        echo_starter(log.clone()),
    )
    .await;
    let many = envelope_mcp::transport::http_server::DEFAULT_MAX_SESSIONS_PER_CLIENT + 4;
    for _ in 0..many {
        raw_session(addr).await;
    }
    assert_eq!(log.sessions.load(Ordering::SeqCst), many);
}
