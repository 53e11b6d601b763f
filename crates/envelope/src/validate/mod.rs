//! Validation: every finding in a document or an NDJSON stream, each with a stable rule id
//! (the catalogue is [`RULES`]), a JSON Pointer, a line in streams, a severity and a
//! message.
//!
//! ```text
//! bytes ──text checks──► Value ──published schema──► format rules ──► findings
//! ```
//!
//! Profiles form a ladder: `compat` ⊂ `strict` ⊂ `spec`. A rule belongs to the lowest
//! profile that checks it; higher profiles check it too. For protocol-v1, `compat` gives the
//! verdicts of the shipped validator; the other formats have no reference validator, so
//! their rules start at `compat` and only the text checks wait for `strict`.
//!
//! [`validate_document`] checks one document, [`stream::validate_stream`] an NDJSON stream.

pub mod stream;
mod text;

use std::collections::BTreeSet;

use serde_json::Value;

pub use crate::formats::findings::{
    Context, Finding, Findings, InvalidOutputSchema, MCP_REVISIONS, Options, Profile, Severity,
    UnknownMcpRevision, UnknownProfile,
};
pub use crate::formats::rule_catalog::{RULES, Rule, UnknownRule, rule};

use crate::formats::FormatId;
use crate::json::pointer;

/// The outcome of validating one document or stream.
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// The format the rules were taken from (`None`: it could not be told).
    pub format: Option<FormatId>,
    /// The profile the document or stream was checked in.
    pub profile: Profile,
    /// Every finding, in the order found (a stream's are capped, see [`stream`]).
    pub findings: Vec<Finding>,
}

impl Report {
    /// No finding of severity error.
    pub fn is_valid(&self) -> bool {
        !self.findings.iter().any(|f| f.severity == Severity::Error)
    }
}

/// Validates one JSON document: its text, then (when it is JSON) the published schema and
/// the rules of its format, given in `options` or detected. Never fails: what is wrong is
/// in the report's findings.
///
/// ```
/// use envelope::FormatId;
/// use envelope::validate::{Options, Profile, Severity, validate_document};
///
/// let options = Options::new(None, Profile::Spec);
/// let valid = br#"{"version":1,"status":"ok","command":"fs/ls","data":[],"meta":{"ts":"2026-07-04T00:00:00Z"},"error":{}}"#;
/// let report = validate_document(valid, &options);
/// assert!(report.is_valid());
/// assert_eq!(report.format, Some(FormatId::ProtocolV1));
///
/// // A timestamp that is not UTC: one finding, with its rule id and a JSON Pointer.
/// let invalid = br#"{"version":1,"status":"ok","command":"fs/ls","data":[],"meta":{"ts":"2026-07-04T00:00:00+02:00"},"error":{}}"#;
/// let report = validate_document(invalid, &options);
/// assert!(!report.is_valid());
/// assert_eq!(report.findings.len(), 1);
/// let finding = &report.findings[0];
/// assert_eq!((finding.rule, finding.pointer.as_str()), ("pv1.ts", "/meta/ts"));
/// assert_eq!(finding.severity, Severity::Error);
///
/// // Text that is not JSON has a line and a column instead.
/// let report = validate_document(b"{\"version\": 1,\n \"status\": }", &options);
/// assert_eq!(report.findings[0].rule, "json.syntax");
/// assert_eq!((report.findings[0].line, report.findings[0].column), (Some(2), Some(12)));
/// ```
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
    crate::formats::get(format).check(value, options, context, &mut rules);
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
    for error in crate::formats::schema::validator(format).iter_errors(value) {
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
                format!(
                    "{} (schemas/{})",
                    error,
                    crate::formats::schema::file_name(format)
                ),
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
