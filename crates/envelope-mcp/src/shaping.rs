//! A `tools/call` result to at most the limit.
//!
//! [`shape_result`] takes the exact bytes of a JSON-RPC response's `result` member and
//! returns the bytes to put in their place ([`Outcome`]):
//!
//! 1. **pass through** ([`ToolSettings::pass_through`]): the same bytes, nothing read.
//! 2. **unchanged**: a result whose compact JSON is at most the limit and holds no secret
//!    (when redacting) comes back as the very input bytes (`changed: false`).
//! 3. **redacted**: secrets are masked in every channel (content blocks, `structuredContent`,
//!    embedded resources, `_meta`, unknown members), with the library's rules
//!    ([`envelope::shape::redact`]); if the result now fits, that is the answer.
//! 4. **stored and cut**: the full (redacted) result's compact JSON goes to the store
//!    (`application/json`); the client gets a result of at most the limit: as much of the
//!    payload as fits (the library's budget cut, [`envelope::shape::Pipeline`], MCP to MCP: the
//!    text mirror equals `structuredContent`), the cut's notice, and a link to the full
//!    result — a `resource_link` block where the revision has them, a text line otherwise.
//!    A result whose text blocks are not the mirror of its `structuredContent` is cut
//!    channel by channel instead, each in the form the server gave it, sharing the limit as
//!    the tool's [`Channels`] says. The notice and the `_meta` marker name pointers into
//!    the whole stored result, and the notice ends with the `envelope_read` call that reads
//!    on.
//!    Blocks that are not text (images, audio, embedded resources, unknown types) are never
//!    cut: each is kept whole or replaced by a line saying what it was (the library's
//!    budget does this), and the link names the full result it is in.
//! 5. **refused shapes**: when no cut form fits, or none satisfies the tool's `outputSchema`
//!    (see below), an `isError` result that fits, names the stored result's URI, and ends
//!    its first line with the `envelope_read` call that reads on from where its quote of
//!    the result's text stops.
//!
//! `emit` ([`ToolSettings::emit`]) writes another envelope format instead: the result's
//! payload as that format, in a single text block (or as the result itself when the format
//! is a `CallToolResult`), cut to the limit. When cut, the payload is stored too and the
//! document names it: its pointers are into the payload (see `shaping/emit.rs`).
//!
//! **`outputSchema` honesty.** The `structuredContent` a client receives always validates
//! against the schema it saw in `tools/list`: a shaped result is checked against it before
//! it is sent (JSON Schema 2020-12 unless the schema says otherwise, as the Python SDK
//! does), and a shaped result that does not validate becomes an `isError` result (clients
//! do not validate those: the SDK skips them). Results passed on unchanged are the
//! upstream's own. For `emit` formats the result has no `structuredContent`, so
//! [`advertised_tool`] drops the schema from the tool's `tools/list` entry.

mod blocks;
mod channels;
mod emit;
mod fit;
mod limits;
mod link;
mod notice;
mod schema;

use std::borrow::Cow;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use envelope::FormatId;
use envelope::json::Dialect;
use envelope_store::{Digest, Hashed, Store, StoreError};
use serde_json::Value;

pub use limits::{NO_BYTE_LIMIT, TokenBudget, shared as shared_tokenizer};
pub use schema::{OutputSchema, advertised_tool};

use limits::Limits;

use crate::held::Held;
use crate::revision::Revision;

/// The default bound on a shaped `tools/call` result (the `result` object, compact JSON):
/// 16 KiB, about 4,000 tokens.
pub const DEFAULT_LIMIT: usize = 16 * 1024;

/// The call a result answers, as the client made it.
#[derive(Clone, Debug)]
pub struct CallContext {
    /// The tool's name.
    pub tool: String,
    /// The tool's `outputSchema` as the client saw it in `tools/list` (after
    /// [`advertised_tool`]); `None` when it has none. Compile it once per tool and share it.
    pub output_schema: Option<Arc<OutputSchema>>,
    /// The revision of the client's session (or of the request, for 2026-07-28).
    pub revision: Revision,
    /// Whether the client is offered `envelope_search` (a catalog is open): the notice of a
    /// cut text then shows a search call too.
    pub offers_search: bool,
}

impl CallContext {
    /// A context for `tool`, compiling `output_schema` (see [`OutputSchema::new`]).
    ///
    /// ```
    /// use envelope_mcp::revision::Revision;
    /// use envelope_mcp::shaping::CallContext;
    ///
    /// let schema = serde_json::json!({"type": "object", "required": ["rows"]});
    /// let call = CallContext::new("list_rows", Some(&schema), Revision::V2025_06_18);
    /// assert!(call.output_schema.unwrap().is_valid(&serde_json::json!({"rows": []})));
    /// ```
    pub fn new(tool: impl Into<String>, output_schema: Option<&Value>, revision: Revision) -> Self {
        CallContext {
            tool: tool.into(),
            output_schema: output_schema.map(|s| Arc::new(OutputSchema::new(s))),
            revision,
            offers_search: false,
        }
    }
}

/// How one tool's results are shaped (the proxy's options, with the policy file's
/// settings for the tool applied).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolSettings {
    /// The most bytes a shaped result (the `result` object, compact JSON) may have;
    /// [`NO_BYTE_LIMIT`] when only [`tokens`](ToolSettings::tokens) are limited.
    pub limit: usize,
    /// The most tokens a shaped result may have, as its tokenizer counts the `result`
    /// object's compact JSON; `None`: no token limit. Both limits hold.
    pub tokens: Option<TokenBudget>,
    /// Mask secrets in every channel before anything is stored or sent.
    pub redact: bool,
    /// Pass results on untouched: no limit, no redaction, nothing stored.
    pub pass_through: bool,
    /// Write the result as this envelope format; `None` (or `Some(FormatId::Mcp)`): a plain
    /// MCP result, the default.
    pub emit: Option<FormatId>,
    /// How a cut result shares the limit between its text blocks and `structuredContent`
    /// when the two are not one another's mirror.
    pub channels: Channels,
}

/// How the limit is shared between `content` (text blocks) and `structuredContent` when a
/// result over the limit carries both and its text is not the JSON mirror of
/// `structuredContent` (server-filesystem's `read_text_file`: the file as text, and
/// `{"content": "<the file>"}`). Each channel keeps the form the server gave it: a text
/// block stays the same text, cut at a line boundary where one is near.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Channels {
    /// Both channels are cut, sharing the room left by the notice and the link:
    /// `text_share` percent of it for the text blocks, or, when `None` (the default), in
    /// proportion to the two channels' full sizes (half each when they hold the same bytes).
    Both {
        /// The text blocks' percentage of the room (0 to 100).
        text_share: Option<u8>,
    },
    /// The text channel carries one short line pointing to `structuredContent` instead of a
    /// second copy, and `structuredContent` gets the room. Only for a tool that declares an
    /// `outputSchema` (otherwise as `Both` with the default share).
    Pointer,
}

impl Default for Channels {
    fn default() -> Self {
        Channels::Both { text_share: None }
    }
}

impl ToolSettings {
    /// The byte limit, or, when less, the bytes the token limit holds on average (4 a
    /// token): the bound of what is sized in bytes only (`serve`'s HTTP view).
    pub fn byte_estimate(&self) -> usize {
        Limits::new(self.limit, self.tokens).scale()
    }

    /// The most bytes a result may have and surely fit, tokens not counted (a token is at
    /// least a byte): the byte limit, or the token limit when less. A result of more may
    /// have to be stored (callers shape it off the relay's thread).
    pub fn surely_fits(&self) -> usize {
        Limits::new(self.limit, self.tokens).surely_fits()
    }
}

impl Default for ToolSettings {
    /// [`DEFAULT_LIMIT`], redaction on, no pass-through, MCP.
    fn default() -> Self {
        ToolSettings {
            limit: DEFAULT_LIMIT,
            tokens: None,
            redact: true,
            pass_through: false,
            emit: None,
            channels: Channels::default(),
        }
    }
}

/// What [`shape_result`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Outcome {
    /// The bytes to put in place of the response's `result` member: the input bytes when
    /// [`changed`](Outcome::changed) is false.
    pub bytes: Vec<u8>,
    /// Whether `bytes` differ from the input.
    pub changed: bool,
    /// The digest of the full (redacted) result, when it was stored.
    pub stored: Option<Digest>,
    /// Whether what was stored is the input bytes themselves (compact JSON, nothing
    /// masked): a caller done with them can hand them to the paging index then, which
    /// indexes a large result without copying it.
    pub stored_as_given: bool,
    /// What was stored when it is not the input (the redacted, compacted copy shaping
    /// made), held for the threads that index it (it is handed to the paging index here;
    /// a caller may hand it to the catalog too, instead of its reading it back).
    pub stored_copy: Option<Arc<Held>>,
    /// How many secrets were masked.
    pub redactions: usize,
    /// The input's length in bytes.
    pub original_bytes: usize,
    /// The output's length in bytes (`bytes.len()`).
    pub shaped_bytes: usize,
    /// The output's tokens, counted by the tool's tokenizer when it has a token limit
    /// (`None` without one: nothing is counted then).
    pub shaped_tokens: Option<usize>,
    /// Whether the payload was cut (or left out) to fit the limit.
    pub truncated: bool,
}

impl Outcome {
    fn unchanged(result: &[u8]) -> Self {
        Outcome {
            bytes: result.to_vec(),
            changed: false,
            stored: None,
            stored_as_given: false,
            stored_copy: None,
            redactions: 0,
            original_bytes: result.len(),
            shaped_bytes: result.len(),
            shaped_tokens: None,
            truncated: false,
        }
    }
}

/// Why a result could not be shaped. The relay answers the call with a JSON-RPC error
/// then; nothing was sent to the client.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ShapeError {
    /// The result is not JSON. Code `shape.json`.
    #[error("the upstream's result is not JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// The store refused the full result. Code `shape.store`.
    #[error("storing the full result failed: {0}")]
    Store(#[from] StoreError),
    /// Not even an `isError` result naming the stored result fits the limit. Code
    /// `shape.limit-too-small`.
    #[error(
        "the limit of {limit} bytes is too small: the smallest result naming the stored result takes {minimum} bytes"
    )]
    LimitTooSmall {
        /// The limit asked for.
        limit: usize,
        /// The size of the smallest result.
        minimum: usize,
    },
    /// Not even an `isError` result naming the stored result fits the token limit. Code
    /// `shape.limit-too-small`.
    #[error(
        "the limit of {limit} tokens ({tokenizer}) is too small: the smallest result naming the stored result takes {minimum} tokens"
    )]
    TokenLimitTooSmall {
        /// The token limit asked for.
        limit: usize,
        /// The tokenizer that counted.
        tokenizer: &'static str,
        /// The tokens of the smallest result.
        minimum: usize,
    },
}

impl ShapeError {
    /// A stable code: `shape.json`, `shape.store`, `shape.limit-too-small`.
    pub fn code(&self) -> &'static str {
        match self {
            ShapeError::Json(_) => "shape.json",
            ShapeError::Store(_) => "shape.store",
            ShapeError::LimitTooSmall { .. } | ShapeError::TokenLimitTooSmall { .. } => {
                "shape.limit-too-small"
            }
        }
    }
}

/// The stored full result, as the shaped result names it.
#[derive(Clone, Debug)]
pub(crate) struct Stored {
    pub(crate) digest: Digest,
    /// Its length in bytes.
    pub(crate) size: usize,
}

impl Stored {
    pub(crate) fn uri(&self) -> String {
        crate::drill::artifact_uri(&self.digest)
    }
}

/// Shapes one `tools/call` result (the exact bytes of the response's `result` member) to
/// at most `settings.limit` bytes; see the [module documentation](self).
///
/// ```
/// use envelope_mcp::revision::Revision;
/// use envelope_mcp::shaping::{CallContext, ToolSettings, shape_result};
///
/// let root = std::env::temp_dir().join(format!("envelope-mcp-shape-doc-{}", std::process::id()));
/// let store = envelope_store::FileStore::new(&root);
/// let call = CallContext::new("cat", None, Revision::V2025_06_18);
/// let settings = ToolSettings { limit: 1024, ..ToolSettings::default() };
///
/// // Small and clean: the very same bytes.
/// let small = br#"{"content":[{"type":"text","text":"hello"}]}"#;
/// let outcome = shape_result(small, &call, &settings, &store)?;
/// assert!(!outcome.changed);
/// assert_eq!(outcome.bytes, small);
///
/// // Large: stored whole, cut to the limit, linked.
/// let big = serde_json::json!({"content": [{"type": "text", "text": "line\n".repeat(2000)}]});
/// let outcome = shape_result(big.to_string().as_bytes(), &call, &settings, &store)?;
/// assert!(outcome.bytes.len() <= 1024);
/// let digest = outcome.stored.unwrap();
/// let shaped: serde_json::Value = serde_json::from_slice(&outcome.bytes)?;
/// let link = shaped["content"].as_array().unwrap().last().unwrap();
/// assert_eq!(link["type"], "resource_link");
/// assert_eq!(link["uri"], envelope_mcp::drill::artifact_uri(&digest));
/// # std::fs::remove_dir_all(&root).ok();
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
///
/// [`ShapeError`]: the result is not JSON, the store failed, or the limit is too small
/// for even an error result naming the stored result.
pub fn shape_result(
    result: &[u8],
    call: &CallContext,
    settings: &ToolSettings,
    store: &dyn Store,
) -> Result<Outcome, ShapeError> {
    if settings.pass_through {
        return Ok(Outcome::unchanged(result));
    }
    let limits = Limits::new(settings.limit, settings.tokens);
    let (redacted, hashed) = redact_and_hash(result, settings.redact, limits.surely_fits());
    let Redacted {
        full,
        value,
        redactions,
    } = redacted?;
    let emit = settings.emit.filter(|f| *f != FormatId::Mcp);
    let size = full.len();
    // Over a limit: the compact JSON's bytes, or its tokens (counted only when its size
    // does not decide).
    let over = !limits.fits(&full);
    // The input as given goes on unchanged; under a token limit its own text is what the
    // client gets, so that is what must fit (it may be spaced out more than `full`).
    let as_given = matches!(full, Cow::Borrowed(_));
    if emit.is_none() && redactions == 0 && !over && (as_given || limits.tokens_fit(result)) {
        let mut outcome = Outcome::unchanged(result);
        outcome.shaped_tokens = settings.tokens.map(|t| t.count(result));
        return Ok(outcome);
    }
    let shaped = |bytes: Vec<u8>, stored: Option<Digest>, truncated: bool| Outcome {
        shaped_bytes: bytes.len(),
        shaped_tokens: settings.tokens.map(|t| t.count(&bytes)),
        changed: bytes != result,
        bytes,
        stored,
        stored_as_given: false,
        stored_copy: None,
        redactions,
        original_bytes: result.len(),
        truncated,
    };
    // Over the limit, MCP: the cut reads no more of the stored text than it can keep, while
    // the store hashes and writes the full result on another thread.
    if emit.is_none() && over {
        drop(value);
        let store_full = || put(store, &full, hashed.as_ref());
        let (cut, stored) = match size >= PUT_BESIDE_FROM {
            true => std::thread::scope(|scope| {
                let storing = scope.spawn(store_full);
                let cut = fit::cut(&full, size, call, settings.channels, &limits);
                (cut, storing.join().expect("the store does not panic"))
            }),
            false => (
                fit::cut(&full, size, call, settings.channels, &limits),
                store_full(),
            ),
        };
        let stored = stored?;
        let excerpt = || blocks::excerpt(&full, limits.scale());
        let fitted = fit::link(cut?, &stored, &excerpt, call, &limits)?;
        let mut outcome = shaped(fitted.bytes, Some(stored.digest), fitted.truncated);
        // The paging index of a large result, built from the bytes stored (no copy): the
        // redacted copy made here, or the caller's bytes (it hands them over when done).
        match full {
            Cow::Owned(copy) => {
                let len = copy.len();
                let held = Held::new(copy, 0..len);
                crate::drill::index::remember_held(&stored.digest, held.clone());
                outcome.stored_copy = Some(held);
            }
            Cow::Borrowed(_) => outcome.stored_as_given = true,
        }
        return Ok(outcome);
    }
    let stored = match over {
        true => Some(put(store, &full, hashed.as_ref())?),
        false => None,
    };
    let value = match value {
        Some(value) => value,
        None => serde_json::from_slice(&full)?,
    };
    // Redacted and small enough: the redacted result, unless the redaction broke the schema.
    if emit.is_none() {
        if schema::honest(&value, call) {
            return Ok(shaped(full.into_owned(), None, false));
        }
        let stored = put(store, &full, hashed.as_ref())?;
        let reason = format!(
            "The result of tool {} does not satisfy its outputSchema once its secrets are masked.",
            call.tool
        );
        // The text is not quoted here; the call reads from the start of the first text
        // block.
        let nothing = link::excerpt(&value, 0);
        let bytes = link::error_result(&reason, &nothing, &stored, call.revision, &limits)?;
        return Ok(shaped(bytes, Some(stored.digest), true));
    }
    let format = emit.expect("not MCP");
    let (fitted, stored) = emit::emit(value, &full, format, stored, store, call, &limits)?;
    Ok(shaped(
        fitted.bytes,
        stored.map(|s| s.digest),
        fitted.truncated,
    ))
}

/// Full results from this size on are stored by a thread of their own while the cut runs
/// (a thread costs tens of microseconds; hashing and writing a megabyte, about a
/// millisecond).
const PUT_BESIDE_FROM: usize = 1 << 20;

/// [`redact`]; and when the result is over `limit` (the most that surely fits) and large, its digest, computed on
/// another thread meanwhile: most large results come back from redaction as they are (then
/// the digest is theirs), and one that will be stored anyway is worth hashing ahead. When
/// redaction changes the text, the hashing stops at its next megabyte.
fn redact_and_hash(
    result: &[u8],
    redact_it: bool,
    limit: usize,
) -> (Result<Redacted<'_>, ShapeError>, Option<Hashed<'_>>) {
    if result.len() <= limit || result.len() < PUT_BESIDE_FROM {
        return (redact(result, redact_it), None);
    }
    let changed = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let hashing = scope.spawn(|| Hashed::of_while(result, || !changed.load(Ordering::Relaxed)));
        let redacted = redact(result, redact_it);
        let same = matches!(
            &redacted,
            Ok(Redacted {
                full: Cow::Borrowed(_),
                ..
            })
        );
        changed.store(!same, Ordering::Relaxed);
        let hashed = hashing.join().expect("hashing does not panic");
        (redacted, hashed.filter(|_| same))
    })
}

/// The full result's compact JSON once redacted, and what was masked.
struct Redacted<'a> {
    /// The input itself when it is that already (compact, nothing masked).
    full: Cow<'a, [u8]>,
    /// The parsed value, when the text could not be redacted without it.
    value: Option<Value>,
    redactions: usize,
}

/// Redacts (with `redact`) and compacts the result in one pass over its text
/// ([`redact_json_text`](envelope::shape::redact::redact_json_text)); the few results that
/// pass leaves alone (a key holding a secret, duplicate keys, …) are parsed and redacted as
/// a value.
fn redact(result: &[u8], redact: bool) -> Result<Redacted<'_>, ShapeError> {
    use envelope::shape::redact::{compact_json_text, redact_json_text};
    let pass = match redact {
        true => redact_json_text(result, "result").map(|r| (r.bytes, r.report.len())),
        false => compact_json_text(result).map(|bytes| (bytes, 0)),
    };
    if let Some((bytes, redactions)) = pass {
        return Ok(Redacted {
            full: bytes.map_or(Cow::Borrowed(result), Cow::Owned),
            value: None,
            redactions,
        });
    }
    let mut value: Value = serde_json::from_slice(result)?;
    let mut report = Vec::new();
    if redact {
        envelope::shape::redact::redact_value(&mut value, "result", &mut report);
    }
    Ok(Redacted {
        full: Cow::Owned(envelope::json::to_vec(&value, Dialect::Js)),
        value: Some(value),
        redactions: report.len(),
    })
}

/// A shaped result's bytes and whether its payload was cut.
pub(crate) struct Fitted {
    pub(crate) bytes: Vec<u8>,
    pub(crate) truncated: bool,
}

/// Stores the full result `bytes`, with their digest when `hashed` has it (it hashed the
/// very same bytes).
fn put(store: &dyn Store, bytes: &[u8], hashed: Option<&Hashed<'_>>) -> Result<Stored, ShapeError> {
    put_tagged(store, bytes, hashed, "mcp-result")
}

/// [`put`] with the tag `tag` (`mcp-result`, or `mcp-payload` for the payload an `emit`
/// document names).
fn put_tagged(
    store: &dyn Store,
    bytes: &[u8],
    hashed: Option<&Hashed<'_>>,
    tag: &str,
) -> Result<Stored, ShapeError> {
    let tags = [tag.to_string()];
    let sidecar = match hashed {
        Some(hashed) => {
            debug_assert_eq!(hashed.bytes(), bytes);
            store.put_hashed(hashed, "application/json", &tags)
        }
        None => store.put(bytes, "application/json", &tags),
    }
    .inspect_err(|e| {
        // The full paths in the local log only: the error's text (what a client may get)
        // names none.
        crate::stats::log::warn(
            "store.put_failed",
            &[("code", e.code().into()), ("error", e.detailed().into())],
        );
    })?;
    // Indexed now, while the bytes are here: envelope_read pages through it without
    // reading it whole (a small result is not indexed).
    crate::drill::index::remember(&sidecar.digest, bytes);
    Ok(Stored {
        digest: sidecar.digest,
        size: bytes.len(),
    })
}

/// An answer the proxy writes itself (`envelope_read`, `envelope_search`, `envelope_list`)
/// within `settings`' limits: `answer(bytes)` answers within `bytes`; under a token limit it
/// is asked for the bytes the tokens hold on average, then, while its answer is over the
/// token limit, for fewer in proportion (a few attempts; the last resort is a short error
/// result that fits).
pub fn answer_within(settings: &ToolSettings, answer: impl Fn(usize) -> Value) -> Value {
    let limits = Limits::new(settings.limit, settings.tokens);
    let Some(tokens) = settings.tokens else {
        return answer(settings.limit);
    };
    let mut bytes = limits.scale();
    for _ in 0..6 {
        let value = answer(bytes);
        let text = envelope::json::to_vec(&value, Dialect::Js);
        let count = tokens.count(&text);
        if count <= tokens.limit {
            return value;
        }
        // 5% under the proportional guess: a count is not linear in the bytes.
        let scaled = (bytes as u128 * tokens.limit as u128 * 95 / (count as u128 * 100)) as usize;
        bytes = scaled.min(bytes - 1);
        if bytes < 256 {
            break;
        }
    }
    serde_json::json!({
        "content": [{"type": "text", "text": format!(
            "The answer does not fit the limit of {}: ask for less.", limits.names()
        )}],
        "isError": true,
    })
}
