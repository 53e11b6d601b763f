//! Shaping benchmarks with the system allocator (what a library user gets by default).
//! See `common/shaping.rs`.

#[path = "common/node_reference.rs"]
mod node_reference;
#[path = "common/shaping.rs"]
mod shaping;
#[path = "common/timing.rs"]
mod timing;

fn main() {
    shaping::run("the system's (glibc malloc)", true);
}
