//! The registry of operations and `execute`: look up → access → validate input → handler
//! → wrap → check output (a warning) → cast → envelope.

use std::collections::BTreeMap;
use std::pin::Pin;

use futures::{Stream, StreamExt};
use serde_json::{Value, json};

use crate::access;
use crate::cast::cast;
use crate::context::Context;
use crate::error::{CallError, RegistryError, codes};
use crate::handler::{Handler, HandlerError};
use crate::schema::Compiled;
use crate::spec::{OperationSpec, OperationType, is_unknown_schema};
use crate::update::{Inbox, Updater};
use crate::wrap;

/// A registered operation: ready, or deferred until it is first needed.
struct Operation {
    id: String,
    state: State,
}

enum State {
    Ready(Ready),
    /// Registered by id only ([`Registry::register_deferred`]): its spec, handler and
    /// schemas are built by `load` on first use (a one-shot call of one operation of a
    /// large OpenAPI source builds that one, not thousands).
    Deferred {
        load: Loader,
        cell: std::sync::OnceLock<Result<Ready, String>>,
    },
}

/// What builds a deferred operation's spec and handler (see [`Registry::register_deferred`]).
pub type Loader = Box<dyn Fn() -> Result<(OperationSpec, Box<dyn Handler>), String> + Send + Sync>;

/// An operation's spec, handler and schemas.
struct Ready {
    id: String,
    spec: OperationSpec,
    handler: Box<dyn Handler>,
    input: Schema,
    /// `None` when the output schema is unknown (nothing checked, nothing cast).
    output: Option<Schema>,
}

/// A schema compiled at registration, or on first use when it is known to compile
/// ([`Registry::register_compiled_before`]).
enum Schema {
    Now(Compiled),
    Later(std::sync::OnceLock<Compiled>),
}

impl Operation {
    /// The operation built (a deferred one on first use, then kept).
    fn ready(&self) -> Result<&Ready, String> {
        match &self.state {
            State::Ready(ready) => Ok(ready),
            State::Deferred { load, cell } => cell
                .get_or_init(|| Ready::deferred(&self.id, load))
                .as_ref()
                .map_err(Clone::clone),
        }
    }

    /// Its spec, for a look that keeps nothing: a deferred operation not built yet is
    /// built for `f` and dropped after it.
    fn with_spec<T>(&self, f: impl FnOnce(&OperationSpec) -> T) -> Result<T, String> {
        match &self.state {
            State::Deferred { load, cell } if cell.get().is_none() => {
                let (spec, _) = load()?;
                Ok(f(&spec))
            }
            _ => self.ready().map(|ready| f(&ready.spec)),
        }
    }
}

impl Ready {
    fn deferred(id: &str, load: &Loader) -> Result<Ready, String> {
        let (spec, handler) = load()?;
        if spec.id() != id {
            return Err(format!("{id}: its source gave {} instead", spec.id()));
        }
        // Known to compile (the source's promise): compiled on first use.
        let output = match is_unknown_schema(&spec.output_schema) {
            true => None,
            false => Some(Schema::Later(Default::default())),
        };
        Ok(Ready {
            id: id.to_owned(),
            spec,
            handler,
            input: Schema::Later(Default::default()),
            output,
        })
    }

    fn input(&self) -> &Compiled {
        self.input.get(&self.spec.input_schema)
    }

    fn output(&self) -> Option<&Compiled> {
        self.output
            .as_ref()
            .map(|schema| schema.get(&self.spec.output_schema))
    }
}

impl Schema {
    fn get(&self, schema: &Value) -> &Compiled {
        match self {
            Schema::Now(compiled) => compiled,
            // Known to compile; should it not, it accepts nothing (every call a finding).
            Schema::Later(cell) => cell.get_or_init(|| {
                Compiled::new(schema)
                    .or_else(|_| Compiled::new(&Value::Bool(false)))
                    .expect("false is a schema")
            }),
        }
    }
}

/// What `execute` gives: the envelope, and the warnings about it (output that did not
/// match the output schema, what the cast could not resolve).
#[derive(Clone, Debug, PartialEq)]
pub struct Executed {
    /// The `{data, meta}` envelope.
    pub envelope: Value,
    /// Warnings, for a log: never errors.
    pub warnings: Vec<String>,
}

/// Operations by id (`namespace.name`), listed in id order.
///
/// ```
/// use envelope_ops::{handler_fn, Context, HandlerError, OperationSpec, OperationType, Registry};
/// use serde_json::{json, Value};
///
/// let mut registry = Registry::new();
/// let spec = OperationSpec::new("math", "double", OperationType::Query);
/// registry
///     .register(spec, handler_fn(|input: Value, _| async move {
///         Ok::<_, HandlerError>(json!(input["n"].as_i64().unwrap_or(0) * 2))
///     }))
///     .unwrap();
/// let rt = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
/// let done = rt.block_on(registry.execute("math.double", json!({"n": 21}), &Context::default())).unwrap();
/// assert_eq!(done.envelope["data"], 42);
/// assert_eq!(done.envelope["meta"]["operationId"], "math.double");
/// ```
#[derive(Default)]
pub struct Registry {
    operations: BTreeMap<String, Operation>,
    /// Source updates not applied yet (see [`crate::update`]).
    updates: std::sync::Arc<Inbox>,
    /// The MCP servers among the sources (their resources and prompts).
    mcp_servers: Vec<std::sync::Arc<dyn crate::relay::RelayTarget>>,
}

impl Registry {
    /// An empty registry.
    pub fn new() -> Self {
        Registry::default()
    }

    /// Adds an operation. Refused: an empty namespace or name, a namespace with a `.`, an id
    /// already registered, an input or output schema that does not compile.
    pub fn register(
        &mut self,
        spec: OperationSpec,
        handler: Box<dyn Handler>,
    ) -> Result<(), RegistryError> {
        let id = spec.id();
        let refuse = |message: String| RegistryError::Operation {
            id: id.clone(),
            message,
        };
        self.check_id(&spec)?;
        let input = Schema::Now(
            Compiled::new(&spec.input_schema).map_err(|e| refuse(format!("inputSchema: {e}")))?,
        );
        let output = if is_unknown_schema(&spec.output_schema) {
            None
        } else {
            Some(Schema::Now(
                Compiled::new(&spec.output_schema)
                    .map_err(|e| refuse(format!("outputSchema: {e}")))?,
            ))
        };
        self.insert(id, spec, handler, input, output)
    }

    /// Adds an operation whose schemas compiled when it was registered before (a source's
    /// derivation read back from its cache, `openapi::cache`): they are compiled on first
    /// use instead of now, so a one-shot call of one operation of a large source compiles
    /// two schemas, not thousands. Otherwise as [`Registry::register`].
    pub fn register_compiled_before(
        &mut self,
        spec: OperationSpec,
        handler: Box<dyn Handler>,
    ) -> Result<(), RegistryError> {
        let output = match is_unknown_schema(&spec.output_schema) {
            true => None,
            false => Some(Schema::Later(Default::default())),
        };
        let id = spec.id();
        self.check_id(&spec)?;
        self.insert(id, spec, handler, Schema::Later(Default::default()), output)
    }

    /// Registers operation `namespace.name` by its id alone: `load` builds its spec and
    /// handler when it is first needed (a call, [`Registry::spec`], [`Registry::specs`]),
    /// and its schemas are compiled on first use as with
    /// [`Registry::register_compiled_before`]. A source whose derivation is kept (an
    /// OpenAPI document's, `openapi::cache`) registers thousands of operations this way
    /// and a one-shot call builds one. `load` must give the same id; an error it gives is
    /// the call's (`EXECUTION_ERROR`), and [`Registry::specs`] leaves such an operation out.
    ///
    /// ```
    /// use envelope_ops::{handler_fn, Context, HandlerError, OperationSpec, OperationType, Registry};
    /// use serde_json::{json, Value};
    ///
    /// let mut registry = Registry::new();
    /// registry
    ///     .register_deferred("math", "one", Box::new(|| {
    ///         let handler = handler_fn(|_: Value, _| async { Ok::<_, HandlerError>(json!(1)) });
    ///         Ok((OperationSpec::new("math", "one", OperationType::Query), handler))
    ///     }))
    ///     .unwrap();
    /// assert_eq!(registry.ids().collect::<Vec<_>>(), ["math.one"]);
    /// let rt = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
    /// let done = rt.block_on(registry.execute("math.one", json!({}), &Context::default())).unwrap();
    /// assert_eq!(done.envelope["data"], 1);
    /// ```
    pub fn register_deferred(
        &mut self,
        namespace: &str,
        name: &str,
        load: Loader,
    ) -> Result<(), RegistryError> {
        self.check_names(namespace, name)?;
        let id = format!("{namespace}.{name}");
        self.operations.insert(
            id.clone(),
            Operation {
                id,
                state: State::Deferred {
                    load,
                    cell: Default::default(),
                },
            },
        );
        Ok(())
    }

    fn check_id(&self, spec: &OperationSpec) -> Result<(), RegistryError> {
        self.check_names(&spec.namespace, &spec.name)
    }

    fn check_names(&self, namespace: &str, name: &str) -> Result<(), RegistryError> {
        let id = format!("{namespace}.{name}");
        let refuse = |message: String| RegistryError::Operation {
            id: id.clone(),
            message,
        };
        if namespace.is_empty() || name.is_empty() {
            return Err(refuse(
                "the namespace and the name must not be empty".into(),
            ));
        }
        if namespace.contains('.') {
            return Err(refuse(format!(
                "the namespace {namespace:?} contains a '.' (the id is namespace.name)"
            )));
        }
        if self.operations.contains_key(&id) {
            return Err(RegistryError::Duplicate { id });
        }
        Ok(())
    }

    fn insert(
        &mut self,
        id: String,
        spec: OperationSpec,
        handler: Box<dyn Handler>,
        input: Schema,
        output: Option<Schema>,
    ) -> Result<(), RegistryError> {
        let ready = Ready {
            id: id.clone(),
            spec,
            handler,
            input,
            output,
        };
        self.operations.insert(
            id.clone(),
            Operation {
                id,
                state: State::Ready(ready),
            },
        );
        Ok(())
    }

    /// Keeps the server of an MCP source (for its resources and prompts).
    pub fn add_mcp_server(&mut self, server: std::sync::Arc<dyn crate::relay::RelayTarget>) {
        self.mcp_servers.push(server);
    }

    /// The servers of the MCP sources registered, in registration order.
    pub fn mcp_servers(&self) -> &[std::sync::Arc<dyn crate::relay::RelayTarget>] {
        &self.mcp_servers
    }

    /// A handle through which a source queues changes to its operations.
    pub fn updater(&self) -> Updater {
        Updater {
            inbox: std::sync::Arc::downgrade(&self.updates),
        }
    }

    /// Applies the queued source updates, in order: each removes the ids its source
    /// registered before and registers its new operations. Returns warnings (an operation
    /// refused), naming the source.
    pub fn apply_updates(&mut self) -> Vec<String> {
        let queued =
            std::mem::take(&mut *self.updates.queue.lock().unwrap_or_else(|e| e.into_inner()));
        let mut warnings = Vec::new();
        for update in queued {
            for id in &update.remove {
                self.operations.remove(id);
            }
            for (spec, handler) in update.add {
                if let Err(e) = self.register(spec, handler) {
                    warnings.push(format!("{}: {e}", update.source));
                }
            }
        }
        warnings
    }

    /// Waits until a source update is queued (then call [`Registry::apply_updates`]).
    pub async fn updated(&self) {
        self.updates.notify.notified().await;
    }

    /// The specs, in id order. Deferred operations are built (and kept); one whose
    /// source cannot build it is left out (see [`Registry::visit_specs`]).
    pub fn specs(&self) -> impl Iterator<Item = &OperationSpec> {
        self.operations
            .values()
            .filter_map(|op| op.ready().ok().map(|ready| &ready.spec))
    }

    /// The ids, in order, without building any deferred operation.
    pub fn ids(&self) -> impl Iterator<Item = &str> {
        self.operations.keys().map(String::as_str)
    }

    /// Shows `f` every spec in id order until it returns false, keeping none that was not
    /// built before: a deferred operation is built for `f` and dropped (listing a large
    /// source holds one operation at a time, not all). Returns what could not be built,
    /// `id: cause`.
    pub fn visit_specs(&self, mut f: impl FnMut(&OperationSpec) -> bool) -> Vec<String> {
        let mut failed = Vec::new();
        for op in self.operations.values() {
            match op.with_spec(&mut f) {
                Ok(true) => {}
                Ok(false) => break,
                Err(e) => failed.push(format!("{}: {e}", op.id)),
            }
        }
        failed
    }

    /// The spec of `id` (a deferred operation is built).
    pub fn spec(&self, id: &str) -> Option<&OperationSpec> {
        let op = self.operations.get(id)?;
        op.ready().ok().map(|ready| &ready.spec)
    }

    /// How many operations there are.
    pub fn len(&self) -> usize {
        self.operations.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.operations.is_empty()
    }

    /// Runs operation `id` on `input` for `context` and returns its envelope.
    ///
    /// Errors: OPERATION_NOT_FOUND, ACCESS_DENIED, VALIDATION_ERROR (details: `{findings:
    /// [{pointer, message}]}`), TIMEOUT when `context.deadline` passes (the handler is
    /// dropped, which stops it), and the handler's own errors mapped by
    /// [`map_handler_error`]. A subscription is not executed here (EXECUTION_ERROR), unless
    /// its handler also answers once ([`Handler::answers_once`]).
    pub async fn execute(
        &self,
        id: &str,
        input: Value,
        context: &Context,
    ) -> Result<Executed, CallError> {
        let op = self.admit(id, &input, context)?;
        if op.spec.kind == OperationType::Subscription && !op.handler.answers_once() {
            return Err(CallError::new(
                codes::EXECUTION_ERROR,
                format!("{id} is a subscription: it is served by subscribe, not execute"),
            ));
        }
        let run = op.handler.call(input, context);
        let result = match context.deadline {
            None => run.await,
            Some(deadline) => match tokio::time::timeout_at(deadline.into(), run).await {
                Ok(result) => result,
                Err(_) => {
                    return Err(CallError::new(
                        codes::TIMEOUT,
                        format!("{id}: the deadline passed (the handler was stopped)"),
                    ));
                }
            },
        };
        let result = result.map_err(|e| map_handler_error(e, &op.spec))?;
        Ok(finish(&op.id, op, result))
    }

    /// Runs operation `id` as a subscription: the same look-up, access check and input
    /// validation as [`Registry::execute`] (refused before any item), then one envelope per
    /// item the handler yields, each wrapped, checked and cast like a result (a fresh
    /// timestamp per item). A handler error is the stream's last item; the stream ends when
    /// the handler's does. Any operation can be subscribed to: a query or a mutation yields
    /// its one result. Dropping the stream stops the handler; idle timeouts and deadlines
    /// are the consumer's (the call protocol's).
    ///
    /// ```
    /// use envelope_ops::{subscription_fn, Context, HandlerError, OperationSpec, OperationType, Registry};
    /// use futures::StreamExt;
    /// use serde_json::{json, Value};
    ///
    /// let mut registry = Registry::new();
    /// let spec = OperationSpec::new("clock", "ticks", OperationType::Subscription);
    /// registry
    ///     .register(spec, subscription_fn(|_: Value, _| {
    ///         futures::stream::iter((0..3).map(|i| Ok::<_, HandlerError>(json!(i))))
    ///     }))
    ///     .unwrap();
    /// let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    /// let context = Context::default();
    /// let items: Vec<_> = rt.block_on(
    ///     registry.subscribe("clock.ticks", json!({}), &context).unwrap().collect::<Vec<_>>(),
    /// );
    /// let data: Vec<_> = items.into_iter().map(|item| item.unwrap().envelope["data"].clone()).collect();
    /// assert_eq!(data, [json!(0), json!(1), json!(2)]);
    /// ```
    pub fn subscribe<'a>(
        &'a self,
        id: &str,
        input: Value,
        context: &'a Context,
    ) -> Result<EnvelopeStream<'a>, CallError> {
        let op = self.admit(id, &input, context)?;
        let items = op.handler.subscribe(input, context);
        // An error ends the stream at once: the handler's stream is dropped (which stops
        // it) without being polled again — it might never yield another item.
        let envelopes = futures::stream::unfold(Some(items), move |items| async move {
            let mut items = items?;
            match items.next().await? {
                Ok(value) => Some((Ok(finish(&op.id, op, value)), Some(items))),
                Err(e) => Some((Err(map_handler_error(e, &op.spec)), None)),
            }
        });
        Ok(Box::pin(envelopes))
    }

    /// Look-up, access check and input validation: what every call goes through before its
    /// handler runs.
    fn admit(&self, id: &str, input: &Value, context: &Context) -> Result<&Ready, CallError> {
        let op = self
            .operations
            .get(id)
            .ok_or_else(|| CallError::not_found(id))?
            .ready()
            .map_err(|e| {
                CallError::new(
                    codes::EXECUTION_ERROR,
                    format!("{id}: the operation could not be loaded: {e}"),
                )
            })?;
        access::check(&op.spec.access_control, context.identity.as_ref())?;
        if !op.input().is_valid(input) {
            let findings = op.input().findings(input);
            return Err(CallError::new(
                codes::VALIDATION_ERROR,
                format!(
                    "the input does not match the input schema of {id} ({} finding{})",
                    findings.len(),
                    if findings.len() == 1 { "" } else { "s" }
                ),
            )
            .with_details(json!({ "findings": findings })));
        }
        Ok(op)
    }
}

/// The envelopes of a subscription ([`Registry::subscribe`]).
pub type EnvelopeStream<'a> = Pin<Box<dyn Stream<Item = Result<Executed, CallError>> + Send + 'a>>;

/// Wraps, checks and casts a handler's result.
fn finish(id: &str, op: &Ready, result: Value) -> Executed {
    let mut warnings = Vec::new();
    if wrap::is_envelope(&result) {
        // Passed through untouched: an MCP envelope's data must stay its structuredContent.
        // A tool's error result (`isError: true`) is not its output: no schema applies.
        let is_error = result["meta"]["isError"] == Value::Bool(true);
        if let Some(output) = op.output().filter(|_| !is_error) {
            check_output(id, output, &result["data"], &mut warnings);
        }
        return Executed {
            envelope: result,
            warnings,
        };
    }
    let data = match op.output() {
        Some(output) if !output.is_valid(&result) => {
            check_output(id, output, &result, &mut warnings);
            let cast = cast(&op.spec.output_schema, result);
            for u in &cast.unresolved {
                warnings.push(format!(
                    "{}: the cast left data{} unresolved: {}",
                    id, u.pointer, u.reason
                ));
            }
            cast.value
        }
        _ => result,
    };
    Executed {
        envelope: wrap::local(data, id, wrap::now_ms()),
        warnings,
    }
}

fn check_output(id: &str, output: &Compiled, data: &Value, warnings: &mut Vec<String>) {
    for finding in output.findings(data) {
        warnings.push(format!(
            "{}: data{} does not match the output schema: {}",
            id,
            finding["pointer"].as_str().unwrap_or(""),
            finding["message"].as_str().unwrap_or("")
        ));
    }
}

/// A handler's failure as a CallError: a CallError as is; a message containing the code of
/// one of the operation's `errorSchemas` takes that code (the first declared); any other
/// message EXECUTION_ERROR; a raised non-error UNKNOWN_ERROR with `{raw}` details.
///
/// ```
/// use envelope_ops::{map_handler_error, ErrorSchema, HandlerError, OperationSpec, OperationType};
///
/// let mut spec = OperationSpec::new("git", "log", OperationType::Query);
/// spec.error_schemas.push(ErrorSchema {
///     code: "NOT_A_REPO".into(),
///     description: String::new(),
///     schema: serde_json::json!({}),
///     http_status: None,
/// });
/// let e = map_handler_error(HandlerError::Failed("fatal: NOT_A_REPO here".into()), &spec);
/// assert_eq!(e.code, "NOT_A_REPO");
/// let e = map_handler_error(HandlerError::Failed("disk full".into()), &spec);
/// assert_eq!(e.code, "EXECUTION_ERROR");
/// ```
pub fn map_handler_error(error: HandlerError, spec: &OperationSpec) -> CallError {
    match error {
        HandlerError::Call(e) => e,
        HandlerError::Failed(message) => {
            let code = declared_code_in(&message, spec).unwrap_or(codes::EXECUTION_ERROR);
            CallError::new(code, message)
        }
        HandlerError::Raw(raw) => CallError::new(
            codes::UNKNOWN_ERROR,
            "the handler raised a value that is not an error",
        )
        .with_details(json!({ "raw": raw })),
    }
}

/// The first declared error code that `text` contains.
pub(crate) fn declared_code_in<'a>(text: &str, spec: &'a OperationSpec) -> Option<&'a str> {
    spec.error_schemas
        .iter()
        .map(|e| e.code.as_str())
        .find(|code| !code.is_empty() && text.contains(code))
}
