//! Live changes to a source's operations (an MCP server's `notifications/tools/list_changed`).
//!
//! A source that can change after registration is handed an [`Updater`] by
//! [`crate::source::register_all`]; it queues a [`SourceUpdate`] (the ids it registered
//! before, the operations it has now). The registry applies the queue when its owner calls
//! [`crate::Registry::apply_updates`] (it needs `&mut`, so `execute` stays lock-free);
//! [`crate::Registry::updated`] waits until something is queued, for a long-running host.

use std::sync::{Mutex, Weak};

use tokio::sync::Notify;

use crate::handler::Operations;

/// A source's new set of operations.
pub struct SourceUpdate {
    /// The source, as the registry file names it (`mcpServers.git`): for warnings.
    pub source: String,
    /// The ids the source registered before (removed first).
    pub remove: Vec<String>,
    /// The operations it has now.
    pub add: Operations,
}

/// The queue of updates a registry has not applied yet.
#[derive(Default)]
pub(crate) struct Inbox {
    pub(crate) queue: Mutex<Vec<SourceUpdate>>,
    pub(crate) notify: Notify,
}

/// Queues updates for one registry; does nothing once the registry is gone.
#[derive(Clone)]
pub struct Updater {
    pub(crate) inbox: Weak<Inbox>,
}

impl Updater {
    /// Queues `update`; false when the registry no longer exists.
    pub fn send(&self, update: SourceUpdate) -> bool {
        let Some(inbox) = self.inbox.upgrade() else {
            return false;
        };
        inbox
            .queue
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(update);
        inbox.notify.notify_one();
        true
    }
}
