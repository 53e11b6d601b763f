//! What a caller hands to `execute` besides the input: who calls, on behalf of which
//! request, and until when.

use std::collections::BTreeMap;
use std::time::Instant;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The caller: an id, its scopes and, optionally, the actions it may take on resources
/// (`"<type>:<id>" → [actions]`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Identity {
    /// Who calls.
    pub id: String,
    /// Its scopes.
    #[serde(default)]
    pub scopes: Vec<String>,
    /// Per resource (`"repo:42"`), the actions allowed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<BTreeMap<String, Vec<String>>>,
}

/// The context of one call.
///
/// ```
/// use envelope_ops::{Context, Identity};
///
/// let ctx = Context::default().with_identity(Identity {
///     id: "cli".into(),
///     scopes: vec!["repo:read".into()],
///     resources: None,
/// });
/// assert_eq!(ctx.identity.unwrap().scopes, ["repo:read"]);
/// ```
#[derive(Clone, Debug, Default)]
pub struct Context {
    /// The id of this request (call protocol).
    pub request_id: Option<String>,
    /// The request on whose behalf this one is made.
    pub parent_request_id: Option<String>,
    /// The caller; `None` is an anonymous caller, denied any operation with requirements.
    pub identity: Option<Identity>,
    /// Free metadata for the handler.
    pub metadata: Option<Map<String, Value>>,
    /// When the caller stops waiting: the handler is stopped and the call ends with TIMEOUT.
    pub deadline: Option<Instant>,
}

impl Context {
    /// The same context with `identity`.
    pub fn with_identity(mut self, identity: Identity) -> Self {
        self.identity = Some(identity);
        self
    }

    /// The same context with a deadline.
    pub fn with_deadline(mut self, deadline: Instant) -> Self {
        self.deadline = Some(deadline);
        self
    }
}
