//! Collecting findings: the catalogue decides a rule's severity and whether the profile
//! checks it, so rule code only says what it found.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use serde_json::Value;

use super::FormatId;
use super::mcp::rules as mcp;
use super::rule_catalog::rule;

/// Findings of one document or stream line, for one profile.
#[derive(Debug)]
pub struct Findings {
    profile: Profile,
    line: Option<u64>,
    list: Vec<Finding>,
}

impl Findings {
    pub fn new(profile: Profile) -> Self {
        Findings {
            profile,
            line: None,
            list: Vec::new(),
        }
    }

    pub fn profile(&self) -> Profile {
        self.profile
    }

    /// Findings reported from now on are on stream line `line`.
    pub fn at_line(&mut self, line: u64) {
        self.line = Some(line);
    }

    /// Whether the profile checks rule `id`.
    pub fn checks(&self, id: &str) -> bool {
        rule(id).profile <= self.profile
    }

    /// Records a finding of rule `id` if the profile checks it.
    pub fn report(&mut self, id: &str, pointer: impl Into<String>, message: impl Into<String>) {
        self.report_at(id, pointer, self.line, None, message);
    }

    /// Like [`Findings::report`], with a line and column (syntax errors).
    pub fn report_at(
        &mut self,
        id: &str,
        pointer: impl Into<String>,
        line: Option<u64>,
        column: Option<u64>,
        message: impl Into<String>,
    ) {
        let rule = rule(id);
        if rule.profile > self.profile {
            return;
        }
        self.list.push(Finding {
            rule: rule.id,
            severity: rule.severity,
            pointer: pointer.into(),
            line,
            column,
            message: message.into(),
        });
    }

    /// Puts every finding on line `line`.
    pub fn relocate(&mut self, line: u64) {
        for f in &mut self.list {
            f.line = Some(line);
        }
    }

    pub fn iter(&self) -> std::slice::Iter<'_, Finding> {
        self.list.iter()
    }

    /// Appends `other`'s findings.
    pub fn extend(&mut self, other: Findings) {
        self.list.extend(other.list);
    }

    pub fn into_vec(self) -> Vec<Finding> {
        self.list
    }
}

/// How much is checked. Ordered: each profile checks everything the previous one does.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Profile {
    /// The shipped protocol-v1 validator's verdicts (lenient text, ten rules).
    Compat,
    /// Compat plus: unknown fields, trailing data, duplicate keys, byte-order mark, UTF-8.
    Strict,
    /// Strict plus every MUST of the seed documents.
    #[default]
    Spec,
}

impl Profile {
    pub const ALL: [Profile; 3] = [Profile::Compat, Profile::Strict, Profile::Spec];

    pub fn as_str(self) -> &'static str {
        match self {
            Profile::Compat => "compat",
            Profile::Strict => "strict",
            Profile::Spec => "spec",
        }
    }
}

impl fmt::Display for Profile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Profile {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Profile::ALL
            .into_iter()
            .find(|p| p.as_str() == s)
            .ok_or_else(|| format!("unknown profile {s:?} (expected compat, strict or spec)"))
    }
}

/// Whether a finding makes the document invalid.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// Worth knowing; the document stays valid.
    Warning,
    /// The document is invalid.
    Error,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

/// One thing wrong (or worth knowing) about a document.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// Stable id from [`RULES`](super::rule_catalog::RULES), e.g. `pv1.ts`.
    pub rule: &'static str,
    pub severity: Severity,
    /// JSON Pointer to the offending value (`""`: the whole document or line).
    pub pointer: String,
    /// 1-based line: the stream line, or where a syntax error is in a document.
    pub line: Option<u64>,
    /// 1-based column of a syntax error.
    pub column: Option<u64>,
    pub message: String,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}[{}]", self.severity.as_str(), self.rule)?;
        match (self.line, self.column) {
            (Some(l), Some(c)) => write!(f, " line {l}, column {c}")?,
            (Some(l), None) => write!(f, " line {l}")?,
            _ => {}
        }
        if !self.pointer.is_empty() {
            write!(f, " at {}", self.pointer)?;
        }
        write!(f, ": {}", self.message)
    }
}

/// What to validate against.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// The format; detected from the document when `None`.
    pub format: Option<FormatId>,
    pub profile: Profile,
    /// The tool's output schema: operations `data` and MCP `structuredContent` must conform.
    pub output_schema: Option<Arc<jsonschema::Validator>>,
    /// MCP revision the result claims (`2025-06-18`…): newer block types are findings.
    pub mcp_revision: Option<String>,
}

impl Options {
    pub fn new(format: Option<FormatId>, profile: Profile) -> Self {
        Options {
            format,
            profile,
            ..Options::default()
        }
    }

    /// Compiles `schema` (draft 2020-12 unless it says otherwise; no network, no files).
    pub fn with_output_schema(mut self, schema: &Value) -> Result<Self, String> {
        let validator = jsonschema::validator_for(schema)
            .map_err(|e| format!("the output schema does not compile: {e}"))?;
        self.output_schema = Some(Arc::new(validator));
        Ok(self)
    }

    /// Sets the MCP revision (one of [`mcp::REVISIONS`]).
    pub fn with_mcp_revision(mut self, revision: &str) -> Result<Self, String> {
        if !mcp::REVISIONS.contains(&revision) {
            return Err(format!(
                "unknown MCP revision {revision:?} (expected one of {})",
                mcp::REVISIONS.join(", ")
            ));
        }
        self.mcp_revision = Some(revision.to_string());
        Ok(self)
    }
}

/// Where a value comes from: protocol-v1 allows `progress` only in streams.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Context {
    Document,
    StreamLine,
}

/// Reports every way `value` (at `at`) fails the output schema, as rule `rule`.
pub(crate) fn output_schema(
    schema: &jsonschema::Validator,
    value: &Value,
    at: &str,
    rule: &str,
    findings: &mut Findings,
) {
    for error in schema.iter_errors(value) {
        findings.report(
            rule,
            format!("{at}{}", error.instance_path()),
            format!("does not match the output schema: {error}"),
        );
    }
}
