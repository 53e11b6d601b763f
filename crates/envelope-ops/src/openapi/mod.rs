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
mod lazy;
pub mod media;
pub mod refs;
pub mod relax;
mod request;
pub mod share;
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

/// What a document gives, before a source's configuration applies: parsed, relaxed, its
/// refs resolved, its operations derived (what [`cache`] keeps).
fn derive_document(
    text: &str,
    location: &document::Location,
    namespace: &str,
    keep_ids: bool,
) -> Result<cache::Derived, String> {
    let (mut doc, version) =
        document::parse(text).map_err(|e| format!("{}: {e}", location.shown))?;
    let warnings = relax::relax(&mut doc, version);
    let doc = refs::resolve(&doc).map_err(|e| format!("{}: {e}", location.shown))?;
    let operations = derive::operations(&doc, namespace, version, keep_ids)
        .map_err(|e| format!("{}: {e}", location.shown))?;
    Ok(cache::Derived {
        warnings,
        server: derive::server_url(&doc["servers"]),
        operations,
    })
}

/// `openapi.<ns>`: the operations of one OpenAPI document.
pub struct OpenApiSource {
    namespace: String,
    config: OpenApiConfig,
    /// The folder of the registry file: a relative `spec` path is read from there.
    dir: Option<std::path::PathBuf>,
    /// What the document held that was read with a warning ([`relax`]).
    warnings: std::sync::Mutex<Vec<String>>,
    /// The schemas of the last load's operations are known to compile.
    cached: std::sync::atomic::AtomicBool,
    /// The last load's operations read back from the cache: built on first use.
    deferred: std::sync::Mutex<Vec<crate::source::Deferred>>,
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
            deferred: Default::default(),
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
        if let Some(entry) = &entry
            && let Some(reader) = entry.open()
        {
            self.deferred_from(reader, entry.clone(), text, location, timeout)?;
            return Ok(Vec::new());
        }
        let derived = derive_document(&text, &location, &self.namespace, keep_ids)?;
        drop(text);
        // Every schema compiled once here: the entry is kept only when all do, and the
        // registry then compiles each on first use instead of again now (a first load
        // compiled them twice).
        let compiles = derived.operations.iter().all(|(spec, _)| {
            crate::schema::compiles(&spec.input_schema)
                && (crate::spec::is_unknown_schema(&spec.output_schema)
                    || crate::schema::compiles(&spec.output_schema))
        });
        if compiles && let Some(entry) = &entry {
            entry.write(&derived);
        }
        self.cached
            .store(compiles, std::sync::atomic::Ordering::Relaxed);
        self.set_warnings(derived.warnings, &location);
        let target = self.target(derived.server, &location, timeout)?;
        let mut operations = derived.operations;
        crate::source::rename(
            &self.config.rename,
            operations.iter_mut().map(|(spec, _)| spec),
        )?;
        for (_, endpoint) in &mut operations {
            endpoint.server = self.endpoint_server(endpoint.server.take(), &target, &location)?;
        }
        Ok(operations
            .into_iter()
            .map(|(spec, endpoint)| self.finish(spec, endpoint, &target))
            .collect())
    }

    /// The operations of a kept derivation, registered by id and read from the entry
    /// when first needed (`deferred`): a call of one operation reads and builds that one.
    /// Names (`rename`) and servers are checked now, as a derivation's are.
    fn deferred_from(
        &self,
        reader: cache::Reader,
        entry: cache::Entry,
        text: String,
        location: document::Location,
        timeout: Duration,
    ) -> Result<(), String> {
        self.set_warnings(reader.warnings().to_vec(), &location);
        let target = self.target(reader.server().map(str::to_owned), &location, timeout)?;
        let mut names: Vec<crate::spec::OperationSpec> = reader
            .listed()
            .iter()
            .map(|op| crate::spec::OperationSpec::new(&op.namespace, &op.name, op.kind))
            .collect();
        crate::source::rename(&self.config.rename, names.iter_mut())?;
        let servers = reader
            .listed()
            .iter()
            .map(|op| self.endpoint_server(op.server.clone(), &target, &location))
            .collect::<Result<Vec<_>, _>>()?;
        // Should a piece of the entry be damaged, the document is derived again: a fetched
        // one from its text (kept), a file read again.
        let again = match location.url {
            Some(_) => lazy::Again::Text(text.into()),
            None => lazy::Again::File(location.shown.clone().into()),
        };
        let kept = Arc::new(lazy::Kept {
            reader,
            entry,
            again,
            namespace: self.namespace.clone(),
            spec: self.config.spec.clone(),
            keep_ids: self.config.keep_ids,
            location,
            rederived: Default::default(),
            finish: lazy::Finish {
                target,
                access_control: self.config.access_control.clone(),
            },
        });
        let deferred = names
            .into_iter()
            .zip(servers)
            .enumerate()
            .map(|(i, (named, server))| {
                let kept = kept.clone();
                let name = named.name.clone();
                crate::source::Deferred {
                    namespace: named.namespace,
                    name: named.name,
                    load: Box::new(move || kept.operation(i, &name, server.clone())),
                }
            })
            .collect();
        *self.deferred.lock().unwrap_or_else(|e| e.into_inner()) = deferred;
        Ok(())
    }

    fn set_warnings(&self, warnings: Vec<String>, location: &document::Location) {
        *self.warnings.lock().unwrap_or_else(|e| e.into_inner()) = relax::listed(
            warnings
                .into_iter()
                .map(|w| format!("{}: {w}", location.shown))
                .collect(),
        );
    }

    /// Where the requests go: the base URL, the headers, the client.
    fn target(
        &self,
        document_server: Option<String>,
        location: &document::Location,
        timeout: Duration,
    ) -> Result<Arc<Target>, String> {
        Ok(Arc::new(Target {
            base_url: self.base_url(document_server, location)?,
            headers: self.headers()?,
            timeout,
            client: reqwest::Client::builder()
                .build()
                .map_err(|e| format!("the HTTP client: {}", error_chain(&e)))?,
            source: format!("openapi.{}", self.namespace),
        }))
    }

    /// An operation's own server resolved: with `baseUrl` every request goes there (a
    /// mock, a proxy, an enterprise host); without it an operation's own server, resolved
    /// as the document's are.
    fn endpoint_server(
        &self,
        server: Option<String>,
        target: &Target,
        location: &document::Location,
    ) -> Result<Option<String>, String> {
        Ok(match (&self.config.base_url, server) {
            (None, Some(server)) if location.url.is_none() && !is_absolute(&server) => {
                // A relative server of a local document: against the base URL.
                let base = reqwest::Url::parse(&format!("{}/", target.base_url))
                    .and_then(|base| base.join(&server))
                    .map_err(|e| format!("{}: server {server:?}: {e}", location.shown))?;
                Some(base.as_str().trim_end_matches('/').to_owned())
            }
            (None, Some(server)) => Some(self.resolved(server, location)?),
            _ => None,
        })
    }

    /// An operation with the source's configuration applied, and its handler.
    fn finish(
        &self,
        spec: crate::spec::OperationSpec,
        endpoint: Endpoint,
        target: &Arc<Target>,
    ) -> (crate::spec::OperationSpec, Box<dyn Handler>) {
        lazy::Finish {
            target: target.clone(),
            access_control: self.config.access_control.clone(),
        }
        .apply(spec, endpoint)
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

    fn deferred(&self) -> Vec<crate::source::Deferred> {
        std::mem::take(&mut *self.deferred.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

/// One operation: its endpoint on the source's target.
pub(crate) struct HttpHandler {
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
                        .filter(|t| !media::is_event_stream(t))
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
