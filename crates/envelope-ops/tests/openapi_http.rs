//! from_openapi end to end: the Swagger Petstore's published document served by a real
//! mock server (Prism, installed by scripts/install-mcp-tools.sh) on 127.0.0.1, and an echo
//! API of ours (tests/fixtures/echo_api.yaml + http_echo_server.py) that shows exactly where
//! each parameter went and how it was written, plus its server-sent events.

#[path = "../../envelope-mcp/tests/common/tools.rs"]
mod tools;

mod common;
use common::assert_valid_envelope;
use common::servers::{Server, echo_server, fixture, free_port, wait_for};

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use envelope_ops::file::RegistryFile;
use envelope_ops::load::Loaded;
use envelope_ops::{Context, OperationType, codes};
use futures::StreamExt;
use serde_json::{Value, json};

fn prism() -> (Server, u16) {
    let node = tools::node22();
    let prism = tools::tool("prism/node_modules/@stoplight/prism-cli/dist/index.js");
    let port = free_port();
    let mut child = Command::new(node)
        .arg(prism)
        .args(["mock", "-h", "127.0.0.1", "-p", &port.to_string()])
        .arg(fixture("petstore3.yaml"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for(port, "prism", &mut child);
    (Server(child), port)
}

async fn load(toml: &str) -> Loaded {
    let file = RegistryFile::from_toml(toml).unwrap_or_else(|e| panic!("{e}"));
    let loaded = file.load().await;
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    loaded
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_petstore_through_prism() {
    let (_prism, port) = prism();
    let loaded = load(&format!(
        // Prism enforces the document's security (OAuth2 bearer for most operations) but
        // checks the token's presence only: any set variable will do as its source.
        "[openapi.pets]\nspec = {:?}\nbaseUrl = \"http://127.0.0.1:{port}\"\nauth = {{ type = \"bearer\", tokenEnv = \"PATH\" }}\n\n\
         [openapi.missing]\nspec = {:?}\nbaseUrl = \"http://127.0.0.1:{port}\"\nheaders = {{ Prefer = \"code=404\" }}\nauth = {{ type = \"bearer\", tokenEnv = \"PATH\" }}\n\n\
         [openapi.noauth]\nspec = {:?}\nbaseUrl = \"http://127.0.0.1:{port}\"\n",
        fixture("petstore3.yaml").display().to_string(),
        fixture("petstore3.yaml").display().to_string(),
        fixture("petstore3.yaml").display().to_string(),
    ))
    .await;
    let registry = &loaded.registry;
    let get = registry
        .spec("pets.getPetById")
        .expect("one operation per operationId");
    assert_eq!(get.kind, OperationType::Query);
    assert_eq!(get.version, "1.0.27-SNAPSHOT");
    assert_eq!(get.input_schema["required"], json!(["petId"]));
    assert_eq!(
        registry.spec("pets.addPet").unwrap().kind,
        OperationType::Mutation
    );
    assert_eq!(
        registry.spec("pets.deletePet").unwrap().input_schema["properties"]["api_key"]["type"],
        "string"
    );
    assert_eq!(
        registry.specs().filter(|s| s.namespace == "pets").count(),
        19
    );

    let context = Context::default();
    let pet = registry
        .execute("pets.getPetById", json!({"petId": 10}), &context)
        .await
        .unwrap();
    assert_valid_envelope(&pet.envelope);
    let meta = &pet.envelope["meta"];
    assert_eq!(
        (meta["source"].as_str(), meta["statusCode"].as_u64()),
        (Some("http"), Some(200))
    );
    assert!(
        meta["contentType"]
            .as_str()
            .unwrap()
            .starts_with("application/json")
    );
    assert!(pet.envelope["data"]["name"].is_string(), "{}", pet.envelope);
    assert!(pet.warnings.is_empty(), "{:?}", pet.warnings);

    // Prism validates requests: an array query parameter, exploded, and a JSON body.
    let found = registry
        .execute("pets.findPetsByTags", json!({"tags": ["a", "b"]}), &context)
        .await
        .unwrap();
    assert_eq!(found.envelope["meta"]["statusCode"], 200);
    assert!(found.envelope["data"].is_array());
    let body = json!({"id": 10, "name": "doggie", "photoUrls": ["u"], "status": "available"});
    let added = registry
        .execute("pets.addPet", json!({"body": body}), &context)
        .await
        .unwrap();
    assert_eq!(added.envelope["meta"]["statusCode"], 200);
    // A body the document's schema refuses is refused here, before any request.
    let bad = registry
        .execute("pets.addPet", json!({"body": {"name": 3}}), &context)
        .await
        .unwrap_err();
    assert_eq!(bad.code, codes::VALIDATION_ERROR);
    let findings = bad.details.unwrap()["findings"].to_string();
    assert!(
        findings.contains("/body/name") && findings.contains("photoUrls"),
        "{findings}"
    );

    // Our own validation comes first: nothing is sent.
    let e = registry
        .execute("pets.getPetById", json!({"petId": "ten"}), &context)
        .await
        .unwrap_err();
    assert_eq!(e.code, codes::VALIDATION_ERROR);

    // Every call of this source asks Prism for the 404 response.
    let e = registry
        .execute("missing.getPetById", json!({"petId": 10}), &context)
        .await
        .unwrap_err();
    assert_eq!(e.code, codes::EXECUTION_ERROR);
    assert_eq!(e.details.unwrap()["status"], 404);
    assert!(
        e.message.contains("openapi.missing") && e.message.contains("404"),
        "{}",
        e.message
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_parameter_goes_where_it_belongs() {
    let (_server, port) = echo_server();
    let loaded = load(&format!(
        "[openapi.echo]\nspec = {:?}\nbaseUrl = \"http://127.0.0.1:{port}\"\nauth = {{ type = \"bearer\", tokenEnv = \"PATH\" }}\n",
        fixture("echo_api.yaml").display().to_string()
    ))
    .await;
    let spec = loaded.registry.spec("echo.everything").unwrap();
    let keys: Vec<&String> = spec.input_schema["properties"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(
        keys,
        [
            "path.id", "id2", "query.id", "tags", "pipes", "filter", "X-Trace", "session", "body"
        ]
    );
    let input = json!({
        "path.id": "a b/c", "id2": ["x", "y"], "query.id": "q&1", "tags": ["t1", "t2"],
        "pipes": [1, 2, 3], "filter": {"color": "red", "size": "L"},
        "X-Trace": "trace-9", "session": "s1", "body": 0
    });
    let done = loaded
        .registry
        .execute("echo.everything", input, &Context::default())
        .await
        .unwrap();
    assert_valid_envelope(&done.envelope);
    let seen = &done.envelope["data"];
    assert_eq!(seen["method"], "POST");
    // label, not exploded: `.x,y` (the style table of the spec).
    assert_eq!(seen["path"], "/echo/a%20b%2Fc/.x,y");
    assert_eq!(
        seen["query"],
        "id=q%261&tags=t1&tags=t2&pipes=1|2|3&filter[color]=red&filter[size]=L"
    );
    assert_eq!(seen["headers"]["x-trace"], "trace-9");
    assert_eq!(seen["headers"]["cookie"], "session=s1");
    assert!(
        seen["headers"]["accept"]
            .as_str()
            .unwrap()
            .starts_with("application/json")
    );
    assert!(
        seen["headers"]["authorization"]
            .as_str()
            .unwrap()
            .starts_with("Bearer /")
    );
    // A falsy body is sent.
    assert_eq!(
        (seen["body"].clone(), seen["bodyBytes"].clone()),
        (json!(0), json!(1))
    );

    // A path parameter that would make a `.` or `..` segment is refused before sending:
    // URL parsers resolve it (encoded too), so the request would reach another path
    // (issue 29: GitHub's `repo: ".."` went to `/repos/issues/1/labels`). Dots inside a
    // segment are sent as they are.
    for id in [".", ".."] {
        let e = loaded
            .registry
            .execute(
                "echo.everything",
                json!({"path.id": id, "id2": ["x"], "body": 0}),
                &Context::default(),
            )
            .await
            .unwrap_err();
        assert_eq!(e.code, codes::VALIDATION_ERROR, "{id}");
        // By the input schema (the parameter is a plain string): its pointer.
        let findings = e.details.unwrap()["findings"].to_string();
        assert!(findings.contains("/path.id"), "{findings}");
    }
    // In another style the schema cannot say it: the request is refused when built (label
    // style writes the array ["."] as `..`).
    let e = loaded
        .registry
        .execute(
            "echo.everything",
            json!({"path.id": "a", "id2": ["."], "body": 0}),
            &Context::default(),
        )
        .await
        .unwrap_err();
    assert_eq!(e.code, codes::VALIDATION_ERROR);
    assert!(e.message.starts_with("id2: "), "{}", e.message);
    let done = loaded
        .registry
        .execute(
            "echo.everything",
            json!({"path.id": "...", "id2": ["a..b"], "body": 0}),
            &Context::default(),
        )
        .await
        .unwrap();
    assert_eq!(done.envelope["data"]["path"], "/echo/.../.a..b");

    // An error status: code, status, headers, body.
    let e = loaded
        .registry
        .execute("echo.down", json!({}), &Context::default())
        .await
        .unwrap_err();
    let details = e.details.unwrap();
    assert_eq!(details["status"], 503);
    assert_eq!(details["headers"]["retry-after"], "30");
    assert_eq!(details["body"]["title"], "down for maintenance");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_sent_events_are_a_subscription() {
    let (_server, port) = echo_server();
    let loaded = load(&format!(
        "[openapi.echo]\nspec = {:?}\nbaseUrl = \"http://127.0.0.1:{port}\"\n",
        fixture("echo_api.yaml").display().to_string()
    ))
    .await;
    assert_eq!(
        loaded.registry.spec("echo.ticks").unwrap().kind,
        OperationType::Subscription
    );
    let context = Context::default();
    let items: Vec<Value> = loaded
        .registry
        .subscribe("echo.ticks", json!({}), &context)
        .unwrap()
        .map(|item| item.unwrap().envelope)
        .collect()
        .await;
    assert_eq!(items.len(), 4, "{items:?}");
    for env in &items {
        assert_valid_envelope(env);
        assert_eq!(env["meta"]["contentType"], "text/event-stream");
    }
    assert_eq!(items[0]["data"], json!({"n": 1}));
    assert_eq!(
        (
            items[0]["meta"]["sseEvent"].as_str(),
            items[0]["meta"]["sseId"].as_str()
        ),
        (Some("tick"), Some("1"))
    );
    assert_eq!(items[1]["data"], "first line\nsecond line");
    assert!(items[1]["meta"].get("sseEvent").is_none());
    assert_eq!(
        items[2]["data"],
        json!({"n": 3}),
        "an event split across chunks"
    );
    assert_eq!(items[3]["data"], "not json at all");
}

#[tokio::test]
async fn a_bad_document_or_server_names_the_source_and_the_rest_registers() {
    let dir = tempfile::tempdir().unwrap();
    let broken = dir.path().join("broken.yaml");
    std::fs::write(
        &broken,
        "openapi: 3.0.0\npaths:\n  /a:\n    get:\n      parameters: [{$ref: 'other.yaml#/P'}]\n",
    )
    .unwrap();
    let swagger = dir.path().join("swagger.json");
    std::fs::write(&swagger, r#"{"swagger": "1.2"}"#).unwrap();
    let toml = format!(
        "[openapi.broken]\nspec = {:?}\nbaseUrl = \"http://127.0.0.1:1\"\n\n[openapi.old]\nspec = {:?}\nbaseUrl = \"http://127.0.0.1:1\"\n\n\
         [openapi.nowhere]\nspec = \"http://127.0.0.1:1/openapi.json\"\ntimeout = 2\n\n[openapi.echo]\nspec = {:?}\nbaseUrl = \"http://127.0.0.1:1\"\n",
        broken.display().to_string(),
        swagger.display().to_string(),
        fixture("echo_api.yaml").display().to_string()
    );
    let loaded = RegistryFile::from_toml(&toml).unwrap().load().await;
    let warnings = loaded.warnings.join("\n");
    assert!(
        warnings.contains("openapi.broken") && warnings.contains("other.yaml#/P"),
        "{warnings}"
    );
    assert!(
        warnings.contains("openapi.old") && warnings.contains("Swagger 1.2"),
        "{warnings}"
    );
    assert!(
        warnings.contains("openapi.nowhere") && warnings.contains("cannot fetch"),
        "{warnings}"
    );
    assert!(
        loaded.registry.spec("echo.everything").is_some(),
        "the good source registers"
    );
    // Its server is unreachable: a clear error naming the source, no hang.
    let e = loaded
        .registry
        .execute("echo.down", json!({}), &Context::default())
        .await
        .unwrap_err();
    assert_eq!(e.code, codes::EXECUTION_ERROR);
    assert!(e.message.contains("openapi.echo"), "{}", e.message);
}

/// Issue 29: `rename` registers an operation under another name (the request is the same);
/// a name no operation has, or a new name another operation has, is an error naming them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_renamed_operation_calls_the_same_endpoint_and_a_clash_names_both() {
    let (_server, port) = echo_server();
    let spec = fixture("echo_api.yaml").display().to_string();
    let source = |rename: &str| {
        format!(
            "[openapi.echo]\nspec = {spec:?}\nbaseUrl = \"http://127.0.0.1:{port}\"\nrename = {rename}\n"
        )
    };
    let loaded = load(&source("{ everything = \"all\", ticks = \"stream\" }")).await;
    assert!(loaded.registry.spec("echo.everything").is_none());
    assert!(loaded.registry.spec("echo.ticks").is_none());
    assert_eq!(
        loaded.registry.spec("echo.stream").unwrap().kind,
        OperationType::Subscription
    );
    assert!(
        loaded.registry.spec("echo.down").is_some(),
        "the others keep their names"
    );
    let done = loaded
        .registry
        .execute(
            "echo.all",
            json!({"path.id": "a", "id2": ["b"], "body": {}}),
            &Context::default(),
        )
        .await
        .unwrap();
    assert_eq!(done.envelope["data"]["path"], "/echo/a/.b");

    for (rename, named) in [
        (
            "{ everything = \"ticks\" }",
            &[
                "\"everything\" (renamed to \"ticks\")",
                "\"ticks\"",
                "echo.ticks",
            ][..],
        ),
        (
            "{ everything = \"same\", ticks = \"same\" }",
            &[
                "\"everything\" (renamed to \"same\")",
                "\"ticks\" (renamed to \"same\")",
            ],
        ),
        (
            "{ everythin = \"all\" }",
            &["no operation is named \"everythin\""],
        ),
    ] {
        let loaded = RegistryFile::from_toml(&source(rename))
            .unwrap()
            .load()
            .await;
        assert_eq!(loaded.warnings.len(), 1, "{rename}: {:?}", loaded.warnings);
        let w = &loaded.warnings[0];
        assert!(
            w.starts_with("openapi.echo: not registered: `rename`: "),
            "{w}"
        );
        for name in named {
            assert!(w.contains(name), "{rename}: {w} (expected {name})");
        }
    }
    // An empty new name: the source is malformed.
    let file = RegistryFile::from_toml(&source("{ everything = \"\" }")).unwrap();
    assert!(
        file.invalid_sources[0].contains("empty name"),
        "{:?}",
        file.invalid_sources
    );
}

/// Issue 29: a path that carries its own query (`/v1/models?beta=true`, 95 operations of one
/// vendor's document) is merged with the query parameters: one `?`, on the wire.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_query_in_the_path_is_merged_with_the_query_parameters_on_the_wire() {
    let (_server, port) = echo_server();
    let dir = tempfile::tempdir().unwrap();
    let doc = json!({
        "openapi": "3.1.0", "info": {"title": "t", "version": "1"},
        "paths": {
            "/echo/models?beta=true": {"get": {
                "operationId": "models",
                "parameters": [
                    {"name": "limit", "in": "query", "schema": {"type": "integer"}},
                    {"name": "order", "in": "query", "schema": {"type": "string"}}
                ],
                "responses": {"200": {"description": "ok"}}
            }},
            "/echo/models/{id}?beta=true&v=2": {"get": {
                "operationId": "model",
                "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}],
                "responses": {"200": {"description": "ok"}}
            }}
        }
    });
    std::fs::write(dir.path().join("api.json"), doc.to_string()).unwrap();
    let spec = dir.path().join("api.json").display().to_string();
    let loaded = load(&format!(
        "[openapi.ai]\nspec = {spec:?}\nbaseUrl = \"http://127.0.0.1:{port}\"\n\n\
         [openapi.keyed]\nspec = {spec:?}\nbaseUrl = \"http://127.0.0.1:{port}/?key=k\"\n"
    ))
    .await;
    let seen = |id: &'static str, input: Value| {
        let registry = &loaded.registry;
        async move {
            let done = registry
                .execute(id, input, &Context::default())
                .await
                .unwrap_or_else(|e| panic!("{id}: {e:?}"));
            let data = &done.envelope["data"];
            (data["path"].clone(), data["query"].clone())
        }
    };
    assert_eq!(
        seen("ai.models", json!({"limit": 3, "order": "asc"})).await,
        (json!("/echo/models"), json!("beta=true&limit=3&order=asc"))
    );
    assert_eq!(
        seen("ai.models", json!({})).await,
        (json!("/echo/models"), json!("beta=true"))
    );
    assert_eq!(
        seen("ai.model", json!({"id": "m?1"})).await,
        (json!("/echo/models/m%3F1"), json!("beta=true&v=2"))
    );
    // A base URL with a query of its own: its query first, the path after its path.
    assert_eq!(
        seen("keyed.models", json!({"limit": 3})).await,
        (json!("/echo/models"), json!("key=k&beta=true&limit=3"))
    );
}

/// A JSON document with a recursive schema, api-key and basic auth, access rules.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_documents_recursive_schemas_auth_kinds_and_access() {
    let (_server, port) = echo_server();
    let dir = tempfile::tempdir().unwrap();
    let doc = json!({
        "openapi": "3.0.3",
        "info": {"title": "tree", "version": "2"},
        "paths": {"/echo/tree": {"post": {
            "operationId": "plant",
            "requestBody": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Node"}}}},
            "responses": {"200": {"description": "seen", "content": {"application/json": {"schema": {"type": "object"}}}}}
        }}},
        "components": {"schemas": {"Node": {
            "type": "object",
            "properties": {"name": {"type": "string"}, "children": {"type": "array", "items": {"$ref": "#/components/schemas/Node"}}}
        }}}
    });
    std::fs::write(dir.path().join("tree.json"), doc.to_string()).unwrap();
    let spec = dir.path().join("tree.json").display().to_string();
    // HOME and PATH are set in any test run: the secrets' sources here.
    let loaded = load(&format!(
        "[openapi.key]\nspec = {spec:?}\nbaseUrl = \"http://127.0.0.1:{port}\"\n\
         auth = {{ type = \"apiKey\", tokenEnv = \"HOME\", headerName = \"X-Key\", prefix = \"k-\" }}\n\n\
         [openapi.basic]\nspec = {spec:?}\nbaseUrl = \"http://127.0.0.1:{port}\"\nauth = {{ type = \"basic\", tokenEnv = \"HOME\" }}\n\
         accessControl = {{ requiredScopes = [\"tree:write\"] }}\n"
    ))
    .await;
    // The recursion is cut where it closes: a placeholder that accepts anything.
    let schema = &loaded.registry.spec("key.plant").unwrap().input_schema;
    let items = &schema["properties"]["body"]["properties"]["children"]["items"];
    assert!(
        items["$comment"]
            .as_str()
            .unwrap()
            .contains("circular $ref #/components/schemas/Node"),
        "{schema}"
    );
    let body = json!({"name": "root", "children": [{"name": "leaf", "children": []}]});
    let input = json!({ "body": body });
    let seen = loaded
        .registry
        .execute("key.plant", input.clone(), &Context::default())
        .await
        .unwrap()
        .envelope["data"]
        .clone();
    let home = std::env::var("HOME").unwrap();
    assert_eq!(seen["headers"]["x-key"], format!("k-{home}"));
    assert_eq!(seen["body"], body, "the recursive body went whole");

    // Access rules of the source apply to its operations.
    let denied = loaded
        .registry
        .execute("basic.plant", input.clone(), &Context::default())
        .await
        .unwrap_err();
    assert_eq!(denied.code, codes::ACCESS_DENIED);
    let writer = Context::default().with_identity(envelope_ops::Identity {
        id: "w".into(),
        scopes: vec!["tree:write".into()],
        resources: None,
    });
    let seen = loaded
        .registry
        .execute("basic.plant", input, &writer)
        .await
        .unwrap()
        .envelope["data"]
        .clone();
    use base64::Engine as _;
    let expected = base64::engine::general_purpose::STANDARD.encode(home.as_bytes());
    assert_eq!(
        seen["headers"]["authorization"],
        format!("Basic {expected}")
    );
}

/// Hostile sizes: a body over the cap and an event that never ends are errors, not memory.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_bodies_and_endless_events_are_refused() {
    let (_server, port) = echo_server();
    let loaded = load(&format!(
        "[openapi.echo]\nspec = {:?}\nbaseUrl = \"http://127.0.0.1:{port}\"\n",
        fixture("echo_api.yaml").display().to_string()
    ))
    .await;
    let context = Context::default();
    let e = loaded
        .registry
        .execute("echo.big", json!({}), &context)
        .await
        .unwrap_err();
    assert_eq!(e.code, codes::EXECUTION_ERROR);
    assert_eq!(e.details.unwrap()["maxBodyBytes"], 64 << 20);

    let started = Instant::now();
    let items: Vec<_> = loaded
        .registry
        .subscribe("echo.flood", json!({}), &context)
        .unwrap()
        .collect()
        .await;
    assert_eq!(items.len(), 1, "the error, then the end");
    let e = items[0].as_ref().unwrap_err();
    assert_eq!(e.details.as_ref().unwrap()["maxEventBytes"], 16 << 20);
    assert!(
        started.elapsed() < Duration::from_secs(25),
        "stopped at the cap, not at the server's end"
    );
}

/// Issue 29: every request media type of the document, on the wire (the echo server gives
/// back the exact bytes and the `Content-Type`): form fields as inputs, multipart with a
/// file from base64, text, bytes from base64, a `+json` type; non-JSON bodies used to be
/// dropped (no `body` input, an empty request).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_request_media_type_goes_on_the_wire_as_the_document_says() {
    use base64::Engine as _;
    let b64 = base64::engine::general_purpose::STANDARD;
    let (_server, port) = echo_server();
    let dir = tempfile::tempdir().unwrap();
    let ok = json!({"200": {"description": "seen", "content": {"application/json": {"schema": {"type": "object"}}}}});
    let doc = json!({
        "openapi": "3.0.3", "info": {"title": "t", "version": "1"},
        "paths": {
            "/echo/Accounts/{Sid}/Messages.json": {"post": {
                "operationId": "createMessage",
                "parameters": [{"name": "Sid", "in": "path", "required": true, "schema": {"type": "string"}}],
                "requestBody": {"required": true, "content": {"application/x-www-form-urlencoded": {"schema": {
                    "type": "object", "required": ["To"],
                    "properties": {
                        "To": {"type": "string"}, "Body": {"type": "string"},
                        "MediaUrl": {"type": "array", "items": {"type": "string"}},
                        "Sid": {"type": "string"}, "Count": {"type": "integer"}
                    }}}}},
                "responses": ok
            }},
            "/echo/files": {"post": {
                "operationId": "upload",
                "requestBody": {"content": {"multipart/form-data": {
                    "schema": {"type": "object", "required": ["file"], "properties": {
                        "purpose": {"type": "string"},
                        "file": {"type": "string", "format": "binary"},
                        "meta": {"type": "object"}
                    }},
                    "encoding": {"file": {"contentType": "image/png"}}
                }}},
                "responses": ok
            }},
            "/echo/text": {"post": {
                "operationId": "note",
                "requestBody": {"required": true, "content": {"text/plain": {"schema": {"type": "string"}}}},
                "responses": ok
            }},
            "/echo/bytes": {"put": {
                "operationId": "blob",
                "requestBody": {"content": {"application/octet-stream": {"schema": {"type": "string", "format": "binary"}}}},
                "responses": ok
            }},
            "/echo/patch": {"patch": {
                "operationId": "merge",
                "requestBody": {"content": {
                    "text/plain": {}, "application/merge-patch+json": {"schema": {"type": "object"}}}},
                "responses": ok
            }}
        }
    });
    std::fs::write(dir.path().join("api.json"), doc.to_string()).unwrap();
    let spec = dir.path().join("api.json").display().to_string();
    let loaded = load(&format!(
        "[openapi.m]\nspec = {spec:?}\nbaseUrl = \"http://127.0.0.1:{port}\"\n"
    ))
    .await;
    let registry = &loaded.registry;
    // Form fields are inputs; one named like a parameter is `body.<name>`; the fields the
    // schema requires are required (the body is).
    let form = &registry.spec("m.createMessage").unwrap().input_schema;
    let keys: Vec<&String> = form["properties"].as_object().unwrap().keys().collect();
    assert_eq!(keys, ["Sid", "To", "Body", "MediaUrl", "body.Sid", "Count"]);
    assert_eq!(form["required"], json!(["Sid", "To"]));
    let upload = &registry.spec("m.upload").unwrap().input_schema;
    assert_eq!(
        upload["properties"]["file"]["anyOf"][0],
        json!({"type": "string", "contentEncoding": "base64",
               "pattern": envelope_ops::openapi::body::BASE64_PATTERN})
    );
    assert!(
        upload.get("required").is_none(),
        "the body is optional: {upload}"
    );
    assert_eq!(
        registry.spec("m.blob").unwrap().input_schema["properties"]["body"]["contentEncoding"],
        "base64"
    );

    let wire = |id: &'static str, input: Value| async move {
        let done = registry
            .execute(id, input, &Context::default())
            .await
            .unwrap_or_else(|e| panic!("{id}: {e:?}"));
        let seen = done.envelope["data"].clone();
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(seen["raw"].as_str().unwrap())
            .unwrap();
        let content_type = seen["headers"]["content-type"].as_str().map(str::to_owned);
        (seen, content_type, bytes)
    };

    let (seen, content_type, bytes) = wire(
        "m.createMessage",
        json!({"Sid": "AC1", "To": "+1 555&0", "Body": "héllo=1", "MediaUrl": ["a", "b"], "body.Sid": "x", "Count": 2}),
    )
    .await;
    assert_eq!(seen["path"], "/echo/Accounts/AC1/Messages.json");
    assert_eq!(
        content_type.as_deref(),
        Some("application/x-www-form-urlencoded")
    );
    assert_eq!(
        String::from_utf8(bytes).unwrap(),
        "To=%2B1%20555%260&Body=h%C3%A9llo%3D1&MediaUrl=a&MediaUrl=b&Sid=x&Count=2"
    );
    // A required field missing is refused before any request.
    let e = registry
        .execute(
            "m.createMessage",
            json!({"Sid": "AC1", "Body": "b"}),
            &Context::default(),
        )
        .await
        .unwrap_err();
    assert_eq!(e.code, codes::VALIDATION_ERROR);

    let png = [0x89u8, b'P', b'N', b'G', 0, 0xff, b'\r', b'\n'];
    let (_, content_type, bytes) = wire(
        "m.upload",
        json!({"purpose": "vision", "file": b64.encode(png), "meta": {"a": 1}}),
    )
    .await;
    let content_type = content_type.unwrap();
    let boundary = content_type
        .strip_prefix("multipart/form-data; boundary=")
        .unwrap_or_else(|| panic!("{content_type}"));
    let mut expected = format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"purpose\"\r\n\r\nvision\r\n\
         --{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"file\"\r\nContent-Type: image/png\r\n\r\n"
    )
    .into_bytes();
    expected.extend_from_slice(&png);
    expected.extend_from_slice(
        format!(
            "\r\n--{boundary}\r\nContent-Disposition: form-data; name=\"meta\"\r\nContent-Type: application/json\r\n\r\n{{\"a\":1}}\r\n--{boundary}--\r\n"
        )
        .as_bytes(),
    );
    assert_eq!(bytes, expected, "{}", String::from_utf8_lossy(&bytes));
    // A file given with its name and type.
    let (_, _, bytes) = wire(
        "m.upload",
        json!({"file": {"content": b64.encode(b"a,b\n"), "filename": "t.csv", "contentType": "text/csv"}}),
    )
    .await;
    let text = String::from_utf8(bytes).unwrap();
    assert!(
        text.contains(
            "name=\"file\"; filename=\"t.csv\"\r\nContent-Type: text/csv\r\n\r\na,b\n\r\n"
        ),
        "{text}"
    );
    // Not base64: refused, nothing sent.
    let e = registry
        .execute("m.upload", json!({"file": "%%%"}), &Context::default())
        .await
        .unwrap_err();
    assert_eq!(e.code, codes::VALIDATION_ERROR);
    // By the input schema's pattern (base64 as it is read), naming the input.
    let findings = e.details.unwrap()["findings"].to_string();
    assert!(findings.contains("/file"), "{findings}");

    let (_, content_type, bytes) = wire("m.note", json!({"body": "line 1\nünïcode"})).await;
    assert_eq!(content_type.as_deref(), Some("text/plain"));
    assert_eq!(bytes, "line 1\nünïcode".as_bytes());

    let (seen, content_type, bytes) = wire("m.blob", json!({"body": b64.encode(png)})).await;
    assert_eq!(seen["method"], "PUT");
    assert_eq!(content_type.as_deref(), Some("application/octet-stream"));
    assert_eq!(bytes, png);

    // A `+json` type is preferred to text and sent as JSON with its own name.
    let (seen, content_type, _) = wire("m.merge", json!({"body": {"name": null}})).await;
    assert_eq!(
        content_type.as_deref(),
        Some("application/merge-patch+json")
    );
    assert_eq!(seen["body"], json!({"name": null}));
    // No body in the input, none required: no body sent.
    let (seen, content_type, _) = wire("m.blob", json!({})).await;
    assert_eq!((seen["bodyBytes"].clone(), content_type), (json!(0), None));
}

/// Issue 29: operation-level and path-level `servers` override the document's for that
/// operation (GitHub's release-asset upload goes to `{origin}` = uploads.github.com), their
/// variables replaced by their defaults; a configured `baseUrl` takes every request.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn operation_and_path_servers_override_the_documents_on_the_wire() {
    let (_server, port) = echo_server();
    let (_other, other_port) = echo_server();
    let dir = tempfile::tempdir().unwrap();
    let ok = json!({"200": {"description": "seen"}});
    let doc = json!({
        "openapi": "3.0.3", "info": {"title": "t", "version": "1"},
        "servers": [{"url": format!("http://127.0.0.1:{port}/echo/top")}],
        "paths": {
            "/a": {
                "servers": [{"url": format!("http://127.0.0.1:{port}/echo/path")}],
                "get": {"operationId": "pathLevel", "responses": ok},
                "post": {
                    "operationId": "upload",
                    "servers": [
                        {"url": "{origin}/echo/op", "variables": {"origin": {"default": format!("http://127.0.0.1:{other_port}")}}},
                        {"url": "http://127.0.0.1:1/never"}
                    ],
                    "responses": ok
                }
            },
            "/b": {
                "get": {"operationId": "top", "responses": ok},
                "put": {"operationId": "relative", "servers": [{"url": "/echo/rel"}], "responses": ok}
            }
        }
    });
    std::fs::write(dir.path().join("api.json"), doc.to_string()).unwrap();
    let spec = dir.path().join("api.json").display().to_string();
    let loaded = load(&format!(
        "[openapi.s]\nspec = {spec:?}\n\n[openapi.mock]\nspec = {spec:?}\nbaseUrl = \"http://127.0.0.1:{other_port}/echo/mock\"\n"
    ))
    .await;
    let seen = |id: &'static str| {
        let registry = &loaded.registry;
        async move {
            let done = registry
                .execute(id, json!({}), &Context::default())
                .await
                .unwrap_or_else(|e| panic!("{id}: {e:?}"));
            let data = &done.envelope["data"];
            (data["path"].clone(), data["headers"]["host"].clone())
        }
    };
    let at = |p: u16, path: &str| (json!(path), json!(format!("127.0.0.1:{p}")));
    assert_eq!(seen("s.top").await, at(port, "/echo/top/b"));
    assert_eq!(seen("s.pathLevel").await, at(port, "/echo/path/a"));
    assert_eq!(seen("s.upload").await, at(other_port, "/echo/op/a"));
    // A relative server of a local document: against the base URL.
    assert_eq!(seen("s.relative").await, at(port, "/echo/rel/b"));
    // `baseUrl` is the user's choice for every operation of the source.
    for id in ["mock.top", "mock.pathLevel", "mock.upload"] {
        assert_eq!(
            seen(id).await.0,
            json!(format!(
                "/echo/mock{}",
                if id == "mock.top" { "/b" } else { "/a" }
            ))
        );
    }
}

/// Issue 29: a response that offers JSON beside an event stream (a chat completion) is the
/// caller's choice: `execute` (a plain `envelope call`) asks for JSON and gets one answer,
/// `subscribe` asks for the event stream. An event stream alone is still refused by
/// `execute`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_or_an_event_stream_is_the_callers_choice() {
    let (_server, port) = echo_server();
    let dir = tempfile::tempdir().unwrap();
    let doc = json!({
        "openapi": "3.1.0", "info": {"title": "t", "version": "1"},
        "paths": {
            "/chat": {"post": {
                "operationId": "complete",
                "requestBody": {"required": true, "content": {"application/json": {"schema": {"type": "object"}}}},
                "responses": {"200": {"description": "one answer or a stream", "content": {
                    "text/event-stream": {"schema": {"type": "string"}},
                    "application/json": {"schema": {"type": "object", "required": ["message"]}}
                }}}
            }},
            "/events": {"get": {"operationId": "ticks", "responses": {"200": {
                "description": "a stream", "content": {"text/event-stream": {}}}}}}
        }
    });
    std::fs::write(dir.path().join("api.json"), doc.to_string()).unwrap();
    let spec = dir.path().join("api.json").display().to_string();
    let loaded = load(&format!(
        "[openapi.ai]\nspec = {spec:?}\nbaseUrl = \"http://127.0.0.1:{port}\"\n"
    ))
    .await;
    let registry = &loaded.registry;
    let context = Context::default();
    assert_eq!(
        registry.spec("ai.complete").unwrap().kind,
        OperationType::Subscription
    );
    let input = json!({"body": {"model": "m", "messages": []}});
    let once = registry
        .execute("ai.complete", input.clone(), &context)
        .await
        .unwrap_or_else(|e| panic!("{e:?}"));
    assert_valid_envelope(&once.envelope);
    assert_eq!(
        once.envelope["data"],
        json!({"accept": "application/json", "message": "hello"})
    );
    assert!(
        once.envelope["meta"]["contentType"]
            .as_str()
            .unwrap()
            .starts_with("application/json")
    );

    let events: Vec<Value> = registry
        .subscribe("ai.complete", input, &context)
        .unwrap()
        .map(|item| item.unwrap().envelope)
        .collect()
        .await;
    let deltas: Vec<&Value> = events.iter().map(|e| &e["data"]["delta"]).collect();
    assert_eq!(deltas, [&json!("hel"), &json!("lo")], "{events:?}");
    assert_eq!(events[0]["data"]["accept"], "text/event-stream");
    assert_eq!(events[0]["meta"]["contentType"], "text/event-stream");

    // Only a stream: no plain call.
    let e = registry
        .execute("ai.ticks", json!({}), &context)
        .await
        .unwrap_err();
    assert_eq!(e.code, codes::EXECUTION_ERROR);
    assert!(e.message.contains("subscription"), "{}", e.message);
}

/// Issue 29: a Swagger 2.0 document is read into the same model — host/basePath/schemes as
/// the server, definitions behind `$ref`s, a body parameter, formData fields, consumes,
/// produces, a csv array, a global parameter, securityDefinitions — and called on the wire.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_swagger_2_document_is_read_into_the_same_model_and_called_on_the_wire() {
    let (_server, port) = echo_server();
    let dir = tempfile::tempdir().unwrap();
    let doc = json!({
        "swagger": "2.0",
        "info": {"title": "pets", "version": "2.1"},
        "host": format!("127.0.0.1:{port}"), "basePath": "/echo/v2", "schemes": ["http"],
        "consumes": ["application/json"], "produces": ["application/json"],
        "securityDefinitions": {"key": {"type": "apiKey", "name": "X-Key", "in": "header"}},
        "parameters": {"limit": {"name": "limit", "in": "query", "type": "integer", "maximum": 50}},
        "definitions": {
            "Pet": {"type": "object", "required": ["name"], "properties": {
                "name": {"type": "string"}, "tag": {"type": "string", "x-nullable": true},
                "owner": {"$ref": "#/definitions/Owner"}}},
            "Owner": {"type": "object", "properties": {"id": {"type": "integer"}}}
        },
        "paths": {
            "/pets": {
                "get": {"operationId": "listPets", "parameters": [
                    {"$ref": "#/parameters/limit"},
                    {"name": "tags", "in": "query", "type": "array", "items": {"type": "string"}}],
                    "responses": {"200": {"description": "pets", "schema": {"type": "object"}}}},
                "post": {"operationId": "addPet", "parameters": [
                    {"name": "pet", "in": "body", "required": true, "schema": {"$ref": "#/definitions/Pet"}}],
                    "responses": {"200": {"description": "added", "schema": {"type": "object"}}}}
            },
            "/pets/{id}": {
                "parameters": [{"name": "id", "in": "path", "required": true, "type": "integer"}],
                "put": {"operationId": "updatePet", "consumes": ["application/x-www-form-urlencoded"],
                    "parameters": [
                        {"name": "name", "in": "formData", "type": "string", "required": true},
                        {"name": "status", "in": "formData", "type": "string"}],
                    "responses": {"200": {"description": "updated", "schema": {"type": "object"}}}}
            }
        }
    });
    std::fs::write(dir.path().join("swagger.json"), doc.to_string()).unwrap();
    let spec = dir.path().join("swagger.json").display().to_string();
    let loaded = load(&format!("[openapi.pets]\nspec = {spec:?}\n")).await;
    let registry = &loaded.registry;
    let ids: Vec<String> = registry.specs().map(|s| s.id()).collect();
    assert_eq!(ids, ["pets.addPet", "pets.listPets", "pets.updatePet"]);
    let add = registry.spec("pets.addPet").unwrap();
    assert_eq!(add.version, "2.1");
    let body = &add.input_schema["properties"]["body"];
    assert_eq!(body["required"], json!(["name"]));
    assert_eq!(body["properties"]["tag"]["type"], json!(["string", "null"]));
    assert_eq!(
        body["properties"]["owner"]["properties"]["id"]["type"], "integer",
        "a definition behind a $ref: {body}"
    );
    assert_eq!(add.input_schema["required"], json!(["body"]));
    let list = registry.spec("pets.listPets").unwrap();
    assert_eq!(list.input_schema["properties"]["limit"]["maximum"], 50);
    let update = registry.spec("pets.updatePet").unwrap();
    assert_eq!(update.input_schema["required"], json!(["id", "name"]));

    let call = |id: &'static str, input: Value| async move {
        let done = registry
            .execute(id, input, &Context::default())
            .await
            .unwrap_or_else(|e| panic!("{id}: {e:?}"));
        done.envelope["data"].clone()
    };
    let seen = call("pets.listPets", json!({"limit": 3, "tags": ["a", "b"]})).await;
    assert_eq!(seen["path"], "/echo/v2/pets");
    // Swagger's default collectionFormat is csv.
    assert_eq!(seen["query"], "limit=3&tags=a,b");
    let seen = call(
        "pets.addPet",
        json!({"body": {"name": "rex", "owner": {"id": 1}}}),
    )
    .await;
    assert_eq!(seen["method"], "POST");
    assert_eq!(seen["headers"]["content-type"], "application/json");
    assert_eq!(seen["body"], json!({"name": "rex", "owner": {"id": 1}}));
    let seen = call(
        "pets.updatePet",
        json!({"id": 7, "name": "rex the 2nd", "status": "sold"}),
    )
    .await;
    assert_eq!(seen["path"], "/echo/v2/pets/7");
    assert_eq!(
        seen["headers"]["content-type"],
        "application/x-www-form-urlencoded"
    );
    use base64::Engine as _;
    let raw = base64::engine::general_purpose::STANDARD
        .decode(seen["raw"].as_str().unwrap())
        .unwrap();
    assert_eq!(raw, b"name=rex%20the%202nd&status=sold");
}
