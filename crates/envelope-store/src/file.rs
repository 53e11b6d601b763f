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
//!
//! # Links
//!
//! The root is resolved once ([`fs::canonicalize`], the first time it exists) and links
//! are never followed below it; see [`FileStore`] for the rules. How each rule is kept:
//!
//! - every path below the root is `ROOT/sha256` or `ROOT/sha256/<name>`; before use, the
//!   folder and the file are looked at with [`fs::symlink_metadata`] (which does not follow
//!   links): a link is refused with [`StoreError::Link`], anything but a folder or a
//!   regular file with [`StoreError::Io`];
//! - files are opened with `O_NOFOLLOW` where its value is known without the `libc` crate
//!   (Linux and Android on the common architectures, macOS and the BSDs); elsewhere on Unix
//!   the opened file's device and inode are compared with the checked path's, and a mismatch
//!   that is not a plain replacement by another regular file is refused as a link;
//! - temporary files are created with `create_new` (`O_CREAT | O_EXCL`, which fails on any
//!   existing name, a link included, and never follows one) and `O_NOFOLLOW`, under a name
//!   nobody can predict (`.tmp-<pid>-<nanos>-<counter>-<128 random bits>`); a name that
//!   exists is never touched, another one is drawn;
//! - `rename(2)` does not follow a link at its destination: it replaces the link itself. The
//!   store still refuses to rename onto a link it sees, so a planted link is reported rather
//!   than silently replaced; one planted after that check is replaced by the store's own
//!   file, and nothing is ever written through it;
//! - deletions (`unlink`) never follow a link either; `gc` leaves a link that carries one
//!   of the store's names alone (and the artifact it would belong to), reports it in
//!   [`GcReport::skipped`](crate::GcReport::skipped) and collects the rest.
//!
//! What remains: `std` has no `openat`, so checking `ROOT/sha256` and using a path through
//! it are separate system calls. A process that can rename entries in ROOT itself could
//! swap the folder for a link in between; it could then make a put create files named
//! `.tmp-*`, `<hex>` or `<hex>.json` in the link's target (never overwrite one through a
//! link, never another name), or make a removal unlink such a name there. Reads through a
//! swapped folder are harmless: a blob is returned only if it hashes to its digest. Closing
//! that window needs `openat`/`renameat`/`unlinkat` (the `rustix` or `libc` crate).

use std::fs::{self, File, Metadata, OpenOptions};
use std::io::{self, Read as _, Seek as _, SeekFrom, Write as _};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use crate::limits::{Candidate, evict};
use crate::scoped::MARKER_KIND;
use crate::writer::{BlobWriter, FileBlobWriter};
use crate::{Digest, GcLimits, GcReport, GcSkipped, Hashed, Sidecar, Store, StoreError};

/// A store in a local folder: blobs in `ROOT/sha256/<hex>`, sidecars in
/// `ROOT/sha256/<hex>.json`, temporary files (`ROOT/sha256/.tmp-*`) while writing.
///
/// Every file is written to a new temporary file in the same folder and renamed into place,
/// so readers see the whole old file or the whole new one, and concurrent writers of the same
/// content are harmless. Cloning a `FileStore` gives another handle on the same folder.
///
/// # Links
///
/// - **The root may be a link.** `--store` may name a linked folder, or a path through
///   one: the root is resolved once, with every link in it, the first time the store finds
///   it existing (the first operation, or the put that creates it), and that folder is used
///   from then on by this handle, even if the link is later pointed elsewhere. Errors still
///   name paths under the root as it was given ([`FileStore::root`]).
/// - **No link is followed below the root.** `ROOT/sha256`, blobs, sidecars and temporary
///   files must be a real folder and regular files. Every operation that meets a link there
///   (`get`, `put`, `verify`, `sidecar`, `list`, `remove`; `gc` only for a linked
///   `ROOT/sha256`) fails with [`StoreError::Link`] naming it, and leaves the link and its target alone: the store
///   never reads, writes through, replaces or deletes a link below its root. Remove the
///   link by hand once you know where it came from.
/// - `list` reads names only: a link named like a blob is listed, and every operation on
///   that digest reports it (so `verify` of the whole store names each one).
/// - `gc` skips any entry of `ROOT/sha256` with one of the store's names (`<hex>`,
///   `<hex>.json`, `.tmp-*`) that is a link — it neither follows nor removes it, nor the
///   artifact whose blob or sidecar it is — reports it in
///   [`GcReport::skipped`](crate::GcReport::skipped), and collects everything else. Other
///   names are never touched, links or not. It never deletes outside the root.
/// - Temporary files get a new, unpredictable name each time and are created exclusively,
///   so a link planted at a guessed name is never written through.
///
/// On Windows the same checks are made with [`fs::symlink_metadata`] before each use, but
/// files are opened without a no-follow flag.
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
    /// `root` with every link in it resolved, set the first time it exists.
    resolved: OnceLock<PathBuf>,
}

/// The folder of the blobs and sidecars, below the root.
const DIR: &str = "sha256";
/// Temporary files start with this; `gc` removes old ones.
const TEMP_PREFIX: &str = ".tmp-";
/// Temporary files younger than this may belong to a writer still at work.
const TEMP_GRACE: Duration = Duration::from_secs(3600);
/// How many fresh temporary names a put tries when each one is taken.
const TEMP_ATTEMPTS: usize = 16;

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// `O_NOFOLLOW`, where its value is known without the `libc` crate (checked against
/// libc 0.2 and the kernel headers); 0 elsewhere, where the identity check after opening
/// stands in for it.
#[cfg(unix)]
const O_NOFOLLOW: i32 = if cfg!(any(target_os = "linux", target_os = "android")) {
    if cfg!(any(
        target_arch = "arm",
        target_arch = "aarch64",
        target_arch = "powerpc",
        target_arch = "powerpc64",
        target_arch = "m68k"
    )) {
        0o100_000
    } else if cfg!(any(
        target_arch = "x86",
        target_arch = "x86_64",
        target_arch = "riscv32",
        target_arch = "riscv64",
        target_arch = "loongarch64",
        target_arch = "s390x",
        target_arch = "mips",
        target_arch = "mips64",
        target_arch = "sparc64"
    )) {
        0o400_000
    } else {
        0
    }
} else if cfg!(any(
    target_vendor = "apple",
    target_os = "freebsd",
    target_os = "dragonfly",
    target_os = "netbsd",
    target_os = "openbsd"
)) {
    0x100
} else {
    0
};

impl FileStore {
    /// A store rooted at the folder `root`, not durable. Nothing is touched until the first
    /// write, which creates `root/sha256/` (and `root`) as needed.
    ///
    /// `root` may be, or go through, a link: it is resolved once, the first time it exists
    /// (see [Links](FileStore#links)).
    pub fn new(root: impl Into<PathBuf>) -> Self {
        FileStore {
            root: root.into(),
            durable: false,
            resolved: OnceLock::new(),
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

    /// The folder the store was created with (as given, links not resolved).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `ROOT/sha256/<name>` as the user named the root: the path errors report.
    pub(crate) fn shown(&self, name: &str) -> PathBuf {
        self.root.join(DIR).join(name)
    }

    /// The root with its links resolved, once; `None` while it does not exist.
    fn real_root(&self, action: &'static str) -> Result<Option<&Path>, StoreError> {
        if let Some(root) = self.resolved.get() {
            return Ok(Some(root));
        }
        let real = match fs::canonicalize(&self.root) {
            Ok(real) => real,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(StoreError::io(action, &self.root, e)),
        };
        let meta = fs::metadata(&real).map_err(|e| StoreError::io(action, &self.root, e))?;
        if !meta.is_dir() {
            return Err(StoreError::io(action, &self.root, not_a_folder()));
        }
        Ok(Some(self.resolved.get_or_init(|| real)))
    }

    /// `ROOT/sha256`, checked to be a folder and not a link; `None` while the store has none.
    fn dir(&self, action: &'static str) -> Result<Option<PathBuf>, StoreError> {
        let Some(root) = self.real_root(action)? else {
            return Ok(None);
        };
        let dir = root.join(DIR);
        match fs::symlink_metadata(&dir) {
            Ok(meta) => {
                self.check_dir(&meta, action)?;
                Ok(Some(dir))
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(StoreError::io(action, &self.root.join(DIR), e)),
        }
    }

    /// `ROOT/sha256`, created (with the root) when missing, checked like [`FileStore::dir`].
    pub(crate) fn dir_for_writing(&self) -> Result<PathBuf, StoreError> {
        const ACTION: &str = "cannot create";
        let root = match self.real_root(ACTION)? {
            Some(root) => root,
            None => {
                fs::create_dir_all(&self.root)
                    .map_err(|e| StoreError::io(ACTION, &self.root, e))?;
                self.real_root(ACTION)?.ok_or_else(|| {
                    StoreError::io(ACTION, &self.root, io::ErrorKind::NotFound.into())
                })?
            }
        };
        let dir = root.join(DIR);
        let shown = self.root.join(DIR);
        // `mkdir` never follows a link: an existing one, even dangling, is `AlreadyExists`
        // and then refused below.
        match fs::create_dir(&dir) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(StoreError::io(ACTION, &shown, e)),
        }
        let meta = fs::symlink_metadata(&dir).map_err(|e| StoreError::io(ACTION, &shown, e))?;
        self.check_dir(&meta, ACTION)?;
        Ok(dir)
    }

    /// `ROOT/sha256` must be a real folder.
    fn check_dir(&self, meta: &Metadata, action: &'static str) -> Result<(), StoreError> {
        if meta.file_type().is_symlink() {
            Err(StoreError::Link {
                path: self.root.join(DIR),
            })
        } else if !meta.is_dir() {
            Err(StoreError::io(action, &self.root.join(DIR), not_a_folder()))
        } else {
            Ok(())
        }
    }

    /// A file below `ROOT/sha256` must be a regular file.
    fn check_file(&self, meta: &Metadata, name: &str) -> Result<(), StoreError> {
        if meta.file_type().is_symlink() {
            Err(StoreError::Link {
                path: self.shown(name),
            })
        } else if !meta.is_file() {
            Err(StoreError::io(
                "cannot read",
                &self.shown(name),
                not_a_regular_file(),
            ))
        } else {
            Ok(())
        }
    }

    /// Reads `dir/name` whole, never through a link; `None` when there is no such file.
    fn read_file(&self, dir: &Path, name: &str) -> Result<Option<Vec<u8>>, StoreError> {
        self.read_file_touching(dir, name, false)
    }

    /// [`read_file`](Self::read_file), and with `touch` the file's modification time is
    /// set to now once it is read (its last use, see [`GcLimits`](crate::GcLimits)); a
    /// failure to set it is ignored: the read stands.
    fn read_file_touching(
        &self,
        dir: &Path,
        name: &str,
        touch: bool,
    ) -> Result<Option<Vec<u8>>, StoreError> {
        let Some((mut file, meta)) = self.open_checked(dir, name)? else {
            return Ok(None);
        };
        let read_error = |e| StoreError::io("cannot read", &self.shown(name), e);
        let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
        file.read_to_end(&mut bytes).map_err(read_error)?;
        if touch {
            let _ = file.set_modified(SystemTime::now());
        }
        Ok(Some(bytes))
    }

    /// Opens `dir/name` for reading, never through a link, checked to be the regular file
    /// that was looked at; `None` when there is no such file.
    fn open_checked(&self, dir: &Path, name: &str) -> Result<Option<(File, Metadata)>, StoreError> {
        let path = dir.join(name);
        let read_error = |e| StoreError::io("cannot read", &self.shown(name), e);
        let before = match fs::symlink_metadata(&path) {
            Ok(meta) => meta,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(read_error(e)),
        };
        self.check_file(&before, name)?;
        let file = match no_follow(OpenOptions::new().read(true)).open(&path) {
            Ok(file) => file,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            // Replaced by a link since the check (O_NOFOLLOW refuses it)?
            Err(e) => return Err(self.link_or(&path, name, read_error(e))),
        };
        let after = file.metadata().map_err(read_error)?;
        self.check_file(&after, name)?;
        if !opened_what_was_checked(&path, &before, &after) {
            return Err(StoreError::Link {
                path: self.shown(name),
            });
        }
        Ok(Some((file, after)))
    }

    /// Whether `dir/name` is a regular file (not a link) holding exactly `bytes`; if so, its
    /// modification time is set to now (and, when the store is durable, it is flushed to
    /// disk). Anything else, an error included, is `false`: the caller writes the file then,
    /// and meets any error there.
    fn holds(&self, dir: &Path, name: &str, bytes: &[u8]) -> bool {
        let path = dir.join(name);
        let same_size = |meta: &Metadata| meta.is_file() && meta.len() == bytes.len() as u64;
        let Ok(before) = fs::symlink_metadata(&path) else {
            return false;
        };
        if !same_size(&before) {
            return false;
        }
        let Ok(mut file) = no_follow(OpenOptions::new().read(true)).open(&path) else {
            return false;
        };
        let Ok(after) = file.metadata() else {
            return false;
        };
        if !same_size(&after) || !opened_what_was_checked(&path, &before, &after) {
            return false;
        }
        let mut buffer = vec![0u8; COMPARED_AT_ONCE.min(bytes.len().max(1))];
        for expected in bytes.chunks(buffer.len()) {
            let read = &mut buffer[..expected.len()];
            if file.read_exact(read).is_err() || read != expected {
                return false;
            }
        }
        // Nothing after the bytes (the file did not grow since it was looked at).
        let at_end = file.read(&mut buffer[..1]).is_ok_and(|n| n == 0);
        // Its age starts again, as a rewrite's would: `gc` removes blobs by age.
        at_end
            && file.set_modified(SystemTime::now()).is_ok()
            && self.flush_if_durable(&file).is_ok()
    }

    /// [`StoreError::Link`] when `path` is a link now, else `other`.
    fn link_or(&self, path: &Path, name: &str, other: StoreError) -> StoreError {
        match fs::symlink_metadata(path) {
            Ok(meta) if meta.file_type().is_symlink() => StoreError::Link {
                path: self.shown(name),
            },
            _ => other,
        }
    }

    /// Writes `bytes` to `dir/name` through a temporary file and a rename.
    fn write_atomically(&self, dir: &Path, name: &str, bytes: &[u8]) -> Result<(), StoreError> {
        let temp = self.write_temp(dir, bytes)?;
        self.commit(dir, &temp, name)
    }

    /// Writes `bytes` to a new temporary file in `dir` (flushed to disk when durable) and
    /// returns its name (see [`create_temp`](Self::create_temp)).
    fn write_temp(&self, dir: &Path, bytes: &[u8]) -> Result<String, StoreError> {
        let (name, mut file) = self.create_temp(dir)?;
        let written = file
            .write_all(bytes)
            .and_then(|()| self.flush_if_durable(&file))
            .map_err(|e| StoreError::io("cannot write", &self.shown(&name), e));
        match written {
            Ok(()) => Ok(name),
            Err(e) => {
                // Nothing half-written stays visible, not even the temporary file (ours: it
                // was created above).
                let _ = fs::remove_file(dir.join(&name));
                Err(e)
            }
        }
    }

    /// Creates a new temporary file in `dir` and returns its name and the file, open for
    /// writing. The file is created exclusively under a fresh unpredictable name; an
    /// existing name (a link planted there included) is left alone and another is drawn.
    pub(crate) fn create_temp(&self, dir: &Path) -> Result<(String, fs::File), StoreError> {
        let mut attempt = 1;
        loop {
            let name = temp_name();
            let created =
                no_follow(OpenOptions::new().write(true).create_new(true)).open(dir.join(&name));
            match created {
                Ok(file) => return Ok((name, file)),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists && attempt < TEMP_ATTEMPTS => {
                    attempt += 1;
                }
                Err(e) => return Err(StoreError::io("cannot create", &self.shown(&name), e)),
            }
        }
    }

    /// Flushes `file` to disk when the store is durable.
    pub(crate) fn flush_if_durable(&self, file: &fs::File) -> io::Result<()> {
        match self.durable {
            true => file.sync_all(),
            false => Ok(()),
        }
    }

    /// Renames the temporary file `temp` onto `dir/name` (atomic: readers see the old file
    /// or the new one). A link at `name` is refused, not replaced; the temporary file is
    /// removed whenever the rename does not happen.
    pub(crate) fn commit(&self, dir: &Path, temp: &str, name: &str) -> Result<(), StoreError> {
        let temp = dir.join(temp);
        let path = dir.join(name);
        // `rename` would replace a link, not write through it; one planted after this check
        // is replaced by our file.
        if fs::symlink_metadata(&path).is_ok_and(|meta| meta.file_type().is_symlink()) {
            let _ = fs::remove_file(&temp);
            return Err(StoreError::Link {
                path: self.shown(name),
            });
        }
        fs::rename(&temp, &path).map_err(|e| {
            let _ = fs::remove_file(&temp);
            StoreError::io("cannot rename into", &self.shown(name), e)
        })
    }

    /// The verified bytes of the blob of `digest`; with `touch`, its last use is now.
    fn read_blob(&self, digest: &Digest, touch: bool) -> Result<Vec<u8>, StoreError> {
        let bytes = match self.dir("cannot read")? {
            Some(dir) => self.read_file_touching(&dir, &digest.hex(), touch)?,
            None => None,
        };
        let bytes = bytes.ok_or_else(|| StoreError::NotFound(digest.to_string()))?;
        crate::verified(digest, bytes)
    }

    fn read_sidecar(&self, digest: &Digest) -> Result<Sidecar, StoreError> {
        match self.dir("cannot read")? {
            Some(dir) => self.read_sidecar_in(&dir, digest),
            None => Err(self.missing_sidecar(digest)),
        }
    }

    fn read_sidecar_in(&self, dir: &Path, digest: &Digest) -> Result<Sidecar, StoreError> {
        let name = sidecar_name(digest);
        let bytes = self
            .read_file(dir, &name)?
            .ok_or_else(|| self.missing_sidecar(digest))?;
        Sidecar::from_json(&bytes).map_err(|e| e.in_sidecar_of(digest, self.shown(&name)))
    }

    fn missing_sidecar(&self, digest: &Digest) -> StoreError {
        StoreError::BadSidecar {
            digest: digest.to_string(),
            path: self.shown(&sidecar_name(digest)),
            reason: "missing".into(),
        }
    }

    /// Removes the blob and the sidecar of `digest` from `dir`; neither when either is a
    /// link.
    fn remove_in(&self, dir: &Path, digest: &Digest) -> Result<(), StoreError> {
        let names = [digest.hex(), sidecar_name(digest)];
        for name in &names {
            if fs::symlink_metadata(dir.join(name)).is_ok_and(|m| m.file_type().is_symlink()) {
                return Err(StoreError::Link {
                    path: self.shown(name),
                });
            }
        }
        for name in &names {
            self.remove_if_present(dir, name)?;
        }
        Ok(())
    }

    /// Removes `dir/name` (a link itself, never its target, if one appeared since it was
    /// checked); `false` when it was already gone (another gc, a removed artifact).
    fn remove_if_present(&self, dir: &Path, name: &str) -> Result<bool, StoreError> {
        match fs::remove_file(dir.join(name)) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(StoreError::io("cannot remove", &self.shown(name), e)),
        }
    }
    /// The sidecar of the blob of `digest` (`size` bytes) just renamed into `dir`: the first
    /// one is kept (its creation time) when it describes this content, else a new one is
    /// written.
    pub(crate) fn describe(
        &self,
        dir: &Path,
        digest: Digest,
        size: u64,
        kind: &str,
        tags: &[String],
    ) -> Result<Sidecar, StoreError> {
        match self.read_sidecar_in(dir, &digest) {
            Ok(sidecar) if sidecar.digest == digest && sidecar.size_bytes == size => Ok(sidecar),
            Err(e @ StoreError::Link { .. }) => Err(e),
            _ => {
                let sidecar = Sidecar::new(digest, size, kind, tags);
                self.write_atomically(dir, &sidecar_name(&digest), &sidecar.to_json())?;
                Ok(sidecar)
            }
        }
    }
}

impl Store for FileStore {
    fn put(&self, bytes: &[u8], kind: &str, tags: &[String]) -> Result<Sidecar, StoreError> {
        let dir = self.dir_for_writing()?;
        // Hashing and writing the temporary file run side by side: the name is known only
        // once the hash is, and the rename comes after both. The blob is always replaced,
        // which also repairs a corrupted copy of the same content.
        let (digest, temp) = std::thread::scope(|scope| {
            let writer = scope.spawn(|| self.write_temp(&dir, bytes));
            let digest = Digest::of(bytes);
            (
                digest,
                writer.join().expect("the writer thread does not panic"),
            )
        });
        self.commit(&dir, &temp?, &digest.hex())?;
        self.describe(&dir, digest, bytes.len() as u64, kind, tags)
    }

    fn put_hashed(
        &self,
        hashed: &Hashed<'_>,
        kind: &str,
        tags: &[String],
    ) -> Result<Sidecar, StoreError> {
        let dir = self.dir_for_writing()?;
        let (bytes, digest) = (hashed.bytes(), hashed.digest());
        // Writing a blob over an existing one costs far more than writing a new one (ext4
        // starts writing the new file out at once, to make the replacement safe): a blob
        // already holding these very bytes (the same result asked for twice) stays.
        if !self.holds(&dir, &digest.hex(), bytes) {
            let temp = self.write_temp(&dir, bytes)?;
            self.commit(&dir, &temp, &digest.hex())?;
        }
        self.describe(&dir, digest, bytes.len() as u64, kind, tags)
    }

    fn writer(&self) -> Result<Box<dyn BlobWriter + '_>, StoreError> {
        Ok(Box::new(FileBlobWriter::new(self)?))
    }

    /// Reads the blob, and bumps the artifact to most recently used: the blob's
    /// modification time is set to now (a failure to set it does not fail the read).
    fn get(&self, digest: &Digest) -> Result<Vec<u8>, StoreError> {
        self.read_blob(digest, true)
    }

    /// Reads only the window (one seek and one read), and bumps the artifact to most
    /// recently used as [`get`](Store::get) does.
    fn get_range(&self, digest: &Digest, range: Range<u64>) -> Result<Vec<u8>, StoreError> {
        let name = digest.hex();
        let opened = match self.dir("cannot read")? {
            Some(dir) => self.open_checked(&dir, &name)?,
            None => None,
        };
        let (mut file, meta) = opened.ok_or_else(|| StoreError::NotFound(digest.to_string()))?;
        if range.start > range.end || range.end > meta.len() {
            return Err(crate::out_of_range(digest, &range, meta.len()));
        }
        let read_error = |e| StoreError::io("cannot read", &self.shown(&name), e);
        file.seek(SeekFrom::Start(range.start))
            .map_err(read_error)?;
        let mut bytes = vec![0; (range.end - range.start) as usize];
        file.read_exact(&mut bytes).map_err(read_error)?;
        let _ = file.set_modified(SystemTime::now());
        Ok(bytes)
    }

    /// The default check, reading the blob without counting it as a use (checking the whole
    /// store must not make every artifact recently used).
    fn verify(&self, digest: &Digest) -> Result<Sidecar, StoreError> {
        let bytes = self.read_blob(digest, false)?;
        let sidecar = self.sidecar(digest)?;
        if sidecar.digest != *digest || sidecar.size_bytes != bytes.len() as u64 {
            return Err(StoreError::BadSidecar {
                digest: digest.to_string(),
                path: self.shown(&sidecar_name(digest)),
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

    fn list(&self) -> Result<Vec<Digest>, StoreError> {
        let Some(dir) = self.dir("cannot list")? else {
            return Ok(Vec::new());
        };
        let list_error = |e| StoreError::io("cannot list", &self.root.join(DIR), e);
        let mut digests = Vec::new();
        for entry in fs::read_dir(&dir).map_err(list_error)? {
            let entry = entry.map_err(list_error)?;
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
        match self.dir("cannot remove")? {
            Some(dir) => self.remove_in(&dir, digest),
            None => Ok(()),
        }
    }

    fn gc_keeping(
        &self,
        limits: &GcLimits,
        keep: &dyn Fn(&Digest) -> bool,
    ) -> Result<GcReport, StoreError> {
        let older_than = limits.older_than;
        let mut report = GcReport::default();
        let Some(dir) = self.dir("cannot list")? else {
            return Ok(report);
        };
        let list_error = |e| StoreError::io("cannot list", &self.root.join(DIR), e);
        // What cannot be handled is reported, once per path, and gc goes on.
        let mut skipped: Vec<(PathBuf, StoreError)> = Vec::new();
        let mut skip = |path: PathBuf, error: StoreError| {
            if !skipped.iter().any(|(p, _)| *p == path) {
                skipped.push((path, error));
            }
        };
        // The store's own entries, looked at without following links (`DirEntry::metadata`
        // does not follow them), before anything is removed.
        let mut entries = Vec::new();
        for entry in fs::read_dir(&dir).map_err(list_error)? {
            let entry = match entry {
                Ok(entry) => entry,
                Err(e) => {
                    // The listing itself broke: collect what was listed so far.
                    skip(self.root.join(DIR), list_error(e));
                    break;
                }
            };
            let Ok(name) = entry.file_name().into_string() else {
                continue; // not a name the store writes
            };
            let ours = name.starts_with(TEMP_PREFIX)
                || Digest::from_hex(name.strip_suffix(".json").unwrap_or(&name)).is_some();
            if !ours {
                continue;
            }
            match entry.metadata() {
                // Never followed, never removed: reported, and left for a person to look at.
                Ok(meta) if meta.file_type().is_symlink() => {
                    let path = self.shown(&name);
                    skip(path.clone(), StoreError::Link { path });
                }
                Ok(meta) => entries.push((name, meta)),
                // Renamed or removed since the listing (a writer at work, another gc).
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => skip(
                    self.shown(&name),
                    StoreError::io("cannot look at", &self.shown(&name), e),
                ),
            }
        }
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        let now = SystemTime::now();
        // The artifacts left after the age rule, for the limits on use.
        let mut candidates = Vec::new();
        for (name, meta) in entries {
            let age = meta
                .modified()
                .ok()
                .and_then(|t| now.duration_since(t).ok())
                .unwrap_or_default();
            // Leftovers of interrupted writes.
            if name.starts_with(TEMP_PREFIX) {
                if age >= TEMP_GRACE {
                    match self.remove_if_present(&dir, &name) {
                        Ok(removed) => report.temp_files += usize::from(removed),
                        Err(e) => skip(self.shown(&name), e),
                    }
                }
            // Sidecars whose blob is gone.
            } else if let Some(hex) = name.strip_suffix(".json")
                && let Some(digest) = Digest::from_hex(hex)
            {
                let blob_gone = matches!(
                    fs::symlink_metadata(dir.join(digest.hex())),
                    Err(e) if e.kind() == io::ErrorKind::NotFound
                );
                if blob_gone {
                    match self.remove_if_present(&dir, &name) {
                        Ok(removed) => report.orphans += usize::from(removed),
                        Err(e) => skip(self.shown(&name), e),
                    }
                }
            } else if let Some(digest) = Digest::from_hex(&name)
                && older_than.is_some_and(|limit| age >= limit)
                && !keep(&digest)
            {
                match self.remove_in(&dir, &digest) {
                    Ok(()) => report.removed.push(digest),
                    // A link as its sidecar: reported under the link's own path.
                    Err(StoreError::Link { path }) => {
                        skip(path.clone(), StoreError::Link { path });
                    }
                    Err(e) => skip(self.shown(&name), e),
                }
            } else if let Some(digest) = Digest::from_hex(&name)
                && limits.ranks()
                && meta.is_file()
            {
                candidates.push(Candidate {
                    digest,
                    size: meta.len(),
                    last_used: meta.modified().unwrap_or(now),
                });
            }
        }
        // Owner markers are neither counted nor evicted (see `GcLimits`); an artifact
        // whose sidecar cannot be read is counted as an artifact.
        candidates.retain(|c| {
            self.read_sidecar_in(&dir, &c.digest)
                .map_or(true, |s| s.kind != MARKER_KIND)
        });
        let (expired, evicted) = evict(candidates, limits, now, keep, |digest| {
            match self.remove_in(&dir, digest) {
                Ok(()) => true,
                Err(StoreError::Link { path }) => {
                    skip(path.clone(), StoreError::Link { path });
                    false
                }
                Err(e) => {
                    skip(self.shown(&digest.hex()), e);
                    false
                }
            }
        });
        report.expired = expired;
        report.evicted = evicted;
        report.removed.sort();
        skipped.sort_by(|a, b| a.0.cmp(&b.0));
        report.skipped = skipped
            .into_iter()
            .map(|(path, error)| GcSkipped {
                path,
                code: error.code(),
                reason: error.to_string(),
            })
            .collect();
        Ok(report)
    }
}

/// The sidecar's file name: `<hex>.json`.
/// How many bytes of an existing blob are read at a time to compare it with a put's.
const COMPARED_AT_ONCE: usize = 256 << 10;

fn sidecar_name(digest: &Digest) -> String {
    format!("{}.json", digest.hex())
}

/// `options` with `O_NOFOLLOW` where it is known (see [`O_NOFOLLOW`]).
fn no_follow(options: &mut OpenOptions) -> &mut OpenOptions {
    #[cfg(unix)]
    if O_NOFOLLOW != 0 {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.custom_flags(O_NOFOLLOW);
    }
    options
}

/// Whether the file opened at `path` (`after`) is the one checked there (`before`), or at
/// least not reached through a link. With `O_NOFOLLOW` the final name was no link, so it
/// is; without, a different device or inode is accepted only when `path` is now a regular
/// file with the opened identity (another writer renamed a new file into place).
#[cfg(unix)]
fn opened_what_was_checked(path: &Path, before: &Metadata, after: &Metadata) -> bool {
    use std::os::unix::fs::MetadataExt as _;
    let same = |a: &Metadata, b: &Metadata| a.dev() == b.dev() && a.ino() == b.ino();
    O_NOFOLLOW != 0
        || same(before, after)
        || fs::symlink_metadata(path).is_ok_and(|now| now.is_file() && same(&now, after))
}

/// Elsewhere only the check before opening is made (see [Links](FileStore#links)).
#[cfg(not(unix))]
fn opened_what_was_checked(_path: &Path, _before: &Metadata, _after: &Metadata) -> bool {
    true
}

/// A fresh temporary name nobody can predict:
/// `.tmp-<pid>-<nanos>-<counter>-<128 random bits>`. The random bits are two SipHash values,
/// each under keys `std` draws from the operating system's randomness
/// ([`RandomState`](std::collections::hash_map::RandomState)), of the time, the counter, an
/// address and the thread.
fn temp_name() -> String {
    use std::hash::{BuildHasher as _, Hash as _, Hasher as _};
    let count = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
    let nanos = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let local = 0u8;
    let random = [0u64, 1].map(|lane| {
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_u64(lane);
        hasher.write_u128(nanos);
        hasher.write_u64(count);
        hasher.write_usize((&raw const local).addr());
        std::thread::current().id().hash(&mut hasher);
        hasher.finish()
    });
    format!(
        "{TEMP_PREFIX}{}-{nanos}-{count}-{:016x}{:016x}",
        std::process::id(),
        random[0],
        random[1]
    )
}

fn not_a_folder() -> io::Error {
    io::Error::new(io::ErrorKind::NotADirectory, "not a folder")
}

fn not_a_regular_file() -> io::Error {
    io::Error::other("not a regular file")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temp_names_are_fresh_and_unpredictable() {
        let a = temp_name();
        let b = temp_name();
        assert!(a.starts_with(&format!("{TEMP_PREFIX}{}-", std::process::id())));
        assert_ne!(a, b);
        // 32 hex digits of random bits at the end, differing between two names even when
        // everything else were equal.
        let (ra, rb) = (&a[a.len() - 32..], &b[b.len() - 32..]);
        assert!(ra.bytes().all(|c| c.is_ascii_hexdigit()), "{a}");
        assert_ne!(ra, rb);
    }

    /// The numeric `O_NOFOLLOW` is right for this target: opening a link with it fails,
    /// opening its target does not.
    #[cfg(unix)]
    #[test]
    fn o_nofollow_refuses_a_link() {
        if O_NOFOLLOW == 0 {
            return;
        }
        let dir =
            std::env::temp_dir().join(format!("envelope-store-nofollow-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("target"), b"t").unwrap();
        std::os::unix::fs::symlink(dir.join("target"), dir.join("link")).unwrap();
        assert!(
            no_follow(OpenOptions::new().read(true))
                .open(dir.join("target"))
                .is_ok()
        );
        let err = no_follow(OpenOptions::new().read(true))
            .open(dir.join("link"))
            .unwrap_err();
        assert_ne!(err.kind(), io::ErrorKind::NotFound, "{err}");
        // Exclusive creation refuses the link too, and leaves its target alone.
        let err = no_follow(OpenOptions::new().write(true).create_new(true))
            .open(dir.join("link"))
            .unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::AlreadyExists, "{err}");
        assert_eq!(fs::read(dir.join("target")).unwrap(), b"t");
        fs::remove_dir_all(&dir).unwrap();
    }
}
