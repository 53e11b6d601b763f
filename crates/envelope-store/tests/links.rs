//! The file store never follows a link below its root (issue 12, item 1): a link planted
//! in each position is refused with `StoreError::Link`, and what it points to is neither
//! read, written, nor deleted. The root itself may be a link.
#![cfg(unix)]

use std::collections::BTreeMap;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::time::Duration;

use envelope_store::{Digest, FileStore, Hashed, Store, StoreError};

/// A fresh folder for one test, holding `store/` (the root) and `outside/` (what links
/// point to, outside the store).
fn scene(name: &str) -> (FileStore, PathBuf, PathBuf) {
    let base = std::env::temp_dir().join(format!(
        "envelope-store-links-{name}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&base);
    let (root, outside) = (base.join("store"), base.join("outside"));
    std::fs::create_dir_all(&outside).unwrap();
    (FileStore::new(&root), root, outside)
}

fn cleanup(root: &Path) {
    let _ = std::fs::remove_dir_all(root.parent().unwrap());
}

/// Every file of a folder with its bytes: compared before and after, it shows that
/// nothing outside the store was written, created or deleted.
fn snapshot(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect()
}

/// `err` is the link refusal naming `path`: in full in [`StoreError::detailed`] (the
/// local text), by its place in the store only in the text a client may get.
#[track_caller]
fn assert_link(err: StoreError, path: &Path) {
    assert_eq!(err.code(), "store.link", "{err}");
    match &err {
        StoreError::Link { path: p } => assert_eq!(p, path),
        other => panic!("not a link error: {other:?}"),
    }
    let detailed = err.detailed();
    assert!(detailed.contains(&path.display().to_string()), "{detailed}");
    let text = err.to_string();
    assert!(text.contains("symbolic link"), "{text}");
    assert!(
        !text.contains(&*std::env::temp_dir().to_string_lossy()),
        "{text}"
    );
    let name = path.file_name().unwrap().to_string_lossy();
    let place = match path.ends_with("sha256") {
        true => "sha256".to_string(),
        false => format!("sha256/{name}"),
    };
    assert!(text.starts_with(&format!("{place} is")), "{text}");
}

/// The paths gc reported skipping, and that each is a link refusal.
#[track_caller]
fn skipped_links(report: &envelope_store::GcReport) -> Vec<PathBuf> {
    for skipped in &report.skipped {
        assert_eq!(skipped.code, "store.link", "{skipped:?}");
        assert!(skipped.reason.contains("symbolic link"), "{skipped:?}");
    }
    report.skipped.iter().map(|s| s.path.clone()).collect()
}

#[track_caller]
fn assert_is_link(path: &Path) {
    assert!(
        std::fs::symlink_metadata(path)
            .unwrap()
            .file_type()
            .is_symlink(),
        "{} is no longer a link",
        path.display()
    );
}

#[test]
fn a_linked_sha256_folder_is_refused_by_every_operation() {
    let (store, root, outside) = scene("dir");
    // Outside: a blob and a sidecar the store would happily use through the link.
    let secret = b"secret outside the store";
    let digest = Digest::of(secret);
    std::fs::write(outside.join(digest.hex()), secret).unwrap();
    std::fs::write(outside.join(format!("{}.json", digest.hex())), b"{}").unwrap();
    std::fs::create_dir_all(&root).unwrap();
    let dir = root.join("sha256");
    symlink(&outside, &dir).unwrap();
    let before = snapshot(&outside);

    assert_link(store.get(&digest).unwrap_err(), &dir);
    assert_link(store.sidecar(&digest).unwrap_err(), &dir);
    assert_link(store.verify(&digest).unwrap_err(), &dir);
    assert_link(store.list().unwrap_err(), &dir);
    assert_link(store.put(secret, "text/plain", &[]).unwrap_err(), &dir);
    assert_link(store.put(b"new", "text/plain", &[]).unwrap_err(), &dir);
    assert_link(store.writer().err().unwrap(), &dir);
    assert_link(store.remove(&digest).unwrap_err(), &dir);
    assert_link(store.gc(None).unwrap_err(), &dir);
    assert_link(store.gc(Some(Duration::ZERO)).unwrap_err(), &dir);

    assert_eq!(snapshot(&outside), before, "nothing outside changed");
    assert_is_link(&dir);
    cleanup(&root);
}

#[test]
fn a_dangling_sha256_link_is_refused_not_created_through() {
    let (store, root, outside) = scene("dangling-dir");
    std::fs::create_dir_all(&root).unwrap();
    let dir = root.join("sha256");
    let target = outside.join("not-yet");
    symlink(&target, &dir).unwrap();
    assert_link(store.put(b"x", "text/plain", &[]).unwrap_err(), &dir);
    assert!(!target.exists(), "the link's target was created");
    assert_link(store.list().unwrap_err(), &dir);
    cleanup(&root);
}

#[test]
fn a_linked_blob_is_neither_read_nor_written_through() {
    let (store, root, outside) = scene("blob");
    store.put(b"unrelated", "text/plain", &[]).unwrap();
    let dir = root.join("sha256");

    // A link named after the digest of what it points to: following it would "work".
    let secret = b"an outside file the user can read";
    let secret_file = outside.join("secret");
    std::fs::write(&secret_file, secret).unwrap();
    let digest = Digest::of(secret);
    let blob = dir.join(digest.hex());
    symlink(&secret_file, &blob).unwrap();

    // A link named after content about to be put, pointing to a file the user can write.
    let victim = outside.join("victim");
    std::fs::write(&victim, b"must survive").unwrap();
    let bytes = b"content being put";
    let put_blob = dir.join(Digest::of(bytes).hex());
    symlink(&victim, &put_blob).unwrap();

    let before = snapshot(&outside);
    assert_link(store.get(&digest).unwrap_err(), &blob);
    assert_link(store.verify(&digest).unwrap_err(), &blob);
    assert_link(store.put(secret, "text/plain", &[]).unwrap_err(), &blob);
    assert_link(store.put(bytes, "text/plain", &[]).unwrap_err(), &put_blob);
    // Hashed ahead: a link is never taken for a blob already holding the bytes.
    let hashed = Hashed::of(secret);
    assert_link(
        store.put_hashed(&hashed, "text/plain", &[]).unwrap_err(),
        &blob,
    );
    let hashed = Hashed::of(bytes);
    assert_link(
        store.put_hashed(&hashed, "text/plain", &[]).unwrap_err(),
        &put_blob,
    );
    // Written a piece at a time, the same refusal at the rename.
    let mut writer = store.writer().unwrap();
    writer.write(&bytes[..7]).unwrap();
    writer.write(&bytes[7..]).unwrap();
    assert_link(writer.finish("text/plain", &[]).unwrap_err(), &put_blob);
    assert_link(store.remove(&digest).unwrap_err(), &blob);
    // list reads names only: the link is listed, so a whole-store verify names it.
    assert!(store.list().unwrap().contains(&digest));

    assert_eq!(snapshot(&outside), before, "nothing outside changed");
    assert_is_link(&blob);
    assert_is_link(&put_blob);
    // No temporary file or sidecar was left for the refused puts.
    let names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 4, "{names:?}");
    cleanup(&root);
}

#[test]
fn a_dangling_blob_link_is_a_link_error_not_not_found() {
    let (store, root, outside) = scene("dangling-blob");
    store.put(b"unrelated", "text/plain", &[]).unwrap();
    let digest = Digest::of(b"to be created");
    let blob = root.join("sha256").join(digest.hex());
    let target = outside.join("created-through-the-link");
    symlink(&target, &blob).unwrap();
    assert_link(store.get(&digest).unwrap_err(), &blob);
    assert_link(
        store.put(b"to be created", "text/plain", &[]).unwrap_err(),
        &blob,
    );
    assert!(!target.exists(), "put wrote through a dangling link");
    cleanup(&root);
}

#[test]
fn a_linked_sidecar_is_neither_read_nor_replaced() {
    let (store, root, outside) = scene("sidecar");
    let digest = store.put(b"data", "text/plain", &[]).unwrap().digest;
    let side = root.join("sha256").join(format!("{}.json", digest.hex()));
    // Outside: a valid sidecar for this digest, so following the link would succeed.
    let theirs = outside.join("sidecar.json");
    std::fs::copy(&side, &theirs).unwrap();
    std::fs::remove_file(&side).unwrap();
    symlink(&theirs, &side).unwrap();
    let before = snapshot(&outside);

    assert_link(store.sidecar(&digest).unwrap_err(), &side);
    assert_link(store.verify(&digest).unwrap_err(), &side);
    assert_link(store.put(b"data", "text/plain", &[]).unwrap_err(), &side);
    assert_link(store.remove(&digest).unwrap_err(), &side);
    // The blob itself is sound and still readable.
    assert_eq!(store.get(&digest).unwrap(), b"data");

    assert_eq!(snapshot(&outside), before, "nothing outside changed");
    assert_is_link(&side);
    cleanup(&root);
}

#[test]
fn a_link_at_a_guessed_temporary_name_is_never_written_through() {
    let (store, root, outside) = scene("temp");
    store.put(b"first", "text/plain", &[]).unwrap();
    let dir = root.join("sha256");
    let victim = outside.join("victim");
    std::fs::write(&victim, b"must survive").unwrap();
    // The names the store used to write to: `.tmp-<pid>-<counter>`.
    let planted: Vec<PathBuf> = (0..64)
        .map(|n| dir.join(format!(".tmp-{}-{n}", std::process::id())))
        .collect();
    for link in &planted {
        symlink(&victim, link).unwrap();
    }

    let digest = store
        .put(b"second, with its sidecar", "text/plain", &[])
        .unwrap()
        .digest;
    assert_eq!(store.get(&digest).unwrap(), b"second, with its sidecar");
    assert_eq!(std::fs::read(&victim).unwrap(), b"must survive");
    for link in &planted {
        assert_is_link(link);
    }
    // gc leaves the links carrying a temporary name alone, reports each, and collects
    // the store's own artifacts all the same.
    let mut sorted = planted.clone();
    sorted.sort();
    let report = store.gc(Some(Duration::ZERO)).unwrap();
    assert_eq!(skipped_links(&report), sorted);
    assert_eq!(report.removed.len(), 2);
    assert!(store.list().unwrap().is_empty());
    for link in &planted {
        assert_is_link(link);
    }
    assert_eq!(std::fs::read(&victim).unwrap(), b"must survive");
    cleanup(&root);
}

#[test]
fn gc_skips_links_reports_them_and_collects_the_rest() {
    let (store, root, outside) = scene("gc");
    let old_one = store.put(b"old one", "text/plain", &[]).unwrap().digest;
    let old_two = store.put(b"old two", "text/plain", &[]).unwrap().digest;
    // An orphan sidecar of our own, to be collected.
    let gone = store.put(b"gone", "text/plain", &[]).unwrap().digest;
    let dir = root.join("sha256");
    std::fs::remove_file(dir.join(gone.hex())).unwrap();
    let victim = outside.join("victim");
    std::fs::write(&victim, b"must survive").unwrap();
    // An "orphan sidecar" and an "old blob" that are links to an outside file.
    let orphan = dir.join(format!("{}.json", Digest::of(b"lost").hex()));
    let old = dir.join(Digest::of(b"old").hex());
    symlink(&victim, &orphan).unwrap();
    symlink(&victim, &old).unwrap();
    // An artifact whose sidecar was replaced by a link: neither half is removed.
    let half = store.put(b"half", "text/plain", &[]).unwrap().digest;
    let half_sidecar = dir.join(format!("{}.json", half.hex()));
    std::fs::remove_file(&half_sidecar).unwrap();
    symlink(&victim, &half_sidecar).unwrap();
    let before = snapshot(&outside);

    // Without an age limit: the orphan goes, the links are reported.
    let report = store.gc(None).unwrap();
    assert_eq!(report.orphans, 1);
    let mut links = vec![orphan.clone(), old.clone(), half_sidecar.clone()];
    links.sort();
    assert_eq!(skipped_links(&report), links);
    // With one: the old artifacts go, one stray link does not stop it.
    let report = store.gc(Some(Duration::ZERO)).unwrap();
    let mut removed = vec![old_one, old_two];
    removed.sort();
    assert_eq!(report.removed, removed);
    assert_eq!(skipped_links(&report), links, "each link once");
    assert_eq!(snapshot(&outside), before, "nothing outside changed");
    for link in &links {
        assert_is_link(link);
    }
    assert!(
        dir.join(half.hex()).is_file(),
        "the half-linked artifact stays"
    );

    // Links with names that are not the store's are never touched, nor reported.
    let foreign = dir.join("README");
    symlink(&victim, &foreign).unwrap();
    let report = store.gc(Some(Duration::ZERO)).unwrap();
    assert!(!skipped_links(&report).contains(&foreign));
    assert_is_link(&foreign);
    assert_eq!(snapshot(&outside), before);
    cleanup(&root);
}

#[test]
fn gc_goes_on_past_an_entry_it_cannot_remove() {
    // A folder named like a temporary file cannot be unlinked: reported, the rest collected.
    let (store, root, _) = scene("gc-folder");
    let old = store.put(b"old", "text/plain", &[]).unwrap().digest;
    let stuck = root.join("sha256").join(".tmp-stuck");
    std::fs::create_dir(&stuck).unwrap();
    let an_hour_ago = std::time::SystemTime::now() - Duration::from_secs(7200);
    std::fs::File::open(&stuck)
        .unwrap()
        .set_modified(an_hour_ago)
        .unwrap();
    let report = store.gc(Some(Duration::ZERO)).unwrap();
    assert_eq!(report.removed, vec![old]);
    assert_eq!(report.skipped.len(), 1, "{:?}", report.skipped);
    assert_eq!(report.skipped[0].path, stuck);
    assert_eq!(report.skipped[0].code, "store.io");
    assert!(
        report.skipped[0]
            .reason
            .starts_with("cannot remove sha256/.tmp-stuck"),
        "{:?}",
        report.skipped[0]
    );
    assert!(stuck.is_dir());
    cleanup(&root);
}

#[test]
fn a_root_that_is_a_link_to_a_folder_works_and_is_resolved_once() {
    let (_, root, outside) = scene("root");
    let real = outside.join("real-store");
    std::fs::create_dir_all(&real).unwrap();
    std::fs::create_dir_all(root.parent().unwrap()).unwrap();
    symlink(&real, &root).unwrap();

    let store = FileStore::new(&root);
    assert_eq!(store.root(), root.as_path());
    let digest = store
        .put(b"through a linked root", "text/plain", &[])
        .unwrap()
        .digest;
    assert!(real.join("sha256").join(digest.hex()).is_file());
    assert_eq!(store.get(&digest).unwrap(), b"through a linked root");
    assert_eq!(store.list().unwrap(), vec![digest]);
    store.verify(&digest).unwrap();
    assert_eq!(store.gc(None).unwrap().orphans, 0);

    // Errors name paths under the root as given, not as resolved.
    std::fs::write(real.join("sha256").join(digest.hex()), b"tampered").unwrap();
    assert_eq!(store.get(&digest).unwrap_err().code(), "store.corrupted");
    let side = real.join("sha256").join(format!("{}.json", digest.hex()));
    std::fs::remove_file(&side).unwrap();
    let err = store.sidecar(&digest).unwrap_err();
    let shown = root.join("sha256").join(format!("{}.json", digest.hex()));
    assert!(
        err.detailed().contains(&shown.display().to_string()),
        "{err}"
    );

    // Resolved once: pointing the link elsewhere later does not move this handle.
    let elsewhere = outside.join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::fs::remove_file(&root).unwrap();
    symlink(&elsewhere, &root).unwrap();
    store
        .put(b"still the first folder", "text/plain", &[])
        .unwrap();
    assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
    assert_eq!(store.list().unwrap().len(), 2);
    // A new handle resolves the link anew.
    assert!(FileStore::new(&root).list().unwrap().is_empty());
    cleanup(&root);
}

#[test]
fn a_store_created_under_a_linked_parent_works() {
    let (_, root, outside) = scene("parent");
    let real_parent = outside.join("parent");
    std::fs::create_dir_all(&real_parent).unwrap();
    std::fs::create_dir_all(root.parent().unwrap()).unwrap();
    symlink(&real_parent, &root).unwrap();
    // The root does not exist yet: put creates it through the linked parent.
    let store = FileStore::new(root.join("store"));
    let digest = store.put(b"new store", "text/plain", &[]).unwrap().digest;
    assert!(
        real_parent
            .join("store/sha256")
            .join(digest.hex())
            .is_file()
    );
    assert_eq!(store.get(&digest).unwrap(), b"new store");
    cleanup(&root);
}

#[test]
fn rename_replaces_a_link_and_never_writes_through_it() {
    // The operating-system behaviour the store relies on if a link is planted between its
    // check and its rename: the link is replaced, its target untouched.
    let (_, root, outside) = scene("rename");
    std::fs::create_dir_all(&root).unwrap();
    let victim = outside.join("victim");
    std::fs::write(&victim, b"must survive").unwrap();
    let link = root.join("dest");
    symlink(&victim, &link).unwrap();
    let temp = root.join("temp");
    std::fs::write(&temp, b"ours").unwrap();
    std::fs::rename(&temp, &link).unwrap();
    assert!(
        !std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(std::fs::read(&link).unwrap(), b"ours");
    assert_eq!(std::fs::read(&victim).unwrap(), b"must survive");
    cleanup(&root);
}

#[test]
fn a_fifo_at_a_blob_path_is_an_error_not_a_hang() {
    let (store, root, _) = scene("fifo");
    store.put(b"unrelated", "text/plain", &[]).unwrap();
    let digest = Digest::of(b"fifo");
    let blob = root.join("sha256").join(digest.hex());
    let made = std::process::Command::new("mkfifo").arg(&blob).status();
    if !made.is_ok_and(|s| s.success()) {
        cleanup(&root);
        return; // no mkfifo here
    }
    let err = store.get(&digest).unwrap_err();
    assert_eq!(err.code(), "store.io");
    assert!(err.to_string().contains("not a regular file"), "{err}");
    cleanup(&root);
}

#[test]
fn gc_while_writers_are_at_work_does_not_fail() {
    // Temporary files come and go between gc's listing and its look at each entry.
    let (store, root, _) = scene("gc-busy");
    store.put(b"first", "text/plain", &[]).unwrap();
    std::thread::scope(|scope| {
        for t in 0..4u32 {
            let store = &store;
            scope.spawn(move || {
                for i in 0..100u32 {
                    let bytes = format!("writer {t} artifact {i}");
                    store.put(bytes.as_bytes(), "text/plain", &[]).unwrap();
                }
            });
        }
        for _ in 0..50 {
            store.gc(None).unwrap();
        }
    });
    assert_eq!(store.list().unwrap().len(), 401);
    cleanup(&root);
}
