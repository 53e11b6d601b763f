//! `tool-result-envelope`: the payload under a root key (default `result`) and metadata under
//! the reserved root key `__envelope`, written by Newtonsoft.Json with nulls written out.

use std::borrow::Cow;

use serde_json::{Map, Value, json};

use crate::error::{Error, Result};
use crate::formats::{EncodeOptions, Field, FormatId, LossReport, payload_json, report_unheld};
use crate::json::{Dialect, JsonWriter, pointer};
use crate::model::{ContentType, Envelope, Payload, Timestamp};

const FORMAT: &str = "tool-result-envelope";
/// The reserved root key.
pub(crate) const RESERVED: &str = "__envelope";
/// The default payload key.
pub(crate) const DEFAULT_PAYLOAD_PATH: &str = "result";
/// The default `compat` keys.
pub(crate) const DEFAULT_COMPAT: [&str; 3] = ["result", "list", "items"];
/// `__envelope` keys in the order the reference writes them.
pub(crate) const FIELDS: [&str; 11] = [
    "version",
    "tool",
    "provider",
    "model",
    "toolCallId",
    "contentType",
    "payloadPath",
    "schemaRef",
    "compat",
    "createdUtc",
    "tags",
];

/// Reads `contentType`: an integer, a name in any case, or a numeric string.
pub(crate) fn parse_content_type(v: &Value) -> Option<ContentType> {
    match v {
        Value::Number(n) => n.as_i64().map(ContentType::from_code),
        Value::String(s) => ContentType::parse(s),
        _ => None,
    }
}

/// Decodes a parsed tool-result-envelope document.
pub(crate) fn decode(value: Value) -> Result<Envelope> {
    let root = value
        .as_object()
        .ok_or_else(|| Error::wrong_type(FORMAT, "", "a JSON object"))?;
    let meta = root
        .get(RESERVED)
        .ok_or_else(|| {
            Error::not_envelope(FORMAT, "/__envelope", "no reserved \"__envelope\" key")
        })?
        .as_object()
        .ok_or_else(|| Error::wrong_type(FORMAT, "/__envelope", "an object"))?;
    let mut env = Envelope::default();

    // Property names match case-insensitively, as Newtonsoft's deserializer does.
    let get = |name: &str| {
        meta.iter()
            .find(|(k, _)| k.as_str() == name)
            .or_else(|| meta.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)))
            .map(|(_, v)| v)
    };
    let text = |name: &str| -> Result<Option<String>> {
        match get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(Error::wrong_type(
                FORMAT,
                &pointer::join("/__envelope", name),
                "a string",
            )),
        }
    };
    env.tool = text("tool")?;
    env.provider = text("provider")?;
    env.model = text("model")?;
    env.tool_call_id = text("toolCallId")?;
    env.timestamp = text("createdUtc")?.map(Timestamp::Text);
    env.content_type = match get("contentType") {
        None | Some(Value::Null) => None,
        Some(v) => Some(parse_content_type(v).ok_or_else(|| {
            Error::wrong_type(
                FORMAT,
                "/__envelope/contentType",
                "an integer or a content type name",
            )
        })?),
    };
    let payload_path = match get("payloadPath") {
        Some(Value::String(s)) => Some(s.clone()),
        _ => None,
    };
    let compat: Vec<String> = match get("compat") {
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect(),
        _ => DEFAULT_COMPAT.iter().map(|s| s.to_string()).collect(),
    };
    for (key, v) in meta {
        let canonical = FIELDS.iter().find(|f| f.eq_ignore_ascii_case(key));
        let keep = match canonical.copied() {
            Some("tool" | "provider" | "model" | "toolCallId" | "createdUtc" | "contentType") => {
                false
            }
            Some("version") => *v != json!("1"),
            Some("payloadPath") => payload_path.is_none(),
            Some("schemaRef") => !v.is_null(),
            Some("compat") => *v != json!(DEFAULT_COMPAT),
            Some("tags") => *v != json!([]),
            _ => true,
        };
        if keep {
            let name = canonical.copied().unwrap_or(key);
            env.push_extension(pointer::join("/__envelope", name), v.clone());
        }
    }
    // A key the document lacks is not remembered: the reference reads it as its default
    // and writes that default, and so do we (`"schemaRef":null`, the default `compat`,
    // `"tags":[]`), whatever the source format.

    // Payload lookup: payloadPath (a literal key), then the compat keys, else the root.
    let payload_key = payload_path
        .iter()
        .chain(compat.iter())
        .find(|k| k.as_str() != RESERVED && root.contains_key(k.as_str()))
        .cloned();
    let key_order: Vec<String> = root.keys().cloned().collect();
    // The document is consumed: the payload (and the rest of the root) move, not copy.
    let Value::Object(root) = value else {
        unreachable!("checked to be an object above")
    };
    let len = root.len();
    let mut rest = Map::new();
    for (i, (key, v)) in root.into_iter().enumerate() {
        if key == RESERVED {
            if i + 1 != len {
                env.layout.reserved_key_index = Some(i);
            }
            continue;
        }
        match &payload_key {
            Some(p) if *p == key => env.payload = Payload::Json(v),
            Some(_) => env.push_extension(pointer::join("", &key), v),
            None => {
                rest.insert(key, v);
            }
        }
    }
    if payload_key.is_none() {
        env.payload = Payload::Json(Value::Object(rest));
    }
    env.layout.key_order = Some(key_order);
    env.layout.payload_key = payload_key;
    Ok(env)
}

/// The `createdUtc` text the reference writes for a timestamp: RFC 3339 text (any offset)
/// becomes `yyyy-MM-ddTHH:mm:ss[.fffffff]Z` in UTC (at most seven fraction digits, trailing
/// zeros trimmed, the fraction omitted when zero); text that is not RFC 3339 is returned as
/// given.
///
/// ```
/// use envelope::formats::tool_result_envelope::created_utc;
///
/// assert_eq!(created_utc("2026-01-02T05:04:05.1230+02:00"), "2026-01-02T03:04:05.123Z");
/// assert_eq!(created_utc("2026-01-02T03:04:05.000Z"), "2026-01-02T03:04:05Z");
/// assert_eq!(created_utc("yesterday"), "yesterday");
/// ```
pub fn created_utc(text: &str) -> String {
    match crate::time::parse_rfc3339(text) {
        Some(t) => crate::time::rfc3339_trimmed(t, 7),
        None => text.to_string(),
    }
}

/// Encodes `env` as tool-result-envelope (Newtonsoft dialect), adding to `losses` what it
/// cannot hold.
pub(crate) fn encode(
    env: &Envelope,
    options: &EncodeOptions,
    losses: &mut LossReport,
) -> Result<Vec<u8>> {
    report_unheld(
        env,
        FormatId::ToolResultEnvelope,
        &[
            Field::Tool,
            Field::Provider,
            Field::Model,
            Field::ToolCallId,
            Field::ContentType,
            Field::Timestamp,
            Field::Artifact,
        ],
        losses,
    );
    if env.status == crate::model::Status::Error && env.error.is_some() {
        losses.push(
            "status",
            "tool-result-envelope has no error status: the error is written under the payload key",
        );
    }
    let own = env.extensions_of(FormatId::ToolResultEnvelope);
    let ext = |p: &str| own.iter().find(|e| e.pointer == p).map(|e| &e.value);
    let same_origin = env.origin == Some(FormatId::ToolResultEnvelope);
    // A payload spread over the root (no key) only round-trips from this format.
    let payload_key = match (&env.layout.payload_key, same_origin) {
        (Some(k), _) => Some(k.clone()),
        (None, true) => None,
        (None, false) => Some(DEFAULT_PAYLOAD_PATH.to_string()),
    };
    let payload = match (&env.error, env.status) {
        (Some(error), crate::model::Status::Error) => {
            Cow::Owned(crate::formats::operations::error_object(error))
        }
        _ => payload_json(env, FormatId::ToolResultEnvelope, losses),
    };

    let mut meta = Map::new();
    let timestamp = match &env.timestamp {
        Some(Timestamp::Text(t)) => Value::String(created_utc(t)),
        Some(Timestamp::EpochMillis(_)) | None => {
            let text = crate::formats::timestamp_text(env, options, false);
            Value::String(created_utc(&text))
        }
    };
    let string_or_null = |s: &Option<String>| s.clone().map_or(Value::Null, Value::String);
    // Every field, as the reference writes its type: a default where the envelope has none.
    for field in FIELDS {
        let value = match field {
            "version" => ext("/__envelope/version").cloned().unwrap_or(json!("1")),
            "tool" => string_or_null(&env.tool),
            "provider" => string_or_null(&env.provider),
            "model" => string_or_null(&env.model),
            "toolCallId" => string_or_null(&env.tool_call_id),
            "contentType" => json!(env.content_type.unwrap_or(ContentType::Unknown).code()),
            "payloadPath" => ext("/__envelope/payloadPath")
                .cloned()
                .unwrap_or_else(|| json!(payload_key.as_deref().unwrap_or(DEFAULT_PAYLOAD_PATH))),
            "schemaRef" => ext("/__envelope/schemaRef").cloned().unwrap_or(Value::Null),
            "compat" => ext("/__envelope/compat")
                .cloned()
                .unwrap_or(json!(DEFAULT_COMPAT)),
            "createdUtc" => timestamp.clone(),
            _ => ext("/__envelope/tags").cloned().unwrap_or(json!([])),
        };
        meta.insert(field.to_string(), value);
    }
    for e in own {
        if let Some(key) = e.pointer.strip_prefix("/__envelope/")
            && !FIELDS.contains(&key)
        {
            meta.insert(pointer::unescape(key), e.value.clone());
        }
    }
    let mut replaced = Vec::new();
    if let Some(artifact) = &env.artifact
        && meta
            .insert("artifact".into(), json!(artifact.digest))
            .is_some()
    {
        replaced.push("/__envelope/artifact");
    }
    if let Some(budget) = crate::formats::truncation(env)
        && meta
            .insert(
                "budget".into(),
                crate::formats::budget_marker_value(budget, Dialect::Newtonsoft),
            )
            .is_some()
    {
        replaced.push("/__envelope/budget");
    }
    for field in replaced {
        losses.push(field, "an earlier shaping's, replaced by this one");
    }

    // Root members: the payload (under its key, or spread at the root), the other keys,
    // and `__envelope` at its position (last unless the document had it elsewhere).
    let mut members: Vec<(String, Cow<'_, Value>)> = Vec::new();
    match (&payload_key, payload) {
        (None, Cow::Borrowed(Value::Object(map))) => {
            members.extend(map.iter().map(|(k, v)| (k.clone(), Cow::Borrowed(v))));
        }
        (None, Cow::Owned(Value::Object(map))) => {
            members.extend(map.into_iter().map(|(k, v)| (k, Cow::Owned(v))));
        }
        (Some(k), p) => members.push((k.clone(), p)),
        (None, other) => members.push((DEFAULT_PAYLOAD_PATH.into(), other)),
    }
    // An extension never writes a root member a second time (only an envelope built in
    // code has such extensions: the decoder keeps payload members in the payload).
    for e in own {
        if let Some(key) = pointer::child(&e.pointer, "") {
            if key == RESERVED || members.iter().any(|(k, _)| *k == key) {
                losses.push(
                    e.pointer.clone(),
                    format!("tool-result-envelope writes {key:?} itself: the extension is dropped"),
                );
                continue;
            }
            members.push((key, Cow::Borrowed(&e.value)));
        }
    }
    let envelope_at = env
        .layout
        .reserved_key_index
        .filter(|_| same_origin)
        .unwrap_or(members.len());
    members.insert(
        envelope_at.min(members.len()),
        (RESERVED.into(), Cow::Owned(Value::Object(meta))),
    );
    if let (true, Some(order)) = (same_origin, &env.layout.key_order) {
        members.sort_by_key(|(k, _)| order.iter().position(|o| o == k).unwrap_or(usize::MAX));
    }

    let mut out = Vec::new();
    let mut w = JsonWriter::new(&mut out, Dialect::Newtonsoft);
    if options.indented {
        w = w.indented("  ");
    }
    w.begin_object();
    for (k, v) in &members {
        w.field(k, v);
    }
    w.end_object();
    Ok(out)
}
