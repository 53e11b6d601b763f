use std::path::PathBuf;

/// What can go wrong with a store. Every variant has a stable [`StoreError::code`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    #[error("{0:?} is not a digest (expected sha256: and 64 lower-case hex characters)")]
    InvalidDigest(String),
    #[error("{0} is not in the store")]
    NotFound(String),
    #[error("{digest} is corrupted: its bytes hash to {actual}")]
    Corrupted { digest: String, actual: String },
    #[error("the sidecar of {digest} ({path}) is unreadable: {reason}")]
    BadSidecar {
        digest: String,
        path: PathBuf,
        reason: String,
    },
    #[error("{action} {path}: {source}")]
    Io {
        action: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("store backend: {0}")]
    Backend(String),
}

impl StoreError {
    pub fn code(&self) -> &'static str {
        match self {
            StoreError::InvalidDigest(_) => "invalid_digest",
            StoreError::NotFound(_) => "not_found",
            StoreError::Corrupted { .. } => "corrupted",
            StoreError::BadSidecar { .. } => "bad_sidecar",
            StoreError::Io { .. } => "io",
            StoreError::Backend(_) => "backend",
        }
    }

    pub(crate) fn io(action: &'static str, path: &std::path::Path, source: std::io::Error) -> Self {
        StoreError::Io {
            action,
            path: path.to_path_buf(),
            source,
        }
    }
}
