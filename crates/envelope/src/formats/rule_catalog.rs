//! The rule catalogue: every finding's id, the lowest profile that checks it, its severity
//! and what it means. Ids are stable: tools may match on them.

use super::findings::{Profile, Severity};

/// One rule of the catalogue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rule {
    pub id: &'static str,
    /// The lowest profile that checks the rule.
    pub profile: Profile,
    pub severity: Severity,
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
    error("json.depth", Compat, "nesting deeper than 128 levels"),
    error("text.bom", Strict, "a byte-order mark before the document"),
    error(
        "text.utf8",
        Strict,
        "bytes that are not UTF-8 (read as U+FFFD)",
    ),
    error("text.trailing-data", Strict, "something after the document"),
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

/// The rule `id` (unknown ids are a bug: caught by the catalogue tests).
pub fn rule(id: &str) -> &'static Rule {
    RULES.iter().find(|r| r.id == id).unwrap_or_else(|| {
        debug_assert!(false, "rule {id} is not in the catalogue");
        &RULES[0]
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
