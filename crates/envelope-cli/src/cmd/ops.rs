//! `envelope ops list` and `envelope call`: the operations of a registry file.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use envelope_ops::file::RegistryFile;
use envelope_ops::load::Loaded;
use envelope_ops::protocol::{self, CallOptions};
use envelope_ops::{Context, Identity};
use futures::StreamExt;
use serde_json::Value;

use envelope::shape::Offloaded;
use envelope_ops::shaping::EnvelopeShaping;

use super::shape::{document_limit, with_newline};
use crate::cli::{CallArgs, OpsArgs, OpsCommand, WorkerArgs};
use crate::input::{note, read, write_all, write_stdout};
use crate::{CmdResult, Failure};

/// `envelope ops list|worker`.
pub fn run(args: &OpsArgs) -> CmdResult {
    match &args.command {
        OpsCommand::List { json } => list(&args.registry.registry, *json),
        OpsCommand::Worker(worker_args) => worker(&args.registry.registry, worker_args),
    }
}

/// `envelope ops list [--json]`.
fn list(path: &Path, json: bool) -> CmdResult {
    let runtime = runtime()?;
    let loaded = runtime.block_on(load(path))?;
    // A line at a time: the operations of a large OpenAPI source (read back from its
    // cache) are each built for its line and dropped; all of them written out at once
    // would be many times the document (issue 29).
    let mut failed = Vec::new();
    write_all(|out| {
        let mut out = std::io::BufWriter::with_capacity(64 * 1024, out);
        let mut written = Ok(());
        failed = loaded.registry.visit_specs(|spec| {
            written = list_line(&mut out, spec, json);
            written.is_ok()
        });
        written?;
        std::io::Write::flush(&mut out)
    })?;
    for failure in failed {
        eprintln!("envelope: warning: {}: {failure}", path.display());
    }
    Ok(())
}

/// One operation's line of `ops list`.
fn list_line(
    out: &mut impl std::io::Write,
    spec: &envelope_ops::OperationSpec,
    json: bool,
) -> std::io::Result<()> {
    if json {
        serde_json::to_writer(&mut *out, spec)?;
    } else {
        write!(
            out,
            "{}\t{}\t{}\tinput={}\toutput={}",
            spec.id(),
            spec.kind.as_str(),
            spec.description,
            spec.input_schema,
            spec.output_schema
        )?;
    }
    out.write_all(b"\n")
}

/// `envelope ops worker --nats URL [--prefix P]`: serves until the connection ends or the
/// process is killed. "ready" on stderr once the subscriptions are in place.
fn worker(path: &Path, args: &WorkerArgs) -> CmdResult {
    let runtime = runtime()?;
    runtime.block_on(async {
        let loaded = load(path).await?;
        let operations = loaded.registry.len();
        let shaper = worker_shaper(args)?;
        let client = protocol::connect(&args.nats).await.map_err(nats_failure)?;
        let serving =
            protocol::serve_nats_shaped(client, Arc::new(loaded.registry), &args.prefix, shaper)
                .await
                .map_err(nats_failure)?;
        eprintln!(
            "envelope: worker ready: {operations} operations on {} ({}.call.>)",
            args.nats, args.prefix
        );
        let _ = serving.await;
        Err(nats_failure(protocol::NatsError::closed(&args.nats)))
    })
}

/// `envelope call ID [--input JSON|@FILE] [--scope S]... [--timeout SECS] [--nats URL]
/// [--subscribe [--idle-timeout SECS]] [--limit BYTES ...]`.
pub fn call(args: &CallArgs) -> CmdResult {
    let input = input(args.input.as_deref())?;
    let timeout = seconds("--timeout", args.timeout)?;
    let idle_timeout = seconds("--idle-timeout", args.idle_timeout)?;
    let identity = (!args.scopes.is_empty()).then(|| Identity {
        id: "cli".into(),
        scopes: args.scopes.clone(),
        resources: None,
    });
    let runtime = runtime()?;
    runtime.block_on(async {
        let caller = match &args.nats {
            Some(url) => {
                let client = protocol::connect(url).await.map_err(nats_failure)?;
                Some(
                    protocol::nats_caller(client, &args.prefix)
                        .await
                        .map_err(nats_failure)?,
                )
            }
            None => None,
        };
        // Over NATS a worker may die mid-call: the call always has a deadline.
        let timeout = match &caller {
            Some(_) => Some(timeout.unwrap_or(NATS_DEFAULT_TIMEOUT)),
            None => timeout,
        };
        let options = CallOptions {
            deadline: timeout.map(|t| SystemTime::now() + t),
            idle_timeout,
            identity: identity.clone(),
            ..CallOptions::default()
        };
        if args.subscribe {
            let caller = match caller {
                Some(caller) => caller,
                None => {
                    let registry = load(&args.registry.registry).await?.registry;
                    refuse_plain_subscribe(&registry, &args.id)?;
                    protocol::in_process(Arc::new(registry))
                }
            };
            let mut items = Box::pin(caller.subscribe(&args.id, input, options));
            while let Some(item) = items.next().await {
                match item {
                    Ok(envelope) => print_envelope(&envelope, args)?,
                    Err(e) => return Err(reported(&e)),
                }
            }
            return Ok(());
        }
        if let Some(caller) = caller {
            return match caller.call(&args.id, input, options).await {
                Ok(envelope) => print_result(&envelope, args),
                Err(e) => Err(reported(&e)),
            };
        }
        let loaded = load(&args.registry.registry).await?;
        let context = Context {
            deadline: timeout.map(|t| Instant::now() + t),
            identity,
            ..Context::default()
        };
        match loaded.registry.execute(&args.id, input, &context).await {
            Ok(done) => {
                for warning in &done.warnings {
                    eprintln!("envelope: warning: {warning}");
                }
                print_result(&done.envelope, args)
            }
            Err(e) => Err(reported(&e)),
        }
    })
}

/// `--subscribe` to a query or mutation would print its one envelope and then wait for a
/// completion that never comes (the protocol completes subscriptions only): refused here,
/// where the registry is known. Through NATS it ends at `--idle-timeout` or the deadline.
fn refuse_plain_subscribe(registry: &envelope_ops::Registry, id: &str) -> Result<(), Failure> {
    match registry.spec(id) {
        Some(spec) if spec.kind != envelope_ops::OperationType::Subscription => {
            Err(Failure::usage(
                "usage.bad-value",
                format!(
                    "--subscribe: {id} is a {}, not a subscription: call it without --subscribe",
                    spec.kind.as_str()
                ),
            ))
        }
        _ => Ok(()),
    }
}

/// How long a call through NATS waits without `--timeout`.
const NATS_DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// A positive number of seconds from `flag`.
fn seconds(flag: &str, value: Option<f64>) -> Result<Option<Duration>, Failure> {
    let Some(secs) = value else { return Ok(None) };
    Duration::try_from_secs_f64(secs)
        .ok()
        .filter(|d| !d.is_zero())
        .map(Some)
        .ok_or_else(|| {
            Failure::usage(
                "usage.bad-value",
                format!("{flag} {secs}: a positive number of seconds"),
            )
        })
}

/// The envelope of a call, printed; an MCP tool's error result (`meta.isError`) is then
/// a failure: its text on stderr, exit 1 (the envelope is on stdout all the same).
fn print_result(envelope: &Value, args: &CallArgs) -> CmdResult {
    print_envelope(envelope, args)?;
    match tool_error(envelope) {
        Some(text) => Err(Failure::invalid(
            "ops.tool-error",
            format!("{}: the tool answered with an error: {text}", args.id),
        )),
        None => Ok(()),
    }
}

/// The text of an MCP tool's error result (its text blocks, one per line), or None when
/// the envelope is not one.
fn tool_error(envelope: &Value) -> Option<String> {
    let meta = &envelope["meta"];
    if meta["source"] != "mcp" || meta["isError"] != Value::Bool(true) {
        return None;
    }
    let texts: Vec<&str> = meta["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|block| block["type"] == "text")
        .filter_map(|block| block["text"].as_str())
        .collect();
    Some(match texts.as_slice() {
        [] => "(no text)".to_string(),
        _ => texts.join("\n"),
    })
}

/// An MCP tool's envelope with its result once: `data` is `structuredContent` when there
/// is one (so `meta.structuredContent` goes), and the content blocks that repeat `data`
/// go too — all of them when `data` is the blocks, else each text block that is `data`'s
/// JSON, `data` itself (a string) or one of its string fields (a text tool's
/// `{"content": text}`). What stays is a valid operations envelope (`meta.content` an
/// array); other sources' envelopes are left as they are.
fn once(envelope: &mut Value) {
    if envelope["meta"]["source"] != "mcp" {
        return;
    }
    let Some(Value::Object(mut meta)) = envelope.get_mut("meta").map(Value::take) else {
        return;
    };
    let data = &envelope["data"];
    if meta.get("structuredContent") == Some(data) {
        meta.remove("structuredContent");
    }
    if let Some(Value::Array(blocks)) = meta.get_mut("content") {
        if Value::Array(blocks.clone()) == *data {
            blocks.clear();
        } else {
            blocks.retain(|block| !repeats(block, data));
        }
    }
    envelope["meta"] = Value::Object(meta);
}

/// Whether a content block is a text block that repeats `data` (see [`once`]).
fn repeats(block: &Value, data: &Value) -> bool {
    let Some(text) = block["text"].as_str().filter(|_| block["type"] == "text") else {
        return false;
    };
    if data.as_str() == Some(text) {
        return true;
    }
    if let Value::Object(fields) = data
        && fields.values().any(|v| v.as_str() == Some(text))
    {
        return true;
    }
    !data.is_string() && serde_json::from_str::<Value>(text).is_ok_and(|parsed| parsed == *data)
}

/// One envelope as one line (shaped with `--limit` / `--redact`), flushed at once (a
/// subscription's consumer reads them as they come). An MCP tool's result is printed once
/// unless `--full` (see [`once`]).
fn print_envelope(envelope: &Value, args: &CallArgs) -> CmdResult {
    let mut line = if args.full {
        serde_json::to_vec(envelope)
    } else {
        let mut envelope = envelope.clone();
        once(&mut envelope);
        serde_json::to_vec(&envelope)
    }
    .expect("an envelope serialises");
    if args.limit.is_some() || args.tokens.limit_tokens.is_some() || args.redact {
        line = shaped(line, args)?;
    }
    line.push(b'\n');
    write_stdout(&line)
}

/// A CallError as one JSON line on stderr; the command exits 1.
fn reported(error: &envelope_ops::CallError) -> Failure {
    eprintln!("{}", error.to_json());
    Failure::Reported
}

fn nats_failure(error: protocol::NatsError) -> Failure {
    Failure::usage("ops.nats", error.to_string())
}

/// The envelope through the shaping pipeline (`--limit`, `--redact`): a payload over the
/// limit offloaded to the store (unless `--no-offload`), the rest cut to fit the limit with
/// the newline counted — what `envelope shape --limit L --inline-threshold L` gives.
fn shaped(envelope: Vec<u8>, args: &CallArgs) -> Result<Vec<u8>, Failure> {
    let store = match (args.limit, args.no_offload) {
        (Some(_), false) => Some(super::artifact::open_store(args.store.as_ref())?),
        _ => None,
    };
    let shaping = EnvelopeShaping {
        limit: document_limit(args.limit),
        inline_threshold: args.limit,
        store: store.map(Arc::from),
        redact: args.redact,
        tokens: crate::input::token_limit(&args.tokens)?,
        reserve_tokens: super::shape::NEWLINE_TOKENS,
    };
    let shaped = shaping
        .shape(&envelope)
        .map_err(|e| with_newline(e, args.limit))?;
    if let Offloaded::Stored { digest, size_bytes } = &shaped.offloaded {
        note(&format!("offloaded {size_bytes} bytes as {digest}"));
    }
    Ok(shaped.bytes)
}

/// The worker's shaper (`ops worker --limit/--store/--redact`): each envelope fitted into
/// the limit, large payloads in the store its callers read.
fn worker_shaper(args: &WorkerArgs) -> Result<Option<protocol::Shaper>, Failure> {
    let store: Option<Arc<dyn envelope_store::Store>> = match args.limit {
        Some(_) => Some(Arc::from(super::artifact::open_store(args.store.as_ref())?)),
        None => None,
    };
    let shaping = EnvelopeShaping {
        limit: args.limit,
        inline_threshold: args.limit,
        store,
        redact: args.redact,
        tokens: crate::input::token_limit(&args.tokens)?,
        reserve_tokens: 0,
    };
    Ok(shaping.into_shaper())
}

/// The call's input: `--input` JSON text, or `@FILE` (`@-` for stdin); `{}` without it.
fn input(arg: Option<&str>) -> Result<Value, Failure> {
    let (text, from) = match arg {
        None => return Ok(Value::Object(Default::default())),
        Some(arg) => match arg.strip_prefix('@') {
            Some(path) => {
                let bytes = read(Path::new(path))?;
                (
                    String::from_utf8_lossy(&bytes).into_owned(),
                    format!("the input file {path}"),
                )
            }
            None => (arg.to_string(), "--input".to_string()),
        },
    };
    serde_json::from_str(&text)
        .map_err(|e| Failure::usage("usage.bad-value", format!("{from} is not JSON: {e}")))
}

/// The registry, its warnings printed on stderr. Loaded on the runtime that then runs the
/// calls: an MCP source's server connection lives on it.
async fn load(path: &Path) -> Result<Loaded, Failure> {
    let file = RegistryFile::read(path).map_err(|e| Failure::usage("ops.registry", e))?;
    let loaded = file.load().await;
    for warning in &loaded.warnings {
        eprintln!("envelope: warning: {}: {warning}", path.display());
    }
    Ok(loaded)
}

fn runtime() -> Result<tokio::runtime::Runtime, Failure> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| {
            Failure::usage(
                "ops.runtime",
                format!("cannot start the async runtime: {e}"),
            )
        })
}
