//! The library's one error type. Every variant has a stable [`Error::code`] and says where
//! the problem is: a byte offset, a line and column, or a JSON Pointer.

use std::fmt;

/// Where in the input a problem was found.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Location {
    /// 1-based line, when the input was text.
    pub line: Option<usize>,
    /// 1-based column (in bytes), when the input was text.
    pub column: Option<usize>,
    /// 0-based byte offset into the input.
    pub offset: Option<usize>,
    /// JSON Pointer (RFC 6901) into the decoded document; `#` separates a pointer into an
    /// embedded document (e.g. `/content/1/text#/meta/version` inside a base64 block).
    pub pointer: Option<String>,
}

impl Location {
    pub fn pointer(pointer: impl Into<String>) -> Self {
        Location {
            pointer: Some(pointer.into()),
            ..Location::default()
        }
    }

    pub fn offset(offset: usize) -> Self {
        Location {
            offset: Some(offset),
            ..Location::default()
        }
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        if let (Some(line), Some(column)) = (self.line, self.column) {
            parts.push(format!("line {line} column {column}"));
        }
        if let Some(offset) = self.offset {
            parts.push(format!("byte {offset}"));
        }
        if let Some(pointer) = &self.pointer {
            parts.push(format!(
                "at {}",
                if pointer.is_empty() { "/" } else { pointer }
            ));
        }
        f.write_str(&parts.join(", "))
    }
}

/// Why the input could not be read as JSON.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JsonErrorKind {
    /// Not JSON: a wrong token, a trailing comma, nesting deeper than the limit…
    Syntax,
    /// The input stopped in the middle of a value (truncated or empty).
    Eof,
    /// The bytes are not UTF-8.
    Utf8,
}

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    #[error("invalid JSON ({location}): {message}")]
    Json {
        kind: JsonErrorKind,
        message: String,
        location: Location,
    },
    #[error("{format}: {reason} ({location})")]
    NotAnEnvelope {
        format: &'static str,
        reason: String,
        location: Location,
    },
    #[error("{format}: {message} ({location})")]
    UnsupportedVersion {
        format: &'static str,
        message: String,
        location: Location,
    },
    #[error("{format}: expected {expected} ({location})")]
    WrongType {
        format: &'static str,
        expected: &'static str,
        location: Location,
    },
    #[error("{format}: missing required field ({location})")]
    Missing {
        format: &'static str,
        location: Location,
    },
    #[error("{format}: invalid base64 ({location}): {message}")]
    Base64 {
        format: &'static str,
        message: String,
        location: Location,
    },
    #[error(
        "unknown format id {0:?} (known: tool-envelope-v1, ctxo, operations, protocol-v1, tool-result-envelope, mcp)"
    )]
    UnknownFormat(String),
    #[error("not a recognized envelope: {0}")]
    Undetected(String),
    #[error("{format}: no envelope fits in {limit} bytes (the smallest is {minimum} bytes)")]
    BudgetTooSmall {
        format: &'static str,
        limit: usize,
        minimum: usize,
    },
    #[error("artifact store: {reason}")]
    Store { reason: String },
}

impl Error {
    /// A stable identifier of the error's kind, for scripts and tests.
    pub fn code(&self) -> &'static str {
        match self {
            Error::Json { kind, .. } => match kind {
                JsonErrorKind::Syntax => "json_syntax",
                JsonErrorKind::Eof => "json_eof",
                JsonErrorKind::Utf8 => "json_utf8",
            },
            Error::NotAnEnvelope { .. } => "not_an_envelope",
            Error::UnsupportedVersion { .. } => "unsupported_version",
            Error::WrongType { .. } => "wrong_type",
            Error::Missing { .. } => "missing_field",
            Error::Base64 { .. } => "base64",
            Error::UnknownFormat(_) => "unknown_format",
            Error::Undetected(_) => "undetected",
            Error::BudgetTooSmall { .. } => "budget_too_small",
            Error::Store { .. } => "store",
        }
    }

    /// Where the problem is, when known.
    pub fn location(&self) -> Option<&Location> {
        match self {
            Error::Json { location, .. }
            | Error::NotAnEnvelope { location, .. }
            | Error::UnsupportedVersion { location, .. }
            | Error::WrongType { location, .. }
            | Error::Missing { location, .. }
            | Error::Base64 { location, .. } => Some(location),
            _ => None,
        }
    }

    pub(crate) fn wrong_type(format: &'static str, pointer: &str, expected: &'static str) -> Self {
        Error::WrongType {
            format,
            expected,
            location: Location::pointer(pointer),
        }
    }

    pub(crate) fn missing(format: &'static str, pointer: &str) -> Self {
        Error::Missing {
            format,
            location: Location::pointer(pointer),
        }
    }

    pub(crate) fn not_envelope(
        format: &'static str,
        pointer: &str,
        reason: impl Into<String>,
    ) -> Self {
        Error::NotAnEnvelope {
            format,
            reason: reason.into(),
            location: Location::pointer(pointer),
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
