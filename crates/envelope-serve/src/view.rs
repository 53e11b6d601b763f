//! The MCP view of a registry: operations as tools, envelopes and CallErrors as
//! `CallToolResult`s.

use envelope_ops::{CallError, Identity, OperationSpec, OperationType, Registry, access};
use serde_json::{Map, Value, json};

use crate::names::tool_name;

/// The `outputSchema` a tool advertises: the operation's output schema when it describes an
/// object (MCP's `structuredContent` is an object), else `{result: <schema>}`, the shape
/// [`call_result`] wraps such data in; `None` when the output schema is unknown.
///
/// ```
/// use envelope_serve::output_schema;
/// use serde_json::json;
/// assert_eq!(output_schema(&json!({"type": "object"})), Some(json!({"type": "object"})));
/// assert_eq!(
///     output_schema(&json!({"type": "array"})),
///     Some(json!({"type": "object", "properties": {"result": {"type": "array"}}, "required": ["result"]}))
/// );
/// assert_eq!(output_schema(&json!({})), None);
/// ```
pub fn output_schema(schema: &Value) -> Option<Value> {
    if envelope_ops::spec::is_unknown_schema(schema) {
        return None;
    }
    if describes_object(schema) {
        return Some(schema.clone());
    }
    Some(json!({"type": "object", "properties": {"result": schema}, "required": ["result"]}))
}

/// Whether every value the schema admits is an object (`type: "object"` only).
fn describes_object(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("object")
}

/// The tools of `registry` that `identity` may call, in id order (a tool it may not call is
/// not listed). Subscriptions are left out: their MCP form is not built yet.
pub fn tools(registry: &Registry, identity: Option<&Identity>) -> Vec<Value> {
    registry
        .specs()
        .filter(|spec| spec.kind != OperationType::Subscription)
        .filter(|spec| access::check(&spec.access_control, identity).is_ok())
        .map(tool)
        .collect()
}

fn tool(spec: &OperationSpec) -> Value {
    let mut tool = Map::new();
    tool.insert("name".into(), tool_name(&spec.id()).into());
    if let Some(title) = &spec.title {
        tool.insert("title".into(), title.clone().into());
    }
    if !spec.description.is_empty() {
        tool.insert("description".into(), spec.description.clone().into());
    }
    // MCP arguments are an object. An operation whose input is not one (a string, an
    // array) is advertised with an open object schema for now: calling it through MCP
    // needs the arguments unwrapped (`{input: ...}`), which the call path (not built yet)
    // is to do.
    let input = if describes_object(&spec.input_schema) {
        spec.input_schema.clone()
    } else {
        json!({"type": "object"})
    };
    tool.insert("inputSchema".into(), input);
    if let Some(output) = output_schema(&spec.output_schema) {
        tool.insert("outputSchema".into(), output);
    }
    let read_only = spec.kind == OperationType::Query;
    tool.insert("annotations".into(), json!({ "readOnlyHint": read_only }));
    Value::Object(tool)
}

/// The `CallToolResult` of an execution: an envelope's `data` as `structuredContent` (an
/// object as is, anything else as `{result: data}`) with a text block mirroring it; an MCP
/// source's envelope as the tool's own result (content, structuredContent, isError); a
/// CallError as an `isError` result whose text is `{code, message, details}`.
///
/// ```
/// use envelope_serve::call_result;
/// use envelope_ops::CallError;
/// use serde_json::json;
///
/// let ok = call_result(Ok(json!({"data": [1, 2], "meta": {"source": "local"}})));
/// assert_eq!(ok["structuredContent"], json!({"result": [1, 2]}));
/// assert_eq!(ok["content"][0]["text"], r#"{"result":[1,2]}"#);
/// let failed = call_result(Err(CallError::new("TIMEOUT", "late")));
/// assert_eq!(failed["isError"], true);
/// assert_eq!(failed["content"][0]["text"], r#"{"code":"TIMEOUT","message":"late"}"#);
/// ```
pub fn call_result(outcome: Result<Value, CallError>) -> Value {
    match outcome {
        // An MCP source's envelope: the tool's own result, as its server gave it (its
        // content blocks, structuredContent and isError are in meta).
        Ok(envelope) if envelope["meta"]["source"] == "mcp" => {
            let meta = &envelope["meta"];
            let mut result = json!({
                "content": meta.get("content").cloned().unwrap_or(json!([])),
                "isError": meta["isError"].as_bool().unwrap_or(false)
            });
            if let Some(structured) = meta.get("structuredContent") {
                result["structuredContent"] = structured.clone();
            }
            result
        }
        Ok(mut envelope) => {
            let data = envelope
                .get_mut("data")
                .map(Value::take)
                .unwrap_or(Value::Null);
            let structured = match data {
                Value::Object(_) => data,
                other => json!({ "result": other }),
            };
            let text = structured.to_string();
            json!({
                "content": [{"type": "text", "text": text}],
                "structuredContent": structured,
                "isError": false
            })
        }
        Err(error) => json!({
            "content": [{"type": "text", "text": error.to_json()}],
            "isError": true
        }),
    }
}
