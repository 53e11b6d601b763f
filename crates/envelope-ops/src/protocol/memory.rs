//! The in-process transport: a caller and a worker in one process, the events passed
//! through channels as the reference's in-process pub/sub does. The same [`Caller`] and
//! [`Worker`] run over NATS.

use std::sync::Arc;

use tokio::sync::mpsc;

use super::caller::Caller;
use super::events::Event;
use super::worker::Worker;
use crate::registry::Registry;

/// A caller whose requests a worker over `registry` serves in this process (on the current
/// tokio runtime). The worker lives as long as the caller has clones (and its running
/// requests last).
///
/// ```
/// use std::sync::Arc;
/// use envelope_ops::protocol::{in_process, CallOptions};
/// use envelope_ops::{handler_fn, HandlerError, OperationSpec, OperationType, Registry};
/// use serde_json::{json, Value};
///
/// let mut registry = Registry::new();
/// registry.register(OperationSpec::new("math", "double", OperationType::Query),
///     handler_fn(|input: Value, _| async move { Ok::<_, HandlerError>(json!(input["n"].as_i64().unwrap_or(0) * 2)) })).unwrap();
/// let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
/// let envelope = rt.block_on(async {
///     let caller = in_process(Arc::new(registry));
///     caller.call("math.double", json!({"n": 21}), CallOptions::default()).await
/// }).unwrap();
/// assert_eq!(envelope["data"], 42);
/// ```
pub fn in_process(registry: Arc<Registry>) -> Caller {
    let (to_worker, mut worker_inbox) = mpsc::unbounded_channel::<Event>();
    let (to_caller, mut caller_inbox) = mpsc::unbounded_channel::<Event>();
    let caller = Caller::new(to_worker);
    let worker = Worker::new(registry, to_caller);
    tokio::spawn(async move {
        while let Some(event) = worker_inbox.recv().await {
            worker.handle(event);
        }
    });
    // Weak: once the caller's users drop it, its sender to the worker goes, the worker's
    // loop ends, and with it the worker's sender here.
    let deliver_to = caller.downgrade();
    tokio::spawn(async move {
        while let Some(event) = caller_inbox.recv().await {
            if !deliver_to.deliver(event) {
                break;
            }
        }
    });
    caller
}
