//! Offload: payloads over the inline threshold go to the store, a summary stays.

use std::collections::HashMap;

use envelope::model::ArtifactRef;
use envelope::shape::SinkError;
use envelope::shape::offload::{ArtifactSink, OffloadOptions, Offloaded, artifact_bytes, offload};
use envelope::{DecodeOptions, EncodeOptions, Envelope, FormatId, Payload, Status, decode, encode};
use serde_json::{Value, json};
use sha2::{Digest as _, Sha256};

#[derive(Default)]
struct MemorySink(HashMap<String, (Vec<u8>, String)>);

impl ArtifactSink for MemorySink {
    fn put(&mut self, bytes: &[u8], kind: &str) -> Result<ArtifactRef, SinkError> {
        let hex: String = Sha256::digest(bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        let digest = format!("sha256:{hex}");
        self.0
            .insert(digest.clone(), (bytes.to_vec(), kind.to_string()));
        Ok(ArtifactRef { digest })
    }
}

struct FailingSink;
impl ArtifactSink for FailingSink {
    fn put(&mut self, _: &[u8], _: &str) -> Result<ArtifactRef, SinkError> {
        Err(SinkError::new("store", "store is down"))
    }
}

fn records(n: usize) -> Value {
    Value::Array((0..n).map(|i| json!({"zeta": i, "id": i, "name": format!("record-{i}"), "body": "b".repeat(2000), "alpha": true, "extra": null})).collect())
}

/// A JSON string payload of exactly `size` serialized bytes.
fn payload_of_size(size: usize) -> Value {
    Value::String("x".repeat(size - 2))
}

#[test]
fn exactly_the_threshold_stays_inline() {
    let options = OffloadOptions::default();
    for (size, stored) in [(32768, false), (32769, true)] {
        let mut env = Envelope::ok(payload_of_size(size));
        let mut sink = MemorySink::default();
        let result = offload(&mut env, FormatId::ProtocolV1, &options, &mut sink).unwrap();
        assert_eq!(matches!(result, Offloaded::Stored { .. }), stored, "{size}");
    }
}

#[test]
fn protocol_v1_gets_summary_artifact_and_cas_digest() {
    let mut env = Envelope {
        command: Some("http/openapi".into()),
        ..Envelope::ok(records(40))
    };
    let original = artifact_bytes(&env.payload, FormatId::ProtocolV1)
        .unwrap()
        .0
        .into_owned();
    let mut sink = MemorySink::default();
    let Offloaded::Stored { digest, size_bytes } = offload(
        &mut env,
        FormatId::ProtocolV1,
        &OffloadOptions::default(),
        &mut sink,
    )
    .unwrap() else {
        panic!("not offloaded");
    };
    assert_eq!(size_bytes, original.len());
    assert_eq!(
        sink.0[&digest].0, original,
        "the store holds the exact payload bytes"
    );
    let out = encode(
        FormatId::ProtocolV1,
        &env,
        &EncodeOptions {
            now: Some("2026-07-04T00:00:00Z".into()),
            ..EncodeOptions::default()
        },
    )
    .unwrap();
    let doc: Value = serde_json::from_slice(&out.bytes).unwrap();
    assert_eq!(doc["data"]["artifact"], json!(digest));
    assert_eq!(doc["meta"]["cas_digest"], json!(digest));
    let summary = &doc["data"]["summary"];
    assert_eq!(summary["size_bytes"], json!(original.len()));
    assert_eq!(summary["kind"], "application/json");
    assert_eq!(summary["record_count"], 40);
    assert_eq!(
        summary["preview"]["first_keys"],
        json!(["alpha", "body", "extra", "id", "name"])
    );
    assert_eq!(summary["preview"]["sample_record"]["id"], 0);
    assert!(
        summary["preview"].to_string().len() < 1024,
        "{}",
        summary["preview"]
    );
    assert!(out.losses.is_empty(), "{:?}", out.losses);
}

#[test]
fn a_record_whose_first_keys_are_longer_than_the_preview_keeps_the_preview_small() {
    // Found by the `shape` fuzz target: five keys of 300 bytes overflowed the preview's
    // budget (a panic on subtraction).
    for key_len in [200, 300, 1100, 5000] {
        let record: serde_json::Map<String, Value> = (0..6)
            .map(|i| (format!("{i}{}", "k".repeat(key_len)), json!(i)))
            .collect();
        let records: Vec<Value> = (0..40).map(|_| Value::Object(record.clone())).collect();
        let mut env = Envelope::ok(Value::Array(records));
        let mut sink = MemorySink::default();
        let options = OffloadOptions::default();
        offload(&mut env, FormatId::ProtocolV1, &options, &mut sink).unwrap();
        let Payload::Json(stub) = &env.payload else {
            panic!("offloaded: {:?}", env.payload)
        };
        let preview = &stub["summary"]["preview"];
        assert!(preview.to_string().len() < 1024, "{key_len}: {preview}");
        let keys = preview["first_keys"].as_array().unwrap();
        // As many of the first keys as fit, in order.
        for (i, key) in keys.iter().enumerate() {
            assert!(
                key.as_str().unwrap().starts_with(&i.to_string()),
                "{key_len}"
            );
        }
        assert_eq!(stub["summary"]["record_count"], 40);
    }
}

#[test]
fn text_previews_cut_at_a_character_boundary() {
    let mut env = Envelope {
        payload: Payload::Text("é".repeat(30_000)),
        ..Envelope::default()
    };
    let mut sink = MemorySink::default();
    offload(
        &mut env,
        FormatId::Mcp,
        &OffloadOptions::default(),
        &mut sink,
    )
    .unwrap();
    let Payload::Json(stub) = &env.payload else {
        panic!()
    };
    let preview = stub["summary"]["preview"].as_str().unwrap();
    assert!(!preview.is_empty() && preview.len() < 1024 && preview.chars().all(|c| c == 'é'));
    assert_eq!(stub["summary"]["kind"], "text/plain");
}

#[test]
fn every_format_carries_the_reference() {
    for format in FormatId::ALL {
        let mut env = Envelope {
            tool: Some("t".into()),
            ..Envelope::ok(json!({"rows": records(30)}))
        };
        let mut sink = MemorySink::default();
        let Offloaded::Stored { digest, .. } =
            offload(&mut env, format, &OffloadOptions::default(), &mut sink).unwrap()
        else {
            panic!("{format}: not offloaded");
        };
        let out = encode(format, &env, &EncodeOptions::default()).unwrap();
        let text = String::from_utf8(out.bytes.clone()).unwrap();
        let back = decode(format, &out.bytes, &DecodeOptions::default()).unwrap();
        // The stub is the payload everywhere; the reference is in the format's metadata too.
        assert!(
            matches!(&back.payload, Payload::Json(v) if v["artifact"] == json!(digest)),
            "{format}: {text}"
        );
        assert!(
            !out.losses.items.iter().any(|l| l.field == "artifact"),
            "{format}: {:?}",
            out.losses
        );
        // …and the reference stands in the format's own metadata.
        let doc: Value = serde_json::from_str(&text).unwrap();
        let in_meta = match format {
            FormatId::ProtocolV1 => doc["meta"]["cas_digest"].clone(),
            FormatId::Ctxo => doc["_meta"]["artifact"].clone(),
            FormatId::Operations => doc["meta"]["artifact"].clone(),
            FormatId::ToolResultEnvelope => doc["__envelope"]["artifact"].clone(),
            FormatId::ToolEnvelopeV1 => {
                let block = doc["content"][1]["text"].as_str().unwrap();
                envelope::formats::tool_envelope_v1::parse_block(
                    block,
                    &DecodeOptions::default(),
                    "",
                )
                .unwrap()["meta"]["artifact"]
                    .clone()
            }
            FormatId::Mcp => doc["content"]
                .as_array()
                .unwrap()
                .iter()
                .find(|b| b["type"] == "resource_link")
                .map_or(Value::Null, |b| b["uri"].clone()),
            other => panic!("no expectation for {other}: add where it keeps the reference"),
        };
        assert_eq!(in_meta, json!(digest), "{format}: {text}");
        if format == FormatId::Mcp {
            let link = doc["content"]
                .as_array()
                .unwrap()
                .iter()
                .find(|b| b["type"] == "resource_link")
                .unwrap();
            assert_eq!(link["uri"], json!(digest));
            assert_eq!(link["mimeType"], "application/json");
        }
    }
}

#[test]
fn over_the_capture_limit_is_an_error_envelope() {
    let mut env = Envelope {
        command: Some("fs/read".into()),
        ..Envelope::ok(records(100))
    };
    let options = OffloadOptions {
        max_capture: Some(100_000),
        ..OffloadOptions::default()
    };
    let result = offload(
        &mut env,
        FormatId::ProtocolV1,
        &options,
        &mut MemorySink::default(),
    )
    .unwrap();
    assert!(matches!(result, Offloaded::TooLarge { .. }));
    assert_eq!(env.status, Status::Error);
    let out = encode(FormatId::ProtocolV1, &env, &EncodeOptions::default()).unwrap();
    let doc: Value = serde_json::from_slice(&out.bytes).unwrap();
    assert_eq!(doc["error"]["code"], "EOUTPUT_TOO_LARGE");
    assert_eq!(doc["status"], "error");
    assert!(doc["data"]["hint"].is_string());
}

#[test]
fn a_failing_store_is_an_error_and_the_envelope_is_unchanged() {
    let mut env = Envelope::ok(records(30));
    let before = env.clone();
    let err = offload(
        &mut env,
        FormatId::Mcp,
        &OffloadOptions::default(),
        &mut FailingSink,
    )
    .unwrap_err();
    assert_eq!(err.code(), "store");
    assert!(err.to_string().contains("store is down"));
    assert_eq!(env, before);
}

#[test]
fn offload_then_budget() {
    let mut env = Envelope::ok(records(50));
    offload(
        &mut env,
        FormatId::Mcp,
        &OffloadOptions::default(),
        &mut MemorySink::default(),
    )
    .unwrap();
    let fitted =
        envelope::shape::fit(&env, FormatId::Mcp, 1500, &EncodeOptions::default()).unwrap();
    assert!(fitted.encoded.bytes.len() <= 1500);
    let text = String::from_utf8(fitted.encoded.bytes).unwrap();
    assert!(text.contains("resource_link"), "{text}");
}

#[test]
fn http_results_keep_status_headers_and_stated_pagination() {
    let doc = r#"{"data":[],"meta":{"source":"http","statusCode":200,"headers":{"content-type":"application/json","Link":"<https://api.example/items?page=3>; rel=\"next\", <https://api.example/items?page=9>; rel=\"last\"","X-Total-Count":"900"},"contentType":"application/json"}}"#;
    let mut env = decode(
        FormatId::Operations,
        doc.as_bytes(),
        &DecodeOptions::default(),
    )
    .unwrap();
    env.payload = Payload::Json(records(30));
    offload(
        &mut env,
        FormatId::Operations,
        &OffloadOptions::default(),
        &mut MemorySink::default(),
    )
    .unwrap();
    let Payload::Json(stub) = &env.payload else {
        panic!()
    };
    let summary = &stub["summary"];
    assert_eq!(summary["status_code"], 200);
    assert_eq!(summary["headers"]["X-Total-Count"], "900");
    assert_eq!(
        summary["pagination"],
        json!({"has_more": true, "strategy_used": "link", "total_items": 900})
    );
    // Without a next link there are no more pages; without any header, no pagination at all.
    let last = serde_json::Map::from_iter([(
        "link".to_string(),
        json!("<https://a/?page=9>; rel=\"prev\""),
    )]);
    assert_eq!(
        envelope::shape::offload::pagination(&last),
        Some(json!({"has_more": false, "strategy_used": "link"}))
    );
    assert_eq!(
        envelope::shape::offload::pagination(&serde_json::Map::new()),
        None
    );
}

/// The capture limit, defined once (issue 12, item 8): a payload serialized larger than
/// `max_capture` bytes (as the store would hold it, in the output format's dialect)
/// becomes the `EOUTPUT_TOO_LARGE` error envelope whatever the inline threshold, with or
/// without a store, with or without a limit, read from bytes or built in code, in every
/// output format; exactly `max_capture` bytes stay. The refused payload is never stored.
#[test]
fn the_capture_limit_applies_on_every_path_in_every_format() {
    use envelope::shape::Pipeline;

    let options = EncodeOptions {
        now: Some("2026-07-04T00:00:00Z".into()),
        ..EncodeOptions::default()
    };
    for format in FormatId::ALL {
        let env = Envelope {
            tool: Some("fs/read".into()),
            command: Some("fs/read".into()),
            ..Envelope::ok(json!({"rows": records(3)}))
        };
        // The same envelope read back from its own document: the bytes path.
        let doc = encode(format, &env, &options).unwrap().bytes;
        let decoded = decode(format, &doc, &DecodeOptions::default()).unwrap();
        let size = artifact_bytes(&decoded.payload, format).unwrap().0.len();
        assert!(size > 6000, "{format}: {size}");
        // (inline threshold, store): below the threshold without and with a store, and
        // above it with a store.
        let paths = [(32768, false), (32768, true), (1, true)];
        for limit in [None, Some(2000)] {
            let mut refusals: Vec<Vec<u8>> = Vec::new();
            for (threshold, store) in paths {
                for from_bytes in [false, true] {
                    let run = |max_capture: usize, sink: &mut MemorySink| {
                        let pipeline = match from_bytes {
                            true => Pipeline::new(&doc).input_format(format),
                            false => Pipeline::from_envelope(decoded.clone(), format),
                        };
                        let pipeline = pipeline
                            .inline_threshold(threshold)
                            .limit(limit)
                            .max_capture(max_capture)
                            .encode_options(options.clone());
                        match store {
                            true => pipeline.store(sink).run().unwrap(),
                            false => pipeline.run().unwrap(),
                        }
                    };
                    let at = format!(
                        "{format}, limit {limit:?}, threshold {threshold}, store {store}, from bytes {from_bytes}"
                    );
                    // Exactly the capture limit: kept (inline, or stored over the threshold).
                    let mut sink = MemorySink::default();
                    let kept = run(size, &mut sink);
                    match threshold < size && store {
                        true => assert!(matches!(kept.offloaded, Offloaded::Stored { .. }), "{at}"),
                        false => assert_eq!(kept.offloaded, Offloaded::Inline, "{at}"),
                    }
                    assert!(!String::from_utf8_lossy(&kept.bytes).contains("EOUTPUT_TOO_LARGE"));
                    // One byte over: the error envelope, nothing stored.
                    let mut sink = MemorySink::default();
                    let refused = run(size - 1, &mut sink);
                    assert_eq!(
                        refused.offloaded,
                        Offloaded::TooLarge { size_bytes: size },
                        "{at}"
                    );
                    assert!(sink.0.is_empty(), "{at}: stored");
                    assert!(refused.artifacts.is_empty(), "{at}");
                    let back = decode(format, &refused.bytes, &DecodeOptions::default()).unwrap();
                    let said = format!(
                        "{} {}",
                        back.error.as_ref().map_or("", |e| e.message.as_str()),
                        back.payload.json()
                    );
                    assert!(
                        said.contains(&format!(
                            "output of {size} bytes exceeds the capture limit of {} bytes",
                            size - 1
                        )),
                        "{at}: {}",
                        String::from_utf8_lossy(&refused.bytes)
                    );
                    assert!(!said.contains("record-0"), "{at}: the payload is gone");
                    refusals.push(refused.bytes);
                }
            }
            // The same error envelope on every path.
            assert!(
                refusals.windows(2).all(|w| w[0] == w[1]),
                "{format}, limit {limit:?}: the paths differ"
            );
        }
    }
}

#[test]
fn offload_refuses_over_the_capture_limit_below_the_inline_threshold() {
    // Before: the capture limit was only looked at above the inline threshold.
    let options = OffloadOptions {
        inline_threshold: 32768,
        max_capture: Some(100),
    };
    for (size, refused) in [(100, false), (101, true)] {
        let mut env = Envelope::ok(payload_of_size(size));
        let mut sink = MemorySink::default();
        let result = offload(&mut env, FormatId::Mcp, &options, &mut sink).unwrap();
        assert_eq!(
            result,
            match refused {
                true => Offloaded::TooLarge { size_bytes: size },
                false => Offloaded::Inline,
            }
        );
        assert_eq!(env.status == Status::Error, refused);
        assert!(sink.0.is_empty());
        // The stage on its own, as the pipeline runs it without a store, agrees.
        let mut alone = Envelope::ok(payload_of_size(size));
        assert_eq!(
            envelope::shape::offload::capture(&mut alone, FormatId::Mcp, options.max_capture),
            result
        );
        assert_eq!(alone, env);
    }
}
