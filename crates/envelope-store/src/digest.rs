//! `sha256:<64 lower-case hex>` digests.

use std::fmt;
use std::str::FromStr;

use sha2::{Digest as _, Sha256};

use crate::error::StoreError;

/// A SHA-256 content digest, the name of an artifact in a store.
///
/// Its text form is `sha256:` followed by 64 lower-case hex characters ([`Display`](fmt::Display),
/// also used by [`Debug`](fmt::Debug)). Parsing ([`FromStr`]) accepts only
/// `^sha256:[0-9a-f]{64}$` and refuses anything else with [`StoreError::InvalidDigest`]
/// (upper-case hex, another algorithm, a missing prefix, trailing characters), so a digest can
/// never name a path outside the store.
///
/// ```rust
/// use envelope_store::{Digest, StoreError};
///
/// // The digest of some bytes.
/// let digest = Digest::of(b"abc");
///
/// // Display: `sha256:<hex>`; `hex()` alone is the blob's file name in the store.
/// let text = digest.to_string();
/// assert_eq!(
///     text,
///     "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
/// );
/// assert_eq!(format!("sha256:{}", digest.hex()), text);
///
/// // Parsing the text gives the same digest back.
/// let parsed: Digest = text.parse()?;
/// assert_eq!(parsed, digest);
///
/// // Anything but the canonical form is refused.
/// let err = "SHA256:BA7816BF".parse::<Digest>().unwrap_err();
/// assert_eq!(err.code(), "store.invalid-digest");
/// # Ok::<(), StoreError>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Digest([u8; 32]);

impl Digest {
    /// The SHA-256 digest of `bytes`.
    pub fn of(bytes: &[u8]) -> Self {
        Digest(Sha256::digest(bytes).into())
    }

    /// The digest of the bytes `hasher` was fed.
    pub(crate) fn from_sha256(hasher: Sha256) -> Self {
        Digest(hasher.finalize().into())
    }

    /// The 64 lower-case hex characters, without the `sha256:` prefix: the file name of the
    /// blob in the store (`ROOT/sha256/<hex>`).
    pub fn hex(&self) -> String {
        let mut out = String::with_capacity(64);
        for b in self.0 {
            out.push(char::from(b"0123456789abcdef"[usize::from(b >> 4)]));
            out.push(char::from(b"0123456789abcdef"[usize::from(b & 0xF)]));
        }
        out
    }

    /// Parses the 64 lower-case hex characters alone (a file name in the store); `None` for
    /// anything else.
    pub(crate) fn from_hex(hex: &str) -> Option<Self> {
        let bytes = hex.as_bytes();
        if bytes.len() != 64 {
            return None;
        }
        let nibble = |c: u8| match c {
            b'0'..=b'9' => Some(c - b'0'),
            b'a'..=b'f' => Some(c - b'a' + 10),
            _ => None,
        };
        let mut out = [0u8; 32];
        for (i, pair) in bytes.chunks(2).enumerate() {
            out[i] = (nibble(pair[0])? << 4) | nibble(pair[1])?;
        }
        Some(Digest(out))
    }
}

impl FromStr for Digest {
    type Err = StoreError;
    fn from_str(text: &str) -> Result<Self, StoreError> {
        text.strip_prefix("sha256:")
            .and_then(Digest::from_hex)
            .ok_or_else(|| StoreError::InvalidDigest(text.to_string()))
    }
}

impl fmt::Display for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "sha256:{}", self.hex())
    }
}

impl fmt::Debug for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_canonical_digests_parse() {
        let d = Digest::of(b"abc");
        assert_eq!(
            d.to_string(),
            "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(d.to_string().parse::<Digest>().unwrap(), d);
        for bad in [
            "sha256:BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD",
            "sha256:ba7816bf",
            "sha256:../../../../etc/passwd",
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
            "sha512:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
            "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad\n",
            "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015a/",
        ] {
            assert!(bad.parse::<Digest>().is_err(), "{bad:?}");
        }
    }
}
