//! Load once (issue 29): what a source derives from its document — the operations with
//! their endpoints, the places read with a warning, the document's server — kept in a file
//! named by the digest of the document and of what else the derivation depends on. A
//! changed document has another digest: the file is not found, the document is read again
//! and the new file replaces the source's old one. See docs/operations.md, "Load once".
//!
//! One file per source, read a piece at a time so that a call of one operation reads that
//! operation only:
//!
//! ```text
//! envelope-openapi-derived/2\n
//! <index length> <index digest>\n
//! <index: JSON {warnings, server, shared, operations: [{namespace, name, type, server,
//!         span}], parts: [span]}, a span = {at, len, digest} in the data>
//! <data: each operation's entry {spec, endpoint, input, output}, then the parts>
//! ```
//!
//! The schemas' repeated subtrees (a `$ref`'d component, written out in every operation
//! that uses it) are parts kept once ([`super::share`]), put back when an operation is
//! read. Every piece has its digest (128 bits of SHA-256), checked when it is read: a file
//! cut short or changed is never trusted (the source derives the document again and
//! replaces it).

use crate::error::TextError;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::derive::Endpoint;
use super::share::{self, Sharer};
use crate::spec::{OperationSpec, OperationType};

/// Bumped whenever what is derived from a document, or how it is kept, changes.
const FORMAT: &str = "envelope-openapi-derived/2";
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

/// One source's entry: `<folder>/<source>-<document>.ops`, the source part a digest of
/// the namespace and the spec as written (so a new entry replaces the source's old one),
/// the document part a digest of the format, this build, the derivation's options and the
/// document's text.
#[derive(Clone)]
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
        // The text's digest, then that of it with the rest (no copy of a large text).
        let text = envelope_store::Digest::of(text.as_bytes()).hex();
        let keyed = format!("{FORMAT}\n{}\n{namespace}\n{keep_ids}\n{text}", build());
        let document = envelope_store::Digest::of(keyed.as_bytes()).hex();
        let path = folder.join(format!("{source}-{document}.ops"));
        Entry {
            folder,
            source,
            path,
        }
    }

    /// The kept derivation, its index read and checked (its operations are read when
    /// asked for); `None` when there is none, or it is of another format, cut short or
    /// changed (then it is derived again and replaced).
    pub fn open(&self) -> Option<Reader> {
        Reader::open(&self.path).ok()
    }

    /// Keeps `derived` (written aside, then renamed: a reader never sees half a file) and
    /// removes the source's older entries. A cache that cannot be written is no error:
    /// returns whether it was written.
    pub fn write(&self, derived: &Derived) -> bool {
        let Ok(bytes) = encode(derived) else {
            return false;
        };
        if std::fs::create_dir_all(&self.folder).is_err() {
            return false;
        }
        let aside = self
            .folder
            .join(format!(".{}.{}.tmp", self.source, std::process::id()));
        if std::fs::write(&aside, bytes).is_err() || std::fs::rename(&aside, &self.path).is_err() {
            let _ = std::fs::remove_file(&aside);
            return false;
        }
        self.remove_others();
        true
    }

    /// Removes this entry (found corrupt).
    pub fn remove(&self) {
        let _ = std::fs::remove_file(&self.path);
    }

    fn remove_others(&self) {
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

/// Where a piece is in the data, and its digest.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct Span {
    at: u64,
    len: u64,
    digest: String,
}

impl Span {
    fn of(at: usize, bytes: &[u8]) -> Span {
        Span {
            at: at as u64,
            len: bytes.len() as u64,
            digest: digest(bytes),
        }
    }

    fn end(&self) -> u64 {
        self.at.saturating_add(self.len)
    }
}

/// 128 bits of SHA-256: enough to tell a damaged piece, half the index's size.
fn digest(bytes: &[u8]) -> String {
    let mut hex = envelope_store::Digest::of(bytes).hex();
    hex.truncate(32);
    hex
}

/// An operation as the index lists it: what registering it needs, nothing of its schemas.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Listed {
    /// Its namespace (the source's, or its own with `keepIds`).
    pub namespace: String,
    /// Its name in the document (before `rename`).
    pub name: String,
    /// Its type.
    #[serde(rename = "type")]
    pub kind: OperationType,
    /// Its own server as the document writes it (resolved at every load).
    pub server: Option<String>,
    span: Span,
}

#[derive(Serialize, Deserialize)]
struct Index {
    warnings: Vec<String>,
    server: Option<String>,
    /// Whether the schemas hold parts' places ([`share`]).
    shared: bool,
    operations: Vec<Listed>,
    parts: Vec<Span>,
}

/// An operation's entry in the data: its schemas apart, with their parts' places.
#[derive(Serialize, Deserialize)]
struct Kept {
    spec: OperationSpec,
    endpoint: Endpoint,
    input: Value,
    output: Value,
}

/// The file: header, index, data.
fn encode(derived: &Derived) -> Result<Vec<u8>, String> {
    let mut sharer = Sharer::default();
    for (spec, _) in &derived.operations {
        sharer.count(&spec.input_schema);
        sharer.count(&spec.output_schema);
    }
    let mut data = Vec::new();
    let mut operations = Vec::with_capacity(derived.operations.len());
    for (spec, endpoint) in &derived.operations {
        let start = data.len();
        // The spec without its schemas (they are written with their parts' places).
        let shell = OperationSpec {
            namespace: spec.namespace.clone(),
            name: spec.name.clone(),
            version: spec.version.clone(),
            kind: spec.kind,
            title: spec.title.clone(),
            description: spec.description.clone(),
            tags: spec.tags.clone(),
            input_schema: Value::Null,
            output_schema: Value::Null,
            error_schemas: spec.error_schemas.clone(),
            access_control: spec.access_control.clone(),
            meta: spec.meta.clone(),
        };
        data.extend_from_slice(b"{\"spec\":");
        serde_json::to_writer(&mut data, &shell).map_err(|e| e.to_string())?;
        data.extend_from_slice(b",\"endpoint\":");
        serde_json::to_writer(&mut data, endpoint).map_err(|e| e.to_string())?;
        data.extend_from_slice(b",\"input\":");
        sharer.write(&spec.input_schema, &mut data);
        data.extend_from_slice(b",\"output\":");
        sharer.write(&spec.output_schema, &mut data);
        data.push(b'}');
        operations.push(Listed {
            namespace: spec.namespace.clone(),
            name: spec.name.clone(),
            kind: spec.kind,
            server: endpoint.server.clone(),
            span: Span::of(start, &data[start..]),
        });
    }
    let shared = sharer.shares();
    let mut parts = Vec::new();
    for part in sharer.into_parts() {
        parts.push(Span::of(data.len(), &part));
        data.extend_from_slice(&part);
    }
    let index = serde_json::to_vec(&Index {
        warnings: derived.warnings.clone(),
        server: derived.server.clone(),
        shared,
        operations,
        parts,
    })
    .map_err(|e| e.to_string())?;
    let mut file = format!("{FORMAT}\n{} {}\n", index.len(), digest(&index)).into_bytes();
    file.reserve(index.len() + data.len());
    file.extend_from_slice(&index);
    file.extend_from_slice(&data);
    Ok(file)
}

/// An entry opened: its index read and checked; operations read from the file when asked.
pub struct Reader {
    file: Mutex<std::fs::File>,
    /// Where the data starts in the file.
    data: u64,
    index: Index,
    /// The parts read and checked so far, as text: a listing reads each part once, not
    /// once per operation naming it (at most the size of the parts).
    parts: Mutex<std::collections::HashMap<usize, std::sync::Arc<Vec<u8>>>>,
}

impl Reader {
    fn open(path: &Path) -> Result<Reader, String> {
        let mut file = std::fs::File::open(path).map_err(|e| e.to_string())?;
        let size = file.metadata().map_err(|e| e.to_string())?.len();
        let mut head = vec![0; 160];
        let n = read_up_to(&mut file, &mut head)?;
        head.truncate(n);
        let corrupt = || "not an entry of this format".to_string();
        let text = std::str::from_utf8(&head).unwrap_or("");
        let mut lines = text.splitn(3, '\n');
        let (Some(format), Some(sizes)) = (lines.next(), lines.next()) else {
            return Err(corrupt());
        };
        if format != FORMAT || lines.next().is_none() {
            return Err(corrupt());
        }
        let (len, expected) = sizes.split_once(' ').ok_or_else(corrupt)?;
        let len: u64 = len.parse().map_err(|_| corrupt())?;
        let at = (format.len() + sizes.len() + 2) as u64;
        let index = read_at(&mut file, at, len)?;
        if digest(&index) != expected {
            return Err("its index does not match its digest".into());
        }
        let index: Index = serde_json::from_slice(&index).map_err(|e| e.to_string())?;
        let data = at + len;
        // A file cut short is told now, not when an operation past its end is called.
        let end = index
            .operations
            .iter()
            .map(|op| &op.span)
            .chain(&index.parts)
            .map(Span::end)
            .max()
            .unwrap_or(0);
        if data.saturating_add(end) != size {
            return Err(format!("{size} bytes, the index says {}", data + end));
        }
        Ok(Reader {
            file: Mutex::new(file),
            data,
            index,
            parts: Default::default(),
        })
    }

    /// The places read with a warning.
    pub fn warnings(&self) -> &[String] {
        &self.index.warnings
    }

    /// The document's first server.
    pub fn server(&self) -> Option<&str> {
        self.index.server.as_deref()
    }

    /// The operations, in the order derived, without their schemas.
    pub fn listed(&self) -> &[Listed] {
        &self.index.operations
    }

    /// Operation `i` of [`Reader::listed`], whole: read, checked, its parts put back.
    pub fn operation(&self, i: usize) -> Result<(OperationSpec, Endpoint), TextError> {
        let listed = self
            .index
            .operations
            .get(i)
            .ok_or_else(|| format!("no operation {i}"))?;
        let kept: Kept = serde_json::from_slice(&self.piece(&listed.span)?)
            .map_err(|e| format!("operation {}: {e}", listed.name))?;
        let mut spec = kept.spec;
        spec.input_schema = kept.input;
        spec.output_schema = kept.output;
        if self.index.shared {
            // Parts met again in the same operation are read once.
            let mut read: std::collections::HashMap<usize, Value> = Default::default();
            let mut part = |n: usize| self.part(n, usize::MAX, &mut read);
            share::expand(&mut spec.input_schema, &mut part)?;
            share::expand(&mut spec.output_schema, &mut part)?;
        }
        Ok((spec, kept.endpoint))
    }

    /// Every operation, whole.
    pub fn read_all(&self) -> Result<Derived, TextError> {
        Ok(Derived {
            warnings: self.index.warnings.clone(),
            server: self.index.server.clone(),
            operations: (0..self.index.operations.len())
                .map(|i| self.operation(i))
                .collect::<Result<_, _>>()?,
        })
    }

    /// Part `n`, its own parts put back; a part names only parts before it (written
    /// first), so a damaged file cannot make this loop.
    fn part(
        &self,
        n: usize,
        below: usize,
        read: &mut std::collections::HashMap<usize, Value>,
    ) -> Result<Value, TextError> {
        if n >= below {
            return Err(TextError::from(format!(
                "part {n} is named where it cannot be"
            )));
        }
        if let Some(value) = read.get(&n) {
            return Ok(value.clone());
        }
        let text = self.part_text(n)?;
        let mut value: Value =
            serde_json::from_slice(&text).map_err(|e| format!("part {n}: {e}"))?;
        share::expand(&mut value, &mut |m| self.part(m, n, read))?;
        read.insert(n, value.clone());
        Ok(value)
    }

    /// Part `n`'s text, checked (once).
    fn part_text(&self, n: usize) -> Result<std::sync::Arc<Vec<u8>>, String> {
        let known = self
            .parts
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&n)
            .cloned();
        if let Some(text) = known {
            return Ok(text);
        }
        let span = self
            .index
            .parts
            .get(n)
            .ok_or_else(|| format!("no part {n}"))?;
        let text = std::sync::Arc::new(self.piece(span)?);
        self.parts
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(n, text.clone());
        Ok(text)
    }

    /// A piece of the data, checked against its digest.
    fn piece(&self, span: &Span) -> Result<Vec<u8>, String> {
        let bytes = {
            let mut file = self.file.lock().unwrap_or_else(|e| e.into_inner());
            read_at(&mut file, self.data + span.at, span.len)?
        };
        if digest(&bytes) != span.digest {
            return Err(format!(
                "the piece at {} does not match its digest",
                self.data + span.at
            ));
        }
        Ok(bytes)
    }
}

fn read_at(file: &mut std::fs::File, at: u64, len: u64) -> Result<Vec<u8>, String> {
    let len = usize::try_from(len).map_err(|e| e.to_string())?;
    file.seek(SeekFrom::Start(at)).map_err(|e| e.to_string())?;
    let mut bytes = vec![0; len];
    file.read_exact(&mut bytes).map_err(|e| e.to_string())?;
    Ok(bytes)
}

/// Reads until `buf` is full or the file ends; how much was read.
fn read_up_to(file: &mut std::fs::File, buf: &mut [u8]) -> Result<usize, String> {
    let mut n = 0;
    while n < buf.len() {
        match file.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e.to_string()),
        }
    }
    Ok(n)
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
