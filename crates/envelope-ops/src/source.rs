//! Where operations come from. Each kind of source in the registry file (local commands,
//! MCP servers, OpenAPI services) gives its operations through [`OperationSource`]; the MCP
//! and OpenAPI adapters plug in here.

use std::future::Future;
use std::pin::Pin;

use crate::error::RegistryError;
use crate::handler::Handler;
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
}

/// Registers the operations of every source into `registry`, one source after the other.
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
    for source in sources {
        match source.operations().await {
            Ok(operations) => {
                for (spec, handler) in operations {
                    if let Err(e) = registry.register(spec, handler) {
                        warnings.push(format!("{}: {e}", source.name()));
                    }
                }
                source.watch(registry.updater());
            }
            Err(e) => warnings.push(format!("{}: not registered: {e}", source.name())),
        }
    }
    warnings
}
