//! Offload of large payloads to a content-addressed store (protocol-v1 artifactization,
//! for every format): the payload becomes `{"summary":{…},"artifact":"sha256:<hex>"}`.
//!
//! The core does no I/O: the caller hands in an [`ArtifactSink`] (the file or S3 store).

use std::borrow::Cow;

use serde_json::{Map, Value, json};

use super::cut::{Measured, StringIndex};
use crate::error::{Error, Result, SinkError};
use crate::formats::FormatId;
use crate::json::Dialect;
use crate::json::size::prefix;
use crate::json::skim::{LongString, Tail, TailIndex};
use crate::model::error::EnvelopeError;
use crate::model::{ArtifactRef, Envelope, Payload, Source, Status};

/// Where offloaded payloads go: the one interface between shaping and a store.
///
/// The core does no I/O, so the caller implements it, or takes the adapter of its store
/// (`envelope_store::StoreSink` for the file and S3 stores). [`offload`] calls
/// [`put`](ArtifactSink::put) at most once per envelope, and only for a payload over the
/// inline threshold and not over the capture limit.
///
/// ```rust
/// use envelope::model::ArtifactRef;
/// use envelope::shape::{ArtifactSink, SinkError};
///
/// /// Keeps artifacts in memory, named by their length (a real sink names them by hash).
/// #[derive(Default)]
/// struct Memory(Vec<(Vec<u8>, String)>);
///
/// impl ArtifactSink for Memory {
///     fn put(&mut self, bytes: &[u8], kind: &str) -> Result<ArtifactRef, SinkError> {
///         if bytes.len() > 1 << 20 {
///             return Err(SinkError::new("too_large", "the memory sink holds 1 MiB at most"));
///         }
///         self.0.push((bytes.to_vec(), kind.to_string()));
///         Ok(ArtifactRef { digest: format!("sha256:{:064x}", bytes.len()) })
///     }
/// }
///
/// let mut sink = Memory::default();
/// let reference = sink.put(b"hello", "text/plain")?;
/// assert_eq!(reference.digest, format!("sha256:{:064x}", 5));
/// let err = sink.put(&vec![0; 2 << 20], "application/octet-stream").unwrap_err();
/// assert_eq!(err.code(), "too_large");
/// # Ok::<(), SinkError>(())
/// ```
pub trait ArtifactSink {
    /// Stores `bytes` of media type `kind` (lower-case, without parameters, such as
    /// `application/json` or `text/plain`) and returns the reference they are stored under
    /// (`sha256:<64 lower-case hex>` for a content-addressed store).
    ///
    /// # Errors
    ///
    /// A [`SinkError`] with the store's own code when the bytes could not be stored; the
    /// pipeline reports it as [`Error::Store`] and leaves the envelope unchanged.
    fn put(&mut self, bytes: &[u8], kind: &str) -> std::result::Result<ArtifactRef, SinkError>;

    /// Starts storing an artifact whose bytes are given a piece at a time, or `None` (the
    /// default) when the sink stores whole artifacts only. Offloading a large payload that
    /// passes through unchanged uses it to hash and write the payload while the rest of the
    /// document is still being read; the result must be what [`put`](ArtifactSink::put) of
    /// all the pieces gives. A sink that cannot start one now returns `None` too: the
    /// offload then calls `put`, which reports the error.
    fn begin(&mut self) -> Option<Box<dyn ArtifactWriter + '_>> {
        None
    }
}

/// An artifact being stored a piece at a time ([`ArtifactSink::begin`]). Dropped before
/// [`finish`](ArtifactWriter::finish), it stores nothing and leaves nothing behind.
pub trait ArtifactWriter: Send {
    /// Adds `bytes` to the artifact.
    ///
    /// # Errors
    ///
    /// A [`SinkError`] when they cannot be stored (the artifact is then abandoned).
    fn write(&mut self, bytes: &[u8]) -> std::result::Result<(), SinkError>;

    /// Stores the artifact of the bytes written, of media type `kind` (as
    /// [`ArtifactSink::put`] takes it), and returns its reference.
    ///
    /// # Errors
    ///
    /// Those of [`ArtifactSink::put`].
    fn finish(self: Box<Self>, kind: &str) -> std::result::Result<ArtifactRef, SinkError>;
}

/// The protocol-v1 default inline threshold, 32 KiB. (Its capture limit, 1024 KiB, applies
/// only when asked for: [`OffloadOptions::max_capture`] defaults to no limit.)
pub const DEFAULT_INLINE_THRESHOLD: usize = 32 * 1024;

/// When a payload goes to the store, and when it is too large to keep at all.
#[derive(Clone, Debug)]
pub struct OffloadOptions {
    /// Payloads larger than this many serialized bytes go to the store (exactly this many
    /// stay inline).
    pub inline_threshold: usize,
    /// Payloads larger than this many serialized bytes become an `EOUTPUT_TOO_LARGE` error
    /// envelope, whatever the inline threshold (exactly this many are kept); `None`: no
    /// limit. See [`capture`].
    pub max_capture: Option<usize>,
}

impl Default for OffloadOptions {
    fn default() -> Self {
        OffloadOptions {
            inline_threshold: DEFAULT_INLINE_THRESHOLD,
            max_capture: None,
        }
    }
}

/// What the payload stage (capture check and offload) did.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Offloaded {
    /// The payload stays inline (no store, no payload, or not over the inline threshold),
    /// and not over the capture limit.
    Inline,
    /// The payload went to the store under this digest.
    Stored {
        /// The reference the sink returned (`sha256:<hex>`).
        digest: String,
        /// The length of the stored bytes.
        size_bytes: usize,
    },
    /// The payload exceeded the capture limit: the envelope is now an `EOUTPUT_TOO_LARGE`
    /// error, and nothing was stored.
    TooLarge {
        /// The length the payload would have had in the store.
        size_bytes: usize,
    },
}

/// Previews stay under this many bytes.
pub const PREVIEW_LIMIT: usize = 1024;

/// The payload as stored: its bytes (in the format's dialect for JSON; text and bytes as
/// they are, without a copy) and media type.
pub fn artifact_bytes(payload: &Payload, format: FormatId) -> Option<(Cow<'_, [u8]>, String)> {
    let dialect = crate::formats::get(format).dialect();
    match payload {
        Payload::None => None,
        Payload::Json(v) => Some((
            Cow::Owned(crate::json::to_vec(v, dialect)),
            "application/json".into(),
        )),
        Payload::Blocks(b) => {
            let mut out = Vec::new();
            let mut w = crate::json::JsonWriter::new(&mut out, dialect);
            w.begin_array();
            for block in b {
                w.value(block);
            }
            w.end_array();
            Some((Cow::Owned(out), "application/json".into()))
        }
        Payload::Text(s) => Some((Cow::Borrowed(s.as_bytes()), "text/plain".into())),
        Payload::Bytes { data, media_type } => {
            Some((Cow::Borrowed(data), normalize_kind(media_type)))
        }
    }
}

fn normalize_kind(kind: &str) -> String {
    kind.split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

/// The capture check on its own, as [`Pipeline`](super::Pipeline) runs it without a store:
/// when `env`'s payload, serialized as [`artifact_bytes`] writes it for `format`, is larger
/// than `max_capture` bytes, `env` becomes an `EOUTPUT_TOO_LARGE` error envelope
/// ([`Offloaded::TooLarge`]); otherwise (no limit, no payload, or exactly `max_capture`
/// bytes or fewer) it is unchanged ([`Offloaded::Inline`]). The inline threshold plays no
/// part: the capture limit is the same with or without a store.
///
/// ```rust
/// use envelope::shape::offload::capture;
/// use envelope::shape::Offloaded;
/// use envelope::{Envelope, FormatId, Status};
///
/// // "abc" serializes to 5 bytes.
/// let mut kept = Envelope::ok(serde_json::json!("abc"));
/// assert_eq!(capture(&mut kept, FormatId::Mcp, Some(5)), Offloaded::Inline);
///
/// let mut refused = Envelope::ok(serde_json::json!("abc"));
/// assert_eq!(capture(&mut refused, FormatId::Mcp, Some(4)), Offloaded::TooLarge { size_bytes: 5 });
/// assert_eq!(refused.status, Status::Error);
/// assert_eq!(refused.error.unwrap().code.as_deref(), Some("EOUTPUT_TOO_LARGE"));
/// assert!(refused.payload.is_none());
/// ```
pub fn capture(env: &mut Envelope, format: FormatId, max_capture: Option<usize>) -> Offloaded {
    let Some(max) = max_capture else {
        return Offloaded::Inline;
    };
    let Some(size) = artifact_bytes(&env.payload, format).map(|(bytes, _)| bytes.len()) else {
        return Offloaded::Inline;
    };
    match size > max {
        true => too_large(env, size, max),
        false => Offloaded::Inline,
    }
}

/// Makes `env` the `EOUTPUT_TOO_LARGE` error envelope of a payload of `size` bytes over a
/// capture limit of `max`.
pub(super) fn too_large(env: &mut Envelope, size: usize, max: usize) -> Offloaded {
    let mut error = EnvelopeError::from_code(
        "EOUTPUT_TOO_LARGE",
        format!("output of {size} bytes exceeds the capture limit of {max} bytes"),
    );
    error.hint = Some("Reduce the output or raise --max-capture.".into());
    error.details = Some(json!({"size_bytes": size, "max_capture": max}));
    env.status = Status::Error;
    env.error = Some(error);
    env.payload = Payload::None;
    env.presentation = None;
    // A reference the dropped payload carried (an input offloaded before) goes with it.
    env.artifact = None;
    Offloaded::TooLarge { size_bytes: size }
}

/// The payload stage with a store: first the capture check (see [`capture`]: over
/// `options.max_capture`, whatever the inline threshold, `env` becomes an
/// `EOUTPUT_TOO_LARGE` error and nothing is stored), then, for a payload larger than
/// `options.inline_threshold`, the offload: the payload (as [`artifact_bytes`] writes it
/// for `format`) goes to `sink`, and `env` keeps `{"summary":{…},"artifact":"<digest>"}`
/// in its place, with [`Envelope::artifact`] set. The payload is serialized once for both.
///
/// # Errors
///
/// [`Error::Store`] when the sink fails; `env` is then unchanged.
pub fn offload(
    env: &mut Envelope,
    format: FormatId,
    options: &OffloadOptions,
    sink: &mut dyn ArtifactSink,
) -> Result<Offloaded> {
    let Some((bytes, kind)) = artifact_bytes(&env.payload, format) else {
        return Ok(Offloaded::Inline);
    };
    let size = bytes.len();
    if let Some(max) = options.max_capture.filter(|&max| size > max) {
        // The refusal drops the payload these bytes may borrow.
        drop(bytes);
        return Ok(too_large(env, size, max));
    }
    if size <= options.inline_threshold {
        return Ok(Offloaded::Inline);
    }
    let artifact = sink.put(&bytes, &kind).map_err(Error::Store)?;
    let summary = summary(env, &kind, size);
    Ok(stored(env, artifact, summary, size))
}

/// The end of an offload whose artifact was written a piece at a time (`writer`, `size`
/// bytes of media type `kind`): over the capture limit, `env` becomes the
/// `EOUTPUT_TOO_LARGE` error; not over the inline threshold, `Ok(None)` (the payload stays
/// inline: the caller reads it whole); else the artifact is finished and its reference put
/// in the payload's place, with the summary `summary` makes of `env` once its payload is
/// `preview` (what the summary's preview reads of the payload). An artifact not finished
/// is dropped: nothing is stored.
pub(super) fn finish_begun(
    env: &mut Envelope,
    writer: Box<dyn ArtifactWriter + '_>,
    kind: &str,
    size: usize,
    options: &OffloadOptions,
    preview: Payload,
    summary: impl FnOnce(&Envelope) -> Value,
) -> Result<Option<Offloaded>> {
    if let Some(max) = options.max_capture.filter(|&max| size > max) {
        return Ok(Some(too_large(env, size, max)));
    }
    if size <= options.inline_threshold {
        return Ok(None);
    }
    let artifact = writer.finish(kind).map_err(Error::Store)?;
    env.payload = preview;
    let summary = summary(env);
    Ok(Some(stored(env, artifact, summary, size)))
}

/// Puts the reference of the stored payload in its place: `{"summary", "artifact"}`.
pub(super) fn stored(
    env: &mut Envelope,
    artifact: ArtifactRef,
    summary: Value,
    size: usize,
) -> Offloaded {
    env.payload = Payload::Json(json!({"summary": summary, "artifact": artifact.digest}));
    env.presentation = None;
    let digest = artifact.digest.clone();
    env.artifact = Some(artifact);
    Offloaded::Stored {
        digest,
        size_bytes: size,
    }
}

/// The artifact summary: size, kind, record count, a deterministic preview under 1 KB, and
/// for HTTP results the status code and headers.
pub fn summary(env: &Envelope, kind: &str, size: usize) -> Value {
    summary_skimmed(env, kind, size, &[], &[])
}

/// [`summary`] of an envelope whose JSON payload `json::skim` read: `tails` (pointers from
/// the payload's root) are its skimmed arrays, counted in the record count and measured in
/// the preview as the whole arrays would be.
///
/// `strings` (pointers from the payload's root) are the strings it holds as prefixes
/// (`json::skim::read_for_cut`), measured in the preview as the whole strings; a payload
/// that is one such string is not previewed from it (`None`).
pub(crate) fn summary_skimmed(
    env: &Envelope,
    kind: &str,
    size: usize,
    tails: &[Tail],
    strings: &[LongString],
) -> Value {
    let mut summary = Map::new();
    if let Some(Source::Http {
        status_code,
        headers,
        ..
    }) = &env.source
    {
        if let Some(code) = status_code {
            summary.insert("status_code".into(), Value::Number(code.clone()));
        }
        if !headers.is_empty() {
            summary.insert("headers".into(), Value::Object(headers.clone()));
        }
        if let Some(pagination) = pagination(headers) {
            summary.insert("pagination".into(), pagination);
        }
    }
    summary.insert("size_bytes".into(), json!(size));
    summary.insert("kind".into(), json!(kind));
    match &env.payload {
        Payload::Json(Value::Array(items)) => {
            let skimmed = tails
                .iter()
                .find(|t| t.pointer.is_empty())
                .map_or(0, |t| t.items);
            summary.insert("record_count".into(), json!(items.len() + skimmed));
            let first = below(tails, "/0");
            let strings = strings_below(strings, "/0");
            summary.insert(
                "preview".into(),
                record_preview(items.first(), &first, &strings),
            );
        }
        Payload::Blocks(items) => {
            summary.insert("record_count".into(), json!(items.len()));
            let strings = strings_below(strings, "/0");
            summary.insert(
                "preview".into(),
                record_preview(items.first(), &[], &strings),
            );
        }
        Payload::Json(v @ Value::Object(_)) => {
            summary.insert("preview".into(), record_preview(Some(v), tails, strings));
        }
        Payload::Json(other) => {
            summary.insert("preview".into(), json!(text_preview(&json_start(other))));
        }
        Payload::Text(s) => {
            summary.insert("preview".into(), json!(text_preview(s)));
        }
        Payload::Bytes { .. } | Payload::None => {}
    }
    Value::Object(summary)
}

/// Pagination facts an HTTP response states in its headers: an RFC 8288 `Link` header
/// (`rel="next"` means more pages), `X-Total-Count` and `X-Total-Pages`. `None` when it
/// states none (nothing is guessed).
pub fn pagination(headers: &Map<String, Value>) -> Option<Value> {
    let header = |name: &str| {
        headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .and_then(|(_, v)| v.as_str())
    };
    let number = |name: &str| header(name).and_then(|v| v.trim().parse::<u64>().ok());
    let mut out = Map::new();
    if let Some(link) = header("link") {
        let has_next = link.split(',').any(|part| {
            part.split(';').skip(1).any(|param| {
                let param = param.trim().to_ascii_lowercase();
                param.strip_prefix("rel=").is_some_and(|rel| {
                    rel.trim_matches('"')
                        .split_whitespace()
                        .any(|r| r == "next")
                })
            })
        });
        out.insert("has_more".into(), json!(has_next));
        out.insert("strategy_used".into(), json!("link"));
    }
    if let Some(total) = number("x-total-count") {
        out.insert("total_items".into(), json!(total));
    }
    if let Some(pages) = number("x-total-pages") {
        out.insert("total_pages".into(), json!(pages));
    }
    (!out.is_empty()).then_some(Value::Object(out))
}

/// The start of `value`'s JSON text (JS dialect), as long as [`text_preview`] reads of it:
/// of a long string, the text of its first characters only (a 100 MB string was written
/// whole for a preview of a kilobyte). Each character is at least one byte of the text, so
/// the first [`PREVIEW_LIMIT`] characters give more bytes than the preview reads.
fn json_start(value: &Value) -> String {
    match value {
        Value::String(text) => {
            let start = match text.char_indices().nth(PREVIEW_LIMIT) {
                Some((end, _)) => &text[..end],
                None => text,
            };
            crate::json::to_string(&json!(start), Dialect::Js)
        }
        other => crate::json::to_string(other, Dialect::Js),
    }
}

/// The first bytes of a text, under the preview limit once escaped, at a UTF-8 boundary.
fn text_preview(text: &str) -> &str {
    let mut end = PREVIEW_LIMIT - 64;
    loop {
        let candidate = prefix(text, end);
        if crate::json::size::escaped_len(candidate) < PREVIEW_LIMIT - 32 || end == 0 {
            return candidate;
        }
        end /= 2;
    }
}

/// The strings of `strings` at or below the pointer `at`, their pointers re-based on it.
fn strings_below(strings: &[LongString], at: &str) -> Vec<LongString> {
    strings
        .iter()
        .filter_map(|s| {
            let rest = crate::json::pointer::below(&s.pointer, at)?;
            Some(LongString {
                pointer: rest.to_string(),
                ..s.clone()
            })
        })
        .collect()
}

/// The tails at or below the pointer `at`, re-based on it.
fn below(tails: &[Tail], at: &str) -> Vec<Tail> {
    tails
        .iter()
        .filter_map(|t| {
            let rest = crate::json::pointer::below(&t.pointer, at)?;
            Some(Tail {
                pointer: rest.to_string(),
                ..t.clone()
            })
        })
        .collect()
}

/// `{first_keys, sample_record}` of a record: its first five keys in sorted order (those of
/// them that fit), and the record projected on them, cut to keep the preview under the
/// limit. `tails`: the
/// record's skimmed arrays (pointers from the record).
fn record_preview(record: Option<&Value>, tails: &[Tail], strings: &[LongString]) -> Value {
    let Some(Value::Object(map)) = record else {
        return json!({});
    };
    let mut keys: Vec<&String> = map.keys().collect();
    keys.sort();
    keys.truncate(5);
    // As many of those as fit in the preview (a key may be longer than the whole preview).
    let room = PREVIEW_LIMIT - 64;
    let mut used = 0;
    let fitting = keys
        .iter()
        .take_while(|k| {
            let size = crate::json::size::escaped_len(k) + 3;
            let fits = used + size <= room;
            if fits {
                used += size;
            }
            fits
        })
        .count();
    keys.truncate(fitting);
    let sample: Map<String, Value> = keys
        .iter()
        .map(|k| ((*k).clone(), map[k.as_str()].clone()))
        .collect();
    let sample = Value::Object(sample);
    // The sample keeps the record's first keys: the tails under them keep their pointers.
    let tails: Vec<Tail> = tails
        .iter()
        .filter(|t| {
            keys.iter().any(|k| {
                !below(std::slice::from_ref(*t), &crate::json::pointer::join("", k)).is_empty()
            })
        })
        .cloned()
        .collect();
    let strings: Vec<LongString> = strings
        .iter()
        .filter(|s| {
            keys.iter().any(|k| {
                !strings_below(std::slice::from_ref(*s), &crate::json::pointer::join("", k))
                    .is_empty()
            })
        })
        .cloned()
        .collect();
    let measured = match tails.is_empty() && strings.is_empty() {
        true => Measured::new(&sample),
        false => {
            // Every skimmed array is larger than the preview limit (json::skim), and every
            // string read as a prefix longer than any cut of it keeps, so no cut of the
            // preview reaches a skimmed item or the unread part of a string.
            let index = TailIndex::new(&sample, &tails).expect("found in the payload");
            let long = StringIndex::new(&sample, &strings).expect("found in the payload");
            Measured::read_for_cut(&sample, PREVIEW_LIMIT, &index, &long)
        }
    };
    let budget = room - used;
    let sample = match measured.level_for(&sample, budget) {
        Some(level) => measured.cut(&sample, level, "", &mut Vec::new()),
        None => json!({}),
    };
    json!({"first_keys": keys, "sample_record": sample})
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::{Value, json};

    use super::{json_start, text_preview};
    use crate::json::Dialect;

    fn piece() -> impl Strategy<Value = String> {
        prop_oneof![
            "[a-z ]{1,40}",
            Just("\"".to_string()),
            Just("\\".to_string()),
            Just("\n\t\u{1}".to_string()),
            Just("é".to_string()),
            Just("😀".to_string()),
            Just("\u{2028}".to_string()),
        ]
    }

    proptest! {
        /// The preview of a string payload is the one its whole JSON text gives.
        #[test]
        fn a_string_is_previewed_from_its_start_as_from_its_whole_text(
            pieces in proptest::collection::vec(piece(), 0..400),
            repeat in 1usize..40,
        ) {
            let value = json!(pieces.concat().repeat(repeat));
            let whole = crate::json::to_string(&value, Dialect::Js);
            let start = json_start(&value);
            prop_assert_eq!(text_preview(&start), text_preview(&whole));
        }
    }

    #[test]
    fn other_values_are_previewed_from_their_whole_text() {
        for value in [json!(12.5), json!(true), Value::Null, json!("short")] {
            let whole = crate::json::to_string(&value, Dialect::Js);
            assert_eq!(json_start(&value), whole);
        }
    }
}
