use std::path::PathBuf;

use crate::Digest;

/// What can go wrong with a store. Every variant has a stable [`StoreError::code`]; classify
/// errors by it (or by the variant), never by the message text.
///
/// ```rust
/// use envelope_store::{Digest, StoreError};
///
/// let err = "sha256:not-hex".parse::<Digest>().unwrap_err();
/// assert!(matches!(err, StoreError::InvalidDigest(_)));
/// assert_eq!(err.code(), "store.invalid-digest");
/// assert_eq!(
///     err.to_string(),
///     "\"sha256:not-hex\" is not a digest (expected sha256: and 64 lower-case hex characters)"
/// );
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// A text that should name an artifact is not `sha256:` followed by 64 lower-case hex
    /// characters. Holds the text as given. Code `store.invalid-digest`.
    #[error("{0:?} is not a digest (expected sha256: and 64 lower-case hex characters)")]
    InvalidDigest(String),
    /// The store holds no blob for this digest (held as `sha256:<hex>`). Code `store.not-found`.
    #[error("{0} is not in the store")]
    NotFound(String),
    /// The stored blob no longer hashes to its digest: it was changed or torn after it was
    /// written. Code `store.corrupted`.
    #[error("{digest} is corrupted: its bytes hash to {actual}")]
    Corrupted {
        /// The digest the blob is stored under (`sha256:<hex>`).
        digest: String,
        /// The digest of the bytes actually read (`sha256:<hex>`).
        actual: String,
    },
    /// The sidecar of an artifact is missing, is not a valid sidecar, or describes other
    /// content than the blob (another digest or size). Code `store.bad-sidecar`.
    #[error("the sidecar of {digest} ({path}) is unreadable: {reason}")]
    BadSidecar {
        /// The artifact the sidecar belongs to (`sha256:<hex>`).
        digest: String,
        /// Where the sidecar is: a file path for a [`FileStore`](crate::FileStore),
        /// `s3://BUCKET/PREFIX/sha256/<hex>.json` for an S3 store, or `<hex>.json` when
        /// [`Store::verify`](crate::Store::verify) finds it inconsistent with the blob.
        path: PathBuf,
        /// What is wrong with it, in English (`missing`, a JSON syntax error with its line
        /// and column, `kind is missing or not a string`, ...).
        reason: String,
    },
    /// A sidecar's text, read without knowing which artifact or file it belongs to, is not
    /// a valid sidecar: not JSON, a required field missing or of the wrong type, or a
    /// malformed digest. Returned by [`Sidecar::from_json`](crate::Sidecar::from_json); the
    /// stores report the same problem as [`StoreError::BadSidecar`], which names the
    /// artifact and the sidecar's location. Code `store.malformed-sidecar`.
    #[error("not a valid sidecar: {reason}")]
    MalformedSidecar {
        /// What is wrong with it, in English (the same text `BadSidecar` carries).
        reason: String,
    },
    /// A file-system operation of a [`FileStore`](crate::FileStore) failed, or found
    /// something other than a folder or a regular file where the store keeps one (the
    /// source then says `not a folder` or `not a regular file`). Code `store.io`.
    #[error("{action} {path}: {source}")]
    Io {
        /// What was attempted (`cannot create`, `cannot write`, `cannot rename into`,
        /// `cannot read`, `cannot list`, `cannot remove`).
        action: &'static str,
        /// The file or folder it was attempted on.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// A path below the root of a [`FileStore`](crate::FileStore) (`ROOT/sha256`, a blob,
    /// a sidecar or a temporary file) is a symbolic link. The store never follows, reads,
    /// writes through, replaces or deletes a link below its root: the operation is refused
    /// and the link and its target are left alone (see
    /// [`FileStore`](crate::FileStore#links)). The root itself may be a link. Code `store.link`.
    #[error(
        "{path} is a symbolic link: the store does not follow links below its root \
         (remove it if it is not meant to be there)"
    )]
    Link {
        /// The link, under the root as it was given.
        path: PathBuf,
    },
    /// The store could not be opened or its backend failed: an `s3://` location in a build
    /// without the `s3` feature, a malformed S3 URL, or an S3 request that failed (the text
    /// names the bucket, the action and the cause). Code `store.backend`.
    #[error("store backend: {0}")]
    Backend(String),
}

impl StoreError {
    /// Every code [`StoreError::code`] returns.
    pub const CODES: &'static [&'static str] = &[
        "store.invalid-digest",
        "store.not-found",
        "store.corrupted",
        "store.bad-sidecar",
        "store.malformed-sidecar",
        "store.io",
        "store.link",
        "store.backend",
    ];

    /// The stable, machine-readable name of the error, dotted like every id the tool prints
    /// (docs/errors.md): `store.invalid-digest`, `store.not-found`, `store.corrupted`,
    /// `store.bad-sidecar`, `store.malformed-sidecar`, `store.io`, `store.link` or
    /// `store.backend` (all in [`StoreError::CODES`]).
    ///
    /// ```rust
    /// use envelope_store::{FileStore, Store, Digest};
    ///
    /// let root = std::env::temp_dir()
    ///     .join(format!("envelope-store-doc-code-{}", std::process::id()));
    /// let store = FileStore::new(&root);
    /// let err = store.get(&Digest::of(b"never stored")).unwrap_err();
    /// assert_eq!(err.code(), "store.not-found");
    /// ```
    pub fn code(&self) -> &'static str {
        match self {
            StoreError::InvalidDigest(_) => "store.invalid-digest",
            StoreError::NotFound(_) => "store.not-found",
            StoreError::Corrupted { .. } => "store.corrupted",
            StoreError::BadSidecar { .. } => "store.bad-sidecar",
            StoreError::MalformedSidecar { .. } => "store.malformed-sidecar",
            StoreError::Io { .. } => "store.io",
            StoreError::Link { .. } => "store.link",
            StoreError::Backend(_) => "store.backend",
        }
    }

    pub(crate) fn io(action: &'static str, path: &std::path::Path, source: std::io::Error) -> Self {
        StoreError::Io {
            action,
            path: path.to_path_buf(),
            source,
        }
    }

    /// An error of [`Sidecar::from_json`](crate::Sidecar::from_json) as a store reports it:
    /// a malformed sidecar becomes [`StoreError::BadSidecar`] naming the artifact and where
    /// its sidecar is, with the same reason; other errors are unchanged.
    pub(crate) fn in_sidecar_of(self, digest: &Digest, path: impl Into<PathBuf>) -> Self {
        match self {
            StoreError::MalformedSidecar { reason } => StoreError::BadSidecar {
                digest: digest.to_string(),
                path: path.into(),
                reason,
            },
            other => other,
        }
    }
}
