//! Tool names from operation ids: several model APIs refuse `.` and names over 64
//! characters, so every character outside `[A-Za-z0-9_-]` becomes `_` and the name is cut
//! at 64 (a secret in an id is masked first). Two ids that give one name are refused,
//! naming both.

use std::collections::BTreeMap;

/// The longest tool name.
pub const MAX_TOOL_NAME: usize = 64;

/// The tool name of operation `id`.
///
/// ```
/// use envelope_serve::tool_name;
/// assert_eq!(tool_name("git.log"), "git_log");
/// assert_eq!(tool_name("pets.find/by tag"), "pets_find_by_tag");
/// assert_eq!(tool_name(&format!("ns.{}", "x".repeat(80))).len(), 64);
/// // A secret in a source's name is masked before the rewrite, which would hide it.
/// assert_eq!(tool_name("planted.password=hunter2"), "planted_password____");
/// ```
pub fn tool_name(id: &str) -> String {
    // Ids are made of sources' text (an MCP server's tool and prompt names): a secret in
    // one is masked first, since the rewrite below (`=` to `_`) would hide it from the
    // rules every message to a client passes through later.
    let masked = envelope::shape::redact::redact_text(id).map(|(masked, _)| masked);
    masked
        .as_deref()
        .unwrap_or(id)
        .chars()
        .map(|c| match c {
            'A'..='Z' | 'a'..='z' | '0'..='9' | '_' | '-' => c,
            _ => '_',
        })
        .take(MAX_TOOL_NAME)
        .collect()
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
    /// assert!(e.contains("a.b_c") && e.contains("a_b.c") && e.contains("a_b_c"), "{e}");
    /// ```
    pub fn new<'a>(ids: impl IntoIterator<Item = &'a str>) -> Result<ToolNames, String> {
        let mut to_id = BTreeMap::new();
        for id in ids {
            let name = tool_name(id);
            if let Some(other) = to_id.insert(name.clone(), id.to_owned()) {
                return Err(format!(
                    "operations {other} and {id} would both be the tool {name:?} (characters outside [A-Za-z0-9_-] become _, names are cut at {MAX_TOOL_NAME}): rename one"
                ));
            }
        }
        Ok(ToolNames { to_id })
    }

    /// The operation id of tool `name`.
    pub fn id_of(&self, name: &str) -> Option<&str> {
        self.to_id.get(name).map(String::as_str)
    }
}
