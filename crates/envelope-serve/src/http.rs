//! The HTTP view of `serve` (`--http ADDR`): each operation at `POST /ops/{id}`.
//!
//! | request | answer |
//! |---|---|
//! | `POST /ops/{id}` with the input as a JSON body (empty: `{}`) | 200 and the operations envelope, shaped to the limit (payload over it in the store, `meta.artifact` naming it) |
//! | the same, failing | `{code, message, details}` with 400 (VALIDATION_ERROR), 403 (ACCESS_DENIED), 404 (OPERATION_NOT_FOUND), 504 (TIMEOUT); an upstream's 4xx with that status, its 5xx (any other non-success) or no answer from it (refused, reset, an MCP server gone) 502; else 500 ([`status_for`]) |
//! | `POST /ops/{id}` of a subscription | `text/event-stream`: one `data:` event per envelope; an error is an `event: error` and the end |
//! | `GET /openapi.json` | the OpenAPI 3.1 document of the registry ([`crate::openapi`]) |
//! | `GET /artifacts/sha256/{hex}` | a stored payload, verified against its digest |
//! | `GET /health` | `{"status": "ok", "operations": N}` (no token asked: for load balancers) |
//! | `GET /metrics` | the counters in the Prometheus text format ([`Stats::to_prometheus`](envelope_mcp::stats::Stats::to_prometheus)): the same numbers as `--stats`; behind the token like `/ops` (they name every caller's tools) |
//!
//! The same [`Guard`] as the MCP endpoint: loopback unless tokens are set, foreign `Origin`
//! 403, non-loopback `Host` 421 on a loopback bind, a missing or unknown token 401. The
//! caller's identity is the token's, or without tokens the one `--scope` builds.
//!
//! The same [`Limits`] too (defaults; [`HttpView::limits`] changes them): request headers
//! within 10 s (else the connection is closed), a body within 60 s (408), at most 512
//! connections at once (503 beyond).

use std::convert::Infallible;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use envelope_mcp::transport::http_guard::{Guard, Refused};
use envelope_mcp::transport::http_server::{self, Limits, ListenError, MAX_BODY};
use envelope_ops::error::Upstream;
use envelope_ops::{CallError, Identity, OperationType, codes};
use envelope_store::Digest;
use futures::StreamExt;
use http_body_util::{BodyExt, Either, Full, Limited};
use hyper::body::{Body, Frame};
use hyper::header::{self, HeaderMap, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::sync::mpsc;

use crate::Tokens;
use crate::service::Service;

/// Who may call, and as whom.
#[derive(Clone, Debug, Default)]
pub struct Access {
    /// With tokens: each request must present one and calls as its identity.
    pub tokens: Option<Arc<Tokens>>,
    /// Without tokens: every request calls as this identity (`--scope`; `None`: anonymous).
    pub identity: Option<Identity>,
}

impl Access {
    /// The identity of a request that passed the guard with `token`.
    pub fn identity_of(&self, token: Option<&str>) -> Option<Identity> {
        match (&self.tokens, token) {
            (Some(tokens), Some(token)) => tokens.identity(token).cloned(),
            _ => self.identity.clone(),
        }
    }

    /// The guard of a server bound to `addr`.
    ///
    /// # Errors
    ///
    /// A non-loopback address without tokens.
    pub fn guard(&self, addr: SocketAddr) -> Result<Guard, ListenError> {
        let tokens = self
            .tokens
            .as_ref()
            .map(|t| t.secrets())
            .unwrap_or_default();
        let loopback = addr.ip().is_loopback();
        if !loopback && tokens.is_empty() {
            return Err(ListenError::NeedsToken(addr));
        }
        Ok(Guard {
            tokens,
            any_host: !loopback,
        })
    }
}

/// The bound HTTP view, not yet accepting.
pub struct HttpView {
    listener: TcpListener,
    state: Arc<State>,
}

struct State {
    service: Arc<Service>,
    access: Access,
    guard: Guard,
    limits: Limits,
    /// `GET /openapi.json`, written once: every operation.
    openapi: Bytes,
    /// `GET /openapi.json` as each identity sees it (only what it may call), written once
    /// per identity.
    openapi_of: std::sync::Mutex<std::collections::HashMap<String, Bytes>>,
    secured: bool,
}

/// Binds the HTTP view of `service` to `addr`.
///
/// # Errors
///
/// A non-loopback address without tokens, or an address that cannot be bound.
pub async fn bind(
    addr: SocketAddr,
    service: Arc<Service>,
    access: Access,
) -> Result<HttpView, ListenError> {
    let guard = access.guard(addr)?;
    let listener = TcpListener::bind(addr)
        .await
        .map_err(|source| ListenError::Bind { addr, source })?;
    let secured = access.tokens.is_some();
    let mut document = crate::openapi::document(service.dispatch().registry(), secured);
    // The registry's descriptions come from its sources (an OpenAPI document, an MCP
    // server): masked like any message to a client.
    if service.settings().redact {
        envelope_mcp::outbound::redact_document(&mut document);
    }
    let state = Arc::new(State {
        service,
        access,
        guard,
        limits: Limits::default(),
        openapi: Bytes::from(document.to_string()),
        openapi_of: Default::default(),
        secured,
    });
    Ok(HttpView { listener, state })
}

impl HttpView {
    /// The bound address.
    ///
    /// # Errors
    ///
    /// When the socket cannot say.
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// These limits instead of [`Limits::default`] (`max_sessions_per_client` is not used:
    /// the HTTP view has no sessions).
    #[must_use]
    pub fn limits(mut self, limits: Limits) -> Self {
        if let Some(state) = Arc::get_mut(&mut self.state) {
            state.limits = limits;
        }
        self
    }

    /// Accepts connections until the task is dropped, each on a task of its own.
    pub async fn run(self) {
        let state = self.state;
        let limits = state.limits;
        let busy = CallError::new("UNAVAILABLE", "too many connections: try again later");
        let busy = Bytes::from(busy.to_json());
        http_server::serve_connections(self.listener, limits, busy, move |request| {
            let state = state.clone();
            async move { handle(&state, request).await }
        })
        .await;
    }
}

type ResponseBody = Either<Full<Bytes>, EventBody>;

async fn handle(state: &State, request: Request<hyper::body::Incoming>) -> Response<ResponseBody> {
    let path = request.uri().path().to_owned();
    let token = if path == "/health" {
        // Host and Origin still checked; no token asked of a health probe.
        let open = Guard {
            tokens: Vec::new(),
            ..state.guard.clone()
        };
        open.check_request(&request).map(|_| None)
    } else {
        state
            .guard
            .check_request(&request)
            .map(|t| t.map(str::to_owned))
    };
    let token = match token {
        Ok(token) => token,
        Err(refused) => return refused_response(refused),
    };
    let method = request.method().clone();
    match (method, path.as_str()) {
        (Method::GET, "/openapi.json") => {
            let identity = state.access.identity_of(token.as_deref());
            json_response(StatusCode::OK, openapi_for(state, identity.as_ref()))
        }
        (Method::GET, "/metrics") => {
            let body = state.service.stats().to_prometheus();
            let mut response = Response::new(Either::Left(Full::new(Bytes::from(body))));
            response.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static(envelope_mcp::stats::PROMETHEUS_CONTENT_TYPE),
            );
            response
        }
        (Method::GET, "/health") => {
            let count = state.service.dispatch().registry().len();
            let body = json!({"status": "ok", "operations": count});
            json_response(StatusCode::OK, Bytes::from(body.to_string()))
        }
        (Method::POST, path) if path.starts_with("/ops/") => {
            let id = match percent_decode(&path["/ops/".len()..]) {
                Some(id) => id,
                None => return error_response(&CallError::not_found(path)),
            };
            let identity = state.access.identity_of(token.as_deref());
            // With store limits, what the call stores is pinned until its response is
            // built (hyper writes it right after).
            state
                .service
                .pending(call(state, &id, identity, request))
                .await
        }
        (Method::GET, path) if path.starts_with("/artifacts/sha256/") => {
            let identity = state.access.identity_of(token.as_deref());
            artifact(
                state,
                &path["/artifacts/sha256/".len()..],
                identity.as_ref(),
            )
            .await
        }
        (_, "/openapi.json" | "/health" | "/metrics") => method_not_allowed("GET"),
        (_, path) if path.starts_with("/ops/") => method_not_allowed("POST"),
        (_, path) if path.starts_with("/artifacts/") => method_not_allowed("GET"),
        _ => plain_error(
            StatusCode::NOT_FOUND,
            "NOT_FOUND",
            "not found: operations are at POST /ops/{id}, their description at GET /openapi.json",
        ),
    }
}

/// `POST /ops/{id}`.
async fn call(
    state: &State,
    id: &str,
    identity: Option<Identity>,
    request: Request<hyper::body::Incoming>,
) -> Response<ResponseBody> {
    let headers = request.headers().clone();
    let timeout = state.limits.body_read_timeout;
    let collected = tokio::time::timeout(
        timeout,
        Limited::new(request.into_body(), MAX_BODY).collect(),
    )
    .await;
    let body = match collected {
        Ok(Ok(body)) => body.to_bytes(),
        Err(_) => {
            let mut response = plain_error(
                StatusCode::REQUEST_TIMEOUT,
                "REQUEST_TIMEOUT",
                &format!(
                    "request timeout: the body did not arrive within {} s",
                    timeout.as_secs_f64()
                ),
            );
            response
                .headers_mut()
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
            return response;
        }
        Ok(Err(_)) => {
            return plain_error(
                StatusCode::PAYLOAD_TOO_LARGE,
                codes::VALIDATION_ERROR,
                &format!("the input is larger than {MAX_BODY} bytes, or was cut off"),
            );
        }
    };
    let input = match input(&headers, &body) {
        Ok(input) => input,
        Err((status, message)) => {
            return plain_error(status, codes::VALIDATION_ERROR, &message);
        }
    };
    let service = &state.service;
    let subscription = service
        .dispatch()
        .registry()
        .spec(id)
        .is_some_and(|spec| spec.kind == OperationType::Subscription);
    if subscription {
        let accept = header_str(&headers, "accept").unwrap_or("");
        if !accept.contains("text/event-stream") && !accept.contains("*/*") {
            return plain_error(
                StatusCode::NOT_ACCEPTABLE,
                "NOT_ACCEPTABLE",
                &format!("{id} is a subscription: accept text/event-stream"),
            );
        }
        return events(state, id, input, identity);
    }
    match service.execute(id, input, identity.as_ref()).await {
        Ok(envelope) => json_response(StatusCode::OK, Bytes::from(envelope.to_string())),
        Err(error) => error_response(&error),
    }
}

/// The request's input: the body as JSON (`{}` when empty); else the status and why.
fn input(headers: &HeaderMap, body: &[u8]) -> Result<Value, (StatusCode, String)> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(json!({}));
    }
    let content_type = header_str(headers, "content-type").unwrap_or("");
    if !content_type.starts_with("application/json") {
        let why = "send the input as application/json".to_owned();
        return Err((StatusCode::UNSUPPORTED_MEDIA_TYPE, why));
    }
    serde_json::from_slice(body).map_err(|e| {
        (
            StatusCode::BAD_REQUEST,
            format!("the body is not JSON: {e}"),
        )
    })
}

/// A subscription as server-sent events, ended when it completes, fails or the client goes.
fn events(
    state: &State,
    id: &str,
    input: Value,
    identity: Option<Identity>,
) -> Response<ResponseBody> {
    let service = state.service.clone();
    let id = id.to_owned();
    let (to_client, from_task) = mpsc::channel::<Bytes>(16);
    let mut stream = service.dispatch().subscribe(
        &id,
        input,
        identity.as_ref(),
        service.settings().idle_timeout,
    );
    tokio::spawn(async move {
        loop {
            let next = tokio::select! {
                next = stream.next() => next,
                // The client went away: dropping the stream stops the subscription.
                () = to_client.closed() => return,
            };
            let event = match next {
                None => return,
                Some(Ok(envelope)) => {
                    let envelope = service.rehydrate(envelope).await;
                    match service
                        .shape_envelope(&id, &envelope, identity.as_ref())
                        .await
                    {
                        Ok(shaped) => format!("data: {shaped}\n\n"),
                        Err(error) => error_event(&service.redact_error(error)),
                    }
                }
                Some(Err(error)) => error_event(&service.redact_error(error)),
            };
            let last = event.starts_with("event: error");
            if to_client.send(Bytes::from(event)).await.is_err() || last {
                return;
            }
        }
    });
    let mut response = Response::new(Either::Right(EventBody(from_task)));
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

fn error_event(error: &CallError) -> String {
    format!("event: error\ndata: {}\n\n", error.to_json())
}

/// The OpenAPI document `identity` gets: only the operations it may call (all of them
/// without an identity).
fn openapi_for(state: &State, identity: Option<&Identity>) -> Bytes {
    let Some(identity) = identity else {
        return state.openapi.clone();
    };
    let mut cache = state.openapi_of.lock().unwrap_or_else(|e| e.into_inner());
    cache
        .entry(format!("{}\0{}", identity.id, identity.scopes.join(",")))
        .or_insert_with(|| {
            let registry = state.service.dispatch().registry();
            let mut document = crate::openapi::document_for(registry, state.secured, identity);
            if state.service.settings().redact {
                envelope_mcp::outbound::redact_document(&mut document);
            }
            Bytes::from(document.to_string())
        })
        .clone()
}

/// `GET /artifacts/sha256/{hex}`: the stored bytes, verified.
///
/// With tokens, a caller reads only the results it produced (see
/// [`Service::store_for`](crate::Service::store_for)); another's answers as a missing one.
async fn artifact(state: &State, hex: &str, identity: Option<&Identity>) -> Response<ResponseBody> {
    let digest = match format!("sha256:{hex}").parse::<Digest>() {
        Ok(digest) => digest,
        Err(e) => {
            return plain_error(StatusCode::NOT_FOUND, "ARTIFACT_NOT_FOUND", &e.to_string());
        }
    };
    let store = state.service.store_for(identity);
    let read = tokio::task::spawn_blocking(move || {
        let bytes = store.get(&digest)?;
        let media = store
            .sidecar(&digest)
            .map(|s| s.kind)
            .unwrap_or_else(|_| "application/octet-stream".into());
        Ok::<_, envelope_store::StoreError>((bytes, media))
    })
    .await;
    match read {
        Ok(Ok((bytes, media))) => {
            state.service.stats().record_read("http");
            let mut response = Response::new(Either::Left(Full::new(Bytes::from(bytes))));
            if let Ok(value) = HeaderValue::from_str(&media) {
                response.headers_mut().insert(header::CONTENT_TYPE, value);
            }
            response
        }
        Ok(Err(e)) if e.code() == "store.not-found" => {
            plain_error(StatusCode::NOT_FOUND, "ARTIFACT_NOT_FOUND", &e.to_string())
        }
        Ok(Err(e)) => plain_error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "STORE_ERROR",
            &e.to_string(),
        ),
        Err(e) => plain_error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "STORE_ERROR",
            &e.to_string(),
        ),
    }
}

/// The status of a failed call: TIMEOUT 504 (the upstream's timeout too); an upstream
/// that answered a 4xx, that status (its CallError says what it answered); an upstream that
/// answered anything else or could not be reached, 502 Bad Gateway; else by the code
/// ([`status_of`]).
///
/// ```
/// use envelope_ops::{CallError, codes};
/// use envelope_serve::http::status_for;
/// use serde_json::json;
///
/// let answered = |status: u16| CallError::new(codes::EXECUTION_ERROR, "HTTP")
///     .with_details(json!({"status": status, "upstream": "answered"}));
/// assert_eq!(status_for(&answered(422)).as_u16(), 422);
/// assert_eq!(status_for(&answered(503)).as_u16(), 502);
/// let gone = CallError::new(codes::EXECUTION_ERROR, "refused")
///     .with_details(json!({"upstream": "unreachable"}));
/// assert_eq!(status_for(&gone).as_u16(), 502);
/// assert_eq!(status_for(&CallError::timeout(1.0)).as_u16(), 504);
/// assert_eq!(status_for(&CallError::new("BROKEN", "x")).as_u16(), 500);
/// ```
pub fn status_for(error: &CallError) -> StatusCode {
    if error.code == codes::TIMEOUT {
        return StatusCode::GATEWAY_TIMEOUT;
    }
    match error.upstream() {
        Some(Upstream::Answered(status @ 400..=499)) => {
            StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_GATEWAY)
        }
        Some(Upstream::Answered(_) | Upstream::Unreachable) => StatusCode::BAD_GATEWAY,
        None => status_of(&error.code),
    }
}

/// The status of a CallError code.
pub fn status_of(code: &str) -> StatusCode {
    match code {
        codes::VALIDATION_ERROR => StatusCode::BAD_REQUEST,
        codes::ACCESS_DENIED => StatusCode::FORBIDDEN,
        codes::OPERATION_NOT_FOUND => StatusCode::NOT_FOUND,
        codes::TIMEOUT => StatusCode::GATEWAY_TIMEOUT,
        _ => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

fn error_response(error: &CallError) -> Response<ResponseBody> {
    json_response(status_for(error), Bytes::from(error.to_json()))
}

fn plain_error(status: StatusCode, code: &str, message: &str) -> Response<ResponseBody> {
    error_with_status(status, &CallError::new(code, message))
}

fn error_with_status(status: StatusCode, error: &CallError) -> Response<ResponseBody> {
    json_response(status, Bytes::from(error.to_json()))
}

fn refused_response(refused: Refused) -> Response<ResponseBody> {
    let code = match refused.status {
        StatusCode::UNAUTHORIZED => "UNAUTHORIZED",
        _ => "FORBIDDEN",
    };
    let mut response = plain_error(refused.status, code, &refused.message);
    if refused.status == StatusCode::UNAUTHORIZED {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    }
    response
}

fn method_not_allowed(allow: &'static str) -> Response<ResponseBody> {
    let mut response = plain_error(
        StatusCode::METHOD_NOT_ALLOWED,
        "METHOD_NOT_ALLOWED",
        &format!("method not allowed: use {allow}"),
    );
    response
        .headers_mut()
        .insert(header::ALLOW, HeaderValue::from_static(allow));
    response
}

fn json_response(status: StatusCode, body: Bytes) -> Response<ResponseBody> {
    let mut response = Response::new(Either::Left(Full::new(body)));
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

/// `%XX` sequences decoded; `None` when one is malformed or the result is not UTF-8.
fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        if bytes[at] == b'%' {
            let hex = std::str::from_utf8(bytes.get(at + 1..at + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            at += 3;
        } else {
            out.push(bytes[at]);
            at += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// The events of a subscription, as they come.
pub struct EventBody(mpsc::Receiver<Bytes>);

impl Body for EventBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        self.0
            .poll_recv(cx)
            .map(|next| next.map(|bytes| Ok(Frame::data(bytes))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_percent_decoded() {
        assert_eq!(percent_decode("git.log").unwrap(), "git.log");
        assert_eq!(
            percent_decode("pets.find%2Fby%20tag").unwrap(),
            "pets.find/by tag"
        );
        assert_eq!(percent_decode("caf%C3%A9").unwrap(), "café");
        assert!(percent_decode("bad%2").is_none());
        assert!(percent_decode("bad%zz").is_none());
        assert!(percent_decode("bad%ff").is_none(), "not UTF-8");
    }

    #[test]
    fn statuses_follow_the_issue() {
        for (code, status) in [
            (codes::VALIDATION_ERROR, 400),
            (codes::ACCESS_DENIED, 403),
            (codes::OPERATION_NOT_FOUND, 404),
            (codes::TIMEOUT, 504),
            (codes::EXECUTION_ERROR, 500),
            ("NOT_A_REPO", 500),
        ] {
            assert_eq!(status_of(code).as_u16(), status, "{code}");
        }
    }
}
