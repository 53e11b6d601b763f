//! from_openapi: an OpenAPI 3.0 / 3.1 service as a source of operations (`openapi.<ns>` in
//! the registry file). One operation per path and method; execute is an HTTP request; the
//! response an `http` envelope. See docs/operations.md, "from_openapi".
//!
//! ```text
//! document (path|URL, JSON|YAML) ─► refs resolved ─► derive: spec + endpoint per path/method
//!   execute: input ─► request (params where they belong, style/explode) ─► response ─► envelope
//!   SSE:     input ─► request ─► events ─► one envelope per event
//! ```

pub mod body;
pub mod cache;
pub mod derive;
pub mod document;
pub mod refs;
pub mod relax;
mod request;
pub mod sse;
pub mod style;
pub mod swagger;

use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use futures::StreamExt;
use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderName, HeaderValue};
use serde_json::{Value, json};

use crate::context::Context;
use crate::error::{CallError, RegistryError, codes};
use crate::file::{AuthConfig, AuthKind, OpenApiConfig};
use crate::handler::{Handler, HandlerError, HandlerFuture, ItemStream};
use crate::source::{OperationSource, Operations, SourceFuture};
use derive::Endpoint;
use request::Target;

/// How long a request may take when the source sets no `timeout`.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// An error with its causes (reqwest's own message leaves out what failed): the proxy's
/// HTTP client's rendering.
pub(crate) use envelope_mcp::transport::http_client::with_causes as error_chain;

/// `openapi.<ns>`: the operations of one OpenAPI document.
pub struct OpenApiSource {
    namespace: String,
    config: OpenApiConfig,
    /// The folder of the registry file: a relative `spec` path is read from there.
    dir: Option<std::path::PathBuf>,
    /// What the document held that was read with a warning ([`relax`]).
    warnings: std::sync::Mutex<Vec<String>>,
    /// The last load was read back from the cache (its schemas compiled before).
    cached: std::sync::atomic::AtomicBool,
}

impl OpenApiSource {
    /// The source `openapi.<namespace>` of `config`; relative paths from `dir`.
    pub fn new(namespace: &str, config: OpenApiConfig, dir: Option<std::path::PathBuf>) -> Self {
        OpenApiSource {
            namespace: namespace.to_owned(),
            config,
            dir,
            warnings: Default::default(),
            cached: Default::default(),
        }
    }

    async fn load(&self) -> Result<Operations, String> {
        let timeout = self.config.timeout.unwrap_or(DEFAULT_TIMEOUT);
        let (text, location) =
            document::load(&self.config.spec, self.dir.as_deref(), timeout).await?;
        let keep_ids = self.config.keep_ids;
        let entry = cache::folder(self.config.cache.as_ref(), self.dir.as_deref()).map(|folder| {
            cache::Entry::new(folder, &self.namespace, &self.config.spec, keep_ids, &text)
        });
        let read_back = entry.as_ref().and_then(cache::Entry::read);
        self.cached
            .store(read_back.is_some(), std::sync::atomic::Ordering::Relaxed);
        let derived = match read_back {
            Some(derived) => derived,
            None => {
                let derived = self.derive(&text, &location)?;
                // Kept only when every schema compiles: read back, they are compiled on
                // first use (`compiled_before`).
                if let Some(entry) = &entry
                    && derived.operations.iter().all(|(spec, _)| {
                        crate::schema::compiles(&spec.input_schema)
                            && (crate::spec::is_unknown_schema(&spec.output_schema)
                                || crate::schema::compiles(&spec.output_schema))
                    })
                {
                    entry.write(&derived);
                }
                derived
            }
        };
        drop(text);
        *self.warnings.lock().unwrap_or_else(|e| e.into_inner()) = relax::listed(
            derived
                .warnings
                .into_iter()
                .map(|w| format!("{}: {w}", location.shown))
                .collect(),
        );
        let base_url = self.base_url(derived.server, &location)?;
        let target = Arc::new(Target {
            base_url,
            headers: self.headers()?,
            timeout,
            client: reqwest::Client::builder()
                .build()
                .map_err(|e| format!("the HTTP client: {}", error_chain(&e)))?,
            source: format!("openapi.{}", self.namespace),
        });
        let mut operations = derived.operations;
        crate::source::rename(
            &self.config.rename,
            operations.iter_mut().map(|(spec, _)| spec),
        )?;
        // With `baseUrl` every request goes there (a mock, a proxy, an enterprise host);
        // without it an operation's own server, resolved as the document's are.
        for (_, endpoint) in &mut operations {
            endpoint.server = match (&self.config.base_url, endpoint.server.take()) {
                (None, Some(server)) if location.url.is_none() && !is_absolute(&server) => {
                    // A relative server of a local document: against the base URL.
                    let base = reqwest::Url::parse(&format!("{}/", target.base_url))
                        .and_then(|base| base.join(&server))
                        .map_err(|e| format!("{}: server {server:?}: {e}", location.shown))?;
                    Some(base.as_str().trim_end_matches('/').to_owned())
                }
                (None, Some(server)) => Some(self.resolved(server, &location)?),
                _ => None,
            };
        }
        Ok(operations
            .into_iter()
            .map(|(mut spec, endpoint)| {
                if let Some(access) = &self.config.access_control {
                    spec.access_control = access.clone();
                }
                let handler = HttpHandler {
                    target: target.clone(),
                    endpoint,
                    output_schema: spec.output_schema.clone(),
                };
                (spec, Box::new(handler) as Box<dyn Handler>)
            })
            .collect())
    }

    /// What the document gives, before the configuration applies: parsed, relaxed, its
    /// refs resolved, its operations derived (what [`cache`] keeps).
    fn derive(&self, text: &str, location: &document::Location) -> Result<cache::Derived, String> {
        let (mut doc, version) =
            document::parse(text).map_err(|e| format!("{}: {e}", location.shown))?;
        let warnings = relax::relax(&mut doc, version);
        let doc = refs::resolve(&doc).map_err(|e| format!("{}: {e}", location.shown))?;
        let operations = derive::operations(&doc, &self.namespace, version, self.config.keep_ids)
            .map_err(|e| format!("{}: {e}", location.shown))?;
        Ok(cache::Derived {
            warnings,
            server: derive::server_url(&doc["servers"]),
            operations,
        })
    }

    /// `baseUrl` from the configuration, else the document's first server (a relative one
    /// resolved against the document's URL), without a trailing `/`.
    fn base_url(
        &self,
        document_server: Option<String>,
        location: &document::Location,
    ) -> Result<String, String> {
        let server = match &self.config.base_url {
            Some(url) => url.clone(),
            None => document_server.unwrap_or_default(),
        };
        self.resolved(server, location)
    }

    /// A server URL made absolute against the document's URL, without a trailing `/`.
    fn resolved(&self, server: String, location: &document::Location) -> Result<String, String> {
        let absolute = if is_absolute(&server) {
            server
        } else if let Some(url) = &location.url {
            url.join(&server)
                .map(|u| u.to_string())
                .map_err(|e| e.to_string())?
        } else {
            return Err(format!(
                "{}: no absolute server URL (the document has {server:?}): set `baseUrl`",
                location.shown
            ));
        };
        Ok(absolute.trim_end_matches('/').to_owned())
    }

    /// The configured headers, then the auth header from the environment.
    fn headers(&self) -> Result<HeaderMap, String> {
        let mut headers = HeaderMap::new();
        for (name, value) in &self.config.headers {
            let name =
                HeaderName::try_from(name.as_str()).map_err(|e| format!("header {name:?}: {e}"))?;
            let value =
                HeaderValue::try_from(value.as_str()).map_err(|e| format!("header {name}: {e}"))?;
            headers.insert(name, value);
        }
        if let Some(auth) = &self.config.auth {
            let (name, value) = auth_header(auth)?;
            headers.insert(name, value);
        }
        Ok(headers)
    }
}

fn is_absolute(url: &str) -> bool {
    url.starts_with("http://") || url.starts_with("https://")
}

/// The header of `auth`, its secret read from the environment variable it names.
fn auth_header(auth: &AuthConfig) -> Result<(HeaderName, HeaderValue), String> {
    let token = std::env::var(&auth.token_env).map_err(|_| {
        format!(
            "auth: the environment variable {} is not set",
            auth.token_env
        )
    })?;
    let prefix = auth.prefix.clone().unwrap_or_default();
    let (name, value) = match auth.kind {
        AuthKind::Bearer => (AUTHORIZATION, format!("Bearer {prefix}{token}")),
        AuthKind::Basic => (
            AUTHORIZATION,
            format!(
                "Basic {}",
                base64::engine::general_purpose::STANDARD.encode(token.as_bytes())
            ),
        ),
        AuthKind::ApiKey => {
            let header = auth.header_name.as_deref().unwrap_or("X-API-Key");
            let name = HeaderName::try_from(header).map_err(|e| format!("auth headerName: {e}"))?;
            (name, format!("{prefix}{token}"))
        }
    };
    let mut value = HeaderValue::try_from(value).map_err(|e| format!("auth: {e}"))?;
    value.set_sensitive(true);
    Ok((name, value))
}

impl OperationSource for OpenApiSource {
    fn name(&self) -> String {
        format!("openapi.{}", self.namespace)
    }

    fn operations(&self) -> SourceFuture<'_> {
        Box::pin(async move {
            self.load()
                .await
                .map_err(|message| RegistryError::Unavailable { message })
        })
    }

    fn compiled_before(&self) -> bool {
        self.cached.load(std::sync::atomic::Ordering::Relaxed)
    }

    fn warnings(&self) -> Vec<String> {
        std::mem::take(&mut *self.warnings.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

/// One operation: its endpoint on the source's target.
struct HttpHandler {
    target: Arc<Target>,
    endpoint: Endpoint,
    output_schema: Value,
}

impl Handler for HttpHandler {
    fn call<'a>(&'a self, input: Value, _context: &'a Context) -> HandlerFuture<'a> {
        Box::pin(async move {
            // Called once, a streaming operation that offers more asks for the rest (JSON).
            let others = match self.endpoint.answers_once {
                true => Some(
                    self.endpoint
                        .accept
                        .iter()
                        .filter(|t| !derive::is_event_stream(t))
                        .cloned()
                        .collect::<Vec<_>>()
                        .join(", "),
                ),
                false => None,
            };
            let request = request::build(&self.target, &self.endpoint, &input, others.as_deref())?;
            let response = request::send(&self.target, request).await?;
            let answer = match self.endpoint.envelope_api {
                true => request::served_envelope(&self.target, response).await,
                false => request::envelope(&self.target, response, &self.output_schema).await,
            };
            answer.map_err(HandlerError::Call)
        })
    }

    fn answers_once(&self) -> bool {
        self.endpoint.answers_once
    }

    /// An event-stream operation: one envelope per event (`data` parsed as JSON when it
    /// is; `meta.sseEvent` and `meta.sseId` when the event has them). A plain operation:
    /// its one result.
    fn subscribe<'a>(&'a self, input: Value, context: &'a Context) -> ItemStream<'a> {
        if !self.endpoint.streaming {
            return Box::pin(futures::stream::once(self.call(input, context)));
        }
        let start = async move {
            let request = request::build(
                &self.target,
                &self.endpoint,
                &input,
                Some("text/event-stream"),
            )?
            // A stream lasts: no overall timeout (the consumer's idle timeout applies).
            .timeout(Duration::from_secs(365 * 24 * 3600));
            let response = request::send(&self.target, request).await?;
            if !response.status().is_success() {
                return Err(request::envelope(&self.target, response, &json!({}))
                    .await
                    .err()
                    .unwrap_or_else(|| {
                        CallError::new(codes::EXECUTION_ERROR, "unexpected status")
                    }));
            }
            Ok(response)
        };
        let events = futures::stream::once(start).flat_map(move |started| match started {
            Err(e) => futures::stream::once(async move { Err(HandlerError::Call(e)) }).boxed(),
            Ok(response) => {
                let status = response.status().as_u16();
                let headers = request::header_map(response.headers());
                let mut parser = sse::SseParser::default();
                let source = self.target.source.clone();
                let served = self.endpoint.envelope_api;
                response
                    .bytes_stream()
                    .map(move |chunk| match chunk {
                        Ok(bytes) => {
                            let mut items: Vec<_> = parser
                                .feed(&bytes)
                                .into_iter()
                                .map(|event| match served {
                                    true => served_event(&source, event),
                                    false => Ok(sse_envelope(status, &headers, event)),
                                })
                                .collect();
                            // An error item ends the subscription (Registry::subscribe).
                            if parser.buffered() > sse::MAX_EVENT {
                                items.push(Err(HandlerError::Call(
                                    CallError::new(
                                        codes::EXECUTION_ERROR,
                                        format!(
                                            "{source}: an event of more than {} bytes (stopped)",
                                            sse::MAX_EVENT
                                        ),
                                    )
                                    .with_details(json!({ "maxEventBytes": sse::MAX_EVENT })),
                                )));
                            }
                            items
                        }
                        Err(e) => vec![Err(HandlerError::Call(CallError::new(
                            codes::EXECUTION_ERROR,
                            format!("{source}: the event stream broke: {}", error_chain(&e)),
                        )))],
                    })
                    .flat_map(futures::stream::iter)
                    .boxed()
            }
        });
        Box::pin(events)
    }
}

/// One server-sent event as an `http` envelope.
/// An event of `envelope serve`'s HTTP view: its envelope as it is; an `error` event is the
/// CallError it holds (and ends the stream).
fn served_event(source: &str, event: sse::SseEvent) -> Result<Value, HandlerError> {
    let parsed = serde_json::from_str::<Value>(&event.data).ok();
    match (event.event.as_deref(), parsed) {
        (Some("error"), Some(error)) => Err(HandlerError::Call(request::served_error(
            source, 500, error,
        ))),
        (None | Some("message"), Some(envelope)) if crate::wrap::is_envelope(&envelope) => {
            Ok(envelope)
        }
        _ => Err(HandlerError::Call(CallError::new(
            codes::EXECUTION_ERROR,
            format!("{source}: an event that is not an envelope of envelope serve"),
        ))),
    }
}

fn sse_envelope(
    status: u16,
    headers: &serde_json::Map<String, Value>,
    event: sse::SseEvent,
) -> Value {
    let data = serde_json::from_str(&event.data).unwrap_or(Value::String(event.data));
    let mut meta = request::meta(status, headers.clone(), "text/event-stream");
    if let Some(name) = event.event {
        meta.insert("sseEvent".into(), name.into());
    }
    if let Some(id) = event.id {
        meta.insert("sseId".into(), id.into());
    }
    json!({ "data": data, "meta": meta })
}
