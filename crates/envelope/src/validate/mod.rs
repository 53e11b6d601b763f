//! Validation: every finding in a document or an NDJSON stream, each with a stable rule id
//! (the catalogue is [`rules::RULES`]), a JSON Pointer, a line in streams, a severity and a
//! message.
//!
//! ```text
//! bytes ──text checks──► Value ──format rules──► findings
//! ```
//!
//! Profiles form a ladder: `compat` ⊂ `strict` ⊂ `spec`. A rule belongs to the lowest
//! profile that checks it; higher profiles check it too. For protocol-v1, `compat` gives the
//! verdicts of the shipped validator; the other formats have no reference validator, so
//! their rules start at `compat` and only the text checks wait for `strict`.

mod ctxo;
mod findings;
mod mcp;
mod operations;
mod protocol_v1;
pub mod rules;
pub mod stream;
mod text;
mod tool_envelope_v1;
mod tool_result_envelope;

use std::collections::BTreeSet;
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use serde_json::Value;

pub use findings::Findings;
pub use rules::{RULES, Rule};

use crate::formats::FormatId;
use crate::json::pointer;

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
    /// Stable id from [`RULES`], e.g. `pv1.ts`.
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

/// The outcome of validating one document or stream.
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// The format the rules were taken from (`None`: it could not be told).
    pub format: Option<FormatId>,
    pub profile: Profile,
    pub findings: Vec<Finding>,
}

impl Report {
    /// No finding of severity error.
    pub fn is_valid(&self) -> bool {
        !self.findings.iter().any(|f| f.severity == Severity::Error)
    }
}

/// Validates one JSON document.
pub fn validate_document(input: &[u8], options: &Options) -> Report {
    let mut findings = Findings::new(options.profile);
    let format = match text::parse(input, &mut findings) {
        Some(value) => check_value(&value, options, &mut findings, Context::Document),
        None => options.format,
    };
    Report {
        format,
        profile: options.profile,
        findings: findings.into_vec(),
    }
}

/// Where a value comes from: protocol-v1 allows `progress` only in streams.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Context {
    Document,
    StreamLine,
}

/// Applies the rules of the format (given or detected) to a parsed value; returns the format.
fn check_value(
    value: &Value,
    options: &Options,
    findings: &mut Findings,
    context: Context,
) -> Option<FormatId> {
    let format = match options.format {
        Some(format) => format,
        None => match crate::detect::detect_value(value) {
            Ok(d) => d.format,
            Err(e) => {
                findings.report("format.undetected", "", e.to_string());
                return None;
            }
        },
    };
    let mut rules = Findings::new(findings.profile());
    match format {
        FormatId::ProtocolV1 => protocol_v1::check(value, &mut rules, context),
        FormatId::Ctxo => ctxo::check(value, &mut rules),
        FormatId::ToolResultEnvelope => tool_result_envelope::check(value, &mut rules),
        FormatId::ToolEnvelopeV1 => tool_envelope_v1::check(value, &mut rules),
        FormatId::Operations => operations::check(value, options, &mut rules),
        FormatId::Mcp => mcp::check(value, options, &mut rules),
    }
    // The published schema first, then the rules; the compat profile of protocol-v1 is the
    // shipped validator's, which knows no schema.
    if format != FormatId::ProtocolV1 || options.profile > Profile::Compat {
        apply_schema(format, value, &rules, findings);
    }
    findings.extend(rules);
    Some(format)
}

/// Reports what the published schema of `format` rejects, except where a rule already said
/// something about the same subtree (its message is the more precise one).
fn apply_schema(format: FormatId, value: &Value, rules: &Findings, findings: &mut Findings) {
    use jsonschema::error::ValidationErrorKind;
    // Sorted, so "at or above" and "below" are lookups, not scans (a hostile document can
    // have many findings of both kinds); built only when the schema has something to say.
    let mut reported: Option<BTreeSet<&str>> = None;
    for error in crate::schema::validator(format).iter_errors(value) {
        let reported =
            reported.get_or_insert_with(|| rules.iter().map(|f| f.pointer.as_str()).collect());
        let at = error.instance_path().to_string();
        // The places the error is about: a missing or unexpected property is its own place.
        let places: Vec<String> = match error.kind() {
            ValidationErrorKind::Required { property } => {
                vec![pointer::join(&at, property.as_str().unwrap_or_default())]
            }
            ValidationErrorKind::AdditionalProperties { unexpected } => {
                unexpected.iter().map(|p| pointer::join(&at, p)).collect()
            }
            _ => vec![at.clone()],
        };
        if !places.iter().any(|p| covered(reported, p)) {
            findings.report(
                "schema.violation",
                at,
                format!("{} (schemas/{})", error, crate::schema::file_name(format)),
            );
        }
    }
}

/// Whether a rule reported at `place`, above it, or below it.
fn covered(reported: &BTreeSet<&str>, place: &str) -> bool {
    // At or above: `place` and each of its ancestors ("" is the root).
    let mut at = place;
    loop {
        if reported.contains(at) {
            return true;
        }
        match at.rfind('/') {
            Some(slash) => at = &at[..slash],
            None => break,
        }
    }
    // Below: the first pointer after `place/` in order starts with it, if any does.
    let below = format!("{place}/");
    reported
        .range(below.as_str()..)
        .next()
        .is_some_and(|p| p.starts_with(&below))
}

/// Reports every way `value` (at `at`) fails the output schema, as rule `rule`.
fn output_schema(
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
