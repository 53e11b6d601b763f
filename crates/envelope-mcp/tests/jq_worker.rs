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
    let err = jq::run(".items | frob", input.clone())
        .unwrap_err()
        .to_string();
    assert!(err.contains("undefined filter `frob`"), "{err}");
    let err = jq::run(".items.x", input).unwrap_err().to_string();
    assert!(err.contains("cannot index"), "{err}");
}

#[test]
fn a_filter_that_exhausts_memory_ends_the_worker_not_us() {
    isolated();
    // In-process this aborts: jaq asks for 1e17 bytes at once.
    let err = jq::run("\"x\" * 100000000000000000", json!(null))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("exhausted the worker's memory or stack"),
        "{err}"
    );
}

#[test]
fn endless_recursion_ends_the_worker_not_us() {
    isolated();
    let err = jq::run("def f: 1 + f; f", json!(null))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("exhausted") || err.contains("longer than"),
        "{err}"
    );
}

#[test]
fn a_slow_filter_is_killed_at_the_limit() {
    isolated();
    let started = Instant::now();
    let err = jq::run("reduce range(1e15) as $x (0; . + 1)", json!(null))
        .unwrap_err()
        .to_string();
    assert!(err.contains("longer than 2s"), "{err}");
    // Not a speed check: the answer comes at the limit, not after the filter (hours).
    assert!(started.elapsed() < TIME_LIMIT + Duration::from_secs(20));
}

#[test]
fn the_worker_has_no_environment_of_ours() {
    isolated();
    // `env` is an error either way (and the worker is started with an empty environment).
    let err = jq::run("env", json!(null)).unwrap_err().to_string();
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

/// Issue 26: a worker had no memory limit of its own: a filter could take the machine's.
#[test]
fn a_filter_that_allocates_beyond_the_workers_limit_is_stopped() {
    isolated();
    // A gigabyte in one string: within the machine's memory, beyond the worker's.
    let err = jq::run("\"x\" * 1000000000 | length", json!(null))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("exhausted the worker's memory or stack (memory limit 512 MiB"),
        "{err}"
    );
    // Within the limit, the same filter works.
    assert_eq!(
        jq::run("\"x\" * 1000000 | length", json!(null)).unwrap(),
        json!(1_000_000)
    );
}

/// The running worker processes that are children of this one, started as workers (not
/// by hand, as `started_by_hand_it_refuses` does).
fn workers_now() -> usize {
    let me = std::process::id().to_string();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return 0;
    };
    entries
        .filter_map(Result::ok)
        .filter(|entry| {
            std::fs::read(entry.path().join("environ"))
                .is_ok_and(|env| env.split(|b| *b == 0).any(|v| v == b"ENVELOPE_JQ_WORKER=1"))
        })
        .filter_map(|entry| std::fs::read_to_string(entry.path().join("stat")).ok())
        .filter(|stat| {
            // `pid (comm) state ppid …`; comm is cut to 15 bytes.
            let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else {
                return false;
            };
            let comm = &stat[open + 1..close];
            let mut rest = stat[close + 1..].split_whitespace();
            let state = rest.next().unwrap_or("");
            let ppid = rest.next().unwrap_or("");
            comm.starts_with("envelope-jq-wor") && ppid == me && state != "Z"
        })
        .count()
}

/// Issue 26: every `envelope_read` with `jq` started a worker, however many ran already.
#[test]
fn no_more_than_max_workers_run_at_once() {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    isolated();
    let peak = AtomicUsize::new(0);
    let done = AtomicBool::new(false);
    std::thread::scope(|scope| {
        scope.spawn(|| {
            while !done.load(Ordering::SeqCst) {
                peak.fetch_max(workers_now(), Ordering::SeqCst);
                std::thread::sleep(Duration::from_millis(2));
            }
        });
        // Eight filters that each run until they are killed at the time limit.
        let calls: Vec<_> = (0..8)
            .map(|_| scope.spawn(|| jq::run("last(range(1e15))", json!(null))))
            .collect();
        for call in calls {
            let err = call.join().unwrap().unwrap_err().to_string();
            assert!(err.contains("longer than 2s"), "{err}");
        }
        done.store(true, Ordering::SeqCst);
    });
    let peak = peak.into_inner();
    assert!(peak <= jq::MAX_WORKERS, "{peak} workers at once");
    assert!(peak >= 2, "{peak}: the calls did run side by side");
}
