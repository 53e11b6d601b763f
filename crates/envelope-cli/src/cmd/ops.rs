//! `envelope ops list` and `envelope call`: the operations of a registry file.

use std::path::Path;
use std::time::{Duration, Instant};

use envelope_ops::file::{Loaded, RegistryFile};
use envelope_ops::{Context, Identity};
use serde_json::Value;

use envelope::FormatId;
use envelope::shape::{Offloaded, Pipeline};
use envelope_store::StoreSink;

use super::shape::{document_limit, with_newline};
use crate::cli::{CallArgs, OpsArgs, OpsCommand};
use crate::input::{note, read, write_stdout};
use crate::{CmdResult, Failure};

/// `envelope ops list [--json]`.
pub fn list(args: &OpsArgs) -> CmdResult {
    let loaded = load(&args.registry.registry)?;
    let OpsCommand::List { json } = args.command;
    let mut out = String::new();
    for spec in loaded.registry.specs() {
        let line = if json {
            serde_json::to_string(spec).expect("a spec always serialises")
        } else {
            format!(
                "{}\t{}\t{}\tinput={}\toutput={}",
                spec.id(),
                spec.kind.as_str(),
                spec.description,
                spec.input_schema,
                spec.output_schema
            )
        };
        out.push_str(&line);
        out.push('\n');
    }
    write_stdout(out.as_bytes())
}

/// `envelope call ID [--input JSON|@FILE] [--scope S]... [--timeout SECS]`.
pub fn call(args: &CallArgs) -> CmdResult {
    let input = input(args.input.as_deref())?;
    let deadline = match args.timeout {
        None => None,
        Some(secs) => {
            let timeout = Duration::try_from_secs_f64(secs)
                .ok()
                .filter(|d| !d.is_zero())
                .ok_or_else(|| {
                    Failure::usage(
                        "usage.bad-value",
                        format!("--timeout {secs}: a positive number of seconds"),
                    )
                })?;
            Some(Instant::now() + timeout)
        }
    };
    let loaded = load(&args.registry.registry)?;
    let mut context = Context {
        deadline,
        ..Context::default()
    };
    if !args.scopes.is_empty() {
        context.identity = Some(Identity {
            id: "cli".into(),
            scopes: args.scopes.clone(),
            resources: None,
        });
    }
    let result = runtime()?.block_on(loaded.registry.execute(&args.id, input, &context));
    match result {
        Ok(done) => {
            for warning in &done.warnings {
                eprintln!("envelope: warning: {warning}");
            }
            let mut line = serde_json::to_vec(&done.envelope).expect("an envelope serialises");
            if args.limit.is_some() || args.redact {
                line = shaped(line, args)?;
            }
            line.push(b'\n');
            write_stdout(&line)
        }
        Err(e) => {
            eprintln!("{}", e.to_json());
            Err(Failure::Reported)
        }
    }
}

/// The envelope through the shaping pipeline (`--limit`, `--redact`): a payload over the
/// limit offloaded to the store (unless `--no-offload`), the rest cut to fit the limit with
/// the newline counted — what `envelope shape --limit L --inline-threshold L` gives.
fn shaped(envelope: Vec<u8>, args: &CallArgs) -> Result<Vec<u8>, Failure> {
    let store = match (args.limit, args.no_offload) {
        (Some(_), false) => Some(super::artifact::open_store(args.store.as_ref())?),
        _ => None,
    };
    let mut sink = store.as_deref().map(StoreSink::new);
    let mut pipeline = Pipeline::new(&envelope)
        .input_format(FormatId::Operations)
        .redact(args.redact)
        .limit(document_limit(args.limit));
    if let Some(limit) = args.limit {
        pipeline = pipeline.inline_threshold(limit);
    }
    if let Some(sink) = &mut sink {
        pipeline = pipeline.store(sink);
    }
    let shaped = pipeline.run().map_err(|e| with_newline(e, args.limit))?;
    if let Offloaded::Stored { digest, size_bytes } = &shaped.offloaded {
        note(&format!("offloaded {size_bytes} bytes as {digest}"));
    }
    Ok(shaped.bytes)
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

/// The registry, its warnings printed on stderr.
fn load(path: &Path) -> Result<Loaded, Failure> {
    let file = RegistryFile::read(path).map_err(|e| Failure::usage("ops.registry", e))?;
    let loaded = runtime()?.block_on(file.load());
    for warning in &loaded.warnings {
        eprintln!("envelope: warning: {}: {warning}", path.display());
    }
    Ok(loaded)
}

fn runtime() -> Result<tokio::runtime::Runtime, Failure> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| {
            Failure::usage(
                "ops.runtime",
                format!("cannot start the async runtime: {e}"),
            )
        })
}
