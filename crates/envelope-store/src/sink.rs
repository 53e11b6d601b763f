//! The store as the place shaping offloads payloads to: the one adapter between [`Store`]
//! and [`envelope::shape::ArtifactSink`], for every store.

use envelope::model::ArtifactRef;
use envelope::shape::{ArtifactSink, ArtifactWriter, SinkError};

use crate::{BlobWriter, Store, StoreError};

/// A [`Store`] as an [`ArtifactSink`]: what [`envelope::shape::Pipeline`] offloads goes to
/// the store, with the media type it gives and no tags, and is named by its digest.
///
/// A failed put is a [`SinkError`] whose code is the [`StoreError::code`] (`store.io`, `store.backend`,
/// …) and whose source is the [`StoreError`] itself.
///
/// ```rust
/// use envelope::shape::{Offloaded, Pipeline};
/// use envelope::{Envelope, FormatId};
/// use envelope_store::{Digest, FileStore, Store, StoreSink};
///
/// let root = std::env::temp_dir()
///     .join(format!("envelope-store-doc-sink-{}", std::process::id()));
/// # let _ = std::fs::remove_dir_all(&root);
/// let store = FileStore::new(&root);
///
/// let rows: Vec<_> = (0..1000).map(|i| serde_json::json!({"id": i, "name": format!("row {i}")})).collect();
/// let shaped = Pipeline::from_envelope(Envelope::ok(serde_json::json!(rows)), FormatId::ProtocolV1)
///     .store(&mut StoreSink::new(&store))
///     .inline_threshold(1024)
///     .run()?;
///
/// let Offloaded::Stored { digest, size_bytes } = &shaped.offloaded else {
///     panic!("not offloaded");
/// };
/// // The store gives back exactly the payload as protocol-v1 writes it, verified.
/// let stored = store.get(&digest.parse::<Digest>()?)?;
/// assert_eq!(stored.len(), *size_bytes);
/// assert_eq!(shaped.artifacts[0].digest, *digest);
/// assert_eq!(store.sidecar(&digest.parse()?)?.kind, "application/json");
///
/// std::fs::remove_dir_all(&root).unwrap();
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy)]
pub struct StoreSink<'a> {
    store: &'a dyn Store,
}

impl<'a> StoreSink<'a> {
    /// `store` as a sink (a `&FileStore`, or `box.as_ref()` of what [`open`](crate::open)
    /// returns).
    pub fn new(store: &'a dyn Store) -> Self {
        StoreSink { store }
    }
}

impl std::fmt::Debug for StoreSink<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoreSink").finish_non_exhaustive()
    }
}

impl ArtifactSink for StoreSink<'_> {
    fn put(&mut self, bytes: &[u8], kind: &str) -> Result<ArtifactRef, SinkError> {
        let sidecar = self.store.put(bytes, kind, &[])?;
        Ok(ArtifactRef {
            digest: sidecar.digest.to_string(),
        })
    }

    /// The store's [`writer`](Store::writer); `None` when it cannot start one (the
    /// offload then puts the whole payload, which reports the error).
    fn begin(&mut self) -> Option<Box<dyn ArtifactWriter + '_>> {
        let writer = self.store.writer().ok()?;
        Some(Box::new(SinkWriter(writer)))
    }
}

/// A store's [`BlobWriter`] as the [`ArtifactWriter`] shaping streams a payload to.
struct SinkWriter<'a>(Box<dyn BlobWriter + 'a>);

impl ArtifactWriter for SinkWriter<'_> {
    fn write(&mut self, bytes: &[u8]) -> Result<(), SinkError> {
        Ok(self.0.write(bytes)?)
    }

    fn finish(self: Box<Self>, kind: &str) -> Result<ArtifactRef, SinkError> {
        let sidecar = self.0.finish(kind, &[])?;
        Ok(ArtifactRef {
            digest: sidecar.digest.to_string(),
        })
    }
}

/// A store error as the sink error shaping reports: the same [`code`](StoreError::code),
/// the error itself as the source.
impl From<StoreError> for SinkError {
    fn from(e: StoreError) -> Self {
        SinkError::new(e.code(), e)
    }
}
