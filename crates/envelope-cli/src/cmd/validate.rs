//! `envelope validate`: every finding, as text, as a JSON report, or as the reference
//! validator's single protocol-v1 envelope.

use std::io::BufReader;
use std::time::Instant;

use envelope::validate::stream::{DEFAULT_LINE_CAP, StreamValidator};
use envelope::validate::{Finding, Options, Report, Severity, StreamKind, validate_document};
use envelope::{DecodeOptions, EncodeOptions, FormatId};
use serde_json::{Value, json};

use crate::cli::ValidateArgs;
use crate::progress::Progress;
use crate::{CmdResult, Failure, flags, input};

pub fn run(args: &ValidateArgs) -> CmdResult {
    if args.list_rules {
        return list_rules(args.json);
    }
    let started = Instant::now();
    let options = options(args)?;
    let report = if args.ndjson {
        stream(args, &options)?
    } else {
        let (bytes, _progress) = input::read_with_progress(&args.file, "validating")?;
        validate_document(&bytes, &options)
    };
    if args.format.is_none() {
        // The output schema and the MCP revision apply to some formats only.
        flags::validated_formats(args, &validated(&report))?;
    }
    let out = if args.emit.is_some() {
        emit_protocol_v1(&report, started)?
    } else if args.json {
        json_report(&report).to_string()
    } else {
        human(&report)
    };
    input::write_line(out.as_bytes())?;
    if report.is_valid() {
        Ok(())
    } else {
        // The findings are the output; the exit code says invalid.
        Err(Failure::invalid(
            "validate.invalid",
            format!(
                "invalid ({})",
                plural(count(&report, Severity::Error), "error")
            ),
        ))
    }
}

/// The rule catalogue, as a table or as JSON lines.
fn list_rules(json: bool) -> CmdResult {
    let mut out = String::new();
    for rule in envelope::validate::RULES {
        let line = if json {
            json!({"rule": rule.id, "profile": rule.profile.as_str(), "severity": rule.severity.as_str(), "summary": rule.summary}).to_string()
        } else {
            format!(
                "{:<36} {:<7} {:<8} {}",
                rule.id,
                rule.profile.as_str(),
                rule.severity.as_str(),
                rule.summary
            )
        };
        out.push_str(&line);
        out.push('\n');
    }
    input::write_line(out.trim_end().as_bytes())
}

/// Library options from the flags (a bad output schema or revision is a usage error).
fn options(args: &ValidateArgs) -> Result<Options, Failure> {
    let mut options = Options::new(input::opt_format_id(args.format.as_deref())?, args.profile);
    if let Some(path) = &args.output_schema {
        let schema = envelope::json::from_slice(&input::read(path)?)
            .map_err(|e| Failure::usage(e.code(), format!("{}: {e}", path.display())))?;
        options = options
            .with_output_schema(&schema)
            .map_err(|e| Failure::usage("usage.bad-value", e))?;
    }
    if let Some(revision) = &args.mcp_revision {
        options = options
            .with_mcp_revision(revision)
            .map_err(|e| Failure::usage("usage.bad-value", e))?;
    }
    Ok(options)
}

/// Validates a stream from the file or stdin, one line at a time (as independent documents
/// with --independent).
fn stream(args: &ValidateArgs, options: &Options) -> Result<Report, Failure> {
    let io_error = |e: std::io::Error| {
        Failure::usage(
            "input.unreadable",
            format!("cannot read {}: {e}", args.file.display()),
        )
    };
    let mut validator = StreamValidator::new(options.clone());
    if args.independent {
        validator = validator.independent();
    }
    let line_cap = args.line_cap.unwrap_or(DEFAULT_LINE_CAP);
    if args.file.as_os_str() == "-" {
        input::stdin_notice();
        let progress = Progress::new("validating stdin", None);
        let reader = BufReader::with_capacity(1 << 16, progress.reader(std::io::stdin().lock()));
        validator.run(reader, line_cap).map_err(io_error)
    } else {
        let file = std::fs::File::open(&args.file).map_err(io_error)?;
        let total = file.metadata().ok().map(|m| m.len());
        let progress = Progress::new(format!("validating {}", args.file.display()), total);
        let reader = BufReader::with_capacity(1 << 16, progress.reader(file));
        validator.run(reader, line_cap).map_err(io_error)
    }
}

/// The formats a report validated: its format, or each line's.
fn validated(report: &Report) -> Vec<FormatId> {
    let mut formats = report.formats.clone();
    if let Some(format) = report.format
        && !formats.contains(&format)
    {
        formats.push(format);
    }
    formats
}

fn count(report: &Report, severity: Severity) -> usize {
    report
        .findings
        .iter()
        .filter(|f| f.severity == severity)
        .count()
}

/// What was checked: `protocol-v1 job-event stream, profile spec`, `independent lines
/// (mcp, protocol-v1), profile spec`.
fn what(report: &Report) -> String {
    let formats = || {
        report
            .formats
            .iter()
            .map(|f| f.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let format = report.format.map_or("unknown format", FormatId::as_str);
    let what = match report.stream {
        Some(StreamKind::Progress) => format!("{format} progress stream"),
        Some(StreamKind::JobEvents) => format!("{format} job-event stream"),
        Some(StreamKind::Independent) if report.formats.is_empty() => {
            "independent lines, no format".to_string()
        }
        Some(StreamKind::Independent) => format!("independent lines ({})", formats()),
        Some(StreamKind::Envelopes) => format!("{format} stream"),
        _ => format.to_string(),
    };
    format!("{what}, profile {}", report.profile)
}

fn human(report: &Report) -> String {
    let mut out = String::new();
    for finding in &report.findings {
        out.push_str(&finding.to_string());
        out.push('\n');
    }
    let (errors, warnings) = (
        count(report, Severity::Error),
        count(report, Severity::Warning),
    );
    let warnings = plural(warnings, "warning");
    if report.is_valid() {
        out.push_str(&format!("valid ({}; {warnings})", what(report)));
    } else {
        out.push_str(&format!(
            "invalid: {}, {warnings} ({})",
            plural(errors, "error"),
            what(report)
        ));
    }
    out
}

fn plural(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

fn finding_json(f: &Finding) -> Value {
    let mut v = json!({"rule": f.rule, "severity": f.severity.as_str(), "pointer": f.pointer});
    if let Some(line) = f.line {
        v["line"] = json!(line);
    }
    if let Some(column) = f.column {
        v["column"] = json!(column);
    }
    v["message"] = json!(f.message);
    v
}

fn json_report(report: &Report) -> Value {
    json!({
        "valid": report.is_valid(),
        "format": report.format.map(FormatId::as_str),
        "formats": report.formats.iter().map(|f| f.as_str()).collect::<Vec<_>>(),
        "stream": report.stream.map(StreamKind::as_str),
        "profile": report.profile.as_str(),
        "errors": count(report, Severity::Error),
        "warnings": count(report, Severity::Warning),
        "findings": report.findings.iter().map(finding_json).collect::<Vec<_>>(),
    })
}

/// The reference validator's output: one protocol-v1 envelope from `foxctl.proto.validate`
/// (`EENVELOPE` with the findings as `data.validation_errors`, or ok), written by our
/// protocol-v1 encoder in the Go dialect.
fn emit_protocol_v1(report: &Report, started: Instant) -> Result<String, Failure> {
    let meta = json!({
        "ts": envelope::time::now_rfc3339(false),
        "duration_ms": started.elapsed().as_millis() as u64,
        "source": "proto",
        "runner": "exec",
    });
    let errors: Vec<&Finding> = report
        .findings
        .iter()
        .filter(|f| f.severity == Severity::Error)
        .collect();
    let doc = match errors.first() {
        None => json!({
            "version": 1, "status": "ok", "command": "foxctl.proto.validate",
            "data": {"valid": true, "format": report.format.map(FormatId::as_str), "profile": report.profile.as_str()},
            "meta": meta, "error": {},
        }),
        Some(first) => json!({
            "version": 1, "status": "error", "command": "foxctl.proto.validate",
            "data": {
                "hint": first.message,
                "validation_errors": errors.iter().map(|f| short(f)).collect::<Vec<_>>(),
            },
            "meta": meta,
            "error": {"code": "EENVELOPE", "message": format!("invalid envelope: {}", short(first))},
        }),
    };
    let env =
        envelope::formats::decode_value(FormatId::ProtocolV1, doc, &DecodeOptions::default())?;
    let encoded = envelope::encode(FormatId::ProtocolV1, &env, &EncodeOptions::default())?;
    // The protocol-v1 encoder writes JSON text: UTF-8.
    Ok(String::from_utf8_lossy(&encoded.bytes).into_owned())
}

/// `meta.ts: meta.ts is required`-style text: where (dotted, as the reference writes
/// paths), then what.
fn short(f: &Finding) -> String {
    let path = f.pointer.trim_start_matches('/').replace('/', ".");
    let line = f.line.map(|l| format!("line {l}: ")).unwrap_or_default();
    if path.is_empty() || f.message.starts_with(&path) {
        format!("{line}{}", f.message)
    } else {
        format!("{line}{path}: {}", f.message)
    }
}
