//! The MCP server of `serve`: one client session on a [`Link`] (stdio, or one Streamable
//! HTTP session of the proxy's transport), answered from the [`Service`].
//!
//! | method | answer |
//! |---|---|
//! | `initialize` | the client's revision when this build knows it (2024-11-05 … 2025-11-25), else 2025-11-25; capabilities `tools`, `resources` |
//! | `server/discover` (2026-07-28) | the supported revisions and the same capabilities |
//! | `ping` | `{}` |
//! | `tools/list` | the tools the session's identity may call, then `envelope_read`; pages of at most 1 MiB with `nextCursor` ([`Service::tools_page`]) |
//! | `tools/call` | the operation run and its result shaped ([`Service::call_tool`]) |
//! | `resources/list` | the MCP sources' resources, namespaced ([`crate::relayed`]) |
//! | `resources/templates/list` | the artifact template, then the MCP sources' templates |
//! | `resources/read` | an artifact URI: the stored result, verified; else an MCP source's resource |
//! | `prompts/list`, `prompts/get` | the MCP sources' prompts, namespaced |
//! | `logging/setLevel` | `{}` (this server sends no log messages) |
//! | anything else | -32601 |
//!
//! Every request runs on a task of its own, so a slow call never delays another; answers go
//! out as they are ready. `notifications/cancelled` stops the request it names (its
//! operation is stopped: a command's process group is killed, a worker gets
//! `call.aborted`) and no answer is sent for it. When the client has closed its side, the
//! requests in flight get [`DRAIN`] to be answered, then are stopped. Batches (2025-03-26)
//! are answered as one array. From 2026-07-28 a request names its revision in `_meta` and
//! results carry `resultType: "complete"`.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use envelope_mcp::drill;
use envelope_mcp::message::{self, Kind, Message, code, id_key};
use envelope_mcp::outbound::{Outbound, Ready};
use envelope_mcp::revision::Revision;
use envelope_mcp::transport::{Frame, Incoming, Link};
use envelope_ops::Identity;
use serde_json::value::RawValue;
use serde_json::{Value, json};
use tokio::task::{AbortHandle, JoinSet};

use crate::service::{Progress, Service};

/// The newest revision with `initialize`: what a client asking for an unknown one gets.
const LATEST_WITH_INITIALIZE: Revision = Revision::V2025_11_25;

/// Once the client has closed its side, requests in flight get this long to be answered.
pub const DRAIN: Duration = Duration::from_secs(5);

/// The instructions sent with `initialize`.
const INSTRUCTIONS: &str = "Each tool is an operation of an envelope registry. Results are bounded in size: when one is cut, it says so and links the full result, which envelope_read (pointer, window, jq) or resources/read gives back.";

/// Serves one client session until the client is gone; `identity` calls every tool.
pub async fn run(link: Link, service: Arc<Service>, identity: Option<Identity>) {
    let Link {
        mut inbound,
        outbound,
    } = link;
    let redact = service.settings().redact;
    let mut session = Session {
        service,
        identity: identity.map(Arc::new),
        revision: None,
        to_client: Outbound::new(outbound, redact),
        running: HashMap::new(),
        keys: HashMap::new(),
        tasks: JoinSet::new(),
    };
    loop {
        tokio::select! {
            incoming = inbound.recv() => match incoming {
                Some(Incoming::Frame(frame)) => session.on_frame(frame).await,
                Some(Incoming::Closed(_)) | None => break,
            },
            Some(done) = session.tasks.join_next_with_id() => {
                let id = match done {
                    Ok((id, ())) => id,
                    Err(e) => e.id(),
                };
                // Only if the id is not in use again by a later request.
                if let Some(key) = session.keys.remove(&id)
                    && session.running.get(&key).is_some_and(|h| h.id() == id)
                {
                    session.running.remove(&key);
                }
            }
        }
    }
    // The client closed its side: requests in flight get DRAIN to be answered (a client
    // that writes its requests and closes stdin still reads the answers), then are stopped.
    let _ = tokio::time::timeout(DRAIN, async {
        while session.tasks.join_next().await.is_some() {}
    })
    .await;
    session.tasks.abort_all();
    while session.tasks.join_next().await.is_some() {}
}

struct Session {
    service: Arc<Service>,
    identity: Option<Arc<Identity>>,
    /// Negotiated by `initialize`.
    revision: Option<Revision>,
    /// Every frame to the client goes through it (secrets masked).
    to_client: Outbound,
    /// Requests in flight by id key, to stop on `notifications/cancelled`.
    running: HashMap<String, AbortHandle>,
    keys: HashMap<tokio::task::Id, String>,
    tasks: JoinSet<()>,
}

/// One request, ready to be answered away from the session's task.
struct Request {
    raw_id: Vec<u8>,
    method: String,
    params: Value,
    revision: Revision,
}

impl Session {
    async fn on_frame(&mut self, frame: Frame) {
        let message = match Message::parse(&frame) {
            Ok(message) => message,
            Err(e) => {
                let answer = message::error_response(b"null", code::PARSE_ERROR, &e.to_string());
                return self.send(answer).await;
            }
        };
        match message.kind {
            Kind::Request => match self.request(&frame, &message) {
                Ok(request) => self.start(request),
                Err(answer) => self.send(answer).await,
            },
            Kind::Notification => {
                if message.method.as_deref() == Some("notifications/cancelled") {
                    self.cancel(&frame, &message);
                }
            }
            Kind::Batch => self.batch(&frame).await,
            // This server sends no requests of its own: answers are not expected.
            Kind::Response | Kind::ErrorResponse => {}
        }
    }

    async fn send(&self, frame: Frame) {
        let _ = self.to_client.send(frame).await;
    }

    /// Reads a request; `initialize` is answered here (it sets the session's revision).
    /// `Err` is an answer to send at once.
    fn request(&mut self, frame: &[u8], message: &Message) -> Result<Request, Frame> {
        let raw_id = message.id_bytes(frame).unwrap_or(b"null").to_vec();
        let params: Value = match message.params.clone() {
            Some(range) => serde_json::from_slice(&frame[range]).unwrap_or(Value::Null),
            None => Value::Null,
        };
        let method = message.method.clone().unwrap_or_default();
        if method == "initialize" {
            let revision = negotiate(&params);
            self.revision = Some(revision);
            return Err(message::response(
                &raw_id,
                initialize_result(revision).to_string().as_bytes(),
            ));
        }
        // A session that never initialized speaks the revision each request names
        // (2026-07-28), else the newest.
        let revision = Revision::from_request_meta(&params)
            .or(self.revision)
            .unwrap_or(Revision::NEWEST);
        Ok(Request {
            raw_id,
            method,
            params,
            revision,
        })
    }

    /// Answers a request on a task of its own.
    fn start(&mut self, request: Request) {
        let key = id_key(&request.raw_id);
        let service = self.service.clone();
        let identity = self.identity.clone();
        let to_client = self.to_client.clone();
        let handle = self.tasks.spawn(async move {
            let pending = async {
                let answer = answer(&service, identity.as_deref(), &to_client, request).await;
                let _ = to_client.send_ready(answer).await;
            };
            service.pending(pending).await;
        });
        if let Some(key) = key {
            self.keys.insert(handle.id(), key.clone());
            self.running.insert(key, handle);
        }
    }

    /// `notifications/cancelled`: the request is stopped and gets no answer.
    fn cancel(&mut self, frame: &[u8], message: &Message) {
        let Some(range) = message.params.clone() else {
            return;
        };
        let Ok(params) = serde_json::from_slice::<Value>(&frame[range]) else {
            return;
        };
        let Some(key) = params
            .get("requestId")
            .and_then(|id| id_key(id.to_string().as_bytes()))
        else {
            return;
        };
        if let Some(handle) = self.running.remove(&key) {
            handle.abort();
        }
    }

    /// A batch (2025-03-26): every request answered, the answers sent as one array.
    async fn batch(&mut self, frame: &[u8]) {
        let elements: Vec<&RawValue> = match serde_json::from_slice(frame) {
            Ok(elements) => elements,
            Err(e) => {
                let text = format!("the batch is not a JSON array: {e}");
                return self
                    .send(message::error_response(
                        b"null",
                        code::INVALID_REQUEST,
                        &text,
                    ))
                    .await;
            }
        };
        if elements.is_empty() {
            let text = "an empty batch is not a request";
            return self
                .send(message::error_response(
                    b"null",
                    code::INVALID_REQUEST,
                    text,
                ))
                .await;
        }
        let mut answers = Vec::new();
        let mut requests = Vec::new();
        for element in elements {
            let element = element.get().as_bytes();
            match Message::parse(element) {
                Ok(message) if message.kind == Kind::Request => {
                    match self.request(element, &message) {
                        Ok(request) => requests.push(request),
                        Err(answer) => answers.push(self.to_client.ready(answer)),
                    }
                }
                Ok(message) if message.kind == Kind::Notification => {
                    if message.method.as_deref() == Some("notifications/cancelled") {
                        self.cancel(element, &message);
                    }
                }
                Ok(message) if message.kind != Kind::Batch => {}
                _ => answers.push(self.to_client.ready(message::error_response(
                    b"null",
                    code::INVALID_REQUEST,
                    "a batch element is not a JSON-RPC message",
                ))),
            }
        }
        let service = self.service.clone();
        let identity = self.identity.clone();
        let to_client = self.to_client.clone();
        self.tasks.spawn(async move {
            let pending = async {
                for request in requests {
                    answers.push(answer(&service, identity.as_deref(), &to_client, request).await);
                }
                if let Some(array) = Ready::batch(answers) {
                    let _ = to_client.send_ready(array).await;
                }
            };
            service.pending(pending).await;
        });
    }
}

/// The answer to one request, ready to leave: a tool's result as shaping wrote it (with
/// the tool's redaction settings), anything else masked.
async fn answer(
    service: &Service,
    identity: Option<&Identity>,
    to_client: &Outbound,
    request: Request,
) -> Ready {
    // `envelope_read`, `envelope_search` and `envelope_list` answer from the store and the
    // catalog, not through shaping: masked like the rest.
    let name = request.params.get("name").and_then(Value::as_str);
    let shaped = !matches!(
        name,
        Some(
            drill::TOOL_NAME
                | envelope_mcp::catalog::tools::SEARCH_TOOL
                | envelope_mcp::catalog::tools::LIST_TOOL
        )
    );
    let frame = match request.method.as_str() {
        "tools/call" => match call(service, identity, to_client, request).await {
            Ok(result) if shaped => return Ready::shaped(result),
            Ok(read) => read,
            Err(error) => error,
        },
        _ => answer_other(service, identity, request).await,
    };
    to_client.ready(frame)
}

/// The answer to a request other than `tools/call`.
async fn answer_other(service: &Service, identity: Option<&Identity>, request: Request) -> Frame {
    let Request {
        raw_id,
        method,
        params,
        revision,
    } = request;
    let registry = service.dispatch().registry();
    let result = match method.as_str() {
        "ping" | "logging/setLevel" => json!({}),
        "server/discover" => discover_result(),
        "tools/list" => match service.tools_page(identity, params.get("cursor")) {
            Ok(page) => page,
            Err(e) => {
                return message::error_response(&raw_id, code::INVALID_PARAMS, &e.to_string());
            }
        },
        envelope_mcp::transport::lines::OVERSIZED_METHOD => {
            let text =
                envelope_mcp::session::oversized_text(serde_json::to_vec(&params).ok().as_deref());
            return message::error_response(&raw_id, code::INVALID_REQUEST, &text);
        }
        "resources/list" => service.relayed().resources(registry, identity).await,
        "resources/templates/list" => service.relayed().templates(registry, identity).await,
        "resources/read" => match read_resource(service, identity, &params).await {
            Ok(result) => result,
            Err((code, text)) => return message::error_response(&raw_id, code, &text),
        },
        "prompts/list" => service.relayed().prompts(registry, identity).await,
        "prompts/get" => {
            let name = params
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let arguments = params.get("arguments").cloned();
            match service
                .relayed()
                .get_prompt(registry, identity, name, arguments)
                .await
            {
                Ok(result) => result,
                Err((code, text)) => return message::error_response(&raw_id, code, &text),
            }
        }
        _ => {
            let text = format!("method not found: {method}");
            return message::error_response(&raw_id, code::METHOD_NOT_FOUND, &text);
        }
    };
    let mut result = result;
    if revision.has_result_type() {
        result["resultType"] = json!("complete");
    }
    message::response(&raw_id, result.to_string().as_bytes())
}

/// `tools/call`: `Ok` is the shaped result's answer, `Err` an error answer.
async fn call(
    service: &Service,
    identity: Option<&Identity>,
    to_client: &Outbound,
    request: Request,
) -> Result<Frame, Frame> {
    let Request {
        raw_id,
        params,
        revision,
        ..
    } = request;
    let raw_id = raw_id.as_slice();
    let Some(name) = params.get("name").and_then(Value::as_str) else {
        let text = "tools/call needs params.name, the tool's name";
        return Err(message::error_response(raw_id, code::INVALID_PARAMS, text));
    };
    let arguments = params.get("arguments").filter(|a| !a.is_null()).cloned();
    let progress = params
        .pointer("/_meta/progressToken")
        .filter(|token| token.is_string() || token.is_number())
        .map(|token| Progress {
            token: token.clone(),
            to_client: to_client.clone(),
        });
    match service
        .call_tool(name, arguments, identity, revision, progress)
        .await
    {
        Ok(result) if revision.has_result_type() => {
            let mut result: Value = serde_json::from_slice(&result).unwrap_or(Value::Null);
            result["resultType"] = json!("complete");
            Ok(message::response(raw_id, result.to_string().as_bytes()))
        }
        Ok(result) => Ok(message::response(raw_id, &result)),
        Err(error) => {
            let mut object = json!({"code": error.code, "message": error.message});
            if let Some(data) = error.data {
                object["data"] = data;
            }
            // The id as the client wrote it.
            let mut frame = br#"{"jsonrpc":"2.0","id":"#.to_vec();
            frame.extend_from_slice(raw_id);
            frame.extend_from_slice(br#","error":"#);
            frame.extend_from_slice(object.to_string().as_bytes());
            frame.push(b'}');
            Err(frame)
        }
    }
}

/// `resources/read`: an artifact of the store, or a resource of an MCP source.
async fn read_resource(
    service: &Service,
    identity: Option<&Identity>,
    params: &Value,
) -> Result<Value, (i64, String)> {
    let Some(uri) = params.get("uri").and_then(Value::as_str).map(str::to_owned) else {
        return Err((
            code::INVALID_PARAMS,
            "resources/read needs params.uri".into(),
        ));
    };
    if drill::parse_artifact_uri(&uri).is_none() {
        let registry = service.dispatch().registry();
        return service.relayed().read(registry, identity, &uri).await;
    }
    service.stats().record_read("resources/read");
    let store = service.store_for(identity);
    tokio::task::spawn_blocking(move || drill::read_resource(&uri, store.as_ref()))
        .await
        .map_err(|e| (code::INTERNAL_ERROR, e.to_string()))?
        .map_err(|e| (e.code, e.message))
}

/// The revision answered to `initialize`: the client's when known, else the newest with
/// `initialize`.
fn negotiate(params: &Value) -> Revision {
    let asked = params.get("protocolVersion").and_then(Value::as_str);
    asked
        .and_then(|asked| {
            Revision::ALL
                .into_iter()
                .find(|r| r.as_str() == asked && r.has_initialize())
        })
        .unwrap_or(LATEST_WITH_INITIALIZE)
}

fn capabilities() -> Value {
    json!({"tools": {"listChanged": false}, "resources": {}, "prompts": {}, "logging": {}})
}

fn server_info() -> Value {
    json!({"name": "envelope-serve", "version": env!("CARGO_PKG_VERSION")})
}

fn initialize_result(revision: Revision) -> Value {
    json!({
        "protocolVersion": revision.as_str(),
        "capabilities": capabilities(),
        "serverInfo": server_info(),
        "instructions": INSTRUCTIONS,
    })
}

fn discover_result() -> Value {
    let versions: Vec<&str> = Revision::ALL.iter().map(|r| r.as_str()).collect();
    json!({
        "supportedVersions": versions,
        "capabilities": capabilities(),
        "serverInfo": server_info(),
        "instructions": INSTRUCTIONS,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negotiation_keeps_known_revisions_and_falls_back_to_the_newest_with_initialize() {
        for known in ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"] {
            let params = json!({"protocolVersion": known});
            assert_eq!(negotiate(&params).as_str(), known);
        }
        for other in [
            json!({"protocolVersion": "2099-01-01"}),
            json!({"protocolVersion": "2026-07-28"}),
            json!({}),
        ] {
            assert_eq!(negotiate(&other), LATEST_WITH_INITIALIZE, "{other}");
        }
    }
}
