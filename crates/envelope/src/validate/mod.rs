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

pub(crate) mod abridged;
mod duplicates;
mod keys_only;
mod long_text;
mod mirror;
pub mod output;
pub mod stream;
mod text;

use std::collections::BTreeSet;

use serde_json::Value;

pub use crate::formats::findings::{
    Context, Finding, Findings, InvalidOutputSchema, MCP_REVISIONS, Options, Profile, Severity,
    UnknownMcpRevision, UnknownProfile,
};
pub use crate::formats::rule_catalog::{RULES, Rule, UnknownRule, rule};
pub use output::{check_output, check_output_of};

use crate::formats::FormatId;
use crate::json::pointer;

/// The outcome of validating one document or stream.
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// The format the rules were taken from (`None`: it could not be told, or the lines of
    /// an [independent](stream::StreamValidator::independent) stream have several: see
    /// [`Report::formats`]). A job-event stream is a protocol-v1 stream.
    pub format: Option<FormatId>,
    /// Every format whose rules were applied, in the order first met: the document's, or
    /// those of a stream's lines.
    pub formats: Vec<FormatId>,
    /// What kind of NDJSON stream it was (`None`: a document, or a stream with no envelope).
    pub stream: Option<StreamKind>,
    /// The profile the document or stream was checked in.
    pub profile: Profile,
    /// Every finding, in the order found (a stream's are capped, see [`stream`]). In a
    /// stream, every finding about a line has that line's number.
    pub findings: Vec<Finding>,
}

impl Report {
    /// No finding of severity error.
    pub fn is_valid(&self) -> bool {
        !self.findings.iter().any(|f| f.severity == Severity::Error)
    }
}

/// The kind of an NDJSON stream ([`Report::stream`]). Kinds may be added, so matches need a
/// wildcard arm.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum StreamKind {
    /// protocol-v1 progress envelopes, then one terminal `ok`/`error` envelope.
    Progress,
    /// protocol-v1 job events, `{ts, message?, percent?, meta?}` per line.
    JobEvents,
    /// One envelope of another format per line (no rules across lines).
    Envelopes,
    /// Every line a document of its own (a log, a batch): its own format, no rules across
    /// lines ([`stream::StreamValidator::independent`]).
    Independent,
}

impl StreamKind {
    /// `progress`, `job-events`, `envelopes` or `independent`.
    pub fn as_str(self) -> &'static str {
        match self {
            StreamKind::Progress => "progress",
            StreamKind::JobEvents => "job-events",
            StreamKind::Envelopes => "envelopes",
            StreamKind::Independent => "independent",
        }
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
    validate_document_over(input, options, ABRIDGE_OVER)
}

/// A document larger than this is validated with its payload abridged, when its format
/// allows it (see [`validate_document_over`]).
pub const ABRIDGE_OVER: usize = 1 << 20;

/// [`validate_document`], reading a document of more than `abridge_over` bytes with its
/// payload abridged: the envelope is built as a tree and the payload (protocol-v1 and
/// operations `data`, root members no format's detection reads) is walked without being
/// built, so the memory it takes is about the input's instead of 14 times it. The
/// findings are the same either way; `abridge_over` chooses the memory and the speed only
/// (a document that needs its whole payload, such as operations with an output schema, is
/// read twice when it is over: once to find that out). [`validate_document`] abridges over
/// [`ABRIDGE_OVER`]; `usize::MAX` never abridges.
pub fn validate_document_over(input: &[u8], options: &Options, abridge_over: usize) -> Report {
    if input.len() > abridge_over
        && let Some(report) = abridged::validate(input, options)
    {
        return report;
    }
    let mut findings = Findings::new(options.profile);
    let format = match text::parse_with(input, &mut findings, keys_only::read) {
        Some(mut parsed) => {
            // An MCP result's `_meta` was read as its keys: whole again for a format that
            // reads more of it.
            let format = match options.format {
                Some(format) => Some(format),
                None => crate::detect::detect_value(&parsed.value)
                    .ok()
                    .map(|d| d.format),
            };
            if let Some(format) = format
                && keys_only::restore(&mut parsed.value, &parsed.text, format).is_none()
            {
                // Never (the member was read): fail closed, read whole again rather than
                // let a rule read the keys in the member's place.
                match text::read(&parsed.text) {
                    Ok((value, _)) => parsed.value = value,
                    Err(e) => findings.report("json.syntax", "", e.to_string()),
                }
            }
            check_value(
                &parsed.value,
                Some(&parsed.text),
                options,
                &mut findings,
                Context::Document,
            )
        }
        None => options.format,
    };
    Report {
        format,
        formats: format.into_iter().collect(),
        stream: None,
        profile: options.profile,
        findings: findings.into_vec(),
    }
}

/// Applies the rules of the format (given or detected) to a parsed value, read from `text`;
/// returns the format.
fn check_value(
    value: &Value,
    text: Option<&str>,
    options: &Options,
    findings: &mut Findings,
    context: Context,
) -> Option<FormatId> {
    check_value_view(value, text, options, findings, context, None).0
}

/// What the rules need to know of a value read with its payload abridged ([`abridged`]).
struct View<'a> {
    /// The number of items of its abridged arrays.
    items: &'a abridged::ItemCounts,
    /// The whole text of block 1 when the value holds a prefix of it (a long text, see
    /// [`long_text`]).
    tev1_block: Option<&'a str>,
}

/// [`check_value`], also returning the value the rules read when it is not `value`: the Go
/// view of a protocol-v1 document in compat (see
/// [`go_view`](crate::formats::protocol_v1::rules::go_view)). `abridged`: `value` was read
/// with its payload abridged ([`abridged`]); the Go view is then abridged too.
fn check_value_view(
    value: &Value,
    text: Option<&str>,
    options: &Options,
    findings: &mut Findings,
    context: Context,
    abridged: Option<View<'_>>,
) -> (Option<FormatId>, Option<Value>) {
    let format = match options.format {
        Some(format) => format,
        None => match crate::detect::detect_value(value) {
            Ok(d) => d.format,
            Err(e) => {
                findings.report("format.undetected", "", e.to_string());
                return (None, None);
            }
        },
    };
    // Gathered apart (the schema layer looks at them), on the same stream line.
    let mut rules = findings.sibling();
    // compat is the shipped validator: its rules see the document as Go's decoder fills the
    // Go types (keys in any case, repeated keys read again on top of each other).
    let go_view = match text {
        Some(text) if format == FormatId::ProtocolV1 && options.profile == Profile::Compat => {
            crate::formats::protocol_v1::rules::go_view(text, &mut rules, abridged.is_some())
        }
        _ => None,
    };
    let checked = go_view.as_ref().unwrap_or(value);
    match (format, abridged) {
        (FormatId::Ctxo, Some(view)) => {
            crate::formats::ctxo::rules::check_counted(checked, Some(view.items), &mut rules);
        }
        (FormatId::ToolEnvelopeV1, Some(view)) => {
            crate::formats::tool_envelope_v1::rules::check_abridged(
                checked,
                view.tev1_block,
                &mut rules,
            );
        }
        _ => crate::formats::get(format).check(checked, options, context, &mut rules),
    }
    // The published schema first, then the rules; the compat profile of protocol-v1 is the
    // shipped validator's, which knows no schema.
    if format != FormatId::ProtocolV1 || options.profile > Profile::Compat {
        apply_schema(format, value, &rules, findings);
    }
    findings.extend(rules);
    (Some(format), go_view)
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
