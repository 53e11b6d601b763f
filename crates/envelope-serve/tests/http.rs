//! The HTTP view of `serve`: envelopes and error statuses, tokens and identities, the
//! guard's rules, subscriptions as server-sent events, offloaded payloads read back, and
//! the OpenAPI document.

mod support;

use std::net::SocketAddr;
use std::sync::Arc;

use envelope_serve::Tokens;
use envelope_serve::http::{self, Access};
use serde_json::{Value, json};
use support::{Flags, SECRET, service};

const ALICE: &str = "alice-token-0123456789";
const BOB: &str = "bob-token-0123456789ab";

async fn start(dir: &std::path::Path, limit: usize, access: Access) -> SocketAddr {
    serve(service(dir, limit, &Flags::default()), access).await
}

/// The HTTP view of `service` on 127.0.0.1, running.
async fn serve(service: Arc<envelope_serve::service::Service>, access: Access) -> SocketAddr {
    let view = http::bind("127.0.0.1:0".parse().unwrap(), service, access)
        .await
        .unwrap();
    let addr = view.local_addr().unwrap();
    tokio::spawn(view.run());
    addr
}

/// The HTTP view of a service over the test registry with `settings`, calls in process.
async fn start_with(settings: envelope_serve::service::Settings) -> SocketAddr {
    let dispatch =
        envelope_serve::dispatch::Dispatch::local(Arc::new(support::registry(&Flags::default())));
    let service = Arc::new(
        envelope_serve::service::Service::new(dispatch, settings, Default::default()).unwrap(),
    );
    serve(service, Access::default()).await
}

fn tokens() -> Access {
    let text = json!({
        ALICE: {"id": "alice", "scopes": ["files:write"]},
        BOB: {"id": "bob", "scopes": []},
    });
    Access {
        tokens: Some(Arc::new(Tokens::parse(&text.to_string()).unwrap())),
        identity: None,
    }
}

async fn post(addr: SocketAddr, id: &str, body: Value, token: Option<&str>) -> (u16, Value) {
    let mut request = reqwest::Client::new()
        .post(format!("http://{addr}/ops/{id}"))
        .json(&body);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap())
}

#[tokio::test]
async fn envelopes_and_errors_with_their_statuses() {
    let dir = tempfile::tempdir().unwrap();
    let addr = start(dir.path(), 16 * 1024, Access::default()).await;
    let (status, envelope) = post(addr, "files.stat", json!({"path": "a"}), None).await;
    assert_eq!(status, 200);
    assert_eq!(envelope["data"], json!({"size": 3, "path": "a"}));
    assert_eq!(envelope["meta"]["operationId"], "files.stat");
    let (status, envelope) = post(addr, "text.upper", json!("abc"), None).await;
    assert_eq!((status, &envelope["data"]), (200, &json!("ABC")));

    for (id, body, expected_status, expected_code) in [
        ("files.stat", json!({"path": 1}), 400, "VALIDATION_ERROR"),
        ("files.delete", json!({}), 403, "ACCESS_DENIED"),
        ("no.such", json!({}), 404, "OPERATION_NOT_FOUND"),
        ("fail.always", json!({}), 500, "BROKEN"),
    ] {
        let (status, error) = post(addr, id, body, None).await;
        assert_eq!(status, expected_status, "{id}: {error}");
        assert_eq!(error["code"], expected_code, "{id}: {error}");
        assert!(error["message"].is_string());
    }
    let (_, error) = post(addr, "fail.always", json!({}), None).await;
    let text = error.to_string();
    assert!(
        !text.contains("hunter2-very-secret") && !text.contains(SECRET),
        "{text}"
    );

    // An empty body is {}; a body that is not JSON is refused.
    let client = reqwest::Client::new();
    let empty = client
        .post(format!("http://{addr}/ops/clock.ticks"))
        .header("accept", "application/json")
        .send()
        .await
        .unwrap();
    assert_eq!(
        empty.status(),
        406,
        "a subscription needs text/event-stream"
    );
    let garbage = client
        .post(format!("http://{addr}/ops/files.stat"))
        .header("content-type", "application/json")
        .body("{nope")
        .send()
        .await
        .unwrap();
    assert_eq!(garbage.status(), 400);
    let wrong_method = client
        .get(format!("http://{addr}/ops/files.stat"))
        .send()
        .await
        .unwrap();
    assert_eq!(wrong_method.status(), 405);
}

/// A token limit holds on the HTTP view's envelopes as on the MCP results: under no byte
/// limit, each envelope is at most the tokens as o200k_base counts its JSON (it was bounded
/// by an estimate in bytes only, which text of a token a byte went far over).
#[tokio::test]
async fn the_http_view_holds_a_token_limit() {
    let dir = tempfile::tempdir().unwrap();
    let mut settings = support::settings(dir.path(), envelope_mcp::shaping::NO_BYTE_LIMIT);
    let o200k = envelope::tokens::Tokenizer::O200kBase;
    settings.tokens = Some(envelope_mcp::shaping::TokenBudget {
        limit: 700,
        tokenizer: envelope_mcp::shaping::shared_tokenizer(o200k.clone()),
    });
    let addr = start_with(settings).await;
    for rows in [3, 3000] {
        let (status, envelope) = post(addr, "data.big", json!({"rows": rows}), None).await;
        assert_eq!(status, 200, "{envelope}");
        let text = serde_json::to_string(&envelope).unwrap();
        let count = o200k.count(&text);
        assert!(count <= 700, "{rows} rows: {count} tokens: {text}");
        if rows == 3 {
            assert_eq!(envelope["data"]["rows"].as_array().map(Vec::len), Some(3));
        } else {
            // Offloaded past the bytes 700 tokens hold: a summary and the artifact.
            assert!(
                envelope["meta"]["cas_digest"].is_string() || text.contains("sha256:"),
                "{text}"
            );
            assert!(count > 100, "{count}: {text}");
        }
    }
    // Runes take a token a byte: 2,100 bytes, under the bytes 700 tokens hold on average,
    // are 2,100 tokens. Cut to the tokens, not to an estimate in bytes.
    let (status, envelope) = post(addr, "text.upper", json!("ᚠ".repeat(700)), None).await;
    assert_eq!(status, 200, "{envelope}");
    let text = serde_json::to_string(&envelope).unwrap();
    let count = o200k.count(&text);
    assert!((500..=700).contains(&count), "{count} tokens: {text}");
    assert!(text.contains("700 tokens (o200k_base)"), "{text}");
}

#[tokio::test]
async fn a_timeout_is_504() {
    let dir = tempfile::tempdir().unwrap();
    let mut settings = support::settings(dir.path(), 16 * 1024);
    settings.timeout = std::time::Duration::from_millis(200);
    let addr = start_with(settings).await;
    let (status, error) = post(addr, "slow.wait", json!({"ms": 5000}), None).await;
    assert_eq!((status, error["code"].as_str()), (504, Some("TIMEOUT")));
}

#[tokio::test]
async fn tokens_decide_who_calls() {
    let dir = tempfile::tempdir().unwrap();
    let addr = start(dir.path(), 16 * 1024, tokens()).await;
    let (status, error) = post(addr, "files.stat", json!({"path": "a"}), None).await;
    assert_eq!(
        (status, error["code"].as_str()),
        (401, Some("UNAUTHORIZED"))
    );
    let (status, _) = post(
        addr,
        "files.stat",
        json!({"path": "a"}),
        Some("nope-nope-nope-nope"),
    )
    .await;
    assert_eq!(status, 401);
    let (status, _) = post(addr, "files.delete", json!({}), Some(BOB)).await;
    assert_eq!(status, 403, "bob has no files:write");
    let (status, envelope) = post(addr, "files.delete", json!({}), Some(ALICE)).await;
    assert_eq!((status, &envelope["data"]["deleted"]), (200, &json!(true)));

    // The document says how to authenticate; health needs no token.
    let client = reqwest::Client::new();
    let doc: Value = client
        .get(format!("http://{addr}/openapi.json"))
        .bearer_auth(BOB)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        doc["components"]["securitySchemes"]["bearer"]["scheme"],
        "bearer"
    );
    let health = client
        .get(format!("http://{addr}/health"))
        .send()
        .await
        .unwrap();
    assert_eq!(health.status(), 200);
}

#[tokio::test]
async fn the_guard_refuses_foreign_origins_and_hosts_and_open_binds() {
    let dir = tempfile::tempdir().unwrap();
    let addr = start(dir.path(), 16 * 1024, Access::default()).await;
    let client = reqwest::Client::new();
    let foreign = client
        .post(format!("http://{addr}/ops/files.stat"))
        .header("origin", "http://evil.example")
        .json(&json!({"path": "a"}))
        .send()
        .await
        .unwrap();
    assert_eq!(foreign.status(), 403);
    let rebound = client
        .get(format!("http://{addr}/openapi.json"))
        .header("host", "evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(rebound.status(), 421);
    let open = http::bind(
        "0.0.0.0:0".parse().unwrap(),
        service(dir.path(), 1024, &Flags::default()),
        Access::default(),
    )
    .await;
    assert!(open.is_err(), "a non-loopback bind without tokens");
}

#[tokio::test]
async fn a_subscription_is_a_stream_of_events() {
    let dir = tempfile::tempdir().unwrap();
    let addr = start(dir.path(), 16 * 1024, Access::default()).await;
    let response = reqwest::Client::new()
        .post(format!("http://{addr}/ops/clock.ticks"))
        .header("accept", "text/event-stream")
        .json(&json!({"count": 3}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(
        response.headers()["content-type"].to_str().unwrap(),
        "text/event-stream"
    );
    let text = response.text().await.unwrap();
    let events: Vec<Value> = text
        .split("\n\n")
        .filter_map(|event| event.strip_prefix("data: "))
        .map(|data| serde_json::from_str(data).unwrap())
        .collect();
    let ticks: Vec<&Value> = events.iter().map(|e| &e["data"]["tick"]).collect();
    assert_eq!(ticks, [&json!(1), &json!(2), &json!(3)], "{text}");
}

#[tokio::test]
async fn a_big_payload_is_offloaded_and_read_back_from_the_artifact_endpoint() {
    let dir = tempfile::tempdir().unwrap();
    let limit = 4096;
    let addr = start(dir.path(), limit, Access::default()).await;
    let response = reqwest::Client::new()
        .post(format!("http://{addr}/ops/data.big"))
        .json(&json!({"rows": 1500}))
        .send()
        .await
        .unwrap();
    let body = response.bytes().await.unwrap();
    assert!(body.len() <= limit, "{} bytes", body.len());
    let text = String::from_utf8(body.to_vec()).unwrap();
    assert!(!text.contains(SECRET));
    let envelope: Value = serde_json::from_str(&text).unwrap();
    let digest = envelope["meta"]["artifact"]["digest"]
        .as_str()
        .or_else(|| envelope["meta"]["artifact"].as_str())
        .unwrap_or_else(|| panic!("meta.artifact names the digest: {envelope}"))
        .to_owned();
    let hex = digest.trim_start_matches("sha256:");
    let stored: Value = reqwest::get(format!("http://{addr}/artifacts/sha256/{hex}"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(stored["rows"].as_array().unwrap().len(), 1500);
    assert!(
        !stored.to_string().contains(SECRET),
        "the store holds the secret"
    );
    let missing = reqwest::get(format!("http://{addr}/artifacts/sha256/{}", "0".repeat(64)))
        .await
        .unwrap();
    assert_eq!(missing.status(), 404);
}

#[tokio::test]
async fn the_openapi_document_has_one_path_per_operation() {
    let dir = tempfile::tempdir().unwrap();
    let addr = start(dir.path(), 16 * 1024, Access::default()).await;
    let doc: Value = reqwest::get(format!("http://{addr}/openapi.json"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(doc["openapi"], "3.1.0");
    let paths = doc["paths"].as_object().unwrap();
    assert_eq!(paths.len(), 8);
    let ticks = &paths["/ops/clock.ticks"]["post"];
    assert_eq!(ticks["operationId"], "clock.ticks");
    assert_eq!(ticks["x-envelope-type"], "subscription");
    assert!(ticks["responses"]["200"]["content"]["text/event-stream"].is_object());
    let upper = &paths["/ops/text.upper"]["post"];
    assert_eq!(
        doc["components"]["schemas"]["text_upper.input"],
        json!({"type": "string"})
    );
    assert_eq!(
        upper["requestBody"]["content"]["application/json"]["schema"]["$ref"],
        "#/components/schemas/text_upper.input"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn from_openapi_reads_the_document_back_into_the_same_operations_and_calls_them() {
    let dir = tempfile::tempdir().unwrap();
    let addr = start(dir.path(), 16 * 1024, Access::default()).await;
    let served = support::registry(&Flags::default());
    let file = envelope_ops::file::RegistryFile::from_toml(&format!(
        "[openapi.remote]\nspec = \"http://{addr}/openapi.json\"\nkeepIds = true\n"
    ))
    .unwrap();
    let loaded = file.load().await;
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let read_back = &loaded.registry;
    let ids = |r: &envelope_ops::Registry| r.specs().map(|s| s.id()).collect::<Vec<_>>();
    assert_eq!(ids(read_back), ids(&served));
    for spec in served.specs() {
        let back = read_back.spec(&spec.id()).unwrap();
        assert_eq!(back.kind, spec.kind, "{}", spec.id());
        // from_openapi expands every local `$ref` (`people.add` has one into its `$defs`).
        let expanded = envelope_ops::openapi::refs::resolve(&spec.input_schema).unwrap();
        assert_eq!(back.input_schema, expanded, "{}", spec.id());
        assert_eq!(back.description, spec.description, "{}", spec.id());
        let output = envelope_ops::openapi::refs::resolve(&spec.output_schema).unwrap();
        assert_eq!(back.output_schema, output, "{}", spec.id());
    }
    // Calls through the adapter reach the served operations: envelopes as they are,
    // CallErrors with their codes.
    let context = envelope_ops::Context::default();
    let done = read_back
        .execute("files.stat", json!({"path": "z"}), &context)
        .await
        .unwrap();
    assert_eq!(done.envelope["data"], json!({"size": 3, "path": "z"}));
    assert_eq!(done.envelope["meta"]["operationId"], "files.stat");
    let person = json!({"name": "Ada", "address": {"city": "London"}});
    let added = read_back
        .execute("people.add", person.clone(), &context)
        .await
        .unwrap();
    assert_eq!(added.envelope["data"], person);
    let refused = read_back
        .execute("people.add", json!({"name": "Ada", "age": 3}), &context)
        .await
        .unwrap_err();
    assert_eq!(refused.code, "VALIDATION_ERROR");
    let upper = read_back
        .execute("text.upper", json!("round trip"), &context)
        .await
        .unwrap();
    assert_eq!(upper.envelope["data"], "ROUND TRIP");
    let error = read_back
        .execute("fail.always", json!({}), &context)
        .await
        .unwrap_err();
    assert_eq!(error.code, "BROKEN");
    use futures::StreamExt;
    let ticks: Vec<Value> = read_back
        .subscribe("clock.ticks", json!({"count": 2}), &context)
        .unwrap()
        .map(|item| item.unwrap().envelope["data"]["tick"].clone())
        .collect()
        .await;
    assert_eq!(ticks, [json!(1), json!(2)]);
}

/// Sends `request` as is on a new connection and reads until the server closes (10 s at most).
async fn raw(addr: SocketAddr, request: &str) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    tokio::time::timeout(
        std::time::Duration::from_secs(10),
        stream.read_to_end(&mut answer),
    )
    .await
    .expect("the server answers and closes")
    .unwrap();
    String::from_utf8_lossy(&answer).into_owned()
}

#[tokio::test]
async fn the_view_checks_like_the_mcp_endpoint_scheme_duplicates_and_absolute_targets() {
    let dir = tempfile::tempdir().unwrap();
    let addr = start(dir.path(), 16 * 1024, tokens()).await;
    let port = addr.port();
    let get = |target: &str, extra: &str| {
        format!(
            "GET {target} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{extra}Connection: close\r\n\r\n"
        )
    };
    // The Authorization scheme in any case.
    for scheme in ["Bearer", "bearer", "BEARER"] {
        let answer = raw(
            addr,
            &get(
                "/openapi.json",
                &format!("Authorization: {scheme} {ALICE}\r\n"),
            ),
        )
        .await;
        assert!(answer.starts_with("HTTP/1.1 200"), "{scheme}: {answer}");
    }
    let auth = format!("Authorization: Bearer {ALICE}\r\n");
    // Two Host headers, two Origin headers: 400.
    for extra in [
        format!("Host: 127.0.0.1:{port}\r\n"),
        "Origin: http://localhost\r\nOrigin: http://localhost:1\r\n".to_owned(),
    ] {
        let answer = raw(addr, &get("/openapi.json", &format!("{auth}{extra}"))).await;
        assert!(answer.starts_with("HTTP/1.1 400"), "{extra}: {answer}");
    }
    // An absolute-form target: its authority checked like Host.
    let answer = raw(addr, &get("http://evil.example/openapi.json", &auth)).await;
    assert!(answer.starts_with("HTTP/1.1 421"), "{answer}");
    let target = format!("http://localhost:{port}/openapi.json");
    let answer = raw(addr, &get(&target, &auth)).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
}

#[tokio::test]
async fn the_view_has_a_body_timeout_and_a_connection_cap() {
    use envelope_mcp::transport::http_server::Limits;
    use std::time::Duration;
    let dir = tempfile::tempdir().unwrap();
    let limits = Limits::default()
        .body_read_timeout(Duration::from_millis(300))
        .header_read_timeout(Duration::from_secs(30))
        .max_connections(2);
    let view = http::bind(
        "127.0.0.1:0".parse().unwrap(),
        service(dir.path(), 16 * 1024, &Flags::default()),
        Access::default(),
    )
    .await
    .unwrap()
    .limits(limits);
    let addr = view.local_addr().unwrap();
    tokio::spawn(view.run());
    let port = addr.port();
    // Half a body, then nothing: 408.
    let request = format!(
        "POST /ops/files.stat HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\nContent-Length: 40\r\n\r\n{{\"path\""
    );
    let answer = raw(addr, &request).await;
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("REQUEST_TIMEOUT"), "{answer}");
    // Two idle connections hold the cap: the next gets 503.
    let holders = [
        tokio::net::TcpStream::connect(addr).await.unwrap(),
        tokio::net::TcpStream::connect(addr).await.unwrap(),
    ];
    let health =
        format!("GET /health HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n");
    let answer = raw(addr, &health).await;
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
    assert!(answer.contains("too many connections"), "{answer}");
    drop(holders);
    for attempt in 0.. {
        let answer = raw(addr, &health).await;
        if answer.starts_with("HTTP/1.1 200") {
            break;
        }
        assert!(attempt < 100, "still refused: {answer}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn get(addr: SocketAddr, path: &str, token: &str) -> (u16, String) {
    let response = reqwest::Client::new()
        .get(format!("http://{addr}{path}"))
        .bearer_auth(token)
        .send()
        .await
        .unwrap();
    (response.status().as_u16(), response.text().await.unwrap())
}

#[tokio::test]
async fn with_tokens_a_caller_reads_only_its_own_artifacts_and_sees_only_its_operations() {
    let dir = tempfile::tempdir().unwrap();
    let addr = start(dir.path(), 4096, tokens()).await;
    let (status, envelope) = post(addr, "data.big", json!({"rows": 1500}), Some(ALICE)).await;
    assert_eq!(status, 200, "{envelope}");
    let digest = envelope["meta"]["artifact"]["digest"]
        .as_str()
        .or_else(|| envelope["meta"]["artifact"].as_str())
        .unwrap_or_else(|| panic!("meta.artifact names the digest: {envelope}"))
        .to_owned();
    let hex = digest.trim_start_matches("sha256:").to_owned();
    let (status, body) = get(addr, &format!("/artifacts/sha256/{hex}"), ALICE).await;
    assert_eq!(status, 200);
    assert!(body.contains("\"rows\""));
    // Bob gets what he gets for an artifact that was never stored.
    let never = "5".repeat(64);
    let (denied_status, denied) = get(addr, &format!("/artifacts/sha256/{hex}"), BOB).await;
    let (missing_status, missing) = get(addr, &format!("/artifacts/sha256/{never}"), BOB).await;
    assert_eq!((denied_status, missing_status), (404, 404));
    assert_eq!(denied.replace(&hex, "D"), missing.replace(&never, "D"));

    // The document lists what each may call: files.delete needs files:write.
    let (_, alice_doc) = get(addr, "/openapi.json", ALICE).await;
    let (_, bob_doc) = get(addr, "/openapi.json", BOB).await;
    let paths = |doc: &str| -> Vec<String> {
        let doc: Value = serde_json::from_str(doc).unwrap();
        doc["paths"].as_object().unwrap().keys().cloned().collect()
    };
    assert!(paths(&alice_doc).contains(&"/ops/files.delete".to_string()));
    assert!(!paths(&bob_doc).contains(&"/ops/files.delete".to_string()));
    assert_eq!(paths(&alice_doc).len(), paths(&bob_doc).len() + 1);
}

/// An upstream HTTP service on 127.0.0.1 answering by path: `/s/<status>` that status
/// with a JSON problem, `/slow` after 5 s. Each connection answers one request.
async fn upstream() -> SocketAddr {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        loop {
            let Ok((mut stream, _)) = listener.accept().await else {
                return;
            };
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut buf = [0u8; 1024];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match stream.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => head.extend_from_slice(&buf[..n]),
                    }
                }
                let head = String::from_utf8_lossy(&head);
                let path = head.split(' ').nth(1).unwrap_or("/").to_owned();
                if path == "/slow" {
                    tokio::time::sleep(std::time::Duration::from_secs(5)).await;
                }
                let status: u16 = path
                    .strip_prefix("/s/")
                    .and_then(|s| s.parse().ok())
                    .unwrap_or(200);
                let body = json!({"message": format!("upstream says {status}"), "errors": [{"field": "name"}]})
                    .to_string();
                let answer = format!(
                    "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = stream.write_all(answer.as_bytes()).await;
            });
        }
    });
    addr
}

/// Issue 29: the view answered an upstream's 4xx (Prism's 422 for a bad body) as 500. Now:
/// an upstream 4xx is that status with `{code, message, details}`, its 5xx or no answer
/// 502, its timeout 504.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_4xx_keeps_its_status_5xx_or_unreachable_is_502_timeout_504() {
    let dir = tempfile::tempdir().unwrap();
    let up = upstream().await;
    // A port nothing listens on.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let mut paths = serde_json::Map::new();
    for (name, path) in [
        ("invalid", "/s/422"),
        ("missing", "/s/404"),
        ("limited", "/s/429"),
        ("broken", "/s/500"),
        ("down", "/s/503"),
        ("slow", "/slow"),
        ("fine", "/s/200"),
    ] {
        paths.insert(
            path.into(),
            json!({"get": {"operationId": name, "responses": {"200": {"description": "ok"}}}}),
        );
    }
    let doc = json!({"openapi": "3.1.0", "info": {"title": "up", "version": "1"}, "paths": paths});
    std::fs::write(dir.path().join("up.json"), doc.to_string()).unwrap();
    let mut file = envelope_ops::file::RegistryFile::from_toml(&format!(
        "[openapi.up]\nspec = \"up.json\"\nbaseUrl = \"http://{up}\"\ntimeout = 1\n\n\
         [openapi.gone]\nspec = \"up.json\"\nbaseUrl = \"http://{closed}\"\n"
    ))
    .unwrap();
    file.base_dir = Some(dir.path().to_owned());
    let loaded = file.load().await;
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let service = envelope_serve::service::Service::new(
        envelope_serve::dispatch::Dispatch::local(Arc::new(loaded.registry)),
        support::settings(dir.path(), 16 * 1024),
        Arc::new(envelope_mcp::stats::Stats::default()),
    )
    .unwrap();
    let view = http::bind(
        "127.0.0.1:0".parse().unwrap(),
        Arc::new(service),
        Access::default(),
    )
    .await
    .unwrap();
    let addr = view.local_addr().unwrap();
    tokio::spawn(view.run());

    let (status, envelope) = post(addr, "up.fine", json!({}), None).await;
    assert_eq!(status, 200, "{envelope}");
    for (id, expected) in [
        ("up.invalid", 422),
        ("up.missing", 404),
        ("up.limited", 429),
        ("up.broken", 502),
        ("up.down", 502),
        ("gone.fine", 502),
        ("up.slow", 504),
    ] {
        let (status, error) = post(addr, id, json!({}), None).await;
        assert_eq!(status, expected, "{id}: {error}");
        assert!(
            error["code"].is_string() && error["message"].is_string(),
            "{id}: {error}"
        );
        let keys: Vec<&String> = error.as_object().unwrap().keys().collect();
        assert!(
            keys.iter()
                .all(|k| ["code", "message", "details"].contains(&k.as_str())),
            "{id}: {error}"
        );
    }
    // The upstream's answer is in the details: its status and body.
    let (_, error) = post(addr, "up.invalid", json!({}), None).await;
    assert_eq!(error["code"], "EXECUTION_ERROR", "{error}");
    assert_eq!(error["details"]["status"], 422, "{error}");
    assert_eq!(
        error["details"]["body"]["message"], "upstream says 422",
        "{error}"
    );
    let (_, error) = post(addr, "gone.fine", json!({}), None).await;
    assert_eq!(error["details"]["upstream"], "unreachable", "{error}");
    let (_, error) = post(addr, "up.slow", json!({}), None).await;
    assert_eq!(error["code"], "TIMEOUT", "{error}");
    // Errors of the view's own stay as they were.
    let (status, _) = post(addr, "no.such", json!({}), None).await;
    assert_eq!(status, 404);
}
