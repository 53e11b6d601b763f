//! Where calls run: in this process (the registry's `execute`), or on `envelope ops worker`
//! processes over NATS (the call protocol). Both views of `serve` call through here, so a
//! call behaves the same whichever view or place runs it.

use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant, SystemTime};

use envelope_ops::protocol::{CallOptions, Caller, in_process};
use envelope_ops::{CallError, Context, Identity, Registry};
use futures::Stream;
use serde_json::Value;

/// The envelopes of a subscription, then its end (or an error, its last item).
pub type Events = Pin<Box<dyn Stream<Item = Result<Value, CallError>> + Send>>;

/// Runs calls.
pub struct Dispatch {
    registry: Arc<Registry>,
    /// The workers' caller (`--nats`); `None`: calls run here.
    remote: Option<Caller>,
    /// Subscriptions run here through the in-process call protocol (idle timeout and abort
    /// on drop, as over NATS); made on first use, on the runtime that serves.
    local: OnceLock<Caller>,
}

impl Dispatch {
    /// Calls run in this process, on `registry`.
    pub fn local(registry: Arc<Registry>) -> Dispatch {
        Dispatch {
            registry,
            remote: None,
            local: OnceLock::new(),
        }
    }

    /// Calls go to the workers behind `caller` (NATS); `registry` only describes them.
    pub fn remote(registry: Arc<Registry>, caller: Caller) -> Dispatch {
        Dispatch {
            registry,
            remote: Some(caller),
            local: OnceLock::new(),
        }
    }

    /// Whether calls go to workers.
    pub fn is_remote(&self) -> bool {
        self.remote.is_some()
    }

    /// The registry (what the views list).
    pub fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }

    /// Calls operation `id`: its envelope, or the CallError. The call is stopped (TIMEOUT)
    /// after `timeout`; dropping the future stops it too (the command is killed, the worker
    /// gets `call.aborted`).
    pub async fn call(
        &self,
        id: &str,
        input: Value,
        identity: Option<&Identity>,
        timeout: Duration,
    ) -> Result<Value, CallError> {
        match &self.remote {
            Some(caller) => {
                let options = CallOptions {
                    deadline: Some(SystemTime::now() + timeout),
                    identity: identity.cloned(),
                    ..CallOptions::default()
                };
                caller.call(id, input, options).await
            }
            None => {
                let mut context = Context::default().with_deadline(Instant::now() + timeout);
                context.identity = identity.cloned();
                let executed = self.registry.execute(id, input, &context).await?;
                for warning in &executed.warnings {
                    envelope_mcp::stats::log::warn(
                        "serve.output_warning",
                        &[
                            ("operation", id.into()),
                            ("warning", warning.clone().into()),
                        ],
                    );
                }
                Ok(executed.envelope)
            }
        }
    }

    /// Subscribes to operation `id`: its envelopes until it completes; an error (the
    /// operation's, or TIMEOUT after `idle` without an event) is the last item. Dropping the
    /// stream stops the subscription.
    pub fn subscribe(
        &self,
        id: &str,
        input: Value,
        identity: Option<&Identity>,
        idle: Duration,
    ) -> Events {
        let caller = match &self.remote {
            Some(caller) => caller,
            None => self.local.get_or_init(|| in_process(self.registry.clone())),
        };
        let options = CallOptions {
            idle_timeout: Some(idle),
            identity: identity.cloned(),
            ..CallOptions::default()
        };
        Box::pin(caller.subscribe(id, input, options))
    }
}
