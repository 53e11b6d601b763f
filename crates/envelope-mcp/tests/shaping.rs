//! `shape_result` against its promises: at most the limit, valid MCP for the revision,
//! `structuredContent` valid against the tool's schema, the store holding exactly the full
//! redacted result, a link that names it, and small clean results untouched.

mod common;

use common::*;
use envelope::FormatId;
use envelope_mcp::revision::Revision;
use envelope_mcp::shaping::{CallContext, ToolSettings, shape_result};
use envelope_store::Store;
use proptest::prelude::*;
use serde_json::{Value, json};

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn random_results_keep_every_promise(seed in any::<u64>(), limit in 400usize..12_000, rev in 0usize..5) {
        let revision = Revision::ALL[rev];
        let generated = random_result(seed, revision);
        let store = TempStore::new();
        let call = CallContext::new("tool", generated.schema.as_ref(), revision);
        let settings = ToolSettings { limit, ..ToolSettings::default() };
        let input = generated.result.to_string();
        let outcome = shape_result(input.as_bytes(), &call, &settings, &store.store).unwrap();
        check_promises(&input, &generated, &outcome, &call, limit, &store);
    }
}

#[test]
fn a_small_clean_result_comes_back_byte_for_byte_even_when_not_compact() {
    let store = TempStore::new();
    let call = CallContext::new("t", None, Revision::V2025_06_18);
    let settings = ToolSettings {
        limit: 200,
        ..ToolSettings::default()
    };
    let pretty = b"{\n  \"content\": [ {\"type\": \"text\", \"text\": \"hi\"} ],\n  \"x-future\": {\"keep\": 1.50}\n}";
    let outcome = shape_result(pretty, &call, &settings, &store.store).unwrap();
    assert!(!outcome.changed);
    assert_eq!(outcome.bytes, pretty);
    assert_eq!(outcome.stored, None);
    assert!(store.is_empty());
}

#[test]
fn pass_through_returns_the_input_even_when_huge_or_secret() {
    let store = TempStore::new();
    let call = CallContext::new("t", None, Revision::V2025_06_18);
    let settings = ToolSettings {
        limit: 100,
        pass_through: true,
        ..ToolSettings::default()
    };
    let input =
        json!({"content": [text(&format!("{} {}", GITHUB_TOKEN, "x".repeat(5000)))]}).to_string();
    let outcome = shape_result(input.as_bytes(), &call, &settings, &store.store).unwrap();
    assert_eq!(outcome.bytes, input.as_bytes());
    assert!(!outcome.changed);
    assert!(store.is_empty());
}

#[test]
fn secrets_are_masked_in_every_channel_before_anything_is_stored() {
    let result = json!({
        "content": [
            text(&format!("token {GITHUB_TOKEN}")),
            {"type": "resource", "resource": {"uri": "file:///env", "mimeType": "text/plain", "text": format!("AWS key AKIAABCDEFGHIJKLMNOP\n{}", "y".repeat(3000))}},
        ],
        "structuredContent": {"config": {"password": "hunter2", "rows": ["a"]}},
        "_meta": {"api_key": "k-123"},
        "x-extra": {"authorization": "Bearer abc.def"},
    });
    for limit in [100_000, 1_200] {
        let store = TempStore::new();
        let call = CallContext::new("t", None, Revision::V2025_11_25);
        let settings = ToolSettings {
            limit,
            ..ToolSettings::default()
        };
        let outcome = shape_result(
            result.to_string().as_bytes(),
            &call,
            &settings,
            &store.store,
        )
        .unwrap();
        assert!(outcome.changed);
        assert_eq!(outcome.redactions, 5, "{limit}");
        let out = String::from_utf8(outcome.bytes.clone()).unwrap();
        for secret in [
            GITHUB_TOKEN,
            "AKIAABCDEFGHIJKLMNOP",
            "hunter2",
            "k-123",
            "abc.def",
        ] {
            assert!(!out.contains(secret), "{secret} in {out}");
            for stored in store.all() {
                assert!(
                    !String::from_utf8_lossy(&stored).contains(secret),
                    "{secret} stored"
                );
            }
        }
        // Small enough once masked: nothing stored; else stored whole, masked.
        assert_eq!(outcome.stored.is_some(), limit == 1_200);
        assert!(outcome.bytes.len() <= limit);
    }
}

#[test]
fn a_large_result_is_stored_as_redacted_whether_or_not_redaction_changed_it() {
    // Over a megabyte: hashed on another thread while redaction runs, and stored beside the
    // cut. The stored bytes are the full redacted result, under their own digest, in every
    // case: clean and compact (the input itself), with a secret, not compact.
    let log = "commit 1\nAuthor: Dev <dev@example.com>\n\n    fix: a=b\n".repeat(40_000);
    let clean = json!({"content": [text(&log)]}).to_string();
    let secret = json!({"content": [text(&format!("{log}token={GITHUB_TOKEN}\n"))]}).to_string();
    let spread = format!("{{ \"content\": [ {} ] }}", json!(text(&log)));
    for (input, expected_redactions) in [(&clean, 0), (&secret, 1), (&spread, 0)] {
        assert!(input.len() > 1 << 20);
        let store = TempStore::new();
        let call = CallContext::new("t", None, Revision::V2025_11_25);
        let settings = ToolSettings {
            limit: 4_000,
            ..ToolSettings::default()
        };
        let outcome = shape_result(input.as_bytes(), &call, &settings, &store.store).unwrap();
        assert_eq!(outcome.redactions, expected_redactions);
        assert!(outcome.bytes.len() <= 4_000);
        let digest = outcome.stored.expect("stored");
        let stored = store.store.get(&digest).unwrap();
        assert_eq!(envelope_store::Digest::of(&stored), digest);
        let full: Value = serde_json::from_slice(&stored).unwrap();
        let expected_text = match expected_redactions {
            0 => log.clone(),
            _ => format!("{log}token=***\n"),
        };
        assert_eq!(full, json!({"content": [text(&expected_text)]}));
        assert!(!String::from_utf8_lossy(&stored).contains(GITHUB_TOKEN));
        assert_eq!(store.all().len(), 1);
        // Asked for again: the same answer, the blob left as it is.
        let again = shape_result(input.as_bytes(), &call, &settings, &store.store).unwrap();
        assert_eq!(again.bytes, outcome.bytes);
        assert_eq!(store.all().len(), 1);
    }
}

#[test]
fn the_link_is_a_resource_link_from_2025_06_18_and_a_text_line_before() {
    let result = json!({"content": [text(&"log line\n".repeat(3000))]}).to_string();
    for revision in Revision::ALL {
        let store = TempStore::new();
        let call = CallContext::new("t", None, revision);
        let settings = ToolSettings {
            limit: 2_000,
            ..ToolSettings::default()
        };
        let outcome = shape_result(result.as_bytes(), &call, &settings, &store.store).unwrap();
        let out: Value = serde_json::from_slice(&outcome.bytes).unwrap();
        let digest = outcome.stored.unwrap();
        let uri = envelope_mcp::drill::artifact_uri(&digest);
        let last = out["content"].as_array().unwrap().last().unwrap().clone();
        if revision.supports_resource_link() {
            assert_eq!(last["type"], "resource_link", "{revision}");
            assert_eq!(last["uri"], uri);
            assert_eq!(last["mimeType"], "application/json");
            assert_eq!(last["size"], store.store.get(&digest).unwrap().len());
        } else {
            assert_eq!(last["type"], "text", "{revision}");
            assert!(last["text"].as_str().unwrap().contains(&uri));
            assert!(!outcome.bytes.windows(13).any(|w| w == b"resource_link"));
        }
        // The note says what was cut, and the payload kept is the start of the text.
        let notice = out["content"][0]["text"].as_str().unwrap();
        assert!(
            notice.starts_with("Output truncated to fit 2000 bytes"),
            "{notice}"
        );
        assert!(
            out["content"][1]["text"]
                .as_str()
                .unwrap()
                .starts_with("log line\nlog line")
        );
        assert!(outcome.truncated);
    }
}

#[test]
fn structured_content_and_its_mirror_stay_equal_when_cut() {
    let rows: Vec<Value> = (0..2000)
        .map(|i| json!({"id": i, "name": format!("row {i}")}))
        .collect();
    let sc = json!({"rows": rows, "total": 2000});
    let result = json!({"content": [text(&sc.to_string())], "structuredContent": sc});
    let store = TempStore::new();
    let schema = rows_schema();
    let call = CallContext::new("rows", Some(&schema), Revision::V2025_06_18);
    let settings = ToolSettings {
        limit: 4_096,
        ..ToolSettings::default()
    };
    let outcome = shape_result(
        result.to_string().as_bytes(),
        &call,
        &settings,
        &store.store,
    )
    .unwrap();
    assert!(outcome.bytes.len() <= 4_096);
    let out: Value = serde_json::from_slice(&outcome.bytes).unwrap();
    let kept = &out["structuredContent"];
    let n = kept["rows"].as_array().unwrap().len();
    assert!(n > 50 && n < 2000, "{n}");
    assert_eq!(kept["total"], 2000);
    let mirrors: Vec<Value> = out["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|b| serde_json::from_str(b["text"].as_str()?).ok())
        .collect();
    assert_eq!(mirrors, vec![kept.clone()]);
    assert!(call.output_schema.unwrap().is_valid(kept));
}

#[test]
fn a_cut_the_schema_forbids_becomes_an_error_result_naming_the_uri() {
    // At least 1000 rows: any cut breaks the schema.
    let schema = json!({"type": "object", "properties": {"rows": {"type": "array", "minItems": 1000}}, "required": ["rows"]});
    let rows: Vec<Value> = (0..1500).map(|i| json!(format!("row {i}"))).collect();
    let sc = json!({"rows": rows});
    let result = json!({"content": [text(&sc.to_string())], "structuredContent": sc});
    let store = TempStore::new();
    let call = CallContext::new("rows", Some(&schema), Revision::V2026_07_28);
    let settings = ToolSettings {
        limit: 3_000,
        ..ToolSettings::default()
    };
    let outcome = shape_result(
        result.to_string().as_bytes(),
        &call,
        &settings,
        &store.store,
    )
    .unwrap();
    assert!(outcome.bytes.len() <= 3_000);
    let out: Value = serde_json::from_slice(&outcome.bytes).unwrap();
    assert_eq!(out["isError"], true);
    assert_eq!(out["resultType"], "complete");
    assert!(out.get("structuredContent").is_none());
    let uri = envelope_mcp::drill::artifact_uri(outcome.stored.as_ref().unwrap());
    assert!(out.to_string().contains(&uri));
    assert!(
        out["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("outputSchema")
    );
    // The excerpt quotes the start of the result.
    assert!(
        out["content"][1]["text"]
            .as_str()
            .unwrap()
            .starts_with("{\"rows\":[\"row 0\"")
    );
}

#[test]
fn non_text_blocks_are_kept_whole_or_replaced_by_a_line_never_cut() {
    let small_image = json!({"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"});
    let big_image = json!({"type": "image", "data": "A".repeat(40_000), "mimeType": "image/png"});
    let resource = json!({"type": "resource", "resource": {"uri": "file:///a", "mimeType": "text/plain", "text": "r".repeat(30_000)}});
    let unknown = json!({"type": "x-chart", "series": (0..3000).collect::<Vec<_>>()});
    let result = json!({"content": [
        text(&"first ".repeat(500)), small_image, big_image, resource, unknown, text(&"last ".repeat(500)),
    ]});
    let store = TempStore::new();
    let call = CallContext::new("t", None, Revision::V2025_06_18);
    let settings = ToolSettings {
        limit: 6_000,
        ..ToolSettings::default()
    };
    let outcome = shape_result(
        result.to_string().as_bytes(),
        &call,
        &settings,
        &store.store,
    )
    .unwrap();
    assert!(outcome.bytes.len() <= 6_000);
    let out: Value = serde_json::from_slice(&outcome.bytes).unwrap();
    let blocks = out["content"].as_array().unwrap();
    let originals = result["content"].as_array().unwrap();
    for b in blocks {
        if b["type"] != "text" && b["type"] != "resource_link" {
            assert!(originals.contains(b), "a non-text block was cut: {b}");
        }
    }
    assert!(
        blocks.contains(&originals[1]),
        "the small image fits and is kept"
    );
    let texts: String = blocks.iter().filter_map(|b| b["text"].as_str()).collect();
    assert!(
        texts.contains("[image block (image/png, 40049 bytes) left out to fit the limit"),
        "{texts}"
    );
}

#[test]
fn a_large_error_result_stays_an_error_and_quotes_its_message() {
    let result = json!({"content": [text(&format!("Traceback: {}", "frame\n".repeat(5000)))], "isError": true});
    let store = TempStore::new();
    let call = CallContext::new("t", None, Revision::V2024_11_05);
    let settings = ToolSettings {
        limit: 1_500,
        ..ToolSettings::default()
    };
    let outcome = shape_result(
        result.to_string().as_bytes(),
        &call,
        &settings,
        &store.store,
    )
    .unwrap();
    assert!(outcome.bytes.len() <= 1_500);
    let out: Value = serde_json::from_slice(&outcome.bytes).unwrap();
    assert_eq!(out["isError"], true);
    assert!(out.to_string().contains("Traceback: frame"));
    assert!(out.to_string().contains(&envelope_mcp::drill::artifact_uri(
        outcome.stored.as_ref().unwrap()
    )));
}

#[test]
fn a_large_result_that_is_not_a_call_tool_result_is_stored_and_named() {
    let result = json!({"rows": "x".repeat(10_000)});
    let store = TempStore::new();
    let call = CallContext::new("t", None, Revision::V2025_06_18);
    let settings = ToolSettings {
        limit: 1_000,
        ..ToolSettings::default()
    };
    let outcome = shape_result(
        result.to_string().as_bytes(),
        &call,
        &settings,
        &store.store,
    )
    .unwrap();
    let out: Value = serde_json::from_slice(&outcome.bytes).unwrap();
    assert_eq!(out["isError"], true);
    let stored = store.store.get(outcome.stored.as_ref().unwrap()).unwrap();
    assert_eq!(serde_json::from_slice::<Value>(&stored).unwrap(), result);
}

#[test]
fn bad_input_and_impossible_limits_are_clear_errors() {
    let store = TempStore::new();
    let call = CallContext::new("t", None, Revision::V2025_06_18);
    let settings = ToolSettings::default();
    let e = shape_result(b"{\"content\": [", &call, &settings, &store.store).unwrap_err();
    assert_eq!(e.code(), "shape.json");
    let big = json!({"content": [text(&"z".repeat(5000))]}).to_string();
    let tiny = ToolSettings {
        limit: 60,
        ..ToolSettings::default()
    };
    let e = shape_result(big.as_bytes(), &call, &tiny, &store.store).unwrap_err();
    assert_eq!(e.code(), "shape.limit-too-small");
    assert!(e.to_string().contains("60 bytes"), "{e}");
    // Just enough for the one-line error result: that is what comes back.
    for limit in [200, 300] {
        let settings = ToolSettings {
            limit,
            ..ToolSettings::default()
        };
        let outcome = shape_result(big.as_bytes(), &call, &settings, &store.store).unwrap();
        assert!(outcome.bytes.len() <= limit);
        let out: Value = serde_json::from_slice(&outcome.bytes).unwrap();
        assert!(
            out.to_string().contains("envelope://artifact/sha256/"),
            "{out}"
        );
    }
}

#[test]
fn emit_writes_each_format_so_that_detect_names_it_and_unwrap_gives_the_payload() {
    let small = json!({"content": [text("{\"a\":1}")], "structuredContent": {"a": 1}});
    let rows: Vec<Value> = (0..3000).map(|i| json!({"id": i})).collect();
    let big = json!({"content": [text(&json!({"rows": rows}).to_string())], "structuredContent": {"rows": rows}});
    for format in FormatId::ALL {
        for (result, limit) in [(&small, 16_384), (&big, 4_096)] {
            let store = TempStore::new();
            let call = CallContext::new("t", None, Revision::V2025_06_18);
            let settings = ToolSettings {
                limit,
                emit: Some(format),
                ..ToolSettings::default()
            };
            let outcome = shape_result(
                result.to_string().as_bytes(),
                &call,
                &settings,
                &store.store,
            )
            .unwrap_or_else(|e| panic!("{format:?}: {e}"));
            assert!(outcome.bytes.len() <= limit, "{format:?}");
            let doc = emitted_document(&outcome.bytes, format);
            let (_, env) = envelope::formats::decode_any(&doc, None, &Default::default()).unwrap();
            match envelope::shape::kept::kept_payload(&env) {
                envelope::shape::kept::Kept::Whole(v) => {
                    assert_eq!(&v, &result["structuredContent"], "{format:?}")
                }
                envelope::shape::kept::Kept::Part(v) => {
                    assert!(outcome.stored.is_some(), "{format:?}");
                    let kept = v["rows"].as_array().unwrap();
                    assert!(
                        !kept.is_empty() && kept[..] == rows[..kept.len()],
                        "{format:?}"
                    );
                }
                other => panic!("{format:?}: {other:?}"),
            }
        }
    }
}

/// The `envelope_read` arguments a notice ends with.
fn read_on_call(notice: &str) -> Value {
    let (_, call) = notice
        .rsplit_once(" Read on: envelope_read ")
        .unwrap_or_else(|| panic!("no envelope_read call at the end of {notice}"));
    serde_json::from_str(call).unwrap()
}

#[test]
fn every_pointer_a_cut_names_reads_with_envelope_read_and_the_notice_reads_on() {
    use envelope_mcp::drill::call_read;
    use envelope_mcp::shaping::Channels;
    let text_of = "line of text, \"quoted\" and ünïcode\n".repeat(2000);
    let rows: Vec<Value> = (0..2000)
        .map(|i| json!({"id": i, "name": format!("row {i}")}))
        .collect();
    let sc = json!({"rows": rows, "total": 2000});
    let file_schema = json!({"type": "object", "properties": {"content": {"type": "string"}}, "required": ["content"]});
    let cases = [
        (
            "text",
            json!({"content": [text(&text_of)]}),
            None,
            Channels::default(),
        ),
        (
            "two texts",
            json!({"content": [text(&text_of), text(&text_of)]}),
            None,
            Channels::default(),
        ),
        (
            "mirror",
            json!({"content": [text(&sc.to_string())], "structuredContent": sc}),
            Some(rows_schema()),
            Channels::default(),
        ),
        (
            "summary",
            json!({"content": [text("2000 rows")], "structuredContent": sc}),
            Some(rows_schema()),
            Channels::default(),
        ),
        (
            "text and image",
            json!({"content": [text(&text_of), {"type": "image", "data": "QUJD", "mimeType": "image/png"}]}),
            None,
            Channels::default(),
        ),
        (
            "file",
            json!({"content": [text(&text_of)], "structuredContent": {"content": text_of}}),
            Some(file_schema.clone()),
            Channels::default(),
        ),
        (
            "file, share",
            json!({"content": [text(&text_of)], "structuredContent": {"content": text_of}}),
            Some(file_schema.clone()),
            Channels::Both {
                text_share: Some(30),
            },
        ),
        (
            "file, pointer",
            json!({"content": [text(&text_of)], "structuredContent": {"content": text_of}}),
            Some(file_schema.clone()),
            Channels::Pointer,
        ),
    ];
    for (name, result, schema, channels) in cases {
        let store = TempStore::new();
        let call = CallContext::new("tool", schema.as_ref(), Revision::V2025_06_18);
        let limit = 6_000;
        let settings = ToolSettings {
            limit,
            channels,
            ..ToolSettings::default()
        };
        let outcome = shape_result(
            result.to_string().as_bytes(),
            &call,
            &settings,
            &store.store,
        )
        .unwrap();
        assert!(outcome.bytes.len() <= limit, "{name}");
        let out: Value = serde_json::from_slice(&outcome.bytes).unwrap();
        assert_ne!(out["isError"], true, "{name}: {out}");
        if let Some(schema) = &call.output_schema {
            assert!(schema.is_valid(&out["structuredContent"]), "{name}: {out}");
        }
        let uri = envelope_mcp::drill::artifact_uri(&outcome.stored.unwrap());
        let stored: Value = serde_json::from_slice(&store.all()[0]).unwrap();
        let marker = &out["_meta"]["dev.envelope/budget"];
        for cut in marker["cuts"].as_array().unwrap() {
            let pointer = cut["pointer"].as_str().unwrap();
            assert!(stored.pointer(pointer).is_some(), "{name}: {pointer}");
            let answer = call_read(
                &json!({"uri": uri, "pointer": pointer}),
                &store.store,
                limit,
            );
            assert_ne!(answer["isError"], true, "{name}: {pointer}: {answer}");
        }
        let notice = out["content"][0]["text"].as_str().unwrap();
        assert_eq!(
            marker["hint"].as_str().map(|h| notice.starts_with(h)),
            Some(true),
            "{name}"
        );
        let args = read_on_call(notice);
        assert_eq!(args["uri"], uri, "{name}");
        let answer = call_read(&args, &store.store, limit);
        assert_ne!(answer["isError"], true, "{name}: {args}: {answer}");
        let window = &answer["structuredContent"];
        let offset = args["offset"].as_u64().unwrap() as usize;
        let whole = stored.pointer(args["pointer"].as_str().unwrap()).unwrap();
        match whole {
            Value::String(s) => {
                let next: String = s.chars().skip(offset).take(20).collect();
                assert!(
                    window["text"].as_str().unwrap().starts_with(&next),
                    "{name}"
                );
                // What the result kept ends where the next part starts.
                let kept: String = s.chars().take(offset).collect();
                let shaped = serde_json::to_string(&out).unwrap();
                let tail: String = kept
                    .chars()
                    .rev()
                    .take(20)
                    .collect::<Vec<_>>()
                    .into_iter()
                    .rev()
                    .collect();
                assert!(
                    shaped.contains(
                        &serde_json::to_string(&tail)
                            .unwrap()
                            .trim_matches('"')
                            .to_string()
                    ),
                    "{name}"
                );
            }
            Value::Array(items) => {
                assert_eq!(window["items"][0], items[offset], "{name}");
            }
            other => panic!("{name}: {other}"),
        }
        if name.starts_with("file") && channels != Channels::Pointer {
            // The text stays lines, unescaped.
            let lines = out["content"][1]["text"].as_str().unwrap();
            assert!(lines.starts_with("line of text, \"quoted\""), "{name}");
            assert!(lines.ends_with('\n'), "{name}");
        }
        if channels == Channels::Pointer {
            let line = out["content"][1]["text"].as_str().unwrap();
            assert!(
                line.contains("structuredContent") && line.len() < 200,
                "{name}: {line}"
            );
        }
    }
}
