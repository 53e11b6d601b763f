//! Issue 29, "Done means": the operations engine on two large real API descriptions, as
//! their vendors publish them in npm packages (installed by scripts/install-mcp-tools.sh
//! into `<tools>/documents`, pinned versions): GitHub's REST API (`@octokit/openapi`,
//! `generated/api.github.com.json`, 13 MB) and Twilio's core API (`@twilio-alpha/mcp`,
//! `twilio-oai/spec/yaml/twilio_api_v2010.yaml`). Each document is loaded whole (every
//! operation registers), then operations of every request kind it has are called twice:
//! through Prism started from the same document (it checks each request against the
//! document and answers from it) and through the local echo server, which gives back the
//! exact request on the wire (method, path, query, headers, body bytes).
//!
//! Nothing is skipped: a missing document, Prism or Node fails the test naming the install
//! script (tools.rs). One test per document, so each document is read once per test (the
//! second registry of the same source, pointing at the echo server, is read from the load
//! cache the first one wrote).

#[path = "../../envelope-mcp/tests/common/tools.rs"]
mod tools;

mod common;
use common::assert_valid_envelope;
use common::servers::{Server, echo_server, free_port, wait_for};

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use base64::Engine as _;
use envelope_ops::file::RegistryFile;
use envelope_ops::load::Loaded;
use envelope_ops::{Context, OperationType, Registry, codes};
use serde_json::{Value, json};

/// GitHub's document in its package (at the version the install script pins).
const GITHUB: &str = "@octokit/openapi/generated/api.github.com.json";
/// Twilio's core API (2010-04-01) in the Twilio MCP server's package.
const TWILIO: &str = "@twilio-alpha/mcp/twilio-oai/spec/yaml/twilio_api_v2010.yaml";
/// SIDs as Twilio's document writes them (`^AC[0-9a-fA-F]{32}$`): checked before sending.
const ACCOUNT: &str = "ACaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
const MESSAGE: &str = "SMaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";

fn document(relative: &str) -> PathBuf {
    tools::tool(&format!("documents/{relative}"))
}

/// Prism mocking `spec` on 127.0.0.1, started: [`Prism::ready`] waits until it listens
/// (it reads the document first), so that the test loads the document meanwhile.
struct Prism(Server, u16);

impl Prism {
    fn start(spec: &Path) -> Prism {
        let port = free_port();
        let child = Command::new(tools::node22())
            .arg(tools::tool(
                "prism/node_modules/@stoplight/prism-cli/dist/index.js",
            ))
            .args(["mock", "-h", "127.0.0.1", "-p", &port.to_string()])
            .arg(spec)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        Prism(Server(child), port)
    }

    fn ready(&mut self) {
        wait_for(self.1, "prism", &mut self.0.0);
    }
}

/// One `openapi.<ns>` source over `spec`, its load cache in `cache` (a folder of the test,
/// so that a run never reads another run's entry, and the second load of a test reads the
/// first one's).
async fn load(ns: &str, spec: &Path, base_url: &str, extra: &str, cache: &Path) -> Loaded {
    let toml = format!(
        "[openapi.{ns}]\nspec = {:?}\nbaseUrl = {base_url:?}\ncache = {:?}\ntimeout = 60\n{extra}\n",
        spec.display().to_string(),
        cache.display().to_string(),
    );
    let file = RegistryFile::from_toml(&toml).unwrap_or_else(|e| panic!("{e}"));
    let started = Instant::now();
    let loaded = file.load().await;
    eprintln!("{ns}: loaded in {:.1?}", started.elapsed());
    loaded
}

/// The number of operations (path × method) the document itself has, counted from the
/// parsed document: what the registry must hold, every one.
fn operations_in(doc: &Value) -> usize {
    const METHODS: [&str; 8] = [
        "get", "put", "post", "delete", "options", "head", "patch", "trace",
    ];
    doc["paths"]
        .as_object()
        .unwrap()
        .values()
        .map(|item| METHODS.iter().filter(|m| item.get(**m).is_some()).count())
        .sum()
}

/// The ids of namespace `ns`: all distinct (the registry is keyed by them), counted.
fn ids(registry: &Registry, ns: &str) -> BTreeSet<String> {
    let ids: Vec<String> = registry
        .specs()
        .filter(|s| s.namespace == ns)
        .map(|s| s.id())
        .collect();
    let distinct: BTreeSet<String> = ids.iter().cloned().collect();
    assert_eq!(distinct.len(), ids.len(), "ids are unique");
    distinct
}

/// A call that succeeds, its envelope valid: (status, data).
async fn call(registry: &Registry, id: &str, input: Value) -> (u64, Value) {
    let done = registry
        .execute(id, input, &Context::default())
        .await
        .unwrap_or_else(|e| panic!("{id}: {} {:?}", e.message, e.details));
    assert_valid_envelope(&done.envelope);
    (
        done.envelope["meta"]["statusCode"].as_u64().unwrap(),
        done.envelope["data"].clone(),
    )
}

/// What the echo server saw. It answers as text (the source sends `X-Echo-Content-Type:
/// text/plain`): a JSON answer would be cast to the operation's output schema (an issue
/// list's array), which the echo's object is not.
async fn seen(registry: &Registry, id: &str, input: Value) -> Value {
    let (status, data) = call(registry, id, input).await;
    assert_eq!(status, 200, "{data}");
    serde_json::from_str(data.as_str().unwrap()).unwrap()
}

/// Makes the echo server answer as text (see [`seen`]).
const AS_TEXT: &str = "\"X-Echo-Content-Type\" = \"text/plain\"";

fn raw(seen: &Value) -> Vec<u8> {
    base64::engine::general_purpose::STANDARD
        .decode(seen["raw"].as_str().unwrap())
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn github_every_operation_loads_and_each_request_kind_is_right_through_prism_and_on_the_wire()
{
    let spec = document(GITHUB);
    let doc: Value = serde_json::from_slice(&std::fs::read(&spec).unwrap()).unwrap();
    let in_document = operations_in(&doc);
    // The package's version is pinned: its count is known (issue 29 counted 1,223).
    assert_eq!(in_document, 1223);
    let cache = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let mut prism = Prism::start(&spec);
    let prism_port = prism.1;

    // GitHub's document has no security schemes: a token is a configured header the
    // echo server shows. Any set variable will do as its source.
    let extra = "headers = { \"X-GitHub-Api-Version\" = \"2022-11-28\" }\nauth = { type = \"bearer\", tokenEnv = \"PATH\" }";
    let loaded = load(
        "gh",
        &spec,
        &format!("http://127.0.0.1:{prism_port}"),
        extra,
        cache.path(),
    )
    .await;
    prism.ready();
    eprintln!(
        "github: loaded and prism listening in {:.1?}",
        started.elapsed()
    );
    // Every operation registers, nothing read with a warning.
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let registry = &loaded.registry;
    let ids = ids(registry, "gh");
    assert_eq!(ids.len(), in_document, "every operation of the document");
    // Named by their operationIds (GitHub gives each one).
    assert!(ids.contains("gh.repos/upload-release-asset"));
    let kinds = |kind| {
        registry
            .specs()
            .filter(|s| s.namespace == "gh" && s.kind == kind)
            .count()
    };
    // GitHub has no event streams: GETs are queries, the rest mutations.
    assert_eq!(kinds(OperationType::Subscription), 0);
    assert_eq!(
        kinds(OperationType::Query) + kinds(OperationType::Mutation),
        in_document
    );

    // Through Prism, which checks each request against the document. Path and query
    // parameters:
    let (status, data) = call(
        registry,
        "gh.issues/list-for-repo",
        json!({"owner": "octo", "repo": "hello world", "state": "open", "labels": "bug,ui", "per_page": 5}),
    )
    .await;
    assert_eq!(status, 200);
    assert!(data.is_array(), "{data}");
    // A JSON body (required `title`), path parameters:
    let (status, data) = call(
        registry,
        "gh.issues/create",
        json!({"owner": "octo", "repo": "r", "body": {"title": "Found a bug", "labels": ["bug"]}}),
    )
    .await;
    assert_eq!(status, 201);
    assert!(data["number"].is_u64(), "{data}");
    // PATCH with a JSON body and an integer path parameter:
    let (status, _) = call(
        registry,
        "gh.issues/update",
        json!({"owner": "octo", "repo": "r", "issue_number": 7, "body": {"state": "closed"}}),
    )
    .await;
    assert_eq!(status, 200);
    // A text/plain body (Markdown rendered raw): Prism answers its text/html example.
    let (status, data) = call(
        registry,
        "gh.markdown/render-raw",
        json!({"body": "# Hello **world**"}),
    )
    .await;
    assert_eq!(status, 200);
    assert!(data.as_str().unwrap().contains("<strong>"), "{data}");
    // The release-asset upload: an octet-stream body from base64, a required query; its
    // operation-level server (uploads.github.com) gives way to `baseUrl` (the mock).
    let (status, data) = call(
        registry,
        "gh.repos/upload-release-asset",
        json!({"owner": "octo", "repo": "r", "release_id": 1, "name": "notes.txt", "body": "aGVsbG8="}),
    )
    .await;
    assert_eq!(status, 201);
    assert!(data["browser_download_url"].is_string(), "{data}");
    // Our own validation first, with the document's schema: nothing is sent.
    let e = registry
        .execute(
            "gh.issues/create",
            json!({"owner": "octo", "repo": "r", "body": {"labels": ["bug"]}}),
            &Context::default(),
        )
        .await
        .unwrap_err();
    assert_eq!(e.code, codes::VALIDATION_ERROR);
    assert!(
        e.details.unwrap()["findings"].to_string().contains("title"),
        "the missing title is named"
    );
    // An empty path parameter or required query value would make a request nothing can
    // answer (`/repos//r/issues`, `q=`): refused, naming the input (schemathesis found it).
    for (id, input, pointer) in [
        (
            "gh.issues/create",
            json!({"owner": "", "repo": "r", "body": {"title": "t"}}),
            "/owner",
        ),
        ("gh.search/code", json!({"q": ""}), "/q"),
    ] {
        let e = registry
            .execute(id, input, &Context::default())
            .await
            .unwrap_err();
        assert_eq!(e.code, codes::VALIDATION_ERROR, "{id}");
        assert!(
            e.details.unwrap()["findings"].to_string().contains(pointer),
            "{id}: {pointer}"
        );
    }
    drop(loaded);

    // The same document against the echo server: the exact request on the wire. The same
    // source read again (from the entry the first load kept).
    let (_echo, echo_port) = echo_server();
    let loaded = load(
        "gh",
        &spec,
        &format!("http://127.0.0.1:{echo_port}/echo"),
        &extra.replace("2022-11-28\" }", &format!("2022-11-28\", {AS_TEXT} }}")),
        cache.path(),
    )
    .await;
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let registry = &loaded.registry;
    assert_eq!(registry.specs().count(), in_document);
    let token = std::env::var("PATH").unwrap();

    let wire = seen(
        registry,
        "gh.issues/list-for-repo",
        json!({"owner": "octo", "repo": "hello world", "state": "open", "labels": "bug,ui", "per_page": 5}),
    )
    .await;
    assert_eq!(wire["method"], "GET");
    // A space in a path parameter percent-encoded; the query in the document's order,
    // `,` in a form value encoded.
    assert_eq!(wire["path"], "/echo/repos/octo/hello%20world/issues");
    assert_eq!(wire["query"], "state=open&labels=bug%2Cui&per_page=5");
    assert_eq!(wire["bodyBytes"], 0);
    let headers = &wire["headers"];
    assert_eq!(headers["authorization"], format!("Bearer {token}"));
    assert_eq!(headers["x-github-api-version"], "2022-11-28");
    assert!(
        headers["accept"]
            .as_str()
            .unwrap()
            .starts_with("application/json"),
        "{headers}"
    );
    assert!(headers.get("content-type").is_none(), "{headers}");

    let wire = seen(
        registry,
        "gh.issues/create",
        json!({"owner": "octo", "repo": "r", "body": {"title": "Found a bug", "labels": ["bug"]}}),
    )
    .await;
    assert_eq!(
        (wire["method"].as_str(), wire["path"].as_str()),
        (Some("POST"), Some("/echo/repos/octo/r/issues"))
    );
    assert_eq!(wire["headers"]["content-type"], "application/json");
    assert_eq!(
        wire["body"],
        json!({"title": "Found a bug", "labels": ["bug"]})
    );

    let wire = seen(
        registry,
        "gh.issues/update",
        json!({"owner": "octo", "repo": "r", "issue_number": 7, "body": {"state": "closed"}}),
    )
    .await;
    assert_eq!(
        (wire["method"].as_str(), wire["path"].as_str()),
        (Some("PATCH"), Some("/echo/repos/octo/r/issues/7"))
    );
    assert_eq!(wire["body"], json!({"state": "closed"}));

    // text/plain, the document's first type of the two it offers, the text as it is.
    let wire = seen(
        registry,
        "gh.markdown/render-raw",
        json!({"body": "# Hello **world** ✓"}),
    )
    .await;
    assert_eq!(wire["headers"]["content-type"], "text/plain");
    assert_eq!(raw(&wire), "# Hello **world** ✓".as_bytes());

    // Bytes: the decoded base64, byte for byte (not UTF-8), with the query's name.
    let bytes: Vec<u8> = vec![0, 159, 146, 150, 255, b'\n'];
    let wire = seen(
        registry,
        "gh.repos/upload-release-asset",
        json!({"owner": "octo", "repo": "r", "release_id": 1, "name": "a b.bin", "label": "Build",
               "body": base64::engine::general_purpose::STANDARD.encode(&bytes)}),
    )
    .await;
    assert_eq!(wire["path"], "/echo/repos/octo/r/releases/1/assets");
    assert_eq!(wire["query"], "name=a%20b.bin&label=Build");
    assert_eq!(wire["headers"]["content-type"], "application/octet-stream");
    assert_eq!(raw(&wire), bytes);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twilio_every_operation_loads_and_form_bodies_are_right_through_prism_and_on_the_wire() {
    let spec = document(TWILIO);
    let doc: Value = yaml_doc(&spec);
    let in_document = operations_in(&doc);
    assert_eq!(in_document, 197);
    let cache = tempfile::tempdir().unwrap();
    let mut prism = Prism::start(&spec);
    let prism_port = prism.1;

    // Twilio's security is HTTP basic (account SID : auth token). Prism requires the
    // decoded credentials to have exactly one `:`; `auth = basic` reads them from an
    // environment variable, and none with such a value is sure to be set (setting one
    // would race the other test's threads), so Prism gets them as a configured header.
    // The echo server below shows `auth = basic` itself on the wire.
    let basic = base64::engine::general_purpose::STANDARD.encode(format!("{ACCOUNT}:token"));
    let loaded = load(
        "twilio",
        &spec,
        &format!("http://127.0.0.1:{prism_port}"),
        &format!("headers = {{ Authorization = \"Basic {basic}\" }}"),
        cache.path(),
    )
    .await;
    prism.ready();
    // Read as it is, with no warning; every operation registers.
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let registry = &loaded.registry;
    let ids = ids(registry, "twilio");
    assert_eq!(ids.len(), in_document);
    // Its creates and updates are form-urlencoded (62 operations): every field is an input
    // (the first version of from_openapi dropped these bodies, sending the request empty).
    let create = registry.spec("twilio.CreateMessage").unwrap();
    let properties = create.input_schema["properties"].as_object().unwrap();
    for field in ["AccountSid", "To", "From", "Body", "MediaUrl", "SendAt"] {
        assert!(properties.contains_key(field), "{field}: {properties:?}");
    }
    assert_eq!(create.input_schema["required"], json!(["AccountSid"]));
    let forms = registry
        .specs()
        .filter(|s| s.namespace == "twilio")
        .filter(|s| s.input_schema["properties"].as_object().unwrap().len() > 1)
        .filter(|s| s.kind == OperationType::Mutation)
        .count();
    assert!(forms >= 62, "{forms}");

    // Through Prism: it checks the form body (types, formats) and the basic credentials.
    // No array field: Prism 5.14.2 reads only `MediaUrl[]=a&MediaUrl[]=b` as an array,
    // while OpenAPI's form style (explode, the default) and Twilio's own documentation
    // repeat the name (`MediaUrl=a&MediaUrl=b`, as sent: shown on the wire below).
    let (status, data) = call(
        registry,
        "twilio.CreateMessage",
        json!({"AccountSid": ACCOUNT, "To": "+15558675310",
               "From": "+15017122661", "Body": "Hi there", "SendAsMms": true, "Attempt": 2}),
    )
    .await;
    assert_eq!(status, 201);
    assert!(data["sid"].is_string(), "{data}");
    // A form update whose path and form both have `Sid`-like names, then path and query
    // parameters, then a DELETE.
    let (status, _) = call(
        registry,
        "twilio.UpdateMessage",
        json!({"AccountSid": ACCOUNT, "Sid": MESSAGE, "Body": ""}),
    )
    .await;
    assert_eq!(status, 200);
    let (status, data) = call(
        registry,
        "twilio.ListMessage",
        json!({"AccountSid": ACCOUNT, "To": "+15558675310", "PageSize": 20}),
    )
    .await;
    assert_eq!(status, 200);
    assert!(data["messages"].is_array(), "{data}");
    let (status, _) = call(
        registry,
        "twilio.DeleteMessage",
        json!({"AccountSid": ACCOUNT, "Sid": MESSAGE}),
    )
    .await;
    assert_eq!(status, 204);
    drop(loaded);

    let (_echo, echo_port) = echo_server();
    // Any set variable will do as the token's source here: it is encoded as it is.
    let loaded = load(
        "twilio",
        &spec,
        &format!("http://127.0.0.1:{echo_port}/echo"),
        &format!("headers = {{ {AS_TEXT} }}\nauth = {{ type = \"basic\", tokenEnv = \"PATH\" }}"),
        cache.path(),
    )
    .await;
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let registry = &loaded.registry;
    let credentials =
        base64::engine::general_purpose::STANDARD.encode(std::env::var("PATH").unwrap());

    let wire = seen(
        registry,
        "twilio.CreateMessage",
        json!({"AccountSid": ACCOUNT, "To": "+1 555", "From": "+15017122661", "Body": "Hi & bye",
               "MediaUrl": ["https://example.com/a.png", "b"], "ProvideFeedback": true, "MaxPrice": 0.5}),
    )
    .await;
    assert_eq!(wire["method"], "POST");
    assert_eq!(
        wire["path"],
        format!("/echo/2010-04-01/Accounts/{ACCOUNT}/Messages.json")
    );
    assert_eq!(wire["query"], "");
    assert_eq!(
        wire["headers"]["content-type"],
        "application/x-www-form-urlencoded"
    );
    assert_eq!(
        wire["headers"]["authorization"],
        format!("Basic {credentials}")
    );
    // The fields in the schema's order, arrays repeated, names and values percent-encoded
    // (`+`, space, `&`, `:` and `/`), booleans and numbers as JSON writes them.
    assert_eq!(
        String::from_utf8(raw(&wire)).unwrap(),
        "To=%2B1%20555&MaxPrice=0.5&ProvideFeedback=true&From=%2B15017122661&Body=Hi%20%26%20bye\
         &MediaUrl=https%3A%2F%2Fexample.com%2Fa.png&MediaUrl=b"
    );

    let wire = seen(
        registry,
        "twilio.ListMessage",
        json!({"AccountSid": ACCOUNT, "To": "+15558675310", "DateSent<": "2026-01-01", "PageSize": 20}),
    )
    .await;
    assert_eq!(wire["method"], "GET");
    assert_eq!(
        wire["path"],
        format!("/echo/2010-04-01/Accounts/{ACCOUNT}/Messages.json")
    );
    // A parameter named with `<` (Twilio's date ranges), encoded as a name.
    assert_eq!(
        wire["query"],
        "To=%2B15558675310&DateSent%3C=2026-01-01&PageSize=20"
    );
    assert_eq!(wire["bodyBytes"], 0);

    // No form field given and the body not required: no body, no Content-Type.
    let wire = seen(
        registry,
        "twilio.UpdateMessage",
        json!({"AccountSid": ACCOUNT, "Sid": MESSAGE}),
    )
    .await;
    assert_eq!(
        wire["path"],
        format!("/echo/2010-04-01/Accounts/{ACCOUNT}/Messages/{MESSAGE}.json")
    );
    assert_eq!(wire["bodyBytes"], 0);
    assert!(wire["headers"].get("content-type").is_none(), "{wire}");

    let wire = seen(
        registry,
        "twilio.DeleteMessage",
        json!({"AccountSid": ACCOUNT, "Sid": MESSAGE}),
    )
    .await;
    assert_eq!(wire["method"], "DELETE");
}

/// Twilio's YAML read by the test itself, for the count of its paths' operations.
fn yaml_doc(path: &Path) -> Value {
    yaml_serde::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}
