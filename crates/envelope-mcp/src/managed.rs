//! A store that manages itself while the proxy (or `envelope serve`) runs: `--ttl`,
//! `--max-store-bytes` and `--max-results` ([`GcLimits`]'s `idle`, `max_bytes`,
//! `max_artifacts`), least recently used results evicted first, never one a pending call
//! still needs.
//!
//! [`Managed`] wraps the unscoped store. It keeps a ledger in memory of the results the
//! store holds (size, last use, pins), so that keeping the caps after a put costs a few
//! map operations and the removal of the evicted files, not a listing of the store:
//!
//! - **after each put** the least recently used results that are not pinned go until the
//!   caps hold again, before the put returns, so a result is answered only once the store
//!   is within the caps (the result just put is never the one evicted by its own put);
//! - **a pending call** ([`PendingCall`]) pins every result it puts until it is dropped,
//!   which the proxy does once the answer has been handed to the client's connection: a
//!   pinned result is never evicted nor expired, but it counts against the caps (others go
//!   in its place). When pinned results alone are over a cap, the store is over it until
//!   they are let go; the caps are applied again then;
//! - **a sweeper thread** applies the idle TTL and the caps with the store's own notion of
//!   last use ([`Store::gc_keeping`], pinned results kept), then brings the ledger up to
//!   date with what the store holds (results put by other processes sharing it, results
//!   removed behind its back). It runs at start (before the first call), then every quarter
//!   of the TTL (between 50 ms and 30 s), or every 30 s without a TTL. It never holds the
//!   ledger while the store is listed: answers never wait for it.
//!
//! Owner markers ([`MARKER_KIND`], written by [`envelope_store::Scoped`]) are not results:
//! they are neither counted nor evicted here (as in [`GcLimits`]).
//!
//! Each eviction is logged (`store.evicted`, info) and counted in
//! [`Stats::record_evictions`] (`envelope_store_evictions_total` in `/metrics`).

use std::collections::HashMap;
use std::future::Future;
use std::ops::Range;
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::{Duration, SystemTime};

use envelope_store::scoped::MARKER_KIND;
use envelope_store::{Digest, GcLimits, GcReport, Hashed, Sidecar, Store, StoreError};

use crate::stats::{Stats, log};

/// The unscoped store with its limits applied while the process runs (see the
/// [module documentation](self)).
pub struct Managed {
    inner: Arc<dyn Store>,
    limits: GcLimits,
    stats: Arc<Stats>,
    ledger: Mutex<Ledger>,
}

impl std::fmt::Debug for Managed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Managed")
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

/// What the ledger knows of one result.
#[derive(Clone, Copy, Debug)]
struct Entry {
    size: u64,
    last_used: SystemTime,
    /// Pending calls that still need it.
    pins: u32,
}

/// The results the store holds, as far as this process knows.
#[derive(Debug, Default)]
struct Ledger {
    entries: HashMap<Digest, Entry>,
    bytes: u64,
}

impl Ledger {
    /// Records a use (a put or a read) of `digest` now; `size` when it is known (a put).
    fn touch(&mut self, digest: Digest, size: Option<u64>, now: SystemTime) {
        match self.entries.get_mut(&digest) {
            Some(entry) => entry.last_used = entry.last_used.max(now),
            None => {
                let Some(size) = size else { return };
                self.bytes += size;
                self.entries.insert(
                    digest,
                    Entry {
                        size,
                        last_used: now,
                        pins: 0,
                    },
                );
            }
        }
    }

    fn forget(&mut self, digest: &Digest) {
        if let Some(entry) = self.entries.remove(digest) {
            self.bytes -= entry.size;
        }
    }

    fn over(&self, limits: &GcLimits) -> bool {
        limits.max_artifacts.is_some_and(|m| self.entries.len() > m)
            || limits.max_bytes.is_some_and(|m| self.bytes > m)
    }

    /// The least recently used result that is not pinned and not `except` (ties: the
    /// smaller digest, as [`Store::gc_with`] orders them). A scan: a few microseconds for
    /// ten thousand results, and only when the store is over a cap.
    fn victim(&self, except: Option<&Digest>) -> Option<Digest> {
        self.entries
            .iter()
            .filter(|(d, e)| e.pins == 0 && Some(*d) != except)
            .min_by(|a, b| a.1.last_used.cmp(&b.1.last_used).then(a.0.cmp(b.0)))
            .map(|(d, _)| *d)
    }

    fn pinned(&self, digest: &Digest) -> bool {
        self.entries.get(digest).is_some_and(|e| e.pins > 0)
    }
}

impl Managed {
    /// `inner` (the unscoped store) with `limits` applied while running; counts evictions in
    /// `stats`. Applies them once now (the store may hold more than the caps from an
    /// earlier run), then starts the sweeper thread, which ends with the last reference to
    /// the returned store.
    ///
    /// # Errors
    ///
    /// Those of [`Store::gc_keeping`] and [`Store::list`] on the first sweep (the store
    /// cannot be listed).
    pub fn start(
        inner: Arc<dyn Store>,
        limits: GcLimits,
        stats: Arc<Stats>,
    ) -> Result<Arc<Managed>, StoreError> {
        let managed = Arc::new(Managed {
            inner,
            limits,
            stats,
            ledger: Mutex::new(Ledger::default()),
        });
        managed.sweep()?;
        let every = managed.sweep_interval();
        let weak = Arc::downgrade(&managed);
        let spawned = std::thread::Builder::new()
            .name("envelope-store-gc".into())
            .spawn(move || sweeper(weak, every));
        if let Err(e) = spawned {
            log::warn("store.sweeper_failed", &[("error", e.to_string().into())]);
        }
        Ok(managed)
    }

    /// The limits applied.
    pub fn limits(&self) -> &GcLimits {
        &self.limits
    }

    /// The store under the limits.
    pub fn inner(&self) -> &Arc<dyn Store> {
        &self.inner
    }

    /// A pending call: the results put through [`PendingCall::store`] are pinned until it
    /// is dropped.
    pub fn call(self: &Arc<Self>) -> PendingCall {
        PendingCall {
            managed: self.clone(),
            pins: Arc::new(Mutex::new(Some(Vec::new()))),
        }
    }

    /// Runs `future` as one pending call (a task-local [`PendingCall`]): the results put
    /// meanwhile through [`Managed::current`] are pinned until `future` is done or
    /// dropped (`envelope serve` wraps each request's answer, sending included).
    pub async fn pending<F: Future>(self: &Arc<Self>, future: F) -> F::Output {
        let call = self.call();
        CURRENT.scope(call.pins.clone(), future).await
    }

    /// The store to put a result through: the task's pending call's (see
    /// [`Managed::pending`]) when there is one, else this store.
    pub fn current(self: &Arc<Self>) -> Arc<dyn Store> {
        match CURRENT.try_with(Arc::clone) {
            Ok(pins) => Arc::new(CallStore {
                managed: self.clone(),
                pins,
            }),
            Err(_) => self.clone(),
        }
    }

    fn ledger(&self) -> MutexGuard<'_, Ledger> {
        self.ledger.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// How often the sweeper runs: a quarter of the TTL (so a result is gone at most a
    /// quarter late), between 50 ms and 30 s; 30 s without a TTL.
    fn sweep_interval(&self) -> Duration {
        self.limits.idle.map_or(Duration::from_secs(30), |ttl| {
            (ttl / 4).clamp(Duration::from_millis(50), Duration::from_secs(30))
        })
    }

    /// Records a put of `sidecar` (pinned for `pins` when given) and evicts until the caps
    /// hold, the result just put excepted. A marker is not a result: left alone.
    fn after_put(&self, sidecar: &Sidecar, pins: Option<&Pins>) {
        if sidecar.kind == MARKER_KIND {
            return;
        }
        let mut ledger = self.ledger();
        ledger.touch(sidecar.digest, Some(sidecar.size_bytes), SystemTime::now());
        if let Some(pins) = pins {
            let mut pins = pins.lock().unwrap_or_else(|e| e.into_inner());
            // A call already answered pins nothing more (its store outlived it).
            if let Some(pinned) = pins.as_mut()
                && let Some(entry) = ledger.entries.get_mut(&sidecar.digest)
            {
                entry.pins += 1;
                pinned.push(sidecar.digest);
            }
        }
        self.enforce(&mut ledger, Some(&sidecar.digest));
    }

    /// Evicts the least recently used results that are not pinned (nor `except`) until the
    /// caps hold or none is left to evict. Under the ledger's lock, so that two puts never
    /// pick the same victim nor miss each other's.
    fn enforce(&self, ledger: &mut Ledger, except: Option<&Digest>) {
        let mut evicted = 0;
        while ledger.over(&self.limits) {
            let Some(victim) = ledger.victim(except) else {
                break; // only pinned ones are left: over until they are let go
            };
            ledger.forget(&victim);
            match self.inner.remove(&victim) {
                Ok(()) => {
                    evicted += 1;
                    log::info(
                        "store.evicted",
                        &[
                            ("digest", victim.to_string().into()),
                            ("reason", "evicted".into()),
                            ("results", ledger.entries.len().into()),
                            ("bytes", ledger.bytes.into()),
                        ],
                    );
                }
                // Left to the next sweep, which finds it again if it is still there.
                Err(e) => log::warn(
                    "store.evict_failed",
                    &[
                        ("digest", victim.to_string().into()),
                        ("code", e.code().into()),
                        ("error", e.detailed().into()),
                    ],
                ),
            }
        }
        self.stats.record_evictions("evicted", evicted);
    }

    /// Lets go of the results a call pinned, and applies the caps again (they may have been
    /// over for the pins).
    fn release(&self, pinned: Vec<Digest>) {
        if pinned.is_empty() {
            return;
        }
        let mut ledger = self.ledger();
        for digest in &pinned {
            if let Some(entry) = ledger.entries.get_mut(digest) {
                entry.pins = entry.pins.saturating_sub(1);
            }
        }
        self.enforce(&mut ledger, None);
    }

    /// The store's own gc with the limits, pinned results kept; then the ledger learns
    /// what the store holds. The ledger is locked only to look at a pin and to update it.
    pub fn sweep(&self) -> Result<GcReport, StoreError> {
        let started = SystemTime::now();
        let keep = |digest: &Digest| self.ledger().pinned(digest);
        let report = self.inner.gc_keeping(&self.limits, &keep)?;
        for (reason, digests) in [("expired", &report.expired), ("evicted", &report.evicted)] {
            for digest in digests {
                log::info(
                    "store.evicted",
                    &[
                        ("digest", digest.to_string().into()),
                        ("reason", reason.into()),
                    ],
                );
            }
            self.stats.record_evictions(reason, digests.len() as u64);
        }
        let listed = self.inner.list()?;
        // Sidecars of results this process has not seen yet (put by another process, or
        // before it started), read without holding the ledger.
        let unknown: Vec<Digest> = {
            let ledger = self.ledger();
            listed
                .iter()
                .filter(|d| !ledger.entries.contains_key(d))
                .copied()
                .collect()
        };
        let found: Vec<Sidecar> = unknown
            .iter()
            .filter_map(|d| self.inner.sidecar(d).ok())
            .filter(|s| s.kind != MARKER_KIND)
            .collect();
        let mut ledger = self.ledger();
        // Gone from the store: forgotten, unless used since the listing began (a put racing
        // the sweep) or pinned.
        let gone: Vec<Digest> = ledger
            .entries
            .iter()
            .filter(|(d, e)| {
                e.pins == 0 && e.last_used < started && listed.binary_search(d).is_err()
            })
            .map(|(d, _)| *d)
            .collect();
        for digest in &gone {
            ledger.forget(digest);
        }
        // Last use unknown: taken as now, so that nobody else's result is expired early
        // by this process; the store's own gc above orders them by their real last use.
        for sidecar in found {
            ledger.touch(sidecar.digest, Some(sidecar.size_bytes), started);
        }
        self.enforce(&mut ledger, None);
        Ok(report)
    }
}

/// Runs [`Managed::sweep`] every `every` while the store is alive.
fn sweeper(managed: Weak<Managed>, every: Duration) {
    loop {
        std::thread::sleep(every);
        let Some(managed) = managed.upgrade() else {
            return;
        };
        if let Err(e) = managed.sweep() {
            log::warn(
                "store.sweep_failed",
                &[("code", e.code().into()), ("error", e.detailed().into())],
            );
        }
    }
}

/// The digests one pending call pinned; `None` once it was let go.
type Pins = Mutex<Option<Vec<Digest>>>;

tokio::task_local! {
    /// The pins of the pending call the task runs (see [`Managed::pending`]).
    static CURRENT: Arc<Pins>;
}

/// One call whose answer is not sent yet: what it puts through [`PendingCall::store`] is
/// pinned until it is dropped.
#[derive(Debug)]
pub struct PendingCall {
    managed: Arc<Managed>,
    pins: Arc<Pins>,
}

impl PendingCall {
    /// The store for this call's puts (the unscoped store: wrap it in
    /// [`envelope_store::Scoped`] for an owner, so that its markers go through it too).
    pub fn store(&self) -> Arc<dyn Store> {
        Arc::new(CallStore {
            managed: self.managed.clone(),
            pins: self.pins.clone(),
        })
    }

    /// How many results this call holds pinned.
    pub fn pinned(&self) -> usize {
        let pins = self.pins.lock().unwrap_or_else(|e| e.into_inner());
        pins.as_ref().map_or(0, Vec::len)
    }
}

impl Drop for PendingCall {
    fn drop(&mut self) {
        let pinned = self
            .pins
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
            .unwrap_or_default();
        self.managed.release(pinned);
    }
}

/// A pending call's view of the store: its puts are pinned.
struct CallStore {
    managed: Arc<Managed>,
    pins: Arc<Pins>,
}

impl Store for Managed {
    fn put(&self, bytes: &[u8], kind: &str, tags: &[String]) -> Result<Sidecar, StoreError> {
        let sidecar = self.inner.put(bytes, kind, tags)?;
        self.after_put(&sidecar, None);
        Ok(sidecar)
    }

    fn put_hashed(
        &self,
        hashed: &Hashed<'_>,
        kind: &str,
        tags: &[String],
    ) -> Result<Sidecar, StoreError> {
        let sidecar = self.inner.put_hashed(hashed, kind, tags)?;
        self.after_put(&sidecar, None);
        Ok(sidecar)
    }

    /// A read is a use: the result becomes the most recently used.
    fn get(&self, digest: &Digest) -> Result<Vec<u8>, StoreError> {
        let bytes = self.inner.get(digest)?;
        self.ledger().touch(*digest, None, SystemTime::now());
        Ok(bytes)
    }

    /// A window read is a use too.
    fn get_range(&self, digest: &Digest, range: Range<u64>) -> Result<Vec<u8>, StoreError> {
        let bytes = self.inner.get_range(digest, range)?;
        self.ledger().touch(*digest, None, SystemTime::now());
        Ok(bytes)
    }

    fn verify(&self, digest: &Digest) -> Result<Sidecar, StoreError> {
        self.inner.verify(digest)
    }

    fn list(&self) -> Result<Vec<Digest>, StoreError> {
        self.inner.list()
    }

    fn sidecar(&self, digest: &Digest) -> Result<Sidecar, StoreError> {
        self.inner.sidecar(digest)
    }

    fn remove(&self, digest: &Digest) -> Result<(), StoreError> {
        self.inner.remove(digest)?;
        self.ledger().forget(digest);
        Ok(())
    }

    fn gc_keeping(
        &self,
        limits: &GcLimits,
        keep: &dyn Fn(&Digest) -> bool,
    ) -> Result<GcReport, StoreError> {
        let pinned = |d: &Digest| keep(d) || self.ledger().pinned(d);
        self.inner.gc_keeping(limits, &pinned)
    }
}

impl Store for CallStore {
    fn put(&self, bytes: &[u8], kind: &str, tags: &[String]) -> Result<Sidecar, StoreError> {
        let sidecar = self.managed.inner.put(bytes, kind, tags)?;
        self.managed.after_put(&sidecar, Some(&self.pins));
        Ok(sidecar)
    }

    fn put_hashed(
        &self,
        hashed: &Hashed<'_>,
        kind: &str,
        tags: &[String],
    ) -> Result<Sidecar, StoreError> {
        let sidecar = self.managed.inner.put_hashed(hashed, kind, tags)?;
        self.managed.after_put(&sidecar, Some(&self.pins));
        Ok(sidecar)
    }

    fn get(&self, digest: &Digest) -> Result<Vec<u8>, StoreError> {
        self.managed.get(digest)
    }

    fn get_range(&self, digest: &Digest, range: Range<u64>) -> Result<Vec<u8>, StoreError> {
        self.managed.get_range(digest, range)
    }

    fn verify(&self, digest: &Digest) -> Result<Sidecar, StoreError> {
        self.managed.verify(digest)
    }

    fn list(&self) -> Result<Vec<Digest>, StoreError> {
        self.managed.list()
    }

    fn sidecar(&self, digest: &Digest) -> Result<Sidecar, StoreError> {
        self.managed.sidecar(digest)
    }

    fn remove(&self, digest: &Digest) -> Result<(), StoreError> {
        self.managed.remove(digest)
    }

    fn gc_keeping(
        &self,
        limits: &GcLimits,
        keep: &dyn Fn(&Digest) -> bool,
    ) -> Result<GcReport, StoreError> {
        self.managed.gc_keeping(limits, keep)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use envelope_store::FileStore;

    fn store(name: &str, limits: GcLimits) -> (Arc<Managed>, std::path::PathBuf) {
        let root = std::env::temp_dir().join(format!(
            "envelope-mcp-managed-{name}-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&root);
        let inner: Arc<dyn Store> = Arc::new(FileStore::new(&root));
        let managed = Managed::start(inner, limits, Arc::new(Stats::default())).unwrap();
        (managed, root)
    }

    fn results(managed: &Managed) -> usize {
        managed.inner.list().unwrap().len()
    }

    #[test]
    fn a_put_keeps_the_cap_least_recently_used_first() {
        let (managed, root) = store("cap", GcLimits::new().max_artifacts(Some(2)));
        let a = managed.put(b"a", "text/plain", &[]).unwrap().digest;
        let b = managed.put(b"b", "text/plain", &[]).unwrap().digest;
        managed.get(&a).unwrap(); // a is now more recent than b
        let c = managed.put(b"c", "text/plain", &[]).unwrap().digest;
        let mut want = vec![a, c];
        want.sort();
        assert_eq!(managed.inner.list().unwrap(), want);
        assert!(managed.get(&b).is_err());
        assert_eq!(managed.stats.evictions_of("evicted"), 1);
        std::fs::remove_dir_all(root).ok();
    }

    #[test]
    fn a_pinned_result_over_the_cap_stays_until_its_call_is_done() {
        let (managed, root) = store("pin", GcLimits::new().max_bytes(Some(10)));
        let other = managed
            .put(b"0123456789", "text/plain", &[])
            .unwrap()
            .digest;
        let call = managed.call();
        let big = call
            .store()
            .put(&[b'x'; 20], "text/plain", &[])
            .unwrap()
            .digest;
        // Over the cap by itself, but pinned: kept, by the put and by a sweep; the older
        // unpinned one went in its place (the pinned one counts against the cap).
        assert_eq!(call.pinned(), 1);
        managed.sweep().unwrap();
        assert!(managed.inner.get(&big).is_ok());
        assert_eq!(managed.get(&other).unwrap_err().code(), "store.not-found");
        assert_eq!(managed.stats.evictions_of("evicted"), 1);
        drop(call);
        // Let go: the cap holds again.
        assert_eq!(results(&managed), 0);
        std::fs::remove_dir_all(root).ok();
    }

    #[test]
    fn the_sweep_expires_idle_results_but_not_pinned_ones() {
        let ttl = Duration::from_millis(200);
        let (managed, root) = store("ttl", GcLimits::new().idle(Some(ttl)));
        let call = managed.call();
        let pinned = call
            .store()
            .put(b"pinned", "text/plain", &[])
            .unwrap()
            .digest;
        let idle = managed.put(b"idle", "text/plain", &[]).unwrap().digest;
        std::thread::sleep(ttl + Duration::from_millis(50));
        // The sweeper thread may have been first: either way it is gone once.
        managed.sweep().unwrap();
        assert_eq!(managed.inner.list().unwrap(), vec![pinned]);
        assert_eq!(managed.get(&idle).unwrap_err().code(), "store.not-found");
        assert_eq!(managed.stats.evictions_of("expired"), 1);
        drop(call);
        std::fs::remove_dir_all(root).ok();
    }

    #[test]
    fn owner_markers_are_not_results() {
        let (managed, root) = store("markers", GcLimits::new().max_artifacts(Some(1)));
        let scoped = envelope_store::Scoped::new(managed.clone(), Some("alice".into()));
        let first = scoped.put(b"first", "text/plain", &[]).unwrap().digest;
        let second = scoped.put(b"second", "text/plain", &[]).unwrap().digest;
        assert_eq!(scoped.get(&first).unwrap_err().code(), "store.not-found");
        assert_eq!(scoped.get(&second).unwrap(), b"second");
        // One result and the two markers (markers are left to the age rule).
        assert_eq!(results(&managed), 3);
        std::fs::remove_dir_all(root).ok();
    }

    #[tokio::test]
    async fn a_task_local_pending_call_pins_what_it_puts() {
        let (managed, root) = store("task", GcLimits::new().max_artifacts(Some(0)));
        let inside = managed
            .pending(async {
                let digest = managed
                    .current()
                    .put(b"kept", "text/plain", &[])
                    .unwrap()
                    .digest;
                assert_eq!(results(&managed), 1, "pinned while the call is pending");
                digest
            })
            .await;
        assert!(
            managed.inner.get(&inside).is_err(),
            "let go once the call is done"
        );
        std::fs::remove_dir_all(root).ok();
    }
}
