//! `operations`: `{data, meta}` with `meta.source` one of `local`, `http`, `mcp`.

use std::borrow::Cow;

use serde_json::{Map, Value, json};

use crate::error::{Error, Result};
use crate::formats::{
    EncodeOptions, Field, FormatId, LossReport, mcp, payload_json, report_unheld,
};
use crate::json::{Dialect, JsonWriter, pointer};
use crate::model::error::{Category, EnvelopeError};
use crate::model::{Envelope, JsonText, Payload, Source, Status, Timestamp};

const FORMAT: &str = "operations";
/// The closed set of `meta.source` values.
pub(crate) const SOURCES: [&str; 3] = ["local", "http", "mcp"];

/// The seed's `isResponseEnvelope`: whether `value` is an object with a `data` key and a
/// `meta.source` of `local`, `http` or `mcp` (a closed set: any other source is not an
/// operations envelope). Only the keys are looked at: `data` may be `null`.
///
/// ```
/// use envelope::formats::operations::is_response_envelope;
/// use serde_json::json;
///
/// assert!(is_response_envelope(&json!({"data": null, "meta": {"source": "http"}})));
/// assert!(!is_response_envelope(&json!({"data": 1, "meta": {"source": "ftp"}})));
/// assert!(!is_response_envelope(&json!({"meta": {"source": "local"}})));
/// ```
pub fn is_response_envelope(value: &Value) -> bool {
    let Some(obj) = value.as_object() else {
        return false;
    };
    obj.contains_key("data")
        && obj
            .get("meta")
            .and_then(|m| m.get("source"))
            .and_then(Value::as_str)
            .is_some_and(|s| SOURCES.contains(&s))
}

/// Decodes a parsed `{data, meta}` document.
pub(crate) fn decode(value: Value) -> Result<Envelope> {
    decode_parts(value, None)
}

/// Decodes a `{data, meta}` document of an MCP source whose `meta._meta` may have been read
/// as text ([`meta_text`](crate::formats::meta_text)): `result_meta`, `null` in its place;
/// `None`: `meta` holds `_meta` if it has one.
pub(crate) fn decode_parts(mut value: Value, result_meta: Option<JsonText>) -> Result<Envelope> {
    // The large parts move into the envelope instead of being copied.
    let mut data = value
        .as_object_mut()
        .and_then(|m| m.get_mut("data"))
        .map(std::mem::take);
    let content = value.pointer_mut("/meta/content").map(std::mem::take);
    let root = value
        .as_object()
        .ok_or_else(|| Error::wrong_type(FORMAT, "", "a {data, meta} object"))?;
    let meta = root
        .get("meta")
        .ok_or_else(|| Error::missing(FORMAT, "/meta"))?
        .as_object()
        .ok_or_else(|| Error::wrong_type(FORMAT, "/meta", "an object"))?;
    let source = meta
        .get("source")
        .and_then(Value::as_str)
        .filter(|s| SOURCES.contains(s))
        .ok_or_else(|| {
            Error::not_envelope(
                FORMAT,
                "/meta/source",
                "meta.source must be \"local\", \"http\" or \"mcp\"",
            )
        })?;

    let mut env = Envelope::default();
    let known: &[&str] = match source {
        "local" => {
            let operation_id = crate::formats::opt_str(FORMAT, meta, "operationId", "/meta")?;
            // The operation id names what ran: it is the tool of other formats too.
            env.tool = operation_id.clone().filter(|id| !id.is_empty());
            env.source = Some(Source::Local { operation_id });
            env.timestamp = match meta.get("timestamp") {
                None | Some(Value::Null) => None,
                Some(Value::Number(n)) => Some(Timestamp::EpochMillis(n.clone())),
                Some(_) => {
                    return Err(Error::wrong_type(
                        FORMAT,
                        "/meta/timestamp",
                        "epoch milliseconds",
                    ));
                }
            };
            &["source", "operationId", "timestamp"]
        }
        "http" => {
            let headers = match meta.get("headers") {
                None => Map::new(),
                Some(Value::Object(h)) => h.clone(),
                Some(_) => return Err(Error::wrong_type(FORMAT, "/meta/headers", "an object")),
            };
            env.source = Some(Source::Http {
                status_code: match meta.get("statusCode") {
                    None => None,
                    Some(Value::Number(n)) => Some(n.clone()),
                    Some(_) => {
                        return Err(Error::wrong_type(FORMAT, "/meta/statusCode", "a number"));
                    }
                },
                headers,
                content_type: crate::formats::opt_str(FORMAT, meta, "contentType", "/meta")?,
            });
            &["source", "statusCode", "headers", "contentType"]
        }
        _ => {
            let is_error = match meta.get("isError") {
                None => false,
                Some(Value::Bool(b)) => *b,
                Some(_) => return Err(Error::wrong_type(FORMAT, "/meta/isError", "a boolean")),
            };
            let content = match content {
                None => None,
                Some(Value::Array(blocks)) => Some(blocks),
                Some(_) => {
                    return Err(Error::wrong_type(
                        FORMAT,
                        "/meta/content",
                        "an array of content blocks",
                    ));
                }
            };
            env.source = Some(Source::Mcp {
                result_meta: result_meta.or_else(|| meta.get("_meta").map(JsonText::from_value)),
            });
            let structured = meta.get("structuredContent");
            if let Some(sc) = structured {
                if data.as_ref() == Some(sc) {
                    env.layout.structured_mirror = true;
                } else {
                    env.push_extension("/meta/structuredContent".into(), sc.clone());
                }
            }
            if is_error {
                env.status = Status::Error;
                let message = content
                    .as_deref()
                    .map(mcp::text_of_blocks)
                    .unwrap_or_default();
                env.error = Some(EnvelopeError::new(Category::Execution, message));
            }
            // Without structured output the content blocks are the data itself.
            if structured.is_none()
                && data
                    .as_ref()
                    .is_some_and(|d| d.as_array() == content.as_ref())
                && let Some(blocks) = content
            {
                data = None;
                env.payload = Payload::Blocks(blocks);
            } else {
                env.presentation = content;
            }
            &["source", "isError", "content", "structuredContent", "_meta"]
        }
    };
    if let Some(d) = data {
        env.payload = Payload::Json(d);
    }
    for (key, v) in meta {
        if !known.contains(&key.as_str()) {
            env.push_extension(pointer::join("/meta", key), v.clone());
        }
    }
    for (key, v) in root {
        if key != "data" && key != "meta" {
            env.push_extension(pointer::join("", key), v.clone());
        }
    }
    Ok(env)
}

fn epoch_millis(env: &Envelope, options: &EncodeOptions, losses: &mut LossReport) -> Value {
    match &env.timestamp {
        Some(Timestamp::EpochMillis(n)) => Value::Number(n.clone()),
        Some(Timestamp::Text(t)) => match crate::time::rfc3339_to_epoch_millis(t) {
            Some(ms) => json!(ms),
            None => {
                losses.push(
                    "timestamp",
                    format!(
                        "{t:?} is not RFC 3339: operations needs epoch milliseconds; 0 written"
                    ),
                );
                json!(0)
            }
        },
        None => {
            let now = options
                .now
                .clone()
                .unwrap_or_else(|| crate::time::now_rfc3339(true));
            json!(crate::time::rfc3339_to_epoch_millis(&now).unwrap_or(0))
        }
    }
}

/// Encodes `env` as `{data, meta}` (JS dialect), adding to `losses` what it cannot hold.
pub(crate) fn encode(
    env: &Envelope,
    options: &EncodeOptions,
    losses: &mut LossReport,
) -> Result<Vec<u8>> {
    let default_source = Source::Local { operation_id: None };
    let source = env.source.as_ref().unwrap_or(&default_source);
    let mut held = vec![Field::Source];
    let is_error = env.status == Status::Error;
    let mut data =
        (!env.payload.is_none()).then(|| payload_json(env, FormatId::Operations, losses));
    if is_error
        && !matches!(source, Source::Mcp { .. })
        && let Some(error) = &env.error
    {
        losses.push(
            "status",
            "operations has no error status for local or http sources: the error is written as data.error",
        );
        let mut map = match data.take().map(Cow::into_owned) {
            Some(Value::Object(m)) => m,
            Some(other) => Map::from_iter([("result".to_string(), other)]),
            None => Map::new(),
        };
        if map.insert("error".into(), error_object(error)).is_some() {
            losses.push(
                "payload/error",
                "the payload's own \"error\" is replaced by the envelope's error",
            );
        }
        data = Some(Cow::Owned(Value::Object(map)));
        held.extend(Field::ERROR);
    }

    // The keys written from the typed fields, root and `meta`: an extension of the same
    // name is dropped (and reported) instead of being written a second time.
    let mut root_keys: Vec<String> = vec!["meta".into(), "data".into()];
    let mut meta_keys: Vec<String> = vec!["source".into()];

    let mut out = Vec::new();
    let mut w = JsonWriter::new(&mut out, Dialect::Js);
    w.begin_object();
    // `data` is what makes `{data, meta}` an operations envelope (`isResponseEnvelope`):
    // without a payload (an MCP error result, a progress event, a document read without
    // one) it is `null`, so that the output is detected and read back.
    w.field("data", data.as_deref().unwrap_or(&Value::Null));
    // `meta` in the key order of the seed's factories (`{source, ...meta}`).
    w.key("meta");
    w.begin_object();
    w.key("source");
    w.string(source.kind());
    match source {
        Source::Local { operation_id } => {
            held.push(Field::Timestamp);
            let id = operation_id
                .as_ref()
                .or(env.tool.as_ref())
                .or(env.command.as_ref());
            if env.tool.is_some() && env.tool.as_ref() == id {
                held.push(Field::Tool);
            } else if env.tool.is_none() && env.command.is_some() && env.command.as_ref() == id {
                held.push(Field::Command);
            }
            w.key("operationId");
            w.string(id.map_or("", String::as_str));
            w.field("timestamp", &epoch_millis(env, options, losses));
            meta_keys.extend(["operationId", "timestamp"].map(String::from));
        }
        Source::Http {
            status_code,
            headers,
            content_type,
        } => {
            w.key("statusCode");
            w.number(status_code.as_ref().unwrap_or(&200.into()));
            w.key("headers");
            w.object(headers);
            w.key("contentType");
            w.string(content_type.as_deref().unwrap_or(""));
            meta_keys.extend(["statusCode", "headers", "contentType"].map(String::from));
        }
        Source::Mcp { result_meta } => {
            held.extend([Field::Presentation, Field::Summary]);
            if is_error {
                held.push(Field::ErrorCategory);
            }
            w.field("isError", &Value::Bool(is_error));
            let rendered;
            let content: &[Value] = match (&env.presentation, &env.payload) {
                (Some(blocks), _) => blocks,
                (None, Payload::Blocks(blocks)) => blocks,
                (None, _) => {
                    rendered = mcp::content_for(env, losses);
                    &rendered
                }
            };
            w.key("content");
            w.begin_array();
            for block in content {
                w.value(block);
            }
            w.end_array();
            meta_keys.extend(["isError", "content"].map(String::from));
            // A `structuredContent` that differs from `data` is kept as an extension and
            // written here, in its place.
            let structured = env
                .extension("/meta/structuredContent")
                .filter(|_| env.origin == Some(FormatId::Operations))
                .or(match &env.payload {
                    Payload::Json(v @ Value::Object(_)) => Some(v),
                    _ => None,
                });
            if let Some(sc) = structured {
                w.field("structuredContent", sc);
                meta_keys.push("structuredContent".into());
            }
            if let Some(m) = result_meta {
                w.key("_meta");
                w.raw(m.as_str().as_bytes());
                meta_keys.push("_meta".into());
            }
        }
    }
    if let Some(artifact) = &env.artifact {
        held.push(Field::Artifact);
        w.key("artifact");
        w.string(&artifact.digest);
        meta_keys.push("artifact".into());
    }
    if let Some(budget) = crate::formats::truncation(env) {
        w.key("budget");
        crate::formats::write_budget_marker(&mut w, budget);
        meta_keys.push("budget".into());
    }
    // Extensions never write a key a second time: the member written from the typed
    // fields wins, and the extension is reported as lost (an earlier shaping's `artifact`
    // or `budget`, say, replaced by this one's).
    let own = env.extensions_of(FormatId::Operations);
    for ext in own {
        if let Some(key) = pointer::child(&ext.pointer, "/meta") {
            write_unless_written(&mut w, &mut meta_keys, key, ext, losses);
        }
    }
    w.end_object();
    for ext in own {
        if let Some(key) = pointer::child(&ext.pointer, "") {
            write_unless_written(&mut w, &mut root_keys, key, ext, losses);
        }
    }
    w.end_object();

    report_unheld(env, FormatId::Operations, &held, losses);
    Ok(out)
}

/// Writes the extension `ext` as the member `key`, unless `written` (the keys of the object
/// so far) has it: then it is reported in `losses`, since the typed field already wrote it.
fn write_unless_written(
    w: &mut JsonWriter<'_>,
    written: &mut Vec<String>,
    key: String,
    ext: &crate::model::Extension,
    losses: &mut LossReport,
) {
    if written.contains(&key) {
        // The structured content that differs from `data` was written in its place.
        if ext.pointer != "/meta/structuredContent" {
            losses.push(
                ext.pointer.clone(),
                format!("operations writes {key:?} itself: the extension is dropped"),
            );
        }
        return;
    }
    w.field(&key, &ext.value);
    written.push(key);
}

/// The error as a JSON object, for formats without an error slot (operations `data.error`,
/// tool-result-envelope's payload): `category`, `code` when set, `message`, `details` when
/// set, `recoverable` (always, as [`EnvelopeError::is_recoverable`] says), then
/// `suggestedAction`, `nextTool` and `hint` when set.
///
/// ```
/// use envelope::formats::operations::error_object;
/// use envelope::EnvelopeError;
/// use serde_json::json;
///
/// let e = EnvelopeError::from_code("ENOTFOUND", "no such file");
/// assert_eq!(
///     error_object(&e),
///     json!({"category": "not_found", "code": "ENOTFOUND", "message": "no such file", "recoverable": false})
/// );
/// ```
pub fn error_object(error: &EnvelopeError) -> Value {
    let mut map = Map::new();
    map.insert("category".into(), json!(error.category.as_str()));
    if let Some(code) = &error.code {
        map.insert("code".into(), json!(code));
    }
    map.insert("message".into(), json!(error.message));
    if let Some(d) = &error.details {
        map.insert("details".into(), d.clone());
    }
    map.insert("recoverable".into(), json!(error.is_recoverable()));
    if let Some(s) = &error.suggested_action {
        map.insert("suggestedAction".into(), json!(s));
    }
    if let Some(t) = &error.next_tool {
        map.insert("nextTool".into(), json!(t));
    }
    if let Some(h) = &error.hint {
        map.insert("hint".into(), json!(h));
    }
    Value::Object(map)
}
