//! A source's operations read back from its cache entry one at a time, when the registry
//! first needs each ([`crate::Registry::register_deferred`]). A piece of the entry that
//! does not match its digest is never used: the entry is removed and the document derived
//! again (once), then kept anew.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use super::cache::{Entry, Reader};
use super::derive::Endpoint;
use super::request::Target;
use super::{HttpHandler, document};
use crate::handler::Handler;
use crate::spec::{AccessControl, OperationSpec};

/// What the source's configuration does to each operation, whenever it is built.
pub(super) struct Finish {
    pub target: Arc<Target>,
    pub access_control: Option<AccessControl>,
}

impl Finish {
    /// `spec` with the configured access rules, and its handler.
    pub fn apply(
        &self,
        mut spec: OperationSpec,
        endpoint: Endpoint,
    ) -> (OperationSpec, Box<dyn Handler>) {
        if let Some(access) = &self.access_control {
            spec.access_control = access.clone();
        }
        let handler = HttpHandler {
            target: self.target.clone(),
            endpoint,
            output_schema: spec.output_schema.clone(),
        };
        (spec, Box::new(handler))
    }
}

/// Where the document is read again from, should the entry be damaged.
pub(super) enum Again {
    /// A file: read again (it must not have changed since the load).
    File(PathBuf),
    /// A fetched document's text, kept (it cannot be fetched again from a synchronous
    /// build).
    Text(Arc<str>),
}

/// An opened entry and what building its operations needs.
pub(super) struct Kept {
    pub reader: Reader,
    pub entry: Entry,
    pub again: Again,
    pub namespace: String,
    pub spec: String,
    pub keep_ids: bool,
    pub location: document::Location,
    /// The document derived again (after a damaged piece), once.
    pub rederived: OnceLock<Result<Vec<(OperationSpec, Endpoint)>, String>>,
    pub finish: Finish,
}

impl Kept {
    /// Operation `i` of the entry, registered as `name` (after `rename`), with its
    /// resolved `server`.
    pub(crate) fn operation(
        &self,
        i: usize,
        name: &str,
        server: Option<String>,
    ) -> Result<(OperationSpec, Box<dyn Handler>), String> {
        let (mut spec, mut endpoint) = match self.reader.operation(i) {
            Ok(operation) => operation,
            Err(_) => self.derived_again(i)?,
        };
        spec.name = name.to_owned();
        endpoint.server = server;
        Ok(self.finish.apply(spec, endpoint))
    }

    /// Operation `i` of the document derived again, the damaged entry replaced.
    fn derived_again(&self, i: usize) -> Result<(OperationSpec, Endpoint), String> {
        let operations = self
            .rederived
            .get_or_init(|| {
                self.entry.remove();
                let text = match &self.again {
                    Again::Text(text) => text.to_string(),
                    Again::File(path) => std::fs::read_to_string(path).map_err(|e| {
                        format!("{}: cannot read the document: {e}", path.display())
                    })?,
                };
                // The same document (and so the same operations in the same order)?
                let same = Entry::new(
                    PathBuf::new(),
                    &self.namespace,
                    &self.spec,
                    self.keep_ids,
                    &text,
                )
                .path()
                .file_name()
                    == self.entry.path().file_name();
                if !same {
                    return Err(format!(
                        "{}: the document changed since it was loaded: load it again",
                        self.location.shown
                    ));
                }
                let derived =
                    super::derive_document(&text, &self.location, &self.namespace, self.keep_ids)?;
                self.entry.write(&derived);
                Ok(derived.operations)
            })
            .as_ref()
            .map_err(Clone::clone)?;
        let listed = &self.reader.listed()[i];
        operations
            .get(i)
            .filter(|(spec, _)| spec.name == listed.name && spec.namespace == listed.namespace)
            .cloned()
            .ok_or_else(|| format!("{}: no operation {}", self.location.shown, listed.name))
    }
}
