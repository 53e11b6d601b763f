//! The registry the call-protocol tests serve (in process and over NATS): `t.double`, a slow
//! `t.slow` and a subscription `t.ticks`, whose handlers set a flag when they are stopped.
#![allow(dead_code)]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use envelope_ops::{
    HandlerError, OperationSpec, OperationType, Registry, handler_fn, subscription_fn,
};
use serde_json::{Value, json};

/// Sets its flag when dropped: proof that a handler's future was stopped.
pub struct SetOnDrop(pub Arc<AtomicBool>);

impl Drop for SetOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// `t.double` (query: `n` doubled), `t.slow` (sleeps 30 s; sets `stopped` when dropped),
/// `t.ticks` (a subscription: `n` items `pause_ms` (20) apart, then, with `forever`,
/// silence; sets `stopped` when dropped).
pub fn registry(stopped: Arc<AtomicBool>) -> Registry {
    let mut registry = Registry::new();
    let mut double = OperationSpec::new("t", "double", OperationType::Query);
    double.input_schema =
        json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]});
    registry
        .register(
            double,
            handler_fn(|input: Value, _| async move {
                Ok::<_, HandlerError>(json!(input["n"].as_i64().unwrap() * 2))
            }),
        )
        .unwrap();
    let flag = stopped.clone();
    registry
        .register(
            OperationSpec::new("t", "slow", OperationType::Mutation),
            handler_fn(move |_, _| {
                let guard = SetOnDrop(flag.clone());
                async move {
                    tokio::time::sleep(Duration::from_secs(30)).await;
                    drop(guard);
                    Ok::<_, HandlerError>(json!("late"))
                }
            }),
        )
        .unwrap();
    registry
        .register(
            OperationSpec::new("t", "ticks", OperationType::Subscription),
            subscription_fn(move |input: Value, _| {
                let guard = SetOnDrop(stopped.clone());
                let n = input["n"].as_u64().unwrap_or(3);
                let forever = input["forever"].as_bool().unwrap_or(false);
                let pause = input["pause_ms"].as_u64().unwrap_or(20);
                futures::stream::unfold((0u64, guard), move |(i, guard)| async move {
                    if i >= n && !forever {
                        return None;
                    }
                    let wait = if i >= n { 3_600_000 } else { pause };
                    tokio::time::sleep(Duration::from_millis(wait)).await;
                    Some((Ok::<_, HandlerError>(json!({ "tick": i })), (i + 1, guard)))
                })
            }),
        )
        .unwrap();
    registry
}

/// Whether `flag` is set within 3 s.
pub async fn becomes_true(flag: &AtomicBool) -> bool {
    for _ in 0..300 {
        if flag.load(Ordering::SeqCst) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    false
}
