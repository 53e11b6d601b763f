//! Clients over Streamable HTTP (`--listen`): each MCP session (`Mcp-Session-Id`) becomes a
//! [`Link`] handed to the relay.
//!
//! One endpoint, `/mcp`:
//!
//! - `POST` carries one JSON-RPC message. A notification or a response is passed on and
//!   answered `202 Accepted`. A request waits for what the relay sends for it: when the first
//!   thing is its response, the answer is that response as `application/json`; when other
//!   messages come first (progress, logging, a server-to-client request), the answer is an
//!   SSE stream (`text/event-stream`) of those messages ending with the response. An
//!   `initialize` without `Mcp-Session-Id` starts a session: a new unguessable id, a new
//!   [`Link`] given to the [`SessionStarter`] (the relay, one upstream per session) with the
//!   token that opened it ([`Opened`]). Every later request of the session must present
//!   that same token (403 otherwise): a session is its opener's.
//! - A request without `Mcp-Session-Id` whose `MCP-Protocol-Version` is 2026-07-28 or later
//!   (stateless: no `initialize`, no session ids) runs in a session of its own, not
//!   announced to the client and ended once the request is answered
//!   (`end_when_answered`); its upstream with it.
//! - `GET` opens the session's stream for messages that belong to no open request.
//! - `DELETE` ends the session: the relay reads [`Incoming::Closed`]. So does a session
//!   left idle (no request in flight, no `GET` stream, no message) for
//!   [`ListenOptions::idle_timeout`].
//!
//! A request never hangs: when its session ends first it gets a JSON-RPC error; when the
//! client cancels it (`notifications/cancelled`) its `POST` ends.
//!
//! Where a message the relay sends goes, in order: a response to the `POST` that carried its
//! request; a progress notification to the `POST` whose request holds its progress token;
//! anything else to the one open request that accepts SSE when there is exactly one (the
//! upstream, over stdio, cannot say which request a log line or a sampling request belongs
//! to; with a single request in flight it can only be that one, and the client then reads it
//! in order, before the response), else to the `GET` stream, else to any open request that
//! accepts SSE, else it waits (at most [`GET_BACKLOG`] messages) for a `GET` stream.
//!
//! Safety (the spec's DNS-rebinding rules, [`super::http_guard`]): the server binds loopback
//! unless tokens are set ([`ListenError::NeedsToken`]); a request whose `Host` is not a
//! loopback name gets 421 when bound to loopback; a request with a foreign `Origin` gets 403
//! (allowed: none, or `http(s)://localhost|127.0.0.1|[::1]` with any port); with tokens, a
//! request without `Authorization: Bearer <one of them>` (scheme in any case) gets 401; two
//! `Host` or two `Origin` headers get 400; an absolute-form target's authority is checked
//! like `Host`. Tokens under 16 characters are refused at [`bind`]
//! ([`ListenError::WeakToken`]).
//!
//! Limits ([`Limits`], each with a default): a connection must send its request headers within
//! [`Limits::header_read_timeout`] (else it is closed: slowloris) and a `POST` body within
//! [`Limits::body_read_timeout`] (408); beyond [`Limits::max_connections`] connections open at
//! once a new one is answered 503 and closed; beyond [`Limits::max_sessions_per_client`]
//! sessions of one client address an `initialize` gets 429; at most [`MAX_SESSIONS`] sessions
//! in all (503).
//!
//! JSON-RPC batches (2025-03-26 only) are split: each message reaches the relay on its own,
//! and the `POST` is answered with the array of the responses (see `batch`).
//!
//! With [`Server::metrics`], `GET /metrics` gives the counters in the Prometheus text format
//! ([`Stats::to_prometheus`]), behind the same guard as `/mcp`.
//!
//! Not supported, on purpose: resuming an SSE stream with `Last-Event-ID` (streams carry no
//! event ids), more than one `GET` stream per session at once (409).

use std::collections::{HashMap, VecDeque};
use std::convert::Infallible;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Either, Full, Limited};
use hyper::body::{Body, Frame as BodyFrame};
use hyper::header::{self, HeaderMap, HeaderValue};
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;

use super::http_common::{
    INTERNAL_ERROR, INVALID_REQUEST, Kind, PARSE_ERROR, SESSION_HEADER, VERSION_HEADER,
    error_frame, id_key, peek, sse_event,
};
use super::http_guard::{Guard, check_token};
use super::{Frame, Incoming, Link};
use crate::stats::{PROMETHEUS_CONTENT_TYPE, Stats};

/// Called with the [`Link`] of each new session and who opened it; it must return at once
/// (spawn the relay).
pub type SessionStarter = Arc<dyn Fn(Link, Opened) + Send + Sync>;

/// Who opened a session.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Opened {
    /// The bearer token its `initialize` (or stateless request) presented; `None` when the
    /// server asks for none.
    pub token: Option<String>,
}

/// The environment variable holding the bearer token clients must present.
pub const TOKEN_ENV: &str = "ENVELOPE_TOKEN";
/// The path of the MCP endpoint.
pub const ENDPOINT: &str = "/mcp";
/// The path of the Prometheus metrics ([`Server::metrics`]).
pub const METRICS_PATH: &str = "/metrics";
/// The largest `POST` body accepted (413 above it).
pub const MAX_BODY: usize = 32 * 1024 * 1024;
/// The most sessions open at once (503 above it).
pub const MAX_SESSIONS: usize = 1024;
/// Messages kept for a session's `GET` stream while none is open, or while its client
/// reads slower than they come; older ones are dropped (and logged) beyond it.
pub const GET_BACKLOG: usize = 256;

/// The first revision without `initialize` or sessions.
pub const STATELESS_REVISION: &str = "2026-07-28";

/// How long a session may sit unused before it is ended: 30 minutes.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(30 * 60);

/// How long a connection has to send a request's headers (from its opening, or from the end
/// of its previous answer): 10 seconds.
pub const DEFAULT_HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a request has to send its whole body once its headers are in: 60 seconds.
pub const DEFAULT_BODY_READ_TIMEOUT: Duration = Duration::from_secs(60);
/// The most connections served at once: 512 (below the usual limit of 1,024 file
/// descriptors, with room for upstreams and files).
pub const DEFAULT_MAX_CONNECTIONS: usize = 512;
/// The most sessions one client address may hold open at once: 16.
pub const DEFAULT_MAX_SESSIONS_PER_CLIENT: usize = 16;

/// What one client may hold of an HTTP server of ours (the MCP endpoint and `serve`'s HTTP
/// view): connections, time, sessions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Limits {
    /// A connection that has not sent a request's headers this long after it opened (or
    /// after its previous answer ended) is closed: a slow client cannot hold a connection by
    /// sending its headers a byte at a time. Default [`DEFAULT_HEADER_READ_TIMEOUT`].
    pub header_read_timeout: Duration,
    /// A request whose body has not all arrived this long after its headers gets 408 and
    /// its connection is closed. Default [`DEFAULT_BODY_READ_TIMEOUT`].
    pub body_read_timeout: Duration,
    /// Connections served at once; a connection beyond them is answered 503 at once and
    /// closed. Default [`DEFAULT_MAX_CONNECTIONS`].
    pub max_connections: usize,
    /// MCP sessions (stateless requests included, while in flight) one client IP address
    /// may hold; an `initialize` beyond them gets 429. Default
    /// [`DEFAULT_MAX_SESSIONS_PER_CLIENT`]. Not used by `serve`'s HTTP view (no sessions).
    pub max_sessions_per_client: usize,
    /// Whether the cap above also applies to loopback clients. By default it does not: every
    /// local client shares one address (an Inspector, a conformance run and an editor would
    /// share 16 sessions), and what is on this machine is bounded by the sessions in all
    /// ([`MAX_SESSIONS`]). Set by [`Limits::max_sessions_per_client`]: a cap given
    /// explicitly applies to every client.
    pub cap_local_clients: bool,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            header_read_timeout: DEFAULT_HEADER_READ_TIMEOUT,
            body_read_timeout: DEFAULT_BODY_READ_TIMEOUT,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            max_sessions_per_client: DEFAULT_MAX_SESSIONS_PER_CLIENT,
            cap_local_clients: false,
        }
    }
}

impl Limits {
    /// These limits with `header_read_timeout`.
    #[must_use]
    pub fn header_read_timeout(mut self, timeout: Duration) -> Self {
        self.header_read_timeout = timeout;
        self
    }

    /// These limits with `body_read_timeout`.
    #[must_use]
    pub fn body_read_timeout(mut self, timeout: Duration) -> Self {
        self.body_read_timeout = timeout;
        self
    }

    /// These limits with `max_connections`.
    #[must_use]
    pub fn max_connections(mut self, max: usize) -> Self {
        self.max_connections = max;
        self
    }

    /// These limits with `max_sessions_per_client`, for every client, local ones too.
    #[must_use]
    pub fn max_sessions_per_client(mut self, max: usize) -> Self {
        self.max_sessions_per_client = max;
        self.cap_local_clients = true;
        self
    }
}

/// The address of the client of a request, in its extensions (set by
/// [`serve_connections`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClientAddr(pub SocketAddr);

/// Where to listen, and the tokens clients must present.
#[derive(Clone)]
pub struct ListenOptions {
    /// The address to bind (`127.0.0.1:8080`).
    pub addr: SocketAddr,
    /// The bearer tokens accepted (any one of them); empty accepts any client that passes
    /// the Host and Origin checks.
    pub tokens: Vec<String>,
    /// A session with no request in flight, no `GET` stream open and no request for this
    /// long is ended (its upstream with it): a client that vanished without `DELETE` leaves
    /// no upstream running forever.
    pub idle_timeout: Duration,
    /// Timeouts and caps against clients that hold resources.
    pub limits: Limits,
}

impl std::fmt::Debug for ListenOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ListenOptions")
            .field("addr", &self.addr)
            .field("tokens", &self.tokens.len())
            .field("idle_timeout", &self.idle_timeout)
            .field("limits", &self.limits)
            .finish()
    }
}

impl ListenOptions {
    /// `addr`, with the token from [`TOKEN_ENV`] when it is set and not empty.
    /// The idle timeout is [`DEFAULT_IDLE_TIMEOUT`], the limits [`Limits::default`]. A token
    /// too short is refused by [`bind`].
    pub fn from_env(addr: SocketAddr) -> Self {
        let tokens = std::env::var(TOKEN_ENV)
            .ok()
            .filter(|t| !t.is_empty())
            .into_iter()
            .collect();
        ListenOptions {
            addr,
            tokens,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            limits: Limits::default(),
        }
    }
}

/// Why the server cannot start.
#[derive(Debug, thiserror::Error)]
pub enum ListenError {
    /// A non-loopback address without a token.
    #[error(
        "refusing to listen on {0}: it is not a loopback address, so any host on the network could use the proxy; set {TOKEN_ENV} to a secret (clients then send `Authorization: Bearer <secret>`) or listen on 127.0.0.1"
    )]
    NeedsToken(SocketAddr),
    /// A token under [`super::http_guard::MIN_TOKEN_LEN`] characters, or one a header cannot
    /// carry.
    #[error(
        "refusing to start: the bearer token ({TOKEN_ENV}, or token #{index}) is refused: {why}"
    )]
    WeakToken {
        /// Which token, from 1.
        index: usize,
        /// Why (never the token itself).
        why: super::http_guard::WeakToken,
    },
    /// The address cannot be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
}

/// A bound Streamable HTTP server, not yet accepting.
pub struct Server {
    listener: TcpListener,
    state: Arc<State>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("listener", &self.listener)
            .finish_non_exhaustive()
    }
}

/// Binds the server; every new session's [`Link`] goes to `starter`.
///
/// # Errors
///
/// [`ListenError::NeedsToken`] for a non-loopback address without a token,
/// [`ListenError::WeakToken`] for a token under 16 characters, and [`ListenError::Bind`]
/// when the address cannot be bound.
pub async fn bind(options: ListenOptions, starter: SessionStarter) -> Result<Server, ListenError> {
    for (at, token) in options.tokens.iter().enumerate() {
        check_token(token).map_err(|why| ListenError::WeakToken { index: at + 1, why })?;
    }
    let loopback = options.addr.ip().is_loopback();
    if !loopback && options.tokens.is_empty() {
        return Err(ListenError::NeedsToken(options.addr));
    }
    let listener = TcpListener::bind(options.addr)
        .await
        .map_err(|source| ListenError::Bind {
            addr: options.addr,
            source,
        })?;
    let state = Arc::new(State {
        guard: Guard {
            tokens: options.tokens,
            any_host: !loopback,
        },
        idle_timeout: options.idle_timeout,
        limits: options.limits,
        sessions: Arc::default(),
        starter,
        metrics: None,
    });
    Ok(Server { listener, state })
}

/// Binds and serves until the process ends: [`bind`] then [`Server::run`].
///
/// # Errors
///
/// As [`bind`].
pub async fn serve(options: ListenOptions, starter: SessionStarter) -> Result<(), ListenError> {
    bind(options, starter).await?.run().await;
    Ok(())
}

impl Server {
    /// The bound address (with the port chosen when `:0` was asked for).
    ///
    /// # Errors
    ///
    /// When the socket cannot say.
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// `GET /metrics` shows `stats` in the Prometheus text format
    /// ([`Stats::to_prometheus`]), behind the same guard as `/mcp` (with tokens, a request
    /// must present one). Without it `/metrics` is 404.
    #[must_use]
    pub fn metrics(mut self, stats: Arc<Stats>) -> Self {
        if let Some(state) = Arc::get_mut(&mut self.state) {
            state.metrics = Some(stats);
        }
        self
    }

    /// Accepts connections until the task is dropped; each connection is served on a task of
    /// its own, several sessions at once.
    pub async fn run(self) {
        let _reaper = AbortOnDrop(tokio::spawn(end_idle_sessions(self.state.clone())));
        let state = self.state;
        let limits = state.limits;
        let busy = error_frame(
            &Value::Null,
            INTERNAL_ERROR,
            "too many connections: try again later",
        );
        serve_connections(self.listener, limits, busy.into(), move |request| {
            let state = state.clone();
            async move { handle(&state, request).await }
        })
        .await;
    }
}

/// Connections being answered 503 at once (beyond this many, closed without an answer).
const MAX_REFUSING: usize = 64;

/// Accepts connections on `listener` until the task is dropped, each served (HTTP/1.1) on a
/// task of its own by `handle`: the accept loop of every HTTP server of ours. Each request
/// carries its [`ClientAddr`]. With `limits`: headers not in within the header timeout close
/// the connection; beyond the connection cap a new connection is answered 503 with the JSON
/// body `busy` and closed.
pub async fn serve_connections<H, F, B>(
    listener: TcpListener,
    limits: Limits,
    busy: Bytes,
    handle: H,
) where
    H: Fn(Request<hyper::body::Incoming>) -> F + Clone + Send + Sync + 'static,
    F: std::future::Future<Output = Response<B>> + Send + 'static,
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let open = Arc::new(AtomicUsize::new(0));
    let refusing = Arc::new(AtomicUsize::new(0));
    loop {
        let (stream, peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(error) => {
                // Out of file descriptors and the like: wait instead of spinning.
                eprintln!("envelope: http: accept failed: {error}");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        if open.load(Ordering::SeqCst) >= limits.max_connections {
            if refusing.fetch_add(1, Ordering::SeqCst) < MAX_REFUSING {
                let refusing = Counted(refusing.clone());
                let busy = busy.clone();
                tokio::spawn(async move {
                    refuse_busy(stream, &busy).await;
                    drop(refusing);
                });
            } else {
                refusing.fetch_sub(1, Ordering::SeqCst);
            }
            continue;
        }
        open.fetch_add(1, Ordering::SeqCst);
        let counted = Counted(open.clone());
        let handle = handle.clone();
        tokio::spawn(async move {
            let service = service_fn(move |mut request: Request<hyper::body::Incoming>| {
                request.extensions_mut().insert(ClientAddr(peer));
                let answer = handle(request);
                async move { Ok::<_, Infallible>(answer.await) }
            });
            // A client that goes away mid-request, or is too slow with its headers, is no
            // error of ours.
            let _ = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(limits.header_read_timeout)
                .serve_connection(TokioIo::new(stream), service)
                .await;
            drop(counted);
        });
    }
}

/// One unit of a count of open things, given back when dropped.
struct Counted(Arc<AtomicUsize>);

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Answers a connection beyond the cap with 503 and closes it; what the client sent is read
/// (a second at most) before closing, so that the close does not reset the answer away.
async fn refuse_busy(mut stream: TcpStream, body: &[u8]) {
    let head = format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\ncontent-length: {}\r\nretry-after: 1\r\nconnection: close\r\n\r\n",
        body.len()
    );
    let _ = tokio::time::timeout(Duration::from_secs(1), async {
        stream.write_all(head.as_bytes()).await?;
        stream.write_all(body).await?;
        stream.shutdown().await?;
        let mut sink = [0u8; 4096];
        while stream.read(&mut sink).await? > 0 {}
        Ok::<_, std::io::Error>(())
    })
    .await;
}

/// Ends a task when dropped (the idle-session reaper, with the server).
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Every so often, ends the sessions idle for longer than the timeout.
async fn end_idle_sessions(state: Arc<State>) {
    let every = (state.idle_timeout / 4).clamp(Duration::from_millis(10), Duration::from_secs(60));
    loop {
        tokio::time::sleep(every).await;
        let now = Instant::now();
        let idle: Vec<Arc<Session>> = {
            let mut sessions = state.sessions.lock().unwrap();
            let ids: Vec<String> = sessions
                .values()
                .filter(|session| session.idle_since(now) > state.idle_timeout)
                .map(|session| session.id.clone())
                .collect();
            ids.iter().filter_map(|id| sessions.remove(id)).collect()
        };
        for session in idle {
            let reason = format!(
                "the session was idle for {} s and has been ended",
                state.idle_timeout.as_secs()
            );
            let _ = session
                .to_relay
                .send(Incoming::Closed(reason.clone()))
                .await;
            session.end(&reason);
        }
    }
}

struct State {
    guard: Guard,
    idle_timeout: Duration,
    limits: Limits,
    sessions: Arc<Mutex<HashMap<String, Arc<Session>>>>,
    starter: SessionStarter,
    /// The counters `GET /metrics` shows ([`Server::metrics`]); none: 404.
    metrics: Option<Arc<Stats>>,
}

/// One MCP session: the way to the relay and where the relay's messages go.
struct Session {
    id: String,
    /// The token that opened it: every request of the session must present it.
    token: Option<String>,
    /// The IP address of the client that opened it (`None`: unknown).
    client: Option<IpAddr>,
    to_relay: mpsc::Sender<Incoming>,
    routes: Mutex<Routes>,
    /// When the client last sent anything.
    last_seen: Mutex<Instant>,
}

#[derive(Default)]
struct Routes {
    /// Requests waiting for their response, by id key.
    pending: HashMap<String, Pending>,
    /// Progress token key to the id key of the request that holds it.
    by_progress: HashMap<String, String>,
    get_stream: Option<mpsc::Sender<Frame>>,
    /// Messages for a `GET` stream that is not open (or is full).
    backlog: VecDeque<Frame>,
    ended: bool,
}

struct Pending {
    id: Value,
    /// The client accepts an SSE answer: other messages may go to this request.
    sse: bool,
    progress: Option<String>,
    to_post: mpsc::UnboundedSender<Routed>,
}

/// A message routed to a `POST`: `last` for the response, which ends it.
struct Routed {
    frame: Frame,
    last: bool,
}

type ResponseBody = Either<Full<Bytes>, SseBody>;

async fn handle(state: &State, request: Request<hyper::body::Incoming>) -> Response<ResponseBody> {
    let token = match state.guard.check_request(&request) {
        Ok(token) => token.map(str::to_owned),
        Err(refused) => return refusal_response(refused),
    };
    if request.uri().path() == METRICS_PATH
        && let Some(stats) = &state.metrics
    {
        return metrics_response(request.method(), stats);
    }
    if request.uri().path() != ENDPOINT {
        return http_error(StatusCode::NOT_FOUND, "not found: the MCP endpoint is /mcp");
    }
    if let Some(version) = header_str(request.headers(), VERSION_HEADER)
        && !is_revision(version)
    {
        return http_error(
            StatusCode::BAD_REQUEST,
            &format!("bad request: MCP-Protocol-Version {version:?} is not a protocol revision"),
        );
    }
    match *request.method() {
        Method::POST => post(state, request, token).await,
        Method::GET => get(state, request.headers(), token.as_deref()),
        Method::DELETE => delete(state, request.headers(), token.as_deref()).await,
        _ => {
            let mut response = http_error(
                StatusCode::METHOD_NOT_ALLOWED,
                "method not allowed: use POST, GET or DELETE",
            );
            response
                .headers_mut()
                .insert(header::ALLOW, HeaderValue::from_static("GET, POST, DELETE"));
            response
        }
    }
}

/// `GET /metrics`: the counters in the Prometheus text format (405 for other methods).
fn metrics_response(method: &Method, stats: &Stats) -> Response<ResponseBody> {
    if method != Method::GET {
        let mut response = http_error(
            StatusCode::METHOD_NOT_ALLOWED,
            "method not allowed: use GET",
        );
        response
            .headers_mut()
            .insert(header::ALLOW, HeaderValue::from_static("GET"));
        return response;
    }
    let mut response = Response::new(Either::Left(Full::new(Bytes::from(stats.to_prometheus()))));
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(PROMETHEUS_CONTENT_TYPE),
    );
    response
}

/// The guard's refusal as a response (401 with `WWW-Authenticate: Bearer`).
fn refusal_response(refused: super::http_guard::Refused) -> Response<ResponseBody> {
    let mut response = http_error(refused.status, &refused.message);
    if refused.status == StatusCode::UNAUTHORIZED {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    }
    response
}

async fn post(
    state: &State,
    request: Request<hyper::body::Incoming>,
    token: Option<String>,
) -> Response<ResponseBody> {
    let headers = request.headers().clone();
    let content_type = header_str(&headers, "content-type").unwrap_or("");
    if !content_type.starts_with("application/json") {
        return http_error(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported media type: POST a JSON-RPC message as application/json",
        );
    }
    let accept = header_str(&headers, "accept").unwrap_or("");
    let accepts_sse = accept.contains("text/event-stream") || accept.contains("*/*");
    let accepts_json = accept.contains("application/json") || accept.contains("*/*");
    if !accepts_sse && !accepts_json {
        return http_error(
            StatusCode::NOT_ACCEPTABLE,
            "not acceptable: accept application/json and text/event-stream",
        );
    }
    let client = request
        .extensions()
        .get::<ClientAddr>()
        .map(|addr| addr.0.ip().to_canonical());
    let collected = tokio::time::timeout(
        state.limits.body_read_timeout,
        Limited::new(request.into_body(), MAX_BODY).collect(),
    )
    .await;
    let body = match collected {
        Ok(Ok(body)) => body.to_bytes().to_vec(),
        Err(_) => return body_timeout(state.limits.body_read_timeout),
        Ok(Err(_)) => {
            return http_error(
                StatusCode::PAYLOAD_TOO_LARGE,
                &format!("the message is larger than {MAX_BODY} bytes, or was cut off"),
            );
        }
    };
    if body.trim_ascii_start().starts_with(b"[") {
        return batch(state, &headers, &body, token.as_deref()).await;
    }
    let message = match peek(&body) {
        Ok(message) => message,
        Err(error) => return rpc_error(StatusCode::BAD_REQUEST, PARSE_ERROR, &error.to_string()),
    };
    // A stateless request (2026-07-28) brings no session id and gets none back.
    let stateless = header_str(&headers, SESSION_HEADER).is_none()
        && message.kind == Kind::Request
        && header_str(&headers, VERSION_HEADER)
            .is_some_and(|v| is_revision(v) && v >= STATELESS_REVISION);
    let session = match header_str(&headers, SESSION_HEADER) {
        Some(_) => match session_of(state, &headers, token.as_deref()) {
            Ok(session) => session,
            Err(refusal) => return refusal.response(),
        },
        None if stateless
            || message.kind == Kind::Request && message.method.as_deref() == Some("initialize") =>
        {
            match start_session(state, token, client) {
                Ok(session) => session,
                Err(Refusal(status, text)) => {
                    let id = message.id.as_ref().unwrap_or(&Value::Null);
                    return with_body(status, error_frame(id, INTERNAL_ERROR, &text));
                }
            }
        }
        None => {
            return http_error(
                StatusCode::BAD_REQUEST,
                "bad request: the Mcp-Session-Id header is required (initialize first)",
            );
        }
    };
    session.touch();
    let mut response = match message.kind {
        Kind::Notification | Kind::Response => {
            if session.to_relay.send(Incoming::Frame(body)).await.is_err() {
                return http_error(StatusCode::NOT_FOUND, "session ended: initialize again");
            }
            // The client gave up on that request: its POST is answered no more (a late
            // response is the relay's to drop).
            if let Some(id) = &message.cancelled {
                session.forget(id);
            }
            empty(StatusCode::ACCEPTED)
        }
        Kind::Request => {
            let id = message.id.unwrap_or(Value::Null);
            let Some(answers) = session.expect(&id, accepts_sse, message.progress_token.as_ref())
            else {
                return rpc_error(
                    StatusCode::BAD_REQUEST,
                    INVALID_REQUEST,
                    &format!("a request with id {id} is already in flight in this session"),
                );
            };
            if session.to_relay.send(Incoming::Frame(body)).await.is_err() {
                session.forget(&id);
                return http_error(StatusCode::NOT_FOUND, "session ended: initialize again");
            }
            if stateless {
                tokio::spawn(end_when_answered(
                    Arc::downgrade(&state.sessions),
                    session.clone(),
                ));
            }
            answer(answers, &id, accepts_json, accepts_sse).await
        }
    };
    if stateless {
        return response;
    }
    if let Ok(value) = HeaderValue::from_str(&session.id) {
        response.headers_mut().insert(SESSION_HEADER, value);
    }
    response
}

/// A JSON-RPC batch (2025-03-26) in a session: each message goes to the relay on its own;
/// the answer is the array of the requests' responses, in the batch's order (202 when it
/// holds no request). Messages the relay sends meanwhile (progress, logs) go to the `GET`
/// stream, not to this answer. `initialize` may not be in a batch.
async fn batch(
    state: &State,
    headers: &HeaderMap,
    body: &[u8],
    token: Option<&str>,
) -> Response<ResponseBody> {
    let elements: Vec<&serde_json::value::RawValue> = match serde_json::from_slice(body) {
        Ok(elements) => elements,
        Err(error) => {
            return rpc_error(StatusCode::BAD_REQUEST, PARSE_ERROR, &error.to_string());
        }
    };
    if elements.is_empty() {
        return rpc_error(
            StatusCode::BAD_REQUEST,
            INVALID_REQUEST,
            "an empty batch is not a request",
        );
    }
    if elements.len() > crate::session::MAX_BATCH {
        let text = format!(
            "a batch of {} messages is over the limit of {}: send fewer at a time",
            elements.len(),
            crate::session::MAX_BATCH
        );
        return rpc_error(StatusCode::BAD_REQUEST, INVALID_REQUEST, &text);
    }
    let mut messages = Vec::with_capacity(elements.len());
    for element in &elements {
        let frame = element.get().as_bytes();
        match peek(frame) {
            Ok(message) if message.method.as_deref() == Some("initialize") => {
                return rpc_error(
                    StatusCode::BAD_REQUEST,
                    INVALID_REQUEST,
                    "initialize must not be part of a batch: send it alone",
                );
            }
            Ok(message) => messages.push((frame.to_vec(), message)),
            Err(error) => {
                let text = format!("a batch element: {error}");
                return rpc_error(StatusCode::BAD_REQUEST, INVALID_REQUEST, &text);
            }
        }
    }
    let session = match session_of(state, headers, token) {
        Ok(session) => session,
        Err(refusal) => return refusal.response(),
    };
    session.touch();
    let mut waiting = Vec::new();
    for (_, message) in &messages {
        if message.kind != Kind::Request {
            continue;
        }
        let id = message.id.clone().unwrap_or(Value::Null);
        match session.expect(&id, false, message.progress_token.as_ref()) {
            Some(answers) => waiting.push((id, answers)),
            None => {
                for (id, _) in &waiting {
                    session.forget(id);
                }
                let text = format!("a request with id {id} is already in flight in this session");
                return rpc_error(StatusCode::BAD_REQUEST, INVALID_REQUEST, &text);
            }
        }
    }
    for (frame, message) in messages {
        if session.to_relay.send(Incoming::Frame(frame)).await.is_err() {
            return http_error(StatusCode::NOT_FOUND, "session ended: initialize again");
        }
        if let Some(id) = &message.cancelled {
            session.forget(id);
        }
    }
    let mut response = if waiting.is_empty() {
        empty(StatusCode::ACCEPTED)
    } else {
        let mut array = b"[".to_vec();
        for (i, (id, mut answers)) in waiting.into_iter().enumerate() {
            let routed = answers.recv().await.unwrap_or_else(|| Routed {
                frame: error_frame(&id, INTERNAL_ERROR, "the request was cancelled"),
                last: true,
            });
            if i > 0 {
                array.push(b',');
            }
            array.extend_from_slice(&routed.frame);
        }
        array.push(b']');
        let mut response = Response::new(Either::Left(Full::new(Bytes::from(array))));
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        response
    };
    if let Ok(value) = HeaderValue::from_str(&session.id) {
        response.headers_mut().insert(SESSION_HEADER, value);
    }
    response
}

/// The answer to a request: JSON when its response comes first, else an SSE stream.
async fn answer(
    mut answers: mpsc::UnboundedReceiver<Routed>,
    id: &Value,
    accepts_json: bool,
    accepts_sse: bool,
) -> Response<ResponseBody> {
    // The session answers a pending request before letting it go (Session::end), unless the
    // client cancelled it (Session::forget).
    let first = answers.recv().await.unwrap_or_else(|| Routed {
        frame: error_frame(id, INTERNAL_ERROR, "the request was cancelled"),
        last: true,
    });
    if first.last && (accepts_json || !accepts_sse) {
        let mut response = Response::new(Either::Left(Full::new(Bytes::from(first.frame))));
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        return response;
    }
    let rest = if first.last { None } else { Some(answers) };
    sse_response(SseBody {
        first: Some(first.frame),
        source: Source::Post(rest),
    })
}

fn get(state: &State, headers: &HeaderMap, token: Option<&str>) -> Response<ResponseBody> {
    let session = match session_of(state, headers, token) {
        Ok(session) => session,
        Err(refusal) => return refusal.response(),
    };
    let accept = header_str(headers, "accept").unwrap_or("");
    if !accept.contains("text/event-stream") && !accept.contains("*/*") {
        return http_error(
            StatusCode::NOT_ACCEPTABLE,
            "not acceptable: the GET stream is text/event-stream",
        );
    }
    session.touch();
    let mut routes = session.routes.lock().unwrap();
    if routes.ended {
        return http_error(StatusCode::NOT_FOUND, "session ended: initialize again");
    }
    if routes
        .get_stream
        .as_ref()
        .is_some_and(|open| !open.is_closed())
    {
        return http_error(
            StatusCode::CONFLICT,
            "conflict: this session's GET stream is already open",
        );
    }
    let (sender, receiver) = mpsc::channel(GET_BACKLOG);
    while let Some(frame) = routes.backlog.pop_front() {
        // The backlog is at most GET_BACKLOG long: it fits.
        let _ = sender.try_send(frame);
    }
    routes.get_stream = Some(sender);
    drop(routes);
    let mut response = sse_response(SseBody {
        first: None,
        source: Source::Get(receiver),
    });
    if let Ok(value) = HeaderValue::from_str(&session.id) {
        response.headers_mut().insert(SESSION_HEADER, value);
    }
    response
}

async fn delete(state: &State, headers: &HeaderMap, token: Option<&str>) -> Response<ResponseBody> {
    let session = match session_of(state, headers, token) {
        Ok(session) => session,
        Err(refusal) => return refusal.response(),
    };
    state.sessions.lock().unwrap().remove(&session.id);
    let _ = session
        .to_relay
        .send(Incoming::Closed(
            "the client ended the session (HTTP DELETE)".into(),
        ))
        .await;
    session.end("the client ended the session");
    empty(StatusCode::OK)
}

/// The session a request names, when the request's token is the one that opened it.
fn session_of(
    state: &State,
    headers: &HeaderMap,
    token: Option<&str>,
) -> Result<Arc<Session>, Refusal> {
    let Some(id) = header_str(headers, SESSION_HEADER) else {
        return Err(Refusal(
            StatusCode::BAD_REQUEST,
            "bad request: the Mcp-Session-Id header is required".into(),
        ));
    };
    let session = state
        .sessions
        .lock()
        .unwrap()
        .get(id)
        .cloned()
        .ok_or_else(|| {
            Refusal(
                StatusCode::NOT_FOUND,
                "session not found: initialize again".into(),
            )
        })?;
    if session.token.as_deref() != token {
        return Err(Refusal(
            StatusCode::FORBIDDEN,
            "forbidden: this session was opened with another token".into(),
        ));
    }
    Ok(session)
}

/// A new session: its id, its [`Link`] handed to the starter, and the task routing what the
/// relay sends. The session is forgotten when the relay drops its sender.
fn start_session(
    state: &State,
    token: Option<String>,
    client: Option<IpAddr>,
) -> Result<Arc<Session>, Refusal> {
    let id = new_session_id().map_err(|error| {
        let message = format!("no randomness for a session id: {error}");
        Refusal(StatusCode::INTERNAL_SERVER_ERROR, message)
    })?;
    let (to_relay, inbound) = mpsc::channel(64);
    let (outbound, mut from_relay) = mpsc::channel::<Frame>(64);
    let session = Arc::new(Session {
        id: id.clone(),
        token: token.clone(),
        client,
        to_relay,
        routes: Mutex::default(),
        last_seen: Mutex::new(Instant::now()),
    });
    {
        let mut sessions = state.sessions.lock().unwrap();
        if sessions.len() >= MAX_SESSIONS {
            return Err(Refusal(
                StatusCode::SERVICE_UNAVAILABLE,
                "too many sessions: end one (DELETE) and try again".into(),
            ));
        }
        let max = state.limits.max_sessions_per_client;
        let capped = client.is_some_and(|ip| state.limits.cap_local_clients || !ip.is_loopback());
        if capped && sessions.values().filter(|s| s.client == client).count() >= max {
            return Err(Refusal(
                StatusCode::TOO_MANY_REQUESTS,
                format!(
                    "too many sessions from this client address (at most {max}): end one (DELETE) and try again"
                ),
            ));
        }
        sessions.insert(id, session.clone());
    }
    (state.starter)(Link { inbound, outbound }, Opened { token });
    let routed = session.clone();
    // Weak: a session's task must not keep the server's map alive.
    let sessions = Arc::downgrade(&state.sessions);
    tokio::spawn(async move {
        while let Some(frame) = from_relay.recv().await {
            routed.route(frame);
        }
        if let Some(sessions) = sessions.upgrade() {
            sessions.lock().unwrap().remove(&routed.id);
        }
        routed.end("the session ended (the relay stopped)");
    });
    Ok(session)
}

/// Ends the one-request session of a stateless request once its response is routed (the
/// `POST` may still be streaming it out: that needs the session no more), so that its
/// upstream does not outlive it. Checked every 50 ms: the session's routes have no waker to
/// await, and the check costs a lock.
async fn end_when_answered(
    sessions: std::sync::Weak<Mutex<HashMap<String, Arc<Session>>>>,
    session: Arc<Session>,
) {
    loop {
        {
            let routes = session.routes.lock().unwrap();
            if routes.pending.is_empty() || routes.ended {
                break;
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    if let Some(sessions) = sessions.upgrade() {
        sessions.lock().unwrap().remove(&session.id);
    }
    let _ = session
        .to_relay
        .send(Incoming::Closed("a stateless request was answered".into()))
        .await;
    session.end("the stateless request's session ended");
}

impl Session {
    fn touch(&self) {
        *self.last_seen.lock().unwrap() = Instant::now();
    }

    /// How long the session has been unused: zero while a request is in flight or the
    /// `GET` stream is open (the client is there), else the time since its last message.
    fn idle_since(&self, now: Instant) -> Duration {
        let routes = self.routes.lock().unwrap();
        let get_open = routes
            .get_stream
            .as_ref()
            .is_some_and(|open| !open.is_closed());
        if !routes.pending.is_empty() || get_open {
            return Duration::ZERO;
        }
        now.saturating_duration_since(*self.last_seen.lock().unwrap())
    }

    /// Registers a request before it goes to the relay; `None` when its id is in flight.
    fn expect(
        &self,
        id: &Value,
        sse: bool,
        progress_token: Option<&Value>,
    ) -> Option<mpsc::UnboundedReceiver<Routed>> {
        let mut routes = self.routes.lock().unwrap();
        let key = id_key(id);
        if routes.pending.contains_key(&key) {
            return None;
        }
        let (to_post, answers) = mpsc::unbounded_channel();
        if routes.ended {
            let _ = to_post.send(Routed {
                frame: error_frame(id, INTERNAL_ERROR, "the session ended"),
                last: true,
            });
            return Some(answers);
        }
        let progress = progress_token.map(id_key);
        if let Some(token) = &progress {
            routes.by_progress.insert(token.clone(), key.clone());
        }
        routes.pending.insert(
            key,
            Pending {
                id: id.clone(),
                sse,
                progress,
                to_post,
            },
        );
        Some(answers)
    }

    /// Forgets a request: the relay never got it, or the client cancelled it.
    fn forget(&self, id: &Value) {
        let mut routes = self.routes.lock().unwrap();
        if let Some(pending) = routes.pending.remove(&id_key(id))
            && let Some(token) = pending.progress
        {
            routes.by_progress.remove(&token);
        }
    }

    /// Sends one message of the relay where it belongs (see the module's documentation).
    fn route(&self, frame: Frame) {
        let message = match peek(&frame) {
            Ok(message) => message,
            Err(error) => {
                eprintln!("envelope proxy: http: dropped a message to the client: {error}");
                return;
            }
        };
        let mut routes = self.routes.lock().unwrap();
        if message.kind == Kind::Response {
            let key = message.id.as_ref().map(id_key).unwrap_or_default();
            if let Some(pending) = routes.pending.remove(&key) {
                if let Some(token) = &pending.progress {
                    routes.by_progress.remove(token);
                }
                // The client may have gone away: then the response has nowhere to go.
                let _ = pending.to_post.send(Routed { frame, last: true });
            }
            return;
        }
        let mut frame = frame;
        for key in routes.post_candidates(&message) {
            let pending = &routes.pending[&key];
            match pending.to_post.send(Routed { frame, last: false }) {
                Ok(()) => return,
                Err(returned) => frame = returned.0.frame,
            }
        }
        routes.send_to_get_stream(frame);
    }

    /// Answers every pending request with an error and closes the `GET` stream.
    fn end(&self, reason: &str) {
        let mut routes = self.routes.lock().unwrap();
        routes.ended = true;
        for (_, pending) in routes.pending.drain() {
            let _ = pending.to_post.send(Routed {
                frame: error_frame(&pending.id, INTERNAL_ERROR, reason),
                last: true,
            });
        }
        routes.by_progress.clear();
        routes.get_stream = None;
        routes.backlog.clear();
    }
}

impl Routes {
    /// The open requests a non-response message may go to, best first; the `GET` stream
    /// comes between the lone-request rule and the any-request fallback.
    fn post_candidates(&self, message: &super::http_common::Peek) -> Vec<String> {
        let mut candidates = Vec::new();
        if message.method.as_deref() == Some("notifications/progress")
            && let Some(token) = &message.progress_token
            && let Some(key) = self.by_progress.get(&id_key(token))
            && self.pending.get(key).is_some_and(|pending| pending.sse)
        {
            candidates.push(key.clone());
        }
        let mut sse = self.pending.iter().filter(|(_, pending)| pending.sse);
        let lone = match (sse.next(), sse.next()) {
            (Some((key, _)), None) => Some(key.clone()),
            _ => None,
        };
        candidates.extend(lone);
        let get_open = self
            .get_stream
            .as_ref()
            .is_some_and(|open| !open.is_closed());
        if !get_open && candidates.is_empty() {
            candidates.extend(
                self.pending
                    .iter()
                    .filter(|(_, pending)| pending.sse)
                    .map(|(key, _)| key.clone()),
            );
        }
        candidates
    }

    fn send_to_get_stream(&mut self, frame: Frame) {
        let frame = match &self.get_stream {
            Some(open) => match open.try_send(frame) {
                Ok(()) => return,
                Err(mpsc::error::TrySendError::Full(frame)) => frame,
                Err(mpsc::error::TrySendError::Closed(frame)) => {
                    self.get_stream = None;
                    frame
                }
            },
            None => frame,
        };
        if self.backlog.len() >= GET_BACKLOG {
            self.backlog.pop_front();
            eprintln!(
                "envelope proxy: http: the client reads no GET stream: dropped its oldest waiting message"
            );
        }
        self.backlog.push_back(frame);
    }
}

/// A response body of Server-Sent Events, one per frame.
struct SseBody {
    first: Option<Frame>,
    source: Source,
}

enum Source {
    /// The messages of one request, ending with its response (`None`: the first was it).
    Post(Option<mpsc::UnboundedReceiver<Routed>>),
    /// The session's stream.
    Get(mpsc::Receiver<Frame>),
}

impl Body for SseBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<BodyFrame<Bytes>, Infallible>>> {
        let event = |frame: Frame| Some(Ok(BodyFrame::data(Bytes::from(sse_event(&frame)))));
        if let Some(frame) = self.first.take() {
            return Poll::Ready(event(frame));
        }
        match &mut self.source {
            Source::Post(None) => Poll::Ready(None),
            Source::Post(Some(answers)) => answers
                .poll_recv(cx)
                .map(|next| next.and_then(|routed| event(routed.frame))),
            Source::Get(stream) => stream.poll_recv(cx).map(|next| next.and_then(event)),
        }
    }
}

fn sse_response(body: SseBody) -> Response<ResponseBody> {
    let mut response = Response::new(Either::Right(body));
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

fn empty(status: StatusCode) -> Response<ResponseBody> {
    let mut response = Response::new(Either::Left(Full::new(Bytes::new())));
    *response.status_mut() = status;
    response
}

/// A request refused before it reaches a session: the status and why.
struct Refusal(StatusCode, String);

impl Refusal {
    fn response(self) -> Response<ResponseBody> {
        http_error(self.0, &self.1)
    }
}

/// An HTTP error with a JSON-RPC error body (id null), which MCP clients show as is.
fn http_error(status: StatusCode, message: &str) -> Response<ResponseBody> {
    rpc_error(status, INVALID_REQUEST, message)
}

fn rpc_error(status: StatusCode, code: i64, message: &str) -> Response<ResponseBody> {
    with_body(status, error_frame(&Value::Null, code, message))
}

/// 408: the body did not all arrive in time (the connection is closed after it).
fn body_timeout(timeout: Duration) -> Response<ResponseBody> {
    let mut response = http_error(
        StatusCode::REQUEST_TIMEOUT,
        &format!(
            "request timeout: the body did not arrive within {} s",
            timeout.as_secs_f64()
        ),
    );
    response
        .headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}

/// A JSON response with `status`.
fn with_body(status: StatusCode, body: Frame) -> Response<ResponseBody> {
    let mut response = Response::new(Either::Left(Full::new(Bytes::from(body))));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

fn header_str<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|value| value.to_str().ok())
}

/// `YYYY-MM-DD`: any revision, known or future (the upstream negotiates; a proxy does not
/// refuse a revision newer than itself).
fn is_revision(value: &str) -> bool {
    let bytes = value.as_bytes();
    bytes.len() == 10
        && bytes.iter().enumerate().all(|(at, &b)| match at {
            4 | 7 => b == b'-',
            _ => b.is_ascii_digit(),
        })
}

/// 128 random bits from the operating system, as 32 hex digits.
fn new_session_id() -> Result<String, getrandom::Error> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn revisions() {
        assert!(is_revision("2025-06-18"));
        assert!(is_revision("2031-01-01"));
        assert!(!is_revision("latest"));
        assert!(!is_revision("2025-6-18"));
    }

    #[test]
    fn session_ids_are_long_and_differ() {
        let a = new_session_id().unwrap();
        let b = new_session_id().unwrap();
        assert_eq!(a.len(), 32);
        assert!(a.bytes().all(|b| b.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }

    #[tokio::test]
    async fn non_loopback_needs_a_token() {
        let starter: SessionStarter = Arc::new(|_, _| {});
        let options = ListenOptions {
            addr: "0.0.0.0:0".parse().unwrap(),
            tokens: Vec::new(),
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            limits: Limits::default(),
        };
        let error = bind(options, starter).await.unwrap_err();
        assert!(matches!(error, ListenError::NeedsToken(_)));
        assert!(error.to_string().contains(TOKEN_ENV));
    }
}
