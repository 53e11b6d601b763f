//! operations: `{data, meta}` with `meta` discriminated on `source`.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde_json::{Map, Value};

use crate::formats::mcp::wire::Block;

/// An operations response envelope.
#[derive(JsonSchema)]
#[schemars(title = "operations response envelope")]
pub struct Envelope {
    /// The operation's output: any JSON value.
    pub data: Value,
    pub meta: Meta,
}

/// Transport metadata, by source.
#[derive(JsonSchema)]
#[serde(tag = "source")]
#[allow(non_snake_case)]
pub enum Meta {
    #[serde(rename = "local")]
    Local {
        /// The full `namespace.name` key.
        operationId: String,
        /// Unix epoch milliseconds.
        timestamp: u64,
    },
    #[serde(rename = "http")]
    Http {
        statusCode: u16,
        /// Repeated values joined with `, `.
        headers: BTreeMap<String, String>,
        contentType: String,
    },
    #[serde(rename = "mcp")]
    Mcp {
        isError: bool,
        content: Vec<Block>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        structuredContent: Option<Map<String, Value>>,
        #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
        meta: Option<Map<String, Value>>,
    },
}
