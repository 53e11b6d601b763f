//! Newline-delimited frames over a byte stream, the stdio framing of MCP: one message per
//! line, no line end in the frame. Shared by the child (upstream) and stdio (client) sides.

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

use super::{Frame, Incoming};
use crate::stats::log;

/// A line longer than this is dropped (read to its end without being kept) and logged: a
/// peer cannot make the proxy allocate without bound. Results of hundreds of MB pass.
pub const MAX_LINE: usize = 1 << 30;

/// Reads lines from `reader` and sends each non-empty one as a frame (without `\n` or a
/// trailing `\r`). Returns at end of stream, on a read error (logged), or when nobody
/// listens any more; the caller sends the [`Incoming::Closed`].
pub async fn read_frames<R>(reader: R, frames: mpsc::Sender<Incoming>, peer: &'static str)
where
    R: AsyncRead + Unpin,
{
    let mut reader = BufReader::with_capacity(64 * 1024, reader);
    loop {
        let line = match read_line(&mut reader, peer, MAX_LINE).await {
            Ok(Some(line)) => line,
            Ok(None) => return,
            Err(e) => {
                log::warn(
                    "transport.read_error",
                    &[("peer", peer.into()), ("error", e.to_string().into())],
                );
                return;
            }
        };
        if line.is_empty() {
            continue;
        }
        if frames.send(Incoming::Frame(line)).await.is_err() {
            return;
        }
    }
}

/// A line that grows past this gets the address space of [`MAX_LINE`] reserved at once.
/// Growing by doubling would copy the line at each step and, for a moment, hold the old
/// and the new buffer (up to twice the line's size resident); a reservation costs address
/// space only, and pages become resident as the line fills them.
const RESERVE_FROM: usize = 8 << 20;

/// One line without its end, `None` at end of stream. A line over `max` bytes is skipped
/// (read to its end, not kept, logged).
async fn read_line<R>(
    reader: &mut BufReader<R>,
    peer: &'static str,
    max: usize,
) -> std::io::Result<Option<Frame>>
where
    R: AsyncRead + Unpin,
{
    let mut line = Vec::new();
    let mut too_long = 0usize;
    loop {
        let buf = reader.fill_buf().await?;
        if buf.is_empty() {
            // End of stream: a last line without `\n` is still a line (unless too long).
            if too_long > 0 {
                log_too_long(peer, too_long, max);
            }
            return Ok((!line.is_empty()).then(|| trimmed(line)));
        }
        let (chunk, done) = match memchr::memchr(b'\n', buf) {
            Some(at) => (&buf[..at], at + 1),
            None => (buf, buf.len()),
        };
        let ends = done > chunk.len();
        if too_long > 0 || line.len() + chunk.len() > max {
            too_long += line.len() + chunk.len();
            line = Vec::new();
        } else {
            if line.len() + chunk.len() > RESERVE_FROM && line.capacity() < max {
                line.reserve_exact(max - line.len());
            }
            line.extend_from_slice(chunk);
        }
        reader.consume(done);
        if ends {
            if too_long > 0 {
                log_too_long(peer, too_long, max);
                too_long = 0;
                continue;
            }
            return Ok(Some(trimmed(line)));
        }
    }
}

fn log_too_long(peer: &'static str, bytes: usize, max: usize) {
    log::warn(
        "transport.line_too_long",
        &[
            ("peer", peer.into()),
            ("bytes", bytes.into()),
            ("max", max.into()),
        ],
    );
}

fn trimmed(mut line: Vec<u8>) -> Vec<u8> {
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    line
}

/// Writes each frame from `frames` to `writer` followed by `\n`, flushing when no other
/// frame is waiting (so a burst is one write, and a lone frame is not held back). Returns
/// when the channel closes (every sender dropped) or a write fails.
pub async fn write_frames<W>(
    mut writer: W,
    frames: &mut mpsc::Receiver<Frame>,
) -> std::io::Result<()>
where
    W: AsyncWrite + Unpin,
{
    while let Some(frame) = frames.recv().await {
        writer.write_all(&frame).await?;
        writer.write_all(b"\n").await?;
        drop(frame);
        if frames.is_empty() {
            writer.flush().await?;
        }
    }
    writer.flush().await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn lines_become_frames() {
        let input: &[u8] = b"{\"a\":1}\r\n\n{\"b\":2}\nlast";
        let (tx, mut rx) = mpsc::channel(8);
        read_frames(input, tx, "test").await;
        let mut got = Vec::new();
        while let Ok(Incoming::Frame(f)) = rx.try_recv() {
            got.push(String::from_utf8(f).unwrap());
        }
        assert_eq!(got, ["{\"a\":1}", "{\"b\":2}", "last"]);
    }

    #[tokio::test]
    async fn a_line_over_the_cap_is_skipped_and_the_next_one_read() {
        let input: &[u8] = b"short\nthis line is far too long\nnext\n";
        // A tiny buffer: the long line arrives in several pieces.
        let mut reader = BufReader::with_capacity(4, input);
        let mut lines = Vec::new();
        while let Some(line) = read_line(&mut reader, "test", 8).await.unwrap() {
            lines.push(String::from_utf8(line).unwrap());
        }
        assert_eq!(lines, ["short", "next"]);
    }

    #[tokio::test]
    async fn frames_become_lines() {
        let (tx, mut rx) = mpsc::channel(8);
        tx.send(b"one".to_vec()).await.unwrap();
        tx.send(b"two".to_vec()).await.unwrap();
        drop(tx);
        let mut out = Vec::new();
        write_frames(&mut out, &mut rx).await.unwrap();
        assert_eq!(out, b"one\ntwo\n");
    }
}
