//! jq filters in a child process (`envelope-jq-worker`): what would abort the proxy ends the
//! child; a slow filter is killed at the time limit; the answers are those of the thread
//! runner.

use envelope_mcp::drill::jq::{self, TIME_LIMIT};
use envelope_mcp::drill::jq_worker;
use serde_json::json;
use std::time::{Duration, Instant};

fn isolated() {
    // Every test in this file runs isolated; the first to get here sets the program.
    jq_worker::isolate_in(env!("CARGO_BIN_EXE_envelope-jq-worker"));
}

#[test]
fn filters_give_the_same_answers_in_the_worker() {
    isolated();
    let input = json!({"items": [{"n": 1, "s": "é😀\"\n"}, {"n": 2.5, "s": ""}]});
    assert_eq!(
        jq::run(".items[].n", input.clone()).unwrap(),
        json!([1, 2.5])
    );
    assert_eq!(jq::run(".", input.clone()).unwrap(), input);
    let err = jq::run(".items | frob", input.clone()).unwrap_err();
    assert!(err.contains("undefined filter `frob`"), "{err}");
    let err = jq::run(".items.x", input).unwrap_err();
    assert!(err.contains("cannot index"), "{err}");
}

#[test]
fn a_filter_that_exhausts_memory_ends_the_worker_not_us() {
    isolated();
    // In-process this aborts: jaq asks for 1e17 bytes at once.
    let err = jq::run("\"x\" * 100000000000000000", json!(null)).unwrap_err();
    assert!(
        err.contains("exhausted the worker's memory or stack"),
        "{err}"
    );
}

#[test]
fn endless_recursion_ends_the_worker_not_us() {
    isolated();
    let err = jq::run("def f: 1 + f; f", json!(null)).unwrap_err();
    assert!(
        err.contains("exhausted") || err.contains("longer than"),
        "{err}"
    );
}

#[test]
fn a_slow_filter_is_killed_at_the_limit() {
    isolated();
    let started = Instant::now();
    let err = jq::run("reduce range(1e15) as $x (0; . + 1)", json!(null)).unwrap_err();
    assert!(err.contains("longer than 2s"), "{err}");
    // Not a speed check: the answer comes at the limit, not after the filter (hours).
    assert!(started.elapsed() < TIME_LIMIT + Duration::from_secs(20));
}

#[test]
fn the_worker_has_no_environment_of_ours() {
    isolated();
    // `env` is an error either way (and the worker is started with an empty environment).
    let err = jq::run("env", json!(null)).unwrap_err();
    assert!(err.contains("env is not available"), "{err}");
}

#[test]
fn started_by_hand_it_refuses() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_envelope-jq-worker"))
        .env_remove(jq_worker::WORKER_ENV)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("ENVELOPE_JQ_WORKER=1"));
}
