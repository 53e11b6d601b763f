//! The upstream child's stderr, re-emitted as the proxy's own log records.
//!
//! MCP servers write free-form logs on stderr. Passed through as they are, they would mix
//! with the proxy's JSON-line logs, so they are read through a pipe and each line becomes
//! one record, `{"level":"info","event":"upstream.stderr","source":"upstream","line":"…"}`,
//! filtered by `--log-level` like every record (info: hidden at the default, warn).
//!
//! Two rules keep a server safe from its own logging:
//! - the pipe is always drained, whatever the level: a server blocked on a full stderr
//!   pipe would stop answering. Lines that are not logged are read and dropped.
//! - a line is kept up to [`MAX_STDERR_LINE`] bytes; the rest of it is read and counted,
//!   never buffered (`"cut_bytes"` says how much was left out).
//!
//! The last [`TAIL_LINES`] lines are kept ([`Tail`]): when the child dies on its own with a
//! failure and the lines were not logged (below info), they are logged once at warn, so a
//! crash's traceback is seen at the default level.
//!
//! Secrets a server prints (`Authorization: Bearer …` in a traceback) are masked in both
//! records, as in every record: the [`log`] writer redacts every string it writes.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncBufReadExt as _, AsyncRead, BufReader};

use crate::stats::log;

/// The bytes of one stderr line that are kept; the rest is counted and dropped.
pub const MAX_STDERR_LINE: usize = 8 * 1024;

/// How many of the last stderr lines [`Tail`] keeps.
pub const TAIL_LINES: usize = 20;

/// The last [`TAIL_LINES`] lines of a child's stderr (each at most [`MAX_STDERR_LINE`]
/// bytes).
#[derive(Debug, Default)]
pub struct Tail {
    lines: VecDeque<String>,
}

impl Tail {
    fn push(&mut self, line: &str) {
        if self.lines.len() == TAIL_LINES {
            self.lines.pop_front();
        }
        self.lines.push_back(line.to_string());
    }

    /// Takes the lines out, oldest first.
    pub fn take(&mut self) -> Vec<String> {
        self.lines.drain(..).collect()
    }
}

/// One line of the upstream's stderr, as logged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StderrLine {
    /// The line's start (at most `max` bytes, cut at a character boundary), without its
    /// end; invalid UTF-8 becomes U+FFFD.
    pub text: String,
    /// Bytes of the line left out (0 for a whole line).
    pub cut_bytes: usize,
}

/// Reads `reader` to its end, logs each line at info and keeps the last ones in `tail`
/// (see the module documentation).
pub async fn forward<R: AsyncRead + Unpin>(reader: R, pid: i32, tail: Arc<Mutex<Tail>>) {
    let result = read_lines(reader, MAX_STDERR_LINE, |line| {
        tail.lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(&line.text);
        if !log::enabled(log::Level::Info) {
            return;
        }
        let mut fields = vec![
            ("source", "upstream".into()),
            ("pid", pid.into()),
            ("line", line.text.into()),
        ];
        if line.cut_bytes > 0 {
            fields.push(("cut_bytes", line.cut_bytes.into()));
        }
        log::info("upstream.stderr", &fields);
    })
    .await;
    if let Err(e) = result {
        log::warn(
            "upstream.stderr_read_error",
            &[("pid", pid.into()), ("error", e.to_string().into())],
        );
    }
}

/// Calls `each` for every line of `reader` (a last line without `\n` included), keeping at
/// most `max` bytes of a line.
pub async fn read_lines<R: AsyncRead + Unpin>(
    reader: R,
    max: usize,
    mut each: impl FnMut(StderrLine),
) -> std::io::Result<()> {
    let mut reader = BufReader::with_capacity(16 * 1024, reader);
    let mut kept = Vec::with_capacity(256);
    let mut cut_bytes = 0usize;
    loop {
        let buf = reader.fill_buf().await?;
        if buf.is_empty() {
            if !kept.is_empty() || cut_bytes > 0 {
                each(finish(&mut kept, &mut cut_bytes));
            }
            return Ok(());
        }
        let (chunk, consumed, ends) = match memchr::memchr(b'\n', buf) {
            Some(at) => (&buf[..at], at + 1, true),
            None => (buf, buf.len(), false),
        };
        let room = max.saturating_sub(kept.len());
        let take = room.min(chunk.len());
        kept.extend_from_slice(&chunk[..take]);
        cut_bytes += chunk.len() - take;
        reader.consume(consumed);
        if ends {
            each(finish(&mut kept, &mut cut_bytes));
        }
    }
}

/// The line gathered so far, and a fresh start for the next one.
fn finish(kept: &mut Vec<u8>, cut_bytes: &mut usize) -> StderrLine {
    if kept.last() == Some(&b'\r') && *cut_bytes == 0 {
        kept.pop();
    }
    let mut end = kept.len();
    if *cut_bytes > 0 {
        // A character split by the cut is left out whole (it counts as cut).
        if let Err(e) = std::str::from_utf8(kept)
            && e.error_len().is_none()
        {
            end = e.valid_up_to();
        }
    }
    let line = StderrLine {
        text: String::from_utf8_lossy(&kept[..end]).into_owned(),
        cut_bytes: *cut_bytes + (kept.len() - end),
    };
    kept.clear();
    *cut_bytes = 0;
    line
}

/// Logs the kept lines at warn when the child failed and they were not logged already.
pub fn log_tail_of_failure(pid: i32, tail: &Mutex<Tail>) {
    if log::enabled(log::Level::Info) {
        return;
    }
    let lines = tail.lock().unwrap_or_else(|e| e.into_inner()).take();
    if !lines.is_empty() {
        log::warn(
            "upstream.stderr_tail",
            &[
                ("source", "upstream".into()),
                ("pid", pid.into()),
                ("lines", lines.into()),
            ],
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tail_keeps_the_last_lines() {
        let mut tail = Tail::default();
        for i in 0..TAIL_LINES + 5 {
            tail.push(&i.to_string());
        }
        let lines = tail.take();
        assert_eq!(lines.len(), TAIL_LINES);
        assert_eq!(lines[0], "5");
        assert_eq!(lines.last().unwrap(), &(TAIL_LINES + 4).to_string());
        assert!(tail.take().is_empty());
    }

    async fn lines(input: &[u8], max: usize) -> Vec<StderrLine> {
        let mut out = Vec::new();
        // A tiny reader buffer would not change the result: chunks are joined per line.
        read_lines(input, max, |line| out.push(line)).await.unwrap();
        out
    }

    fn whole(text: &str) -> StderrLine {
        StderrLine {
            text: text.into(),
            cut_bytes: 0,
        }
    }

    #[tokio::test]
    async fn each_line_once_without_its_end() {
        let got = lines(b"one\r\n\ntwo\nlast without end", 100).await;
        assert_eq!(
            got,
            [
                whole("one"),
                whole(""),
                whole("two"),
                whole("last without end")
            ]
        );
    }

    #[tokio::test]
    async fn a_long_line_is_cut_and_counted_and_the_next_one_is_whole() {
        let mut input = vec![b'x'; 100_000];
        input.extend_from_slice(b"\nnext\n");
        let got = lines(&input, 10).await;
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].text, "x".repeat(10));
        assert_eq!(got[0].cut_bytes, 100_000 - 10);
        assert_eq!(got[1], whole("next"));
    }

    #[tokio::test]
    async fn a_cut_never_splits_a_character_and_bad_bytes_are_replaced() {
        // "é" is two bytes: a cut after 3 bytes would split the second one.
        let got = lines("aéé\n".as_bytes(), 4).await;
        assert_eq!(got[0].text, "aé");
        assert_eq!(got[0].cut_bytes, 2);
        let got = lines(b"ok \xff\xfe end\n", 100).await;
        assert_eq!(got[0].text, "ok \u{fffd}\u{fffd} end");
    }

    /// Issue 26: the upstream's stderr (and its tail, at the default level) went into our
    /// log verbatim, secrets included.
    #[test]
    fn secrets_in_stderr_lines_and_their_tail_are_masked_in_our_log() {
        let token = "ghp_0123456789abcdefABCDEF0123456789abcd";
        let input = format!("starting\nAuthorization: Bearer {token}\nretry with token={token}\n");
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let tail = Arc::new(Mutex::new(Tail::default()));
        let ((), out) = log::capture(log::Level::Info, || {
            runtime.block_on(forward(input.as_bytes(), 7, tail.clone()));
        });
        assert_eq!(out.lines().count(), 3, "{out}");
        assert!(!out.contains(token), "{out}");
        assert!(out.contains("Bearer ***"), "{out}");
        // At warn the lines are not logged; the tail of a failed child is, masked too.
        let tail = Arc::new(Mutex::new(Tail::default()));
        let ((), out) = log::capture(log::Level::Warn, || {
            runtime.block_on(forward(input.as_bytes(), 7, tail.clone()));
            log_tail_of_failure(7, &tail);
        });
        assert_eq!(out.lines().count(), 1, "{out}");
        assert!(out.contains("upstream.stderr_tail"), "{out}");
        assert!(!out.contains(token), "{out}");
        assert!(out.contains("Bearer ***"), "{out}");
    }
}
