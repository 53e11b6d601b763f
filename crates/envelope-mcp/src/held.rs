//! A stored result's bytes, held once and shared by the threads that index them after the
//! answer (the paging index, the catalog), then freed by the last of them: the relay's
//! frame of the upstream's answer with the result's range in it, or the redacted copy
//! shaping stored. Reading the result back from the store instead would hold it twice.

use std::ops::Range;
use std::sync::Arc;

/// The bytes `bytes[range]` of a stored result (see the [module documentation](self)).
#[derive(Clone, PartialEq, Eq)]
pub struct Held {
    bytes: Vec<u8>,
    range: Range<usize>,
}

impl Held {
    /// The result `bytes[range]`, shared.
    ///
    /// # Panics
    ///
    /// When `range` is not within `bytes`.
    pub fn new(bytes: Vec<u8>, range: Range<usize>) -> Arc<Held> {
        assert!(
            range.start <= range.end && range.end <= bytes.len(),
            "a held range within its bytes"
        );
        Arc::new(Held { bytes, range })
    }

    /// The result's bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes[self.range.clone()]
    }
}

impl std::fmt::Debug for Held {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Held({} bytes)", self.range.len())
    }
}
