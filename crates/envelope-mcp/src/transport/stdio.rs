//! The client on our own stdin/stdout: frames are lines.
//!
//! When stdin and stdout are pipes or sockets (as MCP clients start servers), they are read
//! and written in non-blocking mode on the runtime's own event loop (`pipe::Pipe`); Tokio's
//! `stdin()`/`stdout()` instead hand every read and write to a blocking thread, two thread
//! switches per message (docs/benchmarks.md). Anything else (a file, a terminal) uses those.

mod pipe;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::lines::{Side, read_frames, write_frames};
use super::{Incoming, Link};

/// The client on the process's stdin and stdout. Must be called inside a Tokio runtime.
/// See [`link`] for the handle.
pub fn stdio() -> (Link, JoinHandle<()>) {
    match (pipe::Pipe::new(0), pipe::Pipe::new(1)) {
        (Some(stdin), Some(stdout)) => link(stdin, stdout),
        _ => link(tokio::io::stdin(), tokio::io::stdout()),
    }
}

/// A client speaking newline-delimited frames on `reader` and `writer`. At the end of
/// `reader` the link reports [`Incoming::Closed`]; frames sent are written in order, each
/// followed by `\n`.
///
/// The handle finishes once every sender of the link's `outbound` is dropped and all they
/// sent is written and flushed: await it before the process exits, or the last answers
/// may be lost.
pub fn link<R, W>(reader: R, writer: W) -> (Link, JoinHandle<()>)
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (inbound_tx, inbound) = mpsc::channel(256);
    let (outbound, mut outbound_rx) = mpsc::channel(256);
    tokio::spawn(async move {
        read_frames(reader, inbound_tx.clone(), Side::Client).await;
        let _ = inbound_tx
            .send(Incoming::Closed("the client closed its end".into()))
            .await;
    });
    let written = tokio::spawn(async move {
        if let Err(e) = write_frames(writer, &mut outbound_rx).await {
            crate::stats::log::info("client.write_failed", &[("error", e.to_string().into())]);
        }
    });
    (Link { inbound, outbound }, written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn frames_in_order_then_closed() {
        let (client_side, proxy_side) = tokio::io::duplex(1024);
        let (proxy_read, proxy_write) = tokio::io::split(proxy_side);
        let (mut link, written) = link(proxy_read, proxy_write);
        let (mut client_read, mut client_write) = tokio::io::split(client_side);
        use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
        client_write
            .write_all(b"{\"id\":1}\n{\"id\":2}\n")
            .await
            .unwrap();
        client_write.shutdown().await.unwrap();
        drop(client_write);
        for expected in [&b"{\"id\":1}"[..], b"{\"id\":2}"] {
            match link.inbound.recv().await.unwrap() {
                Incoming::Frame(f) => assert_eq!(f, expected),
                other => panic!("{other:?}"),
            }
        }
        assert!(matches!(
            link.inbound.recv().await.unwrap(),
            Incoming::Closed(_)
        ));
        link.outbound.send(b"{\"ok\":true}".to_vec()).await.unwrap();
        drop(link);
        written.await.unwrap();
        let mut out = Vec::new();
        client_read.read_to_end(&mut out).await.unwrap();
        assert_eq!(out, b"{\"ok\":true}\n");
    }
}
