//! A call through NATS against a bare `async-nats` request/reply to the same server, in the
//! same run: the round trip our transport adds (events, headers, the pending map, execute,
//! the envelope) on top of what NATS itself costs. Target: ours <= 2x bare (issue 14).
//!
//! Needs nats-server (scripts/install-mcp-tools.sh puts it under $ENVELOPE_TOOLS or
//! ~/.cache/envelope-tools); started on 127.0.0.1 on a free port, stopped at the end.
//!
//! `cargo bench -p envelope-ops --bench nats` (ROUNDS and CALLS in the environment).

use std::sync::Arc;
use std::time::Instant;

#[path = "../tests/nats_common/mod.rs"]
mod nats_common;

use nats_common::NatsServer;

use envelope_ops::protocol::{CallOptions, connect, nats_caller, serve_nats};
use envelope_ops::{HandlerError, OperationSpec, OperationType, Registry, handler_fn};
use futures::StreamExt;
use serde_json::{Value, json};

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn pct(sorted: &[u64], p: f64) -> u64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn main() {
    let rounds = env_usize("ROUNDS", 5);
    let calls = env_usize("CALLS", 2000);
    // The tests' server: its own free port (ports file), stopped when dropped.
    let server = NatsServer::start();
    let url = server.url();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        // Bare: a responder that echoes, and request/reply.
        let responder = async_nats::connect(&url).await.unwrap();
        let mut echo = responder.subscribe("bare.echo").await.unwrap();
        let replier = responder.clone();
        tokio::spawn(async move {
            while let Some(message) = echo.next().await {
                if let Some(reply) = message.reply {
                    let _ = replier.publish(reply, message.payload).await;
                }
            }
        });
        responder.flush().await.unwrap();
        let requester = async_nats::connect(&url).await.unwrap();

        // Ours: a worker serving t.echo, a caller.
        let mut registry = Registry::new();
        registry
            .register(
                OperationSpec::new("t", "echo", OperationType::Query),
                handler_fn(|input: Value, _| async move { Ok::<_, HandlerError>(input) }),
            )
            .unwrap();
        serve_nats(connect(&url).await.unwrap(), Arc::new(registry), "b")
            .await
            .unwrap();
        let caller = nats_caller(connect(&url).await.unwrap(), "b")
            .await
            .unwrap();
        let input = json!({"n": 1, "text": "hello"});
        let body = serde_json::to_vec(&input).unwrap();

        println!("round  bare p50/p99 (us)  ours p50/p99 (us)  ours/bare p50");
        let mut ratios = Vec::new();
        for round in 1..=rounds {
            let mut bare = Vec::with_capacity(calls);
            for _ in 0..calls {
                let start = Instant::now();
                requester
                    .request("bare.echo", body.clone().into())
                    .await
                    .unwrap();
                bare.push(start.elapsed().as_nanos() as u64);
            }
            let mut ours = Vec::with_capacity(calls);
            for _ in 0..calls {
                let start = Instant::now();
                caller
                    .call("t.echo", input.clone(), CallOptions::default())
                    .await
                    .unwrap();
                ours.push(start.elapsed().as_nanos() as u64);
            }
            bare.sort_unstable();
            ours.sort_unstable();
            let ratio = pct(&ours, 0.5) as f64 / pct(&bare, 0.5) as f64;
            ratios.push(ratio);
            println!(
                "{round:>5}  {:>7.1} / {:>7.1}  {:>7.1} / {:>7.1}  {ratio:.2}",
                pct(&bare, 0.5) as f64 / 1e3,
                pct(&bare, 0.99) as f64 / 1e3,
                pct(&ours, 0.5) as f64 / 1e3,
                pct(&ours, 0.99) as f64 / 1e3,
            );
        }
        ratios.sort_by(f64::total_cmp);
        println!(
            "median ours/bare p50: {:.2} (target <= 2)",
            ratios[ratios.len() / 2]
        );
    });
    drop(server);
}
