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

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Generated results (text, rows with and without a mirror, mixed blocks, errors) in
    /// every emitted format at any limit: at most the limit; either a refusal (an `isError`
    /// result naming the stored result) or the format's document, whose cut (when it is
    /// cut) goes with the stored result; never a cut with nothing stored.
    #[test]
    fn random_results_emitted_in_every_format_keep_the_limit(
        seed in any::<u64>(),
        limit in 300usize..12_000,
        rev in 0usize..5,
        format in prop::sample::select(FormatId::ALL[1..].to_vec()),
    ) {
        prop_assume!(format != FormatId::Mcp);
        let revision = Revision::ALL[rev];
        let generated = random_result(seed, revision);
        let store = TempStore::new();
        let call = CallContext::new("tool", None, revision);
        let settings = ToolSettings { limit, emit: Some(format), ..ToolSettings::default() };
        let input = generated.result.to_string();
        let outcome = match shape_result(input.as_bytes(), &call, &settings, &store.store) {
            Ok(outcome) => outcome,
            // Not even the refusal fits: a limit of a few hundred bytes.
            Err(e) => {
                prop_assert_eq!(e.code(), "shape.limit-too-small", "{}", e);
                return Ok(());
            }
        };
        prop_assert!(outcome.bytes.len() <= limit, "{} > {limit}", outcome.bytes.len());
        let out: Value = serde_json::from_slice(&outcome.bytes).unwrap();
        let text = out["content"][0]["text"].as_str().unwrap_or("");
        let refused =
            text.starts_with("The result of tool") || text.starts_with("Result too large");
        if refused {
            prop_assert_eq!(&out["isError"], &json!(true));
            prop_assert!(outcome.stored.is_some());
            return Ok(());
        }
        let doc = emitted_document(&outcome.bytes, format);
        let (_, env) = envelope::formats::decode_any(&doc, Some(format), &Default::default())
            .map_err(|e| TestCaseError::fail(format!("{e}: {}", String::from_utf8_lossy(&doc))))?;
        if env.budget.as_ref().is_some_and(|b| b.truncated) || outcome.truncated {
            prop_assert!(outcome.stored.is_some(), "cut with nothing stored");
        }
        // The store holds the full redacted result (compact, as the JS writer writes it).
        if let Some(digest) = &outcome.stored {
            let (full, _) = redacted(&generated.result);
            let written = envelope::json::to_vec(&full, envelope::json::Dialect::Js);
            prop_assert!(store.store.get(digest).unwrap() == written, "the stored result differs");
        }
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
    // Each row is there twice (structuredContent and its mirror), beside the notice and its
    // copy in the marker (each with the call that reads on) and the link.
    assert!(n > 40 && n < 2000, "{n}");
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
        // The marker's hint is the notice, call included.
        assert_eq!(marker["hint"].as_str(), Some(notice), "{name}");
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

/// A file read (the text, and `{"content": <the text>}`) whose key `structuredContent` the
/// server spelled with an escape: the channels are told apart on the result as written
/// again, so it is cut channel by channel as when the key is spelled plainly.
#[test]
fn a_structured_content_key_spelled_with_an_escape_is_cut_by_channel_too() {
    let file = "line of text\n".repeat(2000);
    let schema = json!({"type": "object", "properties": {"content": {"type": "string"}}, "required": ["content"]});
    let call = CallContext::new("read_text_file", Some(&schema), Revision::V2025_06_18);
    let settings = ToolSettings {
        limit: 6_000,
        ..ToolSettings::default()
    };
    let plain = json!({"content": [{"type": "text", "text": file}], "structuredContent": {"content": file}}).to_string();
    let escaped = plain.replace(r#""structuredContent":"#, r#""structured\u0043ontent":"#);
    assert_ne!(plain, escaped);
    let mut shaped = Vec::new();
    for input in [&plain, &escaped] {
        let store = TempStore::new();
        let outcome = shape_result(input.as_bytes(), &call, &settings, &store.store).unwrap();
        let out: Value = serde_json::from_slice(&outcome.bytes).unwrap();
        // The text channel keeps its form (lines), beside the cut `structuredContent`.
        let text = out["content"][1]["text"].as_str().unwrap();
        assert!(
            text.starts_with("line of text\n") && text.ends_with('\n'),
            "{out}"
        );
        let content = out["structuredContent"]["content"].as_str().unwrap();
        assert!(
            file.starts_with(content) && content.len() < file.len(),
            "{out}"
        );
        shaped.push(out);
    }
    assert_eq!(shaped[0], shaped[1]);
}

/// The `envelope_read` answer to `args`, which must not be an error.
fn read_ok(args: &Value, store: &TempStore, limit: usize, what: &str) -> Value {
    let answer = envelope_mcp::drill::call_read(args, &store.store, limit);
    assert_ne!(answer["isError"], true, "{what}: {args}: {answer}");
    answer["structuredContent"].clone()
}

/// The value at `pointer` in `value`, stepping into JSON text as `envelope_read` does.
fn at<'a>(value: &'a Value, pointer: &str) -> &'a Value {
    value
        .pointer(pointer)
        .unwrap_or_else(|| panic!("no {pointer:?} in {value}"))
}

/// The part a document kept at `pointer` (a pointer into the payload `whole`) of its
/// decoded payload `kept`. ctxo and tool-result-envelope write a payload that is not an
/// object (a text, blocks) as `{"result": …}` and read it back so: the payload is that one
/// member.
fn kept_at<'a>(kept: &'a Value, whole: &Value, pointer: &str) -> &'a Value {
    match kept.as_object() {
        Some(map) if !whole.is_object() && map.len() == 1 => {
            at(map.values().next().unwrap(), pointer)
        }
        _ => at(kept, pointer),
    }
}

/// Checks that the read-on call `args` returns what follows `kept` (the part the output
/// kept of the value at `args.pointer` in `whole`, the stored artifact).
fn reads_on(args: &Value, kept: &Value, whole: &Value, store: &TempStore, what: &str) {
    let window = read_ok(args, store, 6_000, what);
    let offset = args["offset"].as_u64().unwrap_or(0) as usize;
    match (at(whole, args["pointer"].as_str().unwrap()), kept) {
        (Value::String(s), Value::String(k)) => {
            // What the output kept ends where the call reads on.
            assert_eq!(k.chars().count(), offset, "{what}");
            assert!(s.starts_with(k.as_str()), "{what}");
            let next: String = s.chars().skip(offset).take(40).collect();
            assert!(!next.is_empty(), "{what}");
            assert!(
                window["text"].as_str().unwrap().starts_with(&next),
                "{what}: {window}"
            );
        }
        (Value::Array(items), Value::Array(k)) => {
            assert_eq!(k.len(), offset, "{what}");
            assert_eq!(&items[..offset], &k[..], "{what}");
            assert_eq!(window["items"][0], items[offset], "{what}: {window}");
        }
        (whole, kept) => panic!("{what}: {whole} / {kept}"),
    }
}

/// What `out` names anywhere (in the result, in its text blocks that are JSON, and in
/// tool-envelope-v1's base64 envelope): the cuts of every budget marker (objects with a
/// `cuts` array), every notice (a string that says the output was truncated), every
/// artifact (`sha256:<hex>`).
struct Named {
    cuts: Vec<Value>,
    notices: Vec<String>,
    artifacts: Vec<String>,
    /// Every string, of the output and of the documents its strings hold.
    strings: Vec<String>,
}

fn named_in(out: &Value) -> Named {
    fn walk(v: &Value, named: &mut Named) {
        match v {
            Value::Object(map) => {
                if let Some(list) = map.get("cuts").and_then(Value::as_array) {
                    named.cuts.extend(list.iter().cloned());
                }
                map.values().for_each(|v| walk(v, named));
            }
            Value::Array(items) => items.iter().for_each(|v| walk(v, named)),
            Value::String(s) => {
                named.strings.push(s.clone());
                // A notice, not a document that quotes one.
                let notice = s.starts_with("Output truncated")
                    || (s.starts_with("Result of") && s.contains("\n\nOutput truncated"));
                if notice {
                    named.notices.push(s.clone());
                }
                if s.starts_with("sha256:") && s.len() == 71 {
                    named.artifacts.push(s.clone());
                }
                let inner = match s.strip_prefix("__ENVELOPE_V1__:") {
                    Some(b64) => envelope::base64::decode_strict(b64.as_bytes()).ok(),
                    None => Some(s.as_bytes().to_vec()),
                };
                if let Some(inner) = inner.and_then(|b| serde_json::from_slice::<Value>(&b).ok())
                    && (inner.is_object() || inner.is_array())
                {
                    walk(&inner, named);
                }
            }
            _ => {}
        }
    }
    let mut named = Named {
        cuts: Vec::new(),
        notices: Vec::new(),
        artifacts: Vec::new(),
        strings: Vec::new(),
    };
    walk(out, &mut named);
    named
}

#[test]
fn every_pointer_an_emitted_format_names_reads_with_envelope_read_and_the_notice_reads_on() {
    use envelope_mcp::drill::parse_artifact_uri;
    let text_of = "line of text, \"quoted\" and ünïcode\n".repeat(2000);
    let rows: Vec<Value> = (0..2000)
        .map(|i| json!({"id": i, "name": format!("row {i}")}))
        .collect();
    let sc = json!({"rows": rows, "total": 2000});
    let nested = json!({"log": text_of, "rows": rows});
    let cases = [
        (
            "rows",
            json!({"content": [text(&sc.to_string())], "structuredContent": sc}),
        ),
        ("text", json!({"content": [text(&text_of)]})),
        ("json text", json!({"content": [text(&sc.to_string())]})),
        (
            "two texts",
            json!({"content": [text(&text_of), text(&text_of)]}),
        ),
        (
            "two cuts",
            json!({"content": [text(&nested.to_string())], "structuredContent": nested}),
        ),
    ];
    let limit = 6_000;
    for format in FormatId::ALL.into_iter().filter(|f| *f != FormatId::Mcp) {
        for (name, result) in &cases {
            let what = format!("{format:?}, {name}");
            let store = TempStore::new();
            let call = CallContext::new("tool", None, Revision::V2025_06_18);
            let settings = ToolSettings {
                limit,
                emit: Some(format),
                ..ToolSettings::default()
            };
            let input = result.to_string();
            let outcome = shape_result(input.as_bytes(), &call, &settings, &store.store)
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            // The limit holds with the longer hints.
            assert!(outcome.bytes.len() <= limit, "{what}");
            let out: Value = serde_json::from_slice(&outcome.bytes).unwrap();
            assert_ne!(out["isError"], true, "{what}: {out}");
            let doc = emitted_document(&outcome.bytes, format);
            let (_, env) =
                envelope::formats::decode_any(&doc, Some(format), &Default::default()).unwrap();
            let Named {
                cuts,
                notices,
                artifacts,
                ..
            } = named_in(&out);
            // The one artifact the output names — the notice's call always, the document's
            // artifact reference where the format writes one (protocol-v1 writes none for a
            // payload that is not an object) — holds the payload the pointers are into.
            assert!(!notices.is_empty(), "{what}");
            let args = read_on_call(&notices[0]);
            let artifact = args["uri"].as_str().unwrap().to_string();
            let digest = parse_artifact_uri(&artifact).unwrap();
            for named in &artifacts {
                assert_eq!(parse_artifact_uri(named).as_ref(), Some(&digest), "{what}");
            }
            if format != FormatId::ProtocolV1 {
                assert!(!artifacts.is_empty(), "{what}");
            }
            let whole: Value = serde_json::from_slice(&store.store.get(&digest).unwrap()).unwrap();
            let (_, original) = envelope::formats::decode_any(
                input.as_bytes(),
                Some(FormatId::Mcp),
                &Default::default(),
            )
            .unwrap();
            assert_eq!(whole, original.payload.json().into_owned(), "{what}");
            let kept = env.payload.json().into_owned();
            assert!(!cuts.is_empty(), "{what}");
            for cut in &cuts {
                let pointer = cut["pointer"].as_str().unwrap();
                let read = read_ok(
                    &json!({"uri": artifact, "pointer": pointer}),
                    &store,
                    1 << 24,
                    &what,
                );
                // It returns what the document says was cut: the whole value, of which the
                // document kept the first `kept`.
                match (at(&whole, pointer), kept_at(&kept, &whole, pointer)) {
                    (Value::Array(items), Value::Array(k)) => {
                        assert_eq!(cut["unit"], "items", "{what}");
                        assert_eq!(read["total"], cut["total"], "{what}");
                        assert_eq!(read["items"].as_array().unwrap(), items, "{what}");
                        assert_eq!(json!(k.len()), cut["kept"], "{what}");
                        assert_eq!(&items[..k.len()], &k[..], "{what}");
                    }
                    (Value::String(s), Value::String(k)) => {
                        assert_eq!(cut["unit"], "bytes", "{what}");
                        assert_eq!(json!(s.len()), cut["total"], "{what}");
                        assert_eq!(read["text"].as_str(), Some(s.as_str()), "{what}");
                        assert_eq!(json!(k.len()), cut["kept"], "{what}");
                        assert!(s.starts_with(k.as_str()), "{what}");
                    }
                    (_, _) => panic!("{what}: {pointer}"),
                }
            }
            // Every notice (the hint, wherever the format writes it, and tool-envelope-v1's
            // notice block) names the proxy's limit and ends with the same call, which reads
            // on.
            for notice in &notices {
                assert!(
                    notice.contains(&format!("Output truncated to fit {limit} bytes")),
                    "{what}: {notice}"
                );
                assert_eq!(read_on_call(notice), args, "{what}");
            }
            if format == FormatId::ToolEnvelopeV1 {
                let block = out["content"][0]["text"].as_str().unwrap();
                assert!(notices.iter().any(|n| n == block), "{what}");
            }
            let pointer = args["pointer"].as_str().unwrap();
            assert!(cuts.iter().any(|c| c["pointer"] == pointer), "{what}");
            reads_on(
                &args,
                kept_at(&kept, &whole, pointer),
                &whole,
                &store,
                &what,
            );
            // The link still names the full result.
            if let Some(link) = out["content"]
                .as_array()
                .unwrap()
                .iter()
                .find(|b| b["type"] == "resource_link")
            {
                let full = parse_artifact_uri(link["uri"].as_str().unwrap()).unwrap();
                let stored: Value =
                    serde_json::from_slice(&store.store.get(&full).unwrap()).unwrap();
                assert_eq!(
                    stored,
                    serde_json::from_str::<Value>(&input).unwrap(),
                    "{what}"
                );
            }
        }
    }
}

/// An error result whose text is over the limit, emitted as ctxo: the library cuts its
/// message (the start kept, the note at its end: ctxo's error has no marker), and the
/// link to the stored full result follows.
#[test]
fn an_emitted_long_error_is_cut_and_links_the_full_result() {
    let log = "error line\n".repeat(3000);
    let result = json!({"content": [text(&log)], "isError": true}).to_string();
    let store = TempStore::new();
    let call = CallContext::new("tool", None, Revision::V2025_06_18);
    let settings = ToolSettings {
        limit: 2_000,
        emit: Some(FormatId::Ctxo),
        ..ToolSettings::default()
    };
    let outcome = shape_result(result.as_bytes(), &call, &settings, &store.store).unwrap();
    assert!(outcome.bytes.len() <= 2_000);
    let out: Value = serde_json::from_slice(&outcome.bytes).unwrap();
    assert_eq!(out["isError"], true, "{out}");
    let doc: Value = serde_json::from_str(out["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(doc["error"], true, "{doc}");
    let message = doc["message"].as_str().unwrap();
    let (kept, note) = message.rsplit_once("\n[Output truncated to fit ").unwrap();
    assert!(log.starts_with(kept) && kept.len() > 1_000, "{message}");
    assert!(
        note.ends_with(&format!("of {} bytes.]", log.len())),
        "{note}"
    );
    let digest = outcome.stored.unwrap();
    assert_eq!(out["content"][1]["type"], "resource_link", "{out}");
    assert_eq!(
        out["content"][1]["uri"],
        envelope_mcp::drill::artifact_uri(&digest)
    );
    assert_eq!(store.store.get(&digest).unwrap(), result.as_bytes());
}

#[test]
fn the_refusal_names_the_stored_result_and_ends_with_the_call_that_reads_on() {
    let rows: Vec<Value> = (0..2000)
        .map(|i| json!({"id": i, "name": format!("row {i}")}))
        .collect();
    let sc = json!({"rows": rows, "total": 2000});
    // No cut keeps 2,000 rows: every cut breaks the schema.
    let strict = json!({"type": "object", "properties": {"rows": {"type": "array", "minItems": 2000}}, "required": ["rows"]});
    let text_of = "line of text, \"quoted\" and ünïcode\n".repeat(2000);
    let cases = [
        // The quote stops inside the text block.
        (
            "mirror, strict schema",
            json!({"content": [text(&sc.to_string())], "structuredContent": sc}),
            Some(strict.clone()),
            None,
            6_000,
        ),
        // The quote takes the first block whole and stops inside the second.
        (
            "two blocks, strict schema",
            json!({"content": [text("2000 rows follow"), text(&sc.to_string())], "structuredContent": sc}),
            Some(strict.clone()),
            None,
            6_000,
        ),
        // The quote takes all the text: read on in structuredContent.
        (
            "summary, strict schema",
            json!({"content": [text("2000 rows")], "structuredContent": {"rows": rows}}),
            Some(strict.clone()),
            None,
            6_000,
        ),
        // An emitted format that cannot be written in the limit.
        (
            "emit, tiny limit",
            json!({"content": [text(&text_of)]}),
            None,
            Some(FormatId::ProtocolV1),
            420,
        ),
    ];
    for (name, result, schema, emit, limit) in cases {
        let store = TempStore::new();
        let call = CallContext::new("tool", schema.as_ref(), Revision::V2025_06_18);
        let settings = ToolSettings {
            limit,
            emit,
            ..ToolSettings::default()
        };
        let input = result.to_string();
        let outcome = shape_result(input.as_bytes(), &call, &settings, &store.store)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(outcome.bytes.len() <= limit, "{name}");
        let out: Value = serde_json::from_slice(&outcome.bytes).unwrap();
        assert_eq!(out["isError"], true, "{name}: {out}");
        let uri = envelope_mcp::drill::artifact_uri(&outcome.stored.unwrap());
        let stored: Value = serde_json::from_str(&input).unwrap();
        let blocks = out["content"].as_array().unwrap();
        let reason = blocks[0]["text"].as_str().unwrap();
        let args = read_on_call(reason);
        assert_eq!(args["uri"], uri, "{name}");
        let pointer = args["pointer"].as_str().unwrap();
        match name {
            "summary, strict schema" => {
                assert_eq!(pointer, "/structuredContent", "{name}");
                // With room enough, the call answers all of it; at the limit, it lists the
                // keys to read on with.
                let read = read_ok(&args, &store, 1 << 24, name);
                assert!(read["value"] == stored["structuredContent"], "{name}");
                let answer = envelope_mcp::drill::call_read(&args, &store.store, limit);
                let message = answer["content"][0]["text"].as_str().unwrap();
                assert!(message.contains("its keys: \"rows\""), "{name}: {message}");
            }
            _ => {
                // The quote (the block after the reason, when there is one) is the start of
                // the text blocks; the call reads on where it stops.
                let quote = match blocks.get(1) {
                    Some(b) if b["type"] == "text" => b["text"].as_str().unwrap(),
                    _ => "",
                };
                let texts: Vec<&str> = stored["content"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|b| b["text"].as_str().unwrap())
                    .collect();
                assert!(texts.join("\n").starts_with(quote), "{name}");
                let index = texts.len() - 1;
                let expected_pointer = match name {
                    "two blocks, strict schema" => {
                        assert!(quote.len() > texts[0].len(), "{name}: {quote}");
                        format!("/content/{index}/text")
                    }
                    _ => "/content/0/text".to_string(),
                };
                assert_eq!(pointer, expected_pointer, "{name}");
                let kept = match name {
                    "two blocks, strict schema" => &quote[texts[0].len() + 1..],
                    _ => quote,
                };
                reads_on(&args, &json!(kept), &stored, &store, name);
            }
        }
    }
}

/// An emitted document is cut once, by the library's budget told what the client gets:
/// the document as the text of a JSON string (every quote twice), the result around it
/// reserved. So over every format, results heavy in quotes and backslashes, errors and
/// limits in bytes, tokens and both: the result sent is within the client's limits, uses
/// most of the byte limit, and every notice names the client's limits (an error's too,
/// whose message carries it in brackets where the format has no marker a reader sees).
#[test]
fn an_emitted_result_is_cut_once_to_the_clients_limits_and_names_them() {
    use envelope_mcp::shaping::TokenBudget;
    let rows: Vec<Value> = (0..3000)
        .map(|i| json!({"id": i, "path": format!("C:\\dir\\\"{i}\""), "note": "say \"hi\""}))
        .collect();
    let sc = json!({"rows": rows});
    let quoted_text = "a \"quoted\" \\ line\n".repeat(3000);
    let log = "error at \"step\" \\ here\n".repeat(3000);
    let cases = [
        (
            "rows",
            json!({"content": [text(&sc.to_string())], "structuredContent": sc}),
        ),
        ("text", json!({"content": [text(&quoted_text)]})),
        ("error", json!({"content": [text(&log)], "isError": true})),
    ];
    let o200k = TokenBudget::o200k;
    let limits = [
        (3_000, None),
        (9_000, None),
        (envelope_mcp::shaping::NO_BYTE_LIMIT, Some(o200k(1_500))),
        (6_000, Some(o200k(1_200))),
    ];
    for format in FormatId::ALL.into_iter().filter(|f| *f != FormatId::Mcp) {
        for (name, result) in &cases {
            for (limit, tokens) in limits {
                let what = format!("{format:?}, {name}, {limit} bytes, {tokens:?}");
                let store = TempStore::new();
                let call = CallContext::new("tool", None, Revision::V2025_06_18);
                let settings = ToolSettings {
                    limit,
                    tokens,
                    emit: Some(format),
                    ..ToolSettings::default()
                };
                let input = result.to_string();
                let outcome = shape_result(input.as_bytes(), &call, &settings, &store.store)
                    .unwrap_or_else(|e| panic!("{what}: {e}"));
                let sent = std::str::from_utf8(&outcome.bytes).unwrap();
                assert!(outcome.bytes.len() <= limit, "{what}");
                if let Some(t) = tokens {
                    assert!(t.count(&outcome.bytes) <= t.limit, "{what}");
                }
                assert!(!sent.contains("cannot be written"), "{what}: {sent}");
                assert!(!sent.contains("it is over"), "{what}: {sent}");
                assert!(outcome.truncated && outcome.stored.is_some(), "{what}");
                // Most of the byte limit is used: the escaping is counted, not guessed.
                if tokens.is_none() {
                    let used = outcome.bytes.len() as f64 / limit as f64;
                    assert!(used >= 0.9, "{what}: {used:.3} of the limit");
                }
                let names = match (limit, tokens) {
                    (envelope_mcp::shaping::NO_BYTE_LIMIT, Some(t)) => {
                        format!("{} tokens (o200k_base)", t.limit)
                    }
                    (bytes, Some(t)) => {
                        format!("{bytes} bytes and {} tokens (o200k_base)", t.limit)
                    }
                    (bytes, None) => format!("{bytes} bytes"),
                };
                let out: Value = serde_json::from_slice(&outcome.bytes).unwrap();
                let Named {
                    notices, strings, ..
                } = named_in(&out);
                let bracketed: Vec<String> = strings
                    .into_iter()
                    .filter_map(|s| {
                        let (_, note) = s.rsplit_once("\n[Output truncated to fit ")?;
                        Some(format!("Output truncated to fit {note}"))
                    })
                    .collect();
                let all: Vec<&String> = notices.iter().chain(&bracketed).collect();
                assert!(!all.is_empty(), "{what}: {sent}");
                for notice in all {
                    // (tool-envelope-v1's notice block starts with what the result is of.)
                    let at = notice.find("Output truncated to fit ").unwrap();
                    assert!(
                        notice[at..].starts_with(&format!("Output truncated to fit {names}:")),
                        "{what}: {notice}"
                    );
                }
                // An error's message where the format has no marker a reader sees says it.
                if *name == "error" && matches!(format, FormatId::Ctxo | FormatId::ToolEnvelopeV1) {
                    assert!(!bracketed.is_empty(), "{what}: {sent}");
                }
            }
        }
    }
}

/// A result within the limit as MCP whose document in the emitted format is over it (a
/// tool-envelope-v1 document writes the payload twice) is stored and cut, not cut with
/// nothing stored: the client can read the rest.
#[test]
fn an_emitted_document_over_the_limit_stores_the_result_it_cuts() {
    let rows: Vec<Value> = (0..300)
        .map(|i| json!({"id": i, "name": format!("row {i}")}))
        .collect();
    let result = json!({"content": [text("300 rows")], "structuredContent": {"rows": rows}});
    let input = result.to_string();
    let limit = input.len() + 100;
    let store = TempStore::new();
    let call = CallContext::new("tool", None, Revision::V2025_06_18);
    let settings = ToolSettings {
        limit,
        emit: Some(FormatId::ToolEnvelopeV1),
        ..ToolSettings::default()
    };
    let outcome = shape_result(input.as_bytes(), &call, &settings, &store.store).unwrap();
    assert!(outcome.bytes.len() <= limit);
    assert!(outcome.truncated);
    let digest = outcome.stored.expect("the full result is stored");
    assert_eq!(store.store.get(&digest).unwrap(), input.as_bytes());
    let out: Value = serde_json::from_slice(&outcome.bytes).unwrap();
    let Named { notices, .. } = named_in(&out);
    let args = read_on_call(&notices[0]);
    let payload = envelope_mcp::drill::parse_artifact_uri(args["uri"].as_str().unwrap()).unwrap();
    let stored: Value = serde_json::from_slice(&store.store.get(&payload).unwrap()).unwrap();
    assert_eq!(stored, result["structuredContent"]);
}
