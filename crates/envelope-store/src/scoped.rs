//! A store as one caller sees it: what it puts is marked as its own, and it reads only what
//! it put ([`Scoped`]).
//!
//! Ownership is kept in the store itself, as small marker artifacts: for owner `o` and
//! artifact `d`, the marker is the artifact whose bytes are `envelope-owner v1\n<sha256 of
//! o>\n<d>\n`, so its digest is known to whoever knows both, and to nobody else. A read
//! first looks for the caller's marker: when it is missing, whether or not the artifact
//! exists, the answer is the same [`StoreError::NotFound`], after the same one look-up (no
//! existence oracle, and no timing difference between "not yours" and "not there").
//! Markers age and are collected with the artifacts (`gc`'s `older_than`). The limits on
//! use ([`GcLimits`]: `idle`, `max_bytes`, `max_artifacts`) neither count nor remove them:
//! a marker never keeps its artifact alive, and one whose artifact was evicted stays until
//! it is old enough for `older_than` (it grants nothing meanwhile: the artifact is gone).
//! A marker is written at each put of its owner, not at reads.

use std::ops::Range;
use std::sync::Arc;

use crate::{BlobWriter, Digest, GcLimits, GcReport, Hashed, Sidecar, Store, StoreError};

/// The media type of owner markers.
pub const MARKER_KIND: &str = "application/vnd.envelope.owner";

/// A view of `inner` for one owner. `owner` `None` sees everything (no tokens, or an
/// administrator).
#[derive(Clone)]
pub struct Scoped {
    inner: Arc<dyn Store>,
    owner: Option<String>,
}

impl std::fmt::Debug for Scoped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scoped")
            .field("owner", &self.owner)
            .finish_non_exhaustive()
    }
}

/// The bytes of the marker saying that `owner` may read `digest`.
fn marker_bytes(owner: &str, digest: &Digest) -> Vec<u8> {
    format!(
        "envelope-owner v1\n{}\n{}\n",
        Digest::of(owner.as_bytes()).hex(),
        digest
    )
    .into_bytes()
}

impl Scoped {
    /// `inner` as `owner` sees it (`None`: all of it).
    pub fn new(inner: Arc<dyn Store>, owner: Option<String>) -> Scoped {
        Scoped { inner, owner }
    }

    /// The owner this view is for.
    pub fn owner(&self) -> Option<&str> {
        self.owner.as_deref()
    }

    /// Records that this view's owner may read `digest`.
    fn mark(&self, digest: &Digest) -> Result<(), StoreError> {
        if let Some(owner) = &self.owner {
            self.inner
                .put(&marker_bytes(owner, digest), MARKER_KIND, &[])?;
        }
        Ok(())
    }

    /// `Ok` when this view may read `digest`; else the answer for an artifact that is not
    /// there, word for word.
    fn check(&self, digest: &Digest) -> Result<(), StoreError> {
        let Some(owner) = &self.owner else {
            return Ok(());
        };
        let marker = Digest::of(&marker_bytes(owner, digest));
        match self.inner.sidecar(&marker) {
            Ok(_) => Ok(()),
            Err(_) => Err(not_found(digest)),
        }
    }
}

/// The one "not there" answer of a scoped view.
fn not_found(digest: &Digest) -> StoreError {
    StoreError::NotFound(digest.to_string())
}

/// An inner "not found" worded as the scoped view words it.
fn same_not_found(digest: &Digest, error: StoreError) -> StoreError {
    match error {
        StoreError::NotFound(_) => not_found(digest),
        other => other,
    }
}

impl Store for Scoped {
    fn put(&self, bytes: &[u8], kind: &str, tags: &[String]) -> Result<Sidecar, StoreError> {
        let sidecar = self.inner.put(bytes, kind, tags)?;
        self.mark(&sidecar.digest)?;
        Ok(sidecar)
    }

    fn put_hashed(
        &self,
        hashed: &Hashed<'_>,
        kind: &str,
        tags: &[String],
    ) -> Result<Sidecar, StoreError> {
        let sidecar = self.inner.put_hashed(hashed, kind, tags)?;
        self.mark(&sidecar.digest)?;
        Ok(sidecar)
    }

    fn writer(&self) -> Result<Box<dyn BlobWriter + '_>, StoreError> {
        Ok(Box::new(MarkingWriter {
            inner: self.inner.writer()?,
            scoped: self,
        }))
    }

    fn get(&self, digest: &Digest) -> Result<Vec<u8>, StoreError> {
        self.check(digest)?;
        self.inner
            .get(digest)
            .map_err(|e| same_not_found(digest, e))
    }

    fn get_range(&self, digest: &Digest, range: Range<u64>) -> Result<Vec<u8>, StoreError> {
        self.check(digest)?;
        self.inner
            .get_range(digest, range)
            .map_err(|e| same_not_found(digest, e))
    }

    fn list(&self) -> Result<Vec<Digest>, StoreError> {
        let all = self.inner.list()?;
        Ok(all
            .into_iter()
            .filter(|d| self.check(d).is_ok())
            .filter(|d| self.owner.is_none() || !self.is_marker(d))
            .collect())
    }

    fn sidecar(&self, digest: &Digest) -> Result<Sidecar, StoreError> {
        self.check(digest)?;
        self.inner
            .sidecar(digest)
            .map_err(|e| same_not_found(digest, e))
    }

    fn remove(&self, digest: &Digest) -> Result<(), StoreError> {
        self.check(digest)?;
        self.inner.remove(digest)
    }

    /// The whole inner store's gc, whatever the owner (as [`Store::gc`]).
    fn gc_keeping(
        &self,
        limits: &GcLimits,
        keep: &dyn Fn(&Digest) -> bool,
    ) -> Result<GcReport, StoreError> {
        self.inner.gc_keeping(limits, keep)
    }
}

impl Scoped {
    fn is_marker(&self, digest: &Digest) -> bool {
        self.inner
            .sidecar(digest)
            .is_ok_and(|s| s.kind == MARKER_KIND)
    }
}

/// A writer whose artifact is marked as the owner's once written.
struct MarkingWriter<'a> {
    inner: Box<dyn BlobWriter + 'a>,
    scoped: &'a Scoped,
}

impl BlobWriter for MarkingWriter<'_> {
    fn write(&mut self, bytes: &[u8]) -> Result<(), StoreError> {
        self.inner.write(bytes)
    }

    fn finish(self: Box<Self>, kind: &str, tags: &[String]) -> Result<Sidecar, StoreError> {
        let sidecar = self.inner.finish(kind, tags)?;
        self.scoped.mark(&sidecar.digest)?;
        Ok(sidecar)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::FileStore;

    /// A folder removed when dropped.
    struct TempDir(std::path::PathBuf);

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn views() -> (TempDir, Scoped, Scoped, Scoped) {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = TempDir(
            std::env::temp_dir().join(format!("envelope-scoped-{}-{n}", std::process::id())),
        );
        let inner: Arc<dyn Store> = Arc::new(FileStore::new(&dir.0));
        let alice = Scoped::new(inner.clone(), Some("alice".into()));
        let bob = Scoped::new(inner.clone(), Some("bob".into()));
        let admin = Scoped::new(inner, None);
        (dir, alice, bob, admin)
    }

    #[test]
    fn an_owner_reads_what_it_put_and_nobody_else_does() {
        let (_dir, alice, bob, admin) = views();
        let digest = alice.put(b"salary: 100", "text/plain", &[]).unwrap().digest;
        assert_eq!(alice.get(&digest).unwrap(), b"salary: 100");
        assert_eq!(admin.get(&digest).unwrap(), b"salary: 100");
        let denied = bob.get(&digest).unwrap_err();
        let missing = bob.get(&Digest::of(b"never stored")).unwrap_err();
        // Not yours and not there: the same error, word for word (the digest aside).
        assert_eq!(denied.code(), "store.not-found");
        assert_eq!(
            denied.to_string().replace(&digest.to_string(), "D"),
            missing
                .to_string()
                .replace(&Digest::of(b"never stored").to_string(), "D")
        );
        assert!(bob.sidecar(&digest).is_err());
        // A window is read through the same check.
        assert_eq!(alice.get_range(&digest, 8..11).unwrap(), b"100");
        assert_eq!(admin.get_range(&digest, 0..6).unwrap(), b"salary");
        let denied = bob.get_range(&digest, 0..1).unwrap_err();
        assert_eq!(
            denied.to_string(),
            bob.get(&digest).unwrap_err().to_string()
        );
        // The same bytes put by bob too: both read them.
        bob.put(b"salary: 100", "text/plain", &[]).unwrap();
        assert!(bob.get(&digest).is_ok());
        assert!(alice.get(&digest).is_ok());
    }

    #[test]
    fn a_streamed_put_is_marked_and_lists_show_only_the_owners() {
        let (_dir, alice, bob, admin) = views();
        let mut writer = alice.writer().unwrap();
        writer.write(b"part one, ").unwrap();
        writer.write(b"part two").unwrap();
        let digest = writer.finish("text/plain", &[]).unwrap().digest;
        assert_eq!(alice.get(&digest).unwrap(), b"part one, part two");
        assert!(bob.get(&digest).is_err());
        let other = bob.put(b"bob's", "text/plain", &[]).unwrap().digest;
        assert_eq!(alice.list().unwrap(), vec![digest]);
        assert_eq!(bob.list().unwrap(), vec![other]);
        // The administrator sees the markers too: they are artifacts of the store.
        assert_eq!(admin.list().unwrap().len(), 4);
    }
}
