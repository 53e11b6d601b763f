//! One codec per wire format. Each decodes bytes into the canonical [`Envelope`] and encodes
//! an envelope back into bytes, byte-exact with its reference implementation.

use serde_json::Value;

use crate::error::{Error, Result};
use crate::model::{Envelope, Payload, Status};

pub(crate) mod abridge;
pub mod ctxo;
pub(crate) mod detection;
pub(crate) mod findings;
mod format;
pub mod mcp;
pub(crate) mod meta_text;
pub mod operations;
pub mod protocol_v1;
pub(crate) mod rule_catalog;
pub mod schema;
pub mod tool_envelope_v1;
pub mod tool_result_envelope;

pub use crate::model::{FormatId, Loss, LossReport};
pub use format::{AbridgedRoot, Codec, Evidence, Format, PayloadSource, Rank};

/// The root members any format's detection reads ([`Format::detect`](crate::formats::Format::detect)):
/// of a document larger than the window, a [`Detector`](crate::detect::Detector) keeps these and no others.
/// `tests/detect_stream.rs` checks that detection from these alone agrees with detection
/// from the whole document, for every example and fixture.
pub(crate) const DETECTION_KEYS: [&str; 11] = [
    "__envelope",
    "_meta",
    "content",
    "version",
    "status",
    "command",
    "data",
    "meta",
    "found",
    "error",
    "message",
];

/// The root members whose values detection reads (the other [`DETECTION_KEYS`] it asks only
/// to be there): [`detect`](crate::detect::detect) builds these and no others (of `error`
/// and `message`, only their kinds: ctxo's error evidence reads no more).
/// `tests/all_paths.rs` checks that detection agrees with detection of the whole document.
pub(crate) const DETECTION_WHOLE: [&str; 7] = [
    "__envelope",
    "_meta",
    "content",
    "meta",
    "found",
    "error",
    "message",
];

/// Every format, in the order detection breaks ties between equally specific evidence.
/// Registering a format is one line here.
static REGISTRY: [&dyn Format; 6] = [
    &tool_envelope_v1::ToolEnvelopeV1,
    &ctxo::Ctxo,
    &operations::Operations,
    &protocol_v1::ProtocolV1,
    &tool_result_envelope::ToolResultEnvelope,
    &mcp::Mcp,
];

/// The registered formats.
pub fn registered() -> &'static [&'static dyn Format] {
    &REGISTRY
}

/// The implementation of `id`.
pub fn get(id: FormatId) -> &'static dyn Format {
    *REGISTRY
        .iter()
        .find(|f| f.id() == id)
        .expect("every FormatId is registered")
}

/// The format with the most specific evidence for a parsed document, if any has some.
pub fn identify(doc: &Value) -> Option<(&'static dyn Format, Evidence)> {
    REGISTRY
        .iter()
        .filter_map(|f| f.detect(doc).map(|evidence| (*f, evidence)))
        .min_by_key(|(_, evidence)| evidence.rank)
}

/// The `_meta` member (`text`: its JSON, checked already) as detection reads it: the names
/// of its members, each `null` (ctxo's evidence is which budget fields it has), or `null`
/// when it is not an object. So a result with a 100 MB `_meta` is detected without it being
/// built.
pub(crate) fn keys_for_detection(text: &[u8]) -> std::result::Result<Value, serde_json::Error> {
    use crate::json::reader::{Event, Reader};
    let mut reader = Reader::new(text);
    if !matches!(reader.next()?, Some(Event::BeginObject)) {
        return Ok(Value::Null);
    }
    let mut keys = serde_json::Map::new();
    while let Some(Event::Key(key)) = reader.next()? {
        keys.insert(key.value().into_owned(), Value::Null);
        reader.skip()?;
    }
    Ok(Value::Object(keys))
}

/// The format whose text form (not JSON) `input` is in, if any.
pub fn identify_text(input: &[u8]) -> Option<(&'static dyn Format, Evidence)> {
    REGISTRY
        .iter()
        .find_map(|f| f.detect_text(input).map(|evidence| (*f, evidence)))
}

/// How strictly to read.
#[derive(Clone, Debug, Default)]
pub struct DecodeOptions {
    /// Accept what the reference accepts beyond its own output (tool-envelope-v1: Node's
    /// lenient base64 reader).
    pub lenient: bool,
}

/// Choices an encoder cannot take from the envelope itself.
#[derive(Clone, Debug, Default)]
pub struct EncodeOptions {
    /// ctxo byte limit; `None` = 8192 (see [`ctxo::parse_limit`] for `CTXO_RESPONSE_LIMIT`).
    pub ctxo_limit: Option<usize>,
    /// tool-envelope-v1: also emit `structuredContent` = `{payload, meta}`.
    pub dual_emit: bool,
    /// The time to write where a format requires one and the envelope has none
    /// (RFC 3339, UTC). `None` = the current time.
    pub now: Option<String>,
    /// tool-result-envelope: Newtonsoft `Formatting.Indented`.
    pub indented: bool,
}

/// An encoded envelope and what the encoding lost.
#[derive(Clone, Debug)]
pub struct Encoded {
    /// The encoded document, exactly as the format's reference writes it.
    pub bytes: Vec<u8>,
    /// What the format could not hold (empty: nothing lost).
    pub losses: LossReport,
}

/// Decodes `input` as `format`.
///
/// ```
/// use envelope::{DecodeOptions, FormatId, Status, decode};
/// use serde_json::json;
///
/// let input = include_str!("../../../../examples/protocol-v1.json");
/// let env = decode(FormatId::ProtocolV1, input.as_bytes(), &DecodeOptions::default()).unwrap();
/// assert_eq!(env.status, Status::Ok);
/// assert_eq!(env.command.as_deref(), Some("foxctl.example.inline"));
/// assert_eq!(env.payload.json()["message"], "Hello from inline envelope");
/// assert_eq!(env.origin, Some(FormatId::ProtocolV1));
/// // A meta field only protocol-v1 knows is kept under its pointer.
/// assert_eq!(env.extension("/meta/runner"), Some(&json!("exec")));
///
/// // A document that is not a protocol-v1 envelope is an error, never a guess.
/// let v2 = br#"{"version":2,"status":"ok","command":"a/b"}"#;
/// assert!(decode(FormatId::ProtocolV1, v2, &DecodeOptions::default()).is_err());
/// ```
pub fn decode(format: FormatId, input: &[u8], options: &DecodeOptions) -> Result<Envelope> {
    // The format's decoder sets the origin (Format::decode).
    get(format).decode_bytes(input, options)
}

/// Decodes `input` as `from`, or as the detected format, parsing it only once.
pub fn decode_any(
    input: &[u8],
    from: Option<FormatId>,
    options: &DecodeOptions,
) -> Result<(FormatId, Envelope)> {
    if let Some((format, _)) = identify_text(input)
        && from.is_none_or(|f| f == format.id())
    {
        return Ok((format.id(), decode(format.id(), input, options)?));
    }
    // A large input of no format is refused by detection's one pass, which builds only
    // the members detection reads, never the document: the whole read below built an
    // 86 MB object with `data` and a `meta` of no format (1.5 GB) only to say so. What it
    // says is what the whole read's detection says; any other outcome reads on.
    if from.is_none()
        && input.len() >= detection::REFUSE_FROM
        && let Ok(members) = detection::members(input)
        && identify(&members).is_none()
    {
        return Err(undetected(&members));
    }
    // An MCP result's `_meta` is read as text, never built.
    let mut read = meta_text::read(input)?;
    let format = match from {
        Some(f) => f,
        None => read.detect()?,
    };
    Ok((format, read.decode(format, options)?))
}

/// Decodes `input` as `format` with an MCP result's `_meta` read as text, never built
/// ([`meta_text`]): MCP's and operations' reading of bytes.
pub(crate) fn decode_keeping_meta(
    format: FormatId,
    input: &[u8],
    options: &DecodeOptions,
) -> Result<Envelope> {
    meta_text::read(input)?.decode(format, options)
}

/// The format of a parsed document, or why there is none.
fn identified(doc: &Value) -> Result<FormatId> {
    match identify(doc) {
        Some((format, _)) => Ok(format.id()),
        None => Err(undetected(doc)),
    }
}

/// The error for a document no format recognises.
pub(crate) fn undetected(doc: &Value) -> Error {
    let kind = match doc {
        Value::Object(_) => {
            return Error::Undetected(
                "an object without the marks of any format (no \"__envelope\", \"content\", \"version\"+\"status\"+\"command\", \"data\"+\"meta\" or ctxo \"_meta\")".into(),
            );
        }
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
    };
    Error::Undetected(format!(
        "a JSON {kind} at the root; every envelope format is an object"
    ))
}

/// Decodes an already parsed document as `format` (its parts move into the envelope).
pub fn decode_value(format: FormatId, value: Value, options: &DecodeOptions) -> Result<Envelope> {
    get(format).decode(value, options)
}

/// Encodes `env` as `format`, with the report of what `format` could not hold.
///
/// ```
/// use envelope::{DecodeOptions, EncodeOptions, FormatId, decode, encode};
///
/// let input = include_str!("../../../../examples/protocol-v1.json");
/// let env = decode(FormatId::ProtocolV1, input.as_bytes(), &DecodeOptions::default()).unwrap();
///
/// // Back to its own format: byte-exact (Go's trailing newline included), nothing lost.
/// let same = encode(FormatId::ProtocolV1, &env, &EncodeOptions::default()).unwrap();
/// assert_eq!(same.bytes, input.as_bytes());
/// assert!(same.losses.is_empty());
///
/// // To another format: what operations cannot hold is reported, by canonical field name
/// // or by its pointer in the source document.
/// let ops = encode(FormatId::Operations, &env, &EncodeOptions::default()).unwrap();
/// assert_eq!(
///     String::from_utf8(ops.bytes).unwrap(),
///     r#"{"data":{"items":[{"id":"alpha","value":1},{"id":"bravo","value":2}],"message":"Hello from inline envelope","summary":"Sample inline response"},"meta":{"source":"local","operationId":"foxctl.example.inline","timestamp":1762943400000}}"#
/// );
/// let lost: Vec<&str> = ops.losses.items.iter().map(|l| l.field.as_str()).collect();
/// assert_eq!(
///     lost,
///     ["duration_ms", "workspace", "/meta/source", "/meta/runner", "/meta/skill_version"]
/// );
/// ```
pub fn encode(format: FormatId, env: &Envelope, options: &EncodeOptions) -> Result<Encoded> {
    let mut losses = LossReport::default();
    let bytes = get(format).encode(env, options, &mut losses)?;
    Ok(encoded(format, env, bytes, losses))
}

/// [`encode`] as ctxo of an envelope whose payload [`skim`](crate::json::skim) read for the
/// compat limit: `None` when the output would need items that were skimmed.
pub(crate) fn encode_ctxo_skimmed(
    env: &Envelope,
    options: &EncodeOptions,
    tails: &[crate::json::skim::Tail],
) -> Result<Option<Encoded>> {
    let mut losses = LossReport::default();
    let bytes = ctxo::encode_skimmed(env, options, &mut losses, tails)?;
    Ok(bytes.map(|bytes| encoded(FormatId::Ctxo, env, bytes, losses)))
}

/// The output of `format`'s encoder, with the losses every encoder shares.
fn encoded(format: FormatId, env: &Envelope, bytes: Vec<u8>, mut losses: LossReport) -> Encoded {
    // Extensions of another format have no place in this one.
    if env.origin.is_some_and(|o| o != format) {
        let origin = env.origin.map_or("", FormatId::as_str);
        for ext in &env.extensions {
            losses.push(
                ext.pointer.clone(),
                format!("{origin} field with no place in {format}"),
            );
        }
        // The keys of the MCP result a ctxo document travelled in.
        let outer_keys = env.layout.transport.iter().flat_map(|t| &t.outer_keys);
        for (key, _) in outer_keys {
            losses.push(
                crate::json::pointer::join("", key),
                format!("{origin} field with no place in {format}"),
            );
        }
    }
    Encoded { bytes, losses }
}

/// A canonical field an encoder may or may not hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Field {
    Summary,
    Presentation,
    Tool,
    Command,
    Timestamp,
    DurationMs,
    Workspace,
    Source,
    Provider,
    Model,
    ToolCallId,
    ContentType,
    Budget,
    Artifact,
    ErrorCategory,
    ErrorCode,
    ErrorDetails,
    ErrorRecoverable,
    ErrorSuggestedAction,
    ErrorNextTool,
    ErrorHint,
}

impl Field {
    /// The fields of the canonical error.
    pub(crate) const ERROR: [Field; 7] = [
        Field::ErrorCategory,
        Field::ErrorCode,
        Field::ErrorDetails,
        Field::ErrorRecoverable,
        Field::ErrorSuggestedAction,
        Field::ErrorNextTool,
        Field::ErrorHint,
    ];

    const ALL: [Field; 21] = [
        Field::Summary,
        Field::Presentation,
        Field::Tool,
        Field::Command,
        Field::Timestamp,
        Field::DurationMs,
        Field::Workspace,
        Field::Source,
        Field::Provider,
        Field::Model,
        Field::ToolCallId,
        Field::ContentType,
        Field::Budget,
        Field::Artifact,
        Field::ErrorCategory,
        Field::ErrorCode,
        Field::ErrorDetails,
        Field::ErrorRecoverable,
        Field::ErrorSuggestedAction,
        Field::ErrorNextTool,
        Field::ErrorHint,
    ];

    fn name(self) -> &'static str {
        match self {
            Field::Summary => "summary",
            Field::Presentation => "presentation",
            Field::Tool => "tool",
            Field::Command => "command",
            Field::Timestamp => "timestamp",
            Field::DurationMs => "duration_ms",
            Field::Workspace => "workspace",
            Field::Source => "source",
            Field::Provider => "provider",
            Field::Model => "model",
            Field::ToolCallId => "tool_call_id",
            Field::ContentType => "content_type",
            Field::Budget => "budget",
            Field::Artifact => "artifact",
            Field::ErrorCategory => "error.category",
            Field::ErrorCode => "error.code",
            Field::ErrorDetails => "error.details",
            Field::ErrorRecoverable => "error.recoverable",
            Field::ErrorSuggestedAction => "error.suggested_action",
            Field::ErrorNextTool => "error.next_tool",
            Field::ErrorHint => "error.hint",
        }
    }

    fn is_set(self, env: &Envelope) -> bool {
        let err = env.error.as_ref();
        match self {
            Field::Summary => env.summary.is_some(),
            Field::Presentation => env.presentation.is_some(),
            Field::Tool => env.tool.is_some(),
            Field::Command => env.command.is_some(),
            Field::Timestamp => env.timestamp.is_some(),
            Field::DurationMs => env.duration_ms.is_some(),
            Field::Workspace => env.workspace.is_some(),
            Field::Source => env.source.is_some(),
            Field::Provider => env.provider.is_some(),
            Field::Model => env.model.is_some(),
            Field::ToolCallId => env.tool_call_id.is_some(),
            Field::ContentType => env.content_type.is_some(),
            Field::Budget => env.budget.is_some(),
            Field::Artifact => env.artifact.is_some(),
            // A category that follows from the code is not information of its own.
            Field::ErrorCategory => err.is_some_and(|e| {
                e.code
                    .as_deref()
                    .map(crate::model::error::Category::of_code)
                    != Some(e.category.clone())
            }),
            Field::ErrorCode => err.is_some_and(|e| e.code.is_some()),
            Field::ErrorDetails => err.is_some_and(|e| e.details.is_some()),
            Field::ErrorRecoverable => err.is_some_and(|e| {
                e.recoverable.is_some_and(|r| {
                    r != e
                        .code
                        .as_deref()
                        .is_some_and(crate::model::error::is_retryable)
                })
            }),
            Field::ErrorSuggestedAction => err.is_some_and(|e| e.suggested_action.is_some()),
            Field::ErrorNextTool => err.is_some_and(|e| e.next_tool.is_some()),
            Field::ErrorHint => err.is_some_and(|e| e.hint.is_some()),
        }
    }
}

/// Reports every set canonical field that `format` does not hold.
pub(crate) fn report_unheld(
    env: &Envelope,
    format: FormatId,
    held: &[Field],
    losses: &mut LossReport,
) {
    for field in Field::ALL {
        if held.contains(&field) || !field.is_set(env) {
            continue;
        }
        match (field, &env.budget) {
            (Field::Budget, Some(budget)) => report_unheld_budget(budget, format, losses),
            _ => losses.push(field.name(), format!("{format} has no place for it")),
        }
    }
    if env.status == Status::Progress && format != FormatId::ProtocolV1 {
        losses.push(
            "status",
            format!("{format} has no progress status; written as ok"),
        );
    }
}

/// What a format without a place for a budget report drops of it. Every format writes the
/// marker of a cut envelope (`truncated`, `totalBytes`, the cuts, the hint), which holds the
/// item counts only through its cuts: a cut read from ctxo (`_meta` counts, no cuts) loses
/// them (counts of 0, what a marker without cuts is read as, are not lost: an error's cut
/// message has none). A report of no cut has no marker at all: all of it is lost.
fn report_unheld_budget(
    budget: &crate::model::BudgetReport,
    format: FormatId,
    losses: &mut LossReport,
) {
    let counts = format!(
        "totalItems {}, returnedItems {}",
        budget.total_items, budget.returned_items
    );
    if !budget.truncated {
        losses.push(
            "budget",
            format!(
                "{format} has no place for a report of no cut ({counts}, truncated false, \
                 totalBytes {})",
                budget.total_bytes
            ),
        );
    } else if budget.cuts.is_empty() && (budget.total_items, budget.returned_items) != (0, 0) {
        losses.push(
            "budget",
            format!(
                "the budget marker of {format} holds truncated, totalBytes and the hint, not \
                 the item counts ({counts})"
            ),
        );
    }
}

/// The payload as JSON for formats whose payload slot is one JSON value.
pub(crate) fn payload_json<'a>(
    env: &'a Envelope,
    format: FormatId,
    losses: &mut LossReport,
) -> std::borrow::Cow<'a, Value> {
    if let Payload::Bytes { media_type, .. } = &env.payload {
        losses.push(
            "payload",
            format!("{format} holds no bytes: written as a base64 string ({media_type})"),
        );
    }
    env.payload.json()
}

/// The time to write when a format requires one: the envelope's, else `options.now`,
/// else the current time, as RFC 3339 text.
pub(crate) fn timestamp_text(env: &Envelope, options: &EncodeOptions, millis: bool) -> String {
    use crate::model::Timestamp;
    match &env.timestamp {
        Some(Timestamp::Text(t)) => t.clone(),
        Some(Timestamp::EpochMillis(ms)) => {
            crate::time::epoch_millis_to_rfc3339(ms).unwrap_or_else(|| ms.to_string())
        }
        None => match &options.now {
            Some(now) => now.clone(),
            None => crate::time::now_rfc3339(millis),
        },
    }
}

/// Reads an optional string member; a present non-string is a type error.
pub(crate) fn opt_str(
    format: &'static str,
    obj: &serde_json::Map<String, Value>,
    key: &str,
    base: &str,
) -> Result<Option<String>> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(Error::wrong_type(
            format,
            &crate::json::pointer::join(base, key),
            "a string",
        )),
    }
}

/// Cuts listed in a budget marker; the rest are counted in `moreCuts`.
pub const MARKER_CUTS: usize = 8;

/// The budget report of a cut (truncated) envelope, if any.
pub(crate) fn truncation(env: &Envelope) -> Option<&crate::model::BudgetReport> {
    env.budget.as_ref().filter(|b| b.truncated)
}

/// Writes our budget marker: `{"truncated":true,"totalBytes":…,"tokenLimit":…,"tokenizer":…,
/// "cuts":[…],"moreCuts":…,"hint":…}` (the token members when the cut counted tokens).
pub(crate) fn write_budget_marker(
    w: &mut crate::json::JsonWriter<'_>,
    budget: &crate::model::BudgetReport,
) {
    w.begin_object();
    w.field("truncated", &Value::Bool(budget.truncated));
    w.key("totalBytes");
    w.u64(budget.total_bytes);
    write_token_limit(w, budget);
    write_cuts(w, &budget.cuts);
    if let Some(hint) = &budget.hint {
        w.key("hint");
        w.string(hint);
    }
    w.end_object();
}

/// `"tokenLimit":N,"tokenizer":"…"` when the cut fitted a token limit.
pub(crate) fn write_token_limit(
    w: &mut crate::json::JsonWriter<'_>,
    budget: &crate::model::BudgetReport,
) {
    if let Some(tokens) = &budget.tokens {
        w.key("tokenLimit");
        w.u64(tokens.limit);
        w.key("tokenizer");
        w.string(&tokens.tokenizer);
    }
}

/// `"cuts":[{"pointer","kept","total","unit"}…]` and `"moreCuts":N` past [`MARKER_CUTS`].
pub(crate) fn write_cuts(w: &mut crate::json::JsonWriter<'_>, cuts: &[crate::model::Cut]) {
    if cuts.is_empty() {
        return;
    }
    w.key("cuts");
    w.begin_array();
    for cut in cuts.iter().take(MARKER_CUTS) {
        w.begin_object();
        w.key("pointer");
        w.string(&cut.pointer);
        w.key("kept");
        w.u64(cut.kept);
        w.key("total");
        w.u64(cut.total);
        w.key("unit");
        w.string(cut.unit.as_str());
        w.end_object();
    }
    w.end_array();
    if cuts.len() > MARKER_CUTS {
        w.key("moreCuts");
        w.u64((cuts.len() - MARKER_CUTS) as u64);
    }
}

/// The marker as a JSON value (for encoders that assemble maps).
pub(crate) fn budget_marker_value(
    budget: &crate::model::BudgetReport,
    dialect: crate::json::Dialect,
) -> Value {
    let mut out = Vec::new();
    write_budget_marker(&mut crate::json::JsonWriter::new(&mut out, dialect), budget);
    serde_json::from_slice(&out).expect("marker is valid JSON")
}
