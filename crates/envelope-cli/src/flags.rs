//! Flags that do not apply to the chosen format or mode are refused (exit 2, saying why)
//! rather than silently ignored: checked once per command, before any input is read.

use envelope::FormatId;

use crate::Failure;
use crate::cli::{Command, EncodeArgs, ShapeArgs, ValidateArgs};

/// The id of every refusal made here.
pub const NOT_APPLICABLE: &str = "usage.not-applicable";

/// Checks the flags of `command` against its format and mode.
pub fn check(command: &Command) -> Result<(), Failure> {
    match command {
        Command::Convert(args) => encode(&args.encode, &args.to),
        Command::Wrap(args) => encode(&args.encode, &args.format),
        Command::Shape(args) => shape(args),
        Command::Validate(args) => validate(args),
        _ => Ok(()),
    }
}

fn refuse(message: String) -> Result<(), Failure> {
    Err(Failure::usage(NOT_APPLICABLE, message))
}

/// `--limit`, `--dual-emit` and `--indented` each belong to one target format. An unknown
/// target id is left to the command, which names it.
fn encode(args: &EncodeArgs, target: &str) -> Result<(), Failure> {
    let Ok(target) = target.parse::<FormatId>() else {
        return Ok(());
    };
    let only = |flag: &str, format: FormatId| {
        format!("{flag} applies only to {format} output, not {target} (it would be ignored)")
    };
    if args.limit.is_some() && target != FormatId::Ctxo {
        return refuse(format!(
            "{}; `envelope shape --limit` fits any format into a byte budget",
            only("--limit", FormatId::Ctxo)
        ));
    }
    if args.dual_emit && target != FormatId::ToolEnvelopeV1 {
        return refuse(only("--dual-emit", FormatId::ToolEnvelopeV1));
    }
    if args.indented && target != FormatId::ToolResultEnvelope {
        return refuse(only("--indented", FormatId::ToolResultEnvelope));
    }
    Ok(())
}

/// Without a store, the store's location and the inline threshold mean nothing.
fn shape(args: &ShapeArgs) -> Result<(), Failure> {
    if args.no_offload && args.store.is_some() {
        return refuse("--store does not apply with --no-offload (nothing is stored)".into());
    }
    if args.no_offload && args.inline_threshold.is_some() {
        return refuse(
            "--inline-threshold does not apply with --no-offload (nothing is offloaded)".into(),
        );
    }
    Ok(())
}

/// Stream flags need `--ndjson`; the output schema and the MCP revision need a format that
/// has them (checked here when `--format` names it, after detection otherwise:
/// [`validated_formats`]).
fn validate(args: &ValidateArgs) -> Result<(), Failure> {
    if args.line_cap.is_some() && !args.ndjson {
        return refuse("--line-cap applies only with --ndjson (a cap on each line)".into());
    }
    match args.format.as_deref().map(str::parse::<FormatId>) {
        Some(Ok(format)) => validated_formats(args, &[format]),
        _ => Ok(()),
    }
}

/// Refuses `--output-schema` when none of the `formats` validated carries a tool output
/// (operations `data`, MCP `structuredContent`), and `--mcp-revision` when none is MCP.
/// No format (an undetected document) refuses nothing: the report says what is wrong.
pub fn validated_formats(args: &ValidateArgs, formats: &[FormatId]) -> Result<(), Failure> {
    if formats.is_empty() {
        return Ok(());
    }
    let named = || {
        let names: Vec<&str> = formats.iter().map(|f| f.as_str()).collect();
        names.join(", ")
    };
    let has_output = |f: &FormatId| matches!(f, FormatId::Operations | FormatId::Mcp);
    if args.output_schema.is_some() && !formats.iter().any(has_output) {
        return refuse(format!(
            "--output-schema applies only to operations and mcp (their data and \
             structuredContent), not {}",
            named()
        ));
    }
    if args.mcp_revision.is_some() && !formats.contains(&FormatId::Mcp) {
        return refuse(format!(
            "--mcp-revision applies only to mcp, not {}",
            named()
        ));
    }
    Ok(())
}
