//! Limits for [`Store::gc_with`](crate::Store::gc_with), and the eviction order the stores
//! share.

use std::time::{Duration, SystemTime};

use crate::Digest;

/// What [`Store::gc_with`](crate::Store::gc_with) removes besides leftovers and orphans.
/// Every limit is off by default; [`GcLimits::new`] and the builder methods set them.
///
/// - `older_than`: artifacts whose blob was last written (a file store: or read) at least
///   that long ago, owner markers included — what [`Store::gc`](crate::Store::gc) takes;
/// - `idle`: a time to live since last use: artifacts not used for at least that long;
/// - `max_bytes`: the most blob bytes the store may hold after gc;
/// - `max_artifacts`: the most artifacts the store may hold after gc.
///
/// The caps are met by removing the least recently used artifacts first (ties: the smaller
/// digest first), after the idle ones. "Last use" is the blob's modification time in a
/// [`FileStore`](crate::FileStore), set by a put and refreshed by each
/// [`get`](crate::Store::get) (not by [`verify`](crate::Store::verify) nor by reading the
/// sidecar); in an `S3Store` it is the object's `LastModified`, the time the blob was last
/// uploaded: reads do not refresh it there.
///
/// Owner markers ([`MARKER_KIND`](crate::scoped::MARKER_KIND) artifacts, kept by
/// [`Scoped`](crate::Scoped)) are not counted by the caps and are not removed by `idle` nor
/// the caps, so they never keep an artifact alive nor take its place. A marker whose
/// artifact was evicted is left to the age rule (`older_than`), and grants nothing
/// meanwhile: reading an evicted artifact is "not found" for its owner too.
///
/// ```rust
/// use std::time::Duration;
/// use envelope_store::GcLimits;
///
/// let limits = GcLimits::new()
///     .idle(Some(Duration::from_secs(3600)))
///     .max_bytes(Some(1 << 30))
///     .max_artifacts(Some(10_000));
/// assert_eq!(limits.older_than, None);
/// assert_eq!(limits.max_artifacts, Some(10_000));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct GcLimits {
    /// Remove artifacts (owner markers included) last written at least this long ago.
    pub older_than: Option<Duration>,
    /// Remove artifacts not used for at least this long (a time to live since last use).
    pub idle: Option<Duration>,
    /// Remove the least recently used artifacts until the blobs take at most this many bytes.
    pub max_bytes: Option<u64>,
    /// Remove the least recently used artifacts until at most this many are left.
    pub max_artifacts: Option<usize>,
}

impl GcLimits {
    /// No limit: gc removes only leftovers and orphans.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets [`GcLimits::older_than`].
    pub fn older_than(mut self, older_than: Option<Duration>) -> Self {
        self.older_than = older_than;
        self
    }

    /// Sets [`GcLimits::idle`].
    pub fn idle(mut self, idle: Option<Duration>) -> Self {
        self.idle = idle;
        self
    }

    /// Sets [`GcLimits::max_bytes`].
    pub fn max_bytes(mut self, max_bytes: Option<u64>) -> Self {
        self.max_bytes = max_bytes;
        self
    }

    /// Sets [`GcLimits::max_artifacts`].
    pub fn max_artifacts(mut self, max_artifacts: Option<usize>) -> Self {
        self.max_artifacts = max_artifacts;
        self
    }

    /// Whether a limit that looks at last use is set (`idle`, `max_bytes`,
    /// `max_artifacts`): only then does gc rank the artifacts.
    pub(crate) fn ranks(&self) -> bool {
        self.idle.is_some() || self.max_bytes.is_some() || self.max_artifacts.is_some()
    }
}

/// An artifact as the limits see it.
pub(crate) struct Candidate {
    pub(crate) digest: Digest,
    /// The blob's length.
    pub(crate) size: u64,
    pub(crate) last_used: SystemTime,
}

/// Applies `idle` and the caps of `limits` to `candidates` (the store's artifacts, markers
/// left out): the idle ones first, then the least recently used until the caps hold.
/// `remove` removes one and says whether it did; one it could not remove still counts, and
/// the next goes instead. One that `keep` holds (an artifact a pending call still needs) is
/// never removed but still counts, so the next goes instead too. Returns the expired and
/// the evicted digests, each sorted.
pub(crate) fn evict(
    mut candidates: Vec<Candidate>,
    limits: &GcLimits,
    now: SystemTime,
    keep: &dyn Fn(&Digest) -> bool,
    mut remove: impl FnMut(&Digest) -> bool,
) -> (Vec<Digest>, Vec<Digest>) {
    candidates.sort_by(|a, b| {
        a.last_used
            .cmp(&b.last_used)
            .then_with(|| a.digest.cmp(&b.digest))
    });
    let mut count = candidates.len();
    let mut bytes: u64 = candidates.iter().map(|c| c.size).sum();
    let (mut expired, mut evicted) = (Vec::new(), Vec::new());
    for candidate in &candidates {
        let idle = now.duration_since(candidate.last_used).unwrap_or_default();
        let is_idle = limits.idle.is_some_and(|ttl| idle >= ttl);
        let over = limits.max_artifacts.is_some_and(|max| count > max)
            || limits.max_bytes.is_some_and(|max| bytes > max);
        if !is_idle && !over {
            // Sorted by last use: every later one is more recent, and the caps hold.
            break;
        }
        if !keep(&candidate.digest) && remove(&candidate.digest) {
            count -= 1;
            bytes -= candidate.size;
            match is_idle {
                true => expired.push(candidate.digest),
                false => evicted.push(candidate.digest),
            }
        }
    }
    expired.sort();
    evicted.sort();
    (expired, evicted)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(secs: u64) -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(secs)
    }

    #[test]
    fn idle_first_then_least_recently_used_until_the_caps_hold() {
        let d = |n: u8| Digest::of(&[n]);
        let candidates = (0..5u8)
            .map(|n| Candidate {
                digest: d(n),
                size: 10,
                last_used: at(100 + u64::from(n)),
            })
            .collect();
        let limits = GcLimits::new()
            .idle(Some(Duration::from_secs(50)))
            .max_artifacts(Some(2));
        // Now 150: d(0) (used at 100) is idle; 4 left, 2 more go, oldest first.
        let (expired, evicted) = evict(candidates, &limits, at(150), &|_| false, |_| true);
        assert_eq!(expired, vec![d(0)]);
        let mut want = vec![d(1), d(2)];
        want.sort();
        assert_eq!(evicted, want);
    }

    #[test]
    fn one_that_cannot_be_removed_is_passed_over() {
        let d = |n: u8| Digest::of(&[n]);
        let candidates = (0..3u8)
            .map(|n| Candidate {
                digest: d(n),
                size: 10,
                last_used: at(u64::from(n)),
            })
            .collect();
        let limits = GcLimits::new().max_bytes(Some(10));
        let (_, evicted) = evict(candidates, &limits, at(10), &|_| false, |x| *x != d(0));
        let mut want = vec![d(1), d(2)];
        want.sort();
        assert_eq!(evicted, want);
    }

    #[test]
    fn a_kept_one_stays_and_still_counts() {
        let d = |n: u8| Digest::of(&[n]);
        let candidates = (0..4u8)
            .map(|n| Candidate {
                digest: d(n),
                size: 10,
                last_used: at(u64::from(n)),
            })
            .collect();
        // d(0) is the least recently used, but pinned: d(1) and d(2) go in its place, and
        // the cap of 2 holds with it counted.
        let limits = GcLimits::new()
            .idle(Some(Duration::from_secs(1000)))
            .max_artifacts(Some(2));
        let (expired, evicted) = evict(candidates, &limits, at(1000), &|x| *x == d(0), |_| true);
        assert!(expired.is_empty());
        let mut want = vec![d(1), d(2)];
        want.sort();
        assert_eq!(evicted, want);
    }
}
