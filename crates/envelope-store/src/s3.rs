//! S3-compatible object storage (feature `s3`), through the `object_store` crate.
//!
//! `s3://BUCKET/PREFIX` with object_store's standard environment: `AWS_ENDPOINT`,
//! `AWS_ALLOW_HTTP`, `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_REGION`. The layout is
//! the file store's: `PREFIX/sha256/<hex>` and `PREFIX/sha256/<hex>.json`. An S3 PUT is
//! atomic, so no reader sees half an object. Retries are few and short: a store that is down
//! fails in seconds, not minutes.

use std::ops::Range;
use std::time::{Duration, SystemTime};

use futures::TryStreamExt as _;
use object_store::aws::{AmazonS3, AmazonS3Builder, AmazonS3ConfigKey};
use object_store::path::Path;
use object_store::{
    BackoffConfig, ClientConfigKey, ObjectStore, ObjectStoreExt as _, PutPayload, RetryConfig,
};

use crate::limits::{Candidate, evict};
use crate::scoped::MARKER_KIND;
use crate::{Digest, GcLimits, GcReport, Sidecar, Store, StoreError};

/// A store in an S3-compatible bucket: blobs in `PREFIX/sha256/<hex>`, sidecars in
/// `PREFIX/sha256/<hex>.json`, the [`FileStore`](crate::FileStore)'s layout.
///
/// Each object is written by one PUT, which S3 makes atomic. Requests are retried twice with
/// short backoff, connections time out after 5 s and requests after 120 s, so a store that is
/// down fails in seconds. Errors are [`StoreError::Backend`] naming the bucket and the action.
/// The methods block the calling thread (the store runs its own single-threaded I/O runtime);
/// called from inside an async runtime, they wait on a thread of their own.
pub struct S3Store {
    store: AmazonS3,
    prefix: Path,
    /// `s3://bucket/prefix`, for messages.
    label: String,
    runtime: tokio::runtime::Runtime,
}

fn backend(label: &str, action: &str, e: impl std::fmt::Display) -> StoreError {
    StoreError::Backend(format!("{label}: {action}: {e}"))
}

/// Whether the environment names a source of credentials other than the instance
/// metadata service. Without one, object_store would ask the metadata service (a
/// link-local address) and wait for it to time out where there is none: a store that
/// cannot be reached looks like a hang. That service is asked only when the user says so.
fn has_credentials(var: impl Fn(&str) -> Option<std::ffi::OsString>) -> bool {
    let set = |key: &str| var(key).is_some_and(|v| !v.is_empty());
    (set("AWS_ACCESS_KEY_ID") && set("AWS_SECRET_ACCESS_KEY"))
        || set("AWS_WEB_IDENTITY_TOKEN_FILE")
        || set("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI")
        || set("AWS_CONTAINER_CREDENTIALS_FULL_URI")
        || var("AWS_SKIP_SIGNATURE").is_some_and(|v| v == "true")
        || var("ENVELOPE_S3_INSTANCE_METADATA").is_some_and(|v| v == "1")
}

impl S3Store {
    /// Opens `s3://BUCKET/PREFIX` (the prefix may be empty) with object_store's standard
    /// environment: `AWS_ENDPOINT`, `AWS_ALLOW_HTTP`, `AWS_ACCESS_KEY_ID`,
    /// `AWS_SECRET_ACCESS_KEY`, `AWS_REGION`. No request is made: a wrong endpoint or missing
    /// credentials show on the first operation.
    ///
    /// # Errors
    ///
    /// [`StoreError::Backend`] when `url` does not start with `s3://`, names no bucket, or
    /// the client or its I/O runtime cannot be set up.
    ///
    /// ```rust
    /// use envelope_store::S3Store;
    ///
    /// let err = S3Store::from_url("s3:///prefix").err().unwrap();
    /// assert_eq!(err.code(), "store.backend");
    /// assert_eq!(err.to_string(), r#"store backend: "s3:///prefix" names no bucket"#);
    /// ```
    ///
    /// ```rust,no_run
    /// use envelope_store::{S3Store, Store};
    ///
    /// // With AWS_ENDPOINT=http://127.0.0.1:9000 AWS_ALLOW_HTTP=true and credentials set:
    /// let store = S3Store::from_url("s3://artifacts/envelope")?;
    /// let sidecar = store.put(b"hello", "text/plain", &[])?;
    /// assert_eq!(store.get(&sidecar.digest)?, b"hello");
    /// # Ok::<(), envelope_store::StoreError>(())
    /// ```
    pub fn from_url(url: &str) -> Result<Self, StoreError> {
        let rest = url.strip_prefix("s3://").ok_or_else(|| {
            StoreError::Backend(format!("{url:?} is not an s3://BUCKET/PREFIX url"))
        })?;
        let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
        if bucket.is_empty() {
            return Err(StoreError::Backend(format!("{url:?} names no bucket")));
        }
        if !has_credentials(|key| std::env::var_os(key)) {
            return Err(StoreError::Backend(format!(
                "{url}: no S3 credentials in the environment (AWS_ACCESS_KEY_ID and \
                 AWS_SECRET_ACCESS_KEY, a web identity token file, container credentials or \
                 AWS_SKIP_SIGNATURE=true); the instance metadata service is asked only with \
                 ENVELOPE_S3_INSTANCE_METADATA=1"
            )));
        }
        let store = AmazonS3Builder::from_env()
            .with_bucket_name(bucket)
            .with_retry(RetryConfig {
                backoff: BackoffConfig {
                    init_backoff: Duration::from_millis(100),
                    max_backoff: Duration::from_secs(2),
                    base: 2.0,
                },
                max_retries: 2,
                retry_timeout: Duration::from_secs(20),
            })
            .with_config(
                AmazonS3ConfigKey::Client(ClientConfigKey::ConnectTimeout),
                "5s",
            )
            .with_config(AmazonS3ConfigKey::Client(ClientConfigKey::Timeout), "120s")
            .build()
            .map_err(|e| backend(url, "cannot configure", e))?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| backend(url, "cannot start the I/O runtime", e))?;
        Ok(S3Store {
            store,
            prefix: Path::from(prefix.trim_matches('/')),
            label: url.trim_end_matches('/').to_string(),
            runtime,
        })
    }

    /// Runs `future` on the store's own I/O runtime. Called from a thread that drives an
    /// async runtime (a task of the proxy or of `serve` shaping a small result in place, a
    /// worker's shaper), the wait happens on a thread of its own: blocking the caller's
    /// thread in a runtime is refused by tokio (it would stall that runtime's tasks).
    fn block_on<F>(&self, future: F) -> F::Output
    where
        F: std::future::Future + Send,
        F::Output: Send,
    {
        if tokio::runtime::Handle::try_current().is_err() {
            return self.runtime.block_on(future);
        }
        std::thread::scope(|scope| {
            scope
                .spawn(|| self.runtime.block_on(future))
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        })
    }

    fn dir(&self) -> Path {
        self.prefix.clone().join("sha256")
    }

    fn blob_path(&self, digest: &Digest) -> Path {
        self.dir().join(digest.hex())
    }

    fn sidecar_path(&self, digest: &Digest) -> Path {
        self.dir().join(format!("{}.json", digest.hex()))
    }

    /// The object's bytes, `None` when it does not exist.
    fn fetch(&self, path: &Path) -> Result<Option<Vec<u8>>, StoreError> {
        self.block_on(async {
            match self.store.get(path).await {
                Ok(result) => result
                    .bytes()
                    .await
                    .map(|b| Some(b.to_vec()))
                    .map_err(|e| backend(&self.label, "cannot read", e)),
                Err(object_store::Error::NotFound { .. }) => Ok(None),
                Err(e) => Err(backend(&self.label, "cannot read", e)),
            }
        })
    }

    fn upload(&self, path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
        self.block_on(self.store.put(path, PutPayload::from(bytes.to_vec())))
            .map(|_| ())
            .map_err(|e| backend(&self.label, "cannot write", e))
    }

    fn delete(&self, path: &Path) -> Result<(), StoreError> {
        match self.block_on(self.store.delete(path)) {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(backend(&self.label, "cannot delete", e)),
        }
    }

    /// Every object under `PREFIX/sha256/`: file name, age, size and last write.
    fn objects(&self) -> Result<Vec<Object>, StoreError> {
        let dir = self.dir();
        let metas: Vec<object_store::ObjectMeta> = self
            .block_on(self.store.list(Some(&dir)).try_collect())
            .map_err(|e| backend(&self.label, "cannot list", e))?;
        let now = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs() as i64;
        Ok(metas
            .into_iter()
            .filter_map(|m| {
                let name = m.location.filename()?.to_string();
                let written = m.last_modified.timestamp();
                let age = Duration::from_secs((now - written).max(0) as u64);
                let written = SystemTime::UNIX_EPOCH + Duration::from_secs(written.max(0) as u64);
                Some(Object {
                    name,
                    age,
                    size: m.size,
                    written,
                })
            })
            .collect())
    }
}

/// An object under `PREFIX/sha256/`, as listed.
struct Object {
    name: String,
    age: Duration,
    size: u64,
    /// `LastModified`: the last upload, the only "last use" S3 keeps.
    written: SystemTime,
}

impl Store for S3Store {
    fn put(&self, bytes: &[u8], kind: &str, tags: &[String]) -> Result<Sidecar, StoreError> {
        let digest = Digest::of(bytes);
        let blob = self.blob_path(&digest);
        let intact = self
            .fetch(&blob)?
            .is_some_and(|existing| Digest::of(&existing) == digest);
        if !intact {
            self.upload(&blob, bytes)?;
        }
        match self.sidecar(&digest) {
            Ok(sidecar) if intact => Ok(sidecar),
            _ => {
                let sidecar = Sidecar::new(digest, bytes.len() as u64, kind, tags);
                self.upload(&self.sidecar_path(&digest), &sidecar.to_json())?;
                Ok(sidecar)
            }
        }
    }

    fn get(&self, digest: &Digest) -> Result<Vec<u8>, StoreError> {
        let bytes = self
            .fetch(&self.blob_path(digest))?
            .ok_or_else(|| StoreError::NotFound(digest.to_string()))?;
        crate::verified(digest, bytes)
    }

    /// One ranged GET of the blob (not verified, as a window cannot be).
    fn get_range(&self, digest: &Digest, range: Range<u64>) -> Result<Vec<u8>, StoreError> {
        if range.start > range.end {
            return Err(crate::out_of_range(digest, &range, 0));
        }
        if range.is_empty() {
            // The check that the blob is there, without a ranged GET of nothing.
            return self
                .sidecar(digest)
                .map(|_| Vec::new())
                .map_err(|e| match e {
                    StoreError::BadSidecar { .. } => StoreError::NotFound(digest.to_string()),
                    other => other,
                });
        }
        let path = self.blob_path(digest);
        let wanted = range.end - range.start;
        let bytes = self.block_on(async {
            match self.store.get_range(&path, range.clone()).await {
                Ok(bytes) => Ok(bytes.to_vec()),
                Err(object_store::Error::NotFound { .. }) => {
                    Err(StoreError::NotFound(digest.to_string()))
                }
                Err(e) => Err(backend(&self.label, "cannot read", e)),
            }
        })?;
        match bytes.len() as u64 == wanted {
            true => Ok(bytes),
            false => Err(crate::out_of_range(digest, &range, bytes.len() as u64)),
        }
    }

    fn list(&self) -> Result<Vec<Digest>, StoreError> {
        let mut digests: Vec<Digest> = self
            .objects()?
            .iter()
            .filter_map(|o| Digest::from_hex(&o.name))
            .collect();
        digests.sort();
        Ok(digests)
    }

    fn sidecar(&self, digest: &Digest) -> Result<Sidecar, StoreError> {
        let path = self.sidecar_path(digest);
        let location = format!("{}/{path}", self.label);
        let bytes = self.fetch(&path)?.ok_or_else(|| StoreError::BadSidecar {
            digest: digest.to_string(),
            path: location.clone().into(),
            reason: "missing".into(),
        })?;
        Sidecar::from_json(&bytes).map_err(|e| e.in_sidecar_of(digest, location))
    }

    fn remove(&self, digest: &Digest) -> Result<(), StoreError> {
        self.delete(&self.blob_path(digest))?;
        self.delete(&self.sidecar_path(digest))
    }

    /// Last use is the blob's `LastModified`, the time it was last uploaded: reads, and a
    /// put of content already stored intact, do not refresh it (see [`GcLimits`]).
    fn gc_keeping(
        &self,
        limits: &GcLimits,
        keep: &dyn Fn(&Digest) -> bool,
    ) -> Result<GcReport, StoreError> {
        let objects = self.objects()?;
        let blobs: Vec<Digest> = objects
            .iter()
            .filter_map(|o| Digest::from_hex(&o.name))
            .collect();
        let mut report = GcReport::default();
        let mut candidates = Vec::new();
        for object in &objects {
            if let Some(digest) = object.name.strip_suffix(".json").and_then(Digest::from_hex)
                && !blobs.contains(&digest)
            {
                self.delete(&self.sidecar_path(&digest))?;
                report.orphans += 1;
            } else if let Some(digest) = Digest::from_hex(&object.name) {
                if limits.older_than.is_some_and(|limit| object.age >= limit) && !keep(&digest) {
                    self.remove(&digest)?;
                    report.removed.push(digest);
                } else if limits.ranks()
                    && self
                        .sidecar(&digest)
                        .map_or(true, |s| s.kind != MARKER_KIND)
                {
                    candidates.push(Candidate {
                        digest,
                        size: object.size,
                        last_used: object.written,
                    });
                }
            }
        }
        report.removed.sort();
        let mut failed = None;
        let (expired, evicted) = evict(candidates, limits, SystemTime::now(), keep, |digest| {
            if failed.is_some() {
                return false;
            }
            match self.remove(digest) {
                Ok(()) => true,
                Err(e) => {
                    failed = Some(e);
                    false
                }
            }
        });
        if let Some(e) = failed {
            return Err(e);
        }
        report.expired = expired;
        report.evicted = evicted;
        Ok(report)
    }
}

#[cfg(test)]
mod tests {
    use super::has_credentials;

    fn with(vars: &[(&str, &str)]) -> bool {
        has_credentials(|key| {
            vars.iter()
                .find(|(k, _)| *k == key)
                .map(|(_, v)| std::ffi::OsString::from(v))
        })
    }

    #[test]
    fn a_credential_source_other_than_instance_metadata_is_required() {
        assert!(!with(&[]));
        assert!(!with(&[("AWS_ACCESS_KEY_ID", "a")]));
        assert!(!with(&[
            ("AWS_ACCESS_KEY_ID", "a"),
            ("AWS_SECRET_ACCESS_KEY", "")
        ]));
        assert!(with(&[
            ("AWS_ACCESS_KEY_ID", "a"),
            ("AWS_SECRET_ACCESS_KEY", "b")
        ]));
        assert!(with(&[("AWS_WEB_IDENTITY_TOKEN_FILE", "/t")]));
        assert!(with(&[("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "/v2/c")]));
        assert!(with(&[("AWS_SKIP_SIGNATURE", "true")]));
        assert!(!with(&[("ENVELOPE_S3_INSTANCE_METADATA", "0")]));
        assert!(with(&[("ENVELOPE_S3_INSTANCE_METADATA", "1")]));
    }
}
