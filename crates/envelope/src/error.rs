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
    /// A location given by a JSON Pointer only.
    pub fn pointer(pointer: impl Into<String>) -> Self {
        Location {
            pointer: Some(pointer.into()),
            ..Location::default()
        }
    }

    /// A location given by a byte offset only.
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
    /// Arrays and objects nested deeper than the one depth limit (127 levels: the 128th
    /// opening bracket is refused), in an input or in an output that would be read back.
    Depth,
    /// A byte-order mark before the document.
    Bom,
    /// Something other than whitespace after the document.
    TrailingData,
}

/// Everything that can go wrong in the library. Classify errors by [`Error::code`] (or the
/// variant), never by the message text.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The input is not JSON. Code `json.syntax`, `json.eof`, `json.depth`, `text.utf8`,
    /// `text.bom` or `text.trailing-data`: the ids `validate` gives the same defects.
    #[error("invalid JSON ({location}): {message}")]
    Json {
        /// Which kind of JSON error.
        kind: JsonErrorKind,
        /// The parser's description.
        message: String,
        /// Where the parser stopped.
        location: Location,
    },
    /// The input is JSON but not an envelope of the format. Code `format.not-an-envelope`.
    #[error("{format}: {reason} ({location})")]
    NotAnEnvelope {
        /// The format id the input was read as.
        format: &'static str,
        /// What is wrong.
        reason: String,
        /// Where.
        location: Location,
    },
    /// The envelope names a version of its format this library does not read. Code
    /// `format.unsupported-version`.
    #[error("{format}: {message} ({location})")]
    UnsupportedVersion {
        /// The format id the input was read as.
        format: &'static str,
        /// Which version was found and which are read.
        message: String,
        /// Where the version is.
        location: Location,
    },
    /// A field has the wrong JSON type. Code `format.wrong-type`.
    #[error("{format}: expected {expected} ({location})")]
    WrongType {
        /// The format id the input was read as.
        format: &'static str,
        /// The type the format requires there (`a string`, `an object`, …).
        expected: &'static str,
        /// Where the field is.
        location: Location,
    },
    /// A required field is absent. Code `format.missing-field`.
    #[error("{format}: missing required field ({location})")]
    Missing {
        /// The format id the input was read as.
        format: &'static str,
        /// Where the field should be.
        location: Location,
    },
    /// Text that must be base64 is not. Code `format.base64`.
    #[error("{format}: invalid base64 ({location}): {message}")]
    Base64 {
        /// The format id the input was read as.
        format: &'static str,
        /// What the base64 reader found.
        message: String,
        /// Where the text is.
        location: Location,
    },
    /// A format id that names none of the formats (held as given). Code `format.unknown`.
    #[error(
        "unknown format id {0:?} (known: tool-envelope-v1, ctxo, operations, protocol-v1, tool-result-envelope, mcp)"
    )]
    UnknownFormat(String),
    /// Detection found no format the input belongs to (the reason, in English). Code
    /// `format.undetected`.
    #[error("not a recognized envelope: {0}")]
    Undetected(String),
    /// Not even the smallest envelope of the format fits the byte limit. Code
    /// `budget.too-small`.
    #[error(
        "{format}: no envelope fits in {limit} bytes (the smallest is {minimum} bytes: without the payload, but with the format's identifiers and the artifact reference, which are never cut)"
    )]
    BudgetTooSmall {
        /// The output format id.
        format: &'static str,
        /// The limit asked for.
        limit: usize,
        /// The size of the smallest envelope of the format.
        minimum: usize,
    },
    /// Not even a minimal envelope of the output format fits the token limit (its bytes
    /// would fit the byte limit). Code `budget.too-small`, as for bytes.
    #[error(
        "{format}: no envelope fits in {limit} tokens ({tokenizer}) (the smallest is {minimum} tokens: without the payload, but with the format's identifiers and the artifact reference, which are never cut)"
    )]
    TokenBudgetTooSmall {
        /// The output format id.
        format: &'static str,
        /// The token limit asked for (what the output may take of it).
        limit: usize,
        /// The tokenizer that counted.
        tokenizer: String,
        /// The tokens of the smallest envelope of the format.
        minimum: usize,
    },
    /// The output the command would write is not a valid envelope of its format, or is not
    /// detected as it: nothing is written. Code `output.invalid`.
    #[error("refusing to write an invalid envelope: {rule} ({location}): {message}")]
    InvalidOutput {
        /// The validation rule id the output breaks (`format.undetected` when another format
        /// or none is detected).
        rule: &'static str,
        /// The output format and what the rule found.
        message: String,
        /// Where in the output.
        location: Location,
    },
    /// A shaped document's payload was left out to fit a byte limit (its budget marker says
    /// so): there is no payload to unwrap. Code `payload.left-out`.
    #[error(
        "the payload was left out to fit a byte limit (its budget marker says so): there is nothing to unwrap"
    )]
    PayloadLeftOut,
    /// The artifact store (an [`ArtifactSink`](crate::shape::ArtifactSink)) could not store
    /// an offloaded payload. [`Error::code`] is the sink's own code (`store.io`, `store.backend`, …).
    #[error("artifact store: {0}")]
    Store(#[from] SinkError),
}

impl Error {
    /// Every code [`Error::code`] returns for an error of the library itself (a
    /// [`Error::Store`] carries its sink's code instead).
    pub const CODES: &'static [&'static str] = &[
        "json.syntax",
        "json.eof",
        "json.depth",
        "text.utf8",
        "text.bom",
        "text.trailing-data",
        "format.not-an-envelope",
        "format.unsupported-version",
        "format.wrong-type",
        "format.missing-field",
        "format.base64",
        "format.unknown",
        "format.undetected",
        "budget.too-small",
        "output.invalid",
        "payload.left-out",
    ];

    /// A stable identifier of the error's kind, for scripts and tests: dotted like the
    /// validation rule ids (`json.eof`, `format.wrong-type`), listed with every other id
    /// the tool prints in docs/errors.md. [`Error::CODES`] lists those of this type.
    pub fn code(&self) -> &'static str {
        match self {
            Error::Json { kind, .. } => match kind {
                JsonErrorKind::Syntax => "json.syntax",
                JsonErrorKind::Eof => "json.eof",
                JsonErrorKind::Depth => "json.depth",
                JsonErrorKind::Utf8 => "text.utf8",
                JsonErrorKind::Bom => "text.bom",
                JsonErrorKind::TrailingData => "text.trailing-data",
            },
            Error::InvalidOutput { .. } => "output.invalid",
            Error::NotAnEnvelope { .. } => "format.not-an-envelope",
            Error::UnsupportedVersion { .. } => "format.unsupported-version",
            Error::WrongType { .. } => "format.wrong-type",
            Error::Missing { .. } => "format.missing-field",
            Error::Base64 { .. } => "format.base64",
            Error::UnknownFormat(_) => "format.unknown",
            Error::Undetected(_) => "format.undetected",
            Error::BudgetTooSmall { .. } | Error::TokenBudgetTooSmall { .. } => "budget.too-small",
            Error::PayloadLeftOut => "payload.left-out",
            Error::Store(sink) => sink.code(),
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
            | Error::Base64 { location, .. }
            | Error::InvalidOutput { location, .. } => Some(location),
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

/// Why an [`ArtifactSink`](crate::shape::ArtifactSink) could not store an artifact: a
/// stable machine-readable [`code`](SinkError::code) chosen by the sink (a store adapter
/// passes on its store's code, such as `store.io` or `store.backend`) and the sink's own error as the
/// [source](std::error::Error::source). Also exported as `shape::SinkError`.
///
/// It displays as its source does; [`Error::Store`] wraps it with `artifact store: ` and
/// takes its code.
///
/// ```rust
/// use envelope::shape::SinkError;
///
/// let io = std::io::Error::new(std::io::ErrorKind::StorageFull, "disk full");
/// let err = SinkError::new("store.io", io);
/// assert_eq!(err.code(), "store.io");
/// assert_eq!(err.to_string(), "disk full");
/// assert!(err.get_ref().downcast_ref::<std::io::Error>().is_some());
///
/// let wrapped = envelope::Error::from(err);
/// assert_eq!(wrapped.code(), "store.io");
/// assert_eq!(wrapped.to_string(), "artifact store: disk full");
/// ```
#[derive(Debug, thiserror::Error)]
#[error("{source}")]
pub struct SinkError {
    code: &'static str,
    source: Box<dyn std::error::Error + Send + Sync + 'static>,
}

impl SinkError {
    /// An error with a stable `code` (`store.io`, `store.backend`, …: the sink's vocabulary, never
    /// parsed from a message) and its cause: any error, or a message (`&str`, `String`).
    pub fn new(
        code: &'static str,
        source: impl Into<Box<dyn std::error::Error + Send + Sync + 'static>>,
    ) -> Self {
        SinkError {
            code,
            source: source.into(),
        }
    }

    /// The code the sink gave, for scripts and tests.
    pub fn code(&self) -> &'static str {
        self.code
    }

    /// The sink's own error (downcast it to the store's error type to inspect it).
    pub fn get_ref(&self) -> &(dyn std::error::Error + Send + Sync + 'static) {
        &*self.source
    }

    /// The sink's own error, owned.
    pub fn into_inner(self) -> Box<dyn std::error::Error + Send + Sync + 'static> {
        self.source
    }
}

/// A result with the library's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
