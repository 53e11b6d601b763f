//! What runs an operation. Handlers return values (or errors); they never build the
//! envelope's `local` meta, validate, or publish: `execute` does.

use std::future::Future;
use std::pin::Pin;

use futures::Stream;
use serde_json::Value;

use crate::context::Context;
use crate::error::CallError;
use crate::spec::OperationSpec;

/// The operations of one source, each with its handler.
pub type Operations = Vec<(OperationSpec, Box<dyn Handler>)>;

/// The future a [`Handler`] returns.
pub type HandlerFuture<'a> = Pin<Box<dyn Future<Output = Result<Value, HandlerError>> + Send + 'a>>;

/// The stream a subscription yields: one item per event, until it ends (`None`). An `Err`
/// item ends the subscription with that error.
pub type ItemStream<'a> = Pin<Box<dyn Stream<Item = Result<Value, HandlerError>> + Send + 'a>>;

/// Runs one operation. The MCP, OpenAPI and command sources each implement it; a plain
/// async closure becomes one with [`handler_fn`].
///
/// A handler that returns an operations envelope (`{data, meta}` with a known
/// `meta.source`) has it passed through as is; any other value becomes `data`.
pub trait Handler: Send + Sync {
    /// Runs the operation on validated `input`. Dropping the future stops it (a command
    /// operation's process group is killed).
    fn call<'a>(&'a self, input: Value, context: &'a Context) -> HandlerFuture<'a>;

    /// Runs the operation as a subscription on validated `input`: its items, each wrapped
    /// like a result. Dropping the stream stops it. The default yields the one result of
    /// [`Handler::call`], so any operation can be consumed as a stream.
    fn subscribe<'a>(&'a self, input: Value, context: &'a Context) -> ItemStream<'a> {
        Box::pin(futures::stream::once(self.call(input, context)))
    }

    /// Whether a subscription can also be called once: [`crate::Registry::execute`] runs
    /// [`Handler::call`] for it instead of refusing it (an OpenAPI operation whose response
    /// offers JSON beside its event stream). False by default.
    fn answers_once(&self) -> bool {
        false
    }
}

/// How a handler failed; `execute` maps it to a [`CallError`].
#[derive(Debug, thiserror::Error)]
pub enum HandlerError {
    /// A CallError, passed through as is.
    #[error(transparent)]
    Call(#[from] CallError),
    /// An error with a message: it takes the code of a declared error schema that the
    /// message contains, else EXECUTION_ERROR.
    #[error("{0}")]
    Failed(String),
    /// Something that is not an error (the reference's non-Error throw): UNKNOWN_ERROR with
    /// `{raw}` details.
    #[error("a non-error value was raised")]
    Raw(Value),
}

struct FnHandler<F>(F);

struct FnSubscription<F>(F);

impl<F, S> Handler for FnSubscription<F>
where
    F: Fn(Value, Context) -> S + Send + Sync,
    S: Stream<Item = Result<Value, HandlerError>> + Send + 'static,
{
    /// A subscription called as a plain operation gives its first item.
    fn call<'a>(&'a self, input: Value, context: &'a Context) -> HandlerFuture<'a> {
        use futures::StreamExt;
        let mut items = Box::pin((self.0)(input, context.clone()));
        Box::pin(async move {
            items.next().await.unwrap_or_else(|| {
                Err(HandlerError::Failed(
                    "the subscription ended without an item".into(),
                ))
            })
        })
    }

    fn subscribe<'a>(&'a self, input: Value, context: &'a Context) -> ItemStream<'a> {
        Box::pin((self.0)(input, context.clone()))
    }
}

impl<F, Fut> Handler for FnHandler<F>
where
    F: Fn(Value, Context) -> Fut + Send + Sync,
    Fut: Future<Output = Result<Value, HandlerError>> + Send + 'static,
{
    fn call<'a>(&'a self, input: Value, context: &'a Context) -> HandlerFuture<'a> {
        Box::pin((self.0)(input, context.clone()))
    }
}

/// A handler from an async function of the input and (a copy of) the context.
///
/// ```
/// use envelope_ops::{handler_fn, HandlerError};
/// use serde_json::{json, Value};
///
/// let add = handler_fn(|input: Value, _ctx| async move {
///     let sum = input["a"].as_i64().unwrap_or(0) + input["b"].as_i64().unwrap_or(0);
///     Ok::<_, HandlerError>(json!({ "sum": sum }))
/// });
/// # let _ = add;
/// ```
pub fn handler_fn<F, Fut>(f: F) -> Box<dyn Handler>
where
    F: Fn(Value, Context) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Value, HandlerError>> + Send + 'static,
{
    Box::new(FnHandler(f))
}

/// A subscription handler from a function of the input and (a copy of) the context that
/// returns a stream of items.
///
/// ```
/// use envelope_ops::{subscription_fn, HandlerError};
/// use serde_json::{json, Value};
///
/// let ticks = subscription_fn(|input: Value, _ctx| {
///     let n = input["n"].as_u64().unwrap_or(3);
///     futures::stream::iter((0..n).map(|i| Ok::<_, HandlerError>(json!({ "tick": i }))))
/// });
/// # let _ = ticks;
/// ```
pub fn subscription_fn<F, S>(f: F) -> Box<dyn Handler>
where
    F: Fn(Value, Context) -> S + Send + Sync + 'static,
    S: Stream<Item = Result<Value, HandlerError>> + Send + 'static,
{
    Box::new(FnSubscription(f))
}
