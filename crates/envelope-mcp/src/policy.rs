//! The policy file (`--policy FILE.toml`): per-tool settings.
//!
//! ```toml
//! [tools."github_search"]     # an exact tool name
//! limit = 32768               # bytes, > 0: the bound on this tool's shaped results
//! redact = false              # override --no-redact / the default (on)
//!
//! [tools."query_*"]
//! limit_tokens = 8000         # tokens, > 0: the bound in tokens (the result's JSON text)
//! tokenizer = "cl100k_base"   # who counts them (default: --tokenizer, else o200k_base);
//!                             # only beside limit_tokens
//!
//! [tools."fs_*"]              # a glob: `*` any run of characters, `?` one character
//! pass_through = true         # relay results unchanged (no shaping at all)
//!
//! [tools."git_?og"]
//! emit = "ctxo"               # "mcp" (the default) or a format id: tool-envelope-v1, ctxo,
//!                             # operations, protocol-v1, tool-result-envelope
//!
//! [tools."read_text_file"]
//! channels = "both"           # (the default) or "pointer": see `shaping::Channels`
//! text_share = 60             # percent of the room for the text blocks (with "both")
//! ```
//!
//! Which table applies to a tool ([`Policy::for_tool`]):
//!
//! 1. the table whose key is exactly the tool's name;
//! 2. else, among the globs that match the whole name, the longest pattern (in characters):
//!    the longer one is taken as the more specific; on a tie, the one written first in the file;
//! 3. else none: every setting at its default.
//!
//! One table applies, whole: settings of other matching tables are not merged in.
//!
//! **Limits.** A table that sets `limit` or `limit_tokens` sets the tool's limits whole: the
//! command line's `--limit` and `--limit-tokens` do not apply to that tool. `limit_tokens`
//! alone means no byte limit for the tool (the token limit decides; `--max-message` still
//! caps every message); both keys: both hold. A table with neither keeps the command line's
//! limits.
//!
//! Anything the proxy would otherwise have to guess at is refused when the file is loaded, with
//! the file's line and the reason ([`PolicyError`]): TOML syntax errors, unknown keys (at the top
//! level only `tools` is known), values of the wrong type, a `limit` that is not a positive
//! integer, an `emit` that is not a known format, a `channels` other than `both` or `pointer`,
//! a `text_share` outside 0 to 100 (or beside `channels = "pointer"`), a `limit_tokens` that
//! is not a positive integer, a `tokenizer` that is not known (or without `limit_tokens`).

use std::collections::BTreeMap;
use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use envelope::FormatId;
use envelope::tokens::Tokenizer;
use serde::Deserialize;
use toml::Spanned;

use crate::shaping::{Channels, NO_BYTE_LIMIT, TokenBudget, ToolSettings};

/// What a tool's results are written as.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Emit {
    /// A native MCP `CallToolResult` (the default).
    #[default]
    Mcp,
    /// One of the library's other formats, inside the result (never [`FormatId::Mcp`]: `"mcp"`
    /// reads as [`Emit::Mcp`]).
    Format(FormatId),
}

/// The settings the policy gives one tool. `None` leaves the proxy's own setting (`--limit`,
/// `--no-redact`) in force.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ToolPolicy {
    /// The bound on this tool's shaped results, in bytes (always > 0).
    pub limit: Option<usize>,
    /// The bound on this tool's shaped results, in tokens (always > 0).
    pub limit_tokens: Option<usize>,
    /// Who counts the tokens of `limit_tokens` (`None`: `--tokenizer`, else `o200k_base`).
    pub tokenizer: Option<&'static Tokenizer>,
    /// Redact this tool's results (`Some(false)`: never; `Some(true)`: even with `--no-redact`).
    pub redact: Option<bool>,
    /// Relay this tool's results unchanged: no shaping, no redaction, nothing stored.
    pub pass_through: bool,
    /// What the shaped results are written as.
    pub emit: Emit,
    /// How a cut result shares the limit between its two channels (`channels`,
    /// `text_share`).
    pub channels: Channels,
}

/// Per-tool settings read from `--policy FILE.toml` (see the [module documentation](self)).
/// The default policy has no tables: every tool gets [`ToolPolicy::default`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Policy {
    /// Tables keyed by an exact tool name.
    exact: BTreeMap<String, ToolPolicy>,
    /// Tables keyed by a glob, in the order they are tried: longest pattern first, then file
    /// order.
    globs: Vec<(String, ToolPolicy)>,
}

/// A policy file that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    /// The file could not be read.
    #[error("cannot read the policy file {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// The file's content is refused: a syntax error, an unknown key or format, a wrong type.
    #[error("{}line {line}: {reason}", path.as_ref().map(|p| format!("{}: ", p.display())).unwrap_or_default())]
    Invalid {
        /// The file, when the policy was read from one ([`Policy::load`]).
        path: Option<PathBuf>,
        /// The line (from 1) the problem is on.
        line: usize,
        /// What is wrong, in English.
        reason: String,
    },
}

impl PolicyError {
    /// The line the problem is on; `None` when the file could not be read at all.
    pub fn line(&self) -> Option<usize> {
        match self {
            PolicyError::Read { .. } => None,
            PolicyError::Invalid { line, .. } => Some(*line),
        }
    }
}

/// The file as TOML gives it, before the checks that need a span.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    #[serde(default)]
    tools: BTreeMap<String, Spanned<RawTool>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTool {
    limit: Option<Spanned<i64>>,
    limit_tokens: Option<Spanned<i64>>,
    tokenizer: Option<Spanned<String>>,
    redact: Option<bool>,
    pass_through: Option<bool>,
    emit: Option<Spanned<String>>,
    channels: Option<Spanned<String>>,
    text_share: Option<Spanned<i64>>,
}

impl Policy {
    /// Reads and checks a policy file.
    ///
    /// # Errors
    ///
    /// [`PolicyError::Read`] when the file cannot be read; [`PolicyError::Invalid`], naming
    /// the file and the line, when its content is refused.
    pub fn load(path: impl AsRef<Path>) -> Result<Policy, PolicyError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|source| PolicyError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        text.parse().map_err(|err| match err {
            PolicyError::Invalid { line, reason, .. } => PolicyError::Invalid {
                path: Some(path.to_path_buf()),
                line,
                reason,
            },
            other => other,
        })
    }

    /// How tool `name`'s results are shaped: its table's settings over the command line's
    /// `limit` (bytes), `tokens` and `redact`. A table that sets `limit` or
    /// `limit_tokens` sets both limits (see the [module documentation](self)).
    ///
    /// ```
    /// use envelope_mcp::policy::Policy;
    /// use envelope_mcp::shaping::{NO_BYTE_LIMIT, TokenBudget};
    /// let policy: Policy = "[tools.big]\nlimit = 65536\n[tools.chat]\nlimit_tokens = 4000\n"
    ///     .parse()
    ///     .unwrap();
    /// assert_eq!(policy.tool_settings("big", 16384, None, true).limit, 65536);
    /// assert_eq!(policy.tool_settings("other", 16384, None, true).limit, 16384);
    /// let chat = policy.tool_settings("chat", 16384, None, true);
    /// assert_eq!((chat.limit, chat.tokens), (NO_BYTE_LIMIT, Some(TokenBudget::o200k(4000))));
    /// ```
    pub fn tool_settings(
        &self,
        name: &str,
        limit: usize,
        tokens: Option<TokenBudget>,
        redact: bool,
    ) -> ToolSettings {
        let policy = self.for_tool(name);
        let (limit, tokens) = match (policy.limit, policy.limit_tokens) {
            (None, None) => (limit, tokens),
            (bytes, in_tokens) => (
                bytes.unwrap_or(NO_BYTE_LIMIT),
                in_tokens.map(|limit| TokenBudget {
                    limit,
                    tokenizer: policy
                        .tokenizer
                        .or(tokens.map(|t| t.tokenizer))
                        .unwrap_or_else(|| crate::shaping::shared_tokenizer(Tokenizer::O200kBase)),
                }),
            ),
        };
        ToolSettings {
            limit,
            tokens,
            redact: policy.redact.unwrap_or(redact),
            pass_through: policy.pass_through,
            emit: match policy.emit {
                Emit::Mcp => None,
                Emit::Format(format) => Some(format),
            },
            channels: policy.channels,
        }
    }

    /// The settings for the tool `name` (see the [module documentation](self) for which table
    /// applies).
    pub fn for_tool(&self, name: &str) -> ToolPolicy {
        if let Some(policy) = self.exact.get(name) {
            return *policy;
        }
        self.globs
            .iter()
            .find(|(pattern, _)| glob_matches(pattern, name))
            .map(|(_, policy)| *policy)
            .unwrap_or_default()
    }
}

/// Parses the policy's TOML text; errors name the line (and no file).
/// A tool table's count member (`limit`, `limit_tokens`): absent, or a whole number above 0;
/// else where it is and why it is refused (`unit` names what it counts).
fn positive(
    value: Option<Spanned<i64>>,
    tool: &str,
    key: &str,
    unit: &str,
) -> Result<Option<usize>, (Range<usize>, String)> {
    let Some(value) = value else {
        return Ok(None);
    };
    match usize::try_from(*value.get_ref()) {
        Ok(n) if n > 0 => Ok(Some(n)),
        _ => Err((
            value.span(),
            format!(
                "tools.\"{tool}\".{key} must be a number of {unit} greater than 0, not {}",
                value.get_ref()
            ),
        )),
    }
}

impl FromStr for Policy {
    type Err = PolicyError;

    fn from_str(text: &str) -> Result<Policy, PolicyError> {
        let invalid = |span: Option<Range<usize>>, reason: String| PolicyError::Invalid {
            path: None,
            line: line_of(text, span.map_or(0, |s| s.start)),
            reason,
        };
        let raw: RawFile =
            toml::from_str(text).map_err(|e| invalid(e.span(), plain(e.message())))?;

        let mut exact = BTreeMap::new();
        let mut globs = Vec::new();
        for (name, table) in raw.tools {
            let start = table.span().start;
            let raw = table.into_inner();
            let count = |value, key, unit| {
                positive(value, &name, key, unit)
                    .map_err(|(span, reason)| invalid(Some(span), reason))
            };
            let limit = count(raw.limit, "limit", "bytes")?;
            let limit_tokens = count(raw.limit_tokens, "limit_tokens", "tokens")?;
            let tokenizer = match raw.tokenizer {
                None => None,
                Some(tokenizer) if limit_tokens.is_none() => {
                    return Err(invalid(
                        Some(tokenizer.span()),
                        format!("tools.\"{name}\".tokenizer applies beside limit_tokens only"),
                    ));
                }
                Some(tokenizer) => Some(
                    Tokenizer::by_name(tokenizer.get_ref())
                        .map(crate::shaping::shared_tokenizer)
                        .map_err(|e| {
                            invalid(
                                Some(tokenizer.span()),
                                format!("tools.\"{name}\".tokenizer: {e}"),
                            )
                        })?,
                ),
            };
            let emit = match raw.emit {
                None => Emit::Mcp,
                Some(emit) => parse_emit(emit.get_ref()).ok_or_else(|| {
                    invalid(
                        Some(emit.span()),
                        format!(
                            "tools.\"{name}\".emit: unknown format {:?} (known: mcp, {})",
                            emit.get_ref(),
                            format_list()
                        ),
                    )
                })?,
            };
            let text_share = match raw.text_share {
                None => None,
                Some(share) => match u8::try_from(*share.get_ref()) {
                    Ok(p) if p <= 100 => Some((p, share.span())),
                    _ => {
                        return Err(invalid(
                            Some(share.span()),
                            format!(
                                "tools.\"{name}\".text_share must be a percentage from 0 to 100, not {}",
                                share.get_ref()
                            ),
                        ));
                    }
                },
            };
            let channels = match raw
                .channels
                .as_ref()
                .map(|c| (c.get_ref().as_str(), c.span()))
            {
                None | Some(("both", _)) => Channels::Both {
                    text_share: text_share.as_ref().map(|(p, _)| *p),
                },
                Some(("pointer", _)) => {
                    if let Some((_, span)) = text_share {
                        return Err(invalid(
                            Some(span),
                            format!(
                                "tools.\"{name}\".text_share applies to channels = \"both\" only"
                            ),
                        ));
                    }
                    Channels::Pointer
                }
                Some((other, span)) => {
                    return Err(invalid(
                        Some(span),
                        format!(
                            "tools.\"{name}\".channels: unknown value {other:?} (known: both, pointer)"
                        ),
                    ));
                }
            };
            let policy = ToolPolicy {
                limit,
                limit_tokens,
                tokenizer,
                redact: raw.redact,
                pass_through: raw.pass_through.unwrap_or(false),
                emit,
                channels,
            };
            if is_glob(&name) {
                globs.push((start, name, policy));
            } else {
                exact.insert(name, policy);
            }
        }
        // Longest pattern first; equal lengths keep file order (the table's position).
        globs.sort_by_key(|(start, pattern, _)| {
            (std::cmp::Reverse(pattern.chars().count()), *start)
        });
        Ok(Policy {
            exact,
            globs: globs
                .into_iter()
                .map(|(_, p, policy)| (p, policy))
                .collect(),
        })
    }
}

impl fmt::Display for Emit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Emit::Mcp => f.write_str("mcp"),
            Emit::Format(id) => write!(f, "{id}"),
        }
    }
}

/// serde's wording of a TOML error, with Rust type names put in TOML's terms.
fn plain(message: &str) -> String {
    message
        .trim()
        .replace("expected i64", "expected an integer")
        .replace(
            "expected struct RawTool",
            "expected a table of tool settings",
        )
        .replace("expected struct RawFile", "expected a table")
}

/// `"mcp"` or a format id the library parses.
fn parse_emit(text: &str) -> Option<Emit> {
    match text.parse::<FormatId>().ok()? {
        FormatId::Mcp => Some(Emit::Mcp),
        id => Some(Emit::Format(id)),
    }
}

/// The non-MCP format ids, comma-separated, for error messages.
fn format_list() -> String {
    FormatId::ALL
        .iter()
        .filter(|id| **id != FormatId::Mcp)
        .map(|id| id.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The line (from 1) of the byte `offset` in `text`.
fn line_of(text: &str, offset: usize) -> usize {
    let offset = offset.min(text.len());
    text.as_bytes()[..offset]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
        + 1
}

fn is_glob(key: &str) -> bool {
    key.contains(['*', '?'])
}

/// Whether `pattern` (`*` any run of characters, `?` exactly one) matches all of `name`.
/// Iterative with one backtrack point, so any pattern runs in O(len(pattern) × len(name)).
fn glob_matches(pattern: &str, name: &str) -> bool {
    let pattern: Vec<char> = pattern.chars().collect();
    let name: Vec<char> = name.chars().collect();
    let (mut p, mut n) = (0, 0);
    // The last `*` seen and the name position it was tried at.
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        match pattern.get(p) {
            Some('*') => {
                star = Some((p, n));
                p += 1;
            }
            Some(&c) if c == '?' || c == name[n] => {
                p += 1;
                n += 1;
            }
            _ => match star {
                // Let the last `*` swallow one more character and retry.
                Some((sp, sn)) => {
                    star = Some((sp, sn + 1));
                    p = sp + 1;
                    n = sn + 1;
                }
                None => return false,
            },
        }
    }
    pattern[p..].iter().all(|c| *c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_whole_names() {
        assert!(glob_matches("*", ""));
        assert!(glob_matches("*", "anything"));
        assert!(glob_matches("fs_*", "fs_read"));
        assert!(glob_matches("fs_*", "fs_"));
        assert!(!glob_matches("fs_*", "xfs_read"));
        assert!(glob_matches("git_?og", "git_log"));
        assert!(!glob_matches("git_?og", "git_og"));
        assert!(glob_matches("*_log*", "git_log_all"));
        assert!(glob_matches("a*b*c", "aXbYbZc"));
        assert!(!glob_matches("a*b*c", "aXbYbZ"));
        assert!(glob_matches("é?", "éñ"));
        assert!(!glob_matches("abc", "ab"));
    }

    #[test]
    fn lines_count_from_one() {
        assert_eq!(line_of("a\nb\nc", 0), 1);
        assert_eq!(line_of("a\nb\nc", 2), 2);
        assert_eq!(line_of("a\nb\nc", 4), 3);
        assert_eq!(line_of("a", 99), 1);
    }

    #[test]
    fn mcp_is_not_a_format_to_emit() {
        assert_eq!(parse_emit("mcp"), Some(Emit::Mcp));
        assert_eq!(parse_emit("ctxo"), Some(Emit::Format(FormatId::Ctxo)));
        assert_eq!(parse_emit("CTXO"), None);
        assert!(!format_list().contains("mcp"));
    }
}
