//! The upstream over Streamable HTTP (`--upstream-url`).
//!
//! Each frame the relay sends is one `POST` (`Accept: application/json, text/event-stream`).
//! Requests are posted on tasks of their own, so a slow call never delays another; the one
//! exception is `initialize`, answered before anything else is sent, because it brings the
//! `Mcp-Session-Id` every later request must carry. Notifications and responses are posted in
//! order, each waiting for its `202`. A request's answer is read as JSON or as an SSE stream
//! (every message on it goes to the relay, in order). After `notifications/initialized`, the
//! session's `GET` stream is opened for server-initiated messages when the server offers one
//! (a `405` means it does not); a dropped stream is reopened, up to
//! [`GET_RETRIES`] failures in a row. When the relay drops its sender, the session is ended
//! with `DELETE`.
//!
//! HTTP failures, as the relay sees them:
//!
//! - a request that fails (connection refused, HTTP error status, a body that is not a
//!   message, a stream that ends before the response) is answered with a JSON-RPC error
//!   (`-32603`) naming the cause; when the server's error body is itself a JSON-RPC response
//!   to that request, it is passed on as is. Later requests are tried again: an HTTP server
//!   may come back, unlike a dead child process.
//! - `404` to a request carrying a session id means the server ended the session: the request
//!   gets its error, then the relay reads [`Incoming::Closed`] (nothing can follow; the
//!   client has to start again).
//! - a notification or response that fails is logged on stderr: there is no one to answer.
//!
//! `http://` and `https://`: TLS is rustls (the stack object_store's S3 client already
//! builds), the server's certificate verified against the system's roots, or the bundle
//! that `SSL_CERT_FILE` names. Any other scheme is refused at start.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use serde_json::Value;
use tokio::sync::mpsc;
use tokio::task::JoinSet;

use super::http_common::{
    INTERNAL_ERROR, Kind, SESSION_HEADER, SseReader, VERSION_HEADER, error_frame, peek,
};
use super::{Frame, Incoming, Link};

/// The largest single message read from the server (the relay shapes big results; this
/// only stops a runaway body).
pub const MAX_MESSAGE: usize = 1 << 30;
/// Failures in a row after which the `GET` stream is given up.
pub const GET_RETRIES: u32 = 5;

/// Opens a Streamable HTTP session to `url`, sending `headers` with every request.
///
/// The endpoint is checked to accept TCP connections; the MCP session itself starts with the
/// relay's `initialize`.
///
/// # Errors
///
/// `InvalidInput` for a URL that is not `http://`, or a header that is not a valid HTTP
/// header; the connection error when the endpoint cannot be reached.
pub async fn connect(url: &str, headers: &[(String, String)]) -> std::io::Result<Link> {
    let endpoint = reqwest::Url::parse(url)
        .map_err(|error| invalid(format!("--upstream-url {url:?}: {error}")))?;
    if !matches!(endpoint.scheme(), "http" | "https") {
        return Err(invalid(format!(
            "--upstream-url {url:?}: only http:// and https:// URLs are supported"
        )));
    }
    let host = endpoint
        .host_str()
        .ok_or_else(|| invalid(format!("--upstream-url {url:?}: no host")))?
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_owned();
    let port = endpoint.port_or_known_default().unwrap_or(80);
    let mut extra = HeaderMap::new();
    for (name, value) in headers {
        let name = HeaderName::try_from(name.as_str())
            .map_err(|error| invalid(format!("--header {name:?}: {error}")))?;
        let value = HeaderValue::try_from(value.as_str())
            .map_err(|error| invalid(format!("--header {name}: {error}")))?;
        extra.append(name, value);
    }
    tokio::net::TcpStream::connect((host.as_str(), port))
        .await
        .map_err(|error| {
            std::io::Error::new(error.kind(), format!("cannot reach {url}: {error}"))
        })?;
    let client = reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(10))
        .default_headers(extra)
        .build()
        .map_err(|error| {
            std::io::Error::other(format!("the HTTP client: {}", with_causes(&error)))
        })?;
    let (to_relay, inbound) = mpsc::channel(64);
    let (outbound, from_relay) = mpsc::channel(64);
    let upstream = Arc::new(Upstream {
        client,
        url: endpoint,
        to_relay,
        session: Mutex::default(),
    });
    tokio::spawn(upstream.run(from_relay));
    Ok(Link { inbound, outbound })
}

/// The revision a message names in `params._meta` (read without building the rest).
fn request_revision(frame: &[u8]) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Message<'a> {
        #[serde(borrow)]
        params: Option<Params<'a>>,
    }
    #[derive(serde::Deserialize)]
    struct Params<'a> {
        #[serde(rename = "_meta", borrow)]
        meta: Option<&'a serde_json::value::RawValue>,
    }
    let meta = serde_json::from_slice::<Message>(frame)
        .ok()?
        .params?
        .meta?;
    let meta: Value = serde_json::from_str(meta.get()).ok()?;
    let version = meta
        .get(crate::revision::PROTOCOL_VERSION_META_KEY)?
        .as_str()?;
    // Only a well-formed revision goes into a header.
    (version.len() == 10 && version.bytes().all(|b| b.is_ascii_digit() || b == b'-'))
        .then(|| version.to_string())
}

fn invalid(message: String) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidInput, message)
}

struct Upstream {
    client: reqwest::Client,
    url: reqwest::Url,
    to_relay: mpsc::Sender<Incoming>,
    session: Mutex<SessionInfo>,
}

#[derive(Default)]
struct SessionInfo {
    /// `Mcp-Session-Id`, from the answer to `initialize`.
    id: Option<String>,
    /// The negotiated revision, for `MCP-Protocol-Version`.
    version: Option<String>,
}

impl Upstream {
    async fn run(self: Arc<Self>, mut from_relay: mpsc::Receiver<Frame>) {
        let mut tasks = JoinSet::new();
        let mut get_stream_opened = false;
        while let Some(frame) = from_relay.recv().await {
            while tasks.try_join_next().is_some() {}
            let message = match peek(&frame) {
                Ok(message) => message,
                Err(error) => {
                    eprintln!("envelope proxy: upstream http: not sent: {error}");
                    continue;
                }
            };
            let method = message.method.as_deref();
            match message.kind {
                Kind::Request => {
                    let id = message.id.unwrap_or(Value::Null);
                    if method == Some("initialize") {
                        self.clone().request(frame, id, true).await;
                    } else {
                        tasks.spawn(self.clone().request(frame, id, false));
                    }
                }
                Kind::Notification | Kind::Response => {
                    let opens_get_stream = method == Some("notifications/initialized");
                    self.one_way(frame).await;
                    if opens_get_stream && !get_stream_opened {
                        get_stream_opened = true;
                        tasks.spawn(self.clone().get_stream());
                    }
                }
            }
        }
        tasks.abort_all();
        self.end_session().await;
        let _ = self
            .to_relay
            .send(Incoming::Closed("the session was closed".into()))
            .await;
    }

    /// A `POST` of one message with the session's headers. `MCP-Protocol-Version` is the
    /// revision the message's own `_meta` names (2026-07-28 has no `initialize`: each request
    /// names it, and the header must agree), else the negotiated one.
    fn post(&self, frame: Frame) -> reqwest::RequestBuilder {
        let own_revision = request_revision(&frame);
        let request = self
            .client
            .post(self.url.clone())
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "application/json, text/event-stream");
        let mut request = self.with_session(request, own_revision.is_none());
        if let Some(version) = own_revision {
            request = request.header(VERSION_HEADER, version);
        }
        request.body(frame)
    }

    fn with_session(
        &self,
        mut request: reqwest::RequestBuilder,
        with_version: bool,
    ) -> reqwest::RequestBuilder {
        let session = self.session.lock().unwrap();
        if let Some(id) = &session.id {
            request = request.header(SESSION_HEADER, id);
        }
        if let Some(version) = session.version.as_ref().filter(|_| with_version) {
            request = request.header(VERSION_HEADER, version);
        }
        request
    }

    /// Posts a request and passes on everything the server answers to it.
    async fn request(self: Arc<Self>, frame: Frame, id: Value, initialize: bool) {
        let had_session = self.session.lock().unwrap().id.is_some();
        let response = match self.post(frame).send().await {
            Ok(response) => response,
            Err(error) => {
                return self
                    .fail(
                        &id,
                        format!("upstream HTTP request failed: {}", with_causes(&error)),
                    )
                    .await;
            }
        };
        let status = response.status();
        if initialize && status.is_success() {
            let session_id = response
                .headers()
                .get(SESSION_HEADER)
                .and_then(|value| value.to_str().ok())
                .map(str::to_owned);
            self.session.lock().unwrap().id = session_id;
        }
        if !status.is_success() {
            let body = read_body(response).await.unwrap_or_default();
            match peek(&body) {
                Ok(answer) if answer.kind == Kind::Response && answer.id.as_ref() == Some(&id) => {
                    self.forward(body).await;
                }
                _ => {
                    let snippet =
                        String::from_utf8_lossy(&body[..body.len().min(300)]).into_owned();
                    self.fail(&id, format!("upstream answered HTTP {status}: {snippet}"))
                        .await;
                }
            }
            if status == reqwest::StatusCode::NOT_FOUND && had_session {
                let _ = self
                    .to_relay
                    .send(Incoming::Closed(
                        "the upstream ended the MCP session (HTTP 404)".into(),
                    ))
                    .await;
            }
            return;
        }
        let answered = if is_event_stream(&response) {
            self.read_events(response, Some(&id), initialize).await
        } else {
            match read_body(response).await {
                Ok(body) if body.trim_ascii().is_empty() => false,
                Ok(body) => self.pass_on(body, Some(&id), initialize).await,
                Err(error) => {
                    return self.fail(&id, error).await;
                }
            }
        };
        if !answered {
            self.fail(
                &id,
                "the upstream ended its answer without a response".into(),
            )
            .await;
        }
    }

    /// Reads an SSE answer; true once the response to `id` has gone to the relay (the stream
    /// is then left: the server has said everything about that request).
    async fn read_events(
        &self,
        mut response: reqwest::Response,
        id: Option<&Value>,
        initialize: bool,
    ) -> bool {
        let mut reader = SseReader::default();
        loop {
            let chunk = match response.chunk().await {
                Ok(Some(chunk)) => chunk,
                Ok(None) => return false,
                Err(error) => {
                    eprintln!("envelope proxy: upstream http: stream broken: {error}");
                    return false;
                }
            };
            for frame in reader.feed(&chunk) {
                if self.pass_on(frame, id, initialize).await {
                    return true;
                }
            }
        }
    }

    /// Sends one message of the server to the relay; true when it is the response to `id`.
    async fn pass_on(&self, frame: Frame, id: Option<&Value>, initialize: bool) -> bool {
        let answers = id.is_some()
            && peek(&frame)
                .is_ok_and(|message| message.kind == Kind::Response && message.id.as_ref() == id);
        if answers && initialize {
            self.note_revision(&frame);
        }
        self.forward(frame).await;
        answers
    }

    /// Keeps the negotiated `protocolVersion` for the `MCP-Protocol-Version` header.
    fn note_revision(&self, frame: &[u8]) {
        let version = serde_json::from_slice::<Value>(frame)
            .ok()
            .and_then(|answer| {
                answer
                    .pointer("/result/protocolVersion")
                    .and_then(Value::as_str)
                    .map(str::to_owned)
            });
        if version.is_some() {
            self.session.lock().unwrap().version = version;
        }
    }

    /// Posts a notification or a response; the server owes nothing back but `202`.
    async fn one_way(&self, frame: Frame) {
        match self.post(frame).send().await {
            Ok(response) if response.status().is_success() => {}
            Ok(response) => eprintln!(
                "envelope proxy: upstream http: a notification or response got HTTP {}",
                response.status()
            ),
            Err(error) => eprintln!("envelope proxy: upstream http: not delivered: {error}"),
        }
    }

    /// Reads the server's `GET` stream while the session lasts.
    async fn get_stream(self: Arc<Self>) {
        let mut failures = 0;
        while failures < GET_RETRIES {
            let request = self
                .client
                .get(self.url.clone())
                .header(ACCEPT, "text/event-stream");
            match self.with_session(request, true).send().await {
                Ok(response) if response.status().is_success() && is_event_stream(&response) => {
                    failures = 0;
                    self.read_events(response, None, false).await;
                }
                // 405: the server offers no stream; other statuses will not change by asking.
                Ok(_) => return,
                Err(_) => failures += 1,
            }
            tokio::time::sleep(Duration::from_millis(500 * u64::from(failures + 1))).await;
        }
    }

    async fn end_session(&self) {
        if self.session.lock().unwrap().id.is_none() {
            return;
        }
        let request = self.with_session(self.client.delete(self.url.clone()), true);
        // A server that does not allow DELETE answers 405; either way the session is over.
        let _ = tokio::time::timeout(Duration::from_secs(5), request.send()).await;
    }

    async fn forward(&self, frame: Frame) {
        let _ = self.to_relay.send(Incoming::Frame(frame)).await;
    }

    async fn fail(&self, id: &Value, reason: String) {
        self.forward(error_frame(id, INTERNAL_ERROR, &reason)).await;
    }
}

fn is_event_stream(response: &reqwest::Response) -> bool {
    response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.starts_with("text/event-stream"))
}

/// The whole body, at most [`MAX_MESSAGE`] bytes.
async fn read_body(mut response: reqwest::Response) -> Result<Vec<u8>, String> {
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|error| format!("upstream body broken: {error}"))?
    {
        if body.len() + chunk.len() > MAX_MESSAGE {
            return Err(format!(
                "the upstream's answer is larger than {MAX_MESSAGE} bytes"
            ));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// An error with its causes, outermost first: reqwest's own message ("error sending
/// request") leaves out what failed (a refused connection, an untrusted certificate).
pub fn with_causes(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(inner) = cause {
        let said = inner.to_string();
        if !text.contains(&said) {
            text.push_str(": ");
            text.push_str(&said);
        }
        cause = inner.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn refuses_other_schemes_and_bad_headers() {
        let error = connect("ftp://127.0.0.1:1/mcp", &[]).await.unwrap_err();
        assert_eq!(error.kind(), std::io::ErrorKind::InvalidInput);
        assert!(error.to_string().contains("https://"), "{error}");

        let bad = [("Bad Name".to_owned(), "x".to_owned())];
        let error = connect("http://127.0.0.1:1/mcp", &bad).await.unwrap_err();
        assert_eq!(error.kind(), std::io::ErrorKind::InvalidInput);

        let error = connect("not a url", &[]).await.unwrap_err();
        assert_eq!(error.kind(), std::io::ErrorKind::InvalidInput);
    }

    #[tokio::test]
    async fn unreachable_endpoint_is_an_error() {
        // Bind then drop: the port is (almost certainly) closed.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let error = connect(&format!("http://127.0.0.1:{port}/mcp"), &[])
            .await
            .unwrap_err();
        assert!(error.to_string().contains("cannot reach"), "{error}");
    }
}
