//! `outputSchema` honesty: what the client receives in `structuredContent` validates against
//! the schema it saw in `tools/list`.
//!
//! Chosen approach: check before sending. The advertised schema stays as the upstream wrote
//! it (a relaxed schema would tell the model less about the tool), every shaped result is
//! validated against it, and one that fails is sent as an `isError` result instead, which
//! clients do not validate. Only `emit` formats, whose results carry no
//! `structuredContent` at all, change the `tools/list` entry ([`advertised_tool`]).

use serde_json::Value;

use super::{CallContext, ToolSettings};

/// A tool's `outputSchema`, compiled once. The dialect is the schema's `$schema`, else JSON
/// Schema 2020-12, as the Python SDK client does; `$ref`s resolve only inside the schema
/// (nothing is fetched).
pub struct OutputSchema {
    schema: Value,
    validator: Option<jsonschema::Validator>,
}

impl OutputSchema {
    /// Compiles `schema`. A schema that does not compile is kept: nothing validates
    /// against it (the Python SDK rejects every non-error result of such a tool too).
    pub fn new(schema: &Value) -> Self {
        OutputSchema {
            schema: schema.clone(),
            validator: jsonschema::validator_for(schema).ok(),
        }
    }

    /// The schema as given.
    pub fn schema(&self) -> &Value {
        &self.schema
    }

    /// Whether the schema compiled.
    pub fn compiles(&self) -> bool {
        self.validator.is_some()
    }

    /// Whether `value` validates (never, when the schema does not compile).
    pub fn is_valid(&self, value: &Value) -> bool {
        self.validator.as_ref().is_some_and(|v| v.is_valid(value))
    }
}

impl std::fmt::Debug for OutputSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OutputSchema")
            .field("schema", &self.schema)
            .field("compiles", &self.compiles())
            .finish()
    }
}

/// Whether a client holding the call's schema accepts `result`: no schema, an `isError`
/// result, or a `structuredContent` that validates. (A result without
/// `structuredContent` is refused by the Python SDK when the tool has a schema.)
pub(crate) fn honest(result: &Value, call: &CallContext) -> bool {
    let Some(schema) = &call.output_schema else {
        return true;
    };
    if result.get("isError") == Some(&Value::Bool(true)) {
        return true;
    }
    result
        .get("structuredContent")
        .is_some_and(|sc| schema.is_valid(sc))
}

/// The tool's `tools/list` entry as the client should see it, when the proxy's shaping
/// changes it; `None`: the entry is relayed unchanged.
///
/// Only tools whose results are written as another envelope format (`emit`) change: their
/// results have no `structuredContent`, so their `outputSchema` is dropped (a client would
/// reject every result otherwise). Shaped MCP results keep the schema honest by being
/// checked against it (see [`shape_result`](super::shape_result)).
///
/// ```
/// use envelope::FormatId;
/// use envelope_mcp::shaping::{ToolSettings, advertised_tool};
/// use serde_json::json;
///
/// let tool = json!({"name": "ls", "inputSchema": {"type": "object"}, "outputSchema": {"type": "object"}});
/// assert_eq!(advertised_tool(&tool, &ToolSettings::default()), None);
/// let emit = ToolSettings { emit: Some(FormatId::ProtocolV1), ..ToolSettings::default() };
/// let advertised = advertised_tool(&tool, &emit).unwrap();
/// assert_eq!(advertised, json!({"name": "ls", "inputSchema": {"type": "object"}}));
/// ```
pub fn advertised_tool(tool: &Value, settings: &ToolSettings) -> Option<Value> {
    let emits_other = settings.emit.is_some_and(|f| f != envelope::FormatId::Mcp);
    if settings.pass_through || !emits_other || tool.get("outputSchema").is_none() {
        return None;
    }
    let mut tool = tool.clone();
    tool.as_object_mut()?.shift_remove("outputSchema");
    Some(tool)
}
