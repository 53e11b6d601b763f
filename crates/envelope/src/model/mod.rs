//! The canonical envelope: one model that every wire format is a codec of.
//!
//! Fields shared by two or more formats are typed fields here. What only one format carries
//! (protocol-v1's `meta.runner`, tool-result-envelope's `tags`, unknown keys of any format)
//! is kept in [`Envelope::extensions`] under the JSON Pointer where it was found, so that
//! decoding and encoding in the same format loses nothing, and converting to another format
//! lists it in the loss report instead of dropping it silently.

use std::borrow::Cow;

use serde_json::{Map, Number, Value};

pub mod error;
mod format_id;
mod json_text;
mod loss;

pub use error::{Category, EnvelopeError};
pub use format_id::FormatId;
pub use json_text::JsonText;
pub use loss::{Loss, LossReport};

/// Outcome of the call the envelope reports on.
///
/// Formats other than protocol-v1 know only ok and error; further outcomes may be added,
/// so the enum is `#[non_exhaustive]`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Status {
    /// The call succeeded (the default).
    #[default]
    Ok,
    /// The call failed; [`Envelope::error`] says why.
    Error,
    /// A non-terminal progress event (protocol-v1 streams).
    Progress,
}

impl Status {
    /// The protocol-v1 spelling: `ok`, `error` or `progress`.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Error => "error",
            Status::Progress => "progress",
        }
    }
}

/// The tool's output.
///
/// New kinds of output may be added, so the enum is `#[non_exhaustive]`; [`Payload::json`]
/// gives any payload as one JSON value.
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub enum Payload {
    /// No payload (an error result, say).
    #[default]
    None,
    /// Structured data.
    Json(Value),
    /// Plain text.
    Text(String),
    /// Opaque bytes with their media type.
    Bytes {
        /// The bytes.
        data: Vec<u8>,
        /// Their media type (`image/png`).
        media_type: String,
    },
    /// MCP content blocks that are themselves the output (a tool without structured output).
    Blocks(Vec<Value>),
}

impl Payload {
    /// Whether there is no payload ([`Payload::None`]).
    pub fn is_none(&self) -> bool {
        matches!(self, Payload::None)
    }

    /// The payload as one JSON value, borrowed when it already is one (see
    /// [`Payload::to_json`] for the other kinds).
    pub fn json(&self) -> Cow<'_, Value> {
        match self {
            Payload::Json(v) => Cow::Borrowed(v),
            other => Cow::Owned(other.to_json()),
        }
    }

    /// The payload as one JSON value: none as `null`, text as a string, blocks as an array,
    /// bytes as a standard base64 string (the media type is dropped).
    pub fn to_json(&self) -> Value {
        use base64::Engine as _;
        match self {
            Payload::None => Value::Null,
            Payload::Json(v) => v.clone(),
            Payload::Text(s) => Value::String(s.clone()),
            Payload::Bytes { data, .. } => {
                Value::String(base64::engine::general_purpose::STANDARD.encode(data))
            }
            Payload::Blocks(blocks) => Value::Array(blocks.clone()),
        }
    }
}

/// A point in time as the wire gave it; the codecs convert between the two forms where a
/// format needs the other ([`crate::time`]).
#[derive(Clone, Debug, PartialEq)]
pub enum Timestamp {
    /// An ISO-8601 / RFC 3339 string, kept as written.
    Text(String),
    /// Unix epoch milliseconds (operations' `meta.timestamp`).
    EpochMillis(Number),
}

/// Where the result came from (the operations seed's `meta.source`).
///
/// New kinds of source (OpenAPI services, remote workers) may be added, so the enum is
/// `#[non_exhaustive]`.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Source {
    /// A local operation (`meta.source: "local"`).
    Local {
        /// `meta.operationId`: the operation that ran (also the envelope's tool).
        operation_id: Option<String>,
    },
    /// An HTTP call (`meta.source: "http"`).
    Http {
        /// `meta.statusCode`: the response status, as given.
        status_code: Option<Number>,
        /// `meta.headers`, a `Record<string, string>`; repeated headers joined with `, `.
        headers: Map<String, Value>,
        /// `meta.contentType`: the response's media type.
        content_type: Option<String>,
    },
    /// An MCP tool call (`meta.source: "mcp"`, or a native MCP result).
    Mcp {
        /// The MCP result's own `_meta` object, kept as text (the envelope never reads it).
        result_meta: Option<JsonText>,
    },
}

impl Source {
    /// The operations spelling of the kind: `local`, `http` or `mcp`.
    pub fn kind(&self) -> &'static str {
        match self {
            Source::Local { .. } => "local",
            Source::Http { .. } => "http",
            Source::Mcp { .. } => "mcp",
        }
    }
}

/// tool-result-envelope's content classification (the reference's `ContentType` enum, written
/// as its integer code).
///
/// The reference may define more codes, so the enum is `#[non_exhaustive]`; until then they
/// read as [`ContentType::Other`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ContentType {
    /// Code 0, the reference's default.
    Unknown,
    /// Code 1: text.
    Text,
    /// Code 2: a list.
    List,
    /// Code 3: an object.
    Object,
    /// Code 4: an image.
    Image,
    /// Code 5: binary data.
    Binary,
    /// An integer outside the defined range, kept as given.
    Other(i64),
}

impl ContentType {
    /// The reference's names of codes 0 to 5, in code order.
    pub(crate) const NAMES: [&'static str; 6] =
        ["Unknown", "Text", "List", "Object", "Image", "Binary"];

    /// The integer code written on the wire.
    pub fn code(self) -> i64 {
        match self {
            ContentType::Unknown => 0,
            ContentType::Text => 1,
            ContentType::List => 2,
            ContentType::Object => 3,
            ContentType::Image => 4,
            ContentType::Binary => 5,
            ContentType::Other(n) => n,
        }
    }

    /// The content type of an integer code; codes outside 0 to 5 are [`ContentType::Other`].
    pub fn from_code(n: i64) -> Self {
        match n {
            0 => ContentType::Unknown,
            1 => ContentType::Text,
            2 => ContentType::List,
            3 => ContentType::Object,
            4 => ContentType::Image,
            5 => ContentType::Binary,
            n => ContentType::Other(n),
        }
    }

    /// Parses a name (any case, `"list"`) or a decimal integer (`"2"`, surrounding
    /// whitespace allowed), as the reference reader does; `None` for anything else.
    ///
    /// ```
    /// use envelope::model::ContentType;
    ///
    /// assert_eq!(ContentType::parse("OBJECT"), Some(ContentType::Object));
    /// assert_eq!(ContentType::parse(" 4"), Some(ContentType::Image));
    /// assert_eq!(ContentType::parse("9"), Some(ContentType::Other(9)));
    /// assert_eq!(ContentType::parse("picture"), None);
    /// ```
    pub fn parse(text: &str) -> Option<Self> {
        if let Some(i) = Self::NAMES
            .iter()
            .position(|n| n.eq_ignore_ascii_case(text))
        {
            return Some(Self::from_code(i as i64));
        }
        text.trim().parse::<i64>().ok().map(Self::from_code)
    }
}

/// What a cut counts.
///
/// Other units may be added, so the enum is `#[non_exhaustive]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum CutUnit {
    /// Array items.
    Items,
    /// String bytes (UTF-8).
    Bytes,
}

impl CutUnit {
    /// The spelling in budget markers: `items` or `bytes`.
    pub fn as_str(self) -> &'static str {
        match self {
            CutUnit::Items => "items",
            CutUnit::Bytes => "bytes",
        }
    }
}

/// One cut made to fit a byte budget.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cut {
    /// JSON Pointer of the array (or string) that was cut, in the payload; "" = the whole
    /// payload was left out.
    pub pointer: String,
    /// Items (or bytes) kept.
    pub kept: u64,
    /// Items (or bytes) before the cut.
    pub total: u64,
    /// What `kept` and `total` count.
    pub unit: CutUnit,
}

/// What a byte budget did to the payload (ctxo's `_meta`; the other formats write a budget
/// marker when `truncated`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BudgetReport {
    /// Items of the largest array that was (or could have been) cut, before the cut
    /// (ctxo `totalItems`).
    pub total_items: u64,
    /// Items of that array kept (ctxo `returnedItems`).
    pub returned_items: u64,
    /// Whether anything was cut.
    pub truncated: bool,
    /// Compact JS-dialect size of the whole payload before any cut, in bytes (ctxo
    /// `totalBytes`).
    pub total_bytes: u64,
    /// The token limit the cut fitted, when it counted tokens (markers: `tokenLimit`,
    /// `tokenizer`).
    pub tokens: Option<TokenReport>,
    /// How to get the rest (never null on the wire).
    pub hint: Option<String>,
    /// The cuts made, in document order (budget markers list the first eight and count the
    /// rest; ctxo documents carry none).
    pub cuts: Vec<Cut>,
}

/// A token limit a cut fitted: at most `limit` tokens as `tokenizer` counts them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TokenReport {
    /// The most tokens the output could take.
    pub limit: u64,
    /// The tokenizer's name (`o200k_base`).
    pub tokenizer: String,
}

/// A reference to a payload kept in a content-addressed store.
#[derive(Clone, Debug, PartialEq)]
pub struct ArtifactRef {
    /// `sha256:<64 lower-case hex>`.
    pub digest: String,
}

/// The pattern of an artifact digest, [`ArtifactRef::digest`]: `sha256:` and 64 lower-case
/// hex digits. The published protocol-v1 schema carries it; [`is_digest`] checks it.
pub const DIGEST_PATTERN: &str = r"^sha256:[0-9a-f]{64}$";

/// Whether `text` matches [`DIGEST_PATTERN`] (checked byte by byte, no regex).
///
/// ```
/// use envelope::model::is_digest;
///
/// assert!(is_digest(&format!("sha256:{}", "0a".repeat(32))));
/// assert!(!is_digest(&format!("sha256:{}", "0A".repeat(32))));
/// assert!(!is_digest("sha256:0a"));
/// ```
pub fn is_digest(text: &str) -> bool {
    text.strip_prefix("sha256:").is_some_and(|hex| {
        hex.len() == 64 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    })
}

/// A field the canonical model does not know, kept where it was found.
#[derive(Clone, Debug, PartialEq)]
pub struct Extension {
    /// JSON Pointer in the origin format's document (`#` enters an embedded document).
    pub pointer: String,
    /// The value found there, as it was.
    pub value: Value,
}

/// Presentation facts of the origin document that are not content (where a reserved key
/// stood, whether structured output was mirrored), so a same-format round trip is exact.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Layout {
    /// Index among the root keys of the reserved key (ctxo `_meta`, tool-result-envelope
    /// `__envelope`) when the document did not have it last.
    pub reserved_key_index: Option<usize>,
    /// tool-envelope-v1: the result also carried `structuredContent`.
    pub dual_emit: bool,
    /// operations: `meta.structuredContent` was present and equal to `data` (the decoder
    /// compared it with the payload, so the payload was looked into, not only moved).
    pub structured_mirror: bool,
    /// tool-result-envelope: the root key holding the payload; `None` when the payload was
    /// the whole root.
    pub payload_key: Option<String>,
    /// ctxo: the document was the last text block of an MCP result.
    pub transport: Option<Transport>,
    /// Keys the reference always writes that the document did not have (ctxo `_meta`):
    /// writing it back leaves them out again.
    pub absent_keys: Vec<&'static str>,
    /// ctxo: the document had no `_meta` (a graceful miss).
    pub without_meta: bool,
    /// protocol-v1: `"error":null` instead of `"error":{}` on an ok envelope.
    pub null_error: bool,
    /// mcp: the result's keys in document order.
    pub key_order: Option<Vec<String>>,
}

/// The MCP result a ctxo document travelled in (as its last text block).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Transport {
    /// The content blocks before the document's block (advisory text).
    pub leading_blocks: Vec<Value>,
    /// The result's other keys (`isError`, `_meta`, …), in document order.
    pub outer_keys: Vec<(String, Value)>,
}

/// The canonical envelope: what every format's decoder produces and every encoder reads.
///
/// Build one with [`Envelope::ok`] or [`Envelope::failed`] and struct update syntax, then
/// encode it in any format; what the format cannot hold is listed in the loss report, never
/// dropped silently.
///
/// ```
/// use envelope::{EncodeOptions, Envelope, FormatId, encode};
/// use serde_json::json;
///
/// let env = Envelope {
///     tool: Some("math.add".into()),
///     ..Envelope::ok(json!({"sum": 5}))
/// };
///
/// // operations: the tool is the local operation id; the time is the caller's.
/// let options = EncodeOptions {
///     now: Some("2026-07-04T00:00:00Z".into()),
///     ..EncodeOptions::default()
/// };
/// let out = encode(FormatId::Operations, &env, &options).unwrap();
/// assert_eq!(
///     out.bytes,
///     br#"{"data":{"sum":5},"meta":{"source":"local","operationId":"math.add","timestamp":1783123200000}}"#
/// );
/// assert!(out.losses.is_empty());
///
/// // mcp: structured content and its text mirror; a tool name has no place there.
/// let out = encode(FormatId::Mcp, &env, &options).unwrap();
/// assert_eq!(
///     out.bytes,
///     br#"{"content":[{"type":"text","text":"{\"sum\":5}"}],"structuredContent":{"sum":5}}"#
/// );
/// assert_eq!(out.losses.items[0].field, "tool");
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Envelope {
    /// Outcome of the call.
    pub status: Status,
    /// The tool's output.
    pub payload: Payload,
    /// Human-readable summary (tool-envelope-v1 block 0, an MCP text block).
    pub summary: Option<String>,
    /// MCP content blocks as the client shows them, when they are more than the payload's
    /// own rendering (images, links, advisory text).
    pub presentation: Option<Vec<Value>>,
    /// The tool that ran (tool-envelope-v1 `meta.tool`, tool-result-envelope `tool`,
    /// operations' local `operationId`).
    pub tool: Option<String>,
    /// protocol-v1 `namespace/verb`.
    pub command: Option<String>,
    /// When the result was made (tool-envelope-v1 and protocol-v1 `meta.ts`, operations
    /// `meta.timestamp`, tool-result-envelope `createdUtc`).
    pub timestamp: Option<Timestamp>,
    /// How long the call took, in milliseconds, as given (protocol-v1 `meta.duration_ms`).
    pub duration_ms: Option<Number>,
    /// Absolute workspace path (ctxo `_meta.workspace.root`, protocol-v1 `meta.workspace`).
    pub workspace: Option<String>,
    /// Where the result came from (operations `meta.source`; an MCP result's `_meta`).
    pub source: Option<Source>,
    /// The model provider (tool-result-envelope `provider`).
    pub provider: Option<String>,
    /// The model (tool-result-envelope `model`).
    pub model: Option<String>,
    /// The id of the tool call this result answers (tool-result-envelope `toolCallId`).
    pub tool_call_id: Option<String>,
    /// tool-result-envelope `contentType`.
    pub content_type: Option<ContentType>,
    /// What a byte budget did to the payload, if one was applied.
    pub budget: Option<BudgetReport>,
    /// Where the whole payload is kept when it was offloaded to a store (protocol-v1
    /// `meta.cas_digest`, an MCP `resource_link` block, `artifact` in the others'
    /// metadata).
    pub artifact: Option<ArtifactRef>,
    /// Why the call failed, when [`status`](Self::status) is [`Status::Error`].
    pub error: Option<EnvelopeError>,
    /// The format the envelope was decoded from; its extensions belong to that format.
    pub origin: Option<FormatId>,
    /// Fields only the origin format knows, in document order.
    pub extensions: Vec<Extension>,
    /// How the origin document was laid out, so writing it back in its own format is
    /// byte-exact.
    pub layout: Layout,
}

impl Envelope {
    /// An ok envelope around a JSON payload; every other field empty.
    pub fn ok(payload: Value) -> Self {
        Envelope {
            payload: Payload::Json(payload),
            ..Envelope::default()
        }
    }

    /// An error envelope (status [`Status::Error`]) with no payload; every other field empty.
    pub fn failed(error: EnvelopeError) -> Self {
        Envelope {
            status: Status::Error,
            error: Some(error),
            ..Envelope::default()
        }
    }

    /// A copy of everything but the payload and the presentation (the parts that may be
    /// large), which are left empty.
    pub(crate) fn clone_without_payload(&self) -> Envelope {
        self.clone_around(None)
    }

    /// [`clone_without_payload`](Self::clone_without_payload) with only the first
    /// `keep` bytes of the error's message (a character boundary), never copying the rest.
    pub(crate) fn clone_with_message_start(&self, keep: usize) -> Envelope {
        self.clone_around(Some(keep))
    }

    fn clone_around(&self, message_start: Option<usize>) -> Envelope {
        // Destructured so that a new field cannot be forgotten here.
        let Envelope {
            status,
            payload: _,
            summary,
            presentation: _,
            tool,
            command,
            timestamp,
            duration_ms,
            workspace,
            source,
            provider,
            model,
            tool_call_id,
            content_type,
            budget,
            artifact,
            error,
            origin,
            extensions,
            layout,
        } = self;
        Envelope {
            status: *status,
            payload: Payload::None,
            summary: summary.clone(),
            presentation: None,
            tool: tool.clone(),
            command: command.clone(),
            timestamp: timestamp.clone(),
            duration_ms: duration_ms.clone(),
            workspace: workspace.clone(),
            source: source.clone(),
            provider: provider.clone(),
            model: model.clone(),
            tool_call_id: tool_call_id.clone(),
            content_type: *content_type,
            budget: budget.clone(),
            artifact: artifact.clone(),
            error: error.as_ref().map(|e| match message_start {
                Some(keep) => e.with_message(e.message[..keep].to_string()),
                None => e.clone(),
            }),
            origin: *origin,
            extensions: extensions.clone(),
            layout: layout.clone(),
        }
    }

    /// The value of the extension kept at `pointer` (a JSON Pointer into the origin
    /// format's document, `/meta/runner`), if any.
    pub fn extension(&self, pointer: &str) -> Option<&Value> {
        self.extensions
            .iter()
            .find(|e| e.pointer == pointer)
            .map(|e| &e.value)
    }

    /// Extensions of `format` (none when the envelope came from another format).
    pub(crate) fn extensions_of(&self, format: FormatId) -> &[Extension] {
        if self.origin == Some(format) {
            &self.extensions
        } else {
            &[]
        }
    }

    pub(crate) fn push_extension(&mut self, pointer: String, value: Value) {
        self.extensions.push(Extension { pointer, value });
    }
}
