//! The relay against the fault fixture server (tests/fixtures/fault_server.py, a raw
//! JSON-RPC server in Python): pass-through, concurrency, and every fault of behaviour 7.

mod common;

use std::time::{Duration, Instant};

use common::{Client, config, ends_soon, fault_server, running, text_of};
use serde_json::{Value, json};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn initialize_and_tools_list_gain_the_proxy_additions() {
    let (config, _store) = config(fault_server());
    let mut client = Client::start(config);
    let result = client.initialize().await;
    assert_eq!(result["protocolVersion"], "2025-06-18");
    assert_eq!(
        result["serverInfo"]["name"], "fault-server",
        "upstream fields kept"
    );
    assert!(result["capabilities"]["resources"].is_object(), "{result}");
    client.request(json!("list"), "tools/list", json!({})).await;
    let tools = client.answer(&json!("list")).await;
    let names: Vec<&str> = tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"echo") && names.contains(&"hang"),
        "{names:?}"
    );
    assert_eq!(names.last(), Some(&"envelope_read"));
    // The upstream has no resources: the proxy answers the resource lists alone.
    client
        .request(json!(3), "resources/templates/list", json!({}))
        .await;
    let templates = client.answer(&json!(3)).await;
    let template = &templates["result"]["resourceTemplates"][0]["uriTemplate"];
    assert!(
        template
            .as_str()
            .unwrap()
            .starts_with("envelope://artifact/sha256/"),
        "{templates}"
    );
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn frames_pass_through_byte_for_byte() {
    let (config, _store) = config(fault_server());
    let mut client = Client::start(config);
    client.initialize().await;
    // An unknown method with unknown fields reaches the upstream, whose error comes back.
    client
        .send_raw(br#"{"jsonrpc":"2.0","id":"u1","method":"vendor/thing","params":{"x":[1,{"y":null}]},"zz":true}"#)
        .await;
    let answer = client.answer(&json!("u1")).await;
    assert_eq!(answer["error"]["code"], -32601);
    assert_eq!(answer["error"]["message"], "no vendor/thing");
    // The small echo result reaches the client exactly as the upstream wrote it.
    client
        .call(json!(7), "echo", json!({"text": "héllo \"q\""}))
        .await;
    let frame = client.next_raw(Duration::from_secs(20)).await.unwrap();
    assert_eq!(
        String::from_utf8(frame).unwrap(),
        r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"h\u00e9llo \"q\""}]}}"#
    );
    let stats = client.close().await.to_json();
    assert_eq!(stats["calls"], 1);
    assert_eq!(stats["per_tool"]["echo"]["calls"], 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_call_does_not_delay_another() {
    let (config, _store) = config(fault_server());
    let mut client = Client::start(config);
    client.initialize().await;
    client
        .call(json!(1), "slow", json!({"seconds": 3, "text": "slow"}))
        .await;
    client.call(json!(2), "echo", json!({"text": "fast"})).await;
    let started = Instant::now();
    let fast = client.answer(&json!(2)).await;
    assert_eq!(text_of(&fast), "fast");
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    let slow = client.answer(&json!(1)).await;
    assert_eq!(text_of(&slow), "slow");
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_calls_in_flight_at_once() {
    let (config, _store) = config(fault_server());
    let mut client = Client::start(config);
    client.initialize().await;
    let started = Instant::now();
    for i in 0..1000 {
        client
            .call(
                json!(i + 10),
                "slow",
                json!({"seconds": 1, "text": format!("r{i}")}),
            )
            .await;
    }
    for i in (0..1000).rev() {
        let answer = client.answer(&json!(i + 10)).await;
        assert_eq!(text_of(&answer), format!("r{i}"));
    }
    // One after another would take 1,000 s; at once, the sleeps overlap.
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "{:?}",
        started.elapsed()
    );
    let stats = client.close().await.to_json();
    assert_eq!(stats["per_tool"]["slow"]["calls"], 1000);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_thousand_pipelined_pings_are_all_answered() {
    // The client writes without waiting for answers while it reads them: the relay must
    // never wait on the upstream's stdin while the upstream waits on its stdout (it used
    // to: 1,869 of 10,000 answered, then nothing).
    let (config, _store) = config(fault_server());
    let mut client = Client::start(config);
    client.initialize().await;
    let (to_proxy, mut from_proxy, session) = client.into_parts();
    const PINGS: usize = 20_000;
    let writer = tokio::spawn(async move {
        for i in 0..PINGS {
            let frame = format!(r#"{{"jsonrpc":"2.0","id":{i},"method":"ping"}}"#);
            to_proxy
                .send(envelope_mcp::transport::Incoming::Frame(frame.into_bytes()))
                .await
                .unwrap();
        }
        to_proxy
    });
    let mut answered = std::collections::HashSet::new();
    while answered.len() < PINGS {
        let frame = tokio::time::timeout(Duration::from_secs(30), from_proxy.recv())
            .await
            .unwrap_or_else(|_| panic!("stuck after {} answers", answered.len()))
            .expect("the session is running");
        let answer: Value = serde_json::from_slice(&frame).unwrap();
        if let Some(id) = answer["id"].as_u64() {
            assert!(answer.get("result").is_some(), "{answer}");
            answered.insert(id);
        }
    }
    let to_proxy = writer.await.unwrap();
    drop(to_proxy);
    let _ = tokio::time::timeout(Duration::from_secs(20), session).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_over_the_limit_gets_one_error_and_one_at_the_limit_is_answered() {
    let (config, _store) = config(fault_server());
    let mut client = Client::start(config);
    client.initialize().await;
    let batch = |n: usize, from: usize| {
        let items: Vec<String> = (from..from + n)
            .map(|i| format!(r#"{{"jsonrpc":"2.0","id":{i},"method":"ping"}}"#))
            .collect();
        format!("[{}]", items.join(","))
    };
    client.send_raw(batch(5000, 100).as_bytes()).await;
    let refused = client.answer(&Value::Null).await;
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    assert!(
        error_text(&refused).contains("5000 messages is over the limit of 1024"),
        "{refused}"
    );
    client.send_raw(batch(1024, 10_000).as_bytes()).await;
    let frame = client
        .next_raw(Duration::from_secs(30))
        .await
        .expect("the batch is answered");
    let answers: Vec<Value> = serde_json::from_slice(&frame).unwrap();
    assert_eq!(answers.len(), 1024);
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_crash_answers_every_pending_request_and_later_ones() {
    let (config, _store) = config(fault_server());
    let mut client = Client::start(config);
    client.initialize().await;
    client.call(json!(1), "hang", json!({})).await;
    client.call(json!(2), "slow", json!({"seconds": 30})).await;
    // Both are in flight before the crash (the fixture answers echo after reading them).
    client.call(json!(3), "echo", json!({"text": "x"})).await;
    client.answer(&json!(3)).await;
    client.call(json!(4), "crash", json!({"status": 3})).await;
    for id in [1, 2, 4] {
        let answer = client.answer(&json!(id)).await;
        assert_eq!(answer["error"]["code"], -32000, "{answer}");
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(message.contains("exited with status 3"), "{message}");
    }
    client
        .call(json!(5), "echo", json!({"text": "after"}))
        .await;
    let later = client.answer(&json!(5)).await;
    let message = later["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("exited with status 3") && message.contains("not sent"),
        "{message}"
    );
    let stats = client.close().await;
    assert_eq!(stats.errors_of("upstream_exited"), 1);
    assert_eq!(stats.errors_of("upstream_gone"), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restart_replays_initialize_and_serves_again() {
    let (mut config, _store) = config(fault_server());
    config.restart = true;
    let mut client = Client::start(config);
    client.initialize().await;
    client.call(json!(1), "pid", json!({})).await;
    let first: Value = serde_json::from_str(text_of(&client.answer(&json!(1)).await)).unwrap();
    client.call(json!(2), "crash", json!({"status": 9})).await;
    let crashed = client.answer(&json!(2)).await;
    assert!(
        crashed["error"]["message"]
            .as_str()
            .unwrap()
            .contains("exited with status 9")
    );
    // The next request goes to a new upstream process, initialized as the client did it.
    client.call(json!(3), "pid", json!({})).await;
    let second: Value = serde_json::from_str(text_of(&client.answer(&json!(3)).await)).unwrap();
    assert_ne!(first["pid"], second["pid"]);
    client.call(json!(4), "initializations", json!({})).await;
    assert_eq!(
        text_of(&client.answer(&json!(4)).await),
        "1",
        "the new process saw one initialize"
    );
    // The first upstream's group went with it (its child too).
    assert!(
        ends_soon(first["child"].as_i64().unwrap()),
        "the crashed upstream's child survived"
    );
    // The replayed initialize's answer is the proxy's, not the client's.
    assert!(client.next_raw(Duration::from_millis(300)).await.is_none());
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replacement_that_keeps_dying_is_restarted_with_backoff_then_capped() {
    let marker = tempfile::tempdir().unwrap();
    let once = marker.path().join("initialized");
    // Every process after the first exits with status 4 on initialize.
    let upstream = envelope_mcp::config::UpstreamSpec::Command {
        program: "python3".into(),
        args: vec![
            common::fixture("fault_server.py").display().to_string(),
            "--once".into(),
            once.display().to_string(),
        ],
    };
    let (mut config, _store) = config(upstream);
    config.restart = true;
    let mut client = Client::start(config);
    client.initialize().await;
    client.call(json!(1), "crash", json!({"status": 3})).await;
    let crashed = client.answer(&json!(1)).await;
    assert!(error_text(&crashed).contains("status 3"), "{crashed}");
    // Each later request starts a replacement, which dies on the replayed initialize: the
    // request gets its error. The waits between starts grow (0, 0.25, 0.5, 1, 2 s).
    let started = Instant::now();
    for id in 2..=6 {
        client.call(json!(id), "echo", json!({"text": "x"})).await;
        let answer = client.answer(&json!(id)).await;
        assert!(error_text(&answer).contains("status 4"), "{answer}");
    }
    assert!(
        started.elapsed() >= Duration::from_millis(3700),
        "the backoff was not waited: {:?}",
        started.elapsed()
    );
    // Five restarts within a minute: the next request is not sent, and is told why.
    client.call(json!(7), "echo", json!({"text": "y"})).await;
    let capped = client.answer(&json!(7)).await;
    let text = error_text(&capped);
    assert!(
        text.contains("status 4") && text.contains("restarted 5 times within a minute"),
        "{capped}"
    );
    // Exactly one answer each: nothing more arrives.
    assert!(client.next_raw(Duration::from_millis(500)).await.is_none());
    let stats = client.close().await;
    assert_eq!(stats.errors_of("upstream_exited"), 6);
}

fn error_text(answer: &Value) -> &str {
    answer["error"]["message"]
        .as_str()
        .unwrap_or_else(|| panic!("not an error: {answer}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hung_call_times_out_and_is_cancelled_upstream() {
    let (mut config, _store) = config(fault_server());
    // Long enough for the fixture's own answers on a loaded machine.
    config.timeout = Some(Duration::from_secs(2));
    let mut client = Client::start(config);
    client.initialize().await;
    let started = Instant::now();
    client.call(json!("h1"), "hang", json!({})).await;
    let answer = client.answer(&json!("h1")).await;
    assert!(
        started.elapsed() >= Duration::from_millis(1900),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(answer["error"]["code"], -32001, "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("tools/call")
    );
    client.call(json!("c"), "cancelled", json!({})).await;
    let seen = client.answer(&json!("c")).await;
    assert_eq!(text_of(&seen), r#"["h1"]"#);
    let stats = client.close().await;
    assert_eq!(stats.errors_of("timeout"), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn non_json_lines_are_dropped_not_forwarded() {
    let (config, _store) = config(fault_server());
    let mut client = Client::start(config);
    client.initialize().await;
    client.call(json!(1), "garbage", json!({})).await;
    // Every frame the client gets is JSON (Client::answer asserts it), and the answer comes.
    assert_eq!(text_of(&client.answer(&json!(1)).await), "ok");
    assert!(client.next_raw(Duration::from_millis(300)).await.is_none());
    let stats = client.close().await;
    assert_eq!(stats.errors_of("upstream_invalid_json"), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_leaves_ends_the_upstream_group() {
    let (config, _store) = config(fault_server());
    let mut client = Client::start(config);
    client.initialize().await;
    client.call(json!(1), "pid", json!({})).await;
    let pids: Value = serde_json::from_str(text_of(&client.answer(&json!(1)).await)).unwrap();
    let (server, child) = (
        pids["pid"].as_i64().unwrap(),
        pids["child"].as_i64().unwrap(),
    );
    assert!(running(server) && running(child));
    client.close().await;
    assert!(
        ends_soon(server),
        "the upstream {server} survived the client"
    );
    assert!(
        ends_soon(child),
        "the upstream's child {child} survived the client"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_upstream_program_answers_with_an_error() {
    let (config, _store) = config(envelope_mcp::config::UpstreamSpec::Command {
        program: "/nonexistent/mcp-server".into(),
        args: vec![],
    });
    let mut client = Client::start(config);
    client.request(json!(1), "initialize", json!({})).await;
    let answer = client.answer(&json!(1)).await;
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(message.contains("/nonexistent/mcp-server"), "{message}");
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_upstream_program_is_not_retried_and_ends_the_session() {
    let (mut config, _store) = config(envelope_mcp::config::UpstreamSpec::Command {
        program: "/nonexistent/mcp-server".into(),
        args: vec![],
    });
    config.restart = true;
    let mut client = Client::start(config);
    client.request(json!(1), "initialize", json!({})).await;
    let answer = client.answer(&json!(1)).await;
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("could not be started") && message.contains("/nonexistent/mcp-server"),
        "{message}"
    );
    // The client has not left: the session ends by itself, saying why.
    let (_to_proxy, _from_proxy, session) = client.into_parts();
    let ended = tokio::time::timeout(Duration::from_secs(10), session)
        .await
        .expect("the session ends once it has answered")
        .unwrap();
    let reason = ended.unwrap_err();
    assert!(reason.contains("/nonexistent/mcp-server"), "{reason}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_client_frames_get_a_parse_error() {
    let (config, _store) = config(fault_server());
    let mut client = Client::start(config);
    client.send_raw(b"{not json").await;
    let frame = client.next_raw(Duration::from_secs(20)).await.unwrap();
    let answer: Value = serde_json::from_slice(&frame).unwrap();
    assert_eq!(answer["id"], Value::Null);
    assert_eq!(answer["error"]["code"], -32700);
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stored_artifacts_are_read_back_by_the_proxy() {
    let (config, _store) = config(fault_server());
    let stored = config
        .store
        .put(
            br#"{"content":[{"type":"text","text":"full"}]}"#,
            "application/json",
            &[],
        )
        .unwrap();
    let uri = envelope_mcp::drill::artifact_uri(&stored.digest);
    let mut client = Client::start(config);
    client.initialize().await;
    client
        .request(json!(1), "resources/read", json!({"uri": uri}))
        .await;
    let read = client.answer(&json!(1)).await;
    assert_eq!(read["result"]["contents"][0]["uri"], uri.as_str());
    assert_eq!(
        read["result"]["contents"][0]["mimeType"],
        "application/json"
    );
    let text = read["result"]["contents"][0]["text"].as_str().unwrap();
    assert!(text.contains("full"), "{read}");
    // envelope_read is the proxy's: the upstream never sees it.
    client
        .call(json!(2), "envelope_read", json!({"uri": uri}))
        .await;
    let read = client.answer(&json!(2)).await;
    assert_ne!(read["result"]["isError"], true, "{read}");
    assert!(read.to_string().contains("full"), "{read}");
    // A digest that is not stored is an error, not a crash.
    let missing = envelope_mcp::drill::artifact_uri(&envelope_store::Digest::of(b"nothing"));
    client
        .request(json!(3), "resources/read", json!({"uri": missing}))
        .await;
    assert!(client.answer(&json!(3)).await["error"]["code"].is_i64());
    client
        .call(json!(4), "envelope_read", json!({"uri": missing}))
        .await;
    assert_eq!(client.answer(&json!(4)).await["result"]["isError"], true);
    client.close().await;
}

/// The next frame, which must be a batch answer: its messages by id (compact JSON).
async fn batch_answer(client: &mut Client) -> std::collections::BTreeMap<String, Value> {
    let frame = client
        .next_raw(Duration::from_secs(20))
        .await
        .expect("a batch answer within 20 s");
    let answers: Vec<Value> = serde_json::from_slice(&frame)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&frame)));
    answers
        .into_iter()
        .map(|a| (a["id"].to_string(), a))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_is_relayed_apart_and_each_answer_shaped_timed_and_gathered() {
    let (mut config, _store) = config(fault_server());
    config.limit = 2048;
    config.timeout = Some(Duration::from_secs(2));
    let mut client = Client::start(config);
    client.initialize().await;
    let call = |id: Value, name: &str, arguments: Value| json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": arguments}});
    let batch = json!([
        call(json!(1), "echo", json!({"text": "key AKIAABCDEFGHIJKLMNOP here"})),
        call(json!("big"), "echo", json!({"text": "z".repeat(20_000)})),
        call(json!(3), "hang", json!({})),
        {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": "t", "progress": 1}},
        call(json!(4), "envelope_read", json!({"uri": "not-an-artifact"})),
        7,
    ]);
    client.send_raw(batch.to_string().as_bytes()).await;
    let answers = batch_answer(&mut client).await;
    // One answer per request, and one for the element that is not a message; none for the
    // notification.
    assert_eq!(answers.len(), 5, "{answers:?}");
    let secret = &answers["1"];
    assert!(
        !secret.to_string().contains("AKIAABCDEFGHIJKLMNOP"),
        "redacted: {secret}"
    );
    assert!(text_of(secret).contains("here"), "{secret}");
    let big = &answers[r#""big""#];
    assert!(big["result"].to_string().len() <= 2048, "shaped: {big}");
    assert!(
        big.to_string().contains("envelope://artifact/sha256/"),
        "{big}"
    );
    assert_eq!(answers["3"]["error"]["code"], -32001, "timed out");
    assert_eq!(
        answers["4"]["result"]["isError"], true,
        "the proxy's own tool"
    );
    assert_eq!(answers["null"]["error"]["code"], -32600);
    // The upstream saw single messages only, and the cancellation of the timed-out one.
    client.call(json!(5), "batches", json!({})).await;
    assert_eq!(text_of(&client.answer(&json!(5)).await), "0");
    client.call(json!(6), "cancelled", json!({})).await;
    assert_eq!(text_of(&client.answer(&json!(6)).await), "[3]");
    let stats = client.close().await;
    assert_eq!(stats.errors_of("timeout"), 1);
    assert_eq!(stats.to_json()["per_tool"]["echo"]["calls"], 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_answers_every_request_of_a_batch_in_one_array() {
    let (config, _store) = config(fault_server());
    let mut client = Client::start(config);
    client.initialize().await;
    let batch = json!([
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "hang", "arguments": {}}},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "crash", "arguments": {"status": 5}}},
    ]);
    client.send_raw(batch.to_string().as_bytes()).await;
    let answers = batch_answer(&mut client).await;
    assert_eq!(answers.len(), 2, "{answers:?}");
    for answer in answers.values() {
        assert_eq!(answer["error"]["code"], -32000, "{answer}");
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(message.contains("exited with status 5"), "{message}");
    }
    // A batch after the crash: answered at once, in one array, nothing sent.
    let batch = json!([
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "echo", "arguments": {}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
    ]);
    client.send_raw(batch.to_string().as_bytes()).await;
    let answers = batch_answer(&mut client).await;
    assert!(
        answers["3"]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("not sent")
    );
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn batches_of_notifications_get_no_answer_and_empty_ones_an_error() {
    let (config, _store) = config(fault_server());
    let mut client = Client::start(config);
    client.initialize().await;
    client
        .send_raw(br#"[{"jsonrpc":"2.0","method":"notifications/progress","params":{}}]"#)
        .await;
    client.send_raw(b" [ ] ").await;
    let frame = client.next_raw(Duration::from_secs(20)).await.unwrap();
    let answer: Value = serde_json::from_slice(&frame).unwrap();
    assert_eq!(answer["error"]["code"], -32600, "{answer}");
    assert_eq!(answer["id"], Value::Null);
    assert!(client.next_raw(Duration::from_millis(300)).await.is_none());
    client.close().await;
}
