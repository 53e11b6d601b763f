//! `envelope-store`: the content-addressed store that large payloads are offloaded to.
//!
//! An artifact is a byte string named by its SHA-256 [`Digest`] (`sha256:<hex>`), with a
//! [`Sidecar`] describing it (size, media type, tags, creation time). [`Store`] is the
//! interface; [`FileStore`] keeps artifacts in a local folder, the default; `S3Store`
//! (feature `s3`) keeps the same layout in an S3-compatible bucket. [`open`] picks one from a
//! location string.
//!
//! Layout, the same in a folder and under an S3 prefix:
//!
//! - `ROOT/sha256/<hex>`: the blob, the exact bytes that were put;
//! - `ROOT/sha256/<hex>.json`: its sidecar, `{"digest","size_bytes","kind","tags","created_at"}`
//!   and a newline (see [`Sidecar::to_json`]).
//!
//! Putting the same bytes twice stores one copy. Every read re-hashes the blob, so a changed
//! or torn blob is reported as [`StoreError::Corrupted`], never returned.
//!
//! ```rust
//! use envelope_store::{Digest, FileStore, Store};
//!
//! let root = std::env::temp_dir()
//!     .join(format!("envelope-store-doc-crate-{}", std::process::id()));
//! # let _ = std::fs::remove_dir_all(&root);
//! let store = FileStore::new(&root);
//!
//! // put: the bytes go to ROOT/sha256/<hex>, the sidecar next to them.
//! let bytes = br#"{"rows":[1,2,3]}"#;
//! let sidecar = store.put(bytes, "application/json", &["demo".to_string()])?;
//! assert_eq!(sidecar.digest, Digest::of(bytes));
//! assert_eq!(sidecar.size_bytes, 16);
//! assert!(root.join("sha256").join(sidecar.digest.hex()).is_file());
//!
//! // get: the exact bytes, verified against the digest.
//! assert_eq!(store.get(&sidecar.digest)?, bytes);
//!
//! // verify: blob and sidecar are sound; the sidecar is returned.
//! assert_eq!(store.verify(&sidecar.digest)?, sidecar);
//!
//! // list: every digest in the store, sorted.
//! assert_eq!(store.list()?, vec![sidecar.digest]);
//!
//! std::fs::remove_dir_all(&root).unwrap();
//! # Ok::<(), envelope_store::StoreError>(())
//! ```

#![warn(missing_docs)]

mod digest;
mod error;
mod file;
mod hashed;
mod limits;
#[cfg(feature = "s3")]
mod s3;
pub mod scoped;
mod sink;
mod writer;

use std::ops::Range;
use std::time::Duration;

use serde_json::{Value, json};

pub use digest::Digest;
pub use error::{MAX_ECHOED, StoreError, echoed};
pub use file::FileStore;
pub use hashed::Hashed;
pub use limits::GcLimits;
#[cfg(feature = "s3")]
pub use s3::S3Store;
pub use scoped::Scoped;
pub use sink::StoreSink;
pub use writer::BlobWriter;

/// Opens a store from a location: `s3://BUCKET/PREFIX` (feature `s3`, see `S3Store`) or
/// else a folder path (a [`FileStore`], durable when the environment has
/// `ENVELOPE_STORE_FSYNC=1`, see [`FileStore::durable`]).
///
/// Opening a folder touches nothing: the folder is created by the first
/// [`put`](Store::put), and a store whose folder does not exist is empty.
///
/// # Errors
///
/// [`StoreError::Backend`] for an `s3://` location when this build has no `s3` feature, or
/// when the S3 location is malformed or its client cannot be configured. Opening a folder
/// never fails.
///
/// ```rust
/// let root = std::env::temp_dir()
///     .join(format!("envelope-store-doc-open-{}", std::process::id()));
/// # let _ = std::fs::remove_dir_all(&root);
/// let store = envelope_store::open(root.to_str().unwrap())?;
/// assert!(store.list()?.is_empty()); // nothing is created until the first put
/// assert!(!root.exists());
///
/// let sidecar = store.put(b"hello", "text/plain", &[])?;
/// assert_eq!(store.get(&sidecar.digest)?, b"hello");
/// assert!(root.join("sha256").join(sidecar.digest.hex()).is_file());
///
/// std::fs::remove_dir_all(&root).unwrap();
/// # Ok::<(), envelope_store::StoreError>(())
/// ```
pub fn open(location: &str) -> Result<Box<dyn Store>, StoreError> {
    if location.starts_with("s3://") {
        #[cfg(feature = "s3")]
        return Ok(Box::new(S3Store::from_url(location)?));
        #[cfg(not(feature = "s3"))]
        return Err(StoreError::Backend(format!(
            "{location}: this build has no S3 support (cargo feature `s3`)"
        )));
    }
    let durable = std::env::var("ENVELOPE_STORE_FSYNC").is_ok_and(|v| v == "1");
    Ok(Box::new(FileStore::new(location).durable(durable)))
}

/// What the store knows about an artifact: the content of its sidecar file
/// (`ROOT/sha256/<hex>.json`).
///
/// ```rust
/// use envelope_store::{Digest, Sidecar};
///
/// let digest = Digest::of(b"hello");
/// let sidecar = Sidecar::new(digest, 5, "Text/Plain; charset=utf-8", &["greeting".into()]);
/// assert_eq!(sidecar.kind, "text/plain");
///
/// let json = sidecar.to_json();
/// assert!(json.starts_with(format!(r#"{{"digest":"{digest}","size_bytes":5,"#).as_bytes()));
/// assert_eq!(Sidecar::from_json(&json)?, sidecar);
///
/// let err = Sidecar::from_json(br#"{"digest":"sha256:00"}"#).unwrap_err();
/// assert_eq!(err.code(), "store.malformed-sidecar");
/// # Ok::<(), envelope_store::StoreError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sidecar {
    /// The artifact's digest.
    pub digest: Digest,
    /// The length of the blob in bytes.
    pub size_bytes: u64,
    /// Media type, lower-case, without parameters (`application/json`).
    pub kind: String,
    /// Free-form labels given when the artifact was put, in their order.
    pub tags: Vec<String>,
    /// When the artifact was first stored, RFC 3339 in UTC (`2025-01-31T12:00:00.123Z`).
    pub created_at: String,
}

impl Sidecar {
    /// A sidecar for an artifact stored now: `created_at` is the current UTC time, `kind` is
    /// normalized (lower-cased, parameters such as `; charset=utf-8` dropped), `tags` are
    /// copied. Nothing is written; [`Store::put`] writes it.
    pub fn new(digest: Digest, size_bytes: u64, kind: &str, tags: &[String]) -> Self {
        let now = time::OffsetDateTime::now_utc();
        let created_at = now
            .format(&time::format_description::well_known::Rfc3339)
            .unwrap_or_default();
        Sidecar {
            digest,
            size_bytes,
            kind: normalize_kind(kind),
            tags: tags.to_vec(),
            created_at,
        }
    }

    /// The sidecar file's bytes: one JSON object with the keys `digest` (`sha256:<hex>`),
    /// `size_bytes`, `kind`, `tags` and `created_at`, in that order, followed by a newline.
    pub fn to_json(&self) -> Vec<u8> {
        let mut out = serde_json::to_vec(&json!({
            "digest": self.digest.to_string(),
            "size_bytes": self.size_bytes,
            "kind": self.kind,
            "tags": self.tags,
            "created_at": self.created_at,
        }))
        .unwrap_or_default();
        out.push(b'\n');
        out
    }

    /// Reads a sidecar file's bytes (as written by [`Sidecar::to_json`]).
    ///
    /// `digest`, `kind` and `created_at` must be strings and `size_bytes` a non-negative
    /// integer; `tags` may be absent (no tags), and tags that are not strings are skipped.
    /// Other keys are ignored, and values are taken as written (`kind` is not normalized
    /// again, `created_at` is not checked).
    ///
    /// # Errors
    ///
    /// [`StoreError::MalformedSidecar`] saying what is wrong: the JSON syntax error (with its
    /// line and column), `<key> is missing or not a string`, `size_bytes is missing or not an
    /// integer`, or the digest's own [`StoreError::InvalidDigest`] message. The stores report
    /// it as [`StoreError::BadSidecar`], which also names the artifact and the file.
    pub fn from_json(bytes: &[u8]) -> Result<Self, StoreError> {
        let malformed = |reason: String| StoreError::MalformedSidecar { reason };
        let v: Value = serde_json::from_slice(bytes).map_err(|e| malformed(e.to_string()))?;
        let text = |key: &str| {
            v.get(key)
                .and_then(Value::as_str)
                .map(str::to_string)
                .ok_or_else(|| malformed(format!("{key} is missing or not a string")))
        };
        Ok(Sidecar {
            digest: text("digest")?
                .parse()
                .map_err(|e: StoreError| malformed(e.to_string()))?,
            size_bytes: v
                .get("size_bytes")
                .and_then(Value::as_u64)
                .ok_or_else(|| malformed("size_bytes is missing or not an integer".into()))?,
            kind: text("kind")?,
            tags: v
                .get("tags")
                .and_then(Value::as_array)
                .map(|t| {
                    t.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default(),
            created_at: text("created_at")?,
        })
    }
}

/// A media type lower-cased, parameters dropped (`Application/JSON; charset=utf-8` →
/// `application/json`).
pub(crate) fn normalize_kind(kind: &str) -> String {
    kind.split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

/// `bytes` if they hash to `digest`, else the corruption error (every read goes through it).
pub(crate) fn verified(digest: &Digest, bytes: Vec<u8>) -> Result<Vec<u8>, StoreError> {
    let actual = Digest::of(&bytes);
    if actual != *digest {
        return Err(StoreError::Corrupted {
            digest: digest.to_string(),
            actual: actual.to_string(),
        });
    }
    Ok(bytes)
}

/// What [`Store::gc`] removed. New counts may be added; read the fields, or build one from
/// [`GcReport::default`] in a [`Store`] implementation.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct GcReport {
    /// Leftover temporary files of interrupted writes (a [`FileStore`] only; S3 writes leave
    /// none).
    pub temp_files: usize,
    /// Sidecars whose blob was gone.
    pub orphans: usize,
    /// Artifacts (blob and sidecar) removed for their age ([`GcLimits::older_than`]),
    /// sorted.
    pub removed: Vec<Digest>,
    /// Artifacts removed because they were not used for [`GcLimits::idle`], sorted.
    pub expired: Vec<Digest>,
    /// Artifacts removed, least recently used first, to bring the store within
    /// [`GcLimits::max_bytes`] and [`GcLimits::max_artifacts`], sorted.
    pub evicted: Vec<Digest>,
    /// Entries gc left alone and went on without (a [`FileStore`] only): a symbolic link
    /// with one of the store's names, an entry that could not be looked at or removed.
    /// Sorted by path, each once.
    pub skipped: Vec<GcSkipped>,
}

/// An entry [`Store::gc`] left alone, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct GcSkipped {
    /// The entry, under the root as it was given (a local path: not for a remote client).
    pub path: std::path::PathBuf,
    /// The [`StoreError::code`] of what stopped it (`store.link`, `store.io`).
    pub code: &'static str,
    /// The error's text ([`Display`](std::fmt::Display): the entry named by its place in
    /// the store, no path of the machine).
    pub reason: String,
}

/// A content-addressed store: artifacts are put as bytes and named by their [`Digest`].
///
/// Implemented by [`FileStore`] and, with the `s3` feature, `S3Store`; [`open`] returns
/// either as a `Box<dyn Store>`. Both use the layout described in the
/// [crate documentation](crate). The methods take `&self` and every store is `Send + Sync`:
/// one store is shared by the threads and sessions of a caller (the MCP proxy).
pub trait Store: Send + Sync {
    /// Stores `bytes` with their media type `kind` (normalized: lower-cased, parameters
    /// dropped) and `tags`, and returns the sidecar.
    ///
    /// Idempotent: the same bytes give the same digest and one copy. When the artifact is
    /// already stored intact with a sound sidecar, that sidecar (its `kind`, `tags` and
    /// `created_at`) is kept and returned; a corrupted blob or a broken sidecar is replaced.
    /// No reader ever sees half a blob.
    ///
    /// # Errors
    ///
    /// [`StoreError::Io`] when the folder, a temporary file or the rename into place fails
    /// (nothing half-written is left behind); [`StoreError::Backend`] when an S3 request
    /// fails.
    fn put(&self, bytes: &[u8], kind: &str, tags: &[String]) -> Result<Sidecar, StoreError>;

    /// [`put`](Store::put) of bytes hashed already: the same artifact, without hashing them
    /// again where the store can use the digest (the file store: it also leaves a blob
    /// already stored with those very bytes alone).
    ///
    /// # Errors
    ///
    /// Those of [`Store::put`].
    fn put_hashed(
        &self,
        hashed: &Hashed<'_>,
        kind: &str,
        tags: &[String],
    ) -> Result<Sidecar, StoreError> {
        self.put(hashed.bytes(), kind, tags)
    }

    /// Starts a [`put`](Store::put) whose bytes are given a piece at a time (see
    /// [`BlobWriter`]), so that a caller still reading them can have them hashed and
    /// written meanwhile. The file store writes each piece as it comes; the default gathers
    /// them in memory and puts them at once.
    ///
    /// # Errors
    ///
    /// [`StoreError::Io`] when the file store cannot create its folder or temporary file.
    fn writer(&self) -> Result<Box<dyn BlobWriter + '_>, StoreError> {
        Ok(Box::new(writer::Gathered::new(self)))
    }

    /// The exact bytes stored under `digest`, re-hashed and checked against it.
    ///
    /// # Errors
    ///
    /// [`StoreError::NotFound`] when there is no blob for `digest`;
    /// [`StoreError::Corrupted`] when the blob's bytes hash to another digest;
    /// [`StoreError::Io`] or [`StoreError::Backend`] when reading fails.
    ///
    /// ```rust
    /// use envelope_store::{Digest, FileStore, Store};
    ///
    /// let root = std::env::temp_dir()
    ///     .join(format!("envelope-store-doc-get-{}", std::process::id()));
    /// # let _ = std::fs::remove_dir_all(&root);
    /// let store = FileStore::new(&root);
    /// let digest = store.put(b"payload", "text/plain", &[])?.digest;
    /// assert_eq!(store.get(&digest)?, b"payload");
    ///
    /// // Tampered with behind the store's back: detected, never returned.
    /// std::fs::write(root.join("sha256").join(digest.hex()), b"PAYLOAD").unwrap();
    /// assert_eq!(store.get(&digest).unwrap_err().code(), "store.corrupted");
    ///
    /// assert_eq!(store.get(&Digest::of(b"other")).unwrap_err().code(), "store.not-found");
    ///
    /// std::fs::remove_dir_all(&root).unwrap();
    /// # Ok::<(), envelope_store::StoreError>(())
    /// ```
    fn get(&self, digest: &Digest) -> Result<Vec<u8>, StoreError>;

    /// Bytes `range` of the blob of `digest`: a window of an artifact read without reading
    /// the rest (the paging of a large stored result). The bytes are **not** checked against
    /// the digest (a window cannot be): a reader that needs the guarantee verified the whole
    /// once ([`get`](Store::get)) and relies on the store being append-only by content. A
    /// read is a use, as [`get`](Store::get) counts one.
    ///
    /// Every store reads only the window (a [`FileStore`]: one seek and one read; an S3
    /// store: one ranged GET). There is no default that reads the whole blob: a wrapper
    /// that forgot to pass the window on would read 100 MB for 16 KiB, so each store and
    /// each wrapper says how it reads one.
    ///
    /// # Errors
    ///
    /// Those of [`Store::get`] but [`StoreError::Corrupted`]; [`StoreError::Io`] when
    /// `range` is not within the blob of a [`FileStore`] (an S3 store: a backend error).
    ///
    /// ```rust
    /// use envelope_store::{FileStore, Store};
    ///
    /// let root = std::env::temp_dir()
    ///     .join(format!("envelope-store-doc-get-range-{}", std::process::id()));
    /// # let _ = std::fs::remove_dir_all(&root);
    /// let store = FileStore::new(&root);
    /// let digest = store.put(b"0123456789", "text/plain", &[])?.digest;
    /// assert_eq!(store.get_range(&digest, 2..5)?, b"234");
    /// assert_eq!(store.get_range(&digest, 8..12).unwrap_err().code(), "store.io");
    /// std::fs::remove_dir_all(&root).unwrap();
    /// # Ok::<(), envelope_store::StoreError>(())
    /// ```
    fn get_range(&self, digest: &Digest, range: Range<u64>) -> Result<Vec<u8>, StoreError>;

    /// Checks an artifact: its blob hashes to `digest` and its sidecar is readable and
    /// describes that digest and the blob's size. Returns the sidecar when both are sound.
    ///
    /// # Errors
    ///
    /// Those of [`Store::get`] for the blob, those of [`Store::sidecar`] for the sidecar, and
    /// [`StoreError::BadSidecar`] when the sidecar names another digest or size than the blob
    /// has.
    fn verify(&self, digest: &Digest) -> Result<Sidecar, StoreError> {
        let bytes = self.get(digest)?;
        let sidecar = self.sidecar(digest)?;
        if sidecar.digest != *digest || sidecar.size_bytes != bytes.len() as u64 {
            return Err(StoreError::BadSidecar {
                digest: digest.to_string(),
                path: std::path::PathBuf::from(format!("{}.json", digest.hex())),
                reason: format!(
                    "it describes {} ({} bytes), the blob is {} bytes",
                    sidecar.digest,
                    sidecar.size_bytes,
                    bytes.len()
                ),
            });
        }
        Ok(sidecar)
    }

    /// Every digest that has a blob in the store, sorted; empty when the store does not exist
    /// yet. Sidecars, temporary files and other names in `ROOT/sha256/` are not listed.
    ///
    /// # Errors
    ///
    /// [`StoreError::Io`] or [`StoreError::Backend`] when the listing fails.
    fn list(&self) -> Result<Vec<Digest>, StoreError>;

    /// The sidecar of `digest`, read from `ROOT/sha256/<hex>.json` (the blob is not read).
    ///
    /// # Errors
    ///
    /// [`StoreError::BadSidecar`] when the sidecar is missing (reason `missing`) or is not a
    /// valid sidecar (the reason [`Sidecar::from_json`] gives); [`StoreError::Io`] or
    /// [`StoreError::Backend`] when reading fails.
    fn sidecar(&self, digest: &Digest) -> Result<Sidecar, StoreError>;

    /// Removes an artifact, blob and sidecar. Removing an absent artifact is not an error.
    ///
    /// # Errors
    ///
    /// [`StoreError::Io`] or [`StoreError::Backend`] when a deletion fails.
    fn remove(&self, digest: &Digest) -> Result<(), StoreError>;

    /// Collects garbage in `ROOT/sha256/` and reports what it removed:
    ///
    /// - temporary files of interrupted writes at least an hour old (younger ones may belong
    ///   to a writer still at work);
    /// - sidecars whose blob is gone (orphans);
    /// - with `older_than`, every artifact whose blob was last written at least that long
    ///   ago (blob and sidecar); `Some(Duration::ZERO)` empties the store. For a
    ///   [`FileStore`] a [`get`](Store::get) counts as a write here too: it refreshes the
    ///   blob's modification time (its last use, see [`Store::gc_with`]).
    ///
    /// Blobs are never checked here (see [`Store::verify`]); anything that is not the
    /// store's own is left alone. A [`FileStore`] goes on past an entry it cannot handle —
    /// a symbolic link with one of the store's names (never followed nor removed), an entry
    /// that cannot be looked at or removed — and reports it in [`GcReport::skipped`].
    ///
    /// # Errors
    ///
    /// [`StoreError::Io`], [`StoreError::Link`] or [`StoreError::Backend`] when the store
    /// itself cannot be listed (`ROOT/sha256` is a link, not a folder, unreadable), or (S3)
    /// a deletion fails; what was removed before the failure stays removed.
    ///
    /// ```rust
    /// use std::time::Duration;
    /// use envelope_store::{FileStore, Store};
    ///
    /// let root = std::env::temp_dir()
    ///     .join(format!("envelope-store-doc-gc-{}", std::process::id()));
    /// # let _ = std::fs::remove_dir_all(&root);
    /// let store = FileStore::new(&root);
    /// let keep = store.put(b"keep", "text/plain", &[])?.digest;
    /// let lost = store.put(b"lost", "text/plain", &[])?.digest;
    ///
    /// // A blob deleted behind the store's back leaves its sidecar orphaned.
    /// std::fs::remove_file(root.join("sha256").join(lost.hex())).unwrap();
    /// let report = store.gc(None)?;
    /// assert_eq!(report.orphans, 1);
    /// assert!(report.removed.is_empty());
    /// assert_eq!(store.list()?, vec![keep]);
    ///
    /// // With an age limit, older artifacts go too (here: all of them).
    /// let report = store.gc(Some(Duration::ZERO))?;
    /// assert_eq!(report.removed, vec![keep]);
    /// assert!(store.list()?.is_empty());
    ///
    /// std::fs::remove_dir_all(&root).unwrap();
    /// # Ok::<(), envelope_store::StoreError>(())
    /// ```
    fn gc(&self, older_than: Option<Duration>) -> Result<GcReport, StoreError> {
        self.gc_with(&GcLimits::new().older_than(older_than))
    }

    /// [`gc`](Store::gc) with every limit of [`GcLimits`]: after the leftovers, the orphans
    /// and the artifacts older than [`GcLimits::older_than`], the artifacts not used for
    /// [`GcLimits::idle`] go ([`GcReport::expired`]), then the least recently used ones
    /// until the store holds at most [`GcLimits::max_bytes`] blob bytes and
    /// [`GcLimits::max_artifacts`] artifacts ([`GcReport::evicted`]).
    ///
    /// "Last use" is store-specific: a [`FileStore`] keeps it as the blob's modification
    /// time, set by a put and refreshed by every [`get`](Store::get); `S3Store` has only the
    /// time the blob was last written. Owner markers ([`scoped::MARKER_KIND`]) are neither
    /// counted nor removed by `idle` and the caps (see [`GcLimits`]).
    ///
    /// # Errors
    ///
    /// Those of [`Store::gc`]. An artifact that cannot be removed is skipped (reported in
    /// [`GcReport::skipped`] by a [`FileStore`]) and the next least recently used one goes
    /// instead.
    ///
    /// ```rust
    /// use envelope_store::{FileStore, GcLimits, Store};
    ///
    /// let root = std::env::temp_dir()
    ///     .join(format!("envelope-store-doc-gc-with-{}", std::process::id()));
    /// # let _ = std::fs::remove_dir_all(&root);
    /// let store = FileStore::new(&root);
    /// let old = store.put(b"old", "text/plain", &[])?.digest;
    /// let new = store.put(b"new", "text/plain", &[])?.digest;
    /// // `old` was used first; reading `new` now makes sure it is the most recent.
    /// # let long_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
    /// # std::fs::File::options().write(true).open(root.join("sha256").join(old.hex()))
    /// #     .unwrap().set_modified(long_ago).unwrap();
    /// store.get(&new)?;
    ///
    /// let report = store.gc_with(&GcLimits::new().max_artifacts(Some(1)))?;
    /// assert_eq!(report.evicted, vec![old]);
    /// assert_eq!(store.list()?, vec![new]);
    ///
    /// std::fs::remove_dir_all(&root).unwrap();
    /// # Ok::<(), envelope_store::StoreError>(())
    /// ```
    fn gc_with(&self, limits: &GcLimits) -> Result<GcReport, StoreError> {
        self.gc_keeping(limits, &|_| false)
    }

    /// [`gc_with`](Store::gc_with), except that the artifacts `keep` holds are never
    /// removed (not for their age, their idleness nor the caps): the results a pending call
    /// still needs. A kept artifact still counts against the caps, so the next least
    /// recently used one goes in its place; when the kept ones alone are over a cap, the
    /// store stays over it until they are let go.
    ///
    /// # Errors
    ///
    /// Those of [`Store::gc_with`].
    ///
    /// ```rust
    /// use envelope_store::{FileStore, GcLimits, Store};
    ///
    /// let root = std::env::temp_dir()
    ///     .join(format!("envelope-store-doc-gc-keeping-{}", std::process::id()));
    /// # let _ = std::fs::remove_dir_all(&root);
    /// let store = FileStore::new(&root);
    /// let pinned = store.put(b"pinned", "text/plain", &[])?.digest;
    /// let report = store.gc_keeping(&GcLimits::new().max_bytes(Some(0)), &|d| *d == pinned)?;
    /// assert!(report.evicted.is_empty());
    /// assert_eq!(store.list()?, vec![pinned]);
    /// std::fs::remove_dir_all(&root).unwrap();
    /// # Ok::<(), envelope_store::StoreError>(())
    /// ```
    fn gc_keeping(
        &self,
        limits: &GcLimits,
        keep: &dyn Fn(&Digest) -> bool,
    ) -> Result<GcReport, StoreError>;
}

/// The error for a window that is not within its blob of `len` bytes.
pub(crate) fn out_of_range(digest: &Digest, range: &Range<u64>, len: u64) -> StoreError {
    StoreError::Io {
        action: "cannot read",
        path: digest.to_string().into(),
        source: std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            format!(
                "bytes {}..{} are not within the blob's {len} bytes",
                range.start, range.end
            ),
        ),
    }
}
