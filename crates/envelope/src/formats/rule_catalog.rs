//! The rule catalogue: every finding's id, the lowest [`Profile`] that checks it, its
//! [`Severity`] and what it means. Ids are stable: tools may match on them.
//!
//! ```
//! use envelope::validate::{Profile, Severity, rule};
//!
//! let ts = rule("pv1.ts").unwrap();
//! assert_eq!((ts.profile, ts.severity), (Profile::Compat, Severity::Error));
//! // An id that is not in the catalogue is an error, never another rule.
//! assert_eq!(rule("pv1.tz").unwrap_err().id(), "pv1.tz");
//! ```

use std::fmt;
use std::str::FromStr;

/// How much is checked. Ordered: each profile checks everything the previous one does.
///
/// Profiles may be added, so matches need a wildcard arm; compare profiles with `<=` to ask
/// whether one checks everything another does.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum Profile {
    /// The shipped protocol-v1 validator's verdicts: its ten rules, and the text and types
    /// its Go decoder (`json.Unmarshal`) accepts.
    Compat,
    /// Compat plus: unknown fields, duplicate keys, invalid UTF-8, lone surrogates.
    Strict,
    /// Strict plus every MUST of the seed documents.
    #[default]
    Spec,
}

impl Profile {
    /// Every profile, from the least to the most checked (the array grows with them).
    pub const ALL: [Profile; 3] = [Profile::Compat, Profile::Strict, Profile::Spec];

    /// The profile's name (`compat`, `strict`, `spec`), as [`Profile::from_str`] reads it.
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
    type Err = UnknownProfile;

    /// The profile named `s` (`compat`, `strict`, `spec`).
    ///
    /// ```
    /// use envelope::validate::Profile;
    ///
    /// assert_eq!("strict".parse::<Profile>(), Ok(Profile::Strict));
    /// let e = "lax".parse::<Profile>().unwrap_err();
    /// assert_eq!(e.to_string(), r#"unknown profile "lax" (expected compat, strict or spec)"#);
    /// ```
    fn from_str(s: &str) -> Result<Self, UnknownProfile> {
        Profile::ALL
            .into_iter()
            .find(|p| p.as_str() == s)
            .ok_or_else(|| UnknownProfile {
                name: s.to_string(),
            })
    }
}

/// A profile name [`Profile::from_str`] does not know.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown profile {name:?} (expected {})", one_of(&Profile::ALL.map(Profile::as_str)))]
pub struct UnknownProfile {
    name: String,
}

impl UnknownProfile {
    /// The name that was given.
    pub fn name(&self) -> &str {
        &self.name
    }
}

/// `a, b or c`.
fn one_of(names: &[&str]) -> String {
    match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => names.join(""),
    }
}

/// Whether a finding makes the document invalid. More levels may be added (a hint below
/// a warning), so matches need a wildcard arm; [`Report::is_valid`] says whether any
/// finding is an error.
///
/// [`Report::is_valid`]: crate::validate::Report::is_valid
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum Severity {
    /// Worth knowing; the document stays valid.
    Warning,
    /// The document is invalid.
    Error,
}

impl Severity {
    /// `warning` or `error`, as reports print it.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

/// One rule of the catalogue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rule {
    /// The stable id findings carry, `<area>.<name>` (`pv1.ts`, `json.syntax`).
    pub id: &'static str,
    /// The lowest profile that checks the rule.
    pub profile: Profile,
    /// How much a finding of the rule weighs.
    pub severity: Severity,
    /// What a finding of the rule means, in one line (`--list-rules` prints it).
    pub summary: &'static str,
}

const fn error(id: &'static str, profile: Profile, summary: &'static str) -> Rule {
    Rule {
        id,
        profile,
        severity: Severity::Error,
        summary,
    }
}

const fn warning(id: &'static str, profile: Profile, summary: &'static str) -> Rule {
    Rule {
        id,
        profile,
        severity: Severity::Warning,
        summary,
    }
}

use Profile::{Compat, Spec, Strict};

/// Every rule, grouped by what it applies to.
pub const RULES: &[Rule] = &[
    // The JSON text.
    error("json.syntax", Compat, "the text is not JSON"),
    error(
        "json.eof",
        Compat,
        "the text ends inside the document (truncated)",
    ),
    error(
        "json.depth",
        Compat,
        "arrays and objects nested deeper than 127 levels",
    ),
    error(
        "text.bom",
        Compat,
        "a byte-order mark before the document (Go and JS readers refuse it)",
    ),
    error(
        "text.utf8",
        Strict,
        "bytes that are not UTF-8 (read as U+FFFD)",
    ),
    error(
        "text.surrogate",
        Strict,
        "a \\u escape of a lone UTF-16 surrogate (read as U+FFFD)",
    ),
    error(
        "text.trailing-data",
        Compat,
        "something after the document (Go's json.Unmarshal refuses it)",
    ),
    error(
        "text.duplicate-key",
        Strict,
        "an object has the same key twice (the last one wins)",
    ),
    // Which format.
    error(
        "format.undetected",
        Compat,
        "no envelope format recognised (give --format)",
    ),
    error(
        "schema.violation",
        Compat,
        "the published JSON Schema of the format rejects the value",
    ),
    // protocol-v1: the shipped validator (compat).
    error(
        "pv1.not-object",
        Compat,
        "the envelope is not a JSON object",
    ),
    error(
        "pv1.type",
        Compat,
        "a known field has the wrong JSON type (Go's decoder would fail)",
    ),
    error("pv1.version", Compat, "version is not 1"),
    error("pv1.command", Compat, "command is missing or blank"),
    error(
        "pv1.status",
        Compat,
        "status is not ok or error (progress only in streams)",
    ),
    error(
        "pv1.ok-with-error",
        Compat,
        "an ok envelope carries an error code or message",
    ),
    error(
        "pv1.error-incomplete",
        Compat,
        "an error envelope lacks error.code or error.message",
    ),
    error(
        "pv1.ts",
        Compat,
        "meta.ts is missing, blank, not RFC 3339 or not UTC with Z",
    ),
    error(
        "pv1.artifact",
        Compat,
        "data.artifact does not start with sha256: or differs from meta.cas_digest",
    ),
    error(
        "pv1.cas-digest-without-artifact",
        Compat,
        "meta.cas_digest is set but data.artifact is not",
    ),
    error(
        "pv1.cache-key",
        Compat,
        "meta.source is cache but meta.cache_key is blank",
    ),
    error(
        "pv1.memory",
        Compat,
        "meta.source is memory but meta.memory.name or .type is blank",
    ),
    error(
        "pv1.status-code",
        Compat,
        "an error envelope's data.summary.status_code is outside 400-599",
    ),
    // protocol-v1: strict.
    error(
        "pv1.unknown-field",
        Strict,
        "a field the protocol does not define",
    ),
    // protocol-v1: the seed document's MUSTs (spec).
    error(
        "pv1.command-pattern",
        Spec,
        "command does not match ^[a-z0-9][a-z0-9-]*/[a-z0-9][a-z0-9-]*$",
    ),
    error(
        "pv1.duration",
        Spec,
        "meta.duration_ms is not an integer >= 0",
    ),
    error(
        "pv1.error-code",
        Spec,
        "error.code is not in the error catalogue",
    ),
    error(
        "pv1.digest",
        Spec,
        "a digest does not match ^sha256:[0-9a-f]{64}$",
    ),
    error(
        "pv1.preview-size",
        Spec,
        "data.summary.preview is 1 KB or more",
    ),
    error(
        "pv1.ok-error-object",
        Spec,
        "an ok envelope's error is not {} or null",
    ),
    // NDJSON streams.
    error(
        "stream.line-too-long",
        Compat,
        "a line longer than the line-length cap (not read)",
    ),
    error("stream.truncated", Compat, "the stream ends inside a line"),
    warning("stream.blank-line", Compat, "an empty line"),
    warning(
        "stream.more-findings",
        Compat,
        "more findings than a report keeps (counted)",
    ),
    error("stream.empty", Compat, "no envelope in the stream"),
    error(
        "stream.seq",
        Compat,
        "progress meta.seq does not start at 0 or does not increase",
    ),
    error(
        "stream.pct",
        Compat,
        "progress data.pct outside 0-100 or decreasing",
    ),
    error(
        "stream.terminal",
        Compat,
        "not exactly one terminal ok/error envelope, last",
    ),
    error(
        "stream.after-terminal",
        Compat,
        "a line after the terminal envelope",
    ),
    error(
        "stream.kind",
        Compat,
        "a line of another kind than the stream's first line",
    ),
    error(
        "job.ts",
        Compat,
        "a job event's ts is missing or not RFC 3339",
    ),
    error(
        "job.type",
        Compat,
        "a job event's message, percent or meta has the wrong type",
    ),
    error(
        "job.percent",
        Compat,
        "a job event's percent is outside 0-100",
    ),
    error(
        "job.unknown-field",
        Strict,
        "a job event field other than ts, message, percent, meta",
    ),
    // ctxo.
    error(
        "ctxo.not-object",
        Compat,
        "the payload is not a JSON object",
    ),
    error("ctxo.meta-missing", Compat, "no _meta object"),
    error("ctxo.meta-type", Compat, "a _meta field has the wrong type"),
    error(
        "ctxo.returned-gt-total",
        Compat,
        "_meta.returnedItems is greater than totalItems",
    ),
    error(
        "ctxo.truncated-flag",
        Compat,
        "_meta.truncated is not exactly returnedItems < totalItems",
    ),
    error("ctxo.hint", Compat, "a truncated payload has no _meta.hint"),
    error(
        "ctxo.array-length",
        Compat,
        "no truncatable array has returnedItems items",
    ),
    // tool-envelope-v1.
    error(
        "tev1.shape",
        Compat,
        "not two text blocks (summary, envelope)",
    ),
    error(
        "tev1.prefix",
        Compat,
        "block 1 lacks __ENVELOPE_V<n>__: or names a version other than 1",
    ),
    error(
        "tev1.base64",
        Compat,
        "the envelope block is not strict standard base64",
    ),
    error(
        "tev1.json",
        Compat,
        "the decoded block is not a JSON object",
    ),
    error(
        "tev1.meta",
        Compat,
        "payload or meta (tool, ts, version, deprecations) missing or mistyped",
    ),
    warning(
        "tev1.ts",
        Compat,
        "meta.ts is not an ISO-8601 timestamp (the reference accepts any string)",
    ),
    error(
        "tev1.version-mismatch",
        Compat,
        "meta.version differs from the prefix version",
    ),
    error("tev1.is-error", Compat, "isError present but not true"),
    error(
        "tev1.error-payload",
        Compat,
        "an error payload lacks category, code, message or recoverable, or meta.tool is not mcp",
    ),
    error(
        "tev1.block0",
        Compat,
        "an error's block 0 is not rendered from its payload",
    ),
    error(
        "tev1.dual-emit",
        Compat,
        "structuredContent differs from the envelope block",
    ),
    // operations.
    error("ops.shape", Compat, "not an object with data and meta"),
    error(
        "ops.source",
        Compat,
        "meta.source is not local, http or mcp",
    ),
    error(
        "ops.meta",
        Compat,
        "a field of the source's meta is missing or mistyped",
    ),
    error(
        "ops.mcp-data",
        Compat,
        "an mcp envelope with structuredContent whose data is not it",
    ),
    error(
        "ops.output-schema",
        Compat,
        "data does not match the output schema",
    ),
    // MCP.
    error(
        "mcp.shape",
        Compat,
        "content missing, or isError, _meta, resultType mistyped",
    ),
    error(
        "mcp.block",
        Compat,
        "a content block lacks a field its type requires, or mistypes one",
    ),
    error(
        "mcp.revision",
        Compat,
        "a block type or field newer than the claimed MCP revision",
    ),
    error(
        "mcp.output-schema",
        Compat,
        "structuredContent does not match the output schema",
    ),
    error(
        "mcp.mirror",
        Compat,
        "a JSON text block differs from structuredContent",
    ),
    // tool-result-envelope.
    error("tre.not-object", Compat, "the root is not a JSON object"),
    error("tre.meta-missing", Compat, "no __envelope object"),
    error("tre.type", Compat, "an __envelope field has the wrong type"),
    error("tre.version", Compat, "__envelope.version is not \"1\""),
    error(
        "tre.content-type",
        Compat,
        "__envelope.contentType is not 0-5 or a known name",
    ),
    error(
        "tre.created",
        Compat,
        "__envelope.createdUtc is not a UTC timestamp",
    ),
    error(
        "tre.payload-path",
        Compat,
        "__envelope.payloadPath names no key of the root",
    ),
];

/// An id that is not in the catalogue ([`RULES`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown rule id {id:?}: not in the rule catalogue")]
pub struct UnknownRule {
    id: String,
}

impl UnknownRule {
    /// The id that was looked up.
    pub fn id(&self) -> &str {
        &self.id
    }
}

/// The rule `id` of the catalogue, or [`UnknownRule`] when there is none.
pub fn rule(id: &str) -> Result<&'static Rule, UnknownRule> {
    RULES
        .iter()
        .find(|r| r.id == id)
        .ok_or_else(|| UnknownRule { id: id.to_string() })
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use super::*;

    fn source_files(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                source_files(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }

    /// Every id the library reports is in the catalogue, so no finding is ever filed under
    /// an id `rule` does not know (see `Findings::report_at` for what would happen at run
    /// time). Read from the source: in every file that uses `Findings`, the first argument
    /// of each `.report(`, `.report_at(`, `.checks(` and `output_schema(` call is a string
    /// literal naming a rule, except in the functions that pass an id on (listed here:
    /// their callers are the ones checked). Comments and unit tests are left out.
    #[test]
    fn every_reported_id_is_in_the_catalogue() {
        const CALLS: [&str; 4] = [".report(", ".report_at(", ".checks(", "output_schema("];
        const FORWARDERS: [(&str, &str); 2] = [
            ("formats/findings.rs", "id"), // `report` passes its id to `report_at`
            ("formats/findings.rs", "rule"), // `output_schema` reports as its caller says
        ];
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut files = Vec::new();
        source_files(&src, &mut files);
        let (mut checked, mut problems) = (0, Vec::new());
        for file in files {
            let text = std::fs::read_to_string(&file).unwrap();
            if !text.contains("Findings") {
                continue;
            }
            let name = file.strip_prefix(&src).unwrap().to_string_lossy();
            let name = name.replace('\\', "/");
            let code: String = text
                .split("#[cfg(test)]")
                .next()
                .unwrap_or_default()
                .lines()
                .filter(|l| !l.trim_start().starts_with("//"))
                .collect::<Vec<_>>()
                .join("\n");
            for call in CALLS {
                for (at, _) in code.match_indices(call) {
                    let before = &code[..at];
                    let part_of_a_name = !call.starts_with('.')
                        && before.ends_with(|c: char| c.is_alphanumeric() || c == '_');
                    if part_of_a_name || before.ends_with("fn ") {
                        continue; // `with_output_schema(`, or the definition
                    }
                    let arg = code[at + call.len()..].trim_start();
                    if let Some(literal) = arg.strip_prefix('"') {
                        let id = &literal[..literal.find('"').unwrap()];
                        if let Err(e) = rule(id) {
                            problems.push(format!("{name}: {e}"));
                        }
                        checked += 1;
                    } else {
                        let given: String = arg
                            .chars()
                            .take_while(|c| c.is_alphanumeric() || *c == '_')
                            .collect();
                        if !FORWARDERS.contains(&(name.as_str(), given.as_str())) {
                            problems.push(format!(
                                "{name}: {call} is given `{given}`, not a literal rule id"
                            ));
                        }
                    }
                }
            }
        }
        assert!(problems.is_empty(), "{problems:#?}");
        // The scan itself works: the rules report from well over a hundred places.
        assert!(checked > 100, "only {checked} calls found");
    }

    #[test]
    fn unknown_ids_are_errors() {
        assert_eq!(rule("json.syntax").unwrap().id, "json.syntax");
        let e = rule("pv1.no-such-rule").unwrap_err();
        assert_eq!(e.id(), "pv1.no-such-rule");
        assert_eq!(
            e.to_string(),
            "unknown rule id \"pv1.no-such-rule\": not in the rule catalogue"
        );
    }

    #[test]
    fn the_digest_rule_states_the_model_pattern() {
        assert!(
            rule("pv1.digest")
                .unwrap()
                .summary
                .ends_with(crate::model::DIGEST_PATTERN)
        );
    }

    #[test]
    fn ids_are_unique_and_namespaced() {
        for (i, r) in RULES.iter().enumerate() {
            assert!(r.id.contains('.'), "{}", r.id);
            assert!(
                RULES[i + 1..].iter().all(|o| o.id != r.id),
                "duplicate {}",
                r.id
            );
        }
    }
}
