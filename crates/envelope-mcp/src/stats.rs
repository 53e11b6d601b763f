//! Counters of the proxy's work, for the summary on exit and `--stats FILE`. (to be written)

/// What the proxy did, shared by every session.
#[derive(Debug, Default)]
pub struct Stats {}
