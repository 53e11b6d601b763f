//! The caller's side: the pending-request map. A call publishes `call.requested` and waits
//! for its answer with a deadline; a subscription yields envelopes until `call.completed`,
//! an error, its idle timeout or the consumer stopping. Whatever ends a request early —
//! the deadline, the idle timeout, the future or stream dropped — publishes
//! `call.aborted`, so the worker stops the handler.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use futures::Stream;
use serde_json::{Map, Value, json};
use tokio::sync::mpsc;

use super::events::{CallRequested, Event, RequestRef};
use super::ids::next_request_id;
use crate::context::Identity;
use crate::error::{CallError, codes};

/// Where a caller or a worker sends its events: the transport takes them from here.
pub type Outbound = mpsc::UnboundedSender<Event>;

/// The options of one call.
#[derive(Clone, Debug, Default)]
pub struct CallOptions {
    /// When to stop waiting: the call ends with TIMEOUT and `call.aborted` is published.
    pub deadline: Option<SystemTime>,
    /// For a subscription: the longest wait between two events (then TIMEOUT).
    pub idle_timeout: Option<Duration>,
    /// The request on whose behalf this one is made.
    pub parent_request_id: Option<String>,
    /// The caller.
    pub identity: Option<Identity>,
    /// Free metadata for the handler.
    pub metadata: Option<Map<String, Value>>,
}

impl CallOptions {
    /// Options with a deadline `timeout` from now.
    pub fn within(timeout: Duration) -> Self {
        CallOptions {
            deadline: Some(SystemTime::now() + timeout),
            ..CallOptions::default()
        }
    }
}

/// The pending-request map of one caller. Cheap to clone; every clone shares the map.
#[derive(Clone)]
pub struct Caller {
    inner: Arc<Inner>,
}

struct Inner {
    outbound: Outbound,
    pending: Mutex<HashMap<String, mpsc::UnboundedSender<Event>>>,
}

impl Caller {
    /// A caller that publishes on `outbound`; the transport hands it the events addressed to
    /// it with [`Caller::deliver`].
    pub fn new(outbound: Outbound) -> Self {
        Caller {
            inner: Arc::new(Inner {
                outbound,
                pending: Mutex::new(HashMap::new()),
            }),
        }
    }

    /// Routes an event to the request it answers. Events of requests no longer pending
    /// (answered, timed out, dropped) are ignored.
    pub fn deliver(&self, event: Event) {
        let pending = self.inner.pending.lock().unwrap();
        if let Some(to) = pending.get(event.request_id()) {
            let _ = to.send(event);
        }
    }

    /// A handle that delivers to this caller without keeping it alive: a transport's
    /// delivery task holds one, so that the caller (and what it keeps open) ends when its
    /// users drop it.
    pub fn downgrade(&self) -> WeakCaller {
        WeakCaller(Arc::downgrade(&self.inner))
    }

    /// How many requests wait for an answer.
    pub fn pending(&self) -> usize {
        self.inner.pending.lock().unwrap().len()
    }

    /// Calls `operation_id` and waits for its envelope. Errors: the worker's `call.error`;
    /// TIMEOUT (details `{deadline}`, Unix ms) when the deadline passes; ABORTED when the
    /// worker completes without responding or aborts; EXECUTION_ERROR when the transport
    /// closes. Dropping the future aborts the request.
    pub async fn call(
        &self,
        operation_id: &str,
        input: Value,
        options: CallOptions,
    ) -> Result<Value, CallError> {
        let mut request = self.open(operation_id, input, &options);
        let deadline = options.deadline;
        loop {
            let event = tokio::select! {
                event = request.events.recv() => event,
                _ = sleep_until(deadline) => return Err(request.time_out(deadline)),
            };
            match event {
                Some(Event::Responded(r)) => {
                    request.finish();
                    return Ok(r.output);
                }
                Some(Event::Error(e)) => {
                    request.finish();
                    return Err(e.into_error());
                }
                Some(Event::Completed(_)) => {
                    request.finish();
                    return Err(CallError::new(
                        codes::ABORTED,
                        format!("{operation_id}: the call completed without a response"),
                    ));
                }
                Some(Event::Aborted(_)) => {
                    request.finish();
                    return Err(CallError::new(
                        codes::ABORTED,
                        format!("{operation_id}: the call was aborted"),
                    ));
                }
                Some(Event::Requested(_)) => continue,
                None => return Err(closed(operation_id)),
            }
        }
    }

    /// Subscribes to `operation_id`: its envelopes until `call.completed`. An error ends the
    /// stream after being yielded; so does the idle timeout (TIMEOUT, `call.aborted`
    /// published) and the deadline. Dropping the stream publishes `call.aborted`.
    ///
    /// A plain (query or mutation) operation responds once and never completes: its
    /// stream ends at the idle timeout or the deadline — subscribe to subscriptions.
    pub fn subscribe(
        &self,
        operation_id: &str,
        input: Value,
        options: CallOptions,
    ) -> impl Stream<Item = Result<Value, CallError>> + Send + 'static {
        let request = self.open(operation_id, input, &options);
        let operation_id = operation_id.to_owned();
        let state = Some((request, options.deadline, options.idle_timeout));
        futures::stream::unfold(state, move |state| {
            let operation_id = operation_id.clone();
            async move {
                let (mut request, deadline, idle) = state?;
                let idle_deadline = idle.map(|idle| SystemTime::now() + idle);
                let next = idle_deadline.into_iter().chain(deadline).min();
                loop {
                    let event = tokio::select! {
                        event = request.events.recv() => event,
                        _ = sleep_until(next) => {
                            let error = match deadline {
                                Some(d) if Some(d) == next => request.time_out(deadline),
                                _ => request.idle_out(idle.unwrap_or_default()),
                            };
                            // Dropped open: `call.aborted` reaches the worker.
                            return Some((Err(error), None));
                        }
                    };
                    return match event {
                        Some(Event::Responded(r)) => {
                            Some((Ok(r.output), Some((request, deadline, idle))))
                        }
                        Some(Event::Error(e)) => {
                            request.finish();
                            Some((Err(e.into_error()), None))
                        }
                        Some(Event::Completed(_)) => {
                            request.finish();
                            None
                        }
                        Some(Event::Aborted(_)) => {
                            request.finish();
                            let message = format!("{operation_id}: the subscription was aborted");
                            Some((Err(CallError::new(codes::ABORTED, message)), None))
                        }
                        Some(Event::Requested(_)) => continue,
                        None => Some((Err(closed(&operation_id)), None)),
                    };
                }
            }
        })
    }

    /// Aborts a pending request: `call.aborted` published, the waiting call gets ABORTED.
    pub fn abort(&self, request_id: &str) {
        let to = self.inner.pending.lock().unwrap().get(request_id).cloned();
        if let Some(to) = to {
            let aborted = Event::Aborted(RequestRef {
                request_id: request_id.to_owned(),
            });
            let _ = self.inner.outbound.send(aborted.clone());
            let _ = to.send(aborted);
        }
    }

    /// Registers a request and publishes its `call.requested`.
    fn open(&self, operation_id: &str, input: Value, options: &CallOptions) -> Pending {
        let request_id = next_request_id();
        let (to, events) = mpsc::unbounded_channel();
        self.inner
            .pending
            .lock()
            .unwrap()
            .insert(request_id.clone(), to);
        let requested = Event::Requested(CallRequested {
            request_id: request_id.clone(),
            operation_id: operation_id.to_owned(),
            input,
            parent_request_id: options.parent_request_id.clone(),
            deadline: options.deadline.map(unix_ms),
            idle_timeout: options.idle_timeout.map(|d| d.as_millis() as u64),
            identity: options.identity.clone(),
            metadata: options.metadata.clone(),
        });
        let _ = self.inner.outbound.send(requested);
        Pending {
            caller: self.inner.clone(),
            request_id,
            events,
            open: true,
        }
    }
}

/// A [`Caller`] that may be gone ([`Caller::downgrade`]).
#[derive(Clone)]
pub struct WeakCaller(std::sync::Weak<Inner>);

impl WeakCaller {
    /// Delivers `event` as [`Caller::deliver`] does; `false` once the caller is gone.
    pub fn deliver(&self, event: Event) -> bool {
        match self.0.upgrade() {
            Some(inner) => {
                Caller { inner }.deliver(event);
                true
            }
            None => false,
        }
    }
}

/// One request waiting for its answer. Dropped while still open, it publishes
/// `call.aborted`; in any case it leaves the map.
struct Pending {
    caller: Arc<Inner>,
    request_id: String,
    events: mpsc::UnboundedReceiver<Event>,
    open: bool,
}

impl Pending {
    /// The request got its last event: nothing to abort.
    fn finish(&mut self) {
        self.open = false;
    }

    fn time_out(&mut self, deadline: Option<SystemTime>) -> CallError {
        let deadline = deadline.map(unix_ms).unwrap_or_default();
        CallError::new(
            codes::TIMEOUT,
            format!(
                "no answer to request {} before its deadline",
                self.request_id
            ),
        )
        .with_details(json!({ "deadline": deadline }))
    }

    fn idle_out(&mut self, idle: Duration) -> CallError {
        CallError::new(
            codes::TIMEOUT,
            format!(
                "subscription {} was idle for {} ms",
                self.request_id,
                idle.as_millis()
            ),
        )
        .with_details(json!({ "idleTimeout": idle.as_millis() as u64 }))
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        self.caller.pending.lock().unwrap().remove(&self.request_id);
        if self.open {
            let _ = self.caller.outbound.send(Event::Aborted(RequestRef {
                request_id: self.request_id.clone(),
            }));
        }
    }
}

fn closed(operation_id: &str) -> CallError {
    CallError::new(
        codes::EXECUTION_ERROR,
        format!("{operation_id}: the transport closed before an answer"),
    )
}

/// Sleeps until `at` (a wall-clock time), or forever when there is none.
async fn sleep_until(at: Option<SystemTime>) {
    match at {
        Some(at) => {
            let left = at.duration_since(SystemTime::now()).unwrap_or_default();
            tokio::time::sleep(left).await
        }
        None => std::future::pending().await,
    }
}

/// `at` in Unix milliseconds.
pub(crate) fn unix_ms(at: SystemTime) -> u64 {
    at.duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}
