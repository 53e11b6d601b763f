//! The call protocol over NATS — the wire contract of `specs/operations.md`
//! ("Distribution"), so that callers and workers in any language and on any machine meet:
//!
//! - `call.requested` is published on `<prefix>.call.<operationId>`, its reply subject the
//!   caller's inbox for that request (`<inbox>.<requestId>`); workers subscribe to
//!   `<prefix>.call.>` in the queue group `<prefix>-workers`, so each request reaches one.
//! - `call.responded`, `call.completed` and `call.error` go to that reply subject.
//! - `call.aborted` goes to `<prefix>.abort.<requestId>` (every worker hears it; the one
//!   running the request stops it).
//! - Every message names its event in the header `Envelope-Event`; the body is exactly the
//!   event's fields (JSON).
//!
//! A request no worker hears gets the server's "no responders" status on its reply subject:
//! the caller turns it into EXECUTION_ERROR at once. An envelope larger than the server's
//! maximum payload is not sent: the worker answers `call.error` saying so (run the worker
//! with a limit, which shapes envelopes and keeps the full result in the store).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use async_nats::{Client, HeaderMap, StatusCode};
use futures::StreamExt;
use serde_json::json;
use tokio::sync::mpsc;

use super::caller::Caller;
use super::events::{CallFailed, Event};
use super::worker::{Shaper, Worker};
use crate::error::{CallError, codes};
use crate::registry::Registry;
use crate::spec::OperationType;

/// The header naming a message's event.
pub const EVENT_HEADER: &str = "Envelope-Event";
/// The subject prefix when none is given.
pub const DEFAULT_PREFIX: &str = "envelope";

/// What went wrong setting up a NATS caller or worker.
#[derive(Debug, thiserror::Error)]
#[error("NATS: {0}")]
pub struct NatsError(String);

impl NatsError {
    /// The connection to `url` ended.
    pub fn closed(url: &str) -> Self {
        NatsError(format!("the connection to {url} ended"))
    }
}

/// How long [`connect`] tries before giving up.
pub const CONNECT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// A client of the NATS server at `url` (`nats://host:port`), or a clear error within
/// [`CONNECT_TIMEOUT`].
pub async fn connect(url: &str) -> Result<Client, NatsError> {
    let options = async_nats::ConnectOptions::new()
        .name("envelope")
        .connection_timeout(CONNECT_TIMEOUT);
    match tokio::time::timeout(CONNECT_TIMEOUT, options.connect(url)).await {
        Ok(Ok(client)) => Ok(client),
        Ok(Err(e)) => Err(NatsError(format!("cannot connect to {url}: {e}"))),
        Err(_) => Err(NatsError(format!(
            "cannot connect to {url} within {} s",
            CONNECT_TIMEOUT.as_secs()
        ))),
    }
}

fn headers_of(event: &Event) -> HeaderMap {
    let mut headers = HeaderMap::new();
    headers.insert(EVENT_HEADER, event.name());
    headers
}

/// A message's event: its `Envelope-Event` header and body.
fn event_of(message: &async_nats::Message) -> Result<Event, String> {
    let name = message
        .headers
        .as_ref()
        .and_then(|h| h.get(EVENT_HEADER))
        .map(|v| v.as_str().to_owned())
        .ok_or_else(|| {
            format!(
                "a message on {} has no {EVENT_HEADER} header",
                message.subject
            )
        })?;
    Event::from_parts(&name, &message.payload).map_err(|e| e.to_string())
}

/// A caller whose requests go to the workers listening on `prefix` of `client`'s server.
pub async fn nats_caller(client: Client, prefix: &str) -> Result<Caller, NatsError> {
    let inbox = client.new_inbox();
    let mut replies = client
        .subscribe(format!("{inbox}.*"))
        .await
        .map_err(|e| NatsError(format!("cannot subscribe to the reply inbox: {e}")))?;
    let (outbound, mut to_publish) = mpsc::unbounded_channel::<Event>();
    let caller = Caller::new(outbound);

    let publisher = client.clone();
    let prefix = prefix.to_owned();
    // Weak handles: the tasks end once the caller's users drop it.
    let deliver = caller.downgrade();
    tokio::spawn(async move {
        while let Some(event) = to_publish.recv().await {
            let headers = headers_of(&event);
            let body = event.body().into();
            let sent = match &event {
                Event::Requested(r) => {
                    let subject = format!("{prefix}.call.{}", r.operation_id);
                    let reply = format!("{inbox}.{}", r.request_id);
                    publisher
                        .publish_with_reply_and_headers(subject, reply, headers, body)
                        .await
                }
                Event::Aborted(a) => {
                    let subject = format!("{prefix}.abort.{}", a.request_id);
                    publisher.publish_with_headers(subject, headers, body).await
                }
                // A caller publishes nothing else.
                _ => Ok(()),
            };
            if let (Err(e), Event::Requested(r)) = (sent, &event) {
                let error = CallError::new(
                    codes::EXECUTION_ERROR,
                    format!(
                        "{}: the request could not be published: {e}",
                        r.operation_id
                    ),
                );
                deliver.deliver(Event::Error(CallFailed::new(&r.request_id, error)));
            }
        }
    });

    let deliver = caller.downgrade();
    tokio::spawn(async move {
        while let Some(message) = replies.next().await {
            let request_id = message.subject.rsplit('.').next().unwrap_or("").to_owned();
            let event = if message.status == Some(StatusCode::NO_RESPONDERS) {
                let error = CallError::new(
                    codes::EXECUTION_ERROR,
                    "no worker listens for this operation (no responders on NATS)",
                )
                .with_details(json!({ "reason": "no_responders" }));
                Event::Error(CallFailed::new(&request_id, error))
            } else {
                match event_of(&message) {
                    Ok(event) => event,
                    Err(why) => {
                        let error = CallError::new(
                            codes::EXECUTION_ERROR,
                            format!("the worker sent a malformed event: {why}"),
                        );
                        Event::Error(CallFailed::new(&request_id, error))
                    }
                }
            };
            if !deliver.deliver(event) {
                // Unsubscribes the inbox.
                break;
            }
        }
    });
    Ok(caller)
}

/// Where a request's answers go, and whether it is a subscription (answered many times).
struct Reply {
    subject: async_nats::Subject,
    many: bool,
}

/// Serves `registry` to the callers on `prefix` of `client`'s server until the connection
/// closes. Returns once subscribed, with the task serving.
pub async fn serve_nats(
    client: Client,
    registry: Arc<Registry>,
    prefix: &str,
) -> Result<tokio::task::JoinHandle<()>, NatsError> {
    serve_nats_shaped(client, registry, prefix, None).await
}

/// [`serve_nats`], every envelope passed through `shaper` before it is sent.
pub async fn serve_nats_shaped(
    client: Client,
    registry: Arc<Registry>,
    prefix: &str,
    shaper: Option<Shaper>,
) -> Result<tokio::task::JoinHandle<()>, NatsError> {
    let mut calls = client
        .queue_subscribe(format!("{prefix}.call.>"), format!("{prefix}-workers"))
        .await
        .map_err(|e| NatsError(format!("cannot subscribe to {prefix}.call.>: {e}")))?;
    let mut aborts = client
        .subscribe(format!("{prefix}.abort.*"))
        .await
        .map_err(|e| NatsError(format!("cannot subscribe to {prefix}.abort.*: {e}")))?;
    // Both subscriptions reach the server before the worker says it is ready.
    client
        .flush()
        .await
        .map_err(|e| NatsError(format!("cannot reach the server: {e}")))?;
    let replies: Arc<Mutex<HashMap<String, Reply>>> = Arc::default();
    let (outbound, mut answers) = mpsc::unbounded_channel::<Event>();
    let worker = Worker::with_shaper(registry.clone(), outbound, shaper);

    let publisher = client.clone();
    let routes = replies.clone();
    tokio::spawn(async move {
        let max_payload = publisher.server_info().max_payload;
        while let Some(event) = answers.recv().await {
            let request_id = event.request_id().to_owned();
            let subject = {
                let mut routes = routes.lock().unwrap();
                let last = match (&event, routes.get(&request_id)) {
                    (_, None) => continue,
                    (Event::Responded(_), Some(reply)) => !reply.many,
                    _ => true,
                };
                let subject = routes[&request_id].subject.clone();
                if last {
                    routes.remove(&request_id);
                }
                subject
            };
            let mut event = event;
            let mut body = event.body();
            if body.len() > max_payload {
                let error = CallError::new(
                    codes::EXECUTION_ERROR,
                    format!(
                        "the envelope has {} bytes, over the NATS server's maximum payload of {max_payload}: run the worker with a limit under it (`envelope ops worker --limit BYTES`)",
                        body.len()
                    ),
                )
                .with_details(json!({ "bytes": body.len(), "maxPayload": max_payload }));
                event = Event::Error(CallFailed::new(&request_id, error));
                body = event.body();
            }
            let _ = publisher
                .publish_with_headers(subject, headers_of(&event), body.into())
                .await;
        }
    });

    Ok(tokio::spawn(async move {
        loop {
            tokio::select! {
                message = calls.next() => {
                    let Some(message) = message else { break };
                    let Some(reply) = message.reply.clone() else { continue };
                    match event_of(&message) {
                        Ok(Event::Requested(request)) => {
                            let many = registry
                                .spec(&request.operation_id)
                                .is_some_and(|s| s.kind == OperationType::Subscription);
                            replies.lock().unwrap().insert(
                                request.request_id.clone(),
                                Reply { subject: reply, many },
                            );
                            worker.handle(Event::Requested(request));
                        }
                        other => {
                            let why = match other {
                                Ok(event) => format!("{} is not a request", event.name()),
                                Err(why) => why,
                            };
                            let error = CallError::new(
                                codes::VALIDATION_ERROR,
                                format!("malformed call.requested: {why}"),
                            );
                            let event = Event::Error(CallFailed::new("", error));
                            let _ = client
                                .publish_with_headers(reply, headers_of(&event), event.body().into())
                                .await;
                        }
                    }
                }
                message = aborts.next() => {
                    let Some(message) = message else { break };
                    if let Ok(Event::Aborted(aborted)) = event_of(&message) {
                        replies.lock().unwrap().remove(&aborted.request_id);
                        worker.handle(Event::Aborted(aborted));
                    }
                }
            }
        }
    }))
}
