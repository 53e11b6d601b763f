//! The catalog's part in a session: `tools/call` of `envelope_search` and `envelope_list`
//! answered from it, and the hook that queues a stored result for indexing.

use std::sync::Arc;

use envelope_store::Digest;
use serde_json::Value;

use super::Session;
use super::own::Own;
use super::settings::tool_settings;
use crate::catalog::tools::{self, LIST_TOOL, SEARCH_TOOL};
use crate::catalog::{Catalog, Job};
use crate::config::Config;
use crate::held::Held;

/// Whether the session answers a call to `name` from the catalog.
pub(super) fn answers(config: &Config, name: &str) -> bool {
    config.catalog.is_some() && (name == SEARCH_TOOL || name == LIST_TOOL)
}

impl Session {
    /// `tools/call envelope_search` or `envelope_list`: answered from the catalog on a
    /// blocking thread (SQLite, and the store to leave out evicted results).
    pub(super) fn answer_catalog_tool(&mut self, own: Own, name: &str, params: &[u8]) {
        let Some(catalog) = self.config.catalog.clone() else {
            return;
        };
        let arguments = serde_json::from_slice::<Value>(params)
            .ok()
            .and_then(|p| p.get("arguments").cloned())
            .unwrap_or(Value::Null);
        let search = name == SEARCH_TOOL;
        self.stats
            .record_read(if search { SEARCH_TOOL } else { LIST_TOOL });
        let settings = tool_settings(&self.config, name);
        let (store, owner) = (self.config.store.clone(), self.config.owner.clone());
        self.tasks.spawn(async move {
            let result =
                tools::answer_blocking(catalog, store, owner, search, arguments, settings).await;
            own.answer(result).await;
        });
    }
}

/// What the catalog needs to index a result once shaping has stored it.
pub(super) struct Indexer {
    catalog: Arc<Catalog>,
    config: Arc<Config>,
    tool: String,
    arguments: Option<Vec<u8>>,
}

impl Indexer {
    /// `None` without a catalog.
    pub(super) fn new(
        config: &Arc<Config>,
        tool: &str,
        arguments: Option<Vec<u8>>,
    ) -> Option<Self> {
        Some(Indexer {
            catalog: config.catalog.clone()?,
            config: config.clone(),
            tool: tool.to_string(),
            arguments,
        })
    }

    /// Queues the stored result `digest` (returns at once: the catalog's thread indexes it
    /// from `held`, the bytes stored, when given, else reads it back from the store).
    pub(super) fn stored(self, digest: Digest, held: Option<Arc<Held>>) {
        self.catalog.index(Job {
            store: self.config.store.clone(),
            digest,
            owner: self.config.owner.clone(),
            tool: self.tool,
            arguments: self.arguments,
            held,
        });
    }
}
