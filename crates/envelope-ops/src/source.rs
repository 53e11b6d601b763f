//! Where operations come from. Each kind of source in the registry file (local commands,
//! MCP servers, OpenAPI services) gives its operations through [`OperationSource`]; the MCP
//! and OpenAPI adapters plug in here.

use std::future::Future;
use std::pin::Pin;

use crate::error::RegistryError;
use crate::handler::Handler;
use crate::spec::OperationSpec;

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
}
