//! The relay of one client session. (to be written)
//!
//! [`run`] is the one entry point every client transport uses: it connects the upstream
//! ([`transport::connect`](crate::transport::connect)), relays frames both ways, shapes
//! `tools/call` results, answers the proxy's own requests, and returns when the client is
//! gone (ending the upstream).

use std::sync::Arc;

use crate::config::Config;
use crate::stats::Stats;
use crate::transport::Link;

/// Relays one client session until the client is gone; the upstream is ended on return.
pub async fn run(client: Link, config: Arc<Config>, stats: Arc<Stats>) {
    let _ = (client, config, stats);
}
