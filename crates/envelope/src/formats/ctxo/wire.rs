//! ctxo: the tool's own JSON object, with `_meta` appended by the server.

use schemars::JsonSchema;

/// A ctxo tool payload: any JSON object whose `_meta` says whether it is whole. `_meta` is
/// not required here: the reference's error result (`{"error": true, "message"}`) and
/// graceful miss (`{"found": false, "hint"}`) have none, and the rules (`ctxo.meta-missing`)
/// tell those from a payload that lacks it.
#[derive(JsonSchema)]
#[schemars(title = "ctxo payload")]
pub struct Payload {
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

#[derive(JsonSchema)]
#[allow(non_snake_case)]
pub struct Meta {
    /// Items of the largest truncatable top-level array before the cut.
    pub totalItems: u64,
    /// Items kept (equal to `totalItems` unless truncated).
    pub returnedItems: u64,
    /// Exactly `returnedItems < totalItems`.
    pub truncated: bool,
    /// Bytes of the whole payload serialized (compact, JS dialect).
    pub totalBytes: u64,
    /// How to get the rest; present when truncated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<Workspace>,
}

#[derive(JsonSchema)]
pub struct Workspace {
    pub root: String,
}
