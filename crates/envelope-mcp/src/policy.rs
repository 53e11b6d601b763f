//! The policy file (TOML): per-tool settings. (to be written)

/// Per-tool settings read from `--policy FILE.toml`.
#[derive(Clone, Debug, Default)]
pub struct Policy {}
