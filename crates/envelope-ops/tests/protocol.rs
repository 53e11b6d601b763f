//! The call protocol in process: calls, errors, deadlines and aborts that stop the handler
//! (a command's process killed), subscriptions (completed, consumer stop, idle timeout),
//! the caller's own rules (completed without a response), 1,000 concurrent calls.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use envelope_ops::codes;
use envelope_ops::file::RegistryFile;
use envelope_ops::protocol::{CallOptions, Caller, Event, RequestRef, in_process};
use futures::StreamExt;
use protocol_common::{becomes_true, registry};
use serde_json::{Value, json};

mod common;
mod protocol_common;

use common::process_ended;

fn setup() -> (Caller, Arc<AtomicBool>) {
    let stopped = Arc::new(AtomicBool::new(false));
    (in_process(Arc::new(registry(stopped.clone()))), stopped)
}

#[tokio::test]
async fn a_call_gets_its_envelope_and_errors_pass_through() {
    let (caller, _) = setup();
    let env = caller
        .call("t.double", json!({"n": 21}), CallOptions::default())
        .await
        .unwrap();
    assert_eq!(env["data"], 42);
    assert_eq!(env["meta"]["operationId"], "t.double");
    let e = caller
        .call("t.double", json!({"n": "x"}), CallOptions::default())
        .await
        .unwrap_err();
    assert_eq!(e.code, codes::VALIDATION_ERROR);
    assert!(e.details.unwrap()["findings"][0]["pointer"].is_string());
    let e = caller
        .call("t.nothing", json!({}), CallOptions::default())
        .await
        .unwrap_err();
    assert_eq!(e.code, codes::OPERATION_NOT_FOUND);
    assert_eq!(caller.pending(), 0);
}

#[tokio::test]
async fn a_deadline_that_passes_is_a_timeout_and_stops_the_handler() {
    let (caller, stopped) = setup();
    let options = CallOptions::within(Duration::from_millis(150));
    let deadline_ms = options
        .deadline
        .unwrap()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    let started = std::time::Instant::now();
    let e = caller.call("t.slow", json!({}), options).await.unwrap_err();
    assert_eq!(e.code, codes::TIMEOUT);
    assert_eq!(e.details.unwrap()["deadline"], deadline_ms);
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(becomes_true(&stopped).await, "the handler kept running");
    assert_eq!(caller.pending(), 0);
}

#[tokio::test]
async fn a_dropped_call_aborts_the_handler() {
    let (caller, stopped) = setup();
    let call = caller.call("t.slow", json!({}), CallOptions::default());
    assert!(
        tokio::time::timeout(Duration::from_millis(100), call)
            .await
            .is_err()
    );
    assert!(
        becomes_true(&stopped).await,
        "the abort did not reach the worker"
    );
}

#[tokio::test]
async fn an_abort_kills_a_command_operations_process() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("pid");
    let text = format!(
        "[commands.sys.hang]\ncommand = [\"sh\", \"-c\", \"echo $$ > {}; exec sleep 30\"]\n",
        pidfile.display()
    );
    let loaded = RegistryFile::from_toml(&text).unwrap().load().await;
    let caller = in_process(Arc::new(loaded.registry));
    let call = caller.call("sys.hang", json!({}), CallOptions::default());
    let _ = tokio::time::timeout(Duration::from_millis(500), call).await;
    let pid: i32 = std::fs::read_to_string(&pidfile)
        .expect("the command started")
        .trim()
        .parse()
        .unwrap();
    // Waited for on a blocking thread: this runtime must go on running the worker that
    // kills the process.
    let ended = tokio::task::spawn_blocking(move || process_ended(pid))
        .await
        .unwrap();
    assert!(ended, "process {pid} survived the abort");
}

#[tokio::test]
async fn a_subscription_yields_until_completed() {
    let (caller, _) = setup();
    let items: Vec<_> = caller
        .subscribe("t.ticks", json!({"n": 3}), CallOptions::default())
        .collect()
        .await;
    let ticks: Vec<Value> = items
        .into_iter()
        .map(|item| item.unwrap()["data"]["tick"].clone())
        .collect();
    assert_eq!(ticks, [json!(0), json!(1), json!(2)]);
    assert_eq!(caller.pending(), 0);
}

#[tokio::test]
async fn a_consumer_that_stops_aborts_the_producer() {
    let (caller, stopped) = setup();
    let mut items =
        Box::pin(caller.subscribe("t.ticks", json!({"n": 1000}), CallOptions::default()));
    for _ in 0..2 {
        items.next().await.unwrap().unwrap();
    }
    drop(items);
    assert!(becomes_true(&stopped).await, "the producer kept running");
    assert_eq!(caller.pending(), 0);
}

#[tokio::test]
async fn an_idle_subscription_times_out_and_is_aborted() {
    let (caller, stopped) = setup();
    let options = CallOptions {
        idle_timeout: Some(Duration::from_millis(150)),
        ..CallOptions::default()
    };
    let items: Vec<_> = caller
        .subscribe("t.ticks", json!({"n": 2, "forever": true}), options)
        .collect()
        .await;
    assert_eq!(items.len(), 3, "two ticks, then the timeout");
    let e = items[2].as_ref().unwrap_err();
    assert_eq!(e.code, codes::TIMEOUT);
    assert_eq!(e.details.as_ref().unwrap()["idleTimeout"], 150);
    assert!(becomes_true(&stopped).await, "the producer kept running");
}

/// The caller's rules, with the worker's side played by hand.
#[tokio::test]
async fn completed_without_a_response_is_aborted_and_abort_ends_the_call() {
    let (to_worker, mut worker_inbox) = tokio::sync::mpsc::unbounded_channel();
    let caller = Caller::new(to_worker);
    let waiting = tokio::spawn({
        let caller = caller.clone();
        async move { caller.call("x.y", json!({}), CallOptions::default()).await }
    });
    let Some(Event::Requested(request)) = worker_inbox.recv().await else {
        panic!("no call.requested")
    };
    assert_eq!(request.operation_id, "x.y");
    caller.deliver(Event::Completed(RequestRef {
        request_id: request.request_id.clone(),
    }));
    let e = waiting.await.unwrap().unwrap_err();
    assert_eq!(e.code, codes::ABORTED);

    let waiting = tokio::spawn({
        let caller = caller.clone();
        async move { caller.call("x.y", json!({}), CallOptions::default()).await }
    });
    let Some(Event::Requested(request)) = worker_inbox.recv().await else {
        panic!("no call.requested")
    };
    caller.abort(&request.request_id);
    assert_eq!(waiting.await.unwrap().unwrap_err().code, codes::ABORTED);
    let Some(Event::Aborted(aborted)) = worker_inbox.recv().await else {
        panic!("no call.aborted published")
    };
    assert_eq!(aborted.request_id, request.request_id);
    assert_eq!(caller.pending(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_concurrent_calls() {
    let (caller, _) = setup();
    let done = Arc::new(AtomicUsize::new(0));
    let calls: Vec<_> = (0..1000)
        .map(|n| {
            let caller = caller.clone();
            let done = done.clone();
            tokio::spawn(async move {
                let env = caller
                    .call("t.double", json!({"n": n}), CallOptions::default())
                    .await
                    .unwrap();
                assert_eq!(env["data"], n * 2);
                done.fetch_add(1, Ordering::SeqCst);
            })
        })
        .collect();
    for call in calls {
        call.await.unwrap();
    }
    assert_eq!(done.load(Ordering::SeqCst), 1000);
    assert_eq!(caller.pending(), 0);
}

/// Dropping the last caller ends the in-process worker: nothing keeps the registry.
#[tokio::test]
async fn dropping_the_caller_ends_the_worker() {
    let registry = Arc::new(registry(Arc::new(AtomicBool::new(false))));
    let caller = in_process(registry.clone());
    caller
        .call("t.double", json!({"n": 1}), CallOptions::default())
        .await
        .unwrap();
    assert!(Arc::strong_count(&registry) > 1, "the worker holds it");
    drop(caller);
    for _ in 0..200 {
        if Arc::strong_count(&registry) == 1 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the worker outlived its caller");
}
