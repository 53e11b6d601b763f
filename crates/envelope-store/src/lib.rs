//! `envelope-store`: the content-addressed store that large payloads are offloaded to.
//!
//! [`Store`] is the interface; [`FileStore`] keeps artifacts in a local folder
//! (`ROOT/sha256/<hex>` plus a `<hex>.json` sidecar), the default; `S3Store` (feature `s3`)
//! keeps the same layout in an S3-compatible bucket.

mod digest;
mod error;
mod file;
#[cfg(feature = "s3")]
mod s3;

use std::time::Duration;

use serde_json::{Value, json};

pub use digest::Digest;
pub use error::StoreError;
pub use file::FileStore;
#[cfg(feature = "s3")]
pub use s3::S3Store;

/// Opens a store from a location: `s3://BUCKET/PREFIX` (feature `s3`) or a folder
/// (flushed to disk before each rename when `ENVELOPE_STORE_FSYNC=1`).
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

/// What the store knows about an artifact (the sidecar file).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sidecar {
    pub digest: Digest,
    pub size_bytes: u64,
    /// Media type, lower-case, without parameters.
    pub kind: String,
    pub tags: Vec<String>,
    /// RFC 3339 UTC.
    pub created_at: String,
}

impl Sidecar {
    /// A sidecar created now.
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

    /// `{"digest","size_bytes","kind","tags","created_at"}` and a newline.
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

    /// Reads a sidecar; the error says what is wrong with it.
    pub fn from_json(bytes: &[u8]) -> Result<Self, String> {
        let v: Value = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
        let text = |key: &str| {
            v.get(key)
                .and_then(Value::as_str)
                .map(str::to_string)
                .ok_or_else(|| format!("{key} is missing or not a string"))
        };
        Ok(Sidecar {
            digest: text("digest")?
                .parse()
                .map_err(|e: StoreError| e.to_string())?,
            size_bytes: v
                .get("size_bytes")
                .and_then(Value::as_u64)
                .ok_or("size_bytes is missing or not an integer")?,
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
pub fn normalize_kind(kind: &str) -> String {
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

/// What `gc` removed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GcReport {
    /// Leftover temporary files of interrupted writes.
    pub temp_files: usize,
    /// Sidecars without their blob.
    pub orphans: usize,
    /// Artifacts removed for their age.
    pub removed: Vec<Digest>,
}

/// A content-addressed store.
pub trait Store {
    /// Stores `bytes` (idempotent: the same bytes give the same digest and one copy).
    fn put(&self, bytes: &[u8], kind: &str, tags: &[String]) -> Result<Sidecar, StoreError>;
    /// The exact bytes of `digest`, verified against it.
    fn get(&self, digest: &Digest) -> Result<Vec<u8>, StoreError>;
    /// Checks blob and sidecar; the sidecar when both are sound.
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
    /// Every digest in the store, sorted.
    fn list(&self) -> Result<Vec<Digest>, StoreError>;
    /// The sidecar of `digest`.
    fn sidecar(&self, digest: &Digest) -> Result<Sidecar, StoreError>;
    /// Removes an artifact (no error when it is absent).
    fn remove(&self, digest: &Digest) -> Result<(), StoreError>;
    /// Removes leftovers and, with `older_than`, artifacts older than that.
    fn gc(&self, older_than: Option<Duration>) -> Result<GcReport, StoreError>;
}
