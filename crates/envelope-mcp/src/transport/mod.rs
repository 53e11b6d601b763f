//! Bytes to frames and back. Every transport, whatever it speaks, gives the relay the same
//! thing: a [`Link`], frames in and frames out.
//!
//! A frame is the exact bytes of one JSON-RPC message (one JSON value, no line end). The
//! relay never re-serializes a frame it does not change, so a field it does not know
//! survives byte for byte.
//!
//! | side | module | owner |
//! |---|---|---|
//! | upstream: a child process over stdio | `child` | the relay |
//! | client: our own stdin/stdout | `stdio` | the relay |
//! | client: Streamable HTTP (`--listen`) | `http_server` | HTTP |
//! | upstream: Streamable HTTP (`--upstream-url`) | `http_client` | HTTP |
//!
//! `http_guard` holds the checks every HTTP server of ours applies (Host, Origin, tokens).

use tokio::sync::mpsc;

/// The exact bytes of one JSON-RPC message, without a line end.
pub type Frame = Vec<u8>;

/// What a peer sent, or that it is gone.
#[derive(Debug)]
pub enum Incoming {
    /// One message, as received (not yet checked to be JSON).
    Frame(Frame),
    /// The peer is gone: the process exited (with its status), the connection closed, the
    /// stream ended. Nothing follows.
    Closed(String),
}

/// A connection to one peer.
///
/// Dropping `outbound` (every sender of it) closes the connection: a child's stdin is
/// closed and the child ended, an HTTP session is ended.
#[derive(Debug)]
pub struct Link {
    /// Frames from the peer, then one [`Incoming::Closed`].
    pub inbound: mpsc::Receiver<Incoming>,
    /// Frames to the peer, in the order sent.
    pub outbound: mpsc::Sender<Frame>,
}

pub mod child;
pub mod http_client;
mod http_common;
pub mod http_guard;
pub mod http_server;
pub mod lines;
pub mod stdio;
pub mod upstream_stderr;

use crate::config::UpstreamSpec;

/// Connects to the upstream server: starts the command, or opens the HTTP session.
///
/// # Errors
///
/// When the command cannot be started or the endpoint cannot be reached.
pub async fn connect(upstream: &UpstreamSpec) -> std::io::Result<Link> {
    match upstream {
        UpstreamSpec::Command { program, args } => child::spawn(program, args).await,
        UpstreamSpec::Url { url, headers } => http_client::connect(url, headers).await,
    }
}
