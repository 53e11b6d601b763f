//! What both views of `serve` do with a call: find the operation, run it where the
//! [`Dispatch`] says, and shape what comes back — a `CallToolResult` for MCP (redacted,
//! stored whole when too big, cut to the limit, with a link to the full result), an
//! operations envelope for HTTP (the library's pipeline, the same limit and store).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use envelope::shape::Offloaded;
use envelope_mcp::drill;
use envelope_mcp::message::code;
use envelope_mcp::policy::Policy;
use envelope_mcp::revision::Revision;
use envelope_mcp::shaping::{self, CallContext, OutputSchema, ToolSettings};
use envelope_mcp::stats::{CallRecord, Stats, log};
use envelope_ops::shaping::EnvelopeShaping;
use envelope_ops::{CallError, Identity, OperationSpec, OperationType, codes};
use envelope_store::Store;
use futures::StreamExt;
use serde_json::{Value, json};

mod catalog;

use crate::dispatch::Dispatch;
use crate::error::InvalidCursor;
use crate::names::ToolNames;
use crate::relayed::Relayed;
use crate::view::{self, InputForm};

/// Results up to this size (and the limit) are shaped on the calling task: a trip to a
/// blocking thread would cost more than the work.
const SHAPE_INLINE: usize = 64 * 1024;

/// How `serve` shapes and bounds calls.
#[derive(Clone)]
pub struct Settings {
    /// The most bytes of each result: a `CallToolResult` (its `result` object, compact JSON),
    /// an HTTP envelope, a subscription event; [`shaping::NO_BYTE_LIMIT`] with a token
    /// limit alone.
    pub limit: usize,
    /// The most tokens of each `CallToolResult` (and `envelope_read`, `envelope_search`,
    /// `envelope_list` answer), as its tokenizer counts the JSON text; both limits hold.
    /// The HTTP view's envelopes hold it too (offloading past the bytes the tokens hold on
    /// average, when that is less than `limit`).
    pub tokens: Option<shaping::TokenBudget>,
    /// Mask secrets in every result (on unless `--no-redact`).
    pub redact: bool,
    /// How long a call may run before it is stopped with TIMEOUT.
    pub timeout: Duration,
    /// How long a subscription may go without an event before it is stopped with TIMEOUT.
    pub idle_timeout: Duration,
    /// Where full results go.
    pub store: Arc<dyn Store>,
    /// Per-tool settings (`--policy FILE.toml`, the proxy's format): a tool's `limit`,
    /// `redact`, `pass_through` and `emit` over the ones above.
    pub policy: Policy,
    /// `store` with `--ttl`, `--max-store-bytes`, `--max-results` kept while running, when
    /// one is given (`store` is it then): each request's results are pinned until its
    /// answer is sent (see [`envelope_mcp::managed`]).
    pub managed: Option<Arc<envelope_mcp::managed::Managed>>,
    /// The catalog of stored results (`envelope_list`, `envelope_search`); `None`: those
    /// tools are not offered.
    pub catalog: Option<Arc<envelope_mcp::catalog::Catalog>>,
}

impl Settings {
    /// How tool `name`'s results are shaped.
    pub fn tool(&self, name: &str) -> ToolSettings {
        self.policy
            .tool_settings(name, self.limit, self.tokens, self.redact)
    }

    /// The command line's limits alone (no tool's table): what the answers `serve` writes
    /// itself are bounded by.
    pub fn own_answers(&self) -> ToolSettings {
        ToolSettings {
            limit: self.limit,
            tokens: self.tokens,
            ..ToolSettings::default()
        }
    }
}

impl std::fmt::Debug for Settings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Settings")
            .field("limit", &self.limit)
            .field("tokens", &self.tokens)
            .field("redact", &self.redact)
            .field("timeout", &self.timeout)
            .field("idle_timeout", &self.idle_timeout)
            .field("policy", &self.policy)
            .finish_non_exhaustive()
    }
}

/// A JSON-RPC error for a `tools/call` (the call itself is wrong, not its tool's run).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RpcError {
    /// The JSON-RPC code.
    pub code: i64,
    /// Why.
    pub message: String,
    /// Particulars (the CallError's details).
    pub data: Option<Value>,
}

/// Where a subscription's events go while it runs: `notifications/progress` with this
/// token, on this channel.
#[derive(Clone, Debug)]
pub struct Progress {
    /// The call's `_meta.progressToken`.
    pub token: Value,
    /// The session's way to the client.
    pub to_client: envelope_mcp::outbound::Outbound,
}

/// The registry served: its tools, its calls, its store.
pub struct Service {
    dispatch: Dispatch,
    names: ToolNames,
    /// Each tool's advertised `outputSchema`, compiled once (`None`: it has none).
    output_schemas: HashMap<String, Option<Arc<OutputSchema>>>,
    settings: Settings,
    stats: Arc<Stats>,
    relayed: Relayed,
}

/// The most bytes of tool JSON one `tools/list` page carries: well under the 8 MiB a client
/// message may be ([`envelope_mcp::outbound::MAX_CLIENT_MESSAGE`]); GitHub's 1,223
/// operations are 11.7 MB of tools.
pub const TOOLS_PAGE_BYTES: usize = 1 << 20;

impl Service {
    /// The service of `dispatch`'s registry.
    ///
    /// # Errors
    ///
    /// Two operation ids that give one tool name (the message names both).
    pub fn new(
        dispatch: Dispatch,
        settings: Settings,
        stats: Arc<Stats>,
    ) -> Result<Self, crate::Error> {
        let registry = dispatch.registry().clone();
        let ids: Vec<String> = registry.specs().map(OperationSpec::id).collect();
        let names = ToolNames::new(ids.iter().map(String::as_str))?;
        let own = [
            drill::TOOL_NAME,
            envelope_mcp::catalog::tools::SEARCH_TOOL,
            envelope_mcp::catalog::tools::LIST_TOOL,
        ];
        if let Some(taken) = own.iter().find(|name| names.id_of(name).is_some()) {
            return Err(crate::Error::Names(format!(
                "an operation would be the tool {taken:?}, which envelope serve adds itself: rename it"
            )));
        }
        // What the client sees in `tools/list` (an `emit` format has no outputSchema), each
        // schema compiled once for the shaping's honesty check.
        let output_schemas = registry
            .specs()
            .map(view::tool_of)
            .map(|tool| {
                let name = tool["name"].as_str().unwrap_or_default().to_owned();
                let tool = advertised(tool, &settings.tool(&name));
                let schema = tool
                    .get("outputSchema")
                    .map(|schema| Arc::new(OutputSchema::new(schema)));
                (name, schema)
            })
            .collect();
        Ok(Service {
            dispatch,
            names,
            output_schemas,
            settings,
            stats,
            relayed: Relayed::default(),
        })
    }

    /// The settings.
    /// The store as `identity` sees it: with an identity, only the results it produced
    /// (an identity with the [`ADMIN_SCOPE`] scope sees all); without one (no tokens), all
    /// of it. Every path that puts or reads a caller's result takes its store from here.
    ///
    /// With store limits, inside [`Service::pending`] the results put through it are
    /// pinned until the request's answer is sent.
    pub fn store_for(&self, identity: Option<&Identity>) -> Arc<dyn Store> {
        let base = match &self.settings.managed {
            Some(managed) => managed.current(),
            None => self.settings.store.clone(),
        };
        match identity {
            Some(identity) if !identity.scopes.iter().any(|s| s == ADMIN_SCOPE) => {
                Arc::new(envelope_store::Scoped::new(base, Some(identity.id.clone())))
            }
            _ => base,
        }
    }

    /// Runs `answer` (a request's answer, sending included) as one pending call: with
    /// store limits, the results it puts are never evicted before it is done.
    pub async fn pending<F: std::future::Future>(&self, answer: F) -> F::Output {
        match &self.settings.managed {
            Some(managed) => managed.pending(answer).await,
            None => answer.await,
        }
    }

    /// The service's settings.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The counters.
    pub fn stats(&self) -> &Arc<Stats> {
        &self.stats
    }

    /// The resources and prompts of the registry's MCP servers.
    pub fn relayed(&self) -> &Relayed {
        &self.relayed
    }

    /// Where calls run.
    pub fn dispatch(&self) -> &Dispatch {
        &self.dispatch
    }

    /// The operation of tool `name`.
    pub fn spec_of_tool(&self, name: &str) -> Option<&OperationSpec> {
        self.dispatch.registry().spec(self.names.id_of(name)?)
    }

    /// The tools `identity` may call (as the policy advertises them), then `envelope_read`.
    pub fn tools(&self, identity: Option<&Identity>) -> Vec<Value> {
        let mut tools: Vec<Value> = view::tools(self.dispatch.registry(), identity)
            .into_iter()
            .map(|tool| {
                let name = tool["name"].as_str().unwrap_or_default().to_owned();
                advertised(tool, &self.settings.tool(&name))
            })
            .collect();
        tools.push(drill::read_tool());
        tools.extend(self.catalog_tools());
        tools
    }

    /// One page of `tools/list` (MCP pagination): the tools from `cursor` (none: the first)
    /// up to [`TOOLS_PAGE_BYTES`] of JSON (at least one tool), and `nextCursor` when more
    /// follow. A list that fits is one page without a cursor, as before (clients that do
    /// not follow cursors see every tool of an ordinary registry). The cursor is the
    /// offset of the next tool, as text; one this service did not give is an error.
    ///
    /// # Errors
    ///
    /// A cursor that is not a string holding an offset within the list.
    pub fn tools_page(
        &self,
        identity: Option<&Identity>,
        cursor: Option<&Value>,
    ) -> Result<Value, InvalidCursor> {
        let tools = self.tools(identity);
        let start = match cursor {
            None | Some(Value::Null) => 0,
            Some(cursor) => cursor
                .as_str()
                .and_then(|c| c.parse::<usize>().ok())
                .filter(|&offset| offset > 0 && offset < tools.len())
                .ok_or_else(|| InvalidCursor(cursor.to_string()))?,
        };
        let mut end = start;
        let mut bytes = 0;
        for tool in &tools[start..] {
            let size = serde_json::to_vec(tool).map_or(0, |t| t.len()) + 1;
            if end > start && bytes + size > TOOLS_PAGE_BYTES {
                break;
            }
            bytes += size;
            end += 1;
        }
        let mut page = json!({ "tools": &tools[start..end] });
        if end < tools.len() {
            page["nextCursor"] = Value::from(end.to_string());
        }
        Ok(page)
    }

    /// Calls tool `name` and returns its `CallToolResult`, shaped (compact JSON).
    /// A subscription's events go to `progress` as they come (when the call has a token).
    ///
    /// # Errors
    ///
    /// An unknown tool, and bad arguments before 2025-11-25 (from then on they are an
    /// `isError` result, as the spec says).
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: Option<Value>,
        identity: Option<&Identity>,
        revision: Revision,
        progress: Option<Progress>,
    ) -> Result<Vec<u8>, RpcError> {
        let started = Instant::now();
        if name == drill::TOOL_NAME {
            return Ok(self
                .read_tool(arguments.unwrap_or(Value::Null), identity)
                .await);
        }
        if catalog::is_catalog_tool(name) {
            let arguments = arguments.clone().unwrap_or(Value::Null);
            if let Some(answer) = self.catalog_tool(name, arguments, identity).await {
                return Ok(answer);
            }
        }
        // Kept for the catalog's digest of them, should the result be stored.
        let call_arguments = self
            .settings
            .catalog
            .as_ref()
            .and(arguments.as_ref())
            .map(|a| a.to_string().into_bytes());
        let Some(spec) = self.spec_of_tool(name) else {
            return Err(RpcError {
                code: code::INVALID_PARAMS,
                message: format!("unknown tool: {name}"),
                data: None,
            });
        };
        let id = spec.id();
        let input = InputForm::of(&spec.input_schema).input(arguments);
        let outcome = match spec.kind {
            OperationType::Subscription => self.subscription(&id, input, identity, progress).await,
            _ => {
                let called = self
                    .dispatch
                    .call(&id, input, identity, self.settings.timeout)
                    .await;
                match called {
                    Ok(envelope) => Ok(self.rehydrate(envelope).await),
                    Err(error) => Err(error),
                }
            }
        };
        if let Err(error) = &outcome {
            // A failed operation is an error of its tool, and its `isError` result a call.
            self.stats.record_tool_error(name, &error.code);
            if error.code == codes::VALIDATION_ERROR && revision < Revision::V2025_11_25 {
                let error = self.redact_error(error.clone());
                return Err(RpcError {
                    code: code::INVALID_PARAMS,
                    message: error.message,
                    data: error.details,
                });
            }
        }
        let result = view::call_result(outcome);
        let shaped = self.shape(name, result, revision, identity, started).await;
        if let Some(digest) = shaped.1 {
            self.index_stored(digest, name, call_arguments, identity);
        }
        Ok(shaped.0)
    }

    /// Runs a subscription: each event to `progress` (its envelope shaped like an HTTP
    /// answer, as the notification's `message`); the result is the last event, or the error
    /// that ended it.
    async fn subscription(
        &self,
        id: &str,
        input: Value,
        identity: Option<&Identity>,
        progress: Option<Progress>,
    ) -> Result<Value, CallError> {
        let mut events = self
            .dispatch
            .subscribe(id, input, identity, self.settings.idle_timeout);
        let mut last = None;
        let mut count = 0u64;
        while let Some(event) = events.next().await {
            let envelope = self.rehydrate(event?).await;
            count += 1;
            if let Some(progress) = &progress {
                let message = match self.shape_envelope(id, &envelope, identity).await {
                    Ok(shaped) => shaped.to_string(),
                    Err(error) => self.redact_error(error).to_json(),
                };
                let note = json!({
                    "jsonrpc": "2.0",
                    "method": "notifications/progress",
                    "params": {"progressToken": progress.token, "progress": count, "message": message},
                });
                // A client gone ends the session, and the call with it.
                let _ = progress.to_client.send(note.to_string().into_bytes()).await;
            }
            last = Some(envelope);
        }
        last.ok_or_else(|| {
            CallError::new(
                codes::EXECUTION_ERROR,
                format!("{id}: the subscription completed without an event"),
            )
        })
    }

    /// `envelope_read`: a window of a stored result, on a blocking thread.
    async fn read_tool(&self, arguments: Value, identity: Option<&Identity>) -> Vec<u8> {
        self.stats.record_read("envelope_read");
        let store = self.store_for(identity);
        let settings = self.settings.own_answers();
        let result = tokio::task::spawn_blocking(move || {
            shaping::answer_within(&settings, |limit| {
                drill::call_read(&arguments, store.as_ref(), limit)
            })
        })
        .await
        .unwrap_or_else(|e| {
            json!({"content": [{"type": "text", "text": format!("envelope_read failed: {e}")}], "isError": true})
        });
        result.to_string().into_bytes()
    }

    /// A `CallToolResult` shaped to the limit (see [`shaping::shape_result`]); a big one on a
    /// blocking thread. A result that cannot be shaped becomes an `isError` result saying
    /// why: it may be over the limit or hold a secret, so it is never sent as it is.
    /// Counted as a call of `tool` that `started` then.
    async fn shape(
        &self,
        tool: &str,
        result: Value,
        revision: Revision,
        identity: Option<&Identity>,
        started: Instant,
    ) -> (Vec<u8>, Option<envelope_store::Digest>) {
        let bytes = result.to_string().into_bytes();
        let call = CallContext {
            tool: tool.to_owned(),
            output_schema: self.output_schemas.get(tool).cloned().flatten(),
            revision,
            offers_search: self.settings.catalog.is_some(),
        };
        let settings = self.settings.tool(tool);
        let store = self.store_for(identity);
        // In place when small and within the limit: a result over it is written to the store,
        // which may be a network away (S3) and must not hold up this task's thread.
        let in_place = bytes.len() <= settings.surely_fits().min(SHAPE_INLINE);
        let run = move || {
            let shaped = shaping::shape_result(&bytes, &call, &settings, store.as_ref());
            (shaped, bytes.len())
        };
        let (shaped, bytes_in) = if in_place {
            run()
        } else {
            match tokio::task::spawn_blocking(run).await {
                Ok(done) => done,
                Err(e) => return (shaping_failed(tool, &e.to_string(), &self.stats), None),
            }
        };
        match shaped {
            Ok(outcome) => {
                self.stats.record_call(
                    tool,
                    CallRecord {
                        bytes_in: bytes_in as u64,
                        bytes_out: outcome.bytes.len() as u64,
                        tokens_out: outcome.shaped_tokens.map(|t| t as u64),
                        offloaded: outcome.stored.is_some(),
                        redactions: outcome.redactions as u64,
                        elapsed: started.elapsed(),
                    },
                );
                (outcome.bytes, outcome.stored)
            }
            Err(e) => (shaping_failed(tool, &e.to_string(), &self.stats), None),
        }
    }

    /// Calls operation `id` for the HTTP view: its envelope shaped to the limit (payload
    /// offloaded to the store, the rest cut, secrets masked), or the CallError with its
    /// message and details redacted.
    ///
    /// # Errors
    ///
    /// The call's CallError, or EXECUTION_ERROR when the envelope cannot be shaped.
    pub async fn execute(
        &self,
        id: &str,
        input: Value,
        identity: Option<&Identity>,
    ) -> Result<Value, CallError> {
        let started = Instant::now();
        let tool = crate::tool_name(id);
        let outcome = self
            .dispatch
            .call(id, input, identity, self.settings.timeout)
            .await;
        let envelope = match outcome {
            Ok(envelope) => self.rehydrate(envelope).await,
            Err(error) => {
                self.stats.record_tool_error(&tool, &error.code);
                return Err(self.redact_error(error));
            }
        };
        match self.shape_counted(id, &envelope, identity).await {
            Ok((shaped, mut record)) => {
                record.elapsed = started.elapsed();
                self.stats.record_call(&tool, record);
                Ok(shaped)
            }
            Err(error) => {
                self.stats.record_tool_error(&tool, "shaping");
                Err(error)
            }
        }
    }

    /// [`Service::shape_envelope`] for a call of the HTTP view, with what it did for the
    /// counters (bytes in and out, offloaded, redactions).
    async fn shape_counted(
        &self,
        id: &str,
        envelope: &Value,
        identity: Option<&Identity>,
    ) -> Result<(Value, CallRecord), CallError> {
        let settings = self.settings.tool(&crate::tool_name(id));
        if settings.pass_through {
            let size = json_size(envelope);
            let record = CallRecord {
                bytes_in: size,
                bytes_out: size,
                ..CallRecord::default()
            };
            return Ok((envelope.clone(), record));
        }
        let (shaping, limit) = self.envelope_shaping(&settings, identity);
        let run = move |bytes: Vec<u8>| -> Result<(Value, CallRecord), CallError> {
            let failed = |e: String| CallError::new(codes::EXECUTION_ERROR, e);
            let shaped = shaping
                .shape(&bytes)
                .map_err(|e| failed(format!("the envelope could not be shaped: {e}")))?;
            let value = serde_json::from_slice(&shaped.bytes)
                .map_err(|e| failed(format!("the shaped envelope is not JSON: {e}")))?;
            let record = CallRecord {
                bytes_in: bytes.len() as u64,
                bytes_out: shaped.bytes.len() as u64,
                tokens_out: None,
                offloaded: matches!(shaped.offloaded, Offloaded::Stored { .. }),
                redactions: shaped.redactions.len() as u64,
                elapsed: Duration::ZERO,
            };
            Ok((value, record))
        };
        // In place when it surely fits (as for results, see `shape`).
        if fits_in(envelope, limit.min(SHAPE_INLINE)) {
            let bytes = serde_json::to_vec(envelope).expect("a JSON value serialises");
            return run(bytes);
        }
        let envelope = envelope.clone();
        tokio::task::spawn_blocking(move || {
            run(serde_json::to_vec(&envelope).expect("a JSON value serialises"))
        })
        .await
        .map_err(|e| CallError::new(codes::EXECUTION_ERROR, e.to_string()))?
    }

    /// An envelope whose payload was offloaded before it got here (a worker's `--limit`
    /// put it in the store this service shares), with its payload back from the store
    /// (verified against its digest), so that it is shaped like any other: an MCP result's
    /// `structuredContent` is the data, not a summary of it. Left as it is when the store
    /// does not have it.
    pub async fn rehydrate(&self, mut envelope: Value) -> Value {
        let Some(digest) = offloaded_digest(&envelope) else {
            return envelope;
        };
        let store = self.settings.store.clone();
        let shown = digest.to_string();
        let read = tokio::task::spawn_blocking(move || store.get(&digest)).await;
        let data = match read {
            Ok(Ok(bytes)) => serde_json::from_slice::<Value>(&bytes).map_err(|e| e.to_string()),
            Ok(Err(e)) => Err(e.to_string()),
            Err(e) => Err(e.to_string()),
        };
        match data {
            Ok(data) => {
                envelope["data"] = data;
                if let Some(meta) = envelope["meta"].as_object_mut() {
                    meta.remove("artifact");
                }
            }
            Err(error) => log::warn(
                "serve.artifact_unreadable",
                &[("digest", shown.into()), ("error", error.into())],
            ),
        }
        envelope
    }

    /// How an operations envelope of a tool with `settings` is shaped for `identity`: its byte
    /// limit and its token limit (both hold), large payloads offloaded past the byte limit or
    /// the bytes the token limit holds on average; and that offload threshold.
    fn envelope_shaping(
        &self,
        settings: &shaping::ToolSettings,
        identity: Option<&Identity>,
    ) -> (EnvelopeShaping, usize) {
        let threshold = settings.byte_estimate();
        let shaping = EnvelopeShaping {
            limit: (settings.limit != shaping::NO_BYTE_LIMIT).then_some(settings.limit),
            inline_threshold: Some(threshold),
            store: Some(self.store_for(identity)),
            redact: settings.redact,
            tokens: settings.tokens.map(|t| (t.limit, t.tokenizer.clone())),
            reserve_tokens: 0,
        };
        (shaping, threshold)
    }

    /// An envelope of operation `id` shaped to its tool's limit (the policy's, else
    /// `--limit`), on a blocking thread when it is big; as it is for a `pass_through` tool.
    pub async fn shape_envelope(
        &self,
        id: &str,
        envelope: &Value,
        identity: Option<&Identity>,
    ) -> Result<Value, CallError> {
        let settings = self.settings.tool(&crate::tool_name(id));
        if settings.pass_through {
            return Ok(envelope.clone());
        }
        let (shaping, limit) = self.envelope_shaping(&settings, identity);
        // In place when it surely fits (as for results, see `shape`).
        if fits_in(envelope, limit.min(SHAPE_INLINE)) {
            return shaping.shape_value(envelope);
        }
        let envelope = envelope.clone();
        tokio::task::spawn_blocking(move || shaping.shape_value(&envelope))
            .await
            .map_err(|e| CallError::new(codes::EXECUTION_ERROR, e.to_string()))?
    }

    /// A CallError with the secrets of its message and details masked (a command's stderr
    /// may hold one).
    pub fn redact_error(&self, error: CallError) -> CallError {
        if !self.settings.redact {
            return error;
        }
        let Ok(mut value) = serde_json::to_value(&error) else {
            return error;
        };
        let mut report = Vec::new();
        envelope::shape::redact::redact_value(&mut value, "error", &mut report);
        if report.is_empty() {
            return error;
        }
        serde_json::from_value(value).unwrap_or(error)
    }
}

/// The scope that reads every caller's stored results (with tokens, a caller reads only
/// its own).
pub const ADMIN_SCOPE: &str = "admin";

/// A tool as its settings advertise it (no `outputSchema` when it emits another format).
fn advertised(tool: Value, settings: &ToolSettings) -> Value {
    shaping::advertised_tool(&tool, settings).unwrap_or(tool)
}

/// The digest of an envelope's offloaded payload: `data` is `{summary, artifact}` and
/// `meta.artifact` names the same digest.
fn offloaded_digest(envelope: &Value) -> Option<envelope_store::Digest> {
    let data = envelope.get("data")?.as_object()?;
    let artifact = data.get("artifact")?.as_str()?;
    let offloaded = data.len() == 2
        && data.contains_key("summary")
        && envelope.pointer("/meta/artifact").and_then(Value::as_str) == Some(artifact);
    offloaded.then(|| artifact.parse().ok()).flatten()
}

/// Whether a value's JSON is at most about `budget` bytes (cheaply estimated, not exact: a
/// big value is big in its strings or in its number of items).
fn fits_in(value: &Value, budget: usize) -> bool {
    fn size(value: &Value, budget: &mut isize) {
        if *budget < 0 {
            return;
        }
        match value {
            Value::String(s) => *budget -= s.len() as isize + 2,
            Value::Array(items) => {
                for item in items {
                    size(item, budget);
                }
            }
            Value::Object(members) => {
                for (key, member) in members {
                    *budget -= key.len() as isize + 4;
                    size(member, budget);
                }
            }
            _ => *budget -= 8,
        }
    }
    let mut budget = budget as isize;
    size(value, &mut budget);
    budget >= 0
}

/// The bytes of a value's compact JSON, counted, not written.
fn json_size(value: &Value) -> u64 {
    struct Count(u64);
    impl std::io::Write for Count {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0 += bytes.len() as u64;
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    let _ = serde_json::to_writer(&mut count, value);
    count.0
}

/// The result sent when shaping fails: an error the client can read, nothing of the
/// unshaped result.
fn shaping_failed(tool: &str, error: &str, stats: &Stats) -> Vec<u8> {
    log::error(
        "shaping.failed",
        &[("tool", tool.into()), ("error", error.into())],
    );
    stats.record_tool_error(tool, "shaping");
    let text = format!("envelope serve could not shape the result of {tool}: {error}");
    json!({"content": [{"type": "text", "text": text}], "isError": true})
        .to_string()
        .into_bytes()
}
