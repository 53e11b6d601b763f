use std::path::{Path, PathBuf};

use crate::Digest;

/// What can go wrong with a store. Every variant has a stable [`StoreError::code`]; classify
/// errors by it (or by the variant), never by the message text.
///
/// The text ([`Display`](std::fmt::Display)) may be sent to a remote client (the MCP proxy
/// and server pass it on): it names no path of the machine. A file below the store is named
/// by its place in the store (`sha256/<hex>`, `sha256/<hex>.json`, `sha256`), the root as
/// `the store's folder`; the full paths stay in the variants' fields and in
/// [`StoreError::detailed`], for local logs and the command line. Text the caller gave
/// (a malformed digest) is echoed up to [`MAX_ECHOED`] characters, then cut with `…`.
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
    #[error(
        "{} is not a digest (expected sha256: and 64 lower-case hex characters)",
        echoed(.0)
    )]
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
    #[error("the sidecar of {digest} ({}) is unreadable: {reason}", in_store(.path))]
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
    #[error("{action} {}: {source}", in_store(.path))]
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
        "{} is a symbolic link: the store does not follow links below its root \
         (remove it if it is not meant to be there)",
        in_store(.path)
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

    /// The text with the full paths (the root as it was given, or the S3 location), for the
    /// local log and the command line; [`Display`](std::fmt::Display) names a file by its
    /// place in the store only, so that the text can go to a client.
    ///
    /// ```rust
    /// use envelope_store::{FileStore, Store};
    ///
    /// let file = std::env::temp_dir()
    ///     .join(format!("envelope-store-doc-detailed-{}", std::process::id()));
    /// std::fs::write(&file, b"not a folder").unwrap();
    /// let err = FileStore::new(&file).put(b"x", "text/plain", &[]).unwrap_err();
    /// assert!(!err.to_string().contains(&*file.to_string_lossy()));
    /// assert!(err.detailed().contains(&*file.to_string_lossy()));
    /// std::fs::remove_file(&file).unwrap();
    /// ```
    pub fn detailed(&self) -> String {
        match self {
            StoreError::BadSidecar {
                digest,
                path,
                reason,
            } => format!(
                "the sidecar of {digest} ({}) is unreadable: {reason}",
                path.display()
            ),
            StoreError::Io {
                action,
                path,
                source,
            } => format!("{action} {}: {source}", path.display()),
            StoreError::Link { path } => format!(
                "{} is a symbolic link: the store does not follow links below its root \
                 (remove it if it is not meant to be there)",
                path.display()
            ),
            other => other.to_string(),
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

/// The most characters of a caller's text (a malformed digest) an error echoes; a whole
/// digest (71 characters) fits.
pub const MAX_ECHOED: usize = 80;

/// `text` quoted, cut to [`MAX_ECHOED`] characters with `…` when longer: how an error
/// shows what a caller gave.
pub fn echoed(text: &str) -> String {
    match text.char_indices().nth(MAX_ECHOED) {
        Some((cut, _)) => format!(
            "{:?} ({} characters)",
            format!("{}…", &text[..cut]),
            text.chars().count()
        ),
        None => format!("{text:?}"),
    }
}

/// A path of the store as a client may see it: its place below the root (`sha256`,
/// `sha256/<name>`, or a bare file name as given), or `the store's folder` for the root
/// and anything else. Never the root's own path (a server's folder, an S3 bucket).
fn in_store(path: &Path) -> String {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let parent = path.parent().and_then(Path::file_name);
    if parent.is_some_and(|p| p == DIR) {
        format!("{DIR}/{name}")
    } else if name == DIR {
        DIR.to_string()
    } else if path.is_relative() && path.components().count() == 1 {
        name
    } else {
        "the store's folder".to_string()
    }
}

/// The folder of blobs and sidecars below a store's root.
const DIR: &str = "sha256";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_text_names_no_path_and_detailed_does() {
        let root = Path::new("/srv/secret-place/store");
        let blob = root.join("sha256").join("ab".repeat(32));
        let io = StoreError::io("cannot read", &blob, std::io::Error::other("boom"));
        assert_eq!(
            io.to_string(),
            format!("cannot read sha256/{}: boom", "ab".repeat(32))
        );
        assert!(io.detailed().contains("/srv/secret-place/store/sha256/"));
        let at_root = StoreError::io("cannot create", root, std::io::Error::other("boom"));
        assert_eq!(
            at_root.to_string(),
            "cannot create the store's folder: boom"
        );
        let link = StoreError::Link {
            path: root.join("sha256"),
        };
        assert!(link.to_string().starts_with("sha256 is a symbolic link"));
        assert!(
            link.detailed()
                .starts_with("/srv/secret-place/store/sha256 is")
        );
        let sidecar = StoreError::BadSidecar {
            digest: "sha256:00".into(),
            path: PathBuf::from("s3://bucket/prefix/sha256/00.json"),
            reason: "missing".into(),
        };
        assert_eq!(
            sidecar.to_string(),
            "the sidecar of sha256:00 (sha256/00.json) is unreadable: missing"
        );
        for err in [io, at_root, link, sidecar] {
            let text = err.to_string();
            assert!(
                !text.contains("secret-place") && !text.contains("bucket"),
                "{text}"
            );
        }
    }

    #[test]
    fn a_long_malformed_digest_is_cut_in_the_message() {
        let long = format!("sha256:{}", "z".repeat(100_000));
        let err = long.parse::<Digest>().unwrap_err();
        let text = err.to_string();
        assert!(text.len() < 300, "{} bytes", text.len());
        assert!(
            text.contains("…\" (100007 characters) is not a digest"),
            "{text}"
        );
        assert!(text.starts_with("\"sha256:zzz"), "{text}");
        // Short ones are whole, multi-byte characters are never split.
        assert_eq!(
            "sha256:00".parse::<Digest>().unwrap_err().to_string(),
            "\"sha256:00\" is not a digest (expected sha256: and 64 lower-case hex characters)"
        );
        let wide = "é".repeat(200);
        let text = wide.parse::<Digest>().unwrap_err().to_string();
        assert!(
            text.starts_with(&format!("\"{}…\"", "é".repeat(MAX_ECHOED))),
            "{text}"
        );
    }
}
