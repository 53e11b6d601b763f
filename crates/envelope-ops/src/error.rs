//! The two kinds of failure: a [`CallError`] (an operation could not give an envelope; the
//! wire shape `{code, message, details?}` of the call protocol) and a [`RegistryError`] (the
//! registry file or an operation's definition is wrong).

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// The error codes of the spec. An operation may declare more in its `errorSchemas`.
pub mod codes {
    /// No operation has that id.
    pub const OPERATION_NOT_FOUND: &str = "OPERATION_NOT_FOUND";
    /// The caller's identity lacks a required scope or resource action.
    pub const ACCESS_DENIED: &str = "ACCESS_DENIED";
    /// The input does not match the operation's input schema.
    pub const VALIDATION_ERROR: &str = "VALIDATION_ERROR";
    /// The deadline (or the operation's own timeout) passed.
    pub const TIMEOUT: &str = "TIMEOUT";
    /// The caller gave up, or a plain call completed without a response.
    pub const ABORTED: &str = "ABORTED";
    /// The handler failed (a command's non-zero exit, an error it returned).
    pub const EXECUTION_ERROR: &str = "EXECUTION_ERROR";
    /// The handler failed with something that is not an error (the reference's non-Error throw).
    pub const UNKNOWN_ERROR: &str = "UNKNOWN_ERROR";
}

/// An operation that gave no envelope: `{code, message, details?}` on the wire.
///
/// ```
/// use envelope_ops::CallError;
///
/// let e = CallError::not_found("math.add");
/// assert_eq!(e.code, "OPERATION_NOT_FOUND");
/// assert_eq!(e.to_json(), r#"{"code":"OPERATION_NOT_FOUND","message":"no operation \"math.add\"","details":{"operationId":"math.add"}}"#);
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, thiserror::Error)]
#[error("{code}: {message}")]
pub struct CallError {
    /// One of [`codes`] or a code the operation declares.
    pub code: String,
    /// What went wrong, for people.
    pub message: String,
    /// Machine-readable particulars (findings, exit status, stderr…).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
}

impl CallError {
    /// An error with a code, a message and no details.
    pub fn new(code: impl Into<String>, message: impl Into<String>) -> Self {
        CallError {
            code: code.into(),
            message: message.into(),
            details: None,
        }
    }

    /// The same error with `details`.
    pub fn with_details(mut self, details: Value) -> Self {
        self.details = Some(details);
        self
    }

    /// OPERATION_NOT_FOUND for `id`.
    pub fn not_found(id: &str) -> Self {
        CallError::new(codes::OPERATION_NOT_FOUND, format!("no operation {id:?}"))
            .with_details(json!({ "operationId": id }))
    }

    /// TIMEOUT after `seconds`.
    pub fn timeout(seconds: f64) -> Self {
        CallError::new(
            codes::TIMEOUT,
            format!("no result within {seconds} s (the handler was stopped)"),
        )
        .with_details(json!({ "timeoutSeconds": seconds }))
    }

    /// How the upstream service of an operation (an OpenAPI service, an MCP server) failed,
    /// from `details.upstream`: an HTTP status it answered (`"answered"`, the status in
    /// `details.status`), or no usable answer (`"unreachable"`). `None` when the failure is
    /// not the upstream's (or the handler does not say). A host that answers over HTTP
    /// (`envelope serve --http`) maps it to its own status.
    ///
    /// ```
    /// use envelope_ops::{CallError, codes};
    /// use envelope_ops::error::Upstream;
    /// use serde_json::json;
    ///
    /// let e = CallError::new(codes::EXECUTION_ERROR, "openapi.gh: HTTP 422")
    ///     .with_details(json!({"status": 422, "upstream": "answered"}));
    /// assert_eq!(e.upstream(), Some(Upstream::Answered(422)));
    /// let e = CallError::new(codes::EXECUTION_ERROR, "x").with_details(json!({"status": 422}));
    /// assert_eq!(e.upstream(), None);
    /// ```
    pub fn upstream(&self) -> Option<Upstream> {
        let details = self.details.as_ref()?;
        match details.get("upstream")?.as_str()? {
            "answered" => details
                .get("status")
                .and_then(Value::as_u64)
                .and_then(|status| u16::try_from(status).ok())
                .map(Upstream::Answered),
            "unreachable" => Some(Upstream::Unreachable),
            _ => None,
        }
    }

    /// The error as one line of compact JSON (what `envelope call` prints on stderr).
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a CallError always serialises")
    }
}

/// How an operation's upstream service failed ([`CallError::upstream`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Upstream {
    /// It answered with this HTTP status (not a success).
    Answered(u16),
    /// It could not be reached, or its answer broke off (connection refused or reset, an
    /// MCP server that is gone).
    Unreachable,
}

/// Why a registry (its file, or an operation added to it) was refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RegistryError {
    /// The registry file cannot be read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
    /// The registry file is not valid TOML/JSON or not a valid registry; the message names
    /// the line and the key.
    #[error("{path}: {message}")]
    Invalid {
        /// The file.
        path: String,
        /// The cause, with its line.
        message: String,
    },
    /// An operation's definition is wrong (a schema that does not compile, a bad id).
    #[error("operation {id}: {message}")]
    Operation {
        /// The operation id (`namespace.name`).
        id: String,
        /// The cause.
        message: String,
    },
    /// Two operations with the same id.
    #[error("operation {id} is defined twice")]
    Duplicate {
        /// The operation id.
        id: String,
    },
    /// A source could not give its operations (an MCP server that does not start or
    /// answer); `register_all` names the source before the message.
    #[error("{message}")]
    Unavailable {
        /// The cause.
        message: String,
    },
}

impl RegistryError {
    /// Every value [`RegistryError::code`] returns.
    pub const CODES: &[&str] = &[
        "registry.io",
        "registry.invalid",
        "registry.operation",
        "registry.duplicate",
        "registry.unavailable",
    ];

    /// A stable dotted id for the error.
    pub fn code(&self) -> &'static str {
        match self {
            RegistryError::Io { .. } => "registry.io",
            RegistryError::Invalid { .. } => "registry.invalid",
            RegistryError::Operation { .. } => "registry.operation",
            RegistryError::Duplicate { .. } => "registry.duplicate",
            RegistryError::Unavailable { .. } => "registry.unavailable",
        }
    }
}

/// Why a text was refused (a registry file's TOML or JSON, an OpenAPI document, its
/// `$ref`s): one sentence that names the place (line and column, or the JSON Pointer) and
/// the cause.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct TextError(pub(crate) String);

impl From<String> for TextError {
    fn from(sentence: String) -> TextError {
        TextError(sentence)
    }
}

/// The sentence, for the crate's own functions that still speak in sentences.
impl From<TextError> for String {
    fn from(error: TextError) -> String {
        error.0
    }
}

impl TextError {
    /// The sentence.
    pub fn message(&self) -> &str {
        &self.0
    }
}
