//! Newline-delimited frames over a byte stream, the stdio framing of MCP: one message per
//! line, no line end in the frame. Shared by the child (upstream) and stdio (client) sides.

use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

use super::{Frame, Incoming};
use crate::message::{self, code};
use crate::stats::log;

/// The default of `--max-message`: a line longer than this is not kept (read to its end,
/// its first and last few KiB kept to find its id) and its sender is told (see
/// [`Side`]), so that a peer cannot make the proxy hold an unbounded line.
pub const DEFAULT_MAX_MESSAGE: usize = 256 << 20;

static MAX_MESSAGE: AtomicUsize = AtomicUsize::new(DEFAULT_MAX_MESSAGE);

/// Sets the longest line read from any peer of this process (`--max-message`).
pub fn set_max_message(bytes: usize) {
    MAX_MESSAGE.store(bytes.max(1), Ordering::Relaxed);
}

/// The longest line read from any peer of this process.
pub fn max_message() -> usize {
    MAX_MESSAGE.load(Ordering::Relaxed)
}

/// The bytes kept of each end of a line over the limit, to find its id.
const KEPT_ENDS: usize = 4096;

/// Which peer a reader reads, and so what a line over the limit becomes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// The upstream: its oversized answer becomes an error answer to the same id, which
    /// the relay passes to the client that asked.
    Upstream,
    /// A client: its oversized request becomes the request `envelope/oversized` with the
    /// same id, which the relay answers with an error.
    Client,
}

impl Side {
    fn name(self) -> &'static str {
        match self {
            Side::Upstream => "upstream",
            Side::Client => "client",
        }
    }
}

/// The method a client's oversized request is replaced by.
pub const OVERSIZED_METHOD: &str = "envelope/oversized";

/// Reads lines from `reader` and sends each non-empty one as a frame (without `\n` or a
/// trailing `\r`); a line over [`max_message`] is replaced as [`Side`] says. Returns at
/// end of stream, on a read error (logged), or when nobody listens any more; the caller
/// sends the [`Incoming::Closed`].
pub async fn read_frames<R>(reader: R, frames: mpsc::Sender<Incoming>, side: Side)
where
    R: AsyncRead + Unpin,
{
    read_frames_within(reader, frames, side, max_message()).await;
}

async fn read_frames_within<R>(reader: R, frames: mpsc::Sender<Incoming>, side: Side, max: usize)
where
    R: AsyncRead + Unpin,
{
    let peer = side.name();
    let mut reader = BufReader::with_capacity(64 * 1024, reader);
    loop {
        let line = match read_line(&mut reader, peer, max).await {
            Ok(Some(Line::Whole(line))) => line,
            Ok(Some(Line::TooLong(ends))) => match stand_in(side, &ends, max) {
                Some(frame) => frame,
                None => continue,
            },
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

/// What stands for a line over the limit: an error answer (upstream) or the request
/// [`OVERSIZED_METHOD`] (client) with the line's id; nothing when no id is found.
fn stand_in(side: Side, ends: &TooLong, max: usize) -> Option<Frame> {
    let id = find_id(&ends.head, &ends.tail)?;
    let bytes = ends.bytes;
    Some(match side {
        Side::Upstream => {
            let text = format!(
                "the upstream server's answer is {bytes} bytes, over the {max} bytes a message may have (--max-message): ask for less (a page, a filter)"
            );
            message::error_response(&id, code::UPSTREAM_GONE, &text)
        }
        Side::Client => format!(
            r#"{{"jsonrpc":"2.0","id":{},"method":"{OVERSIZED_METHOD}","params":{{"bytes":{bytes},"max":{max}}}}}"#,
            String::from_utf8_lossy(&id)
        )
        .into_bytes(),
    })
}

/// The top-level `id` of a JSON-RPC message of which only the first and last bytes are
/// known: in `head` at depth 1 (as the Python SDK writes it, `id` early), else as the last
/// member of `tail` (as the TypeScript SDK writes it: `…,"id":5}`).
fn find_id(head: &[u8], tail: &[u8]) -> Option<Vec<u8>> {
    id_in_head(head).or_else(|| id_at_end(tail))
}

fn id_in_head(head: &[u8]) -> Option<Vec<u8>> {
    let mut depth = 0usize;
    let mut i = 0;
    let mut expect_key = false;
    while i < head.len() {
        match head[i] {
            b'{' | b'[' => {
                depth += 1;
                expect_key = head[i] == b'{';
            }
            b'}' | b']' => depth = depth.checked_sub(1)?,
            b',' => expect_key = depth == 1,
            b'"' => {
                let end = string_end(head, i)?;
                if depth == 1 && expect_key && &head[i..end] == b"\"id\"" {
                    let rest = &head[end..];
                    let colon = rest.iter().position(|b| !b.is_ascii_whitespace())?;
                    if rest[colon] != b':' {
                        return None;
                    }
                    return scalar_at(&rest[colon + 1..]);
                }
                expect_key = false;
                i = end;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// The end (one past the closing quote) of the string that starts at `at`.
fn string_end(bytes: &[u8], at: usize) -> Option<usize> {
    let mut i = at + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

/// A number or a string at the start of `bytes` (after white space), as raw JSON.
fn scalar_at(bytes: &[u8]) -> Option<Vec<u8>> {
    let start = bytes.iter().position(|b| !b.is_ascii_whitespace())?;
    let bytes = &bytes[start..];
    let end = match bytes.first()? {
        b'"' => string_end(bytes, 0)?,
        b'-' | b'0'..=b'9' => bytes
            .iter()
            .position(|b| !matches!(b, b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9'))
            .unwrap_or(bytes.len()),
        _ => return None,
    };
    let raw = &bytes[..end];
    serde_json::from_slice::<serde_json::Value>(raw)
        .ok()
        .filter(|v| v.is_string() || v.is_number())
        .map(|_| raw.to_vec())
}

/// `"id":<scalar>}` at the very end of `tail` (white space allowed).
fn id_at_end(tail: &[u8]) -> Option<Vec<u8>> {
    let text = std::str::from_utf8(tail).ok()?.trim_end();
    let body = text.strip_suffix('}')?.trim_end();
    let key = body.rfind("\"id\"")?;
    let before = body[..key].trim_end();
    if !before.ends_with(',') && !before.ends_with('{') {
        return None;
    }
    let value = body[key + 4..].trim_start().strip_prefix(':')?.trim();
    serde_json::from_str::<serde_json::Value>(value)
        .ok()
        .filter(|v| v.is_string() || v.is_number())
        .map(|_| value.as_bytes().to_vec())
}

/// One line read: whole, or too long (its ends kept).
enum Line {
    Whole(Frame),
    TooLong(TooLong),
}

/// The first and last [`KEPT_ENDS`] bytes of a line over the limit, and its length.
#[derive(Default)]
struct TooLong {
    head: Vec<u8>,
    tail: Vec<u8>,
    bytes: usize,
}

impl TooLong {
    fn push(&mut self, chunk: &[u8]) {
        self.bytes += chunk.len();
        if self.head.len() < KEPT_ENDS {
            let take = chunk.len().min(KEPT_ENDS - self.head.len());
            self.head.extend_from_slice(&chunk[..take]);
        }
        self.tail.extend_from_slice(chunk);
        if self.tail.len() > 2 * KEPT_ENDS {
            self.tail.drain(..self.tail.len() - KEPT_ENDS);
        }
    }
}

/// A line that grows past this gets the address space of the limit reserved at once.
/// Growing by doubling would copy the line at each step and, for a moment, hold the old
/// and the new buffer (up to twice the line's size resident); a reservation costs address
/// space only, and pages become resident as the line fills them.
const RESERVE_FROM: usize = 8 << 20;

/// One line without its end, `None` at end of stream. A line over `max` bytes is not
/// kept (read to its end, its ends kept, logged).
async fn read_line<R>(
    reader: &mut BufReader<R>,
    peer: &'static str,
    max: usize,
) -> std::io::Result<Option<Line>>
where
    R: AsyncRead + Unpin,
{
    let mut line = Vec::new();
    let mut too_long: Option<TooLong> = None;
    loop {
        let buf = reader.fill_buf().await?;
        if buf.is_empty() {
            // End of stream: a last line without `\n` is still a line.
            if let Some(ends) = too_long {
                log_too_long(peer, ends.bytes, max);
                return Ok(Some(Line::TooLong(ends)));
            }
            return Ok((!line.is_empty()).then(|| Line::Whole(trimmed(line))));
        }
        let (chunk, done) = match memchr::memchr(b'\n', buf) {
            Some(at) => (&buf[..at], at + 1),
            None => (buf, buf.len()),
        };
        let ends = done > chunk.len();
        if too_long.is_some() || line.len() + chunk.len() > max {
            let kept = too_long.get_or_insert_with(|| {
                let mut ends = TooLong::default();
                ends.push(&std::mem::take(&mut line));
                ends
            });
            kept.push(chunk);
        } else {
            if line.len() + chunk.len() > RESERVE_FROM && line.capacity() < max {
                line.reserve_exact(max - line.len());
            }
            line.extend_from_slice(chunk);
        }
        reader.consume(done);
        if ends {
            if let Some(ends) = too_long {
                log_too_long(peer, ends.bytes, max);
                return Ok(Some(Line::TooLong(ends)));
            }
            return Ok(Some(Line::Whole(trimmed(line))));
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
pub async fn write_frames<W>(writer: W, frames: &mut mpsc::Receiver<Frame>) -> std::io::Result<()>
where
    W: AsyncWrite + Unpin,
{
    // Small frames gather into one write (a frame and its `\n` were two system calls, and
    // a burst of answers one pair each); a big frame goes straight through.
    let mut writer = tokio::io::BufWriter::with_capacity(64 * 1024, writer);
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
        read_frames(input, tx, Side::Client).await;
        let mut got = Vec::new();
        while let Ok(Incoming::Frame(f)) = rx.try_recv() {
            got.push(String::from_utf8(f).unwrap());
        }
        assert_eq!(got, ["{\"a\":1}", "{\"b\":2}", "last"]);
    }

    #[tokio::test]
    async fn a_line_over_the_cap_is_not_kept_and_the_next_one_read() {
        let input: &[u8] = b"short\nthis line is far too long\nnext\n";
        // A tiny buffer: the long line arrives in several pieces.
        let mut reader = BufReader::with_capacity(4, input);
        let mut lines = Vec::new();
        while let Some(line) = read_line(&mut reader, "test", 8).await.unwrap() {
            match line {
                Line::Whole(line) => lines.push(String::from_utf8(line).unwrap()),
                Line::TooLong(ends) => lines.push(format!("({} bytes)", ends.bytes)),
            }
        }
        assert_eq!(lines, ["short", "(25 bytes)", "next"]);
    }

    async fn stand_ins(input: &[u8], side: Side, max: usize) -> Vec<serde_json::Value> {
        let (tx, mut rx) = mpsc::channel(8);
        read_frames_within(input, tx, side, max).await;
        let mut got = Vec::new();
        while let Ok(Incoming::Frame(f)) = rx.try_recv() {
            got.push(serde_json::from_slice(&f).unwrap());
        }
        got
    }

    #[tokio::test]
    async fn an_oversized_answer_becomes_an_error_to_its_id() {
        let big = "x".repeat(20_000);
        // The id early (Python SDK), late (TypeScript SDK), or nowhere to be found.
        let early = format!(r#"{{"jsonrpc":"2.0","id":"a-1","result":{{"t":"{big}"}}}}"#);
        let late = format!(r#"{{"result":{{"id":9,"t":"{big}"}},"jsonrpc":"2.0","id":7}}"#);
        let none = format!(r#"{{"jsonrpc":"2.0","method":"n","params":{{"t":"{big}"}}}}"#);
        let input = format!("{early}\n{late}\n{none}\n{{\"id\":1}}\n");
        let got = stand_ins(input.as_bytes(), Side::Upstream, 1000).await;
        assert_eq!(got.len(), 3, "{got:?}");
        assert_eq!(got[0]["id"], "a-1");
        assert_eq!(got[1]["id"], 7);
        assert!(
            got[0]["error"]["message"]
                .as_str()
                .unwrap()
                .contains("over the 1000 bytes"),
            "{got:?}"
        );
        assert_eq!(got[2], serde_json::json!({"id": 1}));
    }

    #[tokio::test]
    async fn an_oversized_request_becomes_the_oversized_method() {
        let big = "y".repeat(5000);
        let input =
            format!(r#"{{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{{"a":"{big}"}}}}"#);
        let got = stand_ins(input.as_bytes(), Side::Client, 100).await;
        assert_eq!(got[0]["method"], OVERSIZED_METHOD);
        assert_eq!(got[0]["id"], 3);
        assert_eq!(got[0]["params"]["bytes"], input.len());
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
