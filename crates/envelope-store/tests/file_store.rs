//! The file store: layout, verification, concurrency and failures.

use std::path::PathBuf;
use std::sync::Arc;

use envelope_store::{Digest, FileStore, Hashed, Sidecar, Store};

fn temp_store(name: &str) -> (FileStore, PathBuf) {
    let root = std::env::temp_dir().join(format!("envelope-store-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    (FileStore::new(&root), root)
}

#[test]
fn put_get_layout_and_sidecar() {
    let (store, root) = temp_store("layout");
    let sidecar = store
        .put(
            b"{\"a\":1}",
            "Application/JSON; charset=utf-8",
            &["t1".into()],
        )
        .unwrap();
    let digest = Digest::of(b"{\"a\":1}");
    assert_eq!(sidecar.digest, digest);
    assert_eq!(sidecar.kind, "application/json");
    assert_eq!(sidecar.size_bytes, 7);
    let blob = root.join("sha256").join(digest.hex());
    assert_eq!(std::fs::read(&blob).unwrap(), b"{\"a\":1}");
    let side = std::fs::read(root.join("sha256").join(format!("{}.json", digest.hex()))).unwrap();
    let text = String::from_utf8(side.clone()).unwrap();
    assert!(text.starts_with(&format!("{{\"digest\":\"{digest}\",\"size_bytes\":7,\"kind\":\"application/json\",\"tags\":[\"t1\"],\"created_at\":\"")), "{text}");
    assert_eq!(Sidecar::from_json(&side).unwrap(), sidecar);
    assert_eq!(store.get(&digest).unwrap(), b"{\"a\":1}");
    assert_eq!(store.list().unwrap(), vec![digest]);
    // Idempotent: the same bytes again give the same sidecar and one copy.
    assert_eq!(
        store.put(b"{\"a\":1}", "application/json", &[]).unwrap(),
        sidecar
    );
    assert_eq!(std::fs::read_dir(root.join("sha256")).unwrap().count(), 2);
}

#[test]
#[cfg(unix)]
fn a_put_hashed_ahead_is_a_put_and_leaves_an_intact_blob_alone() {
    use std::os::unix::fs::MetadataExt as _;
    let (store, root) = temp_store("hashed");
    let bytes = b"{\"rows\":[1,2,3]}".repeat(20_000);
    let hashed = Hashed::of(&bytes);
    let sidecar = store.put_hashed(&hashed, "application/json", &[]).unwrap();
    assert_eq!(sidecar.digest, Digest::of(&bytes));
    assert_eq!(sidecar.size_bytes, bytes.len() as u64);
    assert_eq!(store.get(&sidecar.digest).unwrap(), bytes);
    assert_eq!(store.put(&bytes, "application/json", &[]).unwrap(), sidecar);
    let blob = root.join("sha256").join(sidecar.digest.hex());
    let inode = std::fs::metadata(&blob).unwrap().ino();

    // The same bytes again: the blob is left as it is (not written again, not replaced),
    // but its age starts again, as after a rewrite (gc goes by it).
    let past = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    std::fs::File::options()
        .write(true)
        .open(&blob)
        .unwrap()
        .set_modified(past)
        .unwrap();
    assert_eq!(
        store.put_hashed(&hashed, "text/plain", &[]).unwrap(),
        sidecar
    );
    let meta = std::fs::metadata(&blob).unwrap();
    assert_eq!(meta.ino(), inode);
    assert!(meta.modified().unwrap() > past + std::time::Duration::from_secs(3000));
    let gc = store
        .gc(Some(std::time::Duration::from_secs(1800)))
        .unwrap();
    assert!(gc.removed.is_empty());

    // A blob of the same size with other bytes, or longer, is replaced.
    for tampered in [
        bytes.iter().map(|b| b ^ 1).collect::<Vec<u8>>(),
        [&bytes[..], b"x"].concat(),
    ] {
        std::fs::write(&blob, &tampered).unwrap();
        assert_eq!(
            store.get(&sidecar.digest).unwrap_err().code(),
            "store.corrupted"
        );
        store.put_hashed(&hashed, "application/json", &[]).unwrap();
        assert_eq!(store.get(&sidecar.digest).unwrap(), bytes);
    }
    // No temporary file is left: a blob and its sidecar.
    assert_eq!(std::fs::read_dir(root.join("sha256")).unwrap().count(), 2);
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn corrupted_and_deleted_blobs_are_detected() {
    let (store, root) = temp_store("corrupt");
    let digest = store
        .put(b"original bytes", "text/plain", &[])
        .unwrap()
        .digest;
    std::fs::write(root.join("sha256").join(digest.hex()), b"tampered bytes").unwrap();
    assert_eq!(store.get(&digest).unwrap_err().code(), "store.corrupted");
    assert_eq!(store.verify(&digest).unwrap_err().code(), "store.corrupted");
    // Putting the original again repairs it.
    store.put(b"original bytes", "text/plain", &[]).unwrap();
    assert_eq!(store.get(&digest).unwrap(), b"original bytes");
    // Deleted behind our back.
    std::fs::remove_file(root.join("sha256").join(digest.hex())).unwrap();
    assert_eq!(store.get(&digest).unwrap_err().code(), "store.not-found");
}

#[test]
fn a_truncated_sidecar_fails_verification_not_reads() {
    let (store, root) = temp_store("sidecar");
    let digest = store.put(b"data", "text/plain", &[]).unwrap().digest;
    let side = root.join("sha256").join(format!("{}.json", digest.hex()));
    let full = std::fs::read(&side).unwrap();
    std::fs::write(&side, &full[..full.len() / 2]).unwrap();
    assert_eq!(store.get(&digest).unwrap(), b"data");
    let err = store.verify(&digest).unwrap_err();
    assert_eq!(err.code(), "store.bad-sidecar");
    assert!(err.to_string().contains(&digest.to_string()));
    // put rewrites a broken sidecar.
    store.put(b"data", "text/plain", &[]).unwrap();
    assert!(store.verify(&digest).is_ok());
}

#[test]
fn concurrent_writers_of_the_same_blob_are_safe() {
    let (store, root) = temp_store("concurrent");
    let store = Arc::new(store);
    let bytes: Vec<u8> = (0..200_000u32).flat_map(|i| i.to_le_bytes()).collect();
    let bytes = Arc::new(bytes);
    let threads: Vec<_> = (0..8)
        .map(|_| {
            let (store, bytes) = (store.clone(), bytes.clone());
            std::thread::spawn(move || {
                store
                    .put(&bytes, "application/octet-stream", &[])
                    .unwrap()
                    .digest
            })
        })
        .collect();
    let digests: Vec<Digest> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    assert!(digests.windows(2).all(|w| w[0] == w[1]));
    assert_eq!(store.get(&digests[0]).unwrap(), *bytes);
    // No temporary files left behind.
    let names: Vec<String> = std::fs::read_dir(root.join("sha256"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
}

/// A put written a piece at a time stores what one put of the whole stores; abandoned, it
/// leaves nothing behind.
#[test]
fn a_put_written_in_pieces_is_the_put_of_the_whole() {
    let (store, root) = temp_store("pieces");
    let bytes: Vec<u8> = (0..300_000u32).flat_map(|i| i.to_le_bytes()).collect();
    let dir = root.join("sha256");
    let names = || -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    };
    for (i, piece) in [1, 7, 4096, 1 << 20, bytes.len()].into_iter().enumerate() {
        let mut writer = store.writer().unwrap();
        for chunk in bytes.chunks(piece) {
            writer.write(chunk).unwrap();
        }
        let tags = vec![format!("t{i}")];
        let sidecar = writer.finish("Application/JSON", &tags).unwrap();
        assert_eq!(sidecar.digest, Digest::of(&bytes), "pieces of {piece}");
        assert_eq!(sidecar.size_bytes, bytes.len() as u64);
        assert_eq!(store.get(&sidecar.digest).unwrap(), bytes);
        assert_eq!(store.verify(&sidecar.digest).unwrap(), sidecar);
        // The first sidecar is kept, as by `put`.
        assert_eq!(sidecar.tags, ["t0"]);
        assert_eq!(sidecar.kind, "application/json");
    }
    assert_eq!(
        store.put(&bytes, "text/plain", &[]).unwrap().tags,
        ["t0"],
        "put finds the streamed artifact"
    );
    let stored = names();
    assert_eq!(stored.len(), 2, "{stored:?}");
    // Abandoned after some pieces, or before any: nothing new, no temporary file.
    let mut writer = store.writer().unwrap();
    writer.write(b"half of something").unwrap();
    assert_eq!(names().len(), 3, "the temporary file exists while writing");
    drop(writer);
    drop(store.writer().unwrap());
    assert_eq!(names(), stored);
    // Durable: the same.
    let durable = FileStore::new(&root).durable(true);
    let mut writer = durable.writer().unwrap();
    writer.write(b"flushed").unwrap();
    let sidecar = writer.finish("text/plain", &[]).unwrap();
    assert_eq!(durable.get(&sidecar.digest).unwrap(), b"flushed");
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn an_unwritable_store_is_a_clear_error_and_leaves_nothing() {
    // /sys refuses new entries even to root.
    let store = FileStore::new("/sys/envelope-store-test");
    let err = store.put(b"x", "text/plain", &[]).unwrap_err();
    assert_eq!(err.code(), "store.io");
    // The full path locally; for a client, no path of the machine.
    assert!(err.detailed().contains("/sys/envelope-store-test"), "{err}");
    let text = err.to_string();
    assert!(
        text.starts_with("cannot create the store's folder: ") && !text.contains("/sys"),
        "{text}"
    );
    assert!(store.list().unwrap().is_empty());
    let err = store.writer().err().unwrap();
    assert_eq!(err.code(), "store.io");
}

#[test]
fn gc_removes_orphans_and_old_artifacts() {
    let (store, root) = temp_store("gc");
    let keep = store.put(b"keep", "text/plain", &[]).unwrap().digest;
    let gone = store.put(b"gone", "text/plain", &[]).unwrap().digest;
    std::fs::remove_file(root.join("sha256").join(gone.hex())).unwrap();
    let report = store.gc(None).unwrap();
    assert_eq!(report.orphans, 1);
    assert!(report.removed.is_empty());
    assert_eq!(store.list().unwrap(), vec![keep]);
    let report = store.gc(Some(std::time::Duration::ZERO)).unwrap();
    assert_eq!(report.removed, vec![keep]);
    assert!(store.list().unwrap().is_empty());
}

#[test]
fn malformed_sidecars_are_typed_errors_with_the_same_reasons() {
    use envelope_store::StoreError;
    let reason = |bytes: &[u8]| match Sidecar::from_json(bytes).unwrap_err() {
        StoreError::MalformedSidecar { reason } => reason,
        other => panic!("{other:?}"),
    };
    assert!(reason(b"{\"digest\":").contains("line 1 column 10"));
    assert_eq!(reason(b"{}"), "digest is missing or not a string");
    assert_eq!(
        reason(b"{\"digest\":\"sha256:00\"}"),
        "\"sha256:00\" is not a digest (expected sha256: and 64 lower-case hex characters)"
    );
    let digest = Digest::of(b"x");
    let no_size = format!("{{\"digest\":\"{digest}\",\"size_bytes\":-1}}");
    assert_eq!(
        reason(no_size.as_bytes()),
        "size_bytes is missing or not an integer"
    );
    let no_kind = format!("{{\"digest\":\"{digest}\",\"size_bytes\":1}}");
    assert_eq!(
        reason(no_kind.as_bytes()),
        "kind is missing or not a string"
    );
    let err = Sidecar::from_json(b"[]").unwrap_err();
    assert_eq!(err.code(), "store.malformed-sidecar");
    assert_eq!(
        err.to_string(),
        "not a valid sidecar: digest is missing or not a string"
    );

    // A store names the artifact and the file, with the same reason.
    let (store, root) = temp_store("malformed-sidecar");
    let digest = store.put(b"x", "text/plain", &[]).unwrap().digest;
    let side = root.join("sha256").join(format!("{}.json", digest.hex()));
    std::fs::write(&side, no_kind).unwrap();
    for err in [
        store.sidecar(&digest).unwrap_err(),
        store.verify(&digest).unwrap_err(),
    ] {
        assert_eq!(err.code(), "store.bad-sidecar");
        assert_eq!(
            err.detailed(),
            format!(
                "the sidecar of {digest} ({}) is unreadable: kind is missing or not a string",
                side.display()
            )
        );
        assert_eq!(
            err.to_string(),
            format!(
                "the sidecar of {digest} (sha256/{}.json) is unreadable: kind is missing or not \
                 a string",
                digest.hex()
            )
        );
    }
    std::fs::remove_file(&side).unwrap();
    assert!(
        store
            .sidecar(&digest)
            .unwrap_err()
            .to_string()
            .ends_with("is unreadable: missing")
    );
    let _ = std::fs::remove_dir_all(&root);
}
