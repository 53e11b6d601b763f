//! STAND-IN, REPLACED AT MERGE. The relay calls shaping (branch h/shaping), drill and
//! policy (branch h/drill) through the functions below, which have the signatures of the
//! contracts (`shaping::shape_result`, `shaping::advertised_tool`, `drill::read_tool`,
//! `drill::call_read`, `drill::read_resource`, `drill::resource_template`, and the
//! per-tool settings of `policy::Policy::for_tool`). When those branches are merged, this
//! file goes and the `use` lines in `session.rs` point at the real modules.
//!
//! What the stand-ins do: a result within the limit, or of a tool with an `outputSchema`,
//! passes through unchanged (no redaction); a bigger one is stored as the upstream wrote it
//! and replaced by a note with the artifact URI (a `resource_link` from 2025-06-18 on), with
//! none of the payload kept. The drill reads return the stored bytes whole (cut to the
//! limit). The tool settings are the command line's.

use envelope_store::{Digest, Store};
use serde_json::{Value, json};

use crate::config::Config;
use crate::drill::{URI_PREFIX, parse_artifact_uri};

/// What shaping knows of a call (the contract's `shaping::CallContext`).
#[derive(Debug, Clone)]
pub struct CallContext {
    /// The tool's name.
    pub tool: String,
    /// The tool's `outputSchema` as the client saw it in `tools/list`.
    pub output_schema: Option<Value>,
    /// The negotiated protocol revision (`initialize`, or the request's `_meta`).
    pub revision: Option<String>,
}

/// The settings of one tool (the contract's `shaping::ToolSettings`).
#[derive(Debug, Clone)]
pub struct ToolSettings {
    /// The bound on the shaped result.
    pub limit: usize,
    /// Redact secrets.
    pub redact: bool,
    /// Leave results of this tool alone.
    pub pass_through: bool,
}

/// What shaping did (the contract's `shaping::Outcome`).
#[derive(Debug)]
pub struct Outcome {
    /// The bytes to put in place of `result`.
    pub bytes: Vec<u8>,
    /// The digest of the full result, when it was stored.
    pub stored: Option<Digest>,
    /// Secrets masked.
    pub redactions: usize,
}

/// The settings of `tool`: the command line's (the policy file is h/drill's).
pub fn tool_settings(config: &Config, _tool: &str) -> ToolSettings {
    ToolSettings {
        limit: config.limit,
        redact: config.redact,
        pass_through: false,
    }
}

/// Passes the result through unchanged.
///
/// # Errors
///
/// Never (the real one fails on a result that is not a `CallToolResult`).
pub fn shape_result(
    result: &[u8],
    call: &CallContext,
    settings: &ToolSettings,
    store: &dyn Store,
) -> Result<Outcome, String> {
    crate::stats::log::debug(
        "shaping.stand_in",
        &[
            ("tool", call.tool.clone().into()),
            ("revision", call.revision.clone().into()),
            ("output_schema", call.output_schema.is_some().into()),
            ("limit", settings.limit.into()),
            ("redact", settings.redact.into()),
            ("pass_through", settings.pass_through.into()),
        ],
    );
    if result.len() <= settings.limit || settings.pass_through || call.output_schema.is_some() {
        return Ok(Outcome {
            bytes: result.to_vec(),
            stored: None,
            redactions: 0,
        });
    }
    let sidecar = store
        .put(result, "application/json", &[])
        .map_err(|e| format!("storing the full result: {e}"))?;
    let uri = crate::drill::artifact_uri(&sidecar.digest);
    let note = format!(
        "[envelope: the result of {} bytes is over the limit of {} bytes; the full result is at {uri} (resources/read, or the tool envelope_read)]",
        result.len(),
        settings.limit
    );
    let mut content = vec![json!({"type": "text", "text": note})];
    // resource_link blocks exist from 2025-06-18 on (revisions compare as dates).
    if call.revision.as_deref().is_none_or(|r| r >= "2025-06-18") {
        content.push(json!({"type": "resource_link", "uri": uri, "name": "full result", "mimeType": "application/json"}));
    }
    // Only `isError` is read: the payload is skipped, not built.
    #[derive(serde::Deserialize)]
    struct Flag {
        #[serde(rename = "isError")]
        is_error: Option<bool>,
    }
    let flag =
        serde_json::from_slice::<Flag>(result).map_err(|e| format!("not a CallToolResult: {e}"))?;
    let mut shaped = json!({ "content": content });
    if let Some(is_error) = flag.is_error {
        shaped["isError"] = is_error.into();
    }
    Ok(Outcome {
        bytes: shaped.to_string().into_bytes(),
        stored: Some(sidecar.digest),
        redactions: 0,
    })
}

/// Leaves every tool entry as the upstream wrote it.
pub fn advertised_tool(_tool: &Value, _settings: &ToolSettings) -> Option<Value> {
    None
}

/// The `envelope_read` tool entry for `tools/list`.
pub fn read_tool() -> Value {
    json!({
        "name": "envelope_read",
        "description": "Read a stored full tool result by its envelope:// URI.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "uri": {"type": "string"},
                "pointer": {"type": "string"},
                "offset": {"type": "integer", "minimum": 0},
                "limit": {"type": "integer", "minimum": 1},
                "jq": {"type": "string"}
            },
            "required": ["uri"]
        }
    })
}

/// The resource template of artifact URIs.
pub fn resource_template() -> Value {
    json!({
        "uriTemplate": format!("{URI_PREFIX}{{sha256}}"),
        "name": "envelope-artifact",
        "description": "A full tool result the proxy stored",
        "mimeType": "application/json"
    })
}

/// `envelope_read`: the stored bytes as text (cut to `limit` bytes), or a tool error.
pub fn call_read(arguments: &Value, store: &dyn Store, limit: usize) -> Value {
    let error =
        |text: String| json!({"content": [{"type": "text", "text": text}], "isError": true});
    let Some(uri) = arguments.get("uri").and_then(Value::as_str) else {
        return error("envelope_read: the argument uri (a string) is required".into());
    };
    let Some(digest) = parse_artifact_uri(uri) else {
        return error(format!("envelope_read: {uri:?} is not an artifact URI"));
    };
    match store.get(&digest) {
        Ok(bytes) => {
            let mut text = String::from_utf8_lossy(&bytes).into_owned();
            let mut end = limit.min(text.len());
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            text.truncate(end);
            json!({"content": [{"type": "text", "text": text}]})
        }
        Err(e) => error(format!("envelope_read: {uri}: {e}")),
    }
}

/// `resources/read` of an artifact URI, or a JSON-RPC error (code, message).
pub fn read_resource(uri: &str, store: &dyn Store) -> Result<Value, (i64, String)> {
    let digest = parse_artifact_uri(uri)
        .ok_or_else(|| (-32602, format!("{uri:?} is not an artifact URI")))?;
    let bytes = store
        .get(&digest)
        .map_err(|e| (-32002, format!("{uri}: {e}")))?;
    Ok(json!({"contents": [{
        "uri": uri,
        "mimeType": "application/json",
        "text": String::from_utf8_lossy(&bytes),
    }]}))
}
