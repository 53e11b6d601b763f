//! MCP `CallToolResult` (revisions 2024-11-05 to 2026-07-28): an open object; blocks of the
//! known types have their shapes, blocks of other types pass.

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde_json::{Map, Value};

/// An MCP tool result.
#[derive(JsonSchema)]
#[schemars(title = "MCP CallToolResult")]
#[allow(non_snake_case)]
pub struct CallToolResult {
    pub content: Vec<Block>,
    /// Absent means false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub isError: Option<bool>,
    /// An object up to 2025-11-25, any JSON value from 2026-07-28.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structuredContent: Option<Value>,
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
    /// 2026-07-28: `"complete"` (a missing one reads as complete).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resultType: Option<String>,
}

/// A content block: text, image, audio, resource, resource_link, or any other type.
pub struct Block;

const KNOWN: [&str; 5] = ["text", "image", "audio", "resource", "resource_link"];

impl JsonSchema for Block {
    fn schema_name() -> Cow<'static, str> {
        "ContentBlock".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        let typed = |kind: &str, required: &[&str], properties: Value| {
            let mut props = properties;
            props["type"] = serde_json::json!({"const": kind});
            let mut req = vec!["type"];
            req.extend_from_slice(required);
            serde_json::json!({"type": "object", "required": req, "properties": props})
        };
        let string = serde_json::json!({"type": "string"});
        json_schema!({
            "type": "object",
            "required": ["type"],
            "properties": {"type": {"type": "string"}},
            "anyOf": [
                typed("text", &["text"], serde_json::json!({"text": string})),
                typed("image", &["data", "mimeType"], serde_json::json!({"data": string, "mimeType": string})),
                typed("audio", &["data", "mimeType"], serde_json::json!({"data": string, "mimeType": string})),
                typed("resource", &["resource"], serde_json::json!({"resource": {
                    "type": "object",
                    "required": ["uri"],
                    "properties": {"uri": string, "mimeType": string, "text": string, "blob": string},
                    "oneOf": [{"required": ["text"]}, {"required": ["blob"]}]
                }})),
                typed("resource_link", &["uri", "name"], serde_json::json!({
                    "uri": string, "name": string, "title": string, "description": string,
                    "mimeType": string, "size": {"type": "integer", "minimum": 0}
                })),
                {"properties": {"type": {"not": {"enum": KNOWN}}}}
            ]
        })
    }
}
