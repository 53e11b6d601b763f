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
mod loss;

pub use error::{Category, EnvelopeError};
pub use format_id::FormatId;
pub use loss::{Loss, LossReport};

/// Outcome of the call the envelope reports on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Status {
    #[default]
    Ok,
    Error,
    /// A non-terminal progress event (protocol-v1 streams).
    Progress,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Error => "error",
            Status::Progress => "progress",
        }
    }
}

/// The tool's output.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum Payload {
    /// No payload (an error result, say).
    #[default]
    None,
    /// Structured data.
    Json(Value),
    /// Plain text.
    Text(String),
    /// Opaque bytes with their media type.
    Bytes { data: Vec<u8>, media_type: String },
    /// MCP content blocks that are themselves the output (a tool without structured output).
    Blocks(Vec<Value>),
}

impl Payload {
    pub fn is_none(&self) -> bool {
        matches!(self, Payload::None)
    }

    /// The payload as one JSON value, borrowed when it already is one.
    pub fn json(&self) -> Cow<'_, Value> {
        match self {
            Payload::Json(v) => Cow::Borrowed(v),
            other => Cow::Owned(other.to_json()),
        }
    }

    /// The payload as one JSON value (text as a string, blocks as an array, bytes as base64).
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

/// A point in time as the wire gave it.
#[derive(Clone, Debug, PartialEq)]
pub enum Timestamp {
    /// An ISO-8601 / RFC 3339 string, kept as written.
    Text(String),
    /// Unix epoch milliseconds (operations' `meta.timestamp`).
    EpochMillis(Number),
}

/// Where the result came from (the operations seed's `meta.source`).
#[derive(Clone, Debug, PartialEq)]
pub enum Source {
    Local {
        operation_id: Option<String>,
    },
    Http {
        status_code: Option<Number>,
        /// `Record<string, string>`; repeated headers joined with `, `.
        headers: Map<String, Value>,
        content_type: Option<String>,
    },
    Mcp {
        /// The MCP result's own `_meta` object.
        result_meta: Option<Value>,
    },
}

impl Source {
    pub fn kind(&self) -> &'static str {
        match self {
            Source::Local { .. } => "local",
            Source::Http { .. } => "http",
            Source::Mcp { .. } => "mcp",
        }
    }
}

/// tool-result-envelope's content classification.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ContentType {
    Unknown,
    Text,
    List,
    Object,
    Image,
    Binary,
    /// An integer outside the defined range, kept as given.
    Other(i64),
}

impl ContentType {
    pub const NAMES: [&'static str; 6] = ["Unknown", "Text", "List", "Object", "Image", "Binary"];

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

    /// Parses a name (any case) or a decimal integer, as the reference reader does.
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
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CutUnit {
    /// Array items.
    Items,
    /// String bytes (UTF-8).
    Bytes,
}

impl CutUnit {
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
    pub unit: CutUnit,
}

/// What a byte budget did to the payload (ctxo's `_meta`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BudgetReport {
    pub total_items: u64,
    pub returned_items: u64,
    pub truncated: bool,
    pub total_bytes: u64,
    /// How to get the rest (never null on the wire).
    pub hint: Option<String>,
    pub cuts: Vec<Cut>,
}

/// A reference to a payload kept in a content-addressed store.
#[derive(Clone, Debug, PartialEq)]
pub struct ArtifactRef {
    /// `sha256:<64 lower-case hex>`.
    pub digest: String,
}

/// A field the canonical model does not know, kept where it was found.
#[derive(Clone, Debug, PartialEq)]
pub struct Extension {
    /// JSON Pointer in the origin format's document (`#` enters an embedded document).
    pub pointer: String,
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
    /// tool-result-envelope: the root key holding the payload; `None` when the payload was
    /// the whole root.
    pub payload_key: Option<String>,
    /// ctxo: the document was the last text block of an MCP result.
    pub transport: Option<Transport>,
    /// Keys the reference always writes that the document did not have (ctxo `_meta`,
    /// tool-result-envelope `__envelope`): writing it back leaves them out again.
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

/// The canonical envelope.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Envelope {
    pub status: Status,
    pub payload: Payload,
    /// Human-readable summary (tool-envelope-v1 block 0, an MCP text block).
    pub summary: Option<String>,
    /// MCP content blocks as the client shows them, when they are more than the payload's
    /// own rendering (images, links, advisory text).
    pub presentation: Option<Vec<Value>>,
    pub tool: Option<String>,
    /// protocol-v1 `namespace/verb`.
    pub command: Option<String>,
    pub timestamp: Option<Timestamp>,
    pub duration_ms: Option<Number>,
    /// Absolute workspace path (ctxo `_meta.workspace.root`, protocol-v1 `meta.workspace`).
    pub workspace: Option<String>,
    pub source: Option<Source>,
    pub provider: Option<String>,
    pub model: Option<String>,
    pub tool_call_id: Option<String>,
    pub content_type: Option<ContentType>,
    pub budget: Option<BudgetReport>,
    pub artifact: Option<ArtifactRef>,
    pub error: Option<EnvelopeError>,
    /// The format the envelope was decoded from; its extensions belong to that format.
    pub origin: Option<FormatId>,
    /// Fields only the origin format knows, in document order.
    pub extensions: Vec<Extension>,
    pub layout: Layout,
}

impl Envelope {
    /// An ok envelope around a JSON payload.
    pub fn ok(payload: Value) -> Self {
        Envelope {
            payload: Payload::Json(payload),
            ..Envelope::default()
        }
    }

    /// An error envelope.
    pub fn failed(error: EnvelopeError) -> Self {
        Envelope {
            status: Status::Error,
            error: Some(error),
            ..Envelope::default()
        }
    }

    /// A copy of everything but the payload and the presentation (the parts that may be
    /// large), which are left empty.
    pub fn clone_without_payload(&self) -> Envelope {
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
            error: error.clone(),
            origin: *origin,
            extensions: extensions.clone(),
            layout: layout.clone(),
        }
    }

    /// The value of an extension of the origin format at `pointer`.
    pub fn extension(&self, pointer: &str) -> Option<&Value> {
        self.extensions
            .iter()
            .find(|e| e.pointer == pointer)
            .map(|e| &e.value)
    }

    /// Extensions of `format` (none when the envelope came from another format).
    pub fn extensions_of(&self, format: FormatId) -> &[Extension] {
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
