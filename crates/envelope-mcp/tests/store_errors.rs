//! Issue 26: store errors that reach an MCP client name no path of the server (the store's
//! folder stays in the proxy's own log), and echoed input is cut.

use envelope_mcp::drill;
use envelope_mcp::revision::Revision;
use envelope_mcp::shaping::{CallContext, ToolSettings, shape_result};
use envelope_mcp::stats::log;
use envelope_store::{Digest, FileStore, Store};

/// A fresh folder for one test, under a name that must not reach a client.
fn place(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "envelope-secret-server-place-{name}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn a_store_that_cannot_be_written_is_reported_without_its_path() {
    let dir = place("put");
    // The store's root is a file: every put fails with an I/O error.
    let root = dir.join("store");
    std::fs::write(&root, b"not a folder").unwrap();
    let store = FileStore::new(&root);
    let call = CallContext::new("cat", None, Revision::V2025_06_18);
    let settings = ToolSettings {
        limit: 1024,
        ..ToolSettings::default()
    };
    let big = serde_json::json!({"content": [{"type": "text", "text": "line\n".repeat(2000)}]});
    let (result, logged) = log::capture(log::Level::Warn, || {
        shape_result(big.to_string().as_bytes(), &call, &settings, &store)
    });
    let err = result.unwrap_err();
    assert_eq!(err.code(), "shape.store");
    let text = err.to_string();
    assert!(
        !text.contains("envelope-secret-server-place"),
        "the client's text names the server's folder: {text}"
    );
    assert!(text.contains("the store's folder"), "{text}");
    // The proxy's own log keeps the path.
    assert!(logged.contains("store.put_failed"), "{logged}");
    assert!(logged.contains(&*root.to_string_lossy()), "{logged}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_store_that_cannot_be_read_is_reported_without_its_path() {
    let dir = place("read");
    let store = FileStore::new(dir.join("store"));
    let digest = store.put(b"{}", "application/json", &[]).unwrap().digest;
    // The blob replaced by a folder: reading it is an I/O error.
    let blob = dir.join("store").join("sha256").join(digest.hex());
    std::fs::remove_file(&blob).unwrap();
    std::fs::create_dir(&blob).unwrap();
    let err = drill::read_resource(&drill::artifact_uri(&digest), &store).unwrap_err();
    assert!(
        !err.message.contains("envelope-secret-server-place"),
        "{}",
        err.message
    );
    assert!(
        err.message
            .contains(&format!("sha256/{}: not a regular file", digest.hex())),
        "{}",
        err.message
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_long_malformed_digest_is_not_echoed_whole() {
    let long = format!("sha256:{}", "Q".repeat(100_000));
    let err = long.parse::<Digest>().unwrap_err().to_string();
    assert!(err.len() < 400, "{} bytes", err.len());
    assert!(
        err.contains('…') && err.contains("100007 characters"),
        "{err}"
    );
}
