//! `envelope serve`: a registry as one MCP server (stdio, or Streamable HTTP with
//! `--listen`) and one HTTP API (`--http`), calls run here or on NATS workers (`--nats`).
//!
//! MCP is on stdio only when neither `--listen` nor `--http` is given: `--http` alone is an
//! HTTP API (a deployment with no client on stdin), `--listen --http` serves both.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use envelope_mcp::policy::Policy;
use envelope_mcp::stats::{Stats, log};
use envelope_mcp::transport::{self, http_server};
use envelope_ops::Identity;
use envelope_ops::file::RegistryFile;
use envelope_ops::protocol;
use envelope_serve::dispatch::Dispatch;
use envelope_serve::http::{self, Access};
use envelope_serve::service::{Service, Settings};
use envelope_serve::{Tokens, mcp};

use crate::cli::ServeArgs;
use crate::{CmdResult, Failure};

/// A call runs at most this long unless `--timeout` says otherwise.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);
/// A subscription waits at most this long for its next event unless `--idle-timeout` says.
const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(60);

/// The stdio caller's id (and the HTTP callers' when no tokens are set).
const LOCAL_CALLER: &str = "serve";

/// Serves until stdin closes (stdio), or until SIGINT/SIGTERM (`--listen`, `--http`); then
/// writes `--stats`.
pub fn run(args: &ServeArgs) -> CmdResult {
    envelope_mcp::transport::lines::set_max_message(args.max_message);
    let level: log::Level = args
        .log_level
        .parse()
        .map_err(|e| Failure::usage("usage.bad-value", format!("--log-level: {e}")))?;
    log::set_level(level);
    let listen = address("--listen", args.listen.as_deref())?;
    let http_addr = address("--http", args.http.as_deref())?;
    let stats = Arc::new(Stats::default());
    let settings = settings(args, &stats)?;
    let access = access(args)?;
    let limits = super::proxy::http_limits(&args.http_limits)?;
    if let Ok(exe) = std::env::current_exe() {
        envelope_mcp::drill::jq_worker::isolate_in(exe);
    }
    let file = RegistryFile::read(&args.registry.registry)
        .map_err(|e| Failure::usage("ops.registry", e))?;
    // Stdio alone: one session on one thread (no message crosses threads); HTTP: many.
    let runtime = if listen.is_none() && http_addr.is_none() {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
    } else {
        tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
    }
    .map_err(|e| Failure::usage("serve.start", format!("cannot start the runtime: {e}")))?;
    let catalog = settings.catalog.clone();
    let served = runtime.block_on(async {
        let service = start(args, &file, settings, stats.clone()).await?;
        serve(service, access, limits, listen, http_addr).await
    });
    runtime.shutdown_background();
    // Results stored just before the end are in the catalog for the next run too.
    if let Some(catalog) = catalog {
        catalog.flush();
    }
    super::proxy::write_stats(args.stats.as_deref(), &stats)?;
    served
}

/// Loads the registry (starting its MCP servers on this runtime) and connects to NATS.
async fn start(
    args: &ServeArgs,
    file: &RegistryFile,
    settings: Settings,
    stats: Arc<Stats>,
) -> Result<Arc<Service>, Failure> {
    let loaded = file.load().await;
    for warning in &loaded.warnings {
        eprintln!(
            "envelope: warning: {}: {warning}",
            args.registry.registry.display()
        );
    }
    let registry = Arc::new(loaded.registry);
    let dispatch = match &args.nats {
        None => Dispatch::local(registry),
        Some(url) => {
            let nats = |e: protocol::NatsError| Failure::usage("ops.nats", e.to_string());
            let client = protocol::connect(url).await.map_err(nats)?;
            let caller = protocol::nats_caller(client, &args.prefix)
                .await
                .map_err(nats)?;
            Dispatch::remote(registry, caller)
        }
    };
    let service =
        Service::new(dispatch, settings, stats).map_err(|e| Failure::usage(e.code(), e))?;
    Ok(Arc::new(service))
}

/// The MCP server (stdio or `--listen`) and the HTTP view (`--http`), until the client of
/// stdio is gone or a signal comes.
async fn serve(
    service: Arc<Service>,
    access: Access,
    limits: super::proxy::HttpLimits,
    listen: Option<SocketAddr>,
    http_addr: Option<SocketAddr>,
) -> CmdResult {
    let mut running = tokio::task::JoinSet::new();
    if let Some(addr) = http_addr {
        let view = http::bind(addr, service.clone(), access.clone())
            .await
            .map_err(|e| listen_failure("--http", e))?
            .limits(limits.limits);
        let url = format!("http://{}", view.local_addr().unwrap_or(addr));
        log::info("serve.http_listening", &[("url", url.into())]);
        running.spawn(view.run());
    }
    match listen {
        Some(addr) => {
            let options = http_server::ListenOptions {
                tokens: access
                    .tokens
                    .as_ref()
                    .map(|t| t.secrets())
                    .unwrap_or_default(),
                idle_timeout: limits.session_idle_timeout,
                limits: limits.limits,
                ..http_server::ListenOptions::from_env(addr)
            };
            let starter: http_server::SessionStarter = {
                let service = service.clone();
                let access = access.clone();
                Arc::new(move |link, opened| {
                    let identity = access.identity_of(opened.token.as_deref());
                    tokio::spawn(mcp::run(link, service.clone(), identity));
                })
            };
            let server = http_server::bind(options, starter)
                .await
                .map_err(|e| listen_failure("--listen", e))?
                // `GET /metrics` there too, behind the same tokens as `/mcp`.
                .metrics(service.stats().clone());
            let url = format!(
                "http://{}{}",
                server.local_addr().unwrap_or(addr),
                http_server::ENDPOINT
            );
            log::info("serve.listening", &[("url", url.into())]);
            running.spawn(server.run());
        }
        // `--http` alone serves the HTTP API only: no client on stdin to end it.
        None if http_addr.is_some() => {}
        None => {
            let (client, written) = transport::stdio::stdio();
            running.spawn(async move {
                mcp::run(client, service, access.identity).await;
                let _ = tokio::time::timeout(Duration::from_secs(5), written).await;
            });
        }
    }
    tokio::select! {
        // Stdio ends when its client is gone; the servers run until a signal.
        _ = running.join_next() => {}
        signal = super::proxy::shutdown_signal() => {
            log::info("serve.signal", &[("signal", signal.into())]);
        }
    }
    transport::child::end_all();
    Ok(())
}

/// Why `--http` or `--listen` cannot start, naming serve's own remedy: its tokens are
/// `--tokens FILE` or `ENVELOPE_TOKENS` (the proxy's `ENVELOPE_TOKEN`, which the listener's
/// own message names, is not read by serve).
fn listen_failure(flag: &str, e: http_server::ListenError) -> Failure {
    let message = match e {
        http_server::ListenError::NeedsToken(addr) => format!(
            "{flag} {addr}: refusing to listen: it is not a loopback address, so any host on the network could call the operations; give --tokens FILE (or set ENVELOPE_TOKENS to the same JSON, {{\"<token>\": {{\"id\": \"...\", \"scopes\": [...]}}}}) or listen on 127.0.0.1"
        ),
        other => format!("{flag}: {other}"),
    };
    Failure::usage("serve.start", message)
}

fn address(flag: &str, text: Option<&str>) -> Result<Option<SocketAddr>, Failure> {
    text.map(|text| {
        text.parse().map_err(|e| {
            Failure::usage(
                "usage.bad-value",
                format!("{flag} {text}: give an address and port such as 127.0.0.1:8808 ({e})"),
            )
        })
    })
    .transpose()
}

fn settings(args: &ServeArgs, stats: &Arc<Stats>) -> Result<Settings, Failure> {
    let (limit, tokens) =
        super::proxy::limits(args.limit, args.limit_tokens, args.tokenizer.as_deref())?;
    let policy = match &args.policy {
        Some(path) => Policy::load(path).map_err(|e| Failure::usage("serve.policy", e))?,
        None => Policy::default(),
    };
    let (store, managed) =
        super::artifact::open_managed_store(args.store.as_ref(), &args.store_limits, stats)?;
    Ok(Settings {
        limit,
        tokens,
        redact: !args.no_redact,
        timeout: super::proxy::seconds("--timeout", args.timeout, DEFAULT_TIMEOUT)?,
        idle_timeout: super::proxy::seconds(
            "--idle-timeout",
            args.idle_timeout,
            DEFAULT_IDLE_TIMEOUT,
        )?,
        store,
        policy,
        managed,
        catalog: super::proxy::catalog(&super::artifact::store_location(args.store.as_ref())),
    })
}

/// The tokens (`--tokens`, else `ENVELOPE_TOKENS`) and the local caller's identity.
fn access(args: &ServeArgs) -> Result<Access, Failure> {
    let tokens = match &args.tokens {
        Some(path) => Some(read_tokens(path)?),
        None => Tokens::from_env().map_err(|e| Failure::usage(e.code(), e))?,
    };
    let identity = (!args.scopes.is_empty()).then(|| Identity {
        id: LOCAL_CALLER.into(),
        scopes: args.scopes.clone(),
        resources: None,
    });
    Ok(Access {
        tokens: tokens.filter(|t| !t.is_empty()).map(Arc::new),
        identity,
    })
}

fn read_tokens(path: &Path) -> Result<Tokens, Failure> {
    Tokens::read(path).map_err(|e| Failure::usage(e.code(), e))
}
