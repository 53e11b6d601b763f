//! The operation spec: what an operation is, as the registry lists it (`envelope ops list
//! --json` prints one per line, with the field names of the spec).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// What calling the operation does: read, write, or a stream of results.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OperationType {
    /// Reads; no side effects.
    Query,
    /// Changes something (the default: nothing says it does not).
    #[default]
    Mutation,
    /// A stream of results (not executed by this crate yet: the call protocol comes later).
    Subscription,
}

impl OperationType {
    /// The wire name (`query`, `mutation`, `subscription`).
    pub fn as_str(self) -> &'static str {
        match self {
            OperationType::Query => "query",
            OperationType::Mutation => "mutation",
            OperationType::Subscription => "subscription",
        }
    }
}

/// An error an operation declares: a handler error whose message contains `code` takes it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ErrorSchema {
    /// The code (e.g. `NOT_A_REPO`).
    pub code: String,
    /// What it means.
    #[serde(default)]
    pub description: String,
    /// JSON Schema of the error's details.
    #[serde(default = "unknown_schema")]
    pub schema: Value,
    /// The HTTP status an HTTP front would answer with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_status: Option<u16>,
}

/// Who may call the operation (see [`crate::access`] for the rules).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AccessControl {
    /// Every one of these must be among the caller's scopes.
    #[serde(default)]
    pub required_scopes: Vec<String>,
    /// When not empty, at least one of these must be among the caller's scopes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub required_scopes_any: Vec<String>,
    /// With `resource_action`: the caller needs a resource `<type>:<id>` allowing the action.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_type: Option<String>,
    /// With `resource_type`: the action needed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_action: Option<String>,
    /// An opaque note for a custom authoriser (not interpreted here).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub custom_auth: Option<Value>,
}

/// An operation's description: id `namespace.name`, type, schemas, access rules.
///
/// ```
/// use envelope_ops::{OperationSpec, OperationType};
///
/// let spec = OperationSpec::new("math", "add", OperationType::Query);
/// assert_eq!(spec.id(), "math.add");
/// let wire = serde_json::to_value(&spec).unwrap();
/// assert_eq!(wire["type"], "query");
/// assert_eq!(wire["inputSchema"], serde_json::json!({}));
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OperationSpec {
    /// The group the operation belongs to (a command file section, an MCP server, an API).
    pub namespace: String,
    /// The operation's name within its namespace.
    pub name: String,
    /// Semver of the operation.
    pub version: String,
    /// Query, mutation or subscription.
    #[serde(rename = "type")]
    pub kind: OperationType,
    /// A short human title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the operation does.
    #[serde(default)]
    pub description: String,
    /// Free tags.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// JSON Schema of the input (`{}` accepts anything).
    pub input_schema: Value,
    /// JSON Schema of `data` (`{}`, "unknown", accepts anything and casts nothing).
    pub output_schema: Value,
    /// The errors the operation declares.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub error_schemas: Vec<ErrorSchema>,
    /// Who may call it.
    #[serde(default)]
    pub access_control: AccessControl,
    /// Free metadata.
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

impl OperationSpec {
    /// A spec with version 1.0.0, empty description, unknown schemas and no access rules.
    pub fn new(namespace: impl Into<String>, name: impl Into<String>, kind: OperationType) -> Self {
        OperationSpec {
            namespace: namespace.into(),
            name: name.into(),
            version: "1.0.0".into(),
            kind,
            title: None,
            description: String::new(),
            tags: Vec::new(),
            input_schema: unknown_schema(),
            output_schema: unknown_schema(),
            error_schemas: Vec::new(),
            access_control: AccessControl::default(),
            meta: None,
        }
    }

    /// `namespace.name`.
    pub fn id(&self) -> String {
        format!("{}.{}", self.namespace, self.name)
    }
}

/// The schema that accepts anything (`{}`).
pub fn unknown_schema() -> Value {
    Value::Object(Map::new())
}

/// Whether `schema` accepts anything without constraint: `{}`, `true`, or an object of
/// annotations only. The output of such an operation is not cast.
pub fn is_unknown_schema(schema: &Value) -> bool {
    const ANNOTATIONS: [&str; 5] = ["$schema", "title", "description", "$comment", "examples"];
    match schema {
        Value::Bool(b) => *b,
        Value::Object(m) => m.keys().all(|k| ANNOTATIONS.contains(&k.as_str())),
        _ => false,
    }
}
