use envelope::model::{ContentType, Source, Timestamp};
use envelope::{Envelope, Payload};

use crate::cli::WrapArgs;
use crate::{CmdResult, Failure, input};

pub fn run(args: &WrapArgs) -> CmdResult {
    let format = input::format_id(&args.format)?;
    let options = input::encode_options(&args.encode)?;
    let bytes = input::read(&args.file)?;
    let payload = envelope::json::from_slice(&bytes)?;
    let mut env = Envelope {
        payload: Payload::Json(payload),
        tool: args.tool.clone(),
        summary: args.summary.clone(),
        timestamp: args.encode.ts.clone().map(Timestamp::Text),
        workspace: args.workspace_root.clone(),
        ..Envelope::default()
    };
    for pair in &args.meta {
        apply_meta(&mut env, pair)?;
    }
    let encoded = envelope::encode(format, &env, &options)?;
    if args.report {
        input::report_losses(&encoded.losses);
    }
    input::write_line(&encoded.bytes)
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
            env.content_type = Some(
                ContentType::parse(value).ok_or_else(|| bad("not 0-5 or a content type name"))?,
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
            let n: u16 = value.parse().map_err(|_| bad("not an HTTP status code"))?;
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
