//! The relay of one client session.
//!
//! [`run`] is the one entry point every client transport uses: it connects the upstream
//! ([`transport::connect`]), relays frames both ways, shapes
//! `tools/call` results, answers the proxy's own requests, and returns when the client is
//! gone (ending the upstream).
//!
//! One task routes every frame; nothing slow runs on it. Shaping a result and reading the
//! store run on blocking threads and send their answer to the client themselves, so a slow
//! or big call never delays another, and answers go out in whatever order they are ready.
//! Frames are routed on their top-level members ([`Message`]) and relayed byte for byte;
//! only the answers the proxy adds to (`initialize`, `server/discover`, `tools/list`,
//! `resources/templates/list`) and `tools/call` results are rewritten.
//!
//! Decisions:
//! - Requests are matched to answers by the id's compact JSON ([`id_key`]). An answer
//!   nobody waits for (timed out, cancelled) is dropped. Each request remembers where its
//!   answer goes (`Request::reply`): the client, or the batch it came in.
//! - Batches (2025-03-26) are split (`session::batch`): each message is relayed and tracked as a
//!   single one, and the answers go back to the client as one array. An upstream's batch
//!   is split too: its messages reach the client one by one.
//! - 2026-07-28 is stateless: no `initialize`, each request names its revision in
//!   `_meta`. `server/discover` gets the capabilities `initialize` gets; results the proxy
//!   writes itself carry `resultType` when the request's revision has it; and an upstream
//!   that answers `resources/list` or `resources/templates/list` with "method not found"
//!   (no resources of its own, and no discovery seen) gets the proxy's own answer instead.
//! - Upstream gone: every pending request gets error -32000 naming the cause ("exited with
//!   status 3"), later requests too. With `--restart` a new upstream is started and the
//!   client's `initialize` and `notifications/initialized` are replayed (the replayed
//!   answer is the proxy's); frames that arrive meanwhile wait. A new upstream that dies
//!   before answering the replayed `initialize` is not restarted again. A command that
//!   cannot be started at all (not found, not executable) is never retried: the client's
//!   first request gets the reason, then the session ends and [`run`] says why.
//! - `--timeout`: error -32001 to the client and `notifications/cancelled` upstream
//!   (except for `initialize`, which may not be cancelled).
//! - Client gone: answers in flight get 2 s to arrive, then the upstream is ended.
//! - If the upstream offers no resources, the proxy answers `resources/list` (empty) and
//!   `resources/templates/list` (its artifact template) itself.

mod additions;
mod batch;
mod catalog_calls;
mod own;
mod pending;
mod restarts;
mod settings;

use std::borrow::Cow;
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio::task::JoinSet;

use self::additions::READ_TOOL;
pub use self::batch::MAX_BATCH;
use self::own::{Own, Reply, own_resource_list};
use self::pending::{Pending, Request};
use self::restarts::Restarts;
use self::settings::tool_settings;
use crate::config::{Config, UpstreamSpec};
use crate::drill;
use crate::drill::parse_artifact_uri;
use crate::held::Held;
use crate::message::{self, Kind, Message, code, id_key};
use crate::outbound::{Outbound, Ready};
use crate::revision::{PROTOCOL_VERSION_META_KEY, Revision};
use crate::shaping::{self, CallContext, OutputSchema, ToolSettings};
use crate::stats::{CallRecord, Stats, log};
use crate::transport::{self, Frame, Incoming, Link, lines};

/// Once the client is gone, answers still in flight get this long to be relayed (a client
/// that writes its requests and closes its end still gets them).
const DRAIN: Duration = Duration::from_secs(2);

/// Results up to this size are shaped on the relay's own task (see `Session::shape`).
const SHAPE_INLINE: usize = 64 * 1024;

/// Answers up to this size are checked for secrets on the relay's own task; bigger ones on
/// a blocking thread, so that the relay goes on meanwhile.
const REDACT_INLINE: usize = 256 * 1024;

/// While this many frames wait to be written to the upstream, the client is not read: the
/// client is slowed down (backpressure), and nothing the relay does waits on the upstream.
const UPSTREAM_QUEUE: usize = 1024;

/// Relays one client session until the client is gone; the upstream is ended on return.
/// `Err` (why) when the upstream command cannot be started at all (it does not exist or
/// may not be run): that is never retried, the client's first request is answered with
/// the reason, and the session ends there (`envelope proxy` then exits non-zero).
pub async fn run(client: Link, config: Arc<Config>, stats: Arc<Stats>) -> Result<(), String> {
    let Link {
        inbound: mut from_client,
        outbound: to_client,
    } = client;
    let redact = config.redact;
    let mut session = Session::new(config, stats, Outbound::new(to_client, redact));
    session.connect().await;
    loop {
        if session.over {
            break;
        }
        session.reap_tasks();
        let deadline = session.pending.next_deadline();
        // Reading and writing never wait on each other: frames for the upstream wait in a
        // queue written as the upstream takes them, while the upstream's frames are read
        // on; the client is read only while that queue has room.
        let client_room = session.upstream_queue.len() + session.held.len() < UPSTREAM_QUEUE;
        let upstream_due = !session.upstream_queue.is_empty();
        tokio::select! {
            permit = reserve(session.upstream_tx.clone()), if upstream_due => match permit {
                Some(permit) => {
                    if let Some(frame) = session.upstream_queue.pop_front() {
                        permit.send(frame);
                    }
                }
                // Going: its `Closed` follows and answers every request in flight.
                None => session.upstream_queue.clear(),
            },
            incoming = from_client.recv(), if client_room => match incoming {
                Some(Incoming::Frame(frame)) => session.on_client_frame(frame).await,
                Some(Incoming::Closed(reason)) => {
                    log::info("client.closed", &[("reason", reason.into())]);
                    break;
                }
                None => break,
            },
            incoming = recv(&mut session.upstream_rx) => match incoming {
                Some(Incoming::Frame(frame)) => session.on_upstream_frame(frame).await,
                Some(Incoming::Closed(reason)) => session.upstream_closed(reason).await,
                None => session.upstream_closed("closed its connection".into()).await,
            },
            () = sleep_until(deadline) => session.time_out(Instant::now()).await,
            () = sleep_until(session.restart_at) => session.restart().await,
        }
    }
    let unstartable = session.unstartable.clone();
    session.end().await;
    match unstartable {
        Some(reason) => Err(reason),
        None => Ok(()),
    }
}

/// Room for one frame to the upstream; `None` when it is gone.
async fn reserve(tx: Option<mpsc::Sender<Frame>>) -> Option<mpsc::OwnedPermit<Frame>> {
    tx?.reserve_owned().await.ok()
}

/// The next frame of the upstream, or never when there is none.
async fn recv(rx: &mut Option<mpsc::Receiver<Incoming>>) -> Option<Incoming> {
    match rx {
        Some(rx) => rx.recv().await,
        None => std::future::pending().await,
    }
}

async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(at) => tokio::time::sleep_until(at.into()).await,
        None => std::future::pending().await,
    }
}

/// The `params` of `tools/call`, read without building the arguments.
#[derive(Deserialize)]
struct CallParams<'a> {
    #[serde(borrow)]
    name: Cow<'a, str>,
}

/// The `_meta` of any request's `params`, read without building the rest.
#[derive(Deserialize)]
struct MetaParams<'a> {
    #[serde(rename = "_meta", borrow, default)]
    meta: Option<&'a RawValue>,
}

struct Session {
    config: Arc<Config>,
    stats: Arc<Stats>,
    /// Every frame to the client goes through it (secrets masked).
    to_client: Outbound,
    upstream_tx: Option<mpsc::Sender<Frame>>,
    /// Frames for the upstream, written as it takes them (see [`run`]).
    upstream_queue: VecDeque<Frame>,
    upstream_rx: Option<mpsc::Receiver<Incoming>>,
    /// Why the upstream is gone (until the next request restarts it, unless
    /// `--no-restart`).
    gone: Option<String>,
    /// When and how often a crashed upstream is started again.
    restart_policy: Restarts,
    /// Why the upstream command cannot be started at all (not found, not executable):
    /// never retried; the session ends once it has answered a request with it.
    unstartable: Option<String>,
    /// The session is over (see `unstartable`).
    over: bool,
    /// A restart is due then: frames wait in `held` meanwhile.
    restart_at: Option<Instant>,
    pending: Pending,
    /// The client's `initialize` request and `notifications/initialized`, replayed to a
    /// restarted upstream.
    initialize: Option<Frame>,
    initialized: Option<Frame>,
    /// A restarted upstream is being initialized: client frames wait here meanwhile.
    replaying: bool,
    held: Vec<Frame>,
    restarts: u64,
    /// From the `initialize` answer.
    revision: Option<String>,
    upstream_has_resources: bool,
    /// Each tool's `outputSchema` as the client saw it in `tools/list`.
    output_schemas: HashMap<String, Option<Arc<OutputSchema>>>,
    /// Shaping and store reads in flight.
    tasks: JoinSet<()>,
}

impl Session {
    fn new(config: Arc<Config>, stats: Arc<Stats>, to_client: Outbound) -> Session {
        Session {
            config,
            stats,
            to_client,
            upstream_tx: None,
            upstream_queue: VecDeque::new(),
            upstream_rx: None,
            gone: None,
            restart_policy: Restarts::default(),
            unstartable: None,
            over: false,
            restart_at: None,
            pending: Pending::default(),
            initialize: None,
            initialized: None,
            replaying: false,
            held: Vec::new(),
            restarts: 0,
            revision: None,
            upstream_has_resources: true,
            output_schemas: HashMap::new(),
            tasks: JoinSet::new(),
        }
    }

    /// Starts the upstream; on failure the session answers every request with the reason.
    async fn connect(&mut self) -> bool {
        match transport::connect(&self.config.upstream).await {
            Ok(link) => {
                self.upstream_tx = Some(link.outbound);
                self.upstream_rx = Some(link.inbound);
                true
            }
            Err(e) => {
                log::error(
                    "upstream.connect_failed",
                    &[("error", e.to_string().into())],
                );
                self.stats.record_error("upstream_connect");
                self.gone = Some(format!("could not be started: {e}"));
                // A command that is not there or may not be run will not be there on the
                // next try either (a URL's server may come up; a full process table clear).
                let permanent = matches!(
                    e.kind(),
                    std::io::ErrorKind::NotFound | std::io::ErrorKind::PermissionDenied
                );
                if permanent && matches!(self.config.upstream, UpstreamSpec::Command { .. }) {
                    self.unstartable = Some(e.to_string());
                }
                false
            }
        }
    }

    fn reap_tasks(&mut self) {
        while self.tasks.try_join_next().is_some() {}
    }

    async fn send_client(&self, frame: Frame) {
        // A client that is gone ends the session through its inbound side.
        let _ = self.to_client.send(frame).await;
    }

    /// Queues a frame for the upstream (written by [`run`]'s loop as the upstream takes it).
    fn send_upstream(&mut self, frame: Frame) {
        if self.replaying {
            self.held.push(frame);
            return;
        }
        let Some(tx) = &self.upstream_tx else {
            return;
        };
        // Straight to the upstream when it has room and nothing waits before this frame.
        if self.upstream_queue.is_empty() {
            match tx.try_send(frame) {
                Ok(()) => {}
                Err(mpsc::error::TrySendError::Full(frame)) => self.upstream_queue.push_back(frame),
                // Going: its `Closed` follows and answers every request in flight.
                Err(mpsc::error::TrySendError::Closed(_)) => {}
            }
        } else {
            self.upstream_queue.push_back(frame);
        }
    }

    /// Relays an answer of the upstream as it is (secrets masked); a big one is checked on
    /// a blocking thread so that the relay goes on meanwhile.
    async fn relay_answer(&mut self, reply: Outbound, frame: Frame) {
        if frame.len() <= REDACT_INLINE || !reply.redacts() {
            let _ = reply.send(frame).await;
            return;
        }
        self.tasks.spawn(async move {
            let checker = reply.clone();
            let ready = tokio::task::spawn_blocking(move || checker.ready(frame)).await;
            if let Ok(ready) = ready {
                let _ = reply.send_ready(ready).await;
            }
        });
    }

    async fn on_client_frame(&mut self, frame: Frame) {
        let message = match Message::parse(&frame) {
            Ok(message) => message,
            Err(e) => {
                log::warn("client.invalid", &[("error", e.to_string().into())]);
                self.stats.record_error("client_invalid_json");
                let answer = message::error_response(b"null", code::PARSE_ERROR, &e.to_string());
                return self.send_client(answer).await;
            }
        };
        if message.kind == Kind::Batch {
            return self.client_batch(&frame).await;
        }
        let reply = self.to_client.clone();
        self.on_client_message(frame, message, reply).await;
    }

    /// A batch: each message on its own, the answers gathered into one array.
    async fn client_batch(&mut self, frame: &[u8]) {
        let elements = match batch::split(frame) {
            Ok(elements) => elements,
            Err(e) => {
                self.stats.record_error("client_invalid_batch");
                return self.send_client(e.answer()).await;
            }
        };
        log::debug("client.batch", &[("messages", elements.len().into())]);
        let (reply, gather) = batch::collector(self.to_client.clone());
        self.tasks.spawn(gather);
        for element in elements {
            match Message::parse(&element) {
                Ok(message) if message.kind != Kind::Batch => {
                    self.on_client_message(element, message, reply.clone())
                        .await;
                }
                invalid => {
                    let text = match invalid {
                        Err(e) => e.to_string(),
                        Ok(_) => "a batch inside a batch is not a message".into(),
                    };
                    self.stats.record_error("client_invalid_batch");
                    let answer = message::error_response(b"null", code::INVALID_REQUEST, &text);
                    let _ = reply.send(answer).await;
                }
            }
        }
    }

    /// One message from the client (alone or from a batch); `reply` is where the answer to
    /// a request goes.
    async fn on_client_message(&mut self, frame: Frame, message: Message, reply: Reply) {
        match message.kind {
            Kind::Request => self.client_request(frame, message, reply).await,
            Kind::Notification => {
                match message.method.as_deref() {
                    Some("notifications/initialized") => self.initialized = Some(frame.clone()),
                    // The answer to a cancelled request is not wanted: drop it when it comes.
                    Some("notifications/cancelled") => {
                        if let Some(key) = cancelled_id(&frame, &message) {
                            self.pending.remove(&key);
                        }
                    }
                    _ => {}
                }
                if self.gone.is_none() {
                    self.send_upstream(frame);
                }
            }
            // Answers to the upstream's requests (sampling, elicitation, roots) go as they
            // are (a batch never reaches here: `client_batch` split it).
            Kind::Response | Kind::ErrorResponse | Kind::Batch => {
                if self.gone.is_none() {
                    self.send_upstream(frame);
                }
            }
        }
    }

    async fn client_request(&mut self, frame: Frame, message: Message, reply: Reply) {
        let raw_id = message.id_bytes(&frame).unwrap_or(b"null").to_vec();
        let method = message.method.clone().unwrap_or_default();
        let params = message.params.clone().map(|r| &frame[r]);
        let revision = params.and_then(request_revision);
        // Results the proxy writes itself carry `resultType` where the revision has it.
        let result_type = revision
            .as_deref()
            .or(self.revision.as_deref())
            .is_some_and(|r| Revision::from_protocol_version(r).has_result_type());
        let own = Own {
            raw_id: raw_id.clone(),
            reply: reply.clone(),
            result_type,
        };
        let mut tool = None;
        match method.as_str() {
            "tools/call" => {
                let Some(call) = params.and_then(|p| serde_json::from_slice::<CallParams>(p).ok())
                else {
                    // Malformed: the upstream says what is wrong with it.
                    let request = self.request(raw_id, method, None, revision, reply);
                    return self.forward_request(frame, request).await;
                };
                if call.name == READ_TOOL {
                    return self.answer_read_tool(own, params.unwrap_or(b"{}"));
                }
                if catalog_calls::answers(&self.config, &call.name) {
                    return self.answer_catalog_tool(own, &call.name, params.unwrap_or(b"{}"));
                }
                tool = Some(call.name.into_owned());
            }
            "resources/read" => {
                let uri = params
                    .and_then(|p| serde_json::from_slice::<Value>(p).ok())
                    .and_then(|p| p.get("uri").and_then(Value::as_str).map(str::to_string));
                if let Some(uri) = uri.filter(|uri| parse_artifact_uri(uri).is_some()) {
                    return self.answer_read_resource(own, uri);
                }
            }
            "resources/templates/list" | "resources/list" if !self.upstream_has_resources => {
                return own.answer(own_resource_list(&method)).await;
            }
            "initialize" => self.initialize = Some(frame.clone()),
            lines::OVERSIZED_METHOD => {
                let text = oversized_text(params);
                return own.error(code::INVALID_REQUEST, &text).await;
            }
            _ => {}
        }
        let mut request = self.request(raw_id, method, tool, revision, reply);
        if request.tool.is_some() && self.config.catalog.is_some() {
            // Kept for the catalog's digest of them, should the result be stored.
            request.arguments = params.and_then(call_arguments);
        }
        self.forward_request(frame, request).await;
    }

    /// A request to track, with the `--timeout` deadline from now.
    fn request(
        &self,
        raw_id: Vec<u8>,
        method: String,
        tool: Option<String>,
        revision: Option<String>,
        reply: Reply,
    ) -> Request {
        Request {
            raw_id,
            method,
            tool,
            arguments: None,
            revision,
            started: Instant::now(),
            deadline: self.config.timeout.map(|t| Instant::now() + t),
            internal: false,
            reply,
        }
    }

    async fn forward_request(&mut self, frame: Frame, request: Request) {
        self.wake_upstream();
        if let Some(reason) = &self.gone {
            let text = format!(
                "the upstream server {reason}; {} was not sent",
                request.method
            );
            self.stats.record_error("upstream_gone");
            let answer = message::error_response(&request.raw_id, code::UPSTREAM_GONE, &text);
            let _ = request.reply.send(answer).await;
            // Answered: nothing more can be done for this client.
            self.over = self.unstartable.is_some();
            return;
        }
        if let Some(key) = id_key(&request.raw_id) {
            self.pending.insert(key, request);
        }
        self.send_upstream(frame);
    }

    /// `tools/call envelope_read`: answered from the store on a blocking thread.
    fn answer_read_tool(&mut self, own: Own, params: &[u8]) {
        let arguments = serde_json::from_slice::<Value>(params)
            .ok()
            .and_then(|p| p.get("arguments").cloned())
            .unwrap_or(Value::Null);
        self.stats.record_read("envelope_read");
        let store = self.config.store.clone();
        let settings = tool_settings(&self.config, READ_TOOL);
        self.tasks.spawn(async move {
            let result = tokio::task::spawn_blocking(move || {
                shaping::answer_within(&settings, |limit| {
                    drill::call_read(&arguments, store.as_ref(), limit)
                })
            })
            .await
            .unwrap_or_else(|e| json!({"content":[{"type":"text","text":format!("envelope_read failed: {e}")}],"isError":true}));
            own.answer(result).await;
        });
    }

    /// `resources/read` of an artifact URI: answered from the store on a blocking thread.
    fn answer_read_resource(&mut self, own: Own, uri: String) {
        self.stats.record_read("resources/read");
        let store = self.config.store.clone();
        self.tasks.spawn(async move {
            let read =
                tokio::task::spawn_blocking(move || drill::read_resource(&uri, store.as_ref()))
                    .await
                    .map_err(|e| (code::INTERNAL_ERROR, e.to_string()));
            match read {
                Ok(Ok(result)) => own.answer(result).await,
                Ok(Err(e)) => own.error(e.code, &e.message).await,
                Err((code, text)) => own.error(code, &text).await,
            }
        });
    }

    async fn on_upstream_frame(&mut self, frame: Frame) {
        let message = match Message::parse(&frame) {
            Ok(message) => message,
            Err(e) => {
                let start = String::from_utf8_lossy(&frame[..frame.len().min(120)]).into_owned();
                log::warn(
                    "upstream.invalid",
                    &[
                        ("error", e.to_string().into()),
                        ("bytes", frame.len().into()),
                        ("start", start.into()),
                    ],
                );
                self.stats.record_error("upstream_invalid_json");
                return;
            }
        };
        match message.kind {
            Kind::Batch => self.upstream_batch(&frame).await,
            _ => self.on_upstream_message(frame, message).await,
        }
    }

    /// A batch from the upstream: its messages one by one (answers to the client's
    /// requests are matched and shaped like any).
    async fn upstream_batch(&mut self, frame: &[u8]) {
        let Ok(elements) = batch::split(frame) else {
            log::warn("upstream.invalid_batch", &[("bytes", frame.len().into())]);
            self.stats.record_error("upstream_invalid_json");
            return;
        };
        for element in elements {
            match Message::parse(&element) {
                Ok(message) if message.kind != Kind::Batch => {
                    self.on_upstream_message(element, message).await;
                }
                _ => {
                    log::warn("upstream.invalid", &[("bytes", element.len().into())]);
                    self.stats.record_error("upstream_invalid_json");
                }
            }
        }
    }

    async fn on_upstream_message(&mut self, frame: Frame, message: Message) {
        match message.kind {
            Kind::Response | Kind::ErrorResponse => self.upstream_answer(frame, message).await,
            // The upstream's own requests and notifications: as they are.
            Kind::Request | Kind::Notification | Kind::Batch => self.send_client(frame).await,
        }
    }

    async fn upstream_answer(&mut self, frame: Frame, message: Message) {
        let request = message
            .id_bytes(&frame)
            .and_then(id_key)
            .and_then(|key| self.pending.remove(&key));
        let Some(request) = request else {
            // Timed out or cancelled already (the client got its answer), or never asked.
            log::debug(
                "upstream.unmatched_answer",
                &[("bytes", frame.len().into())],
            );
            return;
        };
        if request.internal {
            return self.replayed_initialize_answered(&message).await;
        }
        let Some(range) = message
            .result
            .clone()
            .filter(|_| message.kind == Kind::Response)
        else {
            if request.method == "tools/call" {
                match request.tool.as_deref() {
                    Some(tool) => self
                        .stats
                        .record_tool_error(tool, "upstream_error_response"),
                    None => self.stats.record_error("upstream_error_response"),
                }
            }
            if is_resource_list(&request.method) && method_not_found(&frame, &message) {
                // No resources upstream, learned the stateless way (2026-07-28 clients
                // need not discover first): the proxy's artifacts are still listed.
                self.upstream_has_resources = false;
                let own = Own::of(&request, &self.revision);
                return own.answer(own_resource_list(&request.method)).await;
            }
            return self.relay_answer(request.reply, frame).await;
        };
        let result = &frame[range.clone()];
        let rewritten = match request.method.as_str() {
            "initialize" => additions::initialize(result).map(|(bytes, info)| {
                self.revision = info.revision;
                self.upstream_has_resources = info.upstream_has_resources;
                bytes
            }),
            "server/discover" => additions::discover(result).map(|(bytes, has_resources)| {
                self.upstream_has_resources = has_resources;
                bytes
            }),
            "tools/list" => {
                let config = self.config.clone();
                let catalog = config.catalog.is_some();
                additions::tools_list(result, |name| tool_settings(&config, name), catalog).map(
                    |(bytes, seen)| {
                        self.output_schemas
                            .extend(seen.into_iter().map(|(name, schema)| {
                                (name, schema.map(|s| Arc::new(OutputSchema::new(&s))))
                            }));
                        bytes
                    },
                )
            }
            "resources/templates/list" => additions::templates_list(result),
            "tools/call" => return self.shape(frame, range, request).await,
            _ => None,
        };
        let answer = match rewritten {
            Some(bytes) => message::splice(&frame, range, &bytes),
            None => frame,
        };
        self.relay_answer(request.reply, answer).await;
    }

    /// Shapes a `tools/call` result: a small one right here (microseconds: a trip to a
    /// blocking thread would cost more than the work), a bigger one on a blocking thread
    /// whose task sends the answer, so that the relay never waits for it.
    async fn shape(&mut self, frame: Frame, range: std::ops::Range<usize>, request: Request) {
        let tool = request.tool.unwrap_or_default();
        let settings = tool_settings(&self.config, &tool);
        // The request's own revision (2026-07-28), else the negotiated one; a session
        // that never initialized is taken to speak the newest revision.
        let revision = request
            .revision
            .or_else(|| self.revision.clone())
            .map_or(Revision::NEWEST, |r| Revision::from_protocol_version(&r));
        let call = CallContext {
            output_schema: self.output_schemas.get(&tool).cloned().flatten(),
            revision,
            tool,
            offers_search: self.config.catalog.is_some(),
        };
        // With store limits, the result is pinned until its answer is handed on: `call`
        // lives until then.
        let (call_pins, store) = self.config.call_store();
        let stats = self.stats.clone();
        let indexer = catalog_calls::Indexer::new(&self.config, &call.tool, request.arguments);
        let raw_id = request.raw_id;
        let reply = request.reply;
        let started = request.started;
        // In place only within the limit too: a result over it is written to the store,
        // which may be a network away (S3) and must not hold up the relay.
        if range.len() <= SHAPE_INLINE.min(settings.surely_fits()) {
            let shaped = shape_answer(frame, range, &call, &settings, store.as_ref(), indexer);
            let answer = shaped_answer(shaped, &call.tool, &raw_id, &stats, &reply, started);
            let _ = reply.send_ready(answer).await;
            drop(call_pins);
            return;
        }
        self.tasks.spawn(async move {
            let shaped = tokio::task::spawn_blocking(move || {
                let answer = shape_answer(frame, range, &call, &settings, store.as_ref(), indexer);
                (answer, call.tool)
            })
            .await;
            let answer = match shaped {
                Ok((shaped, tool)) => {
                    shaped_answer(shaped, &tool, &raw_id, &stats, &reply, started)
                }
                Err(e) => shaped_answer(Err(e.to_string()), "", &raw_id, &stats, &reply, started),
            };
            let _ = reply.send_ready(answer).await;
            drop(call_pins);
        });
    }

    /// A request for an upstream that is gone: unless `--no-restart`, a restart is
    /// scheduled (at once, or after the backoff) and the request waits for it; past the
    /// restarts allowed in a minute, `gone` says so and the request gets an error.
    fn wake_upstream(&mut self) {
        let Some(reason) = &self.gone else {
            return;
        };
        if !self.config.restart || self.restart_at.is_some() || self.unstartable.is_some() {
            return;
        }
        let reason = reason.split(" (restarted ").next().unwrap_or_default();
        match self.restart_policy.next(Instant::now()) {
            Ok(at) => {
                self.gone = None;
                self.restart_at = Some(at);
                self.replaying = true;
            }
            Err(wait) => {
                self.gone = Some(format!(
                    "{reason} (restarted {} times within a minute: the next start is allowed in {} s)",
                    restarts::MAX_PER_MINUTE,
                    wait.as_secs() + 1
                ));
            }
        }
    }

    /// The upstream is gone: every request in flight gets an error naming the cause, and so
    /// does every later one until a request restarts it ([`Session::wake_upstream`]).
    async fn upstream_closed(&mut self, reason: String) {
        log::warn(
            "upstream.closed",
            &[
                ("reason", reason.clone().into()),
                ("pending", self.pending.len().into()),
            ],
        );
        self.stats.record_error("upstream_exited");
        self.upstream_tx = None;
        self.upstream_rx = None;
        self.upstream_queue.clear();
        self.fail_pending(&format!("the upstream server {reason} before answering"))
            .await;
        self.gone = Some(reason);
        self.restart_policy.crashed(Instant::now());
    }

    /// Every request in flight gets an error with `text`; frames held for a replacement
    /// go nowhere (their requests were in flight).
    async fn fail_pending(&mut self, text: &str) {
        for (_, request) in self.pending.drain() {
            if !request.internal {
                let answer = message::error_response(&request.raw_id, code::UPSTREAM_GONE, text);
                let _ = request.reply.send(answer).await;
            }
        }
        self.replaying = false;
        self.held.clear();
    }

    /// Starts a new upstream and replays the client's `initialize` to it (if the client
    /// sent one); client frames wait in `held` until it is answered.
    async fn restart(&mut self) {
        self.restart_at = None;
        self.restarts += 1;
        self.restart_policy.started(Instant::now());
        log::warn("upstream.restart", &[("restarts", self.restarts.into())]);
        if !self.connect().await {
            let reason = self.gone.clone().unwrap_or_default();
            self.restart_policy.crashed(Instant::now());
            self.fail_pending(&format!("the upstream server {reason}"))
                .await;
            self.over = self.unstartable.is_some();
            return;
        }
        // The client's initialize again, under an id of the proxy's own.
        let replayed = self.initialize.as_deref().and_then(|initialize| {
            let message = Message::parse(initialize).ok()?;
            let id_range = message.id.clone()?;
            Some((initialize.to_vec(), id_range))
        });
        // The client's own `initialize` may be what woke the upstream (it could not be
        // started at first): it is among the held frames, and goes once.
        let initialize_held = self
            .held
            .iter()
            .any(|f| Some(f) == self.initialize.as_ref());
        let Some((initialize, id_range)) = replayed.filter(|_| !initialize_held) else {
            // Nothing to replay: the held frames go at once.
            return self.flush_held();
        };
        let raw_id = format!("\"envelope-proxy/initialize/{}\"", self.restarts).into_bytes();
        let replay = message::splice(&initialize, id_range, &raw_id);
        let key = id_key(&raw_id).unwrap_or_default();
        let deadline = self.config.timeout.map(|t| Instant::now() + t);
        self.pending.insert(
            key,
            Request {
                raw_id,
                method: "initialize".into(),
                tool: None,
                arguments: None,
                revision: None,
                started: Instant::now(),
                deadline,
                internal: true,
                reply: self.to_client.clone(),
            },
        );
        // Ahead of the frames held meanwhile.
        self.upstream_queue.push_back(replay);
    }

    /// The frames held while the upstream restarted, in order.
    fn flush_held(&mut self) {
        self.replaying = false;
        for frame in std::mem::take(&mut self.held) {
            self.send_upstream(frame);
        }
    }

    /// The restarted upstream answered the replayed `initialize`: `initialized` follows,
    /// then the frames held meanwhile.
    async fn replayed_initialize_answered(&mut self, message: &Message) {
        if message.kind == Kind::ErrorResponse {
            log::error("upstream.replay_refused", &[]);
        } else {
            self.restart_policy.recovered();
        }
        if let Some(initialized) = self.initialized.clone() {
            self.upstream_queue.push_back(initialized);
        }
        self.flush_held();
    }

    /// Requests past `--timeout`: the client gets an error, the upstream a
    /// `notifications/cancelled` (not for `initialize`, which cannot be cancelled).
    async fn time_out(&mut self, now: Instant) {
        let secs = self.config.timeout.map_or(0.0, |t| t.as_secs_f64());
        for (_, request) in self.pending.expired(now) {
            match request.tool.as_deref() {
                Some(tool) if request.method == "tools/call" => {
                    self.stats.record_tool_error(tool, "timeout");
                }
                _ => self.stats.record_error("timeout"),
            }
            log::warn(
                "upstream.timeout",
                &[("method", request.method.clone().into())],
            );
            if request.method != "initialize" {
                let request_id: Value =
                    serde_json::from_slice(&request.raw_id).unwrap_or(Value::Null);
                let cancel = json!({
                    "jsonrpc": "2.0",
                    "method": "notifications/cancelled",
                    "params": {"requestId": request_id, "reason": format!("timed out after {secs} s (envelope proxy --timeout)")},
                });
                self.send_upstream(cancel.to_string().into_bytes());
            }
            if request.internal {
                continue;
            }
            let text = format!(
                "the upstream server did not answer {} within {secs} s (--timeout)",
                request.method
            );
            let answer = message::error_response(&request.raw_id, code::UPSTREAM_TIMEOUT, &text);
            let _ = request.reply.send(answer).await;
        }
    }

    /// The client is gone: answers in flight get [`DRAIN`] to be relayed, then the upstream
    /// is ended and waited for.
    async fn end(mut self) {
        let until = tokio::time::Instant::now() + DRAIN;
        while !self.pending.is_empty() && self.upstream_rx.is_some() {
            let next = tokio::time::timeout_at(until, recv(&mut self.upstream_rx)).await;
            match next {
                Ok(Some(Incoming::Frame(frame))) => self.on_upstream_frame(frame).await,
                _ => break,
            }
        }
        let _ = tokio::time::timeout_at(until, async {
            while self.tasks.join_next().await.is_some() {}
        })
        .await;
        // Dropping the sender ends the upstream; its `Closed` says it is over.
        self.upstream_tx = None;
        if let Some(mut rx) = self.upstream_rx.take() {
            let _ = tokio::time::timeout(Duration::from_secs(5), async {
                while let Some(incoming) = rx.recv().await {
                    if matches!(incoming, Incoming::Closed(_)) {
                        break;
                    }
                }
            })
            .await;
        }
    }
}

/// The answer frame for a `tools/call` result and what shaping did.
fn shape_answer(
    frame: Frame,
    range: std::ops::Range<usize>,
    call: &CallContext,
    settings: &ToolSettings,
    store: &dyn envelope_store::Store,
    indexer: Option<catalog_calls::Indexer>,
) -> Result<(Frame, CallRecord), String> {
    let result = &frame[range.clone()];
    let mut outcome =
        shaping::shape_result(result, call, settings, store).map_err(|e| e.to_string())?;
    let record = CallRecord {
        bytes_in: result.len() as u64,
        bytes_out: outcome.bytes.len() as u64,
        tokens_out: outcome.shaped_tokens.map(|t| t as u64),
        offloaded: outcome.stored.is_some(),
        redactions: outcome.redactions as u64,
        elapsed: Duration::ZERO,
    };
    // What was stored, held for the threads that index it: the redacted copy shaping
    // made (the paging index has it already), or the frame when it was stored as it came.
    let mut held = outcome.stored_copy.take();
    // Unchanged: the frame itself goes on, not a copy (it may be hundreds of MB).
    let answer = if outcome.bytes == result {
        frame
    } else {
        let answer = message::splice(&frame, range.clone(), &outcome.bytes);
        // Stored as it came: the frame, done with, goes to the paging index.
        if let (true, Some(digest)) = (outcome.stored_as_given, outcome.stored) {
            let frame = Held::new(frame, range);
            crate::drill::index::remember_held(&digest, frame.clone());
            held = Some(frame);
        }
        answer
    };
    if let (Some(indexer), Some(digest)) = (indexer, outcome.stored) {
        indexer.stored(digest, held);
    }
    Ok((answer, record))
}

/// The answer to send for a shaped result, counted in the stats (its latency from
/// `started`, the request's arrival); a shaping failure is an error answer (the result
/// cannot be passed on unshaped: it may be over the limit or hold a secret).
fn shaped_answer(
    shaped: Result<(Frame, CallRecord), String>,
    tool: &str,
    raw_id: &[u8],
    stats: &Stats,
    reply: &Outbound,
    started: Instant,
) -> Ready {
    match shaped {
        Ok((answer, mut record)) => {
            record.elapsed = started.elapsed();
            stats.record_call(tool, record);
            Ready::shaped(answer)
        }
        Err(e) => {
            log::error(
                "shaping.failed",
                &[("tool", tool.into()), ("error", e.clone().into())],
            );
            if tool.is_empty() {
                stats.record_error("shaping");
            } else {
                stats.record_tool_error(tool, "shaping");
            }
            let text = format!("the proxy could not shape the result: {e}");
            // The error may quote the result: masked like any message.
            reply.ready(message::error_response(raw_id, code::INTERNAL_ERROR, &text))
        }
    }
}

/// The raw `arguments` of a `tools/call`'s `params`, when it has them.
fn call_arguments(params: &[u8]) -> Option<Vec<u8>> {
    #[derive(Deserialize)]
    struct Arguments<'a> {
        #[serde(borrow)]
        arguments: Option<&'a RawValue>,
    }
    let parsed: Arguments = serde_json::from_slice(params).ok()?;
    Some(parsed.arguments?.get().as_bytes().to_vec())
}

/// The error text for a client's request over `--max-message` (its stand-in's `params`
/// say how big it was).
pub fn oversized_text(params: Option<&[u8]>) -> String {
    let params: Value = params
        .and_then(|p| serde_json::from_slice(p).ok())
        .unwrap_or(Value::Null);
    format!(
        "the request is {} bytes, over the {} bytes a message may have (--max-message): send less at a time",
        params["bytes"], params["max"]
    )
}

/// The id key of `params.requestId` in a `notifications/cancelled`.
fn cancelled_id(frame: &[u8], message: &Message) -> Option<String> {
    let params: Value = serde_json::from_slice(&frame[message.params.clone()?]).ok()?;
    id_key(params.get("requestId")?.to_string().as_bytes())
}

/// The revision a request's `params._meta` names (2026-07-28 and later).
fn request_revision(params: &[u8]) -> Option<String> {
    let meta = serde_json::from_slice::<MetaParams>(params).ok()?.meta?;
    let meta: Value = serde_json::from_str(meta.get()).ok()?;
    meta.get(PROTOCOL_VERSION_META_KEY)?
        .as_str()
        .map(str::to_string)
}

fn is_resource_list(method: &str) -> bool {
    matches!(method, "resources/list" | "resources/templates/list")
}

/// Whether an error answer is "method not found" (-32601).
fn method_not_found(frame: &[u8], message: &Message) -> bool {
    let Some(range) = message.error.clone() else {
        return false;
    };
    serde_json::from_slice::<Value>(&frame[range])
        .ok()
        .and_then(|e| e.get("code").and_then(Value::as_i64))
        == Some(code::METHOD_NOT_FOUND)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::revision::Revision;

    /// Waits for the paging index of `digest` to be built (by a background thread).
    fn indexed_soon(digest: &envelope_store::Digest) -> bool {
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(60) {
            if crate::drill::index::kept(digest).is_some() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        false
    }

    /// A large result (over the 8 MiB the index copies) is indexed when it is stored, from
    /// the bytes stored, whether shaping stored the relay's frame as it came (handed over
    /// once the answer is spliced) or a redacted copy of it (handed over by shaping).
    #[test]
    fn a_large_stored_result_is_indexed_when_stored_without_a_copy() {
        let dir = tempfile::tempdir().unwrap();
        let store = envelope_store::FileStore::new(dir.path());
        let call = CallContext::new("cat", None, Revision::V2025_06_18);
        let settings = ToolSettings::default();
        for secret in [false, true] {
            let mut text: String = (0..900_000).map(|i| format!("line {i}\n")).collect();
            if secret {
                text.push_str("GITHUB_TOKEN=ghp_0123456789abcdefghijABCDEFGHIJ012345\n");
            }
            let result = serde_json::json!({"content": [{"type": "text", "text": text}]});
            let result = serde_json::to_vec(&result).unwrap();
            assert!(result.len() > 9 << 20);
            let frame = [
                br#"{"jsonrpc":"2.0","id":7,"result":"#.as_slice(),
                &result,
                b"}",
            ]
            .concat();
            let range = 33..33 + result.len();
            assert_eq!(&frame[range.clone()], result.as_slice());
            let outcome = shaping::shape_result(&result, &call, &settings, &store).unwrap();
            assert_eq!(outcome.stored_as_given, !secret);
            let digest = outcome.stored.unwrap();
            assert!(crate::drill::index::kept(&digest).is_none() || secret);
            let (answer, _) = shape_answer(frame, range, &call, &settings, &store, None).unwrap();
            assert!(answer.len() < 20_000);
            assert!(indexed_soon(&digest), "secret: {secret}");
        }
    }
}
