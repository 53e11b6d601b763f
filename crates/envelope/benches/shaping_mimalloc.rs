//! Shaping benchmarks with mimalloc, the global allocator of the `envelope` CLI: the "JSON
//! text" rows here are what the CLI does. See `common/shaping.rs`.

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[path = "common/node_reference.rs"]
mod node_reference;
#[path = "common/shaping.rs"]
mod shaping;
#[path = "common/timing.rs"]
mod timing;

fn main() {
    shaping::run("mimalloc (the `envelope` CLI's)", false);
}
