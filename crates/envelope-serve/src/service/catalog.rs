//! The catalog's part in `serve` (as in the proxy, `envelope_mcp::catalog`): `envelope_search`
//! and `envelope_list` answered from it, each identity seeing only its own results, and the
//! hook that queues a stored result for indexing.

use envelope_mcp::catalog::Job;
use envelope_mcp::catalog::tools::{self, LIST_TOOL, SEARCH_TOOL};
use envelope_ops::Identity;
use envelope_store::Digest;
use serde_json::Value;

use super::{ADMIN_SCOPE, Service};

/// Whether `name` is one of the catalog's tools.
pub fn is_catalog_tool(name: &str) -> bool {
    name == SEARCH_TOOL || name == LIST_TOOL
}

/// Whose results `identity` sees: its id, or `None` (all) without one or as an
/// administrator; the same rule as [`Service::store_for`].
fn owner_of(identity: Option<&Identity>) -> Option<String> {
    identity
        .filter(|i| !i.scopes.iter().any(|s| s == ADMIN_SCOPE))
        .map(|i| i.id.clone())
}

impl Service {
    /// The catalog's tools, when there is a catalog.
    pub(super) fn catalog_tools(&self) -> Vec<Value> {
        match self.settings.catalog {
            Some(_) => vec![tools::search_tool(), tools::list_tool()],
            None => Vec::new(),
        }
    }

    /// `envelope_search` or `envelope_list` for `identity`, on a blocking thread; `None`
    /// without a catalog (the name is then an unknown tool).
    pub(super) async fn catalog_tool(
        &self,
        name: &str,
        arguments: Value,
        identity: Option<&Identity>,
    ) -> Option<Vec<u8>> {
        let catalog = self.settings.catalog.clone()?;
        let search = name == SEARCH_TOOL;
        self.stats
            .record_read(if search { SEARCH_TOOL } else { LIST_TOOL });
        let store = self.store_for(identity);
        let owner = owner_of(identity);
        let settings = self.settings.own_answers();
        let result =
            tools::answer_blocking(catalog, store, owner, search, arguments, settings).await;
        Some(result.to_string().into_bytes())
    }

    /// Queues the result `digest` that a call of `tool` stored for `identity` (returns at
    /// once).
    pub(super) fn index_stored(
        &self,
        digest: Digest,
        tool: &str,
        arguments: Option<Vec<u8>>,
        identity: Option<&Identity>,
    ) {
        if let Some(catalog) = &self.settings.catalog {
            catalog.index(Job {
                store: self.store_for(identity),
                digest,
                owner: owner_of(identity),
                tool: tool.to_string(),
                arguments,
                held: None,
            });
        }
    }
}
