//! The benches' clock: the median time of a function over enough runs to fill a budget.

use std::hint::black_box;
use std::time::{Duration, Instant};

/// Median time of `f` over enough runs to fill `budget`: at least `min_runs`, at most 200.
pub fn median_time<T>(budget: Duration, min_runs: usize, mut f: impl FnMut() -> T) -> Duration {
    let mut samples = Vec::new();
    let start = Instant::now();
    while samples.len() < min_runs || (start.elapsed() < budget && samples.len() < 200) {
        let t = Instant::now();
        black_box(f());
        samples.push(t.elapsed());
    }
    samples.sort();
    samples[samples.len() / 2]
}
