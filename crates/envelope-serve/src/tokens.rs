//! Bearer tokens and the identities they stand for (`--tokens FILE`, or the
//! `ENVELOPE_TOKENS` environment variable): JSON `{"<token>": {"id": "...", "scopes": [...]}}`.
//! A request that presents a token calls as its identity; the registry's access check then
//! decides what it may call.

use std::path::Path;

use envelope_mcp::transport::http_guard::{check_token, same_secret};
use envelope_ops::Identity;
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::Error;

/// The environment variable that may hold the tokens' JSON instead of a file.
pub const TOKENS_ENV: &str = "ENVELOPE_TOKENS";

/// The shortest token accepted: a shorter one is guessable. The same rule as
/// `proxy --listen`'s `ENVELOPE_TOKEN` ([`envelope_mcp::transport::http_guard::check_token`]).
pub use envelope_mcp::transport::http_guard::MIN_TOKEN_LEN;

/// Tokens and their identities.
#[derive(Clone, Default)]
pub struct Tokens {
    entries: Vec<(String, Identity)>,
}

impl std::fmt::Debug for Tokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the tokens themselves.
        let ids: Vec<&str> = self.entries.iter().map(|(_, i)| i.id.as_str()).collect();
        f.debug_struct("Tokens").field("identities", &ids).finish()
    }
}

/// One token's entry; unknown fields are refused (a typo in `scopes` must not silently
/// grant nothing, or everything).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    id: String,
    #[serde(default)]
    scopes: Vec<String>,
    #[serde(default)]
    resources: Option<std::collections::BTreeMap<String, Vec<String>>>,
}

impl Tokens {
    /// Reads the tokens' JSON.
    ///
    /// ```
    /// use envelope_serve::Tokens;
    ///
    /// let tokens = Tokens::parse(r#"{"0123456789abcdef-alice": {"id": "alice", "scopes": ["git:read"]}}"#).unwrap();
    /// assert_eq!(tokens.identity("0123456789abcdef-alice").unwrap().scopes, ["git:read"]);
    /// assert!(tokens.identity("0123456789abcdef-bob").is_none());
    /// assert!(Tokens::parse(r#"{"short": {"id": "x"}}"#).unwrap_err().to_string().contains("16"));
    /// ```
    ///
    /// # Errors
    ///
    /// Not JSON, not an object of objects, an entry without `id` or with an unknown field,
    /// a token shorter than [`MIN_TOKEN_LEN`] or holding characters a header cannot carry.
    pub fn parse(text: &str) -> Result<Tokens, Error> {
        let map: Map<String, Value> = serde_json::from_str(text).map_err(|e| {
            Error::Tokens(format!(
                "not a JSON object of tokens ({{\"<token>\": {{\"id\", \"scopes\"}}}}): {e}"
            ))
        })?;
        let mut entries = Vec::with_capacity(map.len());
        for (index, (token, entry)) in map.into_iter().enumerate() {
            // The token is a secret: errors name its place, never its text.
            let at = format!("token #{}", index + 1);
            check_token(&token).map_err(|why| Error::Tokens(format!("{at}: {why}")))?;
            // An object only: serde would also read a struct from an array, by position.
            if !entry.is_object() {
                return Err(Error::Tokens(format!(
                    "{at}: give an object {{\"id\": ..., \"scopes\": [...]}}"
                )));
            }
            let entry: Entry =
                serde_json::from_value(entry).map_err(|e| Error::Tokens(format!("{at}: {e}")))?;
            if entry.id.is_empty() {
                return Err(Error::Tokens(format!("{at}: the id is empty")));
            }
            let identity = Identity {
                id: entry.id,
                scopes: entry.scopes,
                resources: entry.resources,
            };
            entries.push((token, identity));
        }
        Ok(Tokens { entries })
    }

    /// Reads a tokens file.
    ///
    /// # Errors
    ///
    /// The file cannot be read, or [`Tokens::parse`] refuses it (the message names the file).
    pub fn read(path: &Path) -> Result<Tokens, Error> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::Tokens(format!("cannot read {}: {e}", path.display())))?;
        Tokens::parse(&text).map_err(|e| e.within(&path.display().to_string()))
    }

    /// The tokens of [`TOKENS_ENV`], when it is set and not empty.
    ///
    /// # Errors
    ///
    /// As [`Tokens::parse`] (the message names the variable).
    pub fn from_env() -> Result<Option<Tokens>, Error> {
        match std::env::var(TOKENS_ENV) {
            Ok(text) if !text.trim().is_empty() => Tokens::parse(&text)
                .map(Some)
                .map_err(|e| e.within(TOKENS_ENV)),
            _ => Ok(None),
        }
    }

    /// The identity of `token`, compared in constant time with every token.
    pub fn identity(&self, token: &str) -> Option<&Identity> {
        let mut found = None;
        for (known, identity) in &self.entries {
            if same_secret(token.as_bytes(), known.as_bytes()) {
                found = Some(identity);
            }
        }
        found
    }

    /// Every token (for the HTTP servers' guard).
    pub fn secrets(&self) -> Vec<String> {
        self.entries
            .iter()
            .map(|(token, _)| token.clone())
            .collect()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_checked_without_printing_the_token() {
        let secret = "super-secret-token-value";
        for (text, expected) in [
            (
                format!(r#"{{"{secret}": {{"id": "a", "scope": []}}}}"#),
                "unknown field `scope`",
            ),
            (
                format!(r#"{{"{secret}": {{"scopes": []}}}}"#),
                "missing field `id`",
            ),
            (
                format!(r#"{{"{secret}": {{"id": ""}}}}"#),
                "the id is empty",
            ),
            (format!(r#"{{"{secret}": ["a"]}}"#), "token #1"),
            (
                r#"{"has a space in it!!": {"id": "a"}}"#.to_owned(),
                "spaces",
            ),
            ("[1]".to_owned(), "not a JSON object"),
        ] {
            let error = Tokens::parse(&text).expect_err(&text);
            assert_eq!(error.code(), "serve.tokens");
            let error = error.to_string();
            assert!(error.contains(expected), "{text}: {error}");
            assert!(
                !error.contains(secret),
                "the error shows the token: {error}"
            );
        }
    }

    #[test]
    fn debug_never_shows_tokens() {
        let tokens = Tokens::parse(r#"{"abcdefghijklmnopqrstuvwx": {"id": "ci"}}"#).unwrap();
        let shown = format!("{tokens:?}");
        assert!(
            shown.contains("ci") && !shown.contains("abcdefghijklmnop"),
            "{shown}"
        );
    }
}
