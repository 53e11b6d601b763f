//! `envelope proxy`: the MCP proxy (crate envelope-mcp) from the command line.

use std::sync::Arc;
use std::time::Duration;

use envelope::tokens::Tokenizer;
use envelope_mcp::config::{Config, DEFAULT_LIMIT, UpstreamSpec};
use envelope_mcp::policy::Policy;
use envelope_mcp::shaping::{NO_BYTE_LIMIT, TokenBudget};
use envelope_mcp::stats::{Stats, log};
use envelope_mcp::transport::{self, http_server};

use crate::cli::{HttpLimitsArgs, ProxyArgs};
use crate::{CmdResult, Failure};

/// Builds the configuration, runs the proxy until the client is gone (or SIGINT/SIGTERM),
/// then writes `--stats` and the summary line.
pub fn run(args: &ProxyArgs) -> CmdResult {
    envelope_mcp::transport::lines::set_max_message(args.max_message);
    let level: log::Level = args
        .log_level
        .parse()
        .map_err(|e| Failure::usage("usage.bad-value", format!("--log-level: {e}")))?;
    log::set_level(level);
    let stats = Arc::new(Stats::default());
    let config = Arc::new(config(args, &stats)?);
    let limits = http_limits(&args.http_limits)?;
    // `envelope_read`'s jq filters run in a child process of this binary: a filter that
    // exhausts memory or recurses without end ends the child, never the proxy.
    if let Ok(exe) = std::env::current_exe() {
        envelope_mcp::drill::jq_worker::isolate_in(exe);
    }
    // One stdio session runs on one thread: a message crosses no thread on its way
    // (shaping big results still goes to blocking threads). HTTP serves many sessions.
    let runtime = match args.listen {
        None => tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build(),
        Some(_) => tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build(),
    }
    .map_err(|e| Failure::usage("proxy.start", format!("cannot start the runtime: {e}")))?;
    let catalog = config.catalog.clone();
    let served = runtime.block_on(serve(args, limits, config, stats.clone()));
    // Our stdin reader may sit in a blocking read: do not wait for it.
    runtime.shutdown_background();
    // Results stored just before the end are in the catalog for the next run too (the
    // catalog indexes on its own thread; up to 30 s).
    if let Some(catalog) = catalog {
        catalog.flush();
    }
    write_stats(args.stats.as_deref(), &stats)?;
    // Lines the log's rate limit dropped since its last line are counted before the end.
    log::flush_suppressed();
    if log::enabled(log::Level::Error) {
        eprintln!("{}", stats.summary_line());
    }
    served
}

/// Runs the sessions: one on stdio, or many over HTTP with `--listen`.
async fn serve(
    args: &ProxyArgs,
    limits: HttpLimits,
    config: Arc<Config>,
    stats: Arc<Stats>,
) -> CmdResult {
    let sessions = async {
        match &args.listen {
            Some(address) => serve_http(address, limits, config, stats).await,
            None => {
                let (client, written) = transport::stdio::stdio();
                let ended = envelope_mcp::session::run(client, config, stats).await;
                // The last answers are written before the process exits.
                let _ = tokio::time::timeout(Duration::from_secs(5), written).await;
                ended.map_err(|reason| {
                    Failure::usage(
                        "proxy.upstream",
                        format!("the upstream server could not be started: {reason}"),
                    )
                })
            }
        }
    };
    tokio::select! {
        done = sessions => done,
        signal = shutdown_signal() => {
            log::info("proxy.signal", &[("signal", signal.into())]);
            transport::child::end_all();
            Ok(())
        }
    }
}

/// `--listen ADDR`: Streamable HTTP at `/mcp`, one relay session (and one upstream) per
/// client session, until a signal ends the proxy.
async fn serve_http(
    address: &str,
    limits: HttpLimits,
    config: Arc<Config>,
    stats: Arc<Stats>,
) -> CmdResult {
    let addr: std::net::SocketAddr = address.parse().map_err(|e| {
        Failure::usage(
            "usage.bad-value",
            format!("--listen {address}: give an address and port such as 127.0.0.1:8808 ({e})"),
        )
    })?;
    let metrics = stats.clone();
    let starter: http_server::SessionStarter = Arc::new(move |link, opened| {
        tokio::spawn(envelope_mcp::session::run(
            link,
            envelope_mcp::config::scoped_to(&config, opened.token.as_deref()),
            stats.clone(),
        ));
    });
    let options = http_server::ListenOptions {
        idle_timeout: limits.session_idle_timeout,
        limits: limits.limits,
        ..http_server::ListenOptions::from_env(addr)
    };
    let server = http_server::bind(options, starter)
        .await
        .map_err(|e| Failure::usage("proxy.start", e))?
        // `GET /metrics`: the counters `--stats` writes, behind the same token as `/mcp`.
        .metrics(metrics);
    log::info(
        "proxy.listening",
        &[(
            "url",
            format!("http://{addr}{}", http_server::ENDPOINT).into(),
        )],
    );
    server.run().await;
    Ok(())
}

/// The HTTP limits of `--listen` (and `serve --http`) from their flags.
#[derive(Clone, Copy, Debug)]
pub(crate) struct HttpLimits {
    pub(crate) limits: http_server::Limits,
    pub(crate) session_idle_timeout: Duration,
}

/// A flag's seconds (`default` when absent); a value that is not a positive finite number
/// is refused. Every seconds flag of `proxy` and `serve` is read here.
pub(crate) fn seconds(
    flag: &str,
    value: Option<f64>,
    default: Duration,
) -> Result<Duration, Failure> {
    match value {
        None => Ok(default),
        Some(secs) if secs.is_finite() && secs > 0.0 && secs < 1e9 => {
            Ok(Duration::from_secs_f64(secs))
        }
        Some(secs) => Err(Failure::usage(
            "usage.bad-value",
            format!("{flag} {secs}: give a number of seconds above 0"),
        )),
    }
}

/// Reads the HTTP limit flags; a value that is not a positive number is refused.
pub(crate) fn http_limits(args: &HttpLimitsArgs) -> Result<HttpLimits, Failure> {
    let count = |flag: &str, value: Option<usize>, default: usize| match value {
        None => Ok(default),
        Some(0) => Err(Failure::usage(
            "usage.bad-value",
            format!("{flag} 0: give a number above 0"),
        )),
        Some(n) => Ok(n),
    };
    let limits = http_server::Limits::default()
        .header_read_timeout(seconds(
            "--header-timeout",
            args.header_timeout,
            http_server::DEFAULT_HEADER_READ_TIMEOUT,
        )?)
        .body_read_timeout(seconds(
            "--body-timeout",
            args.body_timeout,
            http_server::DEFAULT_BODY_READ_TIMEOUT,
        )?)
        .max_connections(count(
            "--max-connections",
            args.max_connections,
            http_server::DEFAULT_MAX_CONNECTIONS,
        )?);
    // Given, the cap applies to local clients too; by default only to remote ones.
    let limits = match args.max_sessions_per_client {
        None => limits,
        Some(_) => limits.max_sessions_per_client(count(
            "--max-sessions-per-client",
            args.max_sessions_per_client,
            http_server::DEFAULT_MAX_SESSIONS_PER_CLIENT,
        )?),
    };
    let session_idle_timeout = seconds(
        "--session-idle-timeout",
        args.session_idle_timeout,
        http_server::DEFAULT_IDLE_TIMEOUT,
    )?;
    Ok(HttpLimits {
        limits,
        session_idle_timeout,
    })
}

/// SIGINT or SIGTERM, by name (`proxy` and `serve` end on either).
pub(crate) async fn shutdown_signal() -> &'static str {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut interrupt), Ok(mut terminate)) = (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
    ) else {
        return std::future::pending().await;
    };
    tokio::select! {
        _ = interrupt.recv() => "SIGINT",
        _ = terminate.recv() => "SIGTERM",
    }
}

/// The proxy's configuration from the flags; every flag is checked before anything starts.
fn config(args: &ProxyArgs, stats: &Arc<Stats>) -> Result<Config, Failure> {
    let upstream = upstream(args)?;
    let timeout = match args.timeout {
        None => None,
        Some(secs) if secs.is_finite() && secs > 0.0 && secs < 1e9 => {
            Some(Duration::from_secs_f64(secs))
        }
        Some(secs) => {
            return Err(Failure::usage(
                "usage.bad-value",
                format!("--timeout {secs}: give a number of seconds above 0"),
            ));
        }
    };
    let (limit, tokens) = limits(args.limit, args.limit_tokens, args.tokenizer.as_deref())?;
    let policy = match &args.policy {
        Some(path) => load_policy(path)?,
        None => Policy::default(),
    };
    let (store, managed) =
        super::artifact::open_managed_store(args.store.as_ref(), &args.store_limits, stats)?;
    let catalog = catalog(&super::artifact::store_location(args.store.as_ref()));
    Ok(Config {
        upstream,
        limit,
        tokens,
        redact: !args.no_redact,
        timeout,
        restart: !args.no_restart,
        policy,
        store,
        managed,
        catalog,
        owner: None,
    })
}

/// The limits of `--limit`, `--limit-tokens` and `--tokenizer` (proxy and serve): the
/// byte limit ([`DEFAULT_LIMIT`] when neither limit is given, none with `--limit-tokens`
/// alone: the token limit decides) and the token limit. A zero or an unknown tokenizer is
/// a usage error.
pub(crate) fn limits(
    bytes: Option<usize>,
    tokens: Option<usize>,
    tokenizer: Option<&str>,
) -> Result<(usize, Option<TokenBudget>), Failure> {
    if bytes == Some(0) {
        return Err(Failure::usage(
            "usage.bad-value",
            "--limit 0: give a number of bytes above 0",
        ));
    }
    if tokens == Some(0) {
        return Err(Failure::usage(
            "usage.bad-value",
            "--limit-tokens 0: give a number of tokens above 0",
        ));
    }
    let tokenizer = match tokenizer {
        None => Tokenizer::O200kBase,
        Some(name) => Tokenizer::by_name(name)
            .map_err(|e| Failure::usage("usage.bad-value", format!("--tokenizer: {e}")))?,
    };
    let tokens = tokens.map(|limit| TokenBudget {
        limit,
        tokenizer: envelope_mcp::shaping::shared_tokenizer(tokenizer.clone()),
    });
    let bytes = match (bytes, tokens) {
        (Some(bytes), _) => bytes,
        (None, Some(_)) => NO_BYTE_LIMIT,
        (None, None) => DEFAULT_LIMIT,
    };
    Ok((bytes, tokens))
}

/// The catalog beside the store (`envelope_list`, `envelope_search`). One that cannot be
/// opened is said at start, and the proxy (or serve) runs without those two tools: the results are
/// still stored and `envelope_read` still reads them.
pub fn catalog(location: &str) -> Option<Arc<envelope_mcp::catalog::Catalog>> {
    match envelope_mcp::catalog::Catalog::for_store(location) {
        Ok(catalog) => {
            log::info("catalog.open", &[("location", catalog.location().into())]);
            Some(Arc::new(catalog))
        }
        Err(error) => {
            log::warn(
                "catalog.unavailable",
                &[
                    ("error", error.to_string().into()),
                    (
                        "effect",
                        "envelope_search and envelope_list are not offered".into(),
                    ),
                ],
            );
            None
        }
    }
}

/// The policy file, checked whole before anything starts (an error names the line).
fn load_policy(path: &std::path::Path) -> Result<Policy, Failure> {
    Policy::load(path).map_err(|e| Failure::usage("proxy.policy", e))
}

/// COMMAND after `--`, or `--upstream-url` with its headers: exactly one of them.
fn upstream(args: &ProxyArgs) -> Result<UpstreamSpec, Failure> {
    match (&args.upstream_url, args.command.split_first()) {
        (Some(_), Some(_)) => Err(Failure::usage(
            "usage.invalid",
            "give either --upstream-url or a COMMAND after --, not both",
        )),
        (None, None) => Err(Failure::usage(
            "usage.invalid",
            "the upstream server is missing: envelope proxy [OPTIONS] -- COMMAND [ARGS...] (or --upstream-url URL)",
        )),
        (None, Some((program, rest))) => Ok(UpstreamSpec::Command {
            program: program.clone(),
            args: rest.to_vec(),
        }),
        (Some(url), None) => {
            let headers = args
                .headers
                .iter()
                .map(|header| header_pair(header))
                .collect::<Result<_, _>>()?;
            Ok(UpstreamSpec::Url {
                url: url.clone(),
                headers,
            })
        }
    }
}

/// `Name: value` → (name, value).
fn header_pair(header: &str) -> Result<(String, String), Failure> {
    match header.split_once(':') {
        Some((name, value)) if !name.trim().is_empty() && !name.contains(char::is_whitespace) => {
            Ok((name.to_string(), value.trim().to_string()))
        }
        _ => Err(Failure::usage(
            "usage.bad-value",
            format!("--header {header:?}: write it as `Name: value`"),
        )),
    }
}

/// Writes the stats as indented JSON to `--stats FILE`, when given (proxy and serve).
pub(crate) fn write_stats(path: Option<&std::path::Path>, stats: &Stats) -> CmdResult {
    let Some(path) = path else {
        return Ok(());
    };
    let text = format!("{:#}\n", stats.to_json());
    std::fs::write(path, text).map_err(|e| {
        Failure::usage(
            "output.unwritable",
            format!("--stats {}: {e}", path.display()),
        )
    })
}
