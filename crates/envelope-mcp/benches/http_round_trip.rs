//! What `--listen` adds to a small request's round trip, against a bare HTTP server in the
//! same process and run; and whether 1,000 calls in flight at once are served together.
//!
//! `cargo bench -p envelope-mcp --no-default-features --bench http_round_trip`
//!
//! - baseline: a hyper server that parses each POSTed JSON-RPC request and answers it (HTTP
//!   and JSON, nothing else);
//! - subject: `http_server` (sessions, routing) with a session that parses each frame and
//!   answers it through the `Link`, as the relay will.
//!
//! The same reqwest client (keep-alive, one connection) sends the same `tools/call` to both,
//! alternating blocks of requests so that load on the shared machine hits both alike.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use envelope_mcp::transport::http_server::{
    self, DEFAULT_IDLE_TIMEOUT, ListenOptions, SessionStarter,
};
use envelope_mcp::transport::{Incoming, Link};
use http_body_util::{BodyExt, Full};
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};

const CALL: &str = r#"{"jsonrpc":"2.0","id":ID,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a small argument"}}}"#;

fn answer(request: &[u8]) -> Vec<u8> {
    let request: Value = serde_json::from_slice(request).unwrap();
    let text = &request["params"]["arguments"]["text"];
    serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": request["id"],
        "result": {"content": [{"type": "text", "text": text}]}}))
    .unwrap()
}

async fn bare_server() -> u16 {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        loop {
            let (stream, _) = listener.accept().await.unwrap();
            tokio::spawn(async move {
                let service = service_fn(
                    |request: hyper::Request<hyper::body::Incoming>| async move {
                        let body = request.into_body().collect().await.unwrap().to_bytes();
                        let mut response =
                            hyper::Response::new(Full::new(Bytes::from(answer(&body))));
                        response
                            .headers_mut()
                            .insert("content-type", "application/json".parse().unwrap());
                        Ok::<_, Infallible>(response)
                    },
                );
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    port
}

/// A session answering every request through the Link; `delay_ms` in the arguments delays
/// that answer (on a task of its own, so answers are independent).
fn echo_starter() -> SessionStarter {
    Arc::new(|mut link: Link, _| {
        tokio::spawn(async move {
            while let Some(Incoming::Frame(frame)) = link.inbound.recv().await {
                let request: Value = serde_json::from_slice(&frame).unwrap();
                if request.get("id").is_none() {
                    continue;
                }
                let out = link.outbound.clone();
                let delay = request["params"]["arguments"]["delay_ms"]
                    .as_u64()
                    .unwrap_or(0);
                if delay == 0 {
                    let _ = out.send(answer(&frame)).await;
                } else {
                    tokio::spawn(async move {
                        tokio::time::sleep(Duration::from_millis(delay)).await;
                        let _ = out.send(answer(&frame)).await;
                    });
                }
            }
        });
    })
}

async fn proxy_server() -> u16 {
    let options = ListenOptions {
        addr: "127.0.0.1:0".parse().unwrap(),
        tokens: Vec::new(),
        idle_timeout: DEFAULT_IDLE_TIMEOUT,
        limits: http_server::Limits::default(),
    };
    let server = http_server::bind(options, echo_starter()).await.unwrap();
    let port = server.local_addr().unwrap().port();
    tokio::spawn(server.run());
    port
}

struct Endpoint {
    url: String,
    session: Option<String>,
}

async fn post(client: &reqwest::Client, endpoint: &Endpoint, body: String) -> reqwest::Response {
    let mut request = client
        .post(&endpoint.url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(body);
    if let Some(session) = &endpoint.session {
        request = request.header("mcp-session-id", session);
    }
    let response = request.send().await.unwrap();
    assert!(response.status().is_success());
    response
}

async fn round_trip(client: &reqwest::Client, endpoint: &Endpoint, id: usize) -> Duration {
    let start = Instant::now();
    let body = post(client, endpoint, CALL.replace("ID", &id.to_string()))
        .await
        .bytes()
        .await
        .unwrap();
    let elapsed = start.elapsed();
    assert!(body.windows(16).any(|w| w == b"a small argument"));
    elapsed
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(1024)
        .build()
        .unwrap();
    let bare = Endpoint {
        url: format!("http://127.0.0.1:{}/mcp", bare_server().await),
        session: None,
    };
    let proxy_url = format!("http://127.0.0.1:{}/mcp", proxy_server().await);
    let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}"#;
    let session = post(
        &client,
        &Endpoint {
            url: proxy_url.clone(),
            session: None,
        },
        init.into(),
    )
    .await;
    let session = session.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let proxy = Endpoint {
        url: proxy_url,
        session: Some(session),
    };

    const BLOCKS: usize = 40;
    const PER_BLOCK: usize = 100;
    for _ in 0..200 {
        round_trip(&client, &bare, 1).await;
        round_trip(&client, &proxy, 1).await;
    }
    let (mut bare_times, mut proxy_times) = (Vec::new(), Vec::new());
    for block in 0..BLOCKS {
        for i in 0..PER_BLOCK {
            bare_times.push(round_trip(&client, &bare, block * PER_BLOCK + i).await);
        }
        for i in 0..PER_BLOCK {
            proxy_times.push(round_trip(&client, &proxy, block * PER_BLOCK + i).await);
        }
    }
    bare_times.sort();
    proxy_times.sort();
    println!(
        "small tools/call round trip, {} each, µs (baseline = bare hyper + serde_json):",
        bare_times.len()
    );
    println!("| | baseline | --listen | added | ratio |");
    println!("|---|---|---|---|---|");
    for (name, p) in [("p50", 0.5), ("p99", 0.99)] {
        let (b, s) = (
            micros(percentile(&bare_times, p)),
            micros(percentile(&proxy_times, p)),
        );
        println!("| {name} | {b:.0} | {s:.0} | {:.0} | {:.2} |", s - b, s / b);
    }

    // 1,000 calls in flight at once, each answered after 200 ms: served together, the whole
    // batch takes about 200 ms; one after another it would take 200 s.
    let start = Instant::now();
    let calls = (0..1000).map(|id| {
        let client = client.clone();
        let body = CALL
            .replace("ID", &(100_000 + id).to_string())
            .replace(r#""text""#, r#""delay_ms":200,"text""#);
        let url = proxy.url.clone();
        let session = proxy.session.clone();
        tokio::spawn(async move {
            post(&client, &Endpoint { url, session }, body)
                .await
                .bytes()
                .await
                .unwrap()
        })
    });
    let answers = futures_join(calls.collect()).await;
    assert!(
        answers
            .iter()
            .all(|a| a.windows(16).any(|w| w == b"a small argument"))
    );
    println!(
        "1000 concurrent calls of 200 ms each through --listen: {:.0} ms in all",
        start.elapsed().as_secs_f64() * 1e3
    );
}

async fn futures_join(handles: Vec<tokio::task::JoinHandle<Bytes>>) -> Vec<Bytes> {
    let mut out = Vec::with_capacity(handles.len());
    for handle in handles {
        out.push(handle.await.unwrap());
    }
    out
}
