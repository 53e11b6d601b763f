//! Bytes hashed ahead of a put ([`Hashed`], [`Store::put_hashed`](crate::Store::put_hashed)).

use sha2::{Digest as _, Sha256};

use crate::Digest;

/// Pieces hashed between two looks at whether to go on.
const PIECE: usize = 1 << 20;

/// Bytes and their digest, computed from them: the only way to make one is to hash the
/// bytes, so a [`Store::put_hashed`](crate::Store::put_hashed) of it stores them under
/// their true digest. It lets a caller hash while doing something else (the MCP proxy
/// hashes a large result on one core while it redacts the result on the other).
///
/// ```rust
/// use envelope_store::{Digest, Hashed};
///
/// let hashed = Hashed::of(b"abc");
/// assert_eq!(hashed.digest(), Digest::of(b"abc"));
/// assert_eq!(hashed.bytes(), b"abc");
///
/// // Given up halfway: no digest.
/// let big = vec![0u8; 3 << 20];
/// assert!(Hashed::of_while(&big, || false).is_none());
/// assert!(Hashed::of_while(&big, || true).is_some());
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Hashed<'a> {
    bytes: &'a [u8],
    digest: Digest,
}

impl<'a> Hashed<'a> {
    /// Hashes `bytes`.
    pub fn of(bytes: &'a [u8]) -> Self {
        Hashed {
            bytes,
            digest: Digest::of(bytes),
        }
    }

    /// Hashes `bytes` a megabyte at a time, asking `go_on` before each piece after the
    /// first: `None` as soon as it says no (the hashing was not needed after all).
    pub fn of_while(bytes: &'a [u8], go_on: impl Fn() -> bool) -> Option<Self> {
        let mut hasher = Sha256::new();
        for (i, piece) in bytes.chunks(PIECE).enumerate() {
            if i > 0 && !go_on() {
                return None;
            }
            hasher.update(piece);
        }
        Some(Hashed {
            bytes,
            digest: Digest::from_sha256(hasher),
        })
    }

    /// The bytes.
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// Their digest.
    pub fn digest(&self) -> Digest {
        self.digest
    }
}
