//! A 2026-07-28 client (no `initialize`: every request names its revision in `_meta`) in
//! front of a 2026-07-28 upstream (tests/fixtures/stateless_server.py, which refuses a
//! request without that `_meta` and has no resources): discovery gains the proxy's
//! capabilities, and its tool, template, shaping with `resource_link` and drill-in all work
//! without a session.

mod common;
mod http_support;

use common::{Client, config, fixture};
use envelope_mcp::config::UpstreamSpec;
use serde_json::{Value, json};

const REVISION: &str = "2026-07-28";

fn stateless_server() -> UpstreamSpec {
    UpstreamSpec::Command {
        program: "python3".into(),
        args: vec![fixture("stateless_server.py").display().to_string()],
    }
}

/// `params` with the revision in `_meta`, as a 2026-07-28 client writes every request.
fn params(mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": REVISION,
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    params
}

async fn ask(client: &mut Client, id: Value, method: &str, p: Value) -> Value {
    client.request(id.clone(), method, params(p)).await;
    let answer = client.answer(&id).await;
    assert!(answer.get("error").is_none(), "{method}: {answer}");
    answer["result"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn discovery_announces_the_proxy_capabilities_and_keeps_the_upstream_fields() {
    let (config, _store) = config(stateless_server());
    let mut client = Client::start(config);
    let discovered = ask(&mut client, json!("d"), "server/discover", json!({})).await;
    assert_eq!(discovered["supportedVersions"], json!([REVISION]));
    assert_eq!(discovered["serverInfo"]["name"], "stateless-server");
    assert_eq!(discovered["ttlMs"], 60000, "cache hints kept: {discovered}");
    assert_eq!(discovered["resultType"], "complete");
    let capabilities = &discovered["capabilities"];
    assert!(capabilities["resources"].is_object(), "{discovered}");
    assert_eq!(
        capabilities["tools"]["listChanged"], false,
        "upstream's kept"
    );
    // The upstream has no resources: the proxy now lists its template alone.
    let templates = ask(&mut client, json!(2), "resources/templates/list", json!({})).await;
    let uri_template = templates["resourceTemplates"][0]["uriTemplate"]
        .as_str()
        .unwrap();
    assert!(uri_template.starts_with("envelope://artifact/sha256/"));
    assert_eq!(templates["resultType"], "complete", "{templates}");
    let resources = ask(&mut client, json!(3), "resources/list", json!({})).await;
    assert_eq!(resources["resources"], json!([]));
    assert_eq!(resources["resultType"], "complete");
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_discovery_the_resource_lists_fall_back_to_the_proxy() {
    let (config, _store) = config(stateless_server());
    let mut client = Client::start(config);
    // Straight to the lists: the upstream says "method not found", the client gets the
    // proxy's answer.
    let templates = ask(&mut client, json!(1), "resources/templates/list", json!({})).await;
    assert_eq!(
        templates["resourceTemplates"].as_array().unwrap().len(),
        1,
        "{templates}"
    );
    assert_eq!(templates["resultType"], "complete");
    let resources = ask(&mut client, json!(2), "resources/list", json!({})).await;
    assert_eq!(
        resources,
        json!({"resources": [], "resultType": "complete"})
    );
    // Any other "method not found" is the upstream's to give.
    client
        .request(json!(3), "prompts/list", params(json!({})))
        .await;
    let answer = client.answer(&json!(3)).await;
    assert_eq!(answer["error"]["code"], -32601, "{answer}");
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_shaping_and_drill_in_work_without_a_session() {
    let (mut config, _store) = config(stateless_server());
    config.limit = 4096;
    let mut client = Client::start(config);
    let tools = ask(&mut client, json!(1), "tools/list", json!({})).await;
    let names: Vec<&str> = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["echo", "big", "meta_seen", "envelope_read"]);
    // The request reaches the upstream with its `_meta` untouched.
    let seen = ask(
        &mut client,
        json!(2),
        "tools/call",
        json!({"name": "meta_seen", "arguments": {}}),
    )
    .await;
    let meta: Value = serde_json::from_str(common::text_of(&json!({"result": seen}))).unwrap();
    assert_eq!(meta["io.modelcontextprotocol/protocolVersion"], REVISION);
    // A big result is cut to the limit, with a resource_link (2026-07-28 has them).
    let big = ask(
        &mut client,
        json!(3),
        "tools/call",
        json!({"name": "big", "arguments": {"lines": 2000}}),
    )
    .await;
    assert!(
        big.to_string().len() <= 4096,
        "{} bytes",
        big.to_string().len()
    );
    assert_eq!(big["resultType"], "complete", "{big}");
    let link = big["content"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["type"] == "resource_link")
        .unwrap_or_else(|| panic!("no resource_link in {big}"))
        .clone();
    let uri = link["uri"].as_str().unwrap();
    assert!(uri.starts_with("envelope://artifact/sha256/"), "{link}");
    // Drill-in, still without a session: resources/read and envelope_read.
    let read = ask(&mut client, json!(4), "resources/read", json!({"uri": uri})).await;
    let full = read["contents"][0]["text"].as_str().unwrap();
    assert!(
        full.contains("line 001999 of the big result"),
        "the whole result is stored"
    );
    assert_eq!(read["resultType"], "complete");
    let window = ask(
        &mut client,
        json!(5),
        "tools/call",
        json!({"name": "envelope_read", "arguments": {"uri": uri, "pointer": "/content/0/text", "offset": 30 * 1500, "limit": 30}}),
    )
    .await;
    assert_ne!(window["isError"], true, "{window}");
    assert_eq!(
        window["structuredContent"]["text"],
        "line 001500 of the big result\n"
    );
    assert_eq!(window["resultType"], "complete");
    let stats = client.close().await.to_json();
    assert_eq!(stats["per_tool"]["big"]["results_offloaded"], 1);
}

/// The proxy's HTTP server on a free port, each session a relay in front of the stateless
/// fixture (limit 4096); with counters of the sessions started and ended.
async fn listen() -> (
    std::net::SocketAddr,
    std::sync::Arc<std::sync::atomic::AtomicUsize>,
    std::sync::Arc<std::sync::atomic::AtomicUsize>,
    tempfile::TempDir,
) {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use envelope_mcp::stats::Stats;
    use envelope_mcp::transport::http_server::{self, DEFAULT_IDLE_TIMEOUT, ListenOptions};

    let (mut config, store) = config(stateless_server());
    config.limit = 4096;
    let config = Arc::new(config);
    let stats = Arc::new(Stats::default());
    let (started, ended) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let starter: http_server::SessionStarter = {
        let (started, ended) = (started.clone(), ended.clone());
        Arc::new(move |link, _| {
            started.fetch_add(1, Ordering::SeqCst);
            let (config, stats, ended) = (config.clone(), stats.clone(), ended.clone());
            tokio::spawn(async move {
                let _ = envelope_mcp::session::run(link, config, stats).await;
                ended.fetch_add(1, Ordering::SeqCst);
            });
        })
    };
    let options = ListenOptions {
        addr: "127.0.0.1:0".parse().unwrap(),
        tokens: Vec::new(),
        idle_timeout: DEFAULT_IDLE_TIMEOUT,
        limits: Default::default(),
    };
    let server = http_server::bind(options, starter).await.unwrap();
    let addr = server.local_addr().unwrap();
    tokio::spawn(server.run());
    (addr, started, ended, store)
}

/// `--listen` serves 2026-07-28 clients: a request without `Mcp-Session-Id` whose
/// `MCP-Protocol-Version` is 2026-07-28 runs in a session of its own, answered without a
/// session id; that session and its upstream end once it is answered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_http_each_stateless_request_is_served_and_its_upstream_ended() {
    use std::sync::atomic::Ordering;

    let (addr, started, ended, _store) = listen().await;
    let post = |version: &str| {
        format!(
            "POST /mcp HTTP/1.1\nHost: 127.0.0.1:{}\nContent-Type: application/json\nAccept: application/json, text/event-stream\nMCP-Protocol-Version: {version}",
            addr.port()
        )
    };
    let request = |id: u32, method: &str, p: Value| {
        json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params(p)}).to_string()
    };
    let body = |answer: &http_support::RawResponse| -> Value {
        // A JSON answer (the response came first); chunked framing aside, one JSON object.
        let start = answer.body.find('{').expect("a JSON body");
        let end = answer.body.rfind('}').unwrap();
        serde_json::from_str(&answer.body[start..=end]).unwrap()
    };

    let discovered = http_support::raw(
        addr,
        &post(REVISION),
        &request(1, "server/discover", json!({})),
    )
    .await;
    assert_eq!(discovered.status, 200, "{discovered:?}");
    assert!(
        discovered.header("mcp-session-id").is_none(),
        "stateless: no session id"
    );
    let result = &body(&discovered)["result"];
    assert!(result["capabilities"]["resources"].is_object(), "{result}");

    let big = http_support::raw(
        addr,
        &post(REVISION),
        &request(
            2,
            "tools/call",
            json!({"name": "big", "arguments": {"lines": 2000}}),
        ),
    )
    .await;
    let result = body(&big)["result"].clone();
    assert!(result.to_string().len() <= 4096);
    let uri = result["content"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["type"] == "resource_link")
        .and_then(|b| b["uri"].as_str())
        .unwrap_or_else(|| panic!("no resource_link in {result}"))
        .to_string();
    let read = http_support::raw(
        addr,
        &post(REVISION),
        &request(3, "resources/read", json!({"uri": uri})),
    )
    .await;
    let text = body(&read)["result"]["contents"][0]["text"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        text.contains("line 001999"),
        "the artifact is read by a later, separate request"
    );

    // Each request had its own session; every one ends once answered.
    assert_eq!(started.load(Ordering::SeqCst), 3);
    let until = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while ended.load(Ordering::SeqCst) < 3 {
        assert!(
            std::time::Instant::now() < until,
            "the stateless sessions did not end"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    // An older revision without a session id is still told to initialize.
    let older = http_support::raw(
        addr,
        &post("2025-06-18"),
        &request(4, "tools/list", json!({})),
    )
    .await;
    assert_eq!(older.status, 400, "{older:?}");
}

/// `--upstream-url` in front of a 2026-07-28 server: with no `initialize` to negotiate, each
/// request's `MCP-Protocol-Version` header is the revision its `_meta` names (the server
/// here, the proxy's own `--listen`, refuses a request without session or such a header).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_http_client_names_each_request_s_revision_in_its_header() {
    let (addr, _started, _ended, _store) = listen().await;
    let url = format!("http://{addr}/mcp");
    let mut link = envelope_mcp::transport::http_client::connect(&url, &[])
        .await
        .unwrap();
    let request =
        json!({"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": params(json!({}))});
    link.outbound
        .send(request.to_string().into_bytes())
        .await
        .unwrap();
    let answer = tokio::time::timeout(std::time::Duration::from_secs(20), link.inbound.recv())
        .await
        .expect("an answer within 20 s");
    let Some(envelope_mcp::transport::Incoming::Frame(frame)) = answer else {
        panic!("{answer:?}");
    };
    let answer: Value = serde_json::from_slice(&frame).unwrap();
    assert_eq!(answer["id"], 7, "{answer}");
    let tools = answer["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("{answer}"));
    assert_eq!(tools.last().unwrap()["name"], "envelope_read");
}
