//! The last check before a command writes: its output must be read back by this tool as the
//! format it was written in (`detect` names it, `validate` finds no error), else the
//! command refuses with [`Error::InvalidOutput`] and writes nothing. An output nested
//! deeper than the one depth limit is refused with `json.depth`, the error an input that
//! deep gets.

use crate::error::{Error, JsonErrorKind, Location, Result};
use crate::formats::FormatId;
use crate::formats::findings::{Finding, Options, Profile, Severity};

use super::stream::StreamValidator;
use super::{Report, validate_document};

/// Checks `output`, written as `format`, in `profile`.
///
/// # Errors
///
/// [`Error::InvalidOutput`] with the first error finding (or `format.undetected` when
/// another format, or none, is detected); [`Error::Json`] of kind
/// [`Depth`](JsonErrorKind::Depth) when the output is nested deeper than the limit.
pub fn check_output(output: &[u8], format: FormatId, profile: Profile) -> Result<()> {
    let report = report_of(output, format, profile);
    if let Some(finding) = errors(&report).next() {
        return Err(refusal(format, finding));
    }
    detected_as(&report, format)
}

fn errors(report: &Report) -> impl Iterator<Item = &Finding> {
    report
        .findings
        .iter()
        .filter(|f| f.severity == Severity::Error)
}

/// `Ok` when the report's format is `format`.
fn detected_as(report: &Report, format: FormatId) -> Result<()> {
    if report.format == Some(format) {
        return Ok(());
    }
    let found = report.format.map_or("no format", FormatId::as_str);
    Err(Error::InvalidOutput {
        rule: "format.undetected",
        message: format!("{format}: the output would be detected as {found}"),
        location: Location::pointer(""),
    })
}

/// Checks the output of a command that read `input`: valid in the `spec` profile; when the
/// input itself is not spec-valid, valid in `compat` (a defect the input brought, such as
/// a protocol-v1 command outside the pattern, is carried over, not invented); when the
/// input is not even compat-valid, the output may break only rules the input breaks too
/// (a defective document shaped or read back keeps its defects, and gets no new one). The
/// input is validated only when the output fails `spec`.
///
/// # Errors
///
/// As [`check_output`], for the profile the output is held to.
pub fn check_output_of(output: &[u8], format: FormatId, input: &[u8]) -> Result<()> {
    let spec = check_output(output, format, Profile::Spec);
    if spec.is_ok() || validate_document(input, &Options::new(None, Profile::Spec)).is_valid() {
        return spec;
    }
    let input_report = validate_document(input, &Options::new(None, Profile::Compat));
    if input_report.is_valid() {
        return check_output(output, format, Profile::Compat);
    }
    let report = report_of(output, format, Profile::Compat);
    let inherited = |f: &&Finding| input_report.findings.iter().any(|i| i.rule == f.rule);
    match errors(&report).find(|f| !inherited(f)) {
        Some(finding) => Err(refusal(format, finding)),
        None => detected_as(&report, format),
    }
}

/// The validation report of `output`. protocol-v1 is written one envelope per line, and a
/// `progress` event is valid only as a line of a stream: a one-line protocol-v1 output is
/// checked as a line of independent envelopes (every rule of a document, `progress` allowed
/// with its `meta.seq` and `data.pct`).
fn report_of(output: &[u8], format: FormatId, profile: Profile) -> Report {
    let options = Options::new(None, profile);
    match output.strip_suffix(b"\n") {
        Some(line) if format == FormatId::ProtocolV1 && !line.contains(&b'\n') => {
            let mut stream = StreamValidator::new(options).independent();
            stream.line(1, line, true);
            stream.finish()
        }
        _ => validate_document(output, &options),
    }
}

fn refusal(format: FormatId, finding: &Finding) -> Error {
    let location = Location {
        line: finding.line.map(|l| l as usize),
        column: finding.column.map(|c| c as usize),
        offset: None,
        pointer: Some(finding.pointer.clone()),
    };
    if finding.rule == "json.depth" {
        return Error::Json {
            kind: JsonErrorKind::Depth,
            message: crate::json::parse::depth_message(),
            location,
        };
    }
    Error::InvalidOutput {
        rule: finding.rule,
        message: format!("{format}: {}", finding.message),
        location,
    }
}
