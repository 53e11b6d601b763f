//! Where operations come from. Each kind of source in the registry file (local commands,
//! MCP servers, OpenAPI services) gives its operations through [`OperationSource`]; the MCP
//! and OpenAPI adapters plug in here.

use crate::error::TextError;
use std::future::Future;
use std::pin::Pin;

use crate::error::RegistryError;
use crate::registry::Registry;
use crate::relay::RelayTarget;
use crate::spec::OperationSpec;
use crate::update::Updater;

pub use crate::handler::Operations;

/// An operation a source gives by its id only, built when first needed
/// ([`Registry::register_deferred`]).
pub struct Deferred {
    /// Its namespace.
    pub namespace: String,
    /// Its name.
    pub name: String,
    /// What builds its spec and handler.
    pub load: crate::registry::Loader,
}

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
    fn mcp_server(&self) -> Option<std::sync::Arc<dyn RelayTarget>> {
        None
    }

    /// Whether the operations of the last [`OperationSource::operations`] have schemas
    /// known to compile (read back from a cache written only when they all did): the
    /// registry then compiles each on first use. False by default.
    fn compiled_before(&self) -> bool {
        false
    }

    /// The operations of the last [`OperationSource::operations`] that are built on
    /// first use (an OpenAPI source read back from its cache), taken once; none by default.
    fn deferred(&self) -> Vec<Deferred> {
        Vec::new()
    }

    /// What the source read with a warning while giving its operations (an OpenAPI
    /// document's keywords read the sensible way), taken once `operations` is done;
    /// [`register_all`] names the source before each.
    fn warnings(&self) -> Vec<String> {
        Vec::new()
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
                let compiled_before = source.compiled_before();
                for (spec, handler) in operations {
                    let registered = match compiled_before {
                        true => registry.register_compiled_before(spec, handler),
                        false => registry.register(spec, handler),
                    };
                    if let Err(e) = registered {
                        warnings.push(format!("{}: {e}", source.name()));
                    }
                }
                for op in source.deferred() {
                    if let Err(e) = registry.register_deferred(&op.namespace, &op.name, op.load) {
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
        for warning in source.warnings() {
            warnings.push(format!("{}: {warning}", source.name()));
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

/// Applies a source's `rename` table (an operation's name in the source → the name it is
/// registered under) to its operations' specs.
///
/// # Errors
///
/// A name in the table that no operation has (a typo would rename nothing), and a new name
/// that another operation of the source has or gets too, naming both.
///
/// ```
/// use std::collections::BTreeMap;
/// use envelope_ops::source::rename;
/// use envelope_ops::spec::{OperationSpec, OperationType};
///
/// let specs = || vec![
///     OperationSpec::new("gh", "repos/list-for-authenticated-user", OperationType::Query),
///     OperationSpec::new("gh", "repos/get", OperationType::Query),
/// ];
/// let long = "repos/list-for-authenticated-user".to_owned();
/// let mut renamed = specs();
/// rename(&BTreeMap::from([(long.clone(), "my_repos".to_owned())]), renamed.iter_mut()).unwrap();
/// assert_eq!(renamed[0].id(), "gh.my_repos");
/// let clash = BTreeMap::from([(long.clone(), "repos/get".to_owned())]);
/// let e = rename(&clash, specs().iter_mut()).unwrap_err().to_string();
/// assert!(e.contains(&long) && e.contains("\"repos/get\"") && e.contains("gh.repos/get"), "{e}");
/// let typo = BTreeMap::from([("repos/gett".to_owned(), "x".to_owned())]);
/// assert!(rename(&typo, specs().iter_mut()).unwrap_err().message().contains("repos/gett"));
/// ```
pub fn rename<'a>(
    table: &std::collections::BTreeMap<String, String>,
    specs: impl IntoIterator<Item = &'a mut OperationSpec>,
) -> Result<(), TextError> {
    if table.is_empty() {
        return Ok(());
    }
    let mut specs: Vec<&mut OperationSpec> = specs.into_iter().collect();
    for from in table.keys() {
        if !specs.iter().any(|spec| &spec.name == from) {
            return Err(format!(
                "`rename`: no operation is named {from:?} (names are operationIds, else <method>_<path>; MCP tools by their name)"
            )
            .into());
        }
    }
    // The final id of each operation → its name before renaming and whether it was renamed.
    let mut taken: std::collections::BTreeMap<String, (String, bool)> = Default::default();
    for spec in &mut specs {
        let original = spec.name.clone();
        let renamed = match table.get(&original) {
            Some(to) => {
                spec.name = to.clone();
                true
            }
            None => false,
        };
        let id = spec.id();
        match taken.get(&id) {
            // Two operations the source itself names alike: the registry says so.
            Some((_, false)) if !renamed => {}
            Some((other, other_renamed)) => {
                let other = match other_renamed {
                    true => format!("{other:?} (renamed to {:?})", table[other]),
                    false => format!("{other:?}"),
                };
                let this = match renamed {
                    true => format!("{original:?} (renamed to {:?})", spec.name),
                    false => format!("{original:?}"),
                };
                return Err(format!(
                    "`rename`: operations {other} and {this} would both be {id}: give one another name"
                )
                .into());
            }
            None => drop(taken.insert(id, (original, renamed))),
        }
    }
    Ok(())
}
