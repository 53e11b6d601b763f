//! In-process `execute` of a trivial local operation (target: p50 <= 5 us, docs/benchmarks.md).
fn main() {}
