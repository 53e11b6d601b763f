//! The call protocol over a real nats-server on 127.0.0.1: a worker (`serve_nats`) and a
//! caller (`nats_caller`) meeting only through the server — calls, errors, no worker, an
//! abort that reaches the worker, subscriptions (completed, consumer stop, idle timeout),
//! a request built by hand as a client in another language would, 1,000 concurrent calls.

mod nats_common;
mod protocol_common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use envelope_ops::codes;
use envelope_ops::protocol::{CallOptions, EVENT_HEADER, connect, nats_caller, serve_nats};
use futures::StreamExt;
use nats_common::NatsServer;
use protocol_common::{becomes_true, registry};
use serde_json::{Value, json};

/// The server, a worker serving `registry` on prefix `p`, and the flag its handlers set
/// when stopped.
async fn worker(server: &NatsServer) -> Arc<AtomicBool> {
    let stopped = Arc::new(AtomicBool::new(false));
    let client = connect(&server.url()).await.unwrap();
    serve_nats(client, Arc::new(registry(stopped.clone())), "p")
        .await
        .unwrap();
    stopped
}

async fn caller(server: &NatsServer) -> envelope_ops::protocol::Caller {
    nats_caller(connect(&server.url()).await.unwrap(), "p")
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_and_errors_cross_the_server() {
    let server = NatsServer::start();
    worker(&server).await;
    let caller = caller(&server).await;
    let env = caller
        .call("t.double", json!({"n": 21}), CallOptions::default())
        .await
        .unwrap();
    assert_eq!(env["data"], 42);
    let e = caller
        .call("t.double", json!({}), CallOptions::default())
        .await
        .unwrap_err();
    assert_eq!(e.code, codes::VALIDATION_ERROR);
    let e = caller
        .call("t.nothing", json!({}), CallOptions::default())
        .await
        .unwrap_err();
    assert_eq!(e.code, codes::OPERATION_NOT_FOUND);
    assert_eq!(caller.pending(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_worker_the_call_fails_at_once() {
    let server = NatsServer::start();
    let caller = caller(&server).await;
    let started = std::time::Instant::now();
    let e = caller
        .call(
            "t.double",
            json!({"n": 1}),
            CallOptions::within(Duration::from_secs(20)),
        )
        .await
        .unwrap_err();
    assert_eq!(e.code, codes::EXECUTION_ERROR);
    assert_eq!(e.details.unwrap()["reason"], "no_responders");
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deadline_and_an_abort_reach_the_worker() {
    let server = NatsServer::start();
    let stopped = worker(&server).await;
    let caller = caller(&server).await;
    let e = caller
        .call(
            "t.slow",
            json!({}),
            CallOptions::within(Duration::from_millis(300)),
        )
        .await
        .unwrap_err();
    assert_eq!(e.code, codes::TIMEOUT);
    assert!(
        becomes_true(&stopped).await,
        "the deadline did not stop the handler"
    );

    // No deadline: the caller gives up (drops the call); call.aborted stops the handler.
    stopped.store(false, Ordering::SeqCst);
    let call = caller.call("t.slow", json!({}), CallOptions::default());
    assert!(
        tokio::time::timeout(Duration::from_millis(300), call)
            .await
            .is_err()
    );
    assert!(
        becomes_true(&stopped).await,
        "the abort did not reach the worker"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subscriptions_cross_the_server() {
    let server = NatsServer::start();
    let stopped = worker(&server).await;
    let caller = caller(&server).await;
    let items: Vec<_> = caller
        .subscribe("t.ticks", json!({"n": 3}), CallOptions::default())
        .collect()
        .await;
    let ticks: Vec<Value> = items
        .into_iter()
        .map(|i| i.unwrap()["data"]["tick"].clone())
        .collect();
    assert_eq!(ticks, [json!(0), json!(1), json!(2)]);

    // The consumer stops after two: the producer is stopped.
    stopped.store(false, Ordering::SeqCst);
    let mut items =
        Box::pin(caller.subscribe("t.ticks", json!({"n": 1000}), CallOptions::default()));
    items.next().await.unwrap().unwrap();
    items.next().await.unwrap().unwrap();
    drop(items);
    assert!(becomes_true(&stopped).await, "the producer kept running");

    // Idle: TIMEOUT, and the producer is stopped.
    stopped.store(false, Ordering::SeqCst);
    let options = CallOptions {
        idle_timeout: Some(Duration::from_millis(200)),
        ..CallOptions::default()
    };
    let items: Vec<_> = caller
        .subscribe("t.ticks", json!({"n": 1, "forever": true}), options)
        .collect()
        .await;
    assert_eq!(items.len(), 2);
    assert_eq!(items[1].as_ref().unwrap_err().code, codes::TIMEOUT);
    assert!(
        becomes_true(&stopped).await,
        "the idle producer kept running"
    );
}

/// A client in any language: one NATS request with the header and the event's fields.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_built_by_hand_is_answered() {
    let server = NatsServer::start();
    worker(&server).await;
    let client = async_nats::connect(server.url()).await.unwrap();
    let mut headers = async_nats::HeaderMap::new();
    headers.insert(EVENT_HEADER, "call.requested");
    let body = json!({"requestId": "by-hand-1", "operationId": "t.double", "input": {"n": 5}});
    let answer = tokio::time::timeout(
        Duration::from_secs(10),
        client.request_with_headers("p.call.t.double", headers, body.to_string().into()),
    )
    .await
    .unwrap()
    .unwrap();
    let event = answer.headers.as_ref().unwrap().get(EVENT_HEADER).unwrap();
    assert_eq!(event.as_str(), "call.responded");
    let body: Value = serde_json::from_slice(&answer.payload).unwrap();
    assert_eq!(body["requestId"], "by-hand-1");
    assert_eq!(body["output"]["data"], 10);
    assert_eq!(
        body.as_object().unwrap().len(),
        2,
        "exactly the event's fields: {body}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_concurrent_calls() {
    let server = NatsServer::start();
    worker(&server).await;
    let caller = caller(&server).await;
    let calls: Vec<_> = (0..1000)
        .map(|n| {
            let caller = caller.clone();
            tokio::spawn(async move {
                caller
                    .call(
                        "t.double",
                        json!({"n": n}),
                        CallOptions::within(Duration::from_secs(60)),
                    )
                    .await
                    .map(|env| env["data"] == n * 2)
            })
        })
        .collect();
    let mut right = 0;
    for call in calls {
        if call.await.unwrap().unwrap() {
            right += 1;
        }
    }
    assert_eq!(right, 1000);
    assert_eq!(caller.pending(), 0);
}
