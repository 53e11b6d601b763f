//! Issue 29, load once: what an OpenAPI source derives from its document is kept by the
//! document's digest (src/openapi/cache.rs) as an index and an entry per operation, the
//! schemas' repeated parts kept once. Read back, operations are built when first needed;
//! they are the operations a derivation gives; a change of the document invalidates the
//! entry; a damaged entry is never trusted but derived again; a call through it goes on
//! the wire as a derived one does.

mod common;
#[path = "../../envelope-mcp/tests/common/tools.rs"]
mod tools;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use envelope_ops::file::RegistryFile;
use envelope_ops::load::Loaded;
use envelope_ops::openapi::cache;
use envelope_ops::{Context, codes};
use serde_json::{Value, json};

use common::servers::{Server, echo_server, fixture, free_port};

/// Loads the registry `toml` (relative paths from `dir`); no warnings.
async fn load(toml: &str, dir: &Path) -> Loaded {
    let mut file = RegistryFile::from_toml(toml).unwrap_or_else(|e| panic!("{e}"));
    file.base_dir = Some(dir.to_owned());
    let loaded = file.load().await;
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    loaded
}

/// `[openapi.<ns>]` reading `spec`, its cache in `cache` (or none).
fn registry(ns: &str, spec: &str, cache: Option<&Path>, base_url: &str) -> String {
    let cache = match cache {
        Some(dir) => format!("{:?}", dir.display().to_string()),
        None => "false".into(),
    };
    format!("[openapi.{ns}]\nspec = {spec:?}\nbaseUrl = {base_url:?}\ncache = {cache}\n")
}

/// Every spec as its JSON text (member order included), in id order.
fn texts(loaded: &Loaded) -> Vec<String> {
    let mut out = Vec::new();
    let failed = loaded.registry.visit_specs(|spec| {
        out.push(serde_json::to_string(spec).unwrap());
        true
    });
    assert!(failed.is_empty(), "{failed:?}");
    out
}

/// The same specs, or which one differs first (shown cut: a spec can be long).
fn assert_same(got: &[String], wanted: &[String], what: &str) {
    assert_eq!(got.len(), wanted.len(), "{what}: how many operations");
    if let Some(i) = (0..got.len()).find(|&i| got[i] != wanted[i]) {
        panic!(
            "{what}: operation {i} differs:\n{:.3000}\nwanted:\n{:.3000}",
            got[i], wanted[i]
        );
    }
}

/// The source's entries in the cache folder.
fn entries(cache: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(cache.join("openapi"))
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default()
}

/// A generated document shaped like GitHub's (scripts/gen_openapi.py): `operations` over
/// `schemas` component schemas in four layers of `$ref`s.
fn generated(dir: &Path, operations: u32, schemas: u32) -> PathBuf {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scripts/gen_openapi.py");
    let out = Command::new("python3")
        .arg(script)
        .args([operations.to_string(), schemas.to_string()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let path = dir.join("generated.json");
    std::fs::write(&path, out.stdout).unwrap();
    path
}

/// A read back entry gives, operation by operation, what deriving the document gives:
/// every spec equal to its text (schemas written out, `$ref`s and cycles as derived, 3.0
/// forms normalised); the entry is smaller than the schemas written out, each repeated
/// part being kept once.
#[tokio::test]
async fn a_cache_hit_gives_the_operations_a_derivation_gives() {
    let dir = tempfile::tempdir().unwrap();
    let big = generated(dir.path(), 240, 60);
    let documents = [
        big.display().to_string(),
        fixture("petstore3.yaml").display().to_string(),
        fixture("echo_api.yaml").display().to_string(),
    ];
    for (i, spec) in documents.iter().enumerate() {
        let cache = dir.path().join(format!("cache{i}"));
        let base = "http://127.0.0.1:9";
        let derived = texts(&load(&registry("c", spec, None, base), dir.path()).await);
        let first = texts(&load(&registry("c", spec, Some(&cache), base), dir.path()).await);
        assert_same(
            &first,
            &derived,
            &format!("{spec}: the load that writes the entry"),
        );
        let kept = entries(&cache);
        assert_eq!(kept.len(), 1, "{kept:?}");
        let hit = load(&registry("c", spec, Some(&cache), base), dir.path()).await;
        // Registered by id; nothing built until asked for.
        assert_eq!(hit.registry.len(), derived.len());
        assert_same(&texts(&hit), &derived, &format!("{spec}: read back"));
        if i == 0 {
            assert_eq!(derived.len(), 240);
            let written_out: usize = derived.iter().map(String::len).sum();
            let size = std::fs::metadata(&kept[0]).unwrap().len() as usize;
            assert!(
                size * 4 < written_out,
                "the entry ({size} bytes) keeps parts once ({written_out} written out)"
            );
        }
    }
}

/// What a document gives is kept by its digest; the next load reads the kept entry (a
/// change written through the cache's own writer shows up), and a changed document is read
/// again and replaces the source's old entry.
#[tokio::test]
async fn a_derived_document_is_kept_by_its_digest_and_a_change_invalidates_it() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let doc = |name: &str| {
        json!({"openapi": "3.1.0", "info": {"title": "t", "version": "1"},
            "servers": [{"url": "http://127.0.0.1:1"}],
            "paths": {"/a": {"get": {"operationId": name,
                "parameters": [{"name": "q", "in": "query", "required": true, "schema": {"type": "integer"}}],
                "responses": {"200": {"description": "ok"}}}}}})
        .to_string()
    };
    let spec = dir.path().join("api.json");
    let spec_text = spec.display().to_string();
    std::fs::write(&spec, doc("first")).unwrap();
    let toml = format!(
        "[openapi.c]\nspec = {spec_text:?}\ncache = {:?}\n",
        cache.display().to_string()
    );
    let ids = || async {
        let loaded = load(&toml, dir.path()).await;
        loaded.registry.ids().map(str::to_owned).collect::<Vec<_>>()
    };
    assert_eq!(ids().await, ["c.first"]);
    let kept = entries(&cache);
    assert_eq!(kept.len(), 1, "{kept:?}");
    // The entry is the one named by the document's digest; what it holds is what is read.
    let entry = cache::Entry::new(cache.join("openapi"), "c", &spec_text, false, &doc("first"));
    assert_eq!(entry.path(), kept[0]);
    let mut derived = entry.open().unwrap().read_all().unwrap();
    derived.operations[0].0.name = "fromCache".into();
    assert!(entry.write(&derived));
    assert_eq!(ids().await, ["c.fromCache"]);
    // Read back, the schemas are compiled on first use and still refuse a bad input.
    let loaded = load(&toml, dir.path()).await;
    let e = loaded
        .registry
        .execute("c.fromCache", json!({"q": "x"}), &Context::default())
        .await
        .unwrap_err();
    assert_eq!(e.code, codes::VALIDATION_ERROR);
    assert!(e.details.unwrap().to_string().contains("/q"));
    // Entries of other sources: a recent one stays, one not written for 31 days goes
    // when an entry is written.
    let other = |name: &str, days: u64| {
        let path = cache.join("openapi").join(name);
        std::fs::write(&path, "{}").unwrap();
        let then = std::time::SystemTime::now() - Duration::from_secs(days * 86400);
        std::fs::File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(then)
            .unwrap();
        path
    };
    let recent = other("0000000000000000-recent.ops", 1);
    let old = other("1111111111111111-old.ops", 31);
    // A changed document: read again, its entry replaces the old one.
    std::fs::write(&spec, doc("second")).unwrap();
    assert_eq!(ids().await, ["c.second"]);
    assert!(recent.exists() && !old.exists());
    std::fs::remove_file(&recent).unwrap();
    let now = entries(&cache);
    assert_eq!(now.len(), 1, "{now:?}");
    assert_ne!(now, kept);
    // `cache = false`: the kept entry is not read (a changed one would show).
    let entry = cache::Entry::new(
        cache.join("openapi"),
        "c",
        &spec_text,
        false,
        &doc("second"),
    );
    let mut derived = entry.open().unwrap().read_all().unwrap();
    derived.operations[0].0.name = "planted".into();
    assert!(entry.write(&derived));
    let uncached = format!("[openapi.c]\nspec = {spec_text:?}\ncache = false\n");
    let loaded = load(&uncached, dir.path()).await;
    assert!(loaded.registry.spec("c.second").is_some());
    assert!(loaded.registry.spec("c.planted").is_none());
}

/// A damaged entry is never trusted: one cut short, or whose index does not match its
/// digest, is derived again when the source loads; a damaged operation or shared part
/// (its index intact) is told when the operation is built, and the document is derived
/// again for it. Each time the entry is written anew.
#[tokio::test]
async fn a_damaged_entry_is_never_trusted_and_is_derived_again() {
    let dir = tempfile::tempdir().unwrap();
    let spec = generated(dir.path(), 30, 12).display().to_string();
    let cache = dir.path().join("cache");
    let base = "http://127.0.0.1:9";
    let derived = texts(&load(&registry("c", &spec, None, base), dir.path()).await);
    let toml = registry("c", &spec, Some(&cache), base);
    load(&toml, dir.path()).await;
    let path = entries(&cache).pop().unwrap();
    let good = std::fs::read(&path).unwrap();
    let intact = |what: &str| {
        assert_eq!(std::fs::read(&path).unwrap(), good, "{what}: written anew");
    };
    // Where the pieces are: the header's two lines, the index, then the data (operations
    // first, the parts last).
    let header = good
        .iter()
        .enumerate()
        .filter(|(_, b)| **b == b'\n')
        .nth(1)
        .unwrap()
        .0
        + 1;
    let index_len: usize = std::str::from_utf8(&good[..header])
        .unwrap()
        .lines()
        .nth(1)
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let data = header + index_len;
    let flip = |at: usize| {
        let mut bad = good.clone();
        // A letter for another one: still JSON, another value.
        bad[at] = if bad[at] == b'a' { b'b' } else { b'a' };
        bad
    };
    let first_letter_after = |from: usize| {
        from + good[from..]
            .iter()
            .position(u8::is_ascii_lowercase)
            .unwrap()
    };
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("cut short", good[..good.len() - 10].to_vec()),
        ("index changed", flip(first_letter_after(header + 50))),
        ("an operation changed", flip(first_letter_after(data + 20))),
        (
            "a shared part changed",
            flip(first_letter_after(good.len() - 40)),
        ),
        ("not an entry", b"not an entry".to_vec()),
    ];
    for (what, bad) in cases {
        std::fs::write(&path, &bad).unwrap();
        let loaded = load(&toml, dir.path()).await;
        assert_same(&texts(&loaded), &derived, what);
        intact(what);
    }
    // A changed operation, then the document changed before it is built: refused with a
    // clear error, never the damaged piece.
    std::fs::write(&path, flip(first_letter_after(data + 20))).unwrap();
    let loaded = load(&toml, dir.path()).await;
    std::fs::write(
        &spec,
        std::fs::read_to_string(&spec)
            .unwrap()
            .replace("1.0.0", "1.0.1"),
    )
    .unwrap();
    let failed = loaded.registry.visit_specs(|_| true);
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert!(
        failed[0].contains("the document changed since it was loaded"),
        "{failed:?}"
    );
}

/// A call through a read back entry goes on the wire as the document says (the echo
/// server shows the request), with the source's configuration applied at this load
/// (`rename`); a bad input is refused before any request.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_through_a_cache_hit_goes_on_the_wire() {
    let (_server, port) = echo_server();
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let toml = format!(
        "{}[openapi.echo.rename]\neverything = \"all\"\n",
        registry(
            "echo",
            &fixture("echo_api.yaml").display().to_string(),
            Some(&cache),
            &format!("http://127.0.0.1:{port}"),
        )
    );
    let input = json!({
        "path.id": "a b/c", "id2": ["x", "y"], "query.id": "q&1", "tags": ["t1", "t2"],
        "filter": {"color": "red"}, "X-Trace": "trace-9", "session": "s1", "body": {"k": [1, 2]}
    });
    let mut seen = Vec::new();
    for _ in 0..2 {
        let loaded = load(&toml, dir.path()).await;
        let done = loaded
            .registry
            .execute("echo.all", input.clone(), &Context::default())
            .await
            .unwrap_or_else(|e| panic!("{e:?}"));
        seen.push(done.envelope["data"].clone());
        let e = loaded
            .registry
            .execute(
                "echo.all",
                json!({"path.id": 5, "id2": ["x"]}),
                &Context::default(),
            )
            .await
            .unwrap_err();
        assert_eq!(e.code, codes::VALIDATION_ERROR);
    }
    assert_eq!(entries(&cache).len(), 1);
    let hit: &Value = &seen[1];
    assert_eq!(hit["method"], "POST");
    assert_eq!(hit["path"], "/echo/a%20b%2Fc/.x,y");
    assert_eq!(hit["query"], "id=q%261&tags=t1&tags=t2&filter[color]=red");
    assert_eq!(hit["headers"]["x-trace"], "trace-9");
    assert_eq!(hit["headers"]["cookie"], "session=s1");
    assert_eq!(hit["body"], json!({"k": [1, 2]}));
    // The same request as the load that derived the document.
    let without_headers = |v: &Value| {
        let mut v = v.clone();
        v["headers"] = Value::Null;
        v
    };
    assert_eq!(without_headers(&seen[0]), without_headers(hit));
}

/// GitHub's document (npm `@octokit/openapi`, installed by scripts/install-mcp-tools.sh):
/// its 1,223 operations read back equal the derived ones, and the entry is a fraction of
/// the document.
#[tokio::test]
async fn githubs_document_read_back_gives_every_operation_as_derived() {
    let spec = tools::tool("documents/@octokit/openapi/generated/api.github.com.json");
    let spec = spec.display().to_string();
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let toml = registry("gh", &spec, Some(&cache), "http://127.0.0.1:9");
    let derived = texts(&load(&toml, dir.path()).await);
    assert_eq!(derived.len(), 1223);
    let hit = load(&toml, dir.path()).await;
    assert_same(&texts(&hit), &derived, "GitHub's document read back");
    let entry = std::fs::metadata(entries(&cache).pop().unwrap())
        .unwrap()
        .len();
    let document = std::fs::metadata(&spec).unwrap().len();
    assert!(
        entry < document / 2,
        "entry {entry} bytes, document {document}"
    );
}

/// A fetched document's entry: kept by the digest of the text fetched; a damaged
/// operation is derived again from the text kept since the load (a synchronous build
/// cannot fetch it again).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fetched_documents_damaged_entry_is_derived_again_from_its_text() {
    let dir = tempfile::tempdir().unwrap();
    generated(dir.path(), 20, 8);
    let port = free_port();
    let mut child = Command::new("python3")
        .args([
            "-m",
            "http.server",
            "--bind",
            "127.0.0.1",
            &port.to_string(),
        ])
        .current_dir(dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let ready = Instant::now() + Duration::from_secs(60);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            child.try_wait().unwrap().is_none(),
            "the file server exited"
        );
        assert!(Instant::now() < ready, "the file server did not listen");
        std::thread::sleep(Duration::from_millis(50));
    }
    let _server = Server(child);
    let url = format!("http://127.0.0.1:{port}/generated.json");
    let cache = dir.path().join("cache");
    let base = "http://127.0.0.1:9";
    let derived = texts(&load(&registry("c", &url, None, base), dir.path()).await);
    let toml = registry("c", &url, Some(&cache), base);
    assert_same(&texts(&load(&toml, dir.path()).await), &derived, "first");
    let path = entries(&cache).pop().unwrap();
    let good = std::fs::read(&path).unwrap();
    // The last byte of the data is in the last part: changed, still the same length.
    let mut bad = good.clone();
    let at = bad.len()
        - 3
        - bad
            .iter()
            .rev()
            .skip(2)
            .position(u8::is_ascii_lowercase)
            .unwrap();
    bad[at] = if bad[at] == b'a' { b'b' } else { b'a' };
    std::fs::write(&path, &bad).unwrap();
    let loaded = load(&toml, dir.path()).await;
    // The document is gone from the server: the text kept at the load is what is read.
    std::fs::remove_file(dir.path().join("generated.json")).unwrap();
    assert_same(&texts(&loaded), &derived, "derived again from the text");
    assert_eq!(std::fs::read(&path).unwrap(), good, "written anew");
}
