//! The file store: `ROOT/sha256/<hex>` blobs with `ROOT/sha256/<hex>.json` sidecars.
//!
//! Writes go to a temporary file in the same folder and are renamed into place, so a reader
//! never sees half a blob, and concurrent writers of the same content are harmless (the last
//! rename wins with identical bytes). Every read re-hashes the blob.

use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use crate::{Digest, GcReport, Sidecar, Store, StoreError};

/// A store in a local folder.
#[derive(Clone, Debug)]
pub struct FileStore {
    root: PathBuf,
}

/// Temporary files start with this; `gc` removes old ones.
const TEMP_PREFIX: &str = ".tmp-";
/// Temporary files younger than this may belong to a writer still at work.
const TEMP_GRACE: Duration = Duration::from_secs(3600);

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

impl FileStore {
    /// A store rooted at `root` (created on the first write).
    pub fn new(root: impl Into<PathBuf>) -> Self {
        FileStore { root: root.into() }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    fn dir(&self) -> PathBuf {
        self.root.join("sha256")
    }

    /// Where the blob of `digest` lives.
    pub fn blob_path(&self, digest: &Digest) -> PathBuf {
        self.dir().join(digest.hex())
    }

    fn sidecar_path(&self, digest: &Digest) -> PathBuf {
        self.dir().join(format!("{}.json", digest.hex()))
    }

    /// Writes `bytes` to `path` through a temporary file and a rename.
    fn write_atomically(&self, path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
        let dir = self.dir();
        let temp = dir.join(format!(
            "{TEMP_PREFIX}{}-{}-{}",
            std::process::id(),
            TEMP_COUNTER.fetch_add(1, Ordering::Relaxed),
            path.file_name().and_then(|n| n.to_str()).unwrap_or("blob")
        ));
        let result = (|| {
            let mut file =
                fs::File::create(&temp).map_err(|e| StoreError::io("cannot create", &temp, e))?;
            file.write_all(bytes)
                .and_then(|()| file.sync_all())
                .map_err(|e| StoreError::io("cannot write", &temp, e))?;
            fs::rename(&temp, path).map_err(|e| StoreError::io("cannot rename into", path, e))
        })();
        if result.is_err() {
            // Nothing half-written stays visible, not even the temporary file.
            let _ = fs::remove_file(&temp);
        }
        result
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
        Sidecar::from_json(&bytes).map_err(|reason| StoreError::BadSidecar {
            digest: digest.to_string(),
            path,
            reason,
        })
    }
}

impl Store for FileStore {
    fn put(&self, bytes: &[u8], kind: &str, tags: &[String]) -> Result<Sidecar, StoreError> {
        let digest = Digest::of(bytes);
        let dir = self.dir();
        fs::create_dir_all(&dir).map_err(|e| StoreError::io("cannot create", &dir, e))?;
        let blob = self.blob_path(&digest);
        // Content-addressed: an intact blob with the same digest is already this content.
        let intact = fs::read(&blob).is_ok_and(|existing| Digest::of(&existing) == digest);
        if !intact {
            self.write_atomically(&blob, bytes)?;
        }
        match self.read_sidecar(&digest) {
            Ok(sidecar) if intact => Ok(sidecar),
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
