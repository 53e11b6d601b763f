//! Collecting findings: the catalogue decides a rule's severity and whether the profile
//! checks it, so rule code only says what it found. Also what to validate against
//! ([`Options`]) and where a value comes from ([`Context`]).

use std::fmt;
use std::sync::Arc;

use serde_json::Value;

use super::FormatId;
pub use super::rule_catalog::{Profile, Severity, UnknownProfile};
use super::rule_catalog::{UnknownRule, rule};

/// Findings of one document or stream line, for one profile. A format's
/// [`Format::check`](super::Format::check) reports into it; the catalogue
/// ([`RULES`](super::rule_catalog::RULES)) decides each rule's severity and whether the
/// profile checks it.
#[derive(Debug)]
pub struct Findings {
    profile: Profile,
    line: Option<u64>,
    list: Vec<Finding>,
}

impl Findings {
    /// No findings yet; `profile` decides which rules are checked.
    pub fn new(profile: Profile) -> Self {
        Findings {
            profile,
            line: None,
            list: Vec::new(),
        }
    }

    /// The profile the findings are for.
    pub fn profile(&self) -> Profile {
        self.profile
    }

    /// Findings reported from now on are on stream line `line`.
    pub(crate) fn at_line(&mut self, line: u64) {
        self.line = Some(line);
    }

    /// An empty collection for the same profile and stream line (findings gathered apart,
    /// then [`Findings::extend`]ed, keep their line).
    pub(crate) fn sibling(&self) -> Findings {
        Findings {
            profile: self.profile,
            line: self.line,
            list: Vec::new(),
        }
    }

    /// Whether the profile checks rule `id` (an id outside the catalogue: see
    /// [`Findings::report_at`]).
    pub fn checks(&self, id: &'static str) -> bool {
        match rule(id) {
            Ok(rule) => rule.profile <= self.profile,
            Err(unknown) => {
                unknown_rule(&unknown);
                true
            }
        }
    }

    /// Records a finding of rule `id` if the profile checks it.
    pub fn report(
        &mut self,
        id: &'static str,
        pointer: impl Into<String>,
        message: impl Into<String>,
    ) {
        self.report_at(id, pointer, self.line, None, message);
    }

    /// Like [`Findings::report`], with a line and column (syntax errors).
    ///
    /// `id` must be in the catalogue. Every id the library passes is a literal that a unit
    /// test (`rule_catalog::tests::every_reported_id_is_in_the_catalogue`) finds there, so
    /// an unknown id is a bug, and it is never filed under another rule: debug builds
    /// (tests, fuzzing) panic here, naming it; release builds keep the finding under its
    /// own id, as an error in every profile, its message saying that it is an internal
    /// error, so the bug shows and the document is not passed silently.
    pub fn report_at(
        &mut self,
        id: &'static str,
        pointer: impl Into<String>,
        line: Option<u64>,
        column: Option<u64>,
        message: impl Into<String>,
    ) {
        let (id, severity, message) = match rule(id) {
            Ok(rule) if rule.profile > self.profile => return,
            Ok(rule) => (rule.id, rule.severity, message.into()),
            Err(unknown) => {
                unknown_rule(&unknown);
                let message = format!("internal error: {unknown}: {}", message.into());
                (id, Severity::Error, message)
            }
        };
        self.list.push(Finding {
            rule: id,
            severity,
            pointer: pointer.into(),
            line,
            column,
            message,
        });
    }

    /// Puts every finding on line `line`.
    pub(crate) fn relocate(&mut self, line: u64) {
        for f in &mut self.list {
            f.line = Some(line);
        }
    }

    /// The findings, in the order they were reported.
    pub fn iter(&self) -> std::slice::Iter<'_, Finding> {
        self.list.iter()
    }

    /// Appends `other`'s findings.
    pub(crate) fn extend(&mut self, other: Findings) {
        self.list.extend(other.list);
    }

    /// The findings, in the order they were reported.
    pub fn into_vec(self) -> Vec<Finding> {
        self.list
    }
}

/// A rule id outside the catalogue was reported: a bug in this library. Debug builds stop
/// here; release builds go on (see [`Findings::report_at`]).
fn unknown_rule(unknown: &UnknownRule) {
    if cfg!(debug_assertions) {
        panic!("{unknown} (a bug: every reported id must be in RULES)");
    }
}

/// One thing wrong (or worth knowing) about a document.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// Stable id from [`RULES`](super::rule_catalog::RULES), e.g. `pv1.ts` (only a bug in
    /// this library can make it another: see [`Findings::report_at`]).
    pub rule: &'static str,
    /// The rule's severity.
    pub severity: Severity,
    /// JSON Pointer to the offending value (`""`: the whole document or line).
    pub pointer: String,
    /// 1-based line: the stream line, or where a syntax error is in a document.
    pub line: Option<u64>,
    /// 1-based column of a syntax error.
    pub column: Option<u64>,
    /// What is wrong, in words.
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

/// The MCP revisions [`Options::with_mcp_revision`] knows, oldest first.
pub const MCP_REVISIONS: &[&str] = &[
    "2024-11-05",
    "2025-03-26",
    "2025-06-18",
    "2025-11-25",
    "2026-07-28",
];

/// What to validate against.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// The format; detected from the document when `None`.
    pub format: Option<FormatId>,
    /// Which rules are checked.
    pub profile: Profile,
    /// The tool's output schema: operations `data` and MCP `structuredContent` must conform.
    pub output_schema: Option<Arc<jsonschema::Validator>>,
    /// MCP revision the result claims (`2025-06-18`…): newer block types are findings.
    pub mcp_revision: Option<String>,
}

impl Options {
    /// `format` (`None`: detected) checked in `profile`, without an output schema or an
    /// MCP revision.
    pub fn new(format: Option<FormatId>, profile: Profile) -> Self {
        Options {
            format,
            profile,
            ..Options::default()
        }
    }

    /// Compiles `schema` (draft 2020-12 unless it says otherwise; no network, no files).
    pub fn with_output_schema(mut self, schema: &Value) -> Result<Self, InvalidOutputSchema> {
        let validator = jsonschema::validator_for(schema).map_err(|e| InvalidOutputSchema {
            reason: e.to_string(),
        })?;
        self.output_schema = Some(Arc::new(validator));
        Ok(self)
    }

    /// Sets the MCP revision (one of [`MCP_REVISIONS`]).
    ///
    /// ```
    /// use envelope::validate::Options;
    ///
    /// assert!(Options::default().with_mcp_revision("2025-06-18").is_ok());
    /// let e = Options::default().with_mcp_revision("1999-01-01").unwrap_err();
    /// assert_eq!(e.revision(), "1999-01-01");
    /// ```
    pub fn with_mcp_revision(mut self, revision: &str) -> Result<Self, UnknownMcpRevision> {
        if !MCP_REVISIONS.contains(&revision) {
            return Err(UnknownMcpRevision {
                revision: revision.to_string(),
            });
        }
        self.mcp_revision = Some(revision.to_string());
        Ok(self)
    }
}

/// An output schema that does not compile ([`Options::with_output_schema`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the output schema does not compile: {reason}")]
pub struct InvalidOutputSchema {
    reason: String,
}

impl InvalidOutputSchema {
    /// Why the schema does not compile (the `jsonschema` crate's message).
    pub fn reason(&self) -> &str {
        &self.reason
    }
}

/// An MCP revision that is not one of [`MCP_REVISIONS`] ([`Options::with_mcp_revision`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown MCP revision {revision:?} (expected one of {})", MCP_REVISIONS.join(", "))]
pub struct UnknownMcpRevision {
    revision: String,
}

impl UnknownMcpRevision {
    /// The revision that was given.
    pub fn revision(&self) -> &str {
        &self.revision
    }
}

/// Where a value comes from: protocol-v1 allows `progress` only in streams. More contexts
/// may be added, so matches need a wildcard arm.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Context {
    /// A document on its own.
    Document,
    /// One line of an NDJSON stream.
    StreamLine,
}

/// Reports, as rule `rule`, every way `value` (at `at`) fails the output schema.
pub(crate) fn output_schema(
    rule: &'static str,
    schema: &jsonschema::Validator,
    value: &Value,
    at: &str,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_catalogue_decides_severity_and_profile() {
        let mut f = Findings::new(Profile::Compat);
        assert!(f.checks("pv1.ts") && !f.checks("pv1.unknown-field"));
        f.report("pv1.unknown-field", "/x", "skipped in compat");
        f.report("tev1.ts", "/y", "a warning");
        let found = f.into_vec();
        assert_eq!(found.len(), 1);
        assert_eq!(
            (found[0].rule, found[0].severity),
            ("tev1.ts", Severity::Warning)
        );
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "unknown rule id \"pv1.no-such-rule\"")]
    fn an_unknown_id_panics_in_debug_builds() {
        Findings::new(Profile::Spec).report("pv1.no-such-rule", "", "never filed");
    }

    #[test]
    #[cfg(not(debug_assertions))]
    fn an_unknown_id_is_an_internal_error_of_its_own_in_release_builds() {
        for profile in Profile::ALL {
            let mut f = Findings::new(profile);
            assert!(f.checks("pv1.no-such-rule"));
            f.report("pv1.no-such-rule", "/x", "what was found");
            let found = f.into_vec();
            assert_eq!(found.len(), 1);
            assert_eq!(found[0].rule, "pv1.no-such-rule");
            assert_eq!(found[0].severity, Severity::Error);
            assert_eq!(
                found[0].message,
                "internal error: unknown rule id \"pv1.no-such-rule\": not in the rule catalogue: what was found"
            );
        }
    }

    #[test]
    fn option_errors_keep_their_messages() {
        let e = "lax".parse::<Profile>().unwrap_err();
        assert_eq!(
            e.to_string(),
            "unknown profile \"lax\" (expected compat, strict or spec)"
        );
        let e = Options::default()
            .with_mcp_revision("2030-01-01")
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "unknown MCP revision \"2030-01-01\" (expected one of 2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25, 2026-07-28)"
        );
        let e = Options::default()
            .with_output_schema(&serde_json::json!({"type": 5}))
            .unwrap_err();
        assert!(
            e.to_string()
                .starts_with("the output schema does not compile: ")
        );
        assert_eq!(
            e.to_string(),
            format!("the output schema does not compile: {}", e.reason())
        );
    }
}
