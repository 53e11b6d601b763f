//! What `envelope serve` refuses at start, each refusal with its stable id.

/// Why the service cannot start: its tokens or its tool names.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// The bearer tokens (a file, [`TOKENS_ENV`](crate::TOKENS_ENV), or text) are not a
    /// table of tokens and identities: where (the file or variable, the token's place) and
    /// why, never a token's text.
    Tokens(String),
    /// Two operations would be one tool, or one would be a tool serve adds itself: the
    /// operations, the name and the remedy.
    Names(String),
}

impl Error {
    /// Every value [`Error::code`] returns.
    pub const CODES: &[&str] = &["serve.tokens", "serve.names"];

    /// The stable id the CLI prints (`error[serve.tokens]`, `error[serve.names]`).
    pub fn code(&self) -> &'static str {
        match self {
            Error::Tokens(_) => "serve.tokens",
            Error::Names(_) => "serve.names",
        }
    }

    /// The same error, its message after `context: ` (a file's or a variable's name).
    pub(crate) fn within(self, context: &str) -> Error {
        match self {
            Error::Tokens(m) => Error::Tokens(format!("{context}: {m}")),
            Error::Names(m) => Error::Names(format!("{context}: {m}")),
        }
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Tokens(message) | Error::Names(message) => f.write_str(message),
        }
    }
}

impl std::error::Error for Error {}

/// A `tools/list` cursor this service did not give (not a string holding an offset within
/// the list); it holds the cursor as given, as JSON.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InvalidCursor(pub(crate) String);

impl std::fmt::Display for InvalidCursor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "invalid cursor: {}", self.0)
    }
}

impl std::error::Error for InvalidCursor {}
