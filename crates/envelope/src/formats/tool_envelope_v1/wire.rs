//! tool-envelope-v1: an MCP result of two text blocks, the second carrying the envelope as
//! base64 JSON after the `__ENVELOPE_V<n>__:` prefix. The schema can describe the blocks;
//! what is inside the base64 (`{payload, meta}`) is checked by the validator's rules.

use schemars::JsonSchema;
use serde_json::{Map, Value};

/// A tool-envelope-v1 result.
#[derive(JsonSchema)]
#[schemars(title = "tool-envelope-v1 result")]
#[allow(non_snake_case)]
pub struct Result {
    /// Block 0: the human summary; block 1: the envelope.
    pub content: (TextBlock, EnvelopeBlock),
    /// Present (and true) only on error results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub isError: Option<bool>,
    /// The dual emit: `{payload, meta}` again, as structured content.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structuredContent: Option<Map<String, Value>>,
}

#[derive(JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Text {
    Text,
}

#[derive(JsonSchema)]
pub struct TextBlock {
    #[serde(rename = "type")]
    pub kind: Text,
    pub text: String,
}

#[derive(JsonSchema)]
pub struct EnvelopeBlock {
    #[serde(rename = "type")]
    pub kind: Text,
    /// `__ENVELOPE_V1__:` then standard base64 of the compact JSON `{payload, meta}`.
    #[schemars(regex(pattern = r"^__ENVELOPE_V\d+__:"))]
    pub text: String,
}
