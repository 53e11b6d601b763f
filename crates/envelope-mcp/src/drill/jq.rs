//! `envelope_read`'s `jq` argument: a jq filter run with jaq, bounded.
//!
//! Bounds, so that a filter cannot take the proxy down with it:
//!
//! - **isolation**: when the program has a worker ([`jq_worker`](super::jq_worker)), each
//!   filter runs in a child process, killed at the time limit; a filter that exhausts memory
//!   or stack (`"x" * 1e17`, `def f: 1 + f; f`) ends the child, not the proxy. Without one,
//!   the filter runs on a thread of this process, with the limits below and that risk;
//! - **time**: the filter runs on a worker thread; the caller waits at most [`TIME_LIMIT`]
//!   and answers with an error after that. The worker checks the clock between outputs and
//!   stops there; a filter stuck inside one output (`last(range(1e15))`) cannot be
//!   interrupted (jaq has no step hook), so it runs on alone: while [`MAX_ABANDONED`] such
//!   workers run, further `jq` calls are refused;
//! - **output**: at most [`MAX_OUTPUTS`] outputs and [`MAX_OUTPUT_BYTES`] of output JSON;
//! - **stack**: each worker has a [`STACK_SIZE`] stack, for deep (not endless) recursion;
//! - **memory**: a worker process gets an address-space limit of
//!   [`WORKER_MEMORY`](super::jq_worker::WORKER_MEMORY) (`RLIMIT_AS`, set before it starts):
//!   a filter that allocates more is stopped with an error naming the limit, before the
//!   machine runs short. (A filter on a thread of this process has no such limit.);
//! - **concurrency**: at most [`MAX_WORKERS`] filters run at once in the whole process
//!   (processes or threads); up to [`MAX_WAITING`] more calls wait in line for at most
//!   [`QUEUE_WAIT`] each; a call beyond that, or that waited that long, is answered with
//!   an error saying so;
//! - **no side channels**: `env` (the proxy's environment, secrets included) is an error,
//!   `stderr`/`debug` print nothing, `halt` and `halt_error` end the filter with an error
//!   (jaq's own `unwrap_valr` would end the process).

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, mpsc};
use std::time::{Duration, Instant};

use serde_json::Value;

pub use super::jq_filter::{MAX_OUTPUT_BYTES, MAX_OUTPUTS, STACK_SIZE, TIME_LIMIT};
use super::jq_filter::{evaluate, too_slow};

/// The most workers left running by callers that stopped waiting; calls beyond are refused.
pub const MAX_ABANDONED: usize = 4;
/// The most filters that run at once in the process (workers: processes or threads).
pub const MAX_WORKERS: usize = 4;
/// The most calls that wait for a free worker; calls beyond are refused at once.
pub const MAX_WAITING: usize = 16;
/// How long a call waits for a free worker before it is refused.
pub const QUEUE_WAIT: Duration = Duration::from_secs(10);

/// The process's worker slots.
static SLOTS: Slots = Slots::new(MAX_WORKERS, MAX_WAITING, QUEUE_WAIT);

/// A counting semaphore with a bounded line of waiters, each waiting a bounded time.
#[derive(Debug)]
pub(crate) struct Slots {
    max_running: usize,
    max_waiting: usize,
    wait: Duration,
    /// (running, waiting)
    state: Mutex<(usize, usize)>,
    freed: Condvar,
}

/// A slot taken from [`Slots`]; given back when dropped.
#[derive(Debug)]
pub(crate) struct Slot<'s>(&'s Slots);

impl Slots {
    pub(crate) const fn new(max_running: usize, max_waiting: usize, wait: Duration) -> Slots {
        Slots {
            max_running,
            max_waiting,
            wait,
            state: Mutex::new((0, 0)),
            freed: Condvar::new(),
        }
    }

    /// A free slot, after waiting in line if need be.
    ///
    /// # Errors
    ///
    /// A sentence when the line is full or no slot came free in time.
    pub(crate) fn take(&self) -> Result<Slot<'_>, String> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if state.0 < self.max_running {
            state.0 += 1;
            return Ok(Slot(self));
        }
        if state.1 >= self.max_waiting {
            return Err(format!(
                "too many jq filters at once ({} running, {} waiting); try again later, or \
                 read without `jq`",
                self.max_running, self.max_waiting
            ));
        }
        state.1 += 1;
        let deadline = Instant::now() + self.wait;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                state.1 -= 1;
                return Err(format!(
                    "no jq worker came free within {}s ({} filters run at once); try again \
                     later, or read without `jq`",
                    self.wait.as_secs_f32(),
                    self.max_running
                ));
            }
            state = self
                .freed
                .wait_timeout(state, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
            if state.0 < self.max_running {
                state.1 -= 1;
                state.0 += 1;
                return Ok(Slot(self));
            }
        }
    }

    /// (running, waiting) now.
    #[cfg(test)]
    fn counts(&self) -> (usize, usize) {
        *self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        let mut state = self.0.state.lock().unwrap_or_else(|e| e.into_inner());
        state.0 -= 1;
        drop(state);
        self.0.freed.notify_one();
    }
}

/// Workers whose caller stopped waiting and that still run.
static ABANDONED: AtomicUsize = AtomicUsize::new(0);

/// A worker's state, shared with its caller.
const RUNNING: u8 = 0;
const ABANDONED_BY_CALLER: u8 = 1;
const DONE: u8 = 2;

/// Runs `filter` on `input`. One output is the answer; no output or several become an array
/// of them. In a child process when [`isolate_in`](super::jq_worker::isolate_in) named a
/// worker program, else on a thread of this process.
///
/// # Errors
///
/// A sentence: jaq's parse or compile message with the position, a runtime error of the
/// filter, an output that is not JSON, or a bound that was reached.
pub fn run(filter: &str, input: Value) -> Result<Value, FilterError> {
    run_bounded(filter, input).map_err(FilterError)
}

/// Why a filter gave no answer ([`run`]): a sentence for the model that sent it — jaq's
/// parse or compile message with the position, a runtime error of the filter, an output
/// that is not JSON, or a bound that was reached.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct FilterError(String);

/// [`run`], its error a sentence.
fn run_bounded(filter: &str, input: Value) -> Result<Value, String> {
    // Held until the answer (or the kill at the time limit): a thread left running past its
    // caller is bounded by MAX_ABANDONED instead.
    let _slot = SLOTS.take()?;
    match super::jq_worker::program() {
        Some(program) => super::jq_worker::run_in_child(program, filter, &input),
        None => run_in_thread(filter, input),
    }
}

/// [`run`] on a worker thread of this process.
fn run_in_thread(filter: &str, input: Value) -> Result<Value, String> {
    if ABANDONED.load(Ordering::SeqCst) >= MAX_ABANDONED {
        return Err(format!(
            "{MAX_ABANDONED} earlier jq filters ran too long and are still running; \
             try again later, or read without `jq`"
        ));
    }
    let deadline = Instant::now() + TIME_LIMIT;
    let (tx, rx) = mpsc::sync_channel(1);
    let state = Arc::new(AtomicU8::new(RUNNING));
    let worker_state = Arc::clone(&state);
    let filter = filter.to_string();
    std::thread::Builder::new()
        .name("envelope-jq".into())
        .stack_size(STACK_SIZE)
        .spawn(move || {
            let outcome = catch_unwind(AssertUnwindSafe(|| evaluate(&filter, &input, deadline)))
                .unwrap_or_else(|_| Err("the jq filter failed inside jaq (a panic)".to_string()));
            if worker_state.swap(DONE, Ordering::SeqCst) == ABANDONED_BY_CALLER {
                ABANDONED.fetch_sub(1, Ordering::SeqCst);
            }
            // The caller may have stopped waiting: nobody to tell then.
            let _ = tx.send(outcome);
        })
        .map_err(|e| format!("cannot start a jq worker: {e}"))?;
    match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
        Ok(outcome) => outcome,
        Err(mpsc::RecvTimeoutError::Timeout) => {
            // Counted first, so that the worker's decrement can never come before it.
            ABANDONED.fetch_add(1, Ordering::SeqCst);
            let abandoned = state
                .compare_exchange(
                    RUNNING,
                    ABANDONED_BY_CALLER,
                    Ordering::SeqCst,
                    Ordering::SeqCst,
                )
                .is_ok();
            if !abandoned {
                // It finished just now: take its answer after all.
                ABANDONED.fetch_sub(1, Ordering::SeqCst);
                return rx.recv().unwrap_or_else(|_| Err(too_slow()));
            }
            Err(too_slow())
        }
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            Err("the jq filter failed inside jaq".to_string())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn one_output_is_the_value_several_are_an_array() {
        let input = json!({"items": [{"n": 1}, {"n": 2}, {"n": 3}]});
        assert_eq!(run(".items | length", input.clone()).unwrap(), json!(3));
        assert_eq!(run(".items[].n", input.clone()).unwrap(), json!([1, 2, 3]));
        assert_eq!(
            run("[.items[] | select(.n > 1)]", input.clone()).unwrap(),
            json!([{"n": 2}, {"n": 3}])
        );
        assert_eq!(run("empty", input.clone()).unwrap(), json!([]));
        assert_eq!(
            run("map(.n * 10) | add", input["items"].clone()).unwrap(),
            json!(60)
        );
    }

    #[test]
    fn the_standard_library_is_there() {
        let input = json!(["b", "a", "c"]);
        assert_eq!(run("sort | join(\",\")", input).unwrap(), json!("a,b,c"));
        assert_eq!(
            run("\"{\\\"x\\\": 1}\" | fromjson | .x", json!(null)).unwrap(),
            json!(1)
        );
        assert_eq!(
            run("[limit(3; repeat(1))]", json!(null)).unwrap(),
            json!([1, 1, 1])
        );
    }

    #[test]
    fn errors_carry_jaqs_message_and_position() {
        let err = run(".a | ", json!({})).unwrap_err().to_string();
        assert!(
            err.starts_with("the jq filter does not parse") && err.contains("character"),
            "{err}"
        );
        let err = run("[.a", json!({})).unwrap_err().to_string();
        assert!(err.contains("does not parse"), "{err}");
        let err = run(".a | nosuchfn", json!({})).unwrap_err().to_string();
        assert!(
            err.contains("undefined filter `nosuchfn` at character 6"),
            "{err}"
        );
        let err = run(".a.b", json!({"a": 1})).unwrap_err().to_string();
        assert!(
            err.starts_with("the jq filter failed: cannot index 1"),
            "{err}"
        );
        let err = run("error(\"boom\")", json!(null)).unwrap_err().to_string();
        assert!(err.contains("boom"), "{err}");
    }

    #[test]
    fn side_channels_are_closed() {
        let err = run("env", json!(null)).unwrap_err().to_string();
        assert!(err.contains("env is not available"), "{err}");
        let err = run("$ENV", json!(null)).unwrap_err().to_string();
        assert!(err.contains("undefined variable"), "{err}");
        let err = run("halt", json!(null)).unwrap_err().to_string();
        assert!(err.contains("halt"), "{err}");
        let err = run("\"x\" | halt_error", json!(null))
            .unwrap_err()
            .to_string();
        assert!(err.contains("halt"), "{err}");
        assert_eq!(run("1 | stderr | debug", json!(null)).unwrap(), json!(1));
    }

    #[test]
    fn non_json_outputs_are_refused() {
        let err = run("{(1): 2}", json!(null)).unwrap_err().to_string();
        assert!(err.contains("not JSON"), "{err}");
    }

    #[test]
    fn endless_output_is_bounded() {
        let err = run("repeat(1)", json!(null)).unwrap_err().to_string();
        assert!(
            err.contains("more than 100000 outputs") || err.contains("longer than"),
            "{err}"
        );
        let err = run("range(1e18)", json!(null)).unwrap_err().to_string();
        assert!(
            err.contains("outputs") || err.contains("longer than"),
            "{err}"
        );
    }

    #[test]
    fn a_slow_filter_is_abandoned_in_time() {
        let started = Instant::now();
        // One output that takes hours, in constant memory: the caller is answered anyway.
        let err = run("reduce range(1e15) as $x (0; . + 1)", json!(null))
            .unwrap_err()
            .to_string();
        assert!(err.contains("longer than 2s"), "{err}");
        // Not a speed check: the answer comes after the limit, not after the filter (hours);
        // the slack is for a loaded machine.
        assert!(
            started.elapsed() < TIME_LIMIT + Duration::from_secs(20),
            "{:?}",
            started.elapsed()
        );
    }

    #[test]
    fn slots_bound_the_running_and_the_waiting() {
        let slots = Slots::new(1, 1, Duration::from_millis(300));
        let first = slots.take().unwrap();
        std::thread::scope(|scope| {
            // The second waits in line, and gets the slot when the first is given back.
            let waiter = scope.spawn(|| slots.take().map(drop));
            while slots.counts() != (1, 1) {
                std::thread::yield_now();
            }
            // The line is full: the third is refused at once.
            let err = slots.take().unwrap_err();
            assert!(
                err.contains("too many jq filters at once (1 running, 1 waiting)"),
                "{err}"
            );
            drop(first);
            waiter.join().unwrap().unwrap();
        });
        assert_eq!(slots.counts(), (0, 0));
        // One that waits too long is refused, and leaves the line.
        let held = slots.take().unwrap();
        let started = Instant::now();
        let err = slots.take().unwrap_err();
        assert!(err.contains("no jq worker came free within 0.3s"), "{err}");
        assert!(started.elapsed() >= Duration::from_millis(300));
        assert_eq!(slots.counts(), (1, 0));
        drop(held);
    }
}
