//! In-process `execute` of a trivial local operation: the latency of each call, p50/p90/p99,
//! against a baseline measured in the same run — the same handler's future awaited
//! directly (what `execute` adds is the lookup, the access check, the input validation,
//! the envelope and its timestamp). Target: execute p50 <= 5 us (issue 14).
//!
//! `cargo bench -p envelope-ops --bench execute` (ROUNDS and CALLS in the environment).

use std::hint::black_box;
use std::time::Instant;

use envelope_ops::{
    AccessControl, Context, HandlerError, Identity, OperationSpec, OperationType, Registry,
    handler_fn,
};
use serde_json::{Value, json};

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Nanoseconds of each of `calls` runs of `f`, sorted.
fn latencies(calls: usize, mut f: impl FnMut()) -> Vec<u64> {
    let mut out = Vec::with_capacity(calls);
    for _ in 0..calls {
        let start = Instant::now();
        f();
        out.push(start.elapsed().as_nanos() as u64);
    }
    out.sort_unstable();
    out
}

fn pct(sorted: &[u64], p: f64) -> u64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn main() {
    let rounds = env_usize("ROUNDS", 7);
    let calls = env_usize("CALLS", 100_000);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();

    let echo = || handler_fn(|input: Value, _| async move { Ok::<_, HandlerError>(input) });
    let mut registry = Registry::new();
    // Trivial: no schemas, no access rules.
    registry
        .register(
            OperationSpec::new("bench", "echo", OperationType::Query),
            echo(),
        )
        .unwrap();
    // Typical: an input schema, an output schema the data matches, a required scope.
    let mut typical = OperationSpec::new("bench", "typed", OperationType::Query);
    typical.input_schema = json!({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}}, "required": ["a"]});
    typical.output_schema = typical.input_schema.clone();
    typical.access_control = AccessControl {
        required_scopes: vec!["bench".into()],
        ..AccessControl::default()
    };
    registry.register(typical, echo()).unwrap();
    let bare = echo();

    let input = json!({"a": 1, "b": "x"});
    let anonymous = Context::default();
    let caller = Context::default().with_identity(Identity {
        id: "bench".into(),
        scopes: vec!["bench".into()],
        resources: None,
    });

    println!(
        "round\tbaseline_p50_ns\techo_p50_ns\techo_p90_ns\techo_p99_ns\ttyped_p50_ns\ttyped_p99_ns\techo/baseline\ttyped/baseline"
    );
    for round in 1..=rounds {
        let baseline = latencies(calls, || {
            let out = rt.block_on(bare.call(black_box(input.clone()), &anonymous));
            black_box(out.unwrap());
        });
        let trivial = latencies(calls, || {
            let out =
                rt.block_on(registry.execute("bench.echo", black_box(input.clone()), &anonymous));
            black_box(out.unwrap());
        });
        let typed = latencies(calls, || {
            let out =
                rt.block_on(registry.execute("bench.typed", black_box(input.clone()), &caller));
            black_box(out.unwrap());
        });
        let b = pct(&baseline, 0.5);
        let (e50, t50) = (pct(&trivial, 0.5), pct(&typed, 0.5));
        println!(
            "{round}\t{b}\t{e50}\t{}\t{}\t{t50}\t{}\t{:.2}\t{:.2}",
            pct(&trivial, 0.9),
            pct(&trivial, 0.99),
            pct(&typed, 0.99),
            e50 as f64 / b as f64,
            t50 as f64 / b as f64
        );
    }
}
