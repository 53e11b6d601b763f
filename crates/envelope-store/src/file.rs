//! The file store: `ROOT/sha256/<hex>` blobs with `ROOT/sha256/<hex>.json` sidecars.
//!
//! Writes go to a temporary file in the same folder and are renamed into place, so a reader
//! never sees half a blob, and concurrent writers of the same content are harmless (the last
//! rename wins with identical bytes). Every read re-hashes the blob.
//!
//! Durability: by default files are not flushed to disk before the rename (fsync costs
//! about a third of the throughput of a large put). A crash can then leave a torn blob,
//! which every read detects as corrupted and the next put of the same content replaces.
//! [`FileStore::durable`] flushes each file first.

use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use crate::{Digest, GcReport, Sidecar, Store, StoreError};

/// A store in a local folder: blobs in `ROOT/sha256/<hex>`, sidecars in
/// `ROOT/sha256/<hex>.json`, temporary files (`ROOT/sha256/.tmp-*`) while writing.
///
/// Every file is written to a new temporary file in the same folder and renamed into place,
/// so readers see the whole old file or the whole new one, and concurrent writers of the same
/// content are harmless. Cloning a `FileStore` gives another handle on the same folder.
///
/// ```rust
/// use envelope_store::{FileStore, Store};
///
/// let root = std::env::temp_dir()
///     .join(format!("envelope-store-doc-filestore-{}", std::process::id()));
/// # let _ = std::fs::remove_dir_all(&root);
/// let store = FileStore::new(&root).durable(true);
/// assert_eq!(store.root(), root.as_path());
/// let digest = store.put(b"flushed to disk", "text/plain", &[])?.digest;
/// assert_eq!(store.get(&digest)?, b"flushed to disk");
/// std::fs::remove_dir_all(&root).unwrap();
/// # Ok::<(), envelope_store::StoreError>(())
/// ```
#[derive(Clone, Debug)]
pub struct FileStore {
    root: PathBuf,
    /// Flush every file to disk before renaming it into place.
    durable: bool,
}

/// Temporary files start with this; `gc` removes old ones.
const TEMP_PREFIX: &str = ".tmp-";
/// Temporary files younger than this may belong to a writer still at work.
const TEMP_GRACE: Duration = Duration::from_secs(3600);

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

impl FileStore {
    /// A store rooted at the folder `root`, not durable. Nothing is touched until the first
    /// write, which creates `root/sha256/` (and `root`) as needed.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        FileStore {
            root: root.into(),
            durable: false,
        }
    }

    /// With `true`, each blob and sidecar is flushed to disk (`fsync`) before it is renamed
    /// into place, so a stored artifact survives power loss, at the cost of about a third of
    /// the throughput of a large put. Without it, a crash can leave a torn blob, which every
    /// read reports as [`StoreError::Corrupted`] and the next put of the same content
    /// replaces.
    pub fn durable(mut self, durable: bool) -> Self {
        self.durable = durable;
        self
    }

    /// The folder the store was created with.
    pub fn root(&self) -> &Path {
        &self.root
    }

    fn dir(&self) -> PathBuf {
        self.root.join("sha256")
    }

    /// Where the blob of `digest` lives.
    fn blob_path(&self, digest: &Digest) -> PathBuf {
        self.dir().join(digest.hex())
    }

    fn sidecar_path(&self, digest: &Digest) -> PathBuf {
        self.dir().join(format!("{}.json", digest.hex()))
    }

    /// Writes `bytes` to `path` through a temporary file and a rename.
    fn write_atomically(&self, path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
        let temp = self.write_temp(bytes)?;
        self.commit(&temp, path)
    }

    /// Writes `bytes` to a new temporary file in the store folder, flushed to disk.
    fn write_temp(&self, bytes: &[u8]) -> Result<PathBuf, StoreError> {
        let temp = self.dir().join(format!(
            "{TEMP_PREFIX}{}-{}",
            std::process::id(),
            TEMP_COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        let written = fs::File::create(&temp)
            .map_err(|e| StoreError::io("cannot create", &temp, e))
            .and_then(|mut file| {
                file.write_all(bytes)
                    .and_then(|()| {
                        if self.durable {
                            file.sync_all()
                        } else {
                            Ok(())
                        }
                    })
                    .map_err(|e| StoreError::io("cannot write", &temp, e))
            });
        match written {
            Ok(()) => Ok(temp),
            Err(e) => {
                // Nothing half-written stays visible, not even the temporary file.
                let _ = fs::remove_file(&temp);
                Err(e)
            }
        }
    }

    /// Renames a temporary file into place (atomic: readers see the old file or the new one).
    fn commit(&self, temp: &Path, path: &Path) -> Result<(), StoreError> {
        fs::rename(temp, path).map_err(|e| {
            let _ = fs::remove_file(temp);
            StoreError::io("cannot rename into", path, e)
        })
    }

    fn read_sidecar(&self, digest: &Digest) -> Result<Sidecar, StoreError> {
        let path = self.sidecar_path(digest);
        let bytes = fs::read(&path).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => StoreError::BadSidecar {
                digest: digest.to_string(),
                path: path.clone(),
                reason: "missing".into(),
            },
            _ => StoreError::io("cannot read", &path, e),
        })?;
        Sidecar::from_json(&bytes).map_err(|e| e.in_sidecar_of(digest, path))
    }
}

impl Store for FileStore {
    fn put(&self, bytes: &[u8], kind: &str, tags: &[String]) -> Result<Sidecar, StoreError> {
        let dir = self.dir();
        fs::create_dir_all(&dir).map_err(|e| StoreError::io("cannot create", &dir, e))?;
        // Hashing and writing the temporary file run side by side: the name is known only
        // once the hash is, and the rename comes after both. The blob is always replaced,
        // which also repairs a corrupted copy of the same content.
        let (digest, temp) = std::thread::scope(|scope| {
            let writer = scope.spawn(|| self.write_temp(bytes));
            let digest = Digest::of(bytes);
            (
                digest,
                writer.join().expect("the writer thread does not panic"),
            )
        });
        self.commit(&temp?, &self.blob_path(&digest))?;
        // Keep the first sidecar (its creation time) when it describes this content.
        match self.read_sidecar(&digest) {
            Ok(sidecar) if sidecar.digest == digest && sidecar.size_bytes == bytes.len() as u64 => {
                Ok(sidecar)
            }
            _ => {
                let sidecar = Sidecar::new(digest, bytes.len() as u64, kind, tags);
                self.write_atomically(&self.sidecar_path(&digest), &sidecar.to_json())?;
                Ok(sidecar)
            }
        }
    }

    fn get(&self, digest: &Digest) -> Result<Vec<u8>, StoreError> {
        let path = self.blob_path(digest);
        let bytes = fs::read(&path).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => StoreError::NotFound(digest.to_string()),
            _ => StoreError::io("cannot read", &path, e),
        })?;
        crate::verified(digest, bytes)
    }

    fn list(&self) -> Result<Vec<Digest>, StoreError> {
        let dir = self.dir();
        let entries = match fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(StoreError::io("cannot list", &dir, e)),
        };
        let mut digests = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| StoreError::io("cannot list", &dir, e))?;
            if let Some(digest) = entry.file_name().to_str().and_then(Digest::from_hex) {
                digests.push(digest);
            }
        }
        digests.sort();
        Ok(digests)
    }

    fn sidecar(&self, digest: &Digest) -> Result<Sidecar, StoreError> {
        self.read_sidecar(digest)
    }

    fn remove(&self, digest: &Digest) -> Result<(), StoreError> {
        remove_if_present(&self.blob_path(digest))?;
        remove_if_present(&self.sidecar_path(digest))?;
        Ok(())
    }

    fn gc(&self, older_than: Option<Duration>) -> Result<GcReport, StoreError> {
        let mut report = GcReport::default();
        let dir = self.dir();
        let entries = match fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(report),
            Err(e) => return Err(StoreError::io("cannot list", &dir, e)),
        };
        let now = SystemTime::now();
        for entry in entries {
            let entry = entry.map_err(|e| StoreError::io("cannot list", &dir, e))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let path = entry.path();
            let age = entry
                .metadata()
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| now.duration_since(t).ok())
                .unwrap_or_default();
            // Leftovers of interrupted writes.
            if name.starts_with(TEMP_PREFIX) && age >= TEMP_GRACE {
                report.temp_files += usize::from(remove_if_present(&path)?);
            // Sidecars whose blob is gone.
            } else if let Some(hex) = name.strip_suffix(".json")
                && let Some(digest) = Digest::from_hex(hex)
                && !self.blob_path(&digest).exists()
            {
                report.orphans += usize::from(remove_if_present(&path)?);
            } else if let Some(digest) = Digest::from_hex(&name)
                && older_than.is_some_and(|limit| age >= limit)
            {
                self.remove(&digest)?;
                report.removed.push(digest);
            }
        }
        report.removed.sort();
        Ok(report)
    }
}

/// Removes a file; `false` when it was already gone (another gc, a removed artifact).
fn remove_if_present(path: &Path) -> Result<bool, StoreError> {
    match fs::remove_file(path) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(StoreError::io("cannot remove", path, e)),
    }
}
