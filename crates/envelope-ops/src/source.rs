//! Where operations come from. Each kind of source in the registry file (local commands,
//! MCP servers, OpenAPI services) gives its operations through [`OperationSource`]; the MCP
//! and OpenAPI adapters plug in here.

use std::future::Future;
use std::pin::Pin;

use crate::error::RegistryError;
use crate::handler::Handler;
use crate::mcp::McpServerHandle;
use crate::registry::Registry;
use crate::spec::OperationSpec;
use crate::update::Updater;

/// The operations of one source, each with its handler.
pub type Operations = Vec<(OperationSpec, Box<dyn Handler>)>;

/// The future an [`OperationSource`] returns.
pub type SourceFuture<'a> =
    Pin<Box<dyn Future<Output = Result<Operations, RegistryError>> + Send + 'a>>;

/// A source of operations: asynchronous, since an MCP server must be started and asked for
/// its tools, an OpenAPI document fetched. A source that fails is reported by its name and
/// the others are still registered.
pub trait OperationSource: Send + Sync {
    /// Its name as the registry file spells it (`commands.git`, `mcpServers.github`).
    fn name(&self) -> String;

    /// Its operations.
    fn operations(&self) -> SourceFuture<'_>;

    /// Called once its operations are registered: a source whose operations can change
    /// later (an MCP server's `tools/list_changed`) keeps `updates` to queue the changes.
    fn watch(&self, updates: Updater) {
        let _ = updates;
    }

    /// An MCP server's source gives its server, whose resources and prompts a host that
    /// serves the registry relays; other sources have none.
    fn mcp_server(&self) -> Option<McpServerHandle> {
        None
    }
}

/// Registers the operations of every source into `registry`: the sources are asked at
/// once (MCP servers start side by side, so a slow one costs its own time only), their
/// operations registered in the order of `sources`.
/// A source that fails, or an operation it gives that is refused, is a warning naming the
/// source and the cause; the other sources and operations are still registered.
///
/// ```
/// use envelope_ops::Registry;
/// use envelope_ops::source::register_all;
///
/// let mut registry = Registry::new();
/// let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
/// let warnings = rt.block_on(register_all(&mut registry, &[]));
/// assert!(warnings.is_empty() && registry.is_empty());
/// ```
pub async fn register_all(
    registry: &mut Registry,
    sources: &[Box<dyn OperationSource>],
) -> Vec<String> {
    let mut warnings = Vec::new();
    for (source, listed) in sources.iter().zip(all_operations(sources).await) {
        match listed {
            Ok(operations) => {
                for (spec, handler) in operations {
                    if let Err(e) = registry.register(spec, handler) {
                        warnings.push(format!("{}: {e}", source.name()));
                    }
                }
                source.watch(registry.updater());
                if let Some(server) = source.mcp_server() {
                    registry.add_mcp_server(server);
                }
            }
            Err(e) => warnings.push(format!("{}: not registered: {e}", source.name())),
        }
    }
    warnings
}

/// Every source's operations, the futures polled together (they borrow the sources, so
/// they cannot be spawned).
async fn all_operations(
    sources: &[Box<dyn OperationSource>],
) -> Vec<Result<Operations, RegistryError>> {
    let mut running: Vec<Option<SourceFuture<'_>>> =
        sources.iter().map(|s| Some(s.operations())).collect();
    let mut done: Vec<Option<Result<Operations, RegistryError>>> =
        sources.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut finished = true;
        for (slot, result) in running.iter_mut().zip(done.iter_mut()) {
            if let Some(future) = slot {
                match future.as_mut().poll(cx) {
                    std::task::Poll::Ready(r) => {
                        *result = Some(r);
                        *slot = None;
                    }
                    std::task::Poll::Pending => finished = false,
                }
            }
        }
        if finished {
            std::task::Poll::Ready(())
        } else {
            std::task::Poll::Pending
        }
    })
    .await;
    done.into_iter().flatten().collect()
}
