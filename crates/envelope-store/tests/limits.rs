//! gc's limits on use (`GcLimits`): idle time to live, byte and artifact caps, least
//! recently used first; a read is a use. Time is set on the blob files, never slept.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use envelope_store::{Digest, FileStore, GcLimits, Scoped, Store};

fn temp_store(name: &str) -> (FileStore, PathBuf) {
    let root = std::env::temp_dir().join(format!(
        "envelope-store-limits-{name}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&root);
    (FileStore::new(&root), root)
}

/// Sets the last use of `digest` (its blob's modification time) to `secs_ago` seconds ago.
fn used_ago(root: &Path, digest: &Digest, secs_ago: u64) {
    set_mtime(&root.join("sha256").join(digest.hex()), secs_ago);
}

fn set_mtime(path: &Path, secs_ago: u64) {
    let file = std::fs::File::options().write(true).open(path).unwrap();
    file.set_modified(SystemTime::now() - Duration::from_secs(secs_ago))
        .unwrap();
}

fn mtime(root: &Path, digest: &Digest) -> SystemTime {
    std::fs::metadata(root.join("sha256").join(digest.hex()))
        .unwrap()
        .modified()
        .unwrap()
}

fn sorted(mut digests: Vec<Digest>) -> Vec<Digest> {
    digests.sort();
    digests
}

/// Puts `n` artifacts of `size` bytes each, used 1000, 900, … seconds ago (the first is the
/// least recently used).
fn put_aged(store: &FileStore, root: &Path, n: usize, size: usize) -> Vec<Digest> {
    (0..n)
        .map(|i| {
            let mut bytes = vec![b'x'; size];
            bytes[..8].copy_from_slice(&(i as u64).to_le_bytes());
            let digest = store.put(&bytes, "text/plain", &[]).unwrap().digest;
            used_ago(root, &digest, 1000 - 100 * i as u64);
            digest
        })
        .collect()
}

#[test]
fn the_least_recently_used_go_first() {
    let (store, root) = temp_store("lru");
    let d = put_aged(&store, &root, 4, 100);
    // Reorder use explicitly: d[2] is now the least recently used, d[0] the most.
    used_ago(&root, &d[2], 5000);
    used_ago(&root, &d[0], 10);
    let report = store
        .gc_with(&GcLimits::new().max_artifacts(Some(2)))
        .unwrap();
    assert_eq!(report.evicted, sorted(vec![d[2], d[1]]));
    assert!(report.expired.is_empty() && report.removed.is_empty());
    assert_eq!(store.list().unwrap(), sorted(vec![d[0], d[3]]));
    // Within the caps: nothing more goes.
    let again = store
        .gc_with(&GcLimits::new().max_artifacts(Some(2)))
        .unwrap();
    assert!(again.evicted.is_empty());
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn a_read_keeps_an_artifact_over_an_older_unread_one() {
    let (store, root) = temp_store("read");
    let d = put_aged(&store, &root, 2, 100);
    let before = mtime(&root, &d[0]);
    // d[0] was the least recently used; reading it makes it the most recent.
    assert_eq!(store.get(&d[0]).unwrap()[8..], [b'x'; 92]);
    assert!(mtime(&root, &d[0]) > before, "a read refreshes last use");
    // verify and sidecar reads are not uses.
    let checked = mtime(&root, &d[1]);
    store.verify(&d[1]).unwrap();
    store.sidecar(&d[1]).unwrap();
    assert_eq!(mtime(&root, &d[1]), checked);
    let report = store
        .gc_with(&GcLimits::new().max_artifacts(Some(1)))
        .unwrap();
    assert_eq!(report.evicted, vec![d[1]]);
    assert_eq!(store.list().unwrap(), vec![d[0]]);
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn max_bytes_holds_after_gc() {
    let (store, root) = temp_store("bytes");
    let d = put_aged(&store, &root, 5, 1000);
    let report = store
        .gc_with(&GcLimits::new().max_bytes(Some(2500)))
        .unwrap();
    assert_eq!(report.evicted, sorted(vec![d[0], d[1], d[2]]));
    let left = store.list().unwrap();
    assert_eq!(left, sorted(vec![d[3], d[4]]));
    let bytes: u64 = left
        .iter()
        .map(|d| store.sidecar(d).unwrap().size_bytes)
        .sum();
    assert!(bytes <= 2500);
    // A cap below one artifact empties the store.
    let report = store.gc_with(&GcLimits::new().max_bytes(Some(0))).unwrap();
    assert_eq!(report.evicted, left);
    assert!(store.list().unwrap().is_empty());
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn max_artifacts_holds_after_gc() {
    let (store, root) = temp_store("count");
    let d = put_aged(&store, &root, 6, 10);
    let report = store
        .gc_with(&GcLimits::new().max_artifacts(Some(3)))
        .unwrap();
    assert_eq!(report.evicted, sorted(d[..3].to_vec()));
    assert_eq!(store.list().unwrap(), sorted(d[3..].to_vec()));
    // Both caps: the stricter one decides.
    let report = store
        .gc_with(&GcLimits::new().max_artifacts(Some(2)).max_bytes(Some(10)))
        .unwrap();
    assert_eq!(report.evicted, sorted(d[3..5].to_vec()));
    assert_eq!(store.list().unwrap(), vec![d[5]]);
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn idle_artifacts_expire() {
    let (store, root) = temp_store("idle");
    let d = put_aged(&store, &root, 4, 10); // used 1000, 900, 800, 700 s ago
    let report = store
        .gc_with(&GcLimits::new().idle(Some(Duration::from_secs(850))))
        .unwrap();
    assert_eq!(report.expired, sorted(vec![d[0], d[1]]));
    assert!(report.evicted.is_empty());
    assert_eq!(store.list().unwrap(), sorted(vec![d[2], d[3]]));
    // Idle first, then the caps: d[2] expires, d[3] is within the cap of 1.
    let report = store
        .gc_with(
            &GcLimits::new()
                .idle(Some(Duration::from_secs(750)))
                .max_artifacts(Some(1)),
        )
        .unwrap();
    assert_eq!(report.expired, vec![d[2]]);
    assert!(report.evicted.is_empty());
    assert_eq!(store.list().unwrap(), vec![d[3]]);
    // The old entry point still takes the age alone.
    assert_eq!(
        store.gc(Some(Duration::from_secs(600))).unwrap().removed,
        vec![d[3]]
    );
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn limits_never_touch_what_is_not_the_stores() {
    let (store, root) = temp_store("foreign");
    let d = put_aged(&store, &root, 2, 10);
    let foreign = [
        root.join("notes.txt"),
        root.join("sha256").join("README"),
        root.join("sha256").join(format!("{}.bak", d[0].hex())),
        root.join("sha256").join("ABCDEF"),
    ];
    for path in &foreign {
        std::fs::write(path, b"not the store's").unwrap();
        set_mtime(path, 100_000);
    }
    let report = store
        .gc_with(
            &GcLimits::new()
                .idle(Some(Duration::ZERO))
                .max_bytes(Some(0))
                .max_artifacts(Some(0)),
        )
        .unwrap();
    assert_eq!(report.expired, sorted(d.clone()));
    assert!(store.list().unwrap().is_empty());
    for path in &foreign {
        assert_eq!(std::fs::read(path).unwrap(), b"not the store's", "{path:?}");
    }
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn owner_markers_neither_count_nor_keep_an_artifact() {
    let (store, root) = temp_store("markers");
    let inner: Arc<dyn Store> = Arc::new(store.clone());
    let alice = Scoped::new(inner.clone(), Some("alice".into()));
    let a: Vec<Digest> = (0..3u8)
        .map(|i| alice.put(&[i; 20], "text/plain", &[]).unwrap().digest)
        .collect();
    // Three artifacts and three markers; the markers are the oldest of all.
    let all = inner.list().unwrap();
    assert_eq!(all.len(), 6);
    for (i, digest) in a.iter().enumerate() {
        used_ago(&root, digest, 1000 - 100 * i as u64);
    }
    for marker in all.iter().filter(|d| !a.contains(d)) {
        used_ago(&root, marker, 50_000);
    }
    let report = alice
        .gc_with(
            &GcLimits::new()
                .max_artifacts(Some(2))
                .idle(Some(Duration::from_secs(10_000))),
        )
        .unwrap();
    // Only a[0] goes: markers are not results, and old markers do not expire by idle.
    assert_eq!(report.evicted, vec![a[0]]);
    assert!(report.expired.is_empty());
    assert_eq!(inner.list().unwrap().len(), 5);
    assert_eq!(alice.list().unwrap(), sorted(a[1..].to_vec()));
    // Its marker grants nothing now: the owner reads "not found".
    assert_eq!(alice.get(&a[0]).unwrap_err().code(), "store.not-found");
    // The age rule collects markers (and the rest).
    let report = inner.gc(Some(Duration::from_secs(40_000))).unwrap();
    assert_eq!(report.removed.len(), 3);
    std::fs::remove_dir_all(&root).unwrap();
}

/// 1,000 puts of random sizes, gc after each: the store never holds more than the caps.
#[test]
fn caps_hold_after_every_gc_over_many_puts() {
    let (store, root) = temp_store("property");
    let (max_bytes, max_artifacts) = (20_000u64, 8usize);
    let limits = GcLimits::new()
        .max_bytes(Some(max_bytes))
        .max_artifacts(Some(max_artifacts));
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut last = None;
    for i in 0..1000u64 {
        let size = (next() % 6000) as usize + 8;
        let mut bytes = vec![(next() % 251) as u8; size];
        bytes[..8].copy_from_slice(&i.to_le_bytes());
        let digest = store
            .put(&bytes, "application/octet-stream", &[])
            .unwrap()
            .digest;
        // Now and then read an older survivor, as a client would.
        if i % 7 == 0
            && let Some(d) = last
        {
            let _ = store.get(&d);
        }
        let report = store.gc_with(&limits).unwrap();
        assert!(report.skipped.is_empty(), "{report:?}");
        let left = store.list().unwrap();
        let bytes: u64 = left
            .iter()
            .map(|d| {
                std::fs::metadata(root.join("sha256").join(d.hex()))
                    .unwrap()
                    .len()
            })
            .sum();
        assert!(
            left.len() <= max_artifacts,
            "after put {i}: {} artifacts",
            left.len()
        );
        assert!(bytes <= max_bytes, "after put {i}: {bytes} bytes");
        // What was just put stays unless it alone is over the byte cap.
        if (size as u64) <= max_bytes {
            assert!(left.contains(&digest), "after put {i}");
        }
        // Every blob left has its sidecar.
        for d in &left {
            store.verify(d).unwrap();
        }
        last = Some(digest);
    }
    std::fs::remove_dir_all(&root).unwrap();
}
