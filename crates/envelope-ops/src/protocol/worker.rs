//! The worker's side, the call handler: it gets `call.requested`, runs the operation
//! through the registry (`execute`, or `subscribe` for a subscription) and publishes
//! `call.responded` per envelope, then `call.completed` for a subscription, or
//! `call.error`. `call.aborted` — or the request's deadline — stops the handler: its future
//! is dropped, which kills a command operation's process group. Handlers return values;
//! only the call handler publishes.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use futures::StreamExt;
use serde_json::{Value, json};
use tokio::sync::oneshot;

use super::caller::{Outbound, unix_ms};
use super::events::{CallFailed, CallRequested, CallResponded, Event, RequestRef};
use crate::context::Context;
use crate::error::{CallError, codes};
use crate::registry::Registry;
use crate::spec::OperationType;

/// What a worker applies to each envelope before sending it (e.g. the shaping pipeline with
/// a byte limit and a shared store, so that a large result never crosses the transport
/// whole); an error is sent as the request's `call.error` instead.
pub type Shaper = Arc<dyn Fn(Value) -> Result<Value, CallError> + Send + Sync>;

/// Serves a registry's operations to callers.
pub struct Worker {
    registry: Arc<Registry>,
    outbound: Outbound,
    shaper: Option<Shaper>,
    /// The requests running, each with the switch that stops it.
    running: Mutex<HashMap<String, oneshot::Sender<()>>>,
}

impl Worker {
    /// A worker publishing its events on `outbound`; the transport hands it
    /// `call.requested` and `call.aborted` with [`Worker::handle`].
    pub fn new(registry: Arc<Registry>, outbound: Outbound) -> Arc<Worker> {
        Worker::with_shaper(registry, outbound, None)
    }

    /// A worker that passes every envelope through `shaper` before sending it.
    pub fn with_shaper(
        registry: Arc<Registry>,
        outbound: Outbound,
        shaper: Option<Shaper>,
    ) -> Arc<Worker> {
        Arc::new(Worker {
            registry,
            outbound,
            shaper,
            running: Mutex::new(HashMap::new()),
        })
    }

    /// `call.responded` with `envelope` (shaped), or `call.error` when shaping fails.
    fn respond(&self, request_id: &str, envelope: Value) -> Event {
        let shaped = match &self.shaper {
            Some(shape) => shape(envelope),
            None => Ok(envelope),
        };
        match shaped {
            Ok(output) => Event::Responded(CallResponded {
                request_id: request_id.to_owned(),
                output,
            }),
            Err(error) => Event::Error(CallFailed::new(request_id, error)),
        }
    }

    /// How many requests are running.
    pub fn running(&self) -> usize {
        self.running.lock().unwrap().len()
    }

    /// Takes one event: a request starts (on the current tokio runtime), an abort stops
    /// its request; the other events are not for workers and are ignored.
    pub fn handle(self: &Arc<Self>, event: Event) {
        match event {
            Event::Requested(request) => {
                let (stop, stopped) = oneshot::channel();
                let id = request.request_id.clone();
                self.running.lock().unwrap().insert(id.clone(), stop);
                let worker = self.clone();
                tokio::spawn(async move {
                    tokio::select! {
                        _ = worker.serve(request) => {}
                        // Aborted: the work is dropped, nothing more is published.
                        _ = stopped => {}
                    }
                    worker.running.lock().unwrap().remove(&id);
                });
            }
            Event::Aborted(RequestRef { request_id }) => {
                if let Some(stop) = self.running.lock().unwrap().remove(&request_id) {
                    let _ = stop.send(());
                }
            }
            Event::Responded(_) | Event::Completed(_) | Event::Error(_) => {}
        }
    }

    async fn serve(&self, request: CallRequested) {
        let id = request.request_id.clone();
        let context = context_of(&request);
        let publish = |event: Event| {
            let _ = self.outbound.send(event);
        };
        let fail = |error: CallError| publish(Event::Error(CallFailed::new(&id, error)));
        if let Some(deadline) = request.deadline
            && deadline <= unix_ms(SystemTime::now())
        {
            return fail(past_deadline(&request, deadline));
        }
        let kind = self.registry.spec(&request.operation_id).map(|s| s.kind);
        if kind != Some(OperationType::Subscription) {
            match self
                .registry
                .execute(&request.operation_id, request.input.clone(), &context)
                .await
            {
                Ok(done) => publish(self.respond(&id, done.envelope)),
                // The registry stopped the handler at the deadline: the protocol's error
                // names the request's deadline, whichever side saw it pass first.
                Err(error) => match request.deadline {
                    Some(deadline)
                        if error.code == codes::TIMEOUT
                            && deadline <= unix_ms(SystemTime::now()) =>
                    {
                        fail(past_deadline(&request, deadline))
                    }
                    _ => fail(error),
                },
            }
            return;
        }
        let mut items =
            match self
                .registry
                .subscribe(&request.operation_id, request.input.clone(), &context)
            {
                Ok(items) => items,
                Err(error) => return fail(error),
            };
        let deadline = context.deadline;
        loop {
            let item = match deadline {
                Some(at) => match tokio::time::timeout_at(at.into(), items.next()).await {
                    Ok(item) => item,
                    Err(_) => {
                        let at = request.deadline.unwrap_or_default();
                        return fail(past_deadline(&request, at));
                    }
                },
                None => items.next().await,
            };
            match item {
                Some(Ok(done)) => {
                    let event = self.respond(&id, done.envelope);
                    let failed = matches!(event, Event::Error(_));
                    publish(event);
                    if failed {
                        return;
                    }
                }
                Some(Err(error)) => return fail(error),
                None => {
                    return publish(Event::Completed(RequestRef {
                        request_id: id.clone(),
                    }));
                }
            }
        }
    }
}

/// The context of a request: its ids, identity, metadata, and its deadline as an instant
/// of this machine's clock.
fn context_of(request: &CallRequested) -> Context {
    let deadline = request.deadline.map(|at| {
        let left = at.saturating_sub(unix_ms(SystemTime::now()));
        Instant::now() + Duration::from_millis(left)
    });
    Context {
        request_id: Some(request.request_id.clone()),
        parent_request_id: request.parent_request_id.clone(),
        identity: request.identity.clone(),
        metadata: request.metadata.clone(),
        deadline,
    }
}

fn past_deadline(request: &CallRequested, deadline: u64) -> CallError {
    CallError::new(
        codes::TIMEOUT,
        format!("{}: the deadline passed", request.operation_id),
    )
    .with_details(json!({ "deadline": deadline }))
}
