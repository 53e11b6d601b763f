//! An MCP tool as an operation: its spec (from the `tools/list` entry) and its handler
//! (`tools/call` → an `mcp` envelope).

use crate::error::TextError;

use serde_json::{Map, Value, json};

use crate::file::McpServerConfig;
use crate::spec::{OperationSpec, OperationType, is_unknown_schema};

/// The spec of `tool` in `namespace`, and whether its JSON text is parsed (see
/// [`asks_for_parsed_text`]). A tool without a string `name` is an error.
pub fn spec_of(
    namespace: &str,
    tool: &Value,
    config: &McpServerConfig,
) -> Result<(OperationSpec, bool), TextError> {
    let name = tool["name"]
        .as_str()
        .filter(|name| !name.is_empty())
        .ok_or_else(|| format!("tools/list gave a tool without a name: {tool}"))?;
    let read_only = tool["annotations"]["readOnlyHint"] == Value::Bool(true);
    let kind = if read_only {
        OperationType::Query
    } else {
        OperationType::Mutation
    };
    let mut spec = OperationSpec::new(namespace, name, kind);
    spec.title = tool["title"]
        .as_str()
        .or_else(|| tool["annotations"]["title"].as_str())
        .map(str::to_owned);
    spec.description = tool["description"].as_str().unwrap_or("").to_string();
    if let Some(input) = tool.get("inputSchema").filter(|s| s.is_object()) {
        spec.input_schema = input.clone();
    }
    if let Some(output) = tool.get("outputSchema").filter(|s| s.is_object()) {
        spec.output_schema = output.clone();
    }
    spec.meta = tool.get("_meta").and_then(Value::as_object).cloned();
    if let Some(access) = &config.access_control {
        spec.access_control = access.clone();
    }
    let parse_text = asks_for_parsed_text(&spec.output_schema);
    Ok((spec, parse_text))
}

/// Whether a result's JSON text is parsed into `data`: the tool declares an output schema
/// (not the unknown `{}`) whose `type` does not allow a string. Such a tool promises
/// structured data; a server that sends it only as text (an older revision, a server without
/// `structuredContent`) has it parsed. Without a schema, or with one that wants a string,
/// the text stays text.
///
/// ```
/// use envelope_ops::mcp::tool::asks_for_parsed_text;
/// use serde_json::json;
///
/// assert!(asks_for_parsed_text(&json!({"type": "object"})));
/// assert!(!asks_for_parsed_text(&json!({})));
/// assert!(!asks_for_parsed_text(&json!({"type": ["string", "null"]})));
/// ```
pub fn asks_for_parsed_text(output_schema: &Value) -> bool {
    if is_unknown_schema(output_schema) {
        return false;
    }
    match output_schema.get("type") {
        Some(Value::String(t)) => t != "string",
        Some(Value::Array(types)) => !types.iter().any(|t| t == "string"),
        _ => true,
    }
}

/// The `{data, meta}` envelope of a `tools/call` result (`meta.source = "mcp"`): `data` is
/// `structuredContent` when present; else, when `parse_text` and the content is a single
/// text block holding JSON, that JSON; else the content blocks.
///
/// ```
/// use envelope_ops::mcp::tool::envelope_of;
/// use serde_json::json;
///
/// let result = json!({"content": [{"type": "text", "text": "{\"n\": 1}"}]});
/// assert_eq!(envelope_of(&result, true)["data"], json!({"n": 1}));
/// assert_eq!(envelope_of(&result, false)["data"], result["content"]);
/// assert_eq!(envelope_of(&result, false)["meta"]["isError"], false);
/// ```
pub fn envelope_of(result: &Value, parse_text: bool) -> Value {
    let content = match result.get("content") {
        Some(Value::Array(blocks)) => Value::Array(blocks.clone()),
        _ => Value::Array(Vec::new()),
    };
    let structured = result.get("structuredContent").filter(|v| !v.is_null());
    let data = match structured {
        Some(structured) => structured.clone(),
        None => parse_text
            .then(|| single_json_text(&content))
            .flatten()
            .unwrap_or_else(|| content.clone()),
    };
    let mut meta = Map::new();
    meta.insert("source".into(), "mcp".into());
    meta.insert(
        "isError".into(),
        Value::Bool(result["isError"] == Value::Bool(true)),
    );
    meta.insert("content".into(), content);
    if let Some(structured) = structured {
        meta.insert("structuredContent".into(), structured.clone());
    }
    if let Some(m) = result.get("_meta").filter(|m| m.is_object()) {
        meta.insert("_meta".into(), m.clone());
    }
    json!({ "data": data, "meta": meta })
}

fn single_json_text(content: &Value) -> Option<Value> {
    match content.as_array()?.as_slice() {
        [block] if block["type"] == "text" => serde_json::from_str(block["text"].as_str()?).ok(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(t: &str) -> Value {
        json!({"type": "text", "text": t})
    }

    #[test]
    fn structured_content_wins_over_parsed_text() {
        let result = json!({"content": [text("{\"a\": 1}")], "structuredContent": {"a": 2}});
        let env = envelope_of(&result, true);
        assert_eq!(env["data"], json!({"a": 2}));
        assert_eq!(env["meta"]["structuredContent"], json!({"a": 2}));
    }

    #[test]
    fn only_one_text_block_of_json_is_parsed() {
        let two = json!({"content": [text("1"), text("2")]});
        assert_eq!(envelope_of(&two, true)["data"], two["content"]);
        let not_json = json!({"content": [text("not json")]});
        assert_eq!(envelope_of(&not_json, true)["data"], not_json["content"]);
        let image =
            json!({"content": [{"type": "image", "data": "AA==", "mimeType": "image/png"}]});
        assert_eq!(envelope_of(&image, true)["data"], image["content"]);
        let array = json!({"content": [text("[1, 2]")]});
        assert_eq!(envelope_of(&array, true)["data"], json!([1, 2]));
    }

    #[test]
    fn is_error_and_meta_are_kept_and_a_missing_content_is_empty() {
        let result = json!({"isError": true, "_meta": {"k": "v"}});
        let env = envelope_of(&result, false);
        assert_eq!(env["meta"]["isError"], true);
        assert_eq!(env["meta"]["_meta"], json!({"k": "v"}));
        assert_eq!(env["meta"]["content"], json!([]));
        assert_eq!(env["data"], json!([]));
    }

    #[test]
    fn specs_take_type_titles_schemas_meta_and_access() {
        let config: McpServerConfig = serde_json::from_value(json!({
            "command": "srv", "accessControl": {"requiredScopes": ["s"]},
        }))
        .unwrap();
        let tool = json!({
            "name": "look", "description": "Looks",
            "inputSchema": {"type": "object"},
            "outputSchema": {"type": "object", "properties": {"n": {"type": "number"}}},
            "annotations": {"title": "Look around", "readOnlyHint": true},
            "_meta": {"x": 1},
        });
        let (spec, parse) = spec_of("ns", &tool, &config).unwrap();
        assert_eq!(spec.id(), "ns.look");
        assert_eq!(spec.kind, OperationType::Query);
        assert_eq!(spec.title.as_deref(), Some("Look around"));
        assert_eq!(spec.output_schema, tool["outputSchema"]);
        assert_eq!(spec.meta.unwrap()["x"], 1);
        assert_eq!(spec.access_control.required_scopes, ["s"]);
        assert!(parse);
        let bare = json!({"name": "w", "annotations": {"readOnlyHint": "yes"}});
        let (spec, parse) = spec_of("ns", &bare, &config).unwrap();
        assert_eq!(
            spec.kind,
            OperationType::Mutation,
            "only `true` is read-only"
        );
        assert!(!parse);
        assert!(spec_of("ns", &json!({"title": "no name"}), &config).is_err());
    }
}
