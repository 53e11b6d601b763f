//! The cross-format error model (formats.md, "Cross-format error model").

use serde_json::Value;

/// The nine tool-envelope-v1 categories, plus any other string kept as given.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Category {
    Validation,
    Execution,
    Timeout,
    Model,
    Network,
    Authorization,
    RateLimit,
    NotFound,
    Internal,
    /// A category no reference defines; rendered with internal's prefix.
    Other(String),
}

impl Category {
    pub const KNOWN: [Category; 9] = [
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

    pub fn parse(s: &str) -> Category {
        Category::KNOWN
            .iter()
            .find(|c| c.as_str() == s)
            .cloned()
            .unwrap_or_else(|| Category::Other(s.to_string()))
    }

    /// The category of a protocol-v1 catalog code (unknown codes are internal).
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
    pub fn default_code(&self) -> &'static str {
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
pub const CATALOG: [&str; 16] = [
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
pub fn is_retryable(code: &str) -> bool {
    matches!(code, "ERUNTIME" | "ERATELIMIT" | "ETIMEOUT")
}

/// Retry transparency (protocol-v1 `error.details.attempts`, `.backoff`, `.retry_after`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Retry {
    pub attempts: Option<Value>,
    pub backoff: Option<Value>,
    pub retry_after: Option<Value>,
}

/// The canonical error.
#[derive(Clone, Debug, PartialEq)]
pub struct EnvelopeError {
    pub category: Category,
    /// Kept exactly as given; `None` when the source had no code (ctxo, MCP).
    pub code: Option<String>,
    pub message: String,
    pub details: Option<Value>,
    /// `None` = not stated: then it follows from the code ([`EnvelopeError::is_recoverable`]).
    pub recoverable: Option<bool>,
    pub suggested_action: Option<String>,
    pub next_tool: Option<String>,
    pub hint: Option<String>,
}

impl EnvelopeError {
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

    /// Stated recoverability, else whether the code is retryable.
    pub fn is_recoverable(&self) -> bool {
        self.recoverable
            .unwrap_or_else(|| self.code.as_deref().is_some_and(is_retryable))
    }

    /// The code to write where a format requires one.
    pub fn code_or_default(&self) -> &str {
        self.code
            .as_deref()
            .unwrap_or_else(|| self.category.default_code())
    }

    /// Retry facts found in `details`.
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
