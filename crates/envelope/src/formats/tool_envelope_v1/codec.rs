//! `tool-envelope-v1`: an MCP result with two text blocks, a markdown summary and
//! `__ENVELOPE_V1__:` + base64 of `{"payload":P,"meta":{"tool","ts","version"}}`.

use serde_json::{Map, Value, json};

use crate::error::{Error, Location, Result};
use crate::formats::{
    DecodeOptions, EncodeOptions, Field, FormatId, LossReport, opt_str, payload_json,
    report_unheld, timestamp_text,
};
use crate::json::{Dialect, JsonWriter, pointer};
use crate::model::error::{Category, EnvelopeError};
use crate::model::{Envelope, Payload, Status, Timestamp};

const FORMAT: &str = "tool-envelope-v1";
/// The prefix this implementation writes.
pub(crate) const PREFIX: &str = "__ENVELOPE_V1__:";
/// Pointer prefix of fields inside the base64 document of block 1.
const INNER: &str = "/content/1/text#";

/// The reference's error text for a block without the `__ENVELOPE_V<n>__:` prefix: the
/// reason of the [`Error::NotAnEnvelope`] that [`parse_block`] returns for it.
pub const NOT_A_BLOCK: &str = "not an envelope block";

/// Splits `__ENVELOPE_V(\d+)__:` off `text` (anchored, case-sensitive, no trimming).
/// Returns the version digits and the rest.
pub(crate) fn split_prefix(text: &str) -> Option<(&str, &str)> {
    let rest = text.strip_prefix("__ENVELOPE_V")?;
    let digits_len = rest.bytes().take_while(u8::is_ascii_digit).count();
    if digits_len == 0 {
        return None;
    }
    let (digits, rest) = rest.split_at(digits_len);
    Some((digits, rest.strip_prefix("__:")?))
}

/// The reference's message for a version it does not support.
pub(crate) fn unsupported_version_message(digits: &str) -> String {
    let trimmed = digits.trim_start_matches('0');
    let shown = if trimmed.is_empty() { "0" } else { trimmed };
    format!("unsupported envelope version {shown} (this consumer supports v1)")
}

/// Reads the text of one envelope block (`__ENVELOPE_V1__:` + base64) into its inner JSON
/// document (`{"payload":…,"meta":…}`). `at` is the JSON Pointer of the block's text in
/// the outer document (`/content/1/text`), used in error locations.
///
/// With [`DecodeOptions::lenient`] the base64 and UTF-8 are read as Node reads them (see
/// [`decode_lenient`](crate::base64::decode_lenient); invalid UTF-8 becomes U+FFFD).
///
/// # Errors
///
/// - [`Error::NotAnEnvelope`] ([`NOT_A_BLOCK`]) when the text does not start with the
///   prefix;
/// - [`Error::UnsupportedVersion`] for a version other than 1 (leading zeros allowed), with
///   the reference's message;
/// - [`Error::Base64`] (strict only) with the byte offset in the block text;
/// - [`Error::Json`] for invalid UTF-8 (strict only) or invalid JSON in the decoded bytes.
///
/// ```
/// use envelope::DecodeOptions;
/// use envelope::formats::tool_envelope_v1::parse_block;
/// use serde_json::json;
///
/// // base64 of {"payload":1,"meta":{}}
/// let text = "__ENVELOPE_V1__:eyJwYXlsb2FkIjoxLCJtZXRhIjp7fX0=";
/// let doc = parse_block(text, &DecodeOptions::default(), "/content/1/text").unwrap();
/// assert_eq!(doc, json!({"payload": 1, "meta": {}}));
///
/// // Node also reads it without its padding; the strict reader does not.
/// let unpadded = text.trim_end_matches('=');
/// assert!(parse_block(unpadded, &DecodeOptions::default(), "").is_err());
/// let lenient = DecodeOptions { lenient: true, ..DecodeOptions::default() };
/// assert_eq!(parse_block(unpadded, &lenient, "").unwrap(), doc);
/// ```
pub fn parse_block(text: &str, options: &DecodeOptions, at: &str) -> Result<Value> {
    let Some((digits, b64)) = split_prefix(text) else {
        return Err(Error::not_envelope(FORMAT, at, NOT_A_BLOCK));
    };
    if digits.trim_start_matches('0') != "1" {
        return Err(Error::UnsupportedVersion {
            format: FORMAT,
            message: unsupported_version_message(digits),
            location: Location::pointer(at),
        });
    }
    let prefix_len = text.len() - b64.len();
    let bytes = if options.lenient {
        crate::base64::decode_lenient(b64.as_bytes())
    } else {
        crate::base64::decode_strict(b64.as_bytes()).map_err(|e| Error::Base64 {
            format: FORMAT,
            message: e.message,
            location: Location {
                offset: Some(prefix_len + e.offset),
                pointer: Some(at.to_string()),
                ..Location::default()
            },
        })?
    };
    let json_text = if options.lenient {
        // Node's `toString("utf8")` replaces invalid sequences with U+FFFD.
        String::from_utf8_lossy(&bytes).into_owned()
    } else {
        String::from_utf8(bytes).map_err(|e| Error::Json {
            kind: crate::error::JsonErrorKind::Utf8,
            message: "decoded block is not valid UTF-8".into(),
            location: Location {
                offset: Some(e.utf8_error().valid_up_to()),
                pointer: Some(format!("{at}#")),
                ..Location::default()
            },
        })?
    };
    crate::json::from_str(&json_text).map_err(|e| match e {
        Error::Json {
            kind,
            message,
            mut location,
        } => {
            location.pointer = Some(format!("{at}# (decoded base64)"));
            Error::Json {
                kind,
                message,
                location,
            }
        }
        other => other,
    })
}

/// Decodes a bare envelope block (`__ENVELOPE_V1__:` + base64, no MCP result around it).
pub(crate) fn decode_block(input: &[u8], options: &DecodeOptions) -> Result<Envelope> {
    let text = std::str::from_utf8(input).map_err(|e| Error::Json {
        kind: crate::error::JsonErrorKind::Utf8,
        message: "input is not valid UTF-8".into(),
        location: Location::offset(e.valid_up_to()),
    })?;
    let inner = parse_block(text.trim_end_matches(['\n', '\r']), options, "")?;
    let mut env = Envelope::default();
    read_inner(&mut env, inner, false, INNER)?;
    env.origin = Some(FormatId::ToolEnvelopeV1);
    Ok(env)
}

fn text_of(block: &Value) -> Option<&str> {
    let obj = block.as_object()?;
    if obj.get("type")?.as_str()? != "text" {
        return None;
    }
    obj.get("text")?.as_str()
}

/// Decodes an MCP result whose block 1 is an envelope block.
pub(crate) fn decode(value: Value, options: &DecodeOptions) -> Result<Envelope> {
    let root = value
        .as_object()
        .ok_or_else(|| Error::wrong_type(FORMAT, "", "an MCP result object"))?;
    let content = root
        .get("content")
        .ok_or_else(|| Error::missing(FORMAT, "/content"))?
        .as_array()
        .ok_or_else(|| Error::wrong_type(FORMAT, "/content", "an array of content blocks"))?;
    let block_text = content
        .get(1)
        .and_then(text_of)
        .ok_or_else(|| Error::not_envelope(FORMAT, "/content/1", NOT_A_BLOCK))?;
    let inner = parse_block(block_text, options, "/content/1/text")?;
    decode_parts(root, inner)
}

/// [`decode`] of an MCP result `root` whose block 1 is a text block, given the document
/// that block holds (`inner`, parsed by the caller): the text itself is not read.
pub(crate) fn decode_parts(root: &Map<String, Value>, inner: Value) -> Result<Envelope> {
    let content = root
        .get("content")
        .and_then(Value::as_array)
        .ok_or_else(|| Error::wrong_type(FORMAT, "/content", "an array of content blocks"))?;
    let is_error = root.get("isError") == Some(&Value::Bool(true));
    let dual_emit = root.get("structuredContent") == Some(&inner);

    let mut env = Envelope::default();
    match content.first().and_then(text_of) {
        Some(summary) => env.summary = Some(summary.to_string()),
        None => env.push_extension("/content/0".into(), content[0].clone()),
    }
    // Members of the two text blocks beyond type and text (annotations, _meta) are kept.
    for i in 0..2 {
        let Some(block) = content
            .get(i)
            .and_then(Value::as_object)
            .filter(|_| text_of(&content[i]).is_some())
        else {
            continue;
        };
        for (key, v) in block {
            if key != "type" && key != "text" {
                env.push_extension(pointer::join(&format!("/content/{i}"), key), v.clone());
            }
        }
    }
    read_inner(&mut env, inner, is_error, INNER)?;
    // Block 0 of an error that is exactly its rendering is derived, not a summary of its own.
    if let (Some(error), Some(summary)) = (&env.error, &env.summary)
        && *summary == render_error(error)
    {
        env.summary = None;
    }
    for (i, block) in content.iter().enumerate().skip(2) {
        env.push_extension(format!("/content/{i}"), block.clone());
    }
    for (key, v) in root {
        match key.as_str() {
            "content" => {}
            "isError" if is_error => {}
            "structuredContent" if dual_emit => env.layout.dual_emit = true,
            _ => env.push_extension(pointer::join("", key), v.clone()),
        }
    }
    Ok(env)
}

/// Fills `env` from the decoded `{payload, meta}` document.
fn read_inner(env: &mut Envelope, inner: Value, is_error: bool, base: &str) -> Result<()> {
    let Value::Object(obj) = inner else {
        return Err(Error::wrong_type(FORMAT, base, "a {payload, meta} object"));
    };
    let mut payload = None;
    for (key, v) in obj {
        match key.as_str() {
            "payload" => payload = Some(v),
            "meta" => read_meta(env, &v, &format!("{base}/meta"))?,
            _ => env.push_extension(pointer::join(base, &key), v),
        }
    }
    if is_error {
        env.status = Status::Error;
        env.error = Some(read_error(
            env,
            payload.as_ref(),
            &format!("{base}/payload"),
        ));
    } else if let Some(p) = payload {
        env.payload = Payload::Json(p);
    }
    Ok(())
}

fn read_meta(env: &mut Envelope, meta: &Value, base: &str) -> Result<()> {
    let obj = meta
        .as_object()
        .ok_or_else(|| Error::wrong_type(FORMAT, base, "an object"))?;
    env.tool = opt_str(FORMAT, obj, "tool", base)?;
    env.timestamp = opt_str(FORMAT, obj, "ts", base)?.map(Timestamp::Text);
    for (key, v) in obj {
        match key.as_str() {
            "tool" | "ts" => {}
            "version" if *v == json!(1) => {}
            _ => env.push_extension(pointer::join(base, key), v.clone()),
        }
    }
    Ok(())
}

/// Reads an `McpErrorPayload`; what does not fit stays as extensions.
fn read_error(env: &mut Envelope, payload: Option<&Value>, base: &str) -> EnvelopeError {
    let obj = payload.and_then(Value::as_object);
    let text = |key: &str| {
        obj.and_then(|o| o.get(key))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    let mut error = EnvelopeError {
        category: Category::parse(text("category").as_deref().unwrap_or("internal")),
        code: text("code"),
        message: text("message").unwrap_or_default(),
        details: obj.and_then(|o| o.get("details")).cloned(),
        recoverable: obj
            .and_then(|o| o.get("recoverable"))
            .and_then(Value::as_bool),
        suggested_action: text("suggestedAction"),
        next_tool: text("nextTool"),
        hint: None,
    };
    match obj {
        Some(obj) => {
            for (key, v) in obj {
                let known = match key.as_str() {
                    "category" | "code" | "message" | "suggestedAction" | "nextTool" => {
                        v.is_string()
                    }
                    "recoverable" => v.is_boolean(),
                    "details" => true,
                    _ => false,
                };
                if !known {
                    env.push_extension(pointer::join(base, key), v.clone());
                }
            }
            if !obj.contains_key("category") {
                env.push_extension(format!("{base}#no-category"), Value::Null);
            }
            if !obj.contains_key("recoverable") {
                error.recoverable = None;
            }
        }
        None => {
            if let Some(p) = payload {
                env.push_extension(base.to_string(), p.clone());
            }
        }
    }
    error
}

/// The block-0 prefix of an error category (exact code points of the reference).
pub(crate) fn category_prefix(category: &Category) -> &'static str {
    match category {
        Category::Validation => "\u{274C} Validation error",
        Category::Execution => "\u{26A0}\u{FE0F}  Execution error",
        Category::Timeout => "\u{23F1}  Timeout",
        Category::Model => "\u{1F916} Model error",
        Category::Network => "\u{1F310} Network error",
        Category::Authorization => "\u{1F512} Authorization error",
        Category::RateLimit => "\u{1F6A6} Rate limit exceeded",
        Category::NotFound => "\u{1F50D} Not found",
        // The reference crashes on an unknown category; we render it as internal.
        Category::Internal | Category::Other(_) => "\u{1F4A5} Internal error",
    }
}

/// Block 0 of an error result, line by line as the reference renders it: the category's
/// emoji prefix, the code (the category's protocol-v1 code when the error has none) and the
/// message, then the details, the suggested action and the next tool when set. A category
/// the reference does not know is rendered as internal (the reference crashes on it).
///
/// ```
/// use envelope::formats::tool_envelope_v1::render_error;
/// use envelope::{Category, EnvelopeError};
///
/// let e = EnvelopeError::new(Category::Validation, "Required field missing: request");
/// assert_eq!(
///     render_error(&e),
///     "\u{274C} Validation error [EARG]: Required field missing: request"
/// );
/// ```
pub fn render_error(error: &EnvelopeError) -> String {
    let mut lines = vec![format!(
        "{} [{}]: {}",
        category_prefix(&error.category),
        error.code_or_default(),
        error.message
    )];
    let details = match &error.details {
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Null) | None => None,
        Some(other) => Some(crate::json::to_string(other, Dialect::Js)),
    };
    if let Some(d) = details.filter(|d| !d.is_empty()) {
        lines.push(format!("Details: {d}"));
    }
    if let Some(s) = error.suggested_action.as_deref().filter(|s| !s.is_empty()) {
        lines.push(format!("Suggestion: {s}"));
    }
    if let Some(t) = error.next_tool.as_deref().filter(|t| !t.is_empty()) {
        lines.push(format!("Next: call `{t}` to proceed."));
    }
    if error.is_recoverable() {
        lines.push("(This error may be recoverable \u{2014} retry is safe.)".into());
    }
    lines.join("\n")
}

/// The `McpErrorPayload` of an error, keys in the reference's order.
fn error_payload(env: &Envelope, error: &EnvelopeError) -> Value {
    let mut map = Map::new();
    let no_category = env
        .extension(&format!("{INNER}/payload#no-category"))
        .is_some();
    if !no_category {
        map.insert("category".into(), json!(error.category.as_str()));
    }
    map.insert("code".into(), json!(error.code_or_default()));
    map.insert("message".into(), json!(error.message));
    if let Some(d) = &error.details {
        map.insert("details".into(), d.clone());
    }
    // Required by McpErrorPayload: written even where a decoded error lacked it (the
    // capture limit's error replaces a tool-envelope-v1 payload with one of its own).
    map.insert("recoverable".into(), json!(error.is_recoverable()));
    if let Some(s) = &error.suggested_action {
        map.insert("suggestedAction".into(), json!(s));
    }
    if let Some(t) = &error.next_tool {
        map.insert("nextTool".into(), json!(t));
    }
    for ext in env.extensions_of(FormatId::ToolEnvelopeV1) {
        if let Some(key) = pointer::child(&ext.pointer, &format!("{INNER}/payload")) {
            map.insert(key, ext.value.clone());
        }
    }
    Value::Object(map)
}

/// The `{payload, meta}` document of block 1 as compact JS-dialect JSON, and its tool.
fn inner_json(
    env: &Envelope,
    options: &EncodeOptions,
    losses: &mut LossReport,
) -> (Vec<u8>, String) {
    let own = env.extensions_of(FormatId::ToolEnvelopeV1);
    let error_payload_value;
    let payload = match (&env.error, env.status) {
        (Some(error), Status::Error) => {
            error_payload_value = error_payload(env, error);
            std::borrow::Cow::Borrowed(&error_payload_value)
        }
        _ => payload_json(env, FormatId::ToolEnvelopeV1, losses),
    };
    // An error result's meta.tool is "mcp" (the reference's McpErrorPayload results, and
    // the format's rule): the envelope's own tool name goes to the loss report.
    let is_error = env.status == Status::Error && env.error.is_some();
    let named = env.tool.clone().or_else(|| env.command.clone());
    let tool = match named {
        Some(name) if is_error && name != "mcp" => {
            losses.push(
                if env.tool.is_some() {
                    "tool"
                } else {
                    "command"
                },
                format!(
                    "tool-envelope-v1 error results name the tool \"mcp\": {name:?} is not written"
                ),
            );
            "mcp".to_string()
        }
        Some(name) => name,
        None if is_error => "mcp".into(),
        None => "unknown".into(),
    };
    let mut meta = Map::new();
    meta.insert("tool".into(), json!(tool));
    meta.insert("ts".into(), json!(timestamp_text(env, options, true)));
    let version = own
        .iter()
        .find(|e| e.pointer == format!("{INNER}/meta/version"))
        .map_or(json!(1), |e| e.value.clone());
    meta.insert("version".into(), version);
    // Keys the typed fields write in `meta` (`version` is written from its extension).
    let artifact = env.artifact.as_ref().map(|a| json!(a.digest));
    let budget = crate::formats::truncation(env)
        .map(|budget| crate::formats::budget_marker_value(budget, Dialect::Js));
    let typed = |key: &str| match key {
        "tool" | "ts" => true,
        "artifact" => artifact.is_some(),
        "budget" => budget.is_some(),
        _ => false,
    };
    for ext in own {
        if let Some(key) = pointer::child(&ext.pointer, &format!("{INNER}/meta")) {
            // `deprecations` follows `version` only when non-empty.
            if key == "deprecations" && ext.value.as_array().is_some_and(Vec::is_empty) {
                continue;
            }
            // The typed field wins: an earlier shaping's `artifact` or `budget` is replaced.
            if typed(&key) {
                superseded(losses, &ext.pointer, &key);
                continue;
            }
            meta.insert(key, ext.value.clone());
        }
    }
    if let Some(artifact) = artifact {
        meta.insert("artifact".into(), artifact);
    }
    if let Some(budget) = budget {
        meta.insert("budget".into(), budget);
    }
    // Written member by member so the payload is serialized in place, never copied.
    let mut out = Vec::new();
    let mut w = JsonWriter::new(&mut out, Dialect::Js);
    w.begin_object();
    w.field("payload", &payload);
    w.field("meta", &Value::Object(meta));
    for ext in own {
        if let Some(key) = pointer::child(&ext.pointer, INNER) {
            if key == "payload" || key == "meta" {
                superseded(losses, &ext.pointer, &key);
                continue;
            }
            w.field(&key, &ext.value);
        }
    }
    w.end_object();
    (out, tool)
}

/// Reports the extension at `pointer`, dropped because the encoder writes `key` there
/// itself: a key is never written twice, and the typed field wins.
fn superseded(losses: &mut LossReport, pointer: &str, key: &str) {
    losses.push(
        pointer,
        format!("tool-envelope-v1 writes {key:?} itself: the extension is dropped"),
    );
}

/// A text block with the extra members the decoded block had (annotations, `_meta`).
fn write_block(
    w: &mut JsonWriter<'_>,
    text: &str,
    own: &[crate::model::Extension],
    at: &str,
    losses: &mut LossReport,
) {
    w.begin_object();
    w.key("type");
    w.string("text");
    w.key("text");
    w.string(text);
    for ext in own {
        if let Some(key) = pointer::child(&ext.pointer, at) {
            if key == "type" || key == "text" {
                superseded(losses, &ext.pointer, &key);
                continue;
            }
            w.field(&key, &ext.value);
        }
    }
    w.end_object();
}

/// The inner JSON document [`encode`] writes for `env` (in base64 in the envelope block).
pub(crate) fn inner_document(env: &Envelope, options: &EncodeOptions) -> Vec<u8> {
    inner_json(env, options, &mut LossReport::default()).0
}

/// The envelope block text: `__ENVELOPE_V1__:` + base64 of the inner JSON.
pub(crate) fn block_text(inner_json: &[u8]) -> String {
    let mut text = String::with_capacity(PREFIX.len() + inner_json.len().div_ceil(3) * 4);
    text.push_str(PREFIX);
    crate::base64::encode_into(inner_json, &mut text);
    text
}

/// Encodes `env` as an MCP result with a summary block and an envelope block (JS
/// dialect), adding to `losses` what it cannot hold.
pub(crate) fn encode(
    env: &Envelope,
    options: &EncodeOptions,
    losses: &mut LossReport,
) -> Result<Vec<u8>> {
    report_unheld(
        env,
        FormatId::ToolEnvelopeV1,
        &[
            Field::Summary,
            Field::Tool,
            Field::Timestamp,
            Field::Artifact,
            Field::ErrorCategory,
            Field::ErrorCode,
            Field::ErrorDetails,
            Field::ErrorRecoverable,
            Field::ErrorSuggestedAction,
            Field::ErrorNextTool,
        ],
        losses,
    );
    if env.tool.is_none() && env.command.is_some() {
        losses.items.retain(|l| l.field != "command");
    }
    let is_error = env.status == Status::Error && env.error.is_some();
    let (inner, tool) = inner_json(env, options, losses);
    let summary = match (&env.summary, &env.error) {
        // An error's block 0 is its rendering (the format's rule): a summary of its own
        // is reported lost.
        (summary, Some(error)) if is_error => {
            if summary.is_some() {
                losses.push(
                    "summary",
                    "block 0 of a tool-envelope-v1 error is the rendering of the error",
                );
            }
            render_error(error)
        }
        (Some(s), _) => s.clone(),
        (None, _) => format!("Result of `{tool}`"),
    };
    // A cut payload says so in the summary too, where a reader of block 0 sees it (not in
    // an error's, which is its rendering: the hint stays in the inner meta's budget).
    let summary = match crate::formats::truncation(env).and_then(|b| b.hint.as_ref()) {
        Some(hint) if !is_error => format!("{summary}\n\n{hint}"),
        _ => summary,
    };
    let own = env.extensions_of(FormatId::ToolEnvelopeV1);

    let mut out = Vec::new();
    let mut w = JsonWriter::new(&mut out, Dialect::Js);
    w.begin_object();
    w.key("content");
    w.begin_array();
    match own.iter().find(|e| e.pointer == "/content/0") {
        Some(block0) => w.value(&block0.value),
        None => write_block(&mut w, &summary, own, "/content/0", losses),
    }
    write_block(&mut w, &block_text(&inner), own, "/content/1", losses);
    for ext in own {
        if ext
            .pointer
            .strip_prefix("/content/")
            .is_some_and(|i| i.parse::<usize>().is_ok_and(|i| i >= 2))
        {
            w.value(&ext.value);
        }
    }
    w.end_array();
    let mut written = vec!["content"];
    if options.dual_emit || env.layout.dual_emit {
        w.key("structuredContent");
        w.raw(&inner);
        written.push("structuredContent");
    }
    if is_error {
        w.field("isError", &Value::Bool(true));
        written.push("isError");
    }
    // The typed members win over extensions of the same name (an `isError: false` kept
    // from an ok result that is now an error, a `structuredContent` of its own under
    // dual emit), which are reported as lost.
    let mut extra: Vec<String> = Vec::new();
    for ext in own {
        if let Some(key) = pointer::child(&ext.pointer, "") {
            if written.contains(&key.as_str()) || extra.contains(&key) {
                superseded(losses, &ext.pointer, &key);
                continue;
            }
            w.field(&key, &ext.value);
            extra.push(key);
        }
    }
    w.end_object();
    Ok(out)
}
