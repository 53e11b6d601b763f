//! The MCP server of `serve`, one session over an in-memory pipe: lifecycle, tools and
//! identities, shaped results with drill-in, redaction, errors by revision, cancellation,
//! subscriptions as progress, concurrency, 2026-07-28 requests and batches.

mod support;

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use envelope_ops::Identity;
use serde_json::{Value, json};
use support::{Client, Flags, SECRET, link_uri, service};

fn writer() -> Identity {
    Identity {
        id: "w".into(),
        scopes: vec!["files:write".into()],
        resources: None,
    }
}

fn tool_names(list: &Value) -> Vec<String> {
    list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn initialize_tools_and_identities() {
    let dir = tempfile::tempdir().unwrap();
    let service = service(dir.path(), 16 * 1024, &Flags::default());

    let mut anonymous = Client::start(service.clone(), None);
    let init = anonymous.initialize("2025-06-18").await;
    assert_eq!(init["result"]["protocolVersion"], "2025-06-18");
    assert!(init["result"]["capabilities"]["tools"].is_object());
    assert!(init["result"]["capabilities"]["resources"].is_object());
    assert_eq!(init["result"]["serverInfo"]["name"], "envelope-serve");
    let list = anonymous.request(1, "tools/list", json!({})).await;
    let names = tool_names(&list);
    assert_eq!(
        names,
        [
            "clock_ticks",
            "data_big",
            "fail_always",
            "files_stat",
            "people_add",
            "slow_wait",
            "text_upper",
            "envelope_read"
        ],
        "files_delete needs a scope the anonymous caller lacks"
    );
    // Denied even when called by name.
    let denied = anonymous.call(2, "files_delete", json!({})).await;
    assert_eq!(denied["result"]["isError"], true, "{denied}");
    assert!(
        denied["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("ACCESS_DENIED")
    );

    let mut writer = Client::start(service, Some(writer()));
    let init = writer.initialize("2099-01-01").await;
    assert_eq!(
        init["result"]["protocolVersion"], "2025-11-25",
        "an unknown revision gets the newest with initialize"
    );
    let list = writer.request(1, "tools/list", json!({})).await;
    assert!(tool_names(&list).contains(&"files_delete".to_owned()));
    let deleted = writer.call(2, "files_delete", json!({})).await;
    assert_eq!(
        deleted["result"]["structuredContent"],
        json!({"deleted": true})
    );
    let ping = writer.request(3, "ping", json!({})).await;
    assert_eq!(ping["result"], json!({}));
    let unknown = writer.request(4, "no/such", json!({})).await;
    assert_eq!(unknown["error"]["code"], -32601);
}

#[tokio::test]
async fn results_mirror_data_and_validate_against_the_advertised_schema() {
    let dir = tempfile::tempdir().unwrap();
    let mut client = Client::start(service(dir.path(), 16 * 1024, &Flags::default()), None);
    client.initialize("2025-11-25").await;
    let list = client.request(1, "tools/list", json!({})).await;
    let tools = list["result"]["tools"].as_array().unwrap().clone();
    let schema_of = |name: &str| {
        tools
            .iter()
            .find(|t| t["name"] == name)
            .unwrap()
            .get("outputSchema")
            .cloned()
    };
    for (id, name, arguments, expected) in [
        (
            2,
            "files_stat",
            json!({"path": "a.txt"}),
            json!({"size": 3, "path": "a.txt"}),
        ),
        // A string input travels as the `input` argument; a string output as {result}.
        (
            3,
            "text_upper",
            json!({"input": "shout"}),
            json!({"result": "SHOUT"}),
        ),
    ] {
        let answer = client.call(id, name, arguments).await;
        let result = &answer["result"];
        assert_eq!(result["isError"], false, "{answer}");
        assert_eq!(result["structuredContent"], expected);
        let mirror: Value =
            serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap();
        assert_eq!(mirror, expected, "the text block mirrors structuredContent");
        let schema = schema_of(name).expect("an output schema is advertised");
        let validator = jsonschema::validator_for(&schema).unwrap();
        assert!(validator.is_valid(&result["structuredContent"]), "{name}");
    }
    let upper_input = tools.iter().find(|t| t["name"] == "text_upper").unwrap();
    assert_eq!(
        upper_input["inputSchema"],
        json!({"type": "object", "properties": {"input": {"type": "string"}}, "required": ["input"]})
    );
}

#[tokio::test]
async fn a_big_result_is_cut_to_the_limit_redacted_and_read_back_whole() {
    let dir = tempfile::tempdir().unwrap();
    let limit = 4096;
    let mut client = Client::start(service(dir.path(), limit, &Flags::default()), None);
    client.initialize("2025-06-18").await;
    let answer = client.call(1, "data_big", json!({"rows": 2000})).await;
    let result = &answer["result"];
    let text = result.to_string();
    assert!(text.len() <= limit, "{} bytes over {limit}", text.len());
    assert!(!text.contains(SECRET), "the secret reached the client");
    let uri = link_uri(result).expect("a resource_link on 2025-06-18");
    assert!(uri.starts_with("envelope://artifact/sha256/"), "{uri}");
    let stored = client.read_stored(2, &uri).await;
    assert_eq!(
        stored["structuredContent"]["rows"]
            .as_array()
            .unwrap()
            .len(),
        2000
    );
    assert!(
        !stored.to_string().contains(SECRET),
        "the store holds the secret"
    );

    let window = client
        .call(
            3,
            "envelope_read",
            json!({"uri": uri, "pointer": "/structuredContent/rows", "offset": 1990}),
        )
        .await;
    let structured = &window["result"]["structuredContent"];
    assert_eq!(structured["total"], 2000);
    assert_eq!(structured["items"][0]["id"], 1990);
    assert!(window["result"].to_string().len() <= limit);

    let templates = client
        .request(4, "resources/templates/list", json!({}))
        .await;
    assert!(
        templates["result"]["resourceTemplates"][0]["uriTemplate"]
            .as_str()
            .unwrap()
            .starts_with("envelope://artifact/sha256/")
    );
    let missing = client
        .request(
            5,
            "resources/read",
            json!({"uri": format!("envelope://artifact/sha256/{}", "0".repeat(64))}),
        )
        .await;
    assert_eq!(missing["error"]["code"], -32002, "{missing}");
}

#[tokio::test]
async fn older_revisions_get_a_text_link() {
    let dir = tempfile::tempdir().unwrap();
    let mut client = Client::start(service(dir.path(), 4096, &Flags::default()), None);
    client.initialize("2025-03-26").await;
    let answer = client.call(1, "data_big", json!({})).await;
    let text = answer["result"].to_string();
    assert!(!text.contains("resource_link"), "{text}");
    assert!(text.contains("envelope://artifact/sha256/"), "{text}");
}

#[tokio::test]
async fn errors_are_results_with_their_code_and_no_secret() {
    let dir = tempfile::tempdir().unwrap();
    let mut client = Client::start(service(dir.path(), 16 * 1024, &Flags::default()), None);
    client.initialize("2025-06-18").await;
    let failed = client.call(1, "fail_always", json!({})).await;
    assert_eq!(failed["result"]["isError"], true);
    let text = failed["result"]["content"][0]["text"].as_str().unwrap();
    let error: Value = serde_json::from_str(text).unwrap();
    assert_eq!(error["code"], "BROKEN");
    assert!(
        !text.contains("hunter2-very-secret") && !text.contains(SECRET),
        "{text}"
    );

    // Bad arguments: a JSON-RPC error up to 2025-06-18 ...
    let bad = client.call(2, "files_stat", json!({"path": 5})).await;
    assert_eq!(bad["error"]["code"], -32602, "{bad}");
    assert!(bad["error"]["data"]["findings"].is_array(), "{bad}");
    // ... an isError result from 2025-11-25.
    let mut newer = Client::start(service(dir.path(), 16 * 1024, &Flags::default()), None);
    newer.initialize("2025-11-25").await;
    let bad = newer.call(1, "files_stat", json!({"path": 5})).await;
    assert_eq!(bad["result"]["isError"], true, "{bad}");
    assert!(
        bad["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("VALIDATION_ERROR")
    );

    let unknown = newer.call(2, "no_such_tool", json!({})).await;
    assert_eq!(unknown["error"]["code"], -32602);
    let nameless = newer
        .request(3, "tools/call", json!({"arguments": {}}))
        .await;
    assert_eq!(nameless["error"]["code"], -32602);
}

#[tokio::test]
async fn a_cancelled_call_is_stopped_and_not_answered_while_others_go_on() {
    let dir = tempfile::tempdir().unwrap();
    let flags = Flags::default();
    let mut client = Client::start(service(dir.path(), 16 * 1024, &flags), None);
    client.initialize("2025-06-18").await;
    client
        .send(&json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "slow_wait", "arguments": {"ms": 20000}}}))
        .await;
    // A fast call is not held up by the slow one.
    let started = Instant::now();
    let fast = client.call(8, "files_stat", json!({"path": "x"})).await;
    assert_eq!(fast["result"]["structuredContent"]["size"], 3);
    assert!(started.elapsed() < Duration::from_secs(5));
    client
        .send(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7, "reason": "test"}}))
        .await;
    for _ in 0..200 {
        if flags.stopped.load(Ordering::SeqCst) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(
        flags.stopped.load(Ordering::SeqCst),
        "the operation was not stopped"
    );
    assert!(
        client
            .maybe_next(Duration::from_millis(300))
            .await
            .is_none(),
        "a cancelled request gets no answer"
    );
}

#[tokio::test]
async fn a_subscription_streams_progress_and_answers_its_last_event() {
    let dir = tempfile::tempdir().unwrap();
    let mut client = Client::start(service(dir.path(), 16 * 1024, &Flags::default()), None);
    client.initialize("2025-06-18").await;
    let answer = client
        .request(
            1,
            "tools/call",
            json!({"name": "clock_ticks", "arguments": {"count": 4}, "_meta": {"progressToken": "tok-1"}}),
        )
        .await;
    assert_eq!(answer["result"]["structuredContent"], json!({"tick": 4}));
    let progress: Vec<&Value> = client
        .notifications
        .iter()
        .filter(|n| n["method"] == "notifications/progress")
        .collect();
    assert_eq!(progress.len(), 4, "{:?}", client.notifications);
    for (i, note) in progress.iter().enumerate() {
        assert_eq!(note["params"]["progressToken"], "tok-1");
        assert_eq!(note["params"]["progress"], i as u64 + 1);
        let envelope: Value =
            serde_json::from_str(note["params"]["message"].as_str().unwrap()).unwrap();
        assert_eq!(envelope["data"]["tick"], i as u64 + 1);
        assert_eq!(envelope["meta"]["operationId"], "clock.ticks");
    }
    // Without a token: no notifications, the same result.
    client.notifications.clear();
    let quiet = client.call(2, "clock_ticks", json!({"count": 2})).await;
    assert_eq!(quiet["result"]["structuredContent"], json!({"tick": 2}));
    assert!(client.notifications.is_empty());
}

#[tokio::test]
async fn stateless_requests_and_batches() {
    let dir = tempfile::tempdir().unwrap();
    let mut client = Client::start(service(dir.path(), 16 * 1024, &Flags::default()), None);
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28"});
    let discover = client
        .request(1, "server/discover", json!({"_meta": meta}))
        .await;
    assert!(
        discover["result"]["supportedVersions"]
            .as_array()
            .unwrap()
            .contains(&json!("2026-07-28"))
    );
    assert_eq!(discover["result"]["resultType"], "complete");
    let call = client
        .request(
            2,
            "tools/call",
            json!({"name": "files_stat", "arguments": {"path": "p"}, "_meta": meta}),
        )
        .await;
    assert_eq!(call["result"]["resultType"], "complete");
    assert_eq!(call["result"]["structuredContent"]["size"], 3);

    client
        .send_raw(r#"[{"jsonrpc":"2.0","id":"a","method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"name":"text_upper","arguments":{"input":"x"}}}]"#)
        .await;
    let batch = client.next().await;
    let answers = batch.as_array().expect("one array for the batch");
    assert_eq!(answers.len(), 2);
    assert_eq!(answers[0]["id"], "a");
    assert_eq!(answers[1]["result"]["structuredContent"]["result"], "X");
    client.send_raw("[]").await;
    assert_eq!(client.next().await["error"]["code"], -32600);
    client.send_raw("{not json").await;
    assert_eq!(client.next().await["error"]["code"], -32700);
}

#[tokio::test]
async fn a_payload_offloaded_by_a_worker_is_read_back_from_the_shared_store() {
    use envelope_ops::shaping::EnvelopeShaping;
    use envelope_ops::{HandlerError, OperationSpec, OperationType, Registry, handler_fn};
    use std::sync::Arc;

    let dir = tempfile::tempdir().unwrap();
    let settings = support::settings(dir.path(), 4096);
    let shared = settings.store.clone();
    // What a worker with `--limit 1000` answers: data offloaded to the shared store.
    let rows: Vec<Value> = (0..500).map(|i| json!({"id": i})).collect();
    let worker_shaping = EnvelopeShaping {
        limit: Some(1000),
        inline_threshold: Some(1000),
        store: Some(shared),
        redact: false,
        ..EnvelopeShaping::default()
    };
    let offloaded = worker_shaping
        .shape_value(
            &json!({"data": {"rows": rows}, "meta": {"source": "local", "operationId": "w.rows"}}),
        )
        .unwrap();
    assert!(offloaded["data"]["artifact"].is_string(), "{offloaded}");
    // The same answer, but naming an artifact no store has.
    let mut lost = offloaded.clone();
    let missing = format!("sha256:{}", "1".repeat(64));
    lost["data"]["artifact"] = json!(missing);
    lost["meta"]["artifact"] = json!(missing);

    let mut registry = Registry::new();
    for (name, answer) in [("rows", offloaded), ("lost", lost)] {
        let mut spec = OperationSpec::new("w", name, OperationType::Query);
        spec.output_schema = json!({"type": "object"});
        registry
            .register(
                spec,
                handler_fn(move |_, _| {
                    let answer = answer.clone();
                    async move { Ok::<_, HandlerError>(answer) }
                }),
            )
            .unwrap();
    }
    let dispatch = envelope_serve::dispatch::Dispatch::local(Arc::new(registry));
    let service = envelope_serve::service::Service::new(dispatch, settings, Default::default());
    let mut client = Client::start(Arc::new(service.unwrap()), None);
    client.initialize("2025-06-18").await;
    let answer = client.call(1, "w_rows", json!({})).await;
    let uri = link_uri(&answer["result"]).expect("too big for 4096 bytes: stored and linked");
    let stored = client.read_stored(2, &uri).await;
    assert_eq!(
        stored["structuredContent"]["rows"]
            .as_array()
            .unwrap()
            .len(),
        500,
        "the whole payload, not the worker's summary"
    );
    // Not in the store: the summary stays, nothing breaks.
    let lost = client.call(3, "w_lost", json!({})).await;
    assert_eq!(
        lost["result"]["structuredContent"]["artifact"],
        json!(missing),
        "{lost}"
    );
}

#[tokio::test]
async fn the_policy_file_sets_each_tools_limit_format_and_redaction() {
    use std::sync::Arc;
    let dir = tempfile::tempdir().unwrap();
    let mut settings = support::settings(dir.path(), 4096);
    settings.policy = r#"
[tools.data_big]
limit = 400000

[tools."text_*"]
emit = "protocol-v1"

[tools.files_stat]
pass_through = true
"#
    .parse()
    .unwrap();
    let dispatch =
        envelope_serve::dispatch::Dispatch::local(Arc::new(support::registry(&Flags::default())));
    let service = envelope_serve::service::Service::new(dispatch, settings, Default::default());
    let mut client = Client::start(Arc::new(service.unwrap()), None);
    client.initialize("2025-06-18").await;
    let list = client.request(1, "tools/list", json!({})).await;
    let tool = |name: &str| {
        list["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .unwrap()
            .clone()
    };
    assert!(
        tool("text_upper").get("outputSchema").is_none(),
        "emit: no schema"
    );
    assert!(tool("data_big").get("outputSchema").is_some());

    // Its own limit: 1,000 rows (about 70 KB) whole, where the default would cut at 4096.
    let big = client.call(2, "data_big", json!({"rows": 1000})).await;
    let text = big["result"].to_string();
    assert!(text.len() > 4096 && text.len() <= 400_000, "{}", text.len());
    assert!(link_uri(&big["result"]).is_none());
    assert_eq!(
        big["result"]["structuredContent"]["rows"]
            .as_array()
            .unwrap()
            .len(),
        1000
    );
    assert!(!text.contains(SECRET), "still redacted");

    // Written as protocol-v1: detection names it.
    let upper = client
        .call(3, "text_upper", json!({"input": "shout"}))
        .await;
    let block = upper["result"]["content"][0]["text"].as_str().unwrap();
    let detected = envelope::detect::detect(block.as_bytes()).unwrap();
    assert_eq!(detected.format, envelope::FormatId::ProtocolV1, "{block}");

    // Passed through: the result as the operation gave it.
    let stat = client.call(4, "files_stat", json!({"path": "p"})).await;
    assert_eq!(
        stat["result"]["structuredContent"],
        json!({"size": 3, "path": "p"})
    );
}

fn identity(id: &str, scopes: &[&str]) -> Identity {
    Identity {
        id: id.into(),
        scopes: scopes.iter().map(|s| s.to_string()).collect(),
        resources: None,
    }
}

/// What a read of `uri` tells `client`: the error message of `resources/read` and the text of
/// `envelope_read`, with the digest in them replaced by `D`.
async fn read_answers(client: &mut Client, id: u64, uri: &str) -> (Value, String) {
    let hex = uri.rsplit('/').next().unwrap().to_string();
    let read = client
        .request(id, "resources/read", json!({ "uri": uri }))
        .await;
    let tool = client
        .call(id + 1, "envelope_read", json!({"uri": uri, "pointer": ""}))
        .await;
    let text = tool["result"].to_string().replace(&hex, "D");
    (
        serde_json::from_str(&read.to_string().replace(&hex, "D")).unwrap(),
        text,
    )
}

#[tokio::test]
async fn a_stored_result_is_read_only_by_the_identity_that_produced_it() {
    let dir = tempfile::tempdir().unwrap();
    let service = service(dir.path(), 4096, &Flags::default());
    let mut alice = Client::start(service.clone(), Some(identity("alice", &[])));
    alice.initialize("2025-06-18").await;
    let answer = alice.call(1, "data_big", json!({"rows": 2000})).await;
    let uri = link_uri(&answer["result"]).expect("a resource_link");
    assert_eq!(
        alice.read_stored(2, &uri).await["structuredContent"]["rows"]
            .as_array()
            .unwrap()
            .len(),
        2000
    );
    let window = alice
        .call(
            3,
            "envelope_read",
            json!({"uri": uri, "pointer": "/structuredContent/rows", "offset": 1999}),
        )
        .await;
    assert_eq!(
        window["result"]["structuredContent"]["items"][0]["id"],
        1999
    );

    // Bob, with no scopes, gets for alice's result exactly what he gets for one never
    // stored: no way to tell that it exists.
    let mut bob = Client::start(service.clone(), Some(identity("bob", &[])));
    bob.initialize("2025-06-18").await;
    let missing = format!("envelope://artifact/sha256/{}", "7".repeat(64));
    let (denied_read, denied_tool) = read_answers(&mut bob, 10, &uri).await;
    let (missing_read, missing_tool) = read_answers(&mut bob, 20, &missing).await;
    assert_eq!(denied_read["error"]["code"], -32002, "{denied_read}");
    assert_eq!(denied_read["error"], missing_read["error"]);
    assert_eq!(denied_tool, missing_tool);
    assert!(!denied_tool.contains("rows"), "{denied_tool}");

    // An administrator reads every result.
    let mut admin = Client::start(service, Some(identity("root", &["admin"])));
    admin.initialize("2025-06-18").await;
    assert!(admin.read_stored(30, &uri).await["structuredContent"]["rows"].is_array());
}

/// Issue 29: a registry whose tools are more than a client message may hold (GitHub's 1,223
/// operations are an 11.7 MB `tools/list`, over the 8 MiB cap) is listed in pages with
/// `nextCursor`, each well under the cap; following the cursors gives every tool once. An
/// ordinary registry is still one page without a cursor.
#[tokio::test]
async fn a_very_large_registry_is_listed_in_pages_under_the_message_cap() {
    let dir = tempfile::tempdir().unwrap();
    const OPERATIONS: usize = 1500;
    let description = "Lists what the API holds. ".repeat(320); // ~8 KB, as GitHub's long ones
    let mut paths = serde_json::Map::new();
    for i in 0..OPERATIONS {
        paths.insert(
            format!("/things/{i}/{{id}}"),
            json!({"get": {
                "operationId": format!("thing{i}"), "description": description,
                "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}],
                "responses": {"200": {"description": "ok"}}
            }}),
        );
    }
    let doc = json!({"openapi": "3.1.0", "info": {"title": "big", "version": "1"}, "paths": paths});
    std::fs::write(dir.path().join("big.json"), doc.to_string()).unwrap();
    let file = envelope_ops::file::RegistryFile::from_toml(&format!(
        "[openapi.big]\nspec = {:?}\nbaseUrl = \"http://127.0.0.1:1\"\ncache = false\n",
        dir.path().join("big.json").display().to_string()
    ))
    .unwrap();
    let loaded = file.load().await;
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    assert_eq!(loaded.registry.len(), OPERATIONS);
    let dispatch = envelope_serve::dispatch::Dispatch::local(std::sync::Arc::new(loaded.registry));
    let service = std::sync::Arc::new(
        envelope_serve::service::Service::new(
            dispatch,
            support::settings(dir.path(), 16 * 1024),
            Default::default(),
        )
        .unwrap(),
    );
    let whole: usize = service
        .tools(None)
        .iter()
        .map(|t| t.to_string().len())
        .sum();
    assert!(
        whole > envelope_mcp::outbound::MAX_CLIENT_MESSAGE,
        "one page would be over the cap: {whole} bytes"
    );

    let mut client = Client::start(service, None);
    client.initialize("2025-06-18").await;
    let mut names = Vec::new();
    let mut cursor: Option<Value> = None;
    let mut pages = 0;
    loop {
        let params = cursor
            .as_ref()
            .map_or(json!({}), |c| json!({ "cursor": c }));
        let page = client.request(10 + pages, "tools/list", params).await;
        let bytes = page.to_string().len();
        assert!(
            bytes <= envelope_serve::service::TOOLS_PAGE_BYTES + 4096,
            "page {pages}: {bytes} bytes"
        );
        names.extend(tool_names(&page));
        pages += 1;
        match page["result"].get("nextCursor") {
            Some(next) => cursor = Some(next.clone()),
            None => break,
        }
    }
    assert!(pages >= 9, "{pages} pages");
    assert_eq!(names.len(), OPERATIONS + 1);
    assert_eq!(names.last().map(String::as_str), Some("envelope_read"));
    let unique: std::collections::HashSet<&String> = names.iter().collect();
    assert_eq!(unique.len(), names.len(), "every tool once");
    let expected: std::collections::HashSet<String> = (0..OPERATIONS)
        .map(|i| format!("big_thing{i}"))
        .chain(["envelope_read".to_owned()])
        .collect();
    assert_eq!(unique, expected.iter().collect());

    // A cursor this server did not give: invalid params.
    for bad in [json!("999999"), json!("0"), json!(3), json!("x")] {
        let answer = client
            .request(99, "tools/list", json!({ "cursor": bad }))
            .await;
        assert_eq!(answer["error"]["code"], -32602, "{bad}: {answer}");
    }

    // An ordinary registry: one page, no cursor.
    let small = support::service(dir.path(), 16 * 1024, &Flags::default());
    let mut client = Client::start(small, None);
    client.initialize("2025-06-18").await;
    let list = client.request(1, "tools/list", json!({})).await;
    assert!(list["result"].get("nextCursor").is_none(), "{list}");
    assert_eq!(tool_names(&list).len(), 8);
}
