//! Load once (issue 29): what a source derives from its document — the operations with
//! their endpoints, the places read with a warning, the document's server — kept in a file
//! named by the digest of the document and of what else the derivation depends on. A
//! changed document has another digest: the file is not found, the document is read again
//! and the new file replaces the source's old one. See docs/operations.md, "Load once".

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::derive::Endpoint;
use crate::spec::OperationSpec;

/// Bumped whenever what is derived from a document changes shape or meaning.
const FORMAT: &str = "envelope-openapi-derived/1";

/// An entry not written for this long is removed when another is written.
const MAX_AGE: std::time::Duration = std::time::Duration::from_secs(30 * 24 * 3600);

/// What a source derives from its document, before its configuration applies (`baseUrl`,
/// `rename`, `accessControl`, headers and auth are applied at every load).
#[derive(Serialize, Deserialize)]
pub struct Derived {
    /// The places read with a warning ([`super::relax`]), without the document's name.
    pub warnings: Vec<String>,
    /// The document's first server, variables replaced (not yet resolved).
    pub server: Option<String>,
    /// The operations, each with its endpoint (its own server not yet resolved).
    pub operations: Vec<(OperationSpec, Endpoint)>,
}

/// The configured cache: `cache = false` none, `cache = "DIR"` that folder (relative to the
/// registry file's), else the user's cache folder.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum CacheSetting {
    /// `true`: the default folder; `false`: no cache.
    Enabled(bool),
    /// A folder.
    Dir(String),
}

/// The folder derived documents are kept in: the configured one, else
/// `$ENVELOPE_CACHE_DIR`, else `$XDG_CACHE_HOME/envelope`, else `$HOME/.cache/envelope`;
/// `None` when caching is off or no folder is known.
pub fn folder(setting: Option<&CacheSetting>, registry_dir: Option<&Path>) -> Option<PathBuf> {
    let env = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    match setting {
        Some(CacheSetting::Enabled(false)) => None,
        Some(CacheSetting::Dir(dir)) => Some(match registry_dir {
            Some(base) => base.join(dir),
            None => PathBuf::from(dir),
        }),
        _ => env("ENVELOPE_CACHE_DIR")
            .map(PathBuf::from)
            .or_else(|| env("XDG_CACHE_HOME").map(|d| PathBuf::from(d).join("envelope")))
            .or_else(|| env("HOME").map(|d| PathBuf::from(d).join(".cache/envelope"))),
    }
    .map(|dir| dir.join("openapi"))
}

/// One source's entry: `<folder>/<source>-<document>.json`, the source part a digest of
/// the namespace and the spec as written (so a new entry replaces the source's old one),
/// the document part a digest of the format, this build, the derivation's options and the
/// document's text.
pub struct Entry {
    folder: PathBuf,
    source: String,
    path: PathBuf,
}

impl Entry {
    /// The entry of source `namespace` reading `spec` (`text`, derived with `keep_ids`).
    pub fn new(folder: PathBuf, namespace: &str, spec: &str, keep_ids: bool, text: &str) -> Self {
        let source = envelope_store::Digest::of(format!("{namespace}\n{spec}").as_bytes()).hex();
        let source = source[..16].to_owned();
        let mut keyed = Vec::with_capacity(text.len() + 256);
        keyed.extend_from_slice(
            format!("{FORMAT}\n{}\n{namespace}\n{keep_ids}\n", build()).as_bytes(),
        );
        keyed.extend_from_slice(text.as_bytes());
        let document = envelope_store::Digest::of(&keyed).hex();
        let path = folder.join(format!("{source}-{document}.json"));
        Entry {
            folder,
            source,
            path,
        }
    }

    /// The kept derivation; `None` when there is none (or it cannot be read: then it is
    /// derived again and replaced).
    pub fn read(&self) -> Option<Derived> {
        let bytes = std::fs::read(&self.path).ok()?;
        serde_json::from_slice(&bytes).ok()
    }

    /// Keeps `derived` (written aside, then renamed: a reader never sees half a file) and
    /// removes the source's older entries. A cache that cannot be written is no error.
    pub fn write(&self, derived: &Derived) {
        let Ok(bytes) = serde_json::to_vec(derived) else {
            return;
        };
        if std::fs::create_dir_all(&self.folder).is_err() {
            return;
        }
        let aside = self
            .folder
            .join(format!(".{}.{}.tmp", self.source, std::process::id()));
        if std::fs::write(&aside, bytes).is_err() || std::fs::rename(&aside, &self.path).is_err() {
            let _ = std::fs::remove_file(&aside);
            return;
        }
        let Ok(entries) = std::fs::read_dir(&self.folder) else {
            return;
        };
        let now = std::time::SystemTime::now();
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name();
            let name = name.to_string_lossy();
            // Entries of sources that are gone (a registry deleted, a temporary document)
            // are not kept for ever: any not written for MAX_AGE goes too.
            let stale = entry
                .metadata()
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| now.duration_since(t).ok())
                .is_some_and(|age| age > MAX_AGE);
            if path != self.path && (name.starts_with(&format!("{}-", self.source)) || stale) {
                let _ = std::fs::remove_file(path);
            }
        }
    }

    /// Where it is kept.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// This build: the running program's size and modification time, so that a rebuilt
/// program (another derivation, perhaps) never reads an older one's entries.
fn build() -> String {
    let meta = std::env::current_exe().and_then(std::fs::metadata);
    match meta {
        Ok(meta) => {
            let modified = meta
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos());
            format!("{} {} {modified}", env!("CARGO_PKG_VERSION"), meta.len())
        }
        Err(_) => env!("CARGO_PKG_VERSION").to_owned(),
    }
}
