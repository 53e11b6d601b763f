//! NDJSON streams: one envelope per line, validated line by line in constant memory.
//!
//! Two kinds of protocol-v1 stream: progress streams (zero or more `progress` envelopes
//! with `meta.seq` from 0 increasing and `data.pct` within 0–100 never decreasing, then
//! exactly one terminal `ok`/`error`, nothing after it) and job-event streams (`{ts,
//! message?, percent?, meta?}` per line); or one envelope of another format per line. The
//! kind comes from the first line (`--format` narrows it), and every line must be of it.
//!
//! A stream of independent envelopes (a log, a batch) is checked with
//! [`StreamValidator::independent`]: each line is a document of its own, with its own
//! format, and no rule looks across lines.
//!
//! Every finding about a line carries its number ([`Finding::line`]); only the findings
//! about the whole stream (`stream.terminal`, `stream.empty`, `stream.more-findings`) have
//! none.
//!
//! Memory: one line at a time (a line over the cap is skipped, not stored), a few numbers of
//! state, and at most 1,000 findings kept (the rest are counted in a last
//! `stream.more-findings` warning).
//!
//! [`validate_stream`] reads a whole stream; [`StreamValidator`] takes lines one at a time
//! from a reader of the caller's (feed it with [`read_line`]).

use std::io::{self, BufRead};

use serde_json::Value;

use super::{Context, Finding, Findings, Options, Report, StreamKind, text};
use crate::formats::FormatId;
use crate::formats::protocol_v1::wire;
use crate::json::pointer;

/// Lines longer than this are not read (a finding says so). 16 MiB.
pub const DEFAULT_LINE_CAP: usize = 16 * 1024 * 1024;

/// Findings kept per stream; later ones are counted in a last warning.
pub(crate) const MAX_FINDINGS: usize = 1000;

/// `data.pct` of a progress line.
enum Pct {
    Absent,
    Number(f64),
    /// Not a number: its JSON text.
    Invalid(String),
}

/// What the lines of a stream are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    ProtocolV1,
    JobEvent,
    /// Any other envelope format, one per line (no stream rules).
    Other(FormatId),
}

/// Validates an NDJSON stream read from `reader`, lines capped at `line_cap` bytes
/// ([`DEFAULT_LINE_CAP`] is the CLI's). Only reading can fail; what is wrong with the stream
/// is in the report's findings, each with its line.
///
/// ```
/// use envelope::validate::stream::{DEFAULT_LINE_CAP, validate_stream};
/// use envelope::validate::Options;
///
/// let progress = |seq: u32, pct: u32| {
///     format!(r#"{{"version":1,"status":"progress","command":"fs/ls","data":{{"pct":{pct}}},"meta":{{"ts":"2026-07-04T00:00:00Z","seq":{seq}}},"error":{{}}}}"#)
/// };
/// let done = r#"{"version":1,"status":"ok","command":"fs/ls","data":[],"meta":{"ts":"2026-07-04T00:00:01Z"},"error":{}}"#;
///
/// let stream = format!("{}\n{}\n{done}\n", progress(0, 10), progress(1, 50));
/// let report = validate_stream(stream.as_bytes(), &Options::default(), DEFAULT_LINE_CAP)?;
/// assert!(report.is_valid());
///
/// // The percentage goes back on line 2, and nothing terminal ends the stream.
/// let stream = format!("{}\n{}\n", progress(0, 50), progress(1, 10));
/// let report = validate_stream(stream.as_bytes(), &Options::default(), DEFAULT_LINE_CAP)?;
/// let found: Vec<_> = report.findings.iter().map(|f| (f.rule, f.line)).collect();
/// assert_eq!(found, [("stream.pct", Some(2)), ("stream.terminal", None)]);
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn validate_stream<R: BufRead>(
    reader: R,
    options: &Options,
    line_cap: usize,
) -> io::Result<Report> {
    StreamValidator::new(options.clone()).run(reader, line_cap)
}

impl StreamValidator {
    /// Validates every line of `reader` (lines capped at `line_cap` bytes), then finishes.
    pub fn run<R: BufRead>(mut self, mut reader: R, line_cap: usize) -> io::Result<Report> {
        let mut buf = Vec::new();
        let mut number = 0u64;
        loop {
            // A whole line inside the reader's buffer is validated where it is, uncopied.
            let available = match reader.fill_buf() {
                Ok(a) => a,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if let Some(end) = memchr::memchr(b'\n', available)
                && end <= line_cap
            {
                number += 1;
                self.line(number, &available[..end], true);
                reader.consume(end + 1);
                continue;
            }
            // Otherwise the line goes on past the buffer (or ends the stream): assemble it.
            let Some(line) = read_line(&mut reader, &mut buf, line_cap)? else {
                break;
            };
            number += 1;
            match line {
                Line::TooLong { len } => self.too_long(number, len),
                Line::Text { terminated } => self.line(number, &buf, terminated),
            }
        }
        Ok(self.finish())
    }
}

/// One line as [`read_line`] read it: its bytes are in the caller's buffer, without the
/// `\n`.
#[derive(Debug, PartialEq, Eq)]
pub enum Line {
    /// A line of at most the cap (feed it to [`StreamValidator::line`]).
    Text {
        /// It ended with `\n` (not: the stream ended inside it).
        terminated: bool,
    },
    /// A line longer than the cap, not stored (feed it to [`StreamValidator::too_long`]).
    TooLong {
        /// Its length in bytes, without the `\n`.
        len: u64,
    },
}

/// Reads the next line into `buf` (cleared first), storing at most `cap` bytes of it;
/// `None` at the end of the stream.
pub fn read_line<R: BufRead>(r: &mut R, buf: &mut Vec<u8>, cap: usize) -> io::Result<Option<Line>> {
    buf.clear();
    let mut len = 0u64;
    let mut too_long = false;
    loop {
        let available = match r.fill_buf() {
            Ok(a) => a,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if available.is_empty() {
            return Ok(match (len, too_long) {
                (0, _) => None,
                (_, true) => Some(Line::TooLong { len }),
                (_, false) => Some(Line::Text { terminated: false }),
            });
        }
        let (chunk, done) = match memchr::memchr(b'\n', available) {
            Some(i) => (&available[..i], true),
            None => (available, false),
        };
        len += chunk.len() as u64;
        if !too_long {
            if buf.len() + chunk.len() <= cap {
                buf.extend_from_slice(chunk);
            } else {
                too_long = true;
                buf.clear();
            }
        }
        let consumed = chunk.len() + usize::from(done);
        r.consume(consumed);
        if done {
            return Ok(Some(if too_long {
                Line::TooLong { len }
            } else {
                Line::Text { terminated: true }
            }));
        }
    }
}

/// Stream state, fed one line at a time ([`StreamValidator::line`],
/// [`StreamValidator::too_long`]), then [`StreamValidator::finish`]ed into a report; or
/// [`StreamValidator::run`] over a reader.
pub struct StreamValidator {
    options: Options,
    kind: Option<Kind>,
    last_seq: Option<i64>,
    last_pct: Option<f64>,
    terminal_line: Option<u64>,
    envelopes: u64,
    /// The formats whose rules were applied, in the order first met.
    formats: Vec<FormatId>,
    independent: bool,
    findings: Vec<Finding>,
    dropped: u64,
    fast_path: bool,
    fast_lines: u64,
}

impl StreamValidator {
    /// A validator for a stream checked with `options` (the format given there, or the
    /// kind of the first line).
    pub fn new(options: Options) -> Self {
        StreamValidator {
            fast_path: true,
            fast_lines: 0,
            options,
            kind: None,
            last_seq: None,
            last_pct: None,
            terminal_line: None,
            envelopes: 0,
            formats: Vec::new(),
            independent: false,
            findings: Vec::new(),
            dropped: 0,
        }
    }

    /// Lines the fast path took.
    pub fn fast_lines(&self) -> u64 {
        self.fast_lines
    }

    /// Every line through the general path (for tests and benchmarks that compare both).
    pub fn without_fast_path(mut self) -> Self {
        self.fast_path = false;
        self
    }

    /// Each line is a document of its own (a log, a batch of results): its format is the
    /// one given in the options, else detected line by line (a line that no format claims
    /// and that looks like a job event, `{ts, …}` without `status` or `version`, is one), and
    /// no rule looks across lines — no `meta.seq` order, no `data.pct` order, no terminal
    /// envelope, no one kind per stream. What a single line can break still counts: a
    /// `progress` envelope (allowed, as in any stream) needs an integer `meta.seq` and a
    /// `data.pct` within 0–100.
    ///
    /// ```
    /// use envelope::validate::stream::{DEFAULT_LINE_CAP, StreamValidator};
    /// use envelope::validate::{Options, StreamKind};
    ///
    /// let batch = concat!(
    ///     r#"{"content":[{"type":"text","text":"hi"}]}"#, "\n",
    ///     r#"{"version":1,"status":"ok","command":"fs/ls","data":[],"meta":{"ts":"2026-07-04T00:00:00Z"},"error":{}}"#, "\n",
    /// );
    /// let report = StreamValidator::new(Options::default())
    ///     .independent()
    ///     .run(batch.as_bytes(), DEFAULT_LINE_CAP)?;
    /// assert!(report.is_valid(), "{:?}", report.findings);
    /// assert_eq!(report.stream, Some(StreamKind::Independent));
    /// assert_eq!(report.formats.len(), 2);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn independent(mut self) -> Self {
        self.independent = true;
        self
    }

    fn saw(&mut self, format: FormatId) {
        if !self.formats.contains(&format) {
            self.formats.push(format);
        }
    }

    fn keep(&mut self, f: Findings) {
        for finding in f.into_vec() {
            if self.findings.len() < MAX_FINDINGS {
                self.findings.push(finding);
            } else {
                self.dropped += 1;
            }
        }
    }

    fn findings_at(&self, number: u64) -> Findings {
        let mut f = Findings::new(self.options.profile);
        f.at_line(number);
        f
    }

    /// A line longer than the cap.
    pub fn too_long(&mut self, number: u64, len: u64) {
        let mut f = self.findings_at(number);
        f.report(
            "stream.line-too-long",
            "",
            format!("{len} bytes: over the line-length cap, not validated"),
        );
        self.keep(f);
    }

    /// Line `number` (bytes without the `\n`); `terminated`: it ended with `\n`.
    pub fn line(&mut self, number: u64, bytes: &[u8], terminated: bool) {
        let mut f = self.findings_at(number);
        let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
        if bytes.iter().all(u8::is_ascii_whitespace) {
            if terminated {
                f.report("stream.blank-line", "", "empty line");
            }
            self.keep(f);
            return;
        }
        if self.fast_path && self.fast_line(number, bytes, &mut f) {
            self.keep(f);
            return;
        }
        let parsed = text::parse(bytes, &mut f);
        // Syntax errors count lines within the line: they are all on stream line `number`.
        f.relocate(number);
        if !terminated && f.iter().any(|x| x.rule == "json.eof") {
            f.report("stream.truncated", "", "the stream ends inside this line");
        }
        if let Some(parsed) = parsed {
            self.envelope(number, &parsed.value, &parsed.text, &mut f);
        }
        self.keep(f);
    }

    /// The rules of `format` on line `number` (its value, read from `text`).
    fn check(&mut self, format: FormatId, value: &Value, text: &str, f: &mut Findings) {
        let options = Options {
            format: Some(format),
            ..self.options.clone()
        };
        super::check_value(value, Some(text), &options, f, Context::StreamLine);
        self.saw(format);
    }

    /// A protocol-v1 line: its rules, then the stream rules of its status, seq and pct (read
    /// from what the rules read: in compat, the line as Go's decoder fills its types).
    fn protocol_v1(&mut self, number: u64, value: &Value, text: &str, f: &mut Findings) {
        let options = Options {
            format: Some(FormatId::ProtocolV1),
            ..self.options.clone()
        };
        let (_, view) =
            super::check_value_view(value, Some(text), &options, f, Context::StreamLine, None);
        self.saw(FormatId::ProtocolV1);
        let value = view.as_ref().unwrap_or(value);
        let pct = match value.pointer("/data/pct") {
            None | Some(Value::Null) => Pct::Absent,
            Some(v) => v
                .as_f64()
                .map_or_else(|| Pct::Invalid(v.to_string()), Pct::Number),
        };
        let status = value.get("status").and_then(Value::as_str);
        let seq = value.pointer("/meta/seq").and_then(Value::as_i64);
        self.progress_rules(number, status, seq, pct, f);
    }

    /// A line of an independent stream: a document of its own.
    fn independent_line(&mut self, number: u64, value: &Value, text: &str, f: &mut Findings) {
        let kind = match self.options.format {
            Some(FormatId::ProtocolV1) if looks_like_job_event(value) => Kind::JobEvent,
            Some(FormatId::ProtocolV1) => Kind::ProtocolV1,
            Some(format) => Kind::Other(format),
            None => match crate::detect::detect_value(value) {
                Ok(d) if d.format == FormatId::ProtocolV1 => Kind::ProtocolV1,
                Ok(d) => Kind::Other(d.format),
                Err(_) if looks_like_job_event(value) => Kind::JobEvent,
                Err(e) => {
                    f.report("format.undetected", "", e.to_string());
                    return;
                }
            },
        };
        match kind {
            Kind::JobEvent => {
                job_event(value, f);
                self.saw(FormatId::ProtocolV1);
            }
            Kind::Other(format) => self.check(format, value, text, f),
            Kind::ProtocolV1 => self.protocol_v1(number, value, text, f),
        }
    }

    fn envelope(&mut self, number: u64, value: &Value, text: &str, f: &mut Findings) {
        self.envelopes += 1;
        if self.independent {
            self.independent_line(number, value, text, f);
            return;
        }
        let kind = kind_of(value, self.options.format);
        let expected = *self.kind.get_or_insert(kind);
        if kind != expected {
            f.report(
                "stream.kind",
                "",
                format!("a {} line in a {} stream", kind.name(), expected.name()),
            );
            return;
        }
        self.after_terminal(f);
        match kind {
            Kind::JobEvent => {
                job_event(value, f);
                self.saw(FormatId::ProtocolV1);
            }
            Kind::Other(format) => self.check(format, value, text, f),
            Kind::ProtocolV1 => self.protocol_v1(number, value, text, f),
        }
    }

    /// The fast path for protocol-v1 lines: a line that deserializes into the closed wire
    /// type (so it has the shape of the published schema) and passes a conservative check
    /// of the document rules needs no `Value`. Anything else returns `false` and goes the
    /// general way, which explains it. A test compares both paths on mutated streams.
    fn fast_line(&mut self, number: u64, bytes: &[u8], f: &mut Findings) -> bool {
        let protocol_v1 = if self.independent {
            // A line that reads into the closed wire type has the root keys only
            // protocol-v1 detection looks for, and none another format's does.
            matches!(self.options.format, None | Some(FormatId::ProtocolV1))
        } else {
            match self.kind {
                Some(kind) => kind == Kind::ProtocolV1,
                None => self.options.format == Some(FormatId::ProtocolV1),
            }
        };
        if !protocol_v1 {
            return false;
        }
        // One UTF-8 check of the whole line (fast on ASCII), then a reader that trusts it.
        let Ok(text) = std::str::from_utf8(bytes) else {
            return false;
        };
        let Ok(env) = serde_json::from_str::<wire::Envelope<'_>>(text) else {
            return false;
        };
        // The wire types fail to read on a duplicate key anywhere, so a line that read has
        // none, and no unknown field either.
        if !crate::formats::protocol_v1::rules::surely_clean(&env, self.options.profile) {
            return false;
        }
        self.envelopes += 1;
        self.fast_lines += 1;
        self.saw(FormatId::ProtocolV1);
        if !self.independent {
            self.kind = Some(Kind::ProtocolV1);
            self.after_terminal(f);
        }
        let pct = match env.data.as_ref().and_then(|d| d.pct) {
            Some(p) => Pct::Number(p),
            None => Pct::Absent,
        };
        let status = match env.status {
            wire::Status::Ok => "ok",
            wire::Status::Error => "error",
            wire::Status::Progress => "progress",
        };
        self.progress_rules(number, Some(status), env.meta.seq, pct, f);
        true
    }

    fn after_terminal(&self, f: &mut Findings) {
        if let Some(terminal) = self.terminal_line {
            f.report(
                "stream.after-terminal",
                "",
                format!("the stream ended with the terminal envelope on line {terminal}"),
            );
        }
    }

    /// The stream rules of one protocol-v1 line: its status, `meta.seq` (when an integer)
    /// and `data.pct`; in an independent stream, only what the line breaks on its own.
    fn progress_rules(
        &mut self,
        number: u64,
        status: Option<&str>,
        seq: Option<i64>,
        pct: Pct,
        f: &mut Findings,
    ) {
        match status {
            Some("progress") => {}
            Some("ok" | "error") => {
                if !self.independent && self.terminal_line.is_none() {
                    self.terminal_line = Some(number);
                }
                return;
            }
            _ => return,
        }
        match seq {
            None => f.report(
                "stream.seq",
                "/meta/seq",
                "a progress envelope needs an integer meta.seq",
            ),
            Some(_) if self.independent => {}
            Some(seq) => {
                match self.last_seq {
                    None if seq != 0 => f.report(
                        "stream.seq",
                        "/meta/seq",
                        format!("the first progress seq must be 0, found {seq}"),
                    ),
                    Some(last) if seq <= last => f.report(
                        "stream.seq",
                        "/meta/seq",
                        format!("{seq} after {last}: seq must increase"),
                    ),
                    _ => {}
                }
                self.last_seq = Some(seq);
            }
        }
        match pct {
            Pct::Absent => {}
            Pct::Number(p) if (0.0..=100.0).contains(&p) && self.independent => {}
            Pct::Number(p) if (0.0..=100.0).contains(&p) => {
                if let Some(last) = self.last_pct
                    && p < last
                {
                    f.report(
                        "stream.pct",
                        "/data/pct",
                        format!("{p} after {last}: pct must not decrease"),
                    );
                }
                self.last_pct = Some(p);
            }
            Pct::Number(p) => f.report(
                "stream.pct",
                "/data/pct",
                format!("{p} is not within 0-100"),
            ),
            Pct::Invalid(text) => f.report(
                "stream.pct",
                "/data/pct",
                format!("{text} is not a number within 0-100"),
            ),
        }
    }

    /// The end of the stream: the rules about the whole of it.
    pub fn finish(mut self) -> Report {
        let mut f = Findings::new(self.options.profile);
        if self.envelopes == 0 {
            f.report("stream.empty", "", "no envelope in the stream");
        } else if !self.independent
            && self.kind == Some(Kind::ProtocolV1)
            && self.terminal_line.is_none()
        {
            f.report(
                "stream.terminal",
                "",
                "the stream has no terminal ok or error envelope",
            );
        }
        self.keep(f);
        if self.dropped > 0 {
            // Past the cap of kept findings, so not through `keep`.
            let mut more = Findings::new(self.options.profile);
            more.report(
                "stream.more-findings",
                "",
                format!("{} more findings not listed", self.dropped),
            );
            self.findings.extend(more.into_vec());
        }
        let (format, stream) = if self.independent {
            let format = match self.formats[..] {
                [one] => Some(one),
                [] => self.options.format,
                _ => None,
            };
            (format, Some(StreamKind::Independent))
        } else {
            match self.kind {
                Some(Kind::ProtocolV1) => (Some(FormatId::ProtocolV1), Some(StreamKind::Progress)),
                // Job events are protocol-v1's other kind of stream.
                Some(Kind::JobEvent) => (Some(FormatId::ProtocolV1), Some(StreamKind::JobEvents)),
                Some(Kind::Other(format)) => (Some(format), Some(StreamKind::Envelopes)),
                None => (self.options.format, None),
            }
        };
        let formats = if self.independent {
            self.formats
        } else {
            format.into_iter().collect()
        };
        Report {
            format,
            formats,
            stream,
            profile: self.options.profile,
            findings: self.findings,
        }
    }
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::ProtocolV1 => "protocol-v1",
            Kind::JobEvent => "job-event",
            Kind::Other(format) => format.as_str(),
        }
    }
}

/// Whether a line looks like a job event: a `ts` and neither `status` nor `version`.
fn looks_like_job_event(value: &Value) -> bool {
    let has = |k: &str| value.get(k).is_some();
    has("ts") && !has("status") && !has("version")
}

/// The kind of a line: another format given is that format's; else a job event when it
/// looks like one, protocol-v1 when protocol-v1 is given or the line has a `status` or
/// `version`, else what detection says.
fn kind_of(value: &Value, format: Option<FormatId>) -> Kind {
    let has = |k: &str| value.get(k).is_some();
    match format {
        Some(FormatId::ProtocolV1) | None if looks_like_job_event(value) => Kind::JobEvent,
        Some(FormatId::ProtocolV1) => Kind::ProtocolV1,
        Some(other) => Kind::Other(other),
        None if has("status") || has("version") => Kind::ProtocolV1,
        None => match crate::detect::detect_value(value) {
            Ok(d) if d.format != FormatId::ProtocolV1 => Kind::Other(d.format),
            _ => Kind::ProtocolV1,
        },
    }
}

/// A job-event line: `{ts, message?, percent?, meta?}`.
fn job_event(value: &Value, f: &mut Findings) {
    let Some(event) = value.as_object() else {
        f.report("job.type", "", "a job event is a JSON object");
        return;
    };
    match event.get("ts").and_then(Value::as_str) {
        Some(ts) if crate::time::parse_rfc3339(ts).is_some() => {}
        Some(ts) => f.report(
            "job.ts",
            "/ts",
            format!("{ts:?} is not an RFC 3339 timestamp"),
        ),
        None => f.report("job.ts", "/ts", "a job event needs a ts string"),
    }
    for (key, v) in event {
        let at = pointer::join("", key);
        match key.as_str() {
            "ts" => {}
            "message" if !v.is_string() => f.report("job.type", at, "must be a string"),
            "meta" if !v.is_object() => f.report("job.type", at, "must be an object"),
            "percent" => match v.as_f64() {
                Some(p) if (0.0..=100.0).contains(&p) => {}
                Some(_) => f.report("job.percent", at, format!("{v} is outside 0-100")),
                None => f.report("job.type", at, "must be a number"),
            },
            "message" | "meta" => {}
            _ => f.report(
                "job.unknown-field",
                at,
                format!("{key:?} is not a job event field (ts, message, percent, meta)"),
            ),
        }
    }
}
