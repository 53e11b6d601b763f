//! tool-result-envelope: the payload under a key, metadata under `__envelope`. Written
//! names are the schema's; readers also accept them in any case.

use schemars::JsonSchema;

/// A document carrying a tool result and its `__envelope`.
#[derive(JsonSchema)]
#[schemars(title = "tool-result-envelope document")]
pub struct Document {
    #[serde(rename = "__envelope")]
    pub envelope: Meta,
}

#[derive(JsonSchema)]
#[allow(non_snake_case)]
pub struct Meta {
    /// Always `"1"`.
    pub version: Version,
    pub tool: Option<String>,
    pub provider: Option<String>,
    pub model: Option<String>,
    pub toolCallId: Option<String>,
    pub contentType: ContentType,
    /// The root key holding the payload (a literal key, not a dotted path).
    pub payloadPath: Option<String>,
    pub schemaRef: Option<String>,
    /// Keys tried when `payloadPath` is absent.
    pub compat: Option<Vec<String>>,
    /// `yyyy-MM-ddTHH:mm:ss[.fffffff]Z`.
    pub createdUtc: Option<String>,
    pub tags: Option<Vec<String>>,
}

#[derive(JsonSchema)]
pub enum Version {
    #[serde(rename = "1")]
    V1,
}

/// Unknown 0, Text 1, List 2, Object 3, Image 4, Binary 5 (readers also take the name in
/// any case, or a numeric string).
#[derive(JsonSchema)]
#[serde(untagged)]
pub enum ContentType {
    Code(#[schemars(range(min = 0, max = 5))] u8),
    Name(String),
}
