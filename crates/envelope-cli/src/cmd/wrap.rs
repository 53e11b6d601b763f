use envelope::model::{ContentType, Source, Timestamp};
use envelope::validate::Profile;
use envelope::{Envelope, FormatId};

use crate::cli::WrapArgs;
use crate::{CmdResult, Failure, input};

pub fn run(args: &WrapArgs) -> CmdResult {
    let format = input::format_id(&args.format)?;
    check_ts(args.encode.ts.as_deref())?;
    let options = input::encode_options(&args.encode)?;
    let bytes = input::read(&args.file)?;
    let mut env = Envelope {
        tool: args.tool.clone(),
        summary: args.summary.clone(),
        timestamp: args.encode.ts.clone().map(Timestamp::Text),
        workspace: args.workspace_root.clone(),
        ..Envelope::default()
    };
    for pair in &args.meta {
        apply_meta(&mut env, pair)?;
    }
    if format == FormatId::ProtocolV1 {
        check_command(&env)?;
    }
    let encoded = envelope::convert::wrap(env, &bytes, format, &options)?;
    // The flags above are checked one by one; whatever else would make the envelope
    // invalid is refused here (exit 1), before anything is written.
    envelope::validate::check_output(&encoded.bytes, format, Profile::Spec)?;
    if args.report {
        input::report_losses(&encoded.losses);
    }
    input::write_line(&encoded.bytes)
}

/// `--ts` must be RFC 3339 in UTC with `Z`: protocol-v1 (`meta.ts`) and
/// tool-result-envelope (`createdUtc`) require UTC, and an offset would be written as given.
fn check_ts(ts: Option<&str>) -> Result<(), Failure> {
    match ts {
        Some(ts) if !ts.trim().ends_with('Z') => Err(Failure::usage(
            "usage.bad-value",
            format!(
                "--ts {ts:?}: must be UTC, written with Z (2026-07-04T00:00:00Z): protocol-v1 and tool-result-envelope require it"
            ),
        )),
        _ => Ok(()),
    }
}

/// protocol-v1 writes `--meta command`, else `--tool`, as its command, which must be
/// `<group>/<name>` (lower-case letters, digits and `-`).
fn check_command(env: &Envelope) -> Result<(), Failure> {
    let (flag, value) = match (&env.command, &env.tool) {
        (Some(command), _) => ("--meta command", command),
        (None, Some(tool)) => ("--tool", tool),
        (None, None) => return Ok(()),
    };
    if envelope::formats::protocol_v1::is_command(value) {
        return Ok(());
    }
    Err(Failure::usage(
        "usage.bad-value",
        format!(
            "{flag} {value:?}: protocol-v1 writes it as its command, which must be <group>/<name> in lower-case letters, digits and - (give --meta command=GROUP/NAME)"
        ),
    ))
}

/// Applies one `--meta KEY=VALUE` (canonical field names, see `--help`).
fn apply_meta(env: &mut Envelope, pair: &str) -> Result<(), Failure> {
    let Some((key, value)) = pair.split_once('=') else {
        return Err(Failure::usage(
            "usage.bad-value",
            format!("--meta {pair:?}: expected KEY=VALUE"),
        ));
    };
    let bad =
        |what: &str| Failure::usage("usage.bad-value", format!("--meta {key}={value:?}: {what}"));
    match key {
        "provider" => env.provider = Some(value.into()),
        "model" => env.model = Some(value.into()),
        "toolCallId" => env.tool_call_id = Some(value.into()),
        "contentType" => {
            // tool-result-envelope's enum: Unknown 0 … Binary 5 (another number is no
            // content type the reference can read).
            env.content_type = Some(
                ContentType::parse(value)
                    .filter(|t| !matches!(t, ContentType::Other(_)))
                    .ok_or_else(|| bad("not 0-5 or a content type name"))?,
            );
        }
        "payloadPath" => env.layout.payload_key = Some(value.into()),
        "command" => env.command = Some(value.into()),
        "workspace" => env.workspace = Some(value.into()),
        "durationMs" => {
            let n: u64 = value
                .parse()
                .map_err(|_| bad("not a non-negative integer"))?;
            env.duration_ms = Some(n.into());
        }
        "source" => {
            env.source = Some(match value {
                "local" => Source::Local { operation_id: None },
                "http" => Source::Http {
                    status_code: None,
                    headers: serde_json::Map::new(),
                    content_type: None,
                },
                "mcp" => Source::Mcp { result_meta: None },
                _ => return Err(bad("expected local, http or mcp")),
            });
        }
        "operationId" => match &mut env.source {
            None => {
                env.source = Some(Source::Local {
                    operation_id: Some(value.into()),
                })
            }
            Some(Source::Local { operation_id }) => *operation_id = Some(value.into()),
            Some(_) => return Err(bad("operationId needs source=local")),
        },
        "statusCode" => {
            let n: u16 = value
                .parse()
                .ok()
                .filter(|n| (100..=599).contains(n))
                .ok_or_else(|| bad("not an HTTP status code (100-599)"))?;
            match &mut env.source {
                Some(Source::Http { status_code, .. }) => *status_code = Some(n.into()),
                _ => {
                    env.source = Some(Source::Http {
                        status_code: Some(n.into()),
                        headers: serde_json::Map::new(),
                        content_type: None,
                    });
                }
            }
        }
        _ => {
            return Err(Failure::usage(
                "usage.bad-value",
                format!(
                    "--meta {key}: unknown key (known: provider, model, toolCallId, contentType, payloadPath, command, source, operationId, workspace, durationMs, statusCode)"
                ),
            ));
        }
    }
    Ok(())
}
