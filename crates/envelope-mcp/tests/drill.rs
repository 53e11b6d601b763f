//! Drill-in against a real FileStore: `envelope_read` (pointer, jq, windows, paging, errors)
//! and `resources/read` of artifact URIs.

use envelope_mcp::drill::{
    self, INTERNAL_ERROR, RESOURCE_NOT_FOUND, artifact_uri, call_read, read_resource, read_tool,
    resource_template,
};
use envelope_store::{Digest, FileStore, Store};
use std::sync::LazyLock;

use proptest::prelude::*;
use serde_json::{Value, json};
use tempfile::TempDir;

fn store() -> (TempDir, FileStore) {
    let dir = tempfile::tempdir().unwrap();
    let store = FileStore::new(dir.path());
    (dir, store)
}

/// Stores `result` as the proxy does (compact JSON) and returns its URI.
fn put(store: &FileStore, result: &Value) -> String {
    let bytes = serde_json::to_vec(result).unwrap();
    artifact_uri(&store.put(&bytes, "application/json", &[]).unwrap().digest)
}

/// Calls `envelope_read`; every answer, good or bad, must fit the limit.
fn read(store: &FileStore, args: Value, limit: usize) -> Value {
    let answer = call_read(&args, store, limit);
    let size = serde_json::to_vec(&answer).unwrap().len();
    assert!(size <= limit, "{size} > {limit} for {args}");
    answer
}

/// The tool's outputSchema, compiled once.
static OUTPUT_SCHEMA: LazyLock<jsonschema::Validator> =
    LazyLock::new(|| jsonschema::validator_for(&read_tool()["outputSchema"]).unwrap());

/// The structured answer of a successful read, checked against the tool's outputSchema and
/// against its text mirror.
fn ok(answer: &Value) -> Value {
    assert_eq!(answer.get("isError"), None, "{answer}");
    let structured = answer["structuredContent"].clone();
    assert!(OUTPUT_SCHEMA.is_valid(&structured), "{structured}");
    let content = answer["content"].as_array().unwrap();
    assert_eq!(content.len(), 1);
    assert_eq!(content[0]["type"], "text");
    let mirror: Value = serde_json::from_str(content[0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(mirror, structured);
    structured
}

/// The message of an `isError` answer.
fn error(answer: &Value) -> String {
    assert_eq!(answer["isError"], json!(true), "{answer}");
    assert_eq!(answer.get("structuredContent"), None);
    answer["content"][0]["text"].as_str().unwrap().to_string()
}

/// Pages through the array or string at `pointer` (with an optional jq filter) and returns
/// the pieces reassembled, checking offsets and totals on the way.
fn page_all(
    store: &FileStore,
    uri: &str,
    pointer: &str,
    jq: Option<&str>,
    limit: usize,
) -> (Value, usize) {
    let mut offset = 0usize;
    let mut items = Vec::new();
    let mut text = String::new();
    let mut pages = 0;
    let mut total = None;
    loop {
        let mut args = json!({"uri": uri, "pointer": pointer, "offset": offset});
        if let Some(jq) = jq {
            args["jq"] = json!(jq);
        }
        let s = ok(&read(store, args, limit));
        pages += 1;
        assert_eq!(s["offset"], json!(offset));
        let this_total = s["total"].as_u64().unwrap();
        assert_eq!(*total.get_or_insert(this_total), this_total);
        let got = if let Some(window) = s["items"].as_array() {
            items.extend(window.iter().cloned());
            window.len()
        } else {
            let window = s["text"].as_str().unwrap();
            text.push_str(window);
            window.chars().count()
        };
        match s["next_offset"].as_u64() {
            Some(next) => {
                assert_eq!(next as usize, offset + got);
                assert!(got > 0, "no progress at {offset}");
                offset = next as usize;
            }
            None => {
                assert_eq!(offset + got, this_total as usize);
                break;
            }
        }
        assert!(pages < 100_000);
    }
    let whole = if s_is_text(&items, &text) {
        json!(text)
    } else {
        Value::Array(items)
    };
    (whole, pages)
}

fn s_is_text(items: &[Value], text: &str) -> bool {
    items.is_empty() && !text.is_empty()
}

fn big_structured(n: usize) -> Value {
    let items: Vec<Value> = (0..n)
        .map(|i| json!({"id": i, "name": format!("file-{i}.txt"), "size": i * 37 % 1000, "tags": ["a", "\"quoted\""]}))
        .collect();
    json!({
        "content": [{"type": "text", "text": serde_json::to_string(&json!({"items": items})).unwrap()}],
        "structuredContent": {"items": items, "count": n}
    })
}

#[test]
fn paging_a_structured_array_reassembles_it_exactly() {
    let (_dir, store) = store();
    let stored = big_structured(3000);
    let uri = put(&store, &stored);
    let (items, pages) = page_all(&store, &uri, "/structuredContent/items", None, 4096);
    assert_eq!(items, stored["structuredContent"]["items"]);
    assert!(pages > 50, "{pages}");
}

#[test]
fn the_json_text_block_is_reachable_by_pointer() {
    let (_dir, store) = store();
    let stored = big_structured(500);
    let uri = put(&store, &stored);
    let s = ok(&read(
        &store,
        json!({"uri": uri, "pointer": "/content/0/text/items", "offset": 7, "limit": 3}),
        8192,
    ));
    assert_eq!(
        s["items"],
        json!(stored["structuredContent"]["items"].as_array().unwrap()[7..10])
    );
    assert_eq!(s["next_offset"], json!(10));
    assert_eq!(s["total"], json!(500));
    let s = ok(&read(
        &store,
        json!({"uri": uri, "pointer": "/content/0/text/items/42/name"}),
        8192,
    ));
    assert_eq!(
        s,
        json!({"text": "file-42.txt", "offset": 0, "next_offset": null, "total": 11})
    );
    let s = ok(&read(
        &store,
        json!({"uri": uri, "pointer": "/structuredContent/count"}),
        8192,
    ));
    assert_eq!(
        s,
        json!({"value": 500, "offset": 0, "next_offset": null, "total": 1})
    );
}

#[test]
fn paging_a_big_text_block_reassembles_it_in_scalar_values() {
    let (_dir, store) = store();
    // Emoji (one scalar value each, 4 bytes), a letter with a combining mark (two), quotes,
    // backslashes, newlines and control characters (escaped in JSON, so bigger on the wire).
    let line = "línea 😀 \"q\" \\ e\u{301} \u{1}\t👍🏽\n";
    let text = line.repeat(2000);
    let uri = put(
        &store,
        &json!({"content": [{"type": "text", "text": text}]}),
    );
    let (whole, pages) = page_all(&store, &uri, "/content/0/text", None, 2000);
    assert_eq!(whole, json!(text));
    assert!(pages > 20, "{pages}");
    let s = ok(&read(
        &store,
        json!({"uri": uri, "pointer": "/content/0/text", "limit": 1}),
        2000,
    ));
    assert_eq!(s["total"], json!(text.chars().count()));
}

#[test]
fn unicode_windows_count_scalar_values() {
    let (_dir, store) = store();
    // 👍🏽 is two scalar values (thumbs up, skin tone); e + U+0301 is two; 😀 is one.
    let uri = put(
        &store,
        &json!({"content": [{"type": "text", "text": "👍🏽e\u{301}😀!"}]}),
    );
    let window = |offset: usize, limit: usize| {
        ok(&read(
            &store,
            json!({"uri": uri, "pointer": "/content/0/text", "offset": offset, "limit": limit}),
            1000,
        ))
    };
    assert_eq!(window(0, 1)["text"], json!("👍"));
    assert_eq!(window(1, 1)["text"], json!("🏽"));
    assert_eq!(window(2, 2)["text"], json!("e\u{301}"));
    assert_eq!(window(3, 2)["text"], json!("\u{301}😀"));
    let end = window(4, 10);
    assert_eq!(
        end,
        json!({"text": "😀!", "offset": 4, "next_offset": null, "total": 6})
    );
}

#[test]
fn pointer_then_jq_then_window() {
    let (_dir, store) = store();
    let stored = big_structured(1000);
    let uri = put(&store, &stored);
    let args = json!({
        "uri": uri, "pointer": "/structuredContent/items",
        "jq": ".[] | select(.id % 10 == 0) | .id", "offset": 5, "limit": 4
    });
    let s = ok(&read(&store, args, 4096));
    assert_eq!(
        s,
        json!({"items": [50, 60, 70, 80], "offset": 5, "next_offset": 9, "total": 100})
    );

    // jq over the whole stored result, one output: a value.
    let s = ok(&read(
        &store,
        json!({"uri": uri, "jq": ".structuredContent.items | map(.size) | add"}),
        4096,
    ));
    let sum: u64 = (0..1000u64).map(|i| i * 37 % 1000).sum();
    assert_eq!(s["value"], json!(sum));

    // Paging through jq output reassembles it too.
    let (names, _) = page_all(
        &store,
        &uri,
        "/structuredContent/items",
        Some("map(.name)"),
        1024,
    );
    let expected: Vec<Value> = (0..1000).map(|i| json!(format!("file-{i}.txt"))).collect();
    assert_eq!(names, Value::Array(expected));
}

#[test]
fn jq_errors_are_tool_errors_with_jaqs_message() {
    let (_dir, store) = store();
    let uri = put(&store, &big_structured(10));
    for (filter, words) in [
        (".structuredContent | ", "does not parse"),
        ("[.content", "does not parse"),
        (
            ".structuredContent | frobnicate",
            "undefined filter `frobnicate`",
        ),
        (".structuredContent.count.x", "cannot index"),
        ("error(\"no such row\")", "no such row"),
        ("env", "env is not available"),
        ("repeat(1)", "outputs"),
    ] {
        let message = error(&read(&store, json!({"uri": uri, "jq": filter}), 2048));
        assert!(message.contains(words), "{filter}: {message}");
    }
}

#[test]
fn missing_and_corrupt_artifacts_are_tool_errors() {
    let (dir, store) = store();
    let missing = artifact_uri(&Digest::of(b"never stored"));
    let message = error(&read(&store, json!({"uri": missing}), 2048));
    assert!(message.contains("is not in the store"), "{message}");

    let result = big_structured(5);
    let uri = put(&store, &result);
    let digest = drill::parse_artifact_uri(&uri).unwrap();
    let mut bytes = serde_json::to_vec(&result).unwrap();
    bytes[10] ^= 1;
    std::fs::write(dir.path().join("sha256").join(digest.hex()), &bytes).unwrap();
    let message = error(&read(&store, json!({"uri": uri}), 2048));
    assert!(message.contains("is corrupted"), "{message}");

    // Intact in the store, but not a JSON result (not UTF-8, or not JSON).
    for bytes in [&b"\xff not json"[..], b"plain text", b"{\"cut\":"] {
        let digest = store.put(bytes, "application/json", &[]).unwrap().digest;
        let message = error(&read(&store, json!({"uri": artifact_uri(&digest)}), 2048));
        assert!(message.contains("not a JSON result"), "{message}");
        let err = read_resource(&artifact_uri(&digest), &store).unwrap_err();
        assert_eq!(err.code, INTERNAL_ERROR);
        assert!(err.message.contains("not a JSON result"), "{}", err.message);
    }
}

#[test]
fn bad_arguments_and_pointers_are_tool_errors() {
    let (_dir, store) = store();
    let uri = put(&store, &big_structured(3));
    for (args, words) in [
        (json!({}), "`uri` is required"),
        (json!("uri"), "must be an object"),
        (json!({"uri": 7}), "`uri` must be a string"),
        (
            json!({"uri": "file:///etc/passwd"}),
            "is not an artifact URI",
        ),
        (
            json!({"uri": "envelope://artifact/sha256/abc"}),
            "is not an artifact URI",
        ),
        (
            json!({"uri": uri, "offset": "0"}),
            "`offset` must be an integer",
        ),
        (
            json!({"uri": uri, "limit": -2}),
            "`limit` must be an integer >= 1",
        ),
        (
            json!({"uri": uri, "pointer": "structuredContent"}),
            "JSON Pointer",
        ),
        (
            json!({"uri": uri, "pointer": "/structuredContent/nope"}),
            "has no member \"nope\"",
        ),
        (
            json!({"uri": uri, "pointer": "/structuredContent/items/9"}),
            "has 3 items",
        ),
        (
            json!({"uri": uri, "pointer": "/structuredContent/items", "offset": 4}),
            "past the end",
        ),
        (
            json!({"uri": uri, "pointer": "/structuredContent", "offset": 1}),
            "page through an array or a string",
        ),
        (json!({"uri": uri, "page": 2}), "unknown argument `page`"),
    ] {
        let message = error(&read(&store, args.clone(), 2048));
        assert!(message.contains(words), "{args}: {message}");
    }
}

#[test]
fn too_big_to_answer_whole_says_how_to_narrow() {
    let (_dir, store) = store();
    let uri = put(&store, &big_structured(200));
    // The whole stored result is an object far over the limit: the keys are listed.
    let message = error(&read(&store, json!({"uri": uri}), 1024));
    assert!(
        message.contains("\"content\", \"structuredContent\""),
        "{message}"
    );
    // A small one is answered whole.
    let small = json!({"content": [{"type": "text", "text": "hi"}], "isError": false});
    let uri = put(&store, &small);
    assert_eq!(ok(&read(&store, json!({"uri": uri}), 1024))["value"], small);
}

#[test]
fn long_error_messages_are_cut_to_the_limit() {
    let (_dir, store) = store();
    let keys: serde_json::Map<String, Value> = (0..30)
        .map(|i| (format!("{}{i}", "k".repeat(40)), json!(i)))
        .collect();
    let uri = put(&store, &json!({"structuredContent": keys, "content": []}));
    // The error lists keys; at 200 bytes it must be cut, and say so.
    let message = error(&read(
        &store,
        json!({"uri": uri, "pointer": "/structuredContent/x"}),
        200,
    ));
    assert!(message.ends_with("..."), "{message}");
}

#[test]
fn read_resource_returns_the_stored_result() {
    let (dir, store) = store();
    let result = big_structured(50);
    let uri = put(&store, &result);
    let answer = read_resource(&uri, &store).unwrap();
    assert_eq!(answer["contents"].as_array().unwrap().len(), 1);
    let content = &answer["contents"][0];
    assert_eq!(content["uri"], json!(uri));
    assert_eq!(content["mimeType"], json!("application/json"));
    assert_eq!(
        content["text"].as_str().unwrap().as_bytes(),
        serde_json::to_vec(&result).unwrap()
    );

    let err = read_resource("envelope://artifact/sha256/nothex", &store).unwrap_err();
    assert_eq!(err.code, RESOURCE_NOT_FOUND);
    let missing = artifact_uri(&Digest::of(b"absent"));
    let err = read_resource(&missing, &store).unwrap_err();
    assert_eq!(err.code, RESOURCE_NOT_FOUND);
    assert!(err.message.contains("not in the store"), "{}", err.message);
    assert_eq!(err.to_error_object()["data"]["uri"], json!(missing));

    let digest = drill::parse_artifact_uri(&uri).unwrap();
    std::fs::write(dir.path().join("sha256").join(digest.hex()), b"{}").unwrap();
    let err = read_resource(&uri, &store).unwrap_err();
    assert_eq!(err.code, INTERNAL_ERROR);
    assert!(err.message.contains("corrupted"), "{}", err.message);
}

#[test]
fn the_tool_and_the_template_describe_themselves() {
    let tool = read_tool();
    assert_eq!(tool["name"], json!("envelope_read"));
    assert_eq!(tool["inputSchema"]["required"], json!(["uri"]));
    let properties = tool["inputSchema"]["properties"].as_object().unwrap();
    let names: Vec<&str> = properties.keys().map(String::as_str).collect();
    assert_eq!(names, ["uri", "pointer", "offset", "limit", "jq"]);
    let description = tool["description"].as_str().unwrap();
    for word in [
        "next_offset",
        "pointer",
        "jq",
        "envelope://artifact/sha256/",
    ] {
        assert!(description.contains(word), "{word}");
    }
    // The input schema accepts a real call and refuses a call without `uri`.
    let validator = jsonschema::validator_for(&tool["inputSchema"]).unwrap();
    assert!(validator.is_valid(&json!({"uri": "envelope://x", "offset": 3, "jq": "."})));
    assert!(!validator.is_valid(&json!({"offset": 3})));

    let template = resource_template();
    let pattern = template["uriTemplate"].as_str().unwrap();
    let uri = artifact_uri(&Digest::of(b"x"));
    assert_eq!(pattern.replace("{digest}", &Digest::of(b"x").hex()), uri);
    assert_eq!(template["mimeType"], json!("application/json"));
}

fn arb_text() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop_oneof![
            Just("a".to_string()),
            Just("é".to_string()),
            Just("e\u{301}".to_string()),
            Just("😀".to_string()),
            Just("\"".to_string()),
            Just("\n".to_string()),
            Just("\u{7}".to_string()),
            "[a-z]{1,30}",
        ],
        0..250,
    )
    .prop_map(|parts| parts.concat())
}

fn arb_item() -> impl Strategy<Value = Value> {
    prop_oneof![
        any::<i64>().prop_map(Value::from),
        arb_text().prop_map(Value::from),
        proptest::collection::vec(any::<u16>(), 0..20).prop_map(|v| json!({"v": v})),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Every answer fits its limit, and paging reassembles the array and the text exactly.
    #[test]
    fn every_answer_fits_and_paging_is_exact(
        items in proptest::collection::vec(arb_item(), 0..200),
        text in arb_text(),
        limit in 100usize..6000,
        offset in 0usize..300,
        count in proptest::option::of(1usize..50),
    ) {
        let (_dir, store) = store();
        let result = json!({"content": [{"type": "text", "text": text}], "structuredContent": {"items": items}});
        let uri = put(&store, &result);

        // A random window: an answer or an error, both within the limit.
        for pointer in ["/structuredContent/items", "/content/0/text", ""] {
            let mut args = json!({"uri": uri, "pointer": pointer, "offset": offset});
            if let Some(count) = count {
                args["limit"] = json!(count);
            }
            let answer = read(&store, args, limit);
            if answer.get("isError").is_none() {
                ok(&answer);
            }
        }

        // Paging, where every single item fits: once as a value, once in the text mirror,
        // where its JSON is a string (quotes and backslashes escaped).
        let biggest = items
            .iter()
            .map(|i| {
                let json = serde_json::to_string(i).unwrap();
                json.len() + serde_json::to_string(&json).unwrap().len()
            })
            .max()
            .unwrap_or(0);
        if biggest + 200 < limit {
            let (got, _) = page_all(&store, &uri, "/structuredContent/items", None, limit);
            prop_assert_eq!(got, Value::Array(items.clone()));
        }
        if !text.is_empty() && limit >= 400 {
            let (got, _) = page_all(&store, &uri, "/content/0/text", None, limit);
            prop_assert_eq!(got, json!(text));
        }
    }
}

#[test]
fn an_artifact_over_the_client_bound_is_read_as_its_first_window() {
    let (_dir, store) = store();
    // 12.6 MB of text with quotes and newlines (escaped larger on the wire).
    let line = "{\"row\": 12345, \"name\": \"a \\\"quoted\\\" name\"}\n";
    let text = line.repeat(12_600_000 / line.len());
    let result = json!({"content": [{"type": "text", "text": text}]});
    let uri = put(&store, &result);
    let artifact = serde_json::to_string(&result).unwrap();
    let answer = read_resource(&uri, &store).unwrap();
    let message =
        serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": 1, "result": answer})).unwrap();
    assert!(
        message.len() <= envelope_mcp::outbound::MAX_CLIENT_MESSAGE,
        "{} bytes",
        message.len()
    );
    let first = &answer["contents"][0];
    let window = first["text"].as_str().unwrap();
    assert!(window.len() > 4_000_000, "{}", window.len());
    assert!(artifact.starts_with(window));
    assert_eq!(
        first["_meta"]["dev.envelope/window"]["total"],
        artifact.len()
    );
    assert_eq!(first["_meta"]["dev.envelope/window"]["bytes"], window.len());
    let how = answer["contents"][1]["text"].as_str().unwrap();
    assert!(how.contains("envelope_read") && how.contains(&uri), "{how}");
    // A small artifact is still read whole, as JSON.
    let small = put(
        &store,
        &json!({"content": [{"type": "text", "text": "hi"}]}),
    );
    let whole = read_resource(&small, &store).unwrap();
    assert_eq!(whole["contents"].as_array().unwrap().len(), 1);
    assert_eq!(whole["contents"][0]["mimeType"], "application/json");
}

#[test]
fn a_long_malformed_uri_is_not_echoed_whole() {
    let (_dir, store) = store();
    let uri = format!("envelope://artifact/sha256/{}", "z".repeat(100_000));
    let error = read_resource(&uri, &store).unwrap_err();
    let object = error.to_error_object();
    assert!(
        object.to_string().len() < 1000,
        "{} bytes",
        object.to_string().len()
    );
    let tool = call_read(&json!({"uri": uri}), &store, 16 * 1024);
    assert_eq!(tool["isError"], true);
    assert!(tool.to_string().len() < 1000, "{tool}");
}
