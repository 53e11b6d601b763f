//! Which format a document is in, and why we think so.

use serde_json::Value;

use crate::error::{Error, Result};
use crate::formats::{FormatId, operations, tool_envelope_v1};

/// A detected format and the evidence for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Detection {
    pub format: FormatId,
    pub reason: String,
}

fn found(format: FormatId, reason: impl Into<String>) -> Result<Detection> {
    Ok(Detection {
        format,
        reason: reason.into(),
    })
}

/// Detects the format of raw input (JSON, or a bare tool-envelope-v1 block).
pub fn detect(input: &[u8]) -> Result<Detection> {
    if input.starts_with(b"__ENVELOPE_V") {
        return found(
            FormatId::ToolEnvelopeV1,
            "the input is a bare __ENVELOPE_V…__: block",
        );
    }
    let value = crate::json::from_slice(input)?;
    detect_value(&value)
}

use crate::formats::ctxo::is_ctxo_meta;

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Detects the format of a parsed document.
pub fn detect_value(value: &Value) -> Result<Detection> {
    let Some(obj) = value.as_object() else {
        return Err(Error::Undetected(format!(
            "a JSON {} at the root; every envelope format is an object",
            kind_of(value)
        )));
    };
    if obj.get("__envelope").is_some_and(Value::is_object) {
        return found(
            FormatId::ToolResultEnvelope,
            "root key \"__envelope\" holds an object",
        );
    }
    // Checked before `content`: a ctxo payload may have a `content` array of its own.
    if obj.get("_meta").is_some_and(is_ctxo_meta) {
        return found(FormatId::Ctxo, "a \"_meta\" object with ctxo budget fields");
    }
    if let Some(content) = obj.get("content").and_then(Value::as_array) {
        let mut texts = content.iter().enumerate().filter_map(|(i, b)| {
            (b.get("type").and_then(Value::as_str) == Some("text"))
                .then(|| b.get("text").and_then(Value::as_str).map(|t| (i, t)))
                .flatten()
        });
        for (i, text) in texts.clone() {
            if text.starts_with("__ENVELOPE_V") && tool_envelope_v1::split_prefix(text).is_some() {
                return found(
                    FormatId::ToolEnvelopeV1,
                    format!("text block {i} starts with an __ENVELOPE_V…__: prefix"),
                );
            }
        }
        if let Some((i, text)) = texts.next_back()
            && text.trim_start().starts_with('{')
            && let Ok(doc) = serde_json::from_str::<Value>(text)
            && doc.get("_meta").is_some_and(is_ctxo_meta)
        {
            return found(
                FormatId::Ctxo,
                format!("the last text block ({i}) holds a document with a ctxo \"_meta\""),
            );
        }
        return found(FormatId::Mcp, "a \"content\" array of MCP content blocks");
    }
    if obj.contains_key("version") && obj.contains_key("status") && obj.contains_key("command") {
        return found(
            FormatId::ProtocolV1,
            "root keys \"version\", \"status\" and \"command\"",
        );
    }
    if operations::is_response_envelope(value) {
        return found(
            FormatId::Operations,
            format!(
                "\"data\" and \"meta\" with meta.source {}",
                obj["meta"]["source"]
            ),
        );
    }
    if obj.get("found") == Some(&Value::Bool(false)) {
        return found(
            FormatId::Ctxo,
            "a ctxo graceful miss ({\"found\": false, …})",
        );
    }
    if obj.get("error") == Some(&Value::Bool(true))
        && obj.get("message").is_some_and(Value::is_string)
    {
        return found(
            FormatId::Ctxo,
            "a ctxo error ({\"error\": true, \"message\": …})",
        );
    }
    Err(Error::Undetected(
        "an object without the marks of any format (no \"__envelope\", \"content\", \"version\"+\"status\"+\"command\", \"data\"+\"meta\" or ctxo \"_meta\")".into(),
    ))
}
