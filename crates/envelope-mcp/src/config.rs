//! The proxy's settings, shared by every session (read-only once the proxy runs).

use std::sync::Arc;
use std::time::Duration;

use crate::managed::{Managed, PendingCall};
use crate::policy::Policy;
pub use crate::shaping::DEFAULT_LIMIT;

/// Where the upstream server is.
#[derive(Clone, Debug)]
pub enum UpstreamSpec {
    /// A command run as a child process, spoken to over its stdin/stdout.
    Command {
        /// The program.
        program: String,
        /// Its arguments.
        args: Vec<String>,
    },
    /// A Streamable HTTP endpoint.
    Url {
        /// The endpoint URL (`http://host:port/mcp`).
        url: String,
        /// Extra request headers (`--header 'Name: value'`), in order.
        headers: Vec<(String, String)>,
    },
}

/// Everything a session needs to know, fixed at start.
#[derive(Clone)]
pub struct Config {
    /// The upstream server.
    pub upstream: UpstreamSpec,
    /// The bound in bytes on each shaped `tools/call` result, unless the policy sets
    /// another: `--limit`; [`DEFAULT_LIMIT`] when neither `--limit` nor `--limit-tokens` is
    /// given; [`NO_BYTE_LIMIT`](crate::shaping::NO_BYTE_LIMIT) with `--limit-tokens` alone
    /// (the token limit decides).
    pub limit: usize,
    /// The bound in tokens (`--limit-tokens`, `--tokenizer`), unless the policy sets
    /// another; both limits hold.
    pub tokens: Option<crate::shaping::TokenBudget>,
    /// Redact secrets in results (on unless `--no-redact`).
    pub redact: bool,
    /// Per upstream request; `None` waits forever.
    pub timeout: Option<Duration>,
    /// Restart the upstream when it exits.
    pub restart: bool,
    /// Per-tool settings.
    pub policy: Policy,
    /// Where full results go (for a session with a token, [`envelope_store::Scoped`] to its
    /// owner; with limits, over [`Config::managed`]).
    pub store: Arc<dyn envelope_store::Store>,
    /// The unscoped store with `--ttl`, `--max-store-bytes`, `--max-results` applied while
    /// running, when one is set (see [`crate::managed`]); `store` is (or scopes) it then.
    pub managed: Option<Arc<Managed>>,
    /// The catalog of stored results (`envelope_list`, `envelope_search`); `None`: those
    /// tools are not offered.
    pub catalog: Option<Arc<crate::catalog::Catalog>>,
    /// Whose session this is: the identity `store` is scoped to (see [`scoped_to`]); `None`
    /// without tokens.
    pub owner: Option<String>,
}

impl Config {
    /// The store one `tools/call` puts its results through, and the pending call that pins
    /// them until it is dropped (once the answer is sent). Without limits: `store`, and no
    /// pins.
    pub fn call_store(&self) -> (Option<PendingCall>, Arc<dyn envelope_store::Store>) {
        let Some(managed) = &self.managed else {
            return (None, self.store.clone());
        };
        let call = managed.call();
        let base = call.store();
        let store: Arc<dyn envelope_store::Store> = match &self.owner {
            // The markers go through the call's store too: they are not results, it leaves
            // them alone.
            Some(owner) => Arc::new(envelope_store::Scoped::new(base, Some(owner.clone()))),
            None => base,
        };
        (Some(call), store)
    }
}

impl std::fmt::Debug for Config {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Config")
            .field("upstream", &self.upstream)
            .field("limit", &self.limit)
            .field("tokens", &self.tokens)
            .field("redact", &self.redact)
            .field("timeout", &self.timeout)
            .field("restart", &self.restart)
            .field("policy", &self.policy)
            .field("catalog", &self.catalog)
            .field("owner", &self.owner)
            .finish_non_exhaustive()
    }
}

/// The settings of a session whose client presented `token`: its stored results are its
/// own (the store as [`envelope_store::Scoped`] for the token's identity, a digest of the
/// token, never the token itself). Without a token, the settings as they are.
pub fn scoped_to(config: &Arc<Config>, token: Option<&str>) -> Arc<Config> {
    let Some(token) = token else {
        return config.clone();
    };
    let owner = format!(
        "token:{}",
        envelope_store::Digest::of(token.as_bytes()).hex()
    );
    let mut scoped = Config::clone(config);
    scoped.store = Arc::new(envelope_store::Scoped::new(
        config.store.clone(),
        Some(owner.clone()),
    ));
    scoped.owner = Some(owner);
    Arc::new(scoped)
}
