//! Tool names from operation ids: several model APIs refuse `.` and names over 64
//! characters, so every character outside `[A-Za-z0-9_-]` becomes `_` (a secret in an id is
//! masked first). A name that fits is that; a longer one is cut and ends with `_` and a
//! short hash of the whole id, so that ids sharing a long prefix (GitHub's API has such
//! groups) stay distinct, and the same id gives the same name in every run and on every
//! machine. Two ids that still give one name (`a.b_c` and `a_b.c`) are refused, naming
//! both: the registry renames either (`rename` in a source, docs/operations.md).

use std::collections::BTreeMap;

/// The longest tool name.
pub const MAX_TOOL_NAME: usize = 64;

/// The hex digits of the hash that ends a cut name (32 bits of SHA-256).
const HASH_DIGITS: usize = 8;

/// The tool name of operation `id`.
///
/// ```
/// use envelope_serve::tool_name;
/// assert_eq!(tool_name("git.log"), "git_log");
/// assert_eq!(tool_name("pets.find/by tag"), "pets_find_by_tag");
/// assert_eq!(tool_name(&format!("ns.{}", "x".repeat(80))).len(), 64);
/// // A name of 64 characters is kept; a longer one is cut, with the hash of the whole id.
/// let fits = format!("ns.{}", "x".repeat(61));
/// assert_eq!(tool_name(&fits), fits.replace('.', "_"));
/// let long = tool_name(&format!("ns.{}", "x".repeat(80)));
/// assert!(long.starts_with(&format!("ns_{}", "x".repeat(52))), "{long}");
/// assert_eq!(long.as_bytes()[55], b'_');
/// assert_ne!(long, tool_name(&format!("ns.{}", "x".repeat(81))));
/// // A secret in a source's name is masked before the rewrite, which would hide it.
/// assert_eq!(tool_name("planted.password=hunter2"), "planted_password____");
/// ```
pub fn tool_name(id: &str) -> String {
    // Ids are made of sources' text (an MCP server's tool and prompt names): a secret in
    // one is masked first, since the rewrite below (`=` to `_`) would hide it from the
    // rules every message to a client passes through later.
    let masked = envelope::shape::redact::redact_text(id).map(|(masked, _)| masked);
    let id = masked.as_deref().unwrap_or(id);
    // ASCII only from here: one byte per character.
    let name: String = id
        .chars()
        .map(|c| match c {
            'A'..='Z' | 'a'..='z' | '0'..='9' | '_' | '-' => c,
            _ => '_',
        })
        .collect();
    if name.len() <= MAX_TOOL_NAME {
        return name;
    }
    let hash = envelope_store::Digest::of(id.as_bytes()).hex();
    format!(
        "{}_{}",
        &name[..MAX_TOOL_NAME - 1 - HASH_DIGITS],
        &hash[..HASH_DIGITS]
    )
}

/// Every operation's tool name, both ways.
#[derive(Clone, Debug, Default)]
pub struct ToolNames {
    to_id: BTreeMap<String, String>,
}

impl ToolNames {
    /// The names of `ids`; two ids with one name are an error naming both.
    ///
    /// ```
    /// use envelope_serve::ToolNames;
    /// let names = ToolNames::new(["git.log", "git.status"]).unwrap();
    /// assert_eq!(names.id_of("git_log"), Some("git.log"));
    /// let e = ToolNames::new(["a.b_c", "a_b.c"]).unwrap_err();
    /// assert_eq!(e.code(), "serve.names");
    /// let e = e.to_string();
    /// assert!(e.contains("a.b_c") && e.contains("a_b.c") && e.contains("a_b_c"), "{e}");
    /// ```
    pub fn new<'a>(ids: impl IntoIterator<Item = &'a str>) -> Result<ToolNames, crate::Error> {
        let mut to_id = BTreeMap::new();
        for id in ids {
            let name = tool_name(id);
            if let Some(other) = to_id.insert(name.clone(), id.to_owned()) {
                return Err(crate::Error::Names(format!(
                    "operations {other} and {id} would both be the tool {name:?} (characters outside [A-Za-z0-9_-] become _): rename one (`rename` in its source of the registry file)"
                )));
            }
        }
        Ok(ToolNames { to_id })
    }

    /// The operation id of tool `name`.
    pub fn id_of(&self, name: &str) -> Option<&str> {
        self.to_id.get(name).map(String::as_str)
    }
}
