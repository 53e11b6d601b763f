//! Reading for a budget (the pipeline's skimmed read) gives the bytes of reading whole:
//! `envelope shape --limit --no-offload` and `envelope convert --to ctxo` compared, on
//! random documents of every format, with a whole decode followed by the same cut.

mod common;
#[path = "common/heap.rs"]
mod heap;

use common::Gen;
use envelope::Encoded;
use envelope::shape::Pipeline;
use envelope::{
    DecodeOptions, EncodeOptions, Envelope, FormatId, Source, convert::convert, encode,
    formats::decode_any, shape::fit,
};
use serde_json::{Map, Value, json};

fn options(ctxo_limit: Option<usize>) -> EncodeOptions {
    EncodeOptions {
        now: Some("2026-07-04T00:00:00Z".into()),
        ctxo_limit,
        ..EncodeOptions::default()
    }
}

/// A value with long arrays at any depth (what skimming is for), and short ones.
fn long_value(g: &mut Gen, depth: u32) -> Value {
    match g.below(if depth == 0 { 2 } else { 5 }) {
        0 => g.value(1),
        1 => Value::String(g.string().repeat(g.below(6) as usize)),
        2 => {
            let n = [0, 1, 3, 40, 200][g.below(5) as usize];
            Value::Array((0..n).map(|_| long_value(g, depth - 1)).collect())
        }
        _ => {
            let mut map = Map::new();
            for _ in 0..g.below(5) {
                map.insert(g.key(), long_value(g, depth - 1));
            }
            Value::Object(map)
        }
    }
}

/// A payload object whose members include a long array of records.
fn payload(g: &mut Gen) -> Value {
    let records: Vec<Value> = (0..g.below(250))
        .map(
            |i| json!({"id": i, "name": g.string(), "score": g.number(), "tags": long_value(g, 1)}),
        )
        .collect();
    let mut map = Map::new();
    map.insert("symbolId".into(), json!("src/index.ts::main"));
    let key = ["impactedSymbols", "items", "results"][g.below(3) as usize];
    map.insert(key.into(), Value::Array(records));
    for _ in 0..g.below(3) {
        map.insert(g.key(), long_value(g, 2));
    }
    Value::Object(map)
}

/// A document of some format around `payload`, in the writers' spelling or re-spelled by
/// serde_json (pretty, floats as `1.0`), and some shapes the writers never produce.
fn document(g: &mut Gen, payload: Value) -> Vec<u8> {
    let env = Envelope {
        tool: Some("impact".into()),
        command: Some("code/impact".into()),
        ..Envelope::ok(payload.clone())
    };
    let doc = match g.below(9) {
        0 => json!({"version": 1, "status": "ok", "command": "code/impact", "data": payload,
                    "meta": {"ts": "2026-07-04T00:00:00Z", "duration_ms": 3, "tags": long_value(g, 2)}, "error": null}),
        // Data and structuredContent: equal (one payload), or different (an extension).
        1 => {
            let structured = if g.below(2) == 0 {
                payload.clone()
            } else {
                long_value(g, 2)
            };
            json!({"data": payload, "meta": {"source": "mcp", "isError": false, "structuredContent": structured}})
        }
        // A ctxo document with a budget report of its own, or with none.
        2 => {
            let mut map = payload.as_object().unwrap().clone();
            if g.below(2) == 0 {
                map.insert("_meta".into(), json!({"totalItems": 9, "returnedItems": 3, "truncated": true, "totalBytes": 99}));
            }
            Value::Object(map)
        }
        n => {
            let format = FormatId::ALL[n as usize % FormatId::ALL.len()];
            let env = Envelope {
                source: (format == FormatId::Operations).then_some(Source::Local {
                    operation_id: Some("impact".into()),
                }),
                ..env
            };
            let bytes = encode(format, &env, &options(Some(usize::MAX)))
                .unwrap()
                .bytes;
            if g.below(2) == 0 {
                return bytes;
            }
            serde_json::from_slice(&bytes).unwrap()
        }
    };
    if g.below(2) == 0 {
        serde_json::to_vec_pretty(&doc).unwrap()
    } else {
        serde_json::to_vec(&doc).unwrap()
    }
}

type Outcome = Result<(Vec<u8>, String), String>;

/// `envelope shape --limit --no-offload` through the pipeline (which reads for the limit
/// where it can), and whether it read skimmed.
fn shaped_for(text: &[u8], target: FormatId, limit: usize) -> (envelope::Result<Encoded>, bool) {
    let shaped = Pipeline::new(text)
        .output_format(target)
        .limit(limit)
        .encode_options(options(None))
        .run();
    let skimmed = shaped.as_ref().is_ok_and(|shaped| shaped.skimmed);
    let encoded = shaped.map(|shaped| Encoded {
        bytes: shaped.bytes,
        losses: shaped.losses,
    });
    (encoded, skimmed)
}

/// The oracle: the document decoded whole, then cut, and the output checked as the
/// pipeline checks it (it must read back as valid).
fn whole_cut(text: &[u8], target: FormatId, limit: usize) -> envelope::Result<Encoded> {
    let (_, env) = decode_any(text, None, &DecodeOptions::default())?;
    let fitted = fit(&env, target, limit, &options(None))?.encoded;
    envelope::validate::check_output_of(&fitted.bytes, target, text)?;
    Ok(fitted)
}

fn outcome(result: envelope::Result<envelope::Encoded>) -> Outcome {
    result
        .map(|e| (e.bytes, format!("{:?}", e.losses)))
        .map_err(|e| e.to_string())
}

#[test]
fn reading_for_a_budget_gives_the_bytes_of_reading_whole() {
    let _serial = heap::serial();
    let decode_options = DecodeOptions::default();
    let mut g = Gen::new(0x5eed_5c1a);
    let (mut skimmed, mut cases) = (0, 0);
    for case in 0..400 {
        let payload = payload(&mut g);
        let text = document(&mut g, payload);
        let limit = [0, 60, 300, 1000, 4000, 20_000][g.below(6) as usize] + g.below(50) as usize;
        let target = FormatId::ALL[g.below(FormatId::ALL.len() as u64) as usize];

        // envelope shape --limit --no-offload
        let whole = whole_cut(&text, target, limit);
        let (shaped, was_skimmed) = shaped_for(&text, target, limit);
        skimmed += usize::from(was_skimmed);
        cases += 1;
        assert_eq!(
            outcome(shaped),
            outcome(whole),
            "case {case}: limit {limit}, to {target}, input {}",
            String::from_utf8_lossy(&text)
        );

        // envelope convert --to ctxo (the compat truncation at `limit`)
        let ctxo = options(Some(limit));
        let whole = decode_any(&text, None, &decode_options)
            .and_then(|(_, env)| encode(FormatId::Ctxo, &env, &ctxo));
        let converted = convert(&text, None, FormatId::Ctxo, &decode_options, &ctxo);
        assert_eq!(
            outcome(converted),
            outcome(whole),
            "case {case}: compat at {limit}, input {}",
            String::from_utf8_lossy(&text)
        );
    }
    eprintln!("{skimmed} of {cases} reads were skimmed");
    // The comparison means something only if skimming happened often.
    assert!(
        skimmed * 5 > cases,
        "only {skimmed} of {cases} reads were skimmed"
    );
}

#[test]
fn a_skimmed_read_of_a_large_payload_builds_a_few_items_and_cuts_the_same() {
    let _serial = heap::serial();
    let items: Vec<Value> = (0..10_000)
        .map(|i| json!({"symbolId": format!("src/m{i}.ts::f"), "line": i, "confidence": 0.5}))
        .collect();
    let doc = json!({"symbolId": "main", "impactedSymbols": items,
                     "_meta": {"totalItems": 10_000, "returnedItems": 10_000, "truncated": false, "totalBytes": 1}});
    // Through detection, not only `--from`.
    let text = serde_json::to_vec(&doc).unwrap();
    let shaped = Pipeline::new(&text)
        .output_format(FormatId::Ctxo)
        .limit(8192)
        .encode_options(options(None))
        .run()
        .unwrap();
    assert!(
        shaped.skimmed,
        "a 10,000-item ctxo payload cut to 8 KiB is skimmed"
    );
    let (_, env) = decode_any(&text, None, &DecodeOptions::default()).unwrap();
    assert_eq!(
        shaped.bytes,
        fit(&env, FormatId::Ctxo, 8192, &options(None))
            .unwrap()
            .encoded
            .bytes
    );
    assert!(shaped.bytes.len() <= 8192);
    let out: Value = serde_json::from_slice(&shaped.bytes).unwrap();
    assert_eq!(out["_meta"]["totalItems"], 10_000);
}

/// tool-envelope-v1 moves its payload into a base64 envelope block: the pipeline reads the
/// block's `payload` for the limit (the skimmed read of `shape::bounded` alone read such a
/// result whole; the pipeline's read of the block does not), with the whole cut's bytes.
#[test]
fn a_payload_in_an_envelope_block_is_read_for_the_limit() {
    let _serial = heap::serial();
    let items: Vec<Value> = (0..2000).map(|i| json!({"i": i})).collect();
    let payload = json!({"items": items});
    let format = FormatId::ToolEnvelopeV1;
    let text = encode(
        format,
        &Envelope::ok(payload.clone()),
        &options(Some(usize::MAX)),
    )
    .unwrap()
    .bytes;
    let (shaped, skimmed) = shaped_for(&text, format, 500);
    assert!(skimmed, "{format}");
    assert_eq!(outcome(shaped), outcome(whole_cut(&text, format, 500)));
}

#[test]
fn a_string_that_reads_like_an_old_skim_mark_is_a_string() {
    let _serial = heap::serial();
    // Skimmed arrays once ended with a mark string: a document's own string of that form
    // is kept as it is (the read is skimmed or not, the bytes are those of the whole read).
    let items: Vec<Value> = (0..2000).map(|i| json!({"i": i})).collect();
    let forged = json!({"items": items, "note": ["\u{FFFF}envelope:skimmed:0"]});
    let text = serde_json::to_vec(&json!({"version": 1, "status": "ok", "command": "a/b", "data": forged, "meta": {"ts": "2026-07-04T00:00:00Z"}})).unwrap();
    let (_, env) = decode_any(&text, None, &DecodeOptions::default()).unwrap();
    assert_eq!(env.payload.to_json(), forged);
    let whole = fit(&env, FormatId::ProtocolV1, 2000, &options(None)).unwrap();
    let (shaped, skimmed) = shaped_for(&text, FormatId::ProtocolV1, 2000);
    assert!(skimmed, "the items are skimmed");
    let shaped = shaped.unwrap();
    assert_eq!(shaped.bytes, whole.encoded.bytes);
    let out: Value = serde_json::from_slice(&shaped.bytes).unwrap();
    assert_eq!(out["data"]["note"], forged["note"]);
}

/// Shape (to every format) and convert to ctxo, skimmed read against whole read.
fn assert_same_as_whole(text: &[u8], limit: usize) -> bool {
    let decode_options = DecodeOptions::default();
    let mut was_skimmed = false;
    for target in FormatId::ALL {
        let whole = whole_cut(text, target, limit);
        let (shaped, skimmed) = shaped_for(text, target, limit);
        was_skimmed |= skimmed;
        assert_eq!(
            outcome(shaped),
            outcome(whole),
            "limit {limit}, to {target}, input {}",
            String::from_utf8_lossy(text)
        );
    }
    let ctxo = options(Some(limit));
    let whole = decode_any(text, None, &decode_options)
        .and_then(|(_, env)| encode(FormatId::Ctxo, &env, &ctxo));
    let converted = convert(text, None, FormatId::Ctxo, &decode_options, &ctxo);
    assert_eq!(outcome(converted), outcome(whole), "compat at {limit}");
    was_skimmed
}

#[test]
fn what_a_decoder_compares_or_keeps_outside_the_payload_is_never_skimmed() {
    let _serial = heap::serial();
    let limit = 300;
    let items: Vec<Value> = (0..200).map(|i| json!({"i": i})).collect();
    // operations: `meta.structuredContent` equal to any prefix of `data`'s skimmed array
    // (the one the skimmed read built among them), to all of it, or to something else.
    let mut skimmed = 0;
    for k in (1..60).chain([200]) {
        let structured = json!({"items": items[..k]});
        let doc = json!({"data": {"items": items}, "meta": {"source": "mcp", "isError": false, "structuredContent": structured}});
        skimmed += usize::from(assert_same_as_whole(
            &serde_json::to_vec(&doc).unwrap(),
            limit,
        ));
    }
    // Different from `data` and not skimmed itself: kept as an extension, `data` skimmed.
    assert!(skimmed > 20, "{skimmed}");
    // `meta.content`: the payload when `data` equals it.
    for k in [1, 10, 30, 200] {
        let blocks: Vec<Value> = items[..k]
            .iter()
            .map(|i| json!({"type": "text", "text": i.to_string()}))
            .collect();
        let all: Vec<Value> = items
            .iter()
            .map(|i| json!({"type": "text", "text": i.to_string()}))
            .collect();
        let doc = json!({"data": all, "meta": {"source": "mcp", "content": blocks}});
        assert_same_as_whole(&serde_json::to_vec(&doc).unwrap(), limit);
    }
    // A skimmed array outside the payload: in protocol-v1's meta, in a tool-result-envelope
    // member beside its payload key.
    let docs = [
        json!({"version": 1, "status": "ok", "command": "a/b", "data": {"items": items}, "meta": {"ts": "2026-07-04T00:00:00Z", "tags": items}}),
        json!({"__envelope": {"payloadPath": "result"}, "result": {"items": items}, "other": items}),
        json!({"__envelope": {"compat": items}, "result": {"items": items}}),
    ];
    for doc in docs {
        assert!(
            !assert_same_as_whole(&serde_json::to_vec(&doc).unwrap(), limit),
            "{doc}"
        );
    }
    // A root `_meta` is read from its text, whole (ctxo's decoder builds it), whatever it
    // holds: only the payload beside it may be skimmed, and the bytes are the whole read's
    // (`assert_same_as_whole` compares them).
    let doc = json!({"items": items, "_meta": {"totalItems": 1, "list": items}});
    assert_same_as_whole(&serde_json::to_vec(&doc).unwrap(), limit);
    // Inside the payload: skimmed.
    let docs = [
        json!({"__envelope": {"payloadPath": "a/b"}, "a/b": {"items": items}, "other": 1}),
        json!({"__envelope": {}, "x": {"items": items}, "y": items}),
        json!({"version": 1, "status": "ok", "command": "a/b", "data": items}),
        json!({"impactedSymbols": items, "_meta": {"totalItems": 1}}),
    ];
    for doc in docs {
        assert!(
            assert_same_as_whole(&serde_json::to_vec(&doc).unwrap(), limit),
            "{doc}"
        );
    }
    // A duplicate `data`: the first one's skimmed array is not the payload's.
    let long = serde_json::to_string(&items).unwrap();
    let text = format!(
        r#"{{"version": 1, "status": "ok", "command": "a/b", "data": {{"items": {long}}}, "data": {{"items": [1]}}}}"#
    );
    assert!(!assert_same_as_whole(text.as_bytes(), limit));
}

/// `envelope wrap --format ctxo` ([`convert::wrap`](envelope::convert::wrap), which reads
/// the payload for the compat limit where it can): the bytes of the payload parsed whole,
/// around envelopes with and without metadata.
#[test]
fn wrapping_a_payload_read_for_the_ctxo_limit_gives_the_bytes_of_reading_whole() {
    let _serial = heap::serial();
    let mut g = Gen::new(0x05ee_d3a9);
    for case in 0..300 {
        let payload = match g.below(4) {
            0 => Value::Array((0..g.below(400)).map(|_| long_value(&mut g, 2)).collect()),
            1 => long_value(&mut g, 3),
            _ => payload(&mut g),
        };
        let text = match g.below(2) {
            0 => serde_json::to_vec(&payload).unwrap(),
            _ => serde_json::to_vec_pretty(&payload).unwrap(),
        };
        let limit = [60, 300, 1000, 8192][g.below(4) as usize] + g.below(50) as usize;
        let ctxo = options(Some(limit));
        let mut env = Envelope::default();
        if g.below(2) == 0 {
            env.tool = Some("grep".into());
            env.summary = Some("a summary".into());
        }
        let mut whole_env = env.clone();
        whole_env.payload = envelope::Payload::Json(payload.clone());
        let whole = encode(FormatId::Ctxo, &whole_env, &ctxo);
        let wrapped = envelope::convert::wrap(env, &text, FormatId::Ctxo, &ctxo);
        assert_eq!(
            outcome(wrapped),
            outcome(whole),
            "case {case}: limit {limit}, payload {}",
            String::from_utf8_lossy(&text)
        );
    }
}

/// A 16 MB payload wrapped as ctxo is read for the compat limit: the heap stays a fraction
/// of it (parsed whole, its tree took several times its size).
#[test]
fn a_large_payload_wrapped_as_ctxo_is_not_built() {
    let _serial = heap::serial();
    let text = format!(r#"{{"results":{}}}"#, common::records_text(200_000));
    let before = heap::start();
    let wrapped = envelope::convert::wrap(
        Envelope::default(),
        text.as_bytes(),
        FormatId::Ctxo,
        &options(None),
    )
    .unwrap();
    let peak = heap::peak_since(before);
    assert!(
        peak < text.len() / 8,
        "peak heap {peak} for {} bytes",
        text.len()
    );
    let out: Value = serde_json::from_slice(&wrapped.bytes).unwrap();
    assert_eq!(out["_meta"]["totalItems"], 200_000);
}

/// An MCP result whose text mirror is the very text of its `structuredContent` (as the JS
/// writer writes it) is read skimmed (the mirror is compared on the text), and so is one
/// whose blocks are proven not to be that text (the decoder keeps them beside the
/// payload); an error result is read whole. Either way the bytes are those of the whole read.
#[test]
fn an_mcp_mirror_is_compared_on_the_text_so_structured_content_is_skimmed() {
    let _serial = heap::serial();
    let limit = 400;
    let items: Vec<Value> = (0..300)
        .map(|i| json!({"i": i, "name": format!("row {i}")}))
        .collect();
    let structured = json!({"rows": items});
    let mirror = envelope::json::to_string(&structured, envelope::json::Dialect::Js);
    let pretty = serde_json::to_string_pretty(&structured).unwrap();
    let text = |t: &str| json!({"type": "text", "text": t});
    let skimmed = [
        json!({"content": [text(&mirror)], "structuredContent": structured}),
        json!({"content": [text("summary"), text(&mirror)], "structuredContent": structured, "_meta": {"k": 1}}),
        json!({"content": [text(&mirror)], "structuredContent": structured, "isError": false}),
        // Not the mirror: a text cut short, the text indented.
        json!({"content": [text(&mirror[..mirror.len() - 2])], "structuredContent": structured}),
        json!({"content": [text(&pretty)], "structuredContent": structured}),
        // Blocks that are not plain text blocks are no mirror either.
        json!({"content": [json!({"type": "text", "text": mirror, "annotations": {}})], "structuredContent": structured}),
        json!({"content": [json!({"type": "image", "data": "AA==", "mimeType": "image/png"}), text(&mirror)], "structuredContent": structured}),
    ];
    for doc in skimmed {
        let bytes = envelope::json::to_vec(&doc, envelope::json::Dialect::Js);
        assert!(assert_same_as_whole(&bytes, limit), "{doc}");
    }
    // An error result's message is its blocks' text: read whole.
    let error =
        json!({"content": [text(&mirror)], "structuredContent": structured, "isError": true});
    let bytes = envelope::json::to_vec(&error, envelope::json::Dialect::Js);
    assert!(!assert_same_as_whole(&bytes, limit), "{error}");
    // `structuredContent` not written as the JS writer writes it: the mirror is compared
    // with its text rewritten so.
    let spaced = format!(
        r#"{{"content":[{{"type":"text","text":{}}}],"structuredContent":{pretty}}}"#,
        serde_json::to_string(&mirror).unwrap()
    );
    assert!(assert_same_as_whole(spaced.as_bytes(), limit));
    // Space around it is no matter.
    let spaced = format!(
        r#"{{ "content": [{{"type":"text","text":{}}}], "structuredContent": {mirror} }}"#,
        serde_json::to_string(&mirror).unwrap()
    );
    assert!(assert_same_as_whole(spaced.as_bytes(), limit));
}
