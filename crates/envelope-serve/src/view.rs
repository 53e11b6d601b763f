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
/// not listed).
pub fn tools(registry: &Registry, identity: Option<&Identity>) -> Vec<Value> {
    registry
        .specs()
        .filter(|spec| access::check(&spec.access_control, identity).is_ok())
        .map(tool_of)
        .collect()
}

/// How an operation's input travels in MCP `arguments`, which are always an object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InputForm {
    /// The input is an object (or anything): the arguments are the input.
    Arguments,
    /// The input is not an object (a string, an array…): it is the `input` argument.
    Wrapped,
}

impl InputForm {
    /// The form of an operation whose input schema is `schema`.
    pub fn of(schema: &Value) -> InputForm {
        if describes_object(schema) || envelope_ops::spec::is_unknown_schema(schema) {
            InputForm::Arguments
        } else {
            InputForm::Wrapped
        }
    }

    /// The tool's `inputSchema`.
    pub fn tool_schema(self, schema: &Value) -> Value {
        match self {
            InputForm::Arguments if describes_object(schema) => schema.clone(),
            InputForm::Arguments => json!({"type": "object"}),
            InputForm::Wrapped => json!({
                "type": "object",
                "properties": {"input": schema},
                "required": ["input"]
            }),
        }
    }

    /// The operation's input from a call's `arguments` (`None`: none given).
    ///
    /// ```
    /// use envelope_serve::InputForm;
    /// use serde_json::json;
    /// let wrapped = InputForm::of(&json!({"type": "string"}));
    /// assert_eq!(wrapped.input(Some(json!({"input": "x"}))), json!("x"));
    /// assert_eq!(InputForm::of(&json!({})).input(None), json!({}));
    /// ```
    pub fn input(self, arguments: Option<Value>) -> Value {
        let arguments = arguments.unwrap_or_else(|| json!({}));
        match self {
            InputForm::Arguments => arguments,
            // Missing: null, which the input schema then refuses with its own finding.
            InputForm::Wrapped => match arguments {
                Value::Object(mut object) => object.remove("input").unwrap_or(Value::Null),
                other => other,
            },
        }
    }
}

/// The note added to a subscription's description: how its events reach the client.
pub const SUBSCRIPTION_NOTE: &str = "(A subscription: each event is sent as a notifications/progress message whose `message` is the event's envelope as JSON, when the call carries a progressToken; the result is the last event.)";

/// The MCP tool of one operation.
pub fn tool_of(spec: &OperationSpec) -> Value {
    let mut tool = Map::new();
    tool.insert("name".into(), tool_name(&spec.id()).into());
    if let Some(title) = &spec.title {
        tool.insert("title".into(), title.clone().into());
    }
    let description = match spec.kind {
        OperationType::Subscription if spec.description.is_empty() => SUBSCRIPTION_NOTE.into(),
        OperationType::Subscription => format!("{} {SUBSCRIPTION_NOTE}", spec.description),
        _ => spec.description.clone(),
    };
    if !description.is_empty() {
        tool.insert("description".into(), description.into());
    }
    let input = InputForm::of(&spec.input_schema).tool_schema(&spec.input_schema);
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
