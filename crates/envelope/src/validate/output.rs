//! The last check before a command writes: its output must be read back by this tool as the
//! format it was written in (`detect` names it, `validate` finds no error), else the
//! command refuses with [`Error::InvalidOutput`] and writes nothing. An output nested
//! deeper than the one depth limit is refused with `json.depth`, the error an input that
//! deep gets.

use crate::error::{Error, JsonErrorKind, Location, Result};
use crate::formats::FormatId;
use crate::formats::findings::{Finding, Options, Profile, Severity};
use crate::json::pointer::is_within;

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
    if spec.is_ok() {
        return spec;
    }
    if let Some(carried) = detected_like_input(output, format, input) {
        return carried;
    }
    // The input is read for its envelope: a large payload member is abridged (see
    // [`InputCheck`]), so that checking an output never builds a big input's tree.
    let input = InputCheck::new(input);
    if input.report(Profile::Spec).is_valid() {
        return spec;
    }
    let input_report = input.report(Profile::Compat);
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

/// An output that reads as another format than the one it was written in, when the input
/// reads as that format too: a tool-envelope-v1 result read and written `--from mcp` stays
/// one, a detection the input brought and the command carried over. The output is then
/// held to the rules of the format it was written in (`None`: any other case). The input
/// is detected in bounded memory ([`Detector`](crate::detect::Detector)).
fn detected_like_input(output: &[u8], format: FormatId, input: &[u8]) -> Option<Result<()>> {
    let found = crate::detect::detect(output).ok()?.format;
    if found == format {
        return None;
    }
    let mut detector = crate::detect::Detector::new();
    detector.feed(input).ok()?;
    if detector.finish().ok()?.format != found {
        return None;
    }
    let report = validate_document(output, &Options::new(Some(format), Profile::Spec));
    Some(match errors(&report).next() {
        Some(finding) => Err(refusal(format, finding)),
        None => Ok(()),
    })
}

/// A payload member larger than this is abridged when the input is validated.
const ABRIDGE_OVER: usize = 64 * 1024;

/// The byte limit the abridged payload member is read for (`json::skim`).
const ABRIDGED_LIMIT: usize = 4 * 1024;

/// The input of a command, validated to tell which defects of its output it brought.
///
/// Those are the envelope's defects: the payload passes through a command as data. When
/// the input is a protocol-v1 or operations document whose `data` member takes more than
/// [`ABRIDGE_OVER`] bytes, it is validated with that member abridged: the member is read
/// with `json::skim` for [`ABRIDGED_LIMIT`] bytes (objects whole, arrays only the items a
/// cut of that size could keep; nothing else is built), written back in its place, and the
/// findings at or below `/data` are dropped (they would be about the abridged member). So
/// is a root `error` or `message` member holding a string longer than a cut of that size
/// keeps (a failing command's whole log as an error's message), in any format: the string
/// read as its start. (Not the other members: detection and the rules read their texts,
/// an MCP text's embedded document or its mirror.) The rest of the document is validated as written, so its findings are the whole
/// input's; a defect inside an abridged member is not counted as the input's, so an output
/// is never let off for it (it is held to the stricter profile instead). Without an
/// abridgement (a small input, nothing to abridge, a key written twice, a document the
/// skim reader gives up on) the input is validated whole.
struct InputCheck<'a> {
    input: &'a [u8],
    /// The abridged document and the pointers of its abridged members, when there is one.
    abridged: Option<(Vec<u8>, Vec<String>)>,
}

impl<'a> InputCheck<'a> {
    fn new(input: &'a [u8]) -> Self {
        InputCheck {
            input,
            abridged: abridge(input),
        }
    }

    fn report(&self, profile: Profile) -> Report {
        let options = Options::new(None, profile);
        match &self.abridged {
            None => validate_document(self.input, &options),
            Some((text, abridged)) => {
                let mut report = validate_document(text, &options);
                report
                    .findings
                    .retain(|f| !abridged.iter().any(|member| is_within(&f.pointer, member)));
                report
            }
        }
    }
}

/// `input` with its large members abridged (see [`InputCheck`]), when it has one, and
/// their pointers.
fn abridge(input: &[u8]) -> Option<(Vec<u8>, Vec<String>)> {
    if input.len() <= ABRIDGE_OVER {
        return None;
    }
    let skimmed = crate::json::skim::read_for_cut(input, ABRIDGED_LIMIT)?;
    let format = crate::detect::detect_value(&skimmed.value).ok()?.format;
    let payload_in_data = matches!(format, FormatId::ProtocolV1 | FormatId::Operations);
    let mut text = Vec::new();
    let mut abridged = Vec::new();
    let mut copied = 0;
    for (at, (key, range)) in skimmed.members.iter().enumerate() {
        if skimmed.members[..at].iter().any(|(k, _)| k == key) {
            return None; // Written twice: the value holds the last one's.
        }
        let pointer = crate::json::pointer::join("", key);
        let holds_long_string = skimmed
            .strings
            .iter()
            .any(|s| is_within(&s.pointer, &pointer));
        // Only an error's message: detection and the rules read the texts of the other
        // members (an MCP text's embedded document, its mirror).
        let long_message = holds_long_string && (key == "error" || key == "message");
        let large_data = payload_in_data && key == "data" && range.len() > ABRIDGE_OVER;
        if !(long_message || large_data) {
            continue;
        }
        text.extend_from_slice(&input[copied..range.start]);
        let member = skimmed.value.get(key)?;
        text.extend_from_slice(&crate::json::to_vec(member, crate::json::Dialect::Js));
        copied = range.end;
        abridged.push(pointer);
    }
    if abridged.is_empty() {
        return None;
    }
    text.extend_from_slice(&input[copied..]);
    Some((text, abridged))
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A protocol-v1 document with a command outside the spec's pattern and a `data` of
    /// `rows` rows.
    fn document(rows: usize) -> Vec<u8> {
        let rows: Vec<String> = (0..rows)
            .map(|i| format!(r#"{{"id":{i},"name":"row {i}","tags":["a","b"]}}"#))
            .collect();
        format!(
            r#"{{"version":1,"status":"ok","command":"bench","data":{{"rows":[{}],"total":{}}},"meta":{{"ts":"2026-01-01T00:00:00Z"}},"error":{{}}}}"#,
            rows.join(","),
            rows.len()
        )
        .into_bytes()
    }

    fn findings(report: &Report) -> Vec<(&'static str, String)> {
        report
            .findings
            .iter()
            .map(|f| (f.rule, f.pointer.clone()))
            .collect()
    }

    #[test]
    fn a_large_payload_member_is_abridged_and_the_envelope_findings_are_the_whole_inputs() {
        let doc = document(20_000);
        let (abridged, members) = abridge(&doc).expect("a large data member is abridged");
        assert_eq!(members, ["/data"]);
        assert!(
            abridged.len() < 2 * ABRIDGED_LIMIT,
            "{} bytes abridged of {}",
            abridged.len(),
            doc.len()
        );
        // The rest of the document is as written.
        let text = String::from_utf8(abridged).unwrap();
        assert!(text.starts_with(
            r#"{"version":1,"status":"ok","command":"bench","data":{"rows":[{"id":0,"#
        ));
        assert!(
            text.ends_with(r#","total":20000},"meta":{"ts":"2026-01-01T00:00:00Z"},"error":{}}"#)
        );
        let check = InputCheck::new(&doc);
        for profile in [Profile::Spec, Profile::Compat] {
            let whole = validate_document(&doc, &Options::new(None, profile));
            let mut expected = findings(&whole);
            expected.retain(|(_, p)| p != "/data" && !p.starts_with("/data/"));
            assert_eq!(findings(&check.report(profile)), expected, "{profile:?}");
        }
        // The command defect is found in the abridged input, so it is the input's.
        assert!(!check.report(Profile::Spec).is_valid());
    }

    #[test]
    fn small_inputs_and_small_payloads_are_validated_whole() {
        assert!(abridge(&document(10)).is_none());
        // Large, but not in `data`, nor a long string: the member stays, the document is
        // validated whole.
        let big_meta = String::from_utf8(document(1)).unwrap().replace(
            r#""ts":"#,
            &format!(r#""note":[{}],"ts":"#, vec!["1"; 50_000].join(",")),
        );
        assert!(abridge(big_meta.as_bytes()).is_none());
        // Not a format whose payload is one member.
        let ctxo = format!(r#"{{"results":[{}]}}"#, vec!["1"; 50_000].join(","));
        assert!(abridge(ctxo.as_bytes()).is_none());
    }

    /// A failing command's whole log as an error's message, in any format: the member
    /// holding it is abridged (the message read as its start), and the findings are the
    /// whole input's but for those in that member.
    #[test]
    fn a_long_string_s_member_is_abridged_in_any_format() {
        let log = "line of a log \"quoted\"\n".repeat(10_000);
        let message = serde_json::to_string(&log).unwrap();
        let pv1 = format!(
            r#"{{"version":1,"status":"error","command":"a.b","data":null,"meta":{{"ts":"2026-01-01T00:00:00Z"}},"error":{{"code":"ERUNTIME","message":{message}}}}}"#
        );
        let ctxo = format!(r#"{{"error":true,"message":{message}}}"#);
        for (doc, member) in [(pv1, "/error"), (ctxo, "/message")] {
            let (abridged, members) = abridge(doc.as_bytes()).expect("abridged");
            assert_eq!(members, [member]);
            assert!(abridged.len() < 2 * ABRIDGED_LIMIT, "{}", abridged.len());
            let check = InputCheck::new(doc.as_bytes());
            for profile in [Profile::Spec, Profile::Compat] {
                let whole = validate_document(doc.as_bytes(), &Options::new(None, profile));
                let mut expected = findings(&whole);
                expected.retain(|(_, p)| p != member && !p.starts_with(&format!("{member}/")));
                assert_eq!(findings(&check.report(profile)), expected, "{profile:?}");
            }
        }
    }

    #[test]
    fn a_large_inputs_defect_is_carried_over_and_a_new_one_refused() {
        let doc = document(20_000);
        let carried = br#"{"version":1,"status":"ok","command":"bench","data":{"summary":"20000 rows"},"meta":{"ts":"2026-01-01T00:00:00Z"},"error":{}}"#;
        check_output_of(carried, FormatId::ProtocolV1, &doc).unwrap();
        let invented = br#"{"version":1,"status":"ok","command":"bench","data":{"summary":"20000 rows"},"meta":{"ts":"2026-01-01T00:00:00+02:00"},"error":{}}"#;
        let refused = check_output_of(invented, FormatId::ProtocolV1, &doc).unwrap_err();
        assert!(
            matches!(refused, Error::InvalidOutput { rule: "pv1.ts", .. }),
            "{refused}"
        );
    }

    /// A tool-envelope-v1 result written as `mcp`: carried over when the input read as
    /// tool-envelope-v1 too, refused when the input did not.
    #[test]
    fn a_detection_is_carried_over_only_from_an_input_that_reads_the_same() {
        let block = crate::base64::encode(
            br#"{"payload":{"n":1},"meta":{"tool":"t","ts":"2026-07-04T00:00:00Z","version":1}}"#,
        );
        let tev1 = format!(
            r#"{{"content":[{{"type":"text","text":"done"}},{{"type":"text","text":"__ENVELOPE_V1__:{block}"}}]}}"#
        );
        let plain = br#"{"content":[{"type":"text","text":"done"}]}"#;
        assert!(check_output_of(tev1.as_bytes(), FormatId::Mcp, tev1.as_bytes()).is_ok());
        let refused = check_output_of(tev1.as_bytes(), FormatId::Mcp, plain).unwrap_err();
        assert_eq!(refused.code(), "output.invalid");
        assert!(
            refused.to_string().contains("tool-envelope-v1"),
            "{refused}"
        );
    }
}
