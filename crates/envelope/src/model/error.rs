//! The cross-format error model (formats.md, "Cross-format error model").
//!
//! One [`EnvelopeError`] carries what any format says about a failure: tool-envelope-v1's
//! category, protocol-v1's catalog code and details, the hints agents act on. A format
//! that has no place for a field lists it in the loss report.
//!
//! ```
//! use envelope::{Category, EnvelopeError};
//!
//! // A protocol-v1 code decides the category and whether a retry may help.
//! let e = EnvelopeError::from_code("ETIMEOUT", "no answer in 30 s");
//! assert_eq!(e.category, Category::Timeout);
//! assert!(e.is_recoverable());
//!
//! // Without a code, formats that need one write the category's.
//! let e = EnvelopeError::new(Category::NotFound, "no such issue");
//! assert_eq!(e.code, None);
//! assert!(!e.is_recoverable());
//! ```

use serde_json::Value;

/// The nine tool-envelope-v1 categories, plus any other string kept as given.
///
/// Categories other references define may become variants of their own (they read as
/// [`Category::Other`] until then), so the enum is `#[non_exhaustive]`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Category {
    /// `validation`: the input was refused (protocol-v1 `EARG`, `EPARSE`, …).
    Validation,
    /// `execution`: the tool ran and failed (an MCP `isError` result reads as this).
    Execution,
    /// `timeout`: the call took too long.
    Timeout,
    /// `model`: the model behind the tool failed.
    Model,
    /// `network`: the network failed.
    Network,
    /// `authorization`: the caller may not do this (`EAUTH`, `EPOLICY`).
    Authorization,
    /// `rate_limit`: too many calls (`ERATELIMIT`).
    RateLimit,
    /// `not_found`: what was asked for does not exist (`ENOTFOUND`).
    NotFound,
    /// `internal`: a fault of the tool itself; unknown protocol-v1 codes read as this.
    Internal,
    /// A category no reference defines; rendered with internal's prefix.
    Other(String),
}

impl Category {
    /// The nine categories tool-envelope-v1 defines.
    pub(crate) const KNOWN: [Category; 9] = [
        Category::Validation,
        Category::Execution,
        Category::Timeout,
        Category::Model,
        Category::Network,
        Category::Authorization,
        Category::RateLimit,
        Category::NotFound,
        Category::Internal,
    ];

    /// The tool-envelope-v1 spelling (`rate_limit`); an [`Category::Other`] as given.
    pub fn as_str(&self) -> &str {
        match self {
            Category::Validation => "validation",
            Category::Execution => "execution",
            Category::Timeout => "timeout",
            Category::Model => "model",
            Category::Network => "network",
            Category::Authorization => "authorization",
            Category::RateLimit => "rate_limit",
            Category::NotFound => "not_found",
            Category::Internal => "internal",
            Category::Other(s) => s,
        }
    }

    /// The category spelled `s` (exact, case-sensitive); any other text is kept as
    /// [`Category::Other`]. Never fails.
    pub fn parse(s: &str) -> Category {
        Category::KNOWN
            .iter()
            .find(|c| c.as_str() == s)
            .cloned()
            .unwrap_or_else(|| Category::Other(s.to_string()))
    }

    /// The category of a protocol-v1 catalog code (`EARG` is validation; unknown codes are
    /// internal).
    pub fn of_code(code: &str) -> Category {
        match code {
            "EARG" | "EPARSE" | "EENVELOPE" | "EOPENAPI" => Category::Validation,
            "EAUTH" | "EPOLICY" => Category::Authorization,
            "ERATELIMIT" => Category::RateLimit,
            "ETIMEOUT" => Category::Timeout,
            "ENOTFOUND" => Category::NotFound,
            "ERUNTIME" | "ERUNTIME_RESTART" | "EIO" | "EPAGINATION" | "EOUTPUT_TOO_LARGE"
            | "ESKILLDOWN" | "ECANCELED" => Category::Execution,
            _ => Category::Internal,
        }
    }

    /// The protocol-v1 code for an error that has none.
    pub(crate) fn default_code(&self) -> &'static str {
        match self {
            Category::Validation => "EARG",
            Category::Authorization => "EAUTH",
            Category::RateLimit => "ERATELIMIT",
            Category::Timeout => "ETIMEOUT",
            Category::NotFound => "ENOTFOUND",
            _ => "ERUNTIME",
        }
    }
}

/// The protocol-v1 error catalog.
pub(crate) const CATALOG: [&str; 16] = [
    "EARG",
    "EAUTH",
    "ERATELIMIT",
    "ERUNTIME",
    "ERUNTIME_RESTART",
    "ENOTFOUND",
    "ETIMEOUT",
    "EPOLICY",
    "ESKILLDOWN",
    "EPARSE",
    "EOUTPUT_TOO_LARGE",
    "EENVELOPE",
    "EIO",
    "ECANCELED",
    "EOPENAPI",
    "EPAGINATION",
];

/// Codes whose failures are safe to retry.
pub(crate) fn is_retryable(code: &str) -> bool {
    matches!(code, "ERUNTIME" | "ERATELIMIT" | "ETIMEOUT")
}

/// Retry transparency (protocol-v1 `error.details.attempts`, `.backoff`, `.retry_after`),
/// each as given.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Retry {
    /// `details.attempts`: how many attempts were made.
    pub attempts: Option<Value>,
    /// `details.backoff`: the backoff between attempts.
    pub backoff: Option<Value>,
    /// `details.retry_after`: when to try again.
    pub retry_after: Option<Value>,
}

/// The canonical error.
#[derive(Clone, Debug, PartialEq)]
pub struct EnvelopeError {
    /// What kind of failure it is.
    pub category: Category,
    /// Kept exactly as given; `None` when the source had no code (ctxo, MCP).
    pub code: Option<String>,
    /// What went wrong, for people.
    pub message: String,
    /// Structured details, as given (protocol-v1 `error.details`; tool-envelope-v1 renders
    /// them in block 0).
    pub details: Option<Value>,
    /// `None` = not stated: then it follows from the code ([`EnvelopeError::is_recoverable`]).
    pub recoverable: Option<bool>,
    /// What the caller could do about it (tool-envelope-v1 `suggestedAction`).
    pub suggested_action: Option<String>,
    /// The tool an agent should call next (tool-envelope-v1 `nextTool`).
    pub next_tool: Option<String>,
    /// A hint for the caller (protocol-v1 writes it as `data.hint` of an error without a
    /// payload).
    pub hint: Option<String>,
}

impl EnvelopeError {
    /// A copy with `message` in place of its own (which is not copied).
    pub(crate) fn with_message(&self, message: String) -> EnvelopeError {
        // Destructured so that a new field cannot be forgotten here.
        let EnvelopeError {
            category,
            code,
            message: _,
            details,
            recoverable,
            suggested_action,
            next_tool,
            hint,
        } = self;
        EnvelopeError {
            category: category.clone(),
            code: code.clone(),
            message,
            details: details.clone(),
            recoverable: *recoverable,
            suggested_action: suggested_action.clone(),
            next_tool: next_tool.clone(),
            hint: hint.clone(),
        }
    }

    /// An error of `category` with `message`; every other field empty (no code, so
    /// recoverability is false until stated).
    pub fn new(category: Category, message: impl Into<String>) -> Self {
        EnvelopeError {
            category,
            code: None,
            message: message.into(),
            details: None,
            recoverable: None,
            suggested_action: None,
            next_tool: None,
            hint: None,
        }
    }

    /// An error from a protocol-v1 style code: category and recoverability follow it.
    pub fn from_code(code: &str, message: impl Into<String>) -> Self {
        EnvelopeError {
            code: Some(code.to_string()),
            ..EnvelopeError::new(Category::of_code(code), message)
        }
    }

    /// Stated recoverability, else whether the code is retryable (`ERUNTIME`,
    /// `ERATELIMIT`, `ETIMEOUT`); `false` without either.
    pub fn is_recoverable(&self) -> bool {
        self.recoverable
            .unwrap_or_else(|| self.code.as_deref().is_some_and(is_retryable))
    }

    /// The code to write where a format requires one.
    pub(crate) fn code_or_default(&self) -> &str {
        self.code
            .as_deref()
            .unwrap_or_else(|| self.category.default_code())
    }

    /// Retry facts found in `details` (an object); `None` when it holds none of them.
    pub fn retry(&self) -> Option<Retry> {
        let details = self.details.as_ref()?.as_object()?;
        let retry = Retry {
            attempts: details.get("attempts").cloned(),
            backoff: details.get("backoff").cloned(),
            retry_after: details.get("retry_after").cloned(),
        };
        (retry != Retry::default()).then_some(retry)
    }
}
