//! Reading inputs, resolving flags into library options, writing results.

use std::io::{Read as _, Write as _};
use std::path::Path;

use envelope::{EncodeOptions, FormatId};

use crate::Failure;
use crate::cli::EncodeArgs;
use crate::progress::Progress;

/// The bytes of a file, or of stdin for `-`.
pub fn read(path: &Path) -> Result<Vec<u8>, Failure> {
    let mut bytes = Vec::new();
    if path.as_os_str() == "-" {
        stdin_notice();
        std::io::stdin()
            .read_to_end(&mut bytes)
            .map_err(|e| Failure::usage("input.unreadable", format!("cannot read stdin: {e}")))?;
    } else {
        bytes = std::fs::read(path).map_err(|e| {
            Failure::usage(
                "input.unreadable",
                format!("cannot read {}: {e}", path.display()),
            )
        })?;
    }
    Ok(bytes)
}

/// A reader of a file, or of stdin for `-`.
pub fn open(path: &Path) -> Result<Box<dyn std::io::Read>, Failure> {
    if path.as_os_str() == "-" {
        stdin_notice();
        return Ok(Box::new(std::io::stdin().lock()));
    }
    let file = std::fs::File::open(path).map_err(|e| read_error(path, &e))?;
    Ok(Box::new(file))
}

/// The usage error of an input that cannot be read.
pub fn read_error(path: &Path, e: &std::io::Error) -> Failure {
    match path.as_os_str() == "-" {
        true => Failure::usage("input.unreadable", format!("cannot read stdin: {e}")),
        false => Failure::usage(
            "input.unreadable",
            format!("cannot read {}: {e}", path.display()),
        ),
    }
}

/// The bytes of a file, or of stdin for `-`, read through a progress line: `label`, the
/// bytes read (of the file's size), the time spent; it lives on for the work that follows.
pub fn read_with_progress(path: &Path, label: &str) -> Result<(Vec<u8>, Progress), Failure> {
    let mut bytes = Vec::new();
    if path.as_os_str() == "-" {
        stdin_notice();
        let progress = Progress::new(format!("{label} stdin"), None);
        progress
            .reader(std::io::stdin().lock())
            .read_to_end(&mut bytes)
            .map_err(|e| Failure::usage("input.unreadable", format!("cannot read stdin: {e}")))?;
        return Ok((bytes, progress));
    }
    let unreadable = |e: std::io::Error| {
        Failure::usage(
            "input.unreadable",
            format!("cannot read {}: {e}", path.display()),
        )
    };
    let mut file = std::fs::File::open(path).map_err(unreadable)?;
    let total = file.metadata().ok().map(|m| m.len());
    // The buffer is sized from the file's length, as `std::fs::read` does: grown by doubling
    // instead, it would be copied several times and touch twice the input's size in fresh
    // pages (the kernel zeroes each one), the largest cost of a large offload.
    if let Some(len) = total.and_then(|len| usize::try_from(len).ok()) {
        bytes.try_reserve_exact(len).map_err(|e| {
            Failure::usage(
                "input.unreadable",
                format!("cannot read {}: {e}", path.display()),
            )
        })?;
    }
    let progress = Progress::new(format!("{label} {}", path.display()), total);
    // Read by the file itself (through `take`, a step at a time for the progress line): it
    // reads into the buffer's spare room as it is, where a reader that only implements
    // `read` (such as `Progress::reader`) has the whole room zeroed first. A short step met
    // the end, which is final (a terminal is not asked for a second Ctrl-D).
    loop {
        let read = (&mut file)
            .take(READ_STEP)
            .read_to_end(&mut bytes)
            .map_err(unreadable)?;
        progress.advance(read as u64);
        if (read as u64) < READ_STEP {
            break;
        }
    }
    Ok((bytes, progress))
}

/// An input's bytes: read into memory, or mapped from the file ([`map_with_progress`]).
pub enum Bytes {
    /// Read into a buffer.
    Read(Vec<u8>),
    /// The file's pages, mapped read-only.
    Mapped(memmap2::Mmap),
}

impl std::ops::Deref for Bytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            Bytes::Read(bytes) => bytes,
            Bytes::Mapped(map) => map,
        }
    }
}

/// [`read_with_progress`], except that a regular file of [`MAP_FROM`] bytes or more is
/// mapped instead of read: its bytes are the page cache's own, with no copy into fresh
/// memory that the kernel must zero first (half the time of offloading a large document
/// read into a buffer, docs/benchmarks.md). Its pages count in the resident set as a
/// buffer's would.
///
/// A file another process truncates while it is mapped ends the command with `SIGBUS`, and
/// one it rewrites in place may be seen half old, half new (an offloaded blob would then
/// fail its digest check when read back): the same as any program that maps its input.
pub fn map_with_progress(path: &Path, label: &str) -> Result<(Bytes, Progress), Failure> {
    if let Some(map) = map_large_file(path) {
        let progress = Progress::new(
            format!("{label} {}", path.display()),
            Some(map.len() as u64),
        );
        progress.advance(map.len() as u64);
        return Ok((Bytes::Mapped(map), progress));
    }
    let (bytes, progress) = read_with_progress(path, label)?;
    Ok((Bytes::Read(bytes), progress))
}

/// Regular files from this size on are mapped by [`map_with_progress`].
const MAP_FROM: u64 = 64 << 20;

/// The file at `path` mapped, when it is a regular file of at least [`MAP_FROM`] bytes that
/// can be mapped; `None` otherwise (stdin, a pipe, a small file: read it).
fn map_large_file(path: &Path) -> Option<memmap2::Mmap> {
    if path.as_os_str() == "-" {
        return None;
    }
    let file = std::fs::File::open(path).ok()?;
    let meta = file.metadata().ok()?;
    if !meta.is_file() || meta.len() < MAP_FROM {
        return None;
    }
    // SAFETY: the mapping is read-only and private. Another process changing the file
    // while it is mapped is the documented risk of `map_with_progress`; nothing in this
    // process writes to it. `populate` reads the pages in at once, as reading would.
    unsafe { memmap2::MmapOptions::new().populate().map(&file) }.ok()
}

/// The bytes [`read_with_progress`] reads from a file between two updates of its progress.
const READ_STEP: u64 = 16 << 20;

/// Says on stderr that stdin is being read when it is a terminal, so that a command given
/// no file does not seem to hang.
pub fn stdin_notice() {
    use std::io::IsTerminal as _;
    if std::io::stdin().is_terminal() {
        let _ = writeln!(
            std::io::stderr(),
            "envelope: reading the input from the terminal (end it with Ctrl-D, or give a file)"
        );
    }
}

/// A format id from the command line (an unknown id is a usage error).
pub fn format_id(text: &str) -> Result<FormatId, Failure> {
    text.parse()
        .map_err(|e: envelope::Error| Failure::usage(e.code(), e))
}

pub fn opt_format_id(text: Option<&str>) -> Result<Option<FormatId>, Failure> {
    text.map(format_id).transpose()
}

/// The token limit of `--limit-tokens` and the tokenizer of `--tokenizer` (o200k_base when
/// not given); an unknown tokenizer is a usage error naming the known ones.
pub fn token_limit(
    args: &crate::cli::TokenArgs,
) -> Result<Option<(usize, envelope::tokens::Tokenizer)>, Failure> {
    let Some(limit) = args.limit_tokens else {
        return Ok(None);
    };
    let name = args.tokenizer.as_deref().unwrap_or("o200k_base");
    let tokenizer = envelope::tokens::Tokenizer::by_name(name)
        .map_err(|e| Failure::usage("usage.bad-value", format!("--tokenizer: {e}")))?;
    Ok(Some((limit, tokenizer)))
}

/// Library encode options from flags and the environment (`CTXO_RESPONSE_LIMIT`).
pub fn encode_options(args: &EncodeArgs) -> Result<EncodeOptions, Failure> {
    if let Some(ts) = &args.ts
        && envelope::time::parse_rfc3339(ts).is_none()
    {
        return Err(Failure::usage(
            "usage.bad-value",
            format!("--ts {ts:?} is not an RFC 3339 timestamp"),
        ));
    }
    let env_limit = std::env::var("CTXO_RESPONSE_LIMIT").ok();
    Ok(EncodeOptions {
        ctxo_limit: Some(
            args.limit
                .unwrap_or_else(|| envelope::formats::ctxo::parse_limit(env_limit.as_deref())),
        ),
        dual_emit: args.dual_emit,
        now: args.ts.clone(),
        indented: args.indented,
    })
}

/// Writes a result to stdout.
///
/// A reader that stopped reading (`envelope … | head`) ends the command quietly, with
/// exit 0 and no message: the output was not wanted any more.
pub fn write_stdout(bytes: &[u8]) -> Result<(), Failure> {
    write_all(|out| out.write_all(bytes))
}

/// Writes what `write` writes to stdout (a large output a piece at a time, never joined),
/// then a newline unless it ended with one.
pub fn write_with(
    write: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> Result<(), Failure> {
    write_all(|out| {
        let mut out = LastByte { out, last: None };
        write(&mut out)?;
        match out.last {
            Some(b'\n') => Ok(()),
            _ => out.write_all(b"\n"),
        }
    })
}

/// A writer that remembers the last byte written through it.
struct LastByte<'w> {
    out: &'w mut dyn std::io::Write,
    last: Option<u8>,
}

impl std::io::Write for LastByte<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.out.write(buf)?;
        if n > 0 {
            self.last = Some(buf[n - 1]);
        }
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

/// Runs `write` on stdout and flushes it (see [`write_stdout`] for a reader that stopped).
pub fn write_all(
    write: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> Result<(), Failure> {
    let mut out = std::io::stdout().lock();
    match write(&mut out).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => std::process::exit(0),
        Err(e) => Err(Failure::usage(
            "output.unwritable",
            format!("cannot write stdout: {e}"),
        )),
    }
}

/// Writes bytes that do not end in a newline, then one.
pub fn write_line(bytes: &[u8]) -> Result<(), Failure> {
    // Two writes, not a copy of a possibly large output.
    write_with(|out| out.write_all(bytes))
}

/// The loss report as one JSON line on stderr.
pub fn report_losses(losses: &envelope::LossReport) {
    report(losses, &[]);
}

/// The report as one JSON line on stderr: what was lost and, when redacting, what was
/// masked (rule and place, never the secret).
pub fn report(losses: &envelope::LossReport, redacted: &[envelope::shape::Redaction]) {
    let lost: Vec<serde_json::Value> = losses
        .items
        .iter()
        .map(|l| serde_json::json!({"field": l.field, "reason": l.reason}))
        .collect();
    let mut report = serde_json::json!({ "lost": lost });
    if !redacted.is_empty() {
        report["redacted"] = redacted
            .iter()
            .map(|r| serde_json::json!({"rule": r.rule, "at": r.at}))
            .collect();
    }
    let _ = writeln!(std::io::stderr(), "{report}");
}

/// A diagnostic line on stderr, only when stderr is a terminal (stdout stays results only).
pub fn note(message: &str) {
    use std::io::IsTerminal as _;
    if std::io::stderr().is_terminal() {
        let _ = writeln!(std::io::stderr(), "envelope: {message}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file of `MAP_FROM` bytes or more is mapped, a smaller one read; both give the
    /// file's bytes, and a missing file is the usage error it always was.
    #[test]
    fn a_large_file_is_mapped_with_the_bytes_a_read_gives() {
        let dir = std::env::temp_dir().join(format!("envelope-cli-map-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (large, small) = (dir.join("large.json"), dir.join("small.json"));
        let bytes: Vec<u8> = (0..MAP_FROM as usize + 5)
            .map(|i| (i % 251) as u8)
            .collect();
        std::fs::write(&large, &bytes).unwrap();
        std::fs::write(&small, &bytes[..1000]).unwrap();

        let Ok((mapped, _progress)) = map_with_progress(&large, "testing") else {
            panic!("the large file is not read");
        };
        assert!(matches!(mapped, Bytes::Mapped(_)));
        assert!(*mapped == bytes[..]);
        let Ok((read, _progress)) = map_with_progress(&small, "testing") else {
            panic!("the small file is not read");
        };
        assert!(matches!(read, Bytes::Read(_)));
        assert!(*read == bytes[..1000]);
        assert!(map_with_progress(&dir.join("missing.json"), "testing").is_err());

        std::fs::remove_dir_all(&dir).unwrap();
    }
}
