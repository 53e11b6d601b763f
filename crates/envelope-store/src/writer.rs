//! Putting an artifact whose bytes arrive a piece at a time ([`BlobWriter`]): hashed and
//! written as they come, named once the last piece is in.

use std::fs::File;
use std::io::Write as _;
use std::path::PathBuf;

use sha2::{Digest as _, Sha256};

use crate::{Digest, FileStore, Sidecar, Store, StoreError};

/// A put in progress, from [`Store::writer`]: [`write`](BlobWriter::write) the bytes in
/// order, then [`finish`](BlobWriter::finish) with their media type and tags, which gives
/// what [`Store::put`] of all the bytes at once gives (the same digest, blob and sidecar).
///
/// Dropping the writer before `finish` abandons the put: nothing is stored, and nothing it
/// wrote is left behind.
///
/// ```rust
/// use envelope_store::{Digest, FileStore, Store};
///
/// let root = std::env::temp_dir()
///     .join(format!("envelope-store-doc-writer-{}", std::process::id()));
/// # let _ = std::fs::remove_dir_all(&root);
/// let store = FileStore::new(&root);
/// let mut writer = store.writer()?;
/// writer.write(b"{\"rows\":")?;
/// writer.write(b"[1,2,3]}")?;
/// let sidecar = writer.finish("application/json", &[])?;
/// assert_eq!(sidecar.digest, Digest::of(b"{\"rows\":[1,2,3]}"));
/// assert_eq!(store.get(&sidecar.digest)?, b"{\"rows\":[1,2,3]}");
///
/// // Abandoned: no blob, no temporary file.
/// let mut writer = store.writer()?;
/// writer.write(b"half")?;
/// drop(writer);
/// assert_eq!(std::fs::read_dir(root.join("sha256")).unwrap().count(), 2);
/// std::fs::remove_dir_all(&root).unwrap();
/// # Ok::<(), envelope_store::StoreError>(())
/// ```
pub trait BlobWriter: Send {
    /// Adds `bytes` to the artifact.
    ///
    /// # Errors
    ///
    /// [`StoreError::Io`] when they cannot be written (the put is then abandoned: drop the
    /// writer).
    fn write(&mut self, bytes: &[u8]) -> Result<(), StoreError>;

    /// Stores the artifact of the bytes written, with media type `kind` and `tags`, as
    /// [`Store::put`] does, and returns its sidecar.
    ///
    /// # Errors
    ///
    /// Those of [`Store::put`].
    fn finish(self: Box<Self>, kind: &str, tags: &[String]) -> Result<Sidecar, StoreError>;
}

/// The writer of a store that takes whole artifacts only: the pieces are gathered in
/// memory and put at once (the default [`Store::writer`]).
pub(crate) struct Gathered<'a, S: ?Sized> {
    store: &'a S,
    bytes: Vec<u8>,
}

impl<'a, S: Store + ?Sized> Gathered<'a, S> {
    pub(crate) fn new(store: &'a S) -> Self {
        Gathered {
            store,
            bytes: Vec::new(),
        }
    }
}

impl<S: Store + ?Sized> BlobWriter for Gathered<'_, S> {
    fn write(&mut self, bytes: &[u8]) -> Result<(), StoreError> {
        self.bytes.extend_from_slice(bytes);
        Ok(())
    }

    fn finish(self: Box<Self>, kind: &str, tags: &[String]) -> Result<Sidecar, StoreError> {
        self.store.put(&self.bytes, kind, tags)
    }
}

/// Pieces from this size on are hashed and written by two threads.
const SIDE_BY_SIDE_FROM: usize = 1 << 20;

/// The file store's writer: each piece is hashed and appended to a new temporary file (see
/// [`FileStore`]'s rules for those), renamed to the digest at the end.
pub(crate) struct FileBlobWriter<'a> {
    store: &'a FileStore,
    dir: PathBuf,
    /// The temporary file's name; `None` once it is renamed into place or removed.
    temp: Option<String>,
    file: File,
    hasher: Sha256,
    len: u64,
}

impl<'a> FileBlobWriter<'a> {
    pub(crate) fn new(store: &'a FileStore) -> Result<Self, StoreError> {
        let dir = store.dir_for_writing()?;
        let (temp, file) = store.create_temp(&dir)?;
        Ok(FileBlobWriter {
            store,
            dir,
            temp: Some(temp),
            file,
            hasher: Sha256::new(),
            len: 0,
        })
    }

    /// The temporary file's name, while there is one.
    fn temp(&self) -> &str {
        self.temp.as_deref().unwrap_or_default()
    }
}

impl BlobWriter for FileBlobWriter<'_> {
    fn write(&mut self, bytes: &[u8]) -> Result<(), StoreError> {
        // The piece is hashed and written side by side, as `put` does with the whole: the
        // kernel's copy into the page cache costs about what the hashing does. A thread
        // per piece costs tens of microseconds; pieces are megabytes (`shape::follow`).
        let Self {
            file, hasher, len, ..
        } = self;
        let written = match bytes.len() >= SIDE_BY_SIDE_FROM {
            true => std::thread::scope(|scope| {
                let writing = scope.spawn(|| file.write_all(bytes));
                hasher.update(bytes);
                writing.join().expect("the writing thread does not panic")
            }),
            false => {
                hasher.update(bytes);
                file.write_all(bytes)
            }
        };
        *len += bytes.len() as u64;
        written.map_err(|e| StoreError::io("cannot write", &self.store.shown(self.temp()), e))
    }

    fn finish(mut self: Box<Self>, kind: &str, tags: &[String]) -> Result<Sidecar, StoreError> {
        let temp = self.temp().to_string();
        self.store
            .flush_if_durable(&self.file)
            .map_err(|e| StoreError::io("cannot write", &self.store.shown(&temp), e))?;
        let digest = Digest::from_sha256(std::mem::take(&mut self.hasher));
        // From here on the temporary file is `commit`'s: renamed, or removed on failure.
        self.temp = None;
        self.store.commit(&self.dir, &temp, &digest.hex())?;
        self.store.describe(&self.dir, digest, self.len, kind, tags)
    }
}

impl Drop for FileBlobWriter<'_> {
    fn drop(&mut self) {
        if let Some(temp) = self.temp.take() {
            // Ours (created exclusively): an abandoned put leaves nothing behind.
            let _ = std::fs::remove_file(self.dir.join(temp));
        }
    }
}
