//! The hard byte budget: never over the limit, in every format, with a visible marker.

use envelope::model::Cut;
use envelope::shape::{Budget, Carried, Notice, Pipeline, fit, fit_within};
use envelope::{DecodeOptions, EncodeOptions, Envelope, FormatId, Payload, decode};
use proptest::prelude::*;
use serde_json::{Value, json};

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|i| json!(i)),
        "\\PC{0,40}".prop_map(Value::String),
        "[\u{0}-\u{1f}\"é😀a-z]{0,60}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 200, 30, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..30).prop_map(Value::Array),
            prop::collection::btree_map("[a-z]{1,6}", inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn options() -> EncodeOptions {
    EncodeOptions {
        now: Some("2026-07-04T00:00:00Z".into()),
        ..EncodeOptions::default()
    }
}

/// Every array in `cut` is a prefix of the array at the same place in `original`, and every
/// string a prefix of the original string.
fn is_prefix_cut(cut: &Value, original: &Value) -> bool {
    match (cut, original) {
        (Value::Array(c), Value::Array(o)) => {
            c.len() <= o.len() && c.iter().zip(o).all(|(c, o)| is_prefix_cut(c, o))
        }
        (Value::Object(c), Value::Object(o)) => c
            .iter()
            .all(|(k, v)| o.get(k).is_some_and(|ov| is_prefix_cut(v, ov))),
        (Value::String(c), Value::String(o)) => o.starts_with(c.as_str()),
        (c, o) => c == o,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Measured for a budget, the items out of reach get no nodes, yet every budget up to
    /// the bound gives the same level and the same cut as a full measure.
    #[test]
    fn a_bounded_measure_cuts_like_a_full_one(payload in json_value(), limit in 0usize..2000) {
        use envelope::shape::cut::Measured;
        let full = Measured::new(&payload);
        let bounded = Measured::bounded(&payload, limit);
        prop_assert_eq!(full.size(), bounded.size());
        for budget in [0, limit / 4, limit / 2, limit] {
            let level = full.level_for(&payload, budget);
            prop_assert_eq!(level, bounded.level_for(&payload, budget), "budget {}", budget);
            if let Some(level) = level {
                prop_assert_eq!(full.size_at(&payload, level), bounded.size_at(&payload, level));
                let (mut a, mut b) = (Vec::new(), Vec::new());
                prop_assert_eq!(full.cut(&payload, level, "", &mut a), bounded.cut(&payload, level, "", &mut b));
                prop_assert_eq!(a, b);
            }
        }
    }

    #[test]
    fn output_never_exceeds_the_limit(
        payload in json_value(),
        format in prop::sample::select(FormatId::ALL.to_vec()),
        limit in 0usize..3000,
        summary in proptest::option::of("\\PC{0,80}"),
    ) {
        let env = Envelope { tool: Some("t".into()), summary, ..Envelope::ok(payload.clone()) };
        match fit(&env, format, limit, &options()) {
            Ok(fitted) => {
                prop_assert!(fitted.encoded.bytes.len() <= limit, "{} bytes over {limit}", fitted.encoded.bytes.len());
                let back = decode(format, &fitted.encoded.bytes, &DecodeOptions::default());
                prop_assert!(back.is_ok(), "{format} cannot read its fitted output: {:?}", back.err());
                if let Some(cut) = fitted.envelope {
                    let budget = cut.budget.as_ref().unwrap();
                    prop_assert!(budget.truncated);
                    if let Payload::Json(v) = &cut.payload {
                        prop_assert!(is_prefix_cut(v, &payload), "not a prefix cut: {v} of {payload}");
                    }
                }
            }
            Err(e) => {
                prop_assert_eq!(e.code(), "budget.too-small");
            }
        }
    }
}

/// A caller's notice that grows with what was cut (as the proxy's facts do) and names the
/// cuts under a prefix of its own.
struct Wordy {
    words: usize,
}

impl Notice for Wordy {
    fn restate(&self, cuts: &[Cut], _kept: &Payload, budget: &Budget<'_>) -> (Vec<Cut>, String) {
        let limit = budget.limit;
        let cuts: Vec<Cut> = cuts
            .iter()
            .map(|c| Cut {
                pointer: format!("/whole{}", c.pointer),
                ..c.clone()
            })
            .collect();
        let facts = "fact ".repeat(self.words * (1 + cuts.len() % 3));
        let notice = format!("Cut to fit {limit} bytes: {} cuts. {facts}", cuts.len());
        (cuts, notice)
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// With the caller's notice and bytes reserved, one fit is the answer: the output takes
    /// at most the limit less the reserve, with the notice the caller wrote and its
    /// pointers, while the loss report names the payload's own pointers.
    #[test]
    fn a_callers_notice_and_reserve_are_fitted_in_one_run(
        payload in json_value(),
        format in prop::sample::select(FormatId::ALL.to_vec()),
        limit in 0usize..3000,
        reserve in 0usize..400,
        words in 0usize..40,
    ) {
        let env = Envelope { tool: Some("t".into()), ..Envelope::ok(payload.clone()) };
        let wordy = Wordy { words };
        let budget = Budget { limit, reserve, notice: Some(&wordy), tokens: None, carried: Carried::AsIs };
        match fit_within(&env, format, budget, &options()) {
            Ok(fitted) => {
                let room = limit.saturating_sub(reserve);
                prop_assert!(fitted.encoded.bytes.len() <= room, "{} bytes over {room}", fitted.encoded.bytes.len());
                if let Some(cut) = fitted.envelope {
                    let report = cut.budget.as_ref().unwrap();
                    if let Some(hint) = &report.hint {
                        let (_, expected) = wordy.restate(&report.cuts, &cut.payload, &budget);
                        prop_assert!(hint.starts_with(&format!("Cut to fit {limit} bytes: ")), "{hint}");
                        prop_assert_eq!(hint.len(), expected.len());
                    }
                    prop_assert!(report.cuts.iter().all(|c| c.pointer.starts_with("/whole")));
                    for loss in fitted.encoded.losses.items.iter().filter(|l| l.field.starts_with("payload")) {
                        prop_assert!(!loss.field.contains("/whole"), "{}", loss.field);
                    }
                }
            }
            Err(e) => prop_assert_eq!(e.code(), "budget.too-small"),
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// An output carried as the text of a JSON string (the proxy's emitted document in a
    /// text block) is fitted as sent: escaped, it takes at most the room, in bytes and in
    /// tokens, for any payload or long error message full of quotes and control
    /// characters, in every format.
    #[test]
    fn an_output_carried_in_a_string_fits_as_sent(
        payload in json_value(),
        message in prop::option::of("[\u{0}-\u{1f}\"\\\\a-z é]{200,3000}"),
        format in prop::sample::select(FormatId::ALL.to_vec()),
        limit in 0usize..3000,
        reserve in 0usize..200,
        tokens in prop::option::of(50usize..800),
    ) {
        let tokenizer = envelope::tokens::Tokenizer::O200kBase;
        let env = match &message {
            Some(message) => {
                let error = envelope::model::EnvelopeError::new(envelope::model::Category::Execution, message.clone());
                Envelope { status: envelope::Status::Error, error: Some(error), ..Envelope::default() }
            }
            None => Envelope { tool: Some("t".into()), ..Envelope::ok(payload) },
        };
        let budget = Budget {
            limit,
            reserve,
            notice: None,
            tokens: tokens.map(|limit| envelope::shape::TokenLimit { limit, reserve: 0, tokenizer: &tokenizer }),
            carried: Carried::InString,
        };
        match fit_within(&env, format, budget, &options()) {
            Ok(fitted) => {
                // Escaped as the proxy's writer escapes the text block.
                let text = Value::String(String::from_utf8(fitted.encoded.bytes).unwrap());
                let quoted = String::from_utf8(envelope::json::to_vec(&text, envelope::json::Dialect::Js)).unwrap();
                let sent = &quoted[1..quoted.len() - 1];
                let room = limit.saturating_sub(reserve);
                prop_assert!(sent.len() <= room, "{} bytes sent over {room}", sent.len());
                if let Some(tokens) = tokens {
                    prop_assert!(tokenizer.count(sent) <= tokens, "over {tokens} tokens");
                }
            }
            Err(e) => prop_assert_eq!(e.code(), "budget.too-small"),
        }
    }
}

/// Through the pipeline: an MCP result cut with the caller's notice, the reserve left free.
#[test]
fn the_pipeline_fits_a_callers_notice_and_reserve() {
    let rows: Vec<Value> = (0..2000)
        .map(|i| json!({"id": i, "name": format!("row {i}")}))
        .collect();
    let text = serde_json::to_string(&json!({"rows": rows})).unwrap();
    let result =
        json!({"content": [{"type": "text", "text": text}], "structuredContent": {"rows": rows}});
    let input = result.to_string();
    // 600 bytes of facts for one cut, written twice (the text block and the marker).
    let wordy = Wordy { words: 60 };
    for (limit, reserve) in [(4096, 0), (4096, 300), (16384, 1000)] {
        let shaped = Pipeline::new(input.as_bytes())
            .limit(limit)
            .reserve(reserve)
            .notice(&wordy)
            .run()
            .unwrap();
        assert!(
            shaped.bytes.len() <= limit - reserve,
            "{} > {}",
            shaped.bytes.len(),
            limit - reserve
        );
        let out: Value = serde_json::from_slice(&shaped.bytes).unwrap();
        let notice = out["content"][0]["text"].as_str().unwrap();
        assert!(
            notice.starts_with(&format!("Cut to fit {limit} bytes: 1 cuts. fact fact")),
            "{notice}"
        );
        let marker = &out["_meta"]["dev.envelope/budget"];
        assert_eq!(marker["cuts"][0]["pointer"], "/whole/rows");
        // The mirror is the cut payload's.
        let mirror: Value =
            serde_json::from_str(out["content"][1]["text"].as_str().unwrap()).unwrap();
        assert_eq!(mirror, out["structuredContent"]);
    }
}

#[test]
fn nothing_changes_when_the_envelope_fits() {
    let env = Envelope::ok(json!({"a": [1, 2, 3]}));
    for format in FormatId::ALL {
        let plain = envelope::encode(format, &env, &options()).unwrap();
        let fitted = fit(&env, format, plain.bytes.len(), &options()).unwrap();
        assert_eq!(fitted.encoded.bytes, plain.bytes, "{format}");
        assert!(fitted.envelope.is_none());
    }
}

fn big() -> Envelope {
    let items: Vec<Value> = (0..2000)
        .map(|i| json!({"id": i, "name": format!("symbol-{i}"), "tags": ["a", "b", "c"]}))
        .collect();
    Envelope {
        tool: Some("search".into()),
        ..Envelope::ok(
            json!({"results": items, "nested": {"deep": {"list": (0..500).collect::<Vec<_>>()}}, "note": "n".repeat(5000)}),
        )
    }
}

#[test]
fn cuts_are_visible_in_every_format() {
    let env = big();
    for format in FormatId::ALL {
        let fitted = fit(&env, format, 4096, &options()).unwrap();
        let text = String::from_utf8(fitted.encoded.bytes.clone()).unwrap();
        assert!(
            fitted.encoded.bytes.len() <= 4096,
            "{format}: {}",
            fitted.encoded.bytes.len()
        );
        let doc: Value = serde_json::from_str(&text).unwrap();
        let marker = match format {
            FormatId::Ctxo => doc["_meta"].clone(),
            FormatId::Mcp => doc["_meta"]["dev.envelope/budget"].clone(),
            FormatId::ProtocolV1 => {
                assert_eq!(doc["meta"]["partial"], true);
                assert!(
                    doc["data"]["hint"]
                        .as_str()
                        .unwrap()
                        .starts_with("Output truncated to fit 4096 bytes")
                );
                doc["meta"]["budget"].clone()
            }
            FormatId::Operations => doc["meta"]["budget"].clone(),
            FormatId::ToolResultEnvelope => doc["__envelope"]["budget"].clone(),
            FormatId::ToolEnvelopeV1 => {
                let env = decode(format, text.as_bytes(), &DecodeOptions::default()).unwrap();
                assert!(
                    env.summary
                        .unwrap()
                        .contains("Output truncated to fit 4096 bytes")
                );
                let inner = envelope::formats::tool_envelope_v1::parse_block(
                    doc["content"][1]["text"].as_str().unwrap(),
                    &DecodeOptions::default(),
                    "",
                )
                .unwrap();
                inner["meta"]["budget"].clone()
            }
            other => panic!("no expectation for {other}: add where it puts the marker"),
        };
        assert_eq!(marker["truncated"], true, "{format}: {marker}");
        let cuts = marker["cuts"]
            .as_array()
            .unwrap_or_else(|| panic!("{format}: no cuts in {marker}"));
        assert!(
            cuts.iter().any(|c| c["pointer"] == "/results"),
            "{format}: {marker}"
        );
        if format == FormatId::Mcp {
            // Both channels say the same thing: the mirror is the cut structuredContent.
            let mirror = doc["content"].as_array().unwrap().last().unwrap()["text"]
                .as_str()
                .unwrap();
            assert_eq!(
                serde_json::from_str::<Value>(mirror).unwrap(),
                doc["structuredContent"]
            );
            assert!(
                doc["content"][0]["text"]
                    .as_str()
                    .unwrap()
                    .starts_with("Output truncated")
            );
        }
    }
}

#[test]
fn a_limit_below_any_envelope_is_an_error_not_an_overrun() {
    for format in FormatId::ALL {
        let err = fit(&big(), format, 10, &options()).unwrap_err();
        assert_eq!(err.code(), "budget.too-small", "{format}");
    }
}

#[test]
fn a_payload_that_cannot_fit_is_dropped_with_a_minimal_envelope() {
    // Object keys and numbers are never cut: past a point only leaving the payload out fits.
    let map: serde_json::Map<String, Value> = (0..60)
        .map(|i| (format!("key{i}"), json!(1.2345678901234567e300)))
        .collect();
    let env = Envelope::ok(Value::Object(map));
    let fitted = fit(&env, FormatId::ProtocolV1, 600, &options()).unwrap();
    assert!(fitted.encoded.bytes.len() <= 600);
    let cut = fitted.envelope.unwrap();
    assert_eq!(cut.payload, Payload::None);
    let budget = cut.budget.unwrap();
    assert_eq!(budget.cuts[0].pointer, "");
    let doc: Value = serde_json::from_slice(&fitted.encoded.bytes).unwrap();
    assert_eq!(doc["meta"]["partial"], true);
}

#[test]
fn a_bounded_measure_of_a_long_array_matches_a_full_one() {
    use envelope::shape::cut::Measured;
    let items: Vec<Value> = (0..10_000)
        .map(|i| json!({"id": i, "tags": ["a", "b"], "name": format!("item {i}")}))
        .collect();
    let payload = json!({"before": [[1, 2], [3]], "items": items, "after": "x".repeat(500)});
    let full = Measured::new(&payload);
    for limit in [0, 50, 400, 8192] {
        let bounded = Measured::bounded(&payload, limit);
        assert_eq!(full.size(), bounded.size());
        for budget in [limit / 3, limit] {
            let level = full.level_for(&payload, budget);
            assert_eq!(
                level,
                bounded.level_for(&payload, budget),
                "{limit}/{budget}"
            );
            if let Some(level) = level {
                let (mut a, mut b) = (Vec::new(), Vec::new());
                assert_eq!(
                    full.cut(&payload, level, "", &mut a),
                    bounded.cut(&payload, level, "", &mut b)
                );
                assert_eq!(a, b);
            }
        }
        // Far past the bound, the size says "cannot fit" rather than walking unmeasured items.
        if limit < 8192 {
            assert_eq!(bounded.size_at(&payload, 5_000), usize::MAX);
        }
    }
}

// ---------------------------------------------------------------------------------------
// Identifiers are never cut (issue 12, item 3)
// ---------------------------------------------------------------------------------------

/// Artifacts in memory, named by a digest of their count and length.
#[derive(Default)]
struct Memory(Vec<Vec<u8>>);

impl envelope::shape::ArtifactSink for Memory {
    fn put(
        &mut self,
        bytes: &[u8],
        _kind: &str,
    ) -> Result<envelope::model::ArtifactRef, envelope::shape::SinkError> {
        self.0.push(bytes.to_vec());
        Ok(envelope::model::ArtifactRef {
            digest: format!("sha256:{:032x}{:032x}", self.0.len(), bytes.len()),
        })
    }
}

/// Every string of a JSON document, and of the documents embedded in its strings.
fn strings(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) => {
            let embedded = match s.strip_prefix("__ENVELOPE_V1__:") {
                Some(b64) => envelope::base64::decode_strict(b64.as_bytes()).ok(),
                None => Some(s.as_bytes().to_vec()),
            };
            if let Some(inner) = embedded.and_then(|b| serde_json::from_slice::<Value>(&b).ok())
                && (inner.is_object() || inner.is_array())
            {
                strings(&inner, out);
            }
            out.push(s.clone());
        }
        Value::Array(items) => items.iter().for_each(|v| strings(v, out)),
        Value::Object(map) => map.values().for_each(|v| strings(v, out)),
        _ => {}
    }
}

#[test]
fn an_offloaded_payload_cut_to_any_limit_keeps_its_digest_whole() {
    let rows: Vec<Value> = (0..200)
        .map(|i| json!({"id": i, "name": format!("row {i}")}))
        .collect();
    let env = Envelope {
        tool: Some("rows/list".into()),
        command: Some("rows/list".into()),
        ..Envelope::ok(json!({"rows": rows}))
    };
    for format in FormatId::ALL {
        let mut written = 0;
        for limit in (100..2000).step_by(9) {
            let mut memory = Memory::default();
            let Ok(shaped) = envelope::shape::Pipeline::from_envelope(env.clone(), format)
                .store(&mut memory)
                .inline_threshold(64)
                .limit(limit)
                .encode_options(options())
                .run()
            else {
                continue;
            };
            let digest = format!("sha256:{:032x}{:032x}", 1, memory.0[0].len());
            let mut texts = Vec::new();
            strings(&serde_json::from_slice(&shaped.bytes).unwrap(), &mut texts);
            // Every piece of the digest in the output is the whole digest.
            for text in &texts {
                if text.starts_with("sha256:")
                    || (text.len() > 8 && digest.starts_with(text.as_str()))
                {
                    assert_eq!(
                        text,
                        &digest,
                        "{format} at {limit}: {}",
                        String::from_utf8_lossy(&shaped.bytes)
                    );
                }
            }
            assert!(texts.contains(&digest), "{format} at {limit}: no reference");
            written += 1;
        }
        assert!(written > 50, "{format}: {written}");
    }
}

/// Envelopes whose format identifier is held as an extension (a protocol-v1 status and a
/// tool-result-envelope version the model has no value for), with a large payload.
fn with_identifiers() -> Vec<(FormatId, Vec<u8>, &'static str, Value)> {
    let rows: Vec<Value> = (0..100).map(|i| json!(format!("row {i}"))).collect();
    vec![
        (
            FormatId::ProtocolV1,
            json!({"version": 1, "status": "queued", "command": "rows/list", "data": {"rows": rows}, "meta": {"ts": "2026-01-01T00:00:00Z", "runner": "exec"}, "error": {}})
                .to_string()
                .into_bytes(),
            "/status",
            json!("queued"),
        ),
        (
            FormatId::ToolResultEnvelope,
            json!({"result": {"rows": rows}, "extra": "x".repeat(40), "__envelope": {"version": "2", "tool": "rows/list"}})
                .to_string()
                .into_bytes(),
            "/__envelope/version",
            json!("2"),
        ),
    ]
}

#[test]
fn the_smallest_envelope_keeps_the_format_identifiers() {
    for (format, input, pointer, value) in with_identifiers() {
        let (_, env) =
            envelope::formats::decode_any(&input, Some(format), &DecodeOptions::default()).unwrap();
        assert!(
            env.extensions
                .iter()
                .any(|e| e.pointer == pointer && e.value == value),
            "{format}: {:?}",
            env.extensions
        );
        let mut minimal = 0;
        for limit in 0..input.len() {
            match fit(&env, format, limit, &options()) {
                Ok(fitted) => {
                    let out =
                        decode(format, &fitted.encoded.bytes, &DecodeOptions::default()).unwrap();
                    assert!(
                        out.extensions
                            .iter()
                            .any(|e| e.pointer == pointer && e.value == value),
                        "{format} at {limit}: {pointer} lost in {}",
                        String::from_utf8_lossy(&fitted.encoded.bytes)
                    );
                    minimal += usize::from(fitted.envelope.unwrap().payload == Payload::None);
                }
                Err(e) => {
                    assert_eq!(e.code(), "budget.too-small");
                    // The error says what cannot be cut.
                    assert!(e.to_string().contains("identifiers"), "{e}");
                }
            }
        }
        assert!(
            minimal > 0,
            "{format}: the minimal envelope was never reached"
        );
    }
}

/// A content block that is not text is kept whole or replaced by a line saying what it was,
/// never shortened (half an image is no image), in every output format, whether the input
/// is read whole or skimmed (a large one); and a long text before a large image keeps most
/// of the budget (a replaced image does not drag the text's cut down to its smallest).
#[test]
fn non_text_blocks_are_kept_whole_or_replaced_never_cut() {
    let image = |bytes: usize| {
        let data: String = (0..bytes)
            .map(|i| {
                char::from(
                    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"[i * 7 % 64],
                )
            })
            .collect();
        json!({"type": "image", "mimeType": "image/png", "data": data})
    };
    let text = |bytes: usize| json!({"type": "text", "text": "word ".repeat(bytes / 5)});
    for (text_bytes, image_bytes) in [
        (1000, 200),
        (20_000, 200),
        (20_000, 40_000),
        (3_000_000, 3_000_000),
        (200, 3_000_000),
    ] {
        for image_first in [false, true] {
            let (t, i) = (text(text_bytes), image(image_bytes));
            let blocks = match image_first {
                true => vec![i.clone(), t.clone()],
                false => vec![t.clone(), i.clone()],
            };
            let image_at = usize::from(!image_first);
            let input = serde_json::to_vec(&json!({"content": blocks})).unwrap();
            let data = i["data"].as_str().unwrap();
            let image_size = serde_json::to_vec(&i).unwrap().len();
            for limit in [4096, 16_384] {
                for to in [FormatId::Mcp, FormatId::Operations, FormatId::ProtocolV1] {
                    let case = format!(
                        "text {text_bytes}, image {image_bytes} (first: {image_first}), {limit} bytes, to {to:?}"
                    );
                    let shaped = Pipeline::new(&input)
                        .input_format(FormatId::Mcp)
                        .output_format(to)
                        .limit(limit)
                        .run()
                        .unwrap_or_else(|e| panic!("{case}: {e}"));
                    assert!(shaped.bytes.len() <= limit, "{case}");
                    let out = String::from_utf8(shaped.bytes.clone()).unwrap();
                    // The image's data: all of it, or none of it.
                    let whole = out.contains(data);
                    assert!(
                        whole || !out.contains(&data[..32.min(data.len())]),
                        "{case}: a cut image\n{out}"
                    );
                    if image_size > limit {
                        assert!(!whole, "{case}");
                        let said = format!(
                            "[image block (image/png, {image_size} bytes) left out to fit the limit]"
                        );
                        assert!(out.contains(&said), "{case}: no placeholder\n{out}");
                        let field = format!("payload/{image_at}");
                        assert!(
                            shaped.losses.items.iter().any(|l| l.field == field),
                            "{case}: {:?}",
                            shaped.losses
                        );
                    }
                    if to == FormatId::Mcp
                        && !image_first
                        && image_size > limit
                        && text_bytes > limit
                    {
                        // The text keeps most of what the placeholder and notice leave.
                        let kept = serde_json::from_str::<Value>(&out).unwrap()["content"]
                            .as_array()
                            .unwrap()
                            .iter()
                            .filter_map(|b| b["text"].as_str())
                            .filter(|t| t.starts_with("word"))
                            .map(str::len)
                            .max()
                            .unwrap_or(0);
                        assert!(
                            kept > limit / 2,
                            "{case}: the text kept {kept} bytes\n{out}"
                        );
                    }
                }
            }
        }
    }
}

/// A member beside the payload larger than half the room (an MCP result's `_meta`, an
/// extension) is left out of the cut and said so, in the notice and the loss report: the
/// payload keeps the room. Kept, a 2 MB `_meta` made every limit fail (`budget.too-small`).
#[test]
fn a_member_beside_the_payload_larger_than_half_the_room_is_left_out_and_said() {
    let big = "m".repeat(2_000_000);
    let mcp = json!({
        "content": [{"type": "text", "text": "hello ".repeat(4000)}],
        "_meta": {"trace": big, "k": 1},
    });
    let operations = json!({
        "ok": true,
        "data": {"rows": (0..3000).map(|i| json!({"id": i})).collect::<Vec<_>>()},
        "meta": {"source": "local", "operationId": "rows.list", "durationMs": 3},
        "debug": {"dump": big},
    });
    for (from, input, member) in [
        (FormatId::Mcp, &mcp, "_meta"),
        (FormatId::Operations, &operations, "/debug"),
    ] {
        let bytes = serde_json::to_vec(input).unwrap();
        for limit in [4096, 16_384] {
            let case = format!("{from:?} at {limit} bytes");
            let shaped = Pipeline::new(&bytes)
                .input_format(from)
                .limit(limit)
                .run()
                .unwrap_or_else(|e| panic!("{case}: {e}"));
            assert!(shaped.bytes.len() <= limit, "{case}");
            let out = String::from_utf8(shaped.bytes.clone()).unwrap();
            assert!(!out.contains("mmmmmmmm"), "{case}: {out}");
            assert!(
                out.contains(&format!("Left out beside the payload: {member} (")),
                "{case}: {out}"
            );
            assert!(
                shaped.losses.items.iter().any(|l| l.field == member),
                "{case}: {:?}",
                shaped.losses
            );
            // The payload keeps most of the room.
            assert!(out.len() > limit / 2, "{case}: {} bytes", out.len());
        }
        // Within half the room, the member is kept as it was.
        let small = serde_json::to_vec(&{
            let mut small = input.clone();
            let at = if from == FormatId::Mcp {
                "/_meta/trace"
            } else {
                "/debug/dump"
            };
            *small.pointer_mut(at).unwrap() = json!("short");
            small
        })
        .unwrap();
        let shaped = Pipeline::new(&small)
            .input_format(from)
            .limit(4096)
            .run()
            .unwrap();
        assert!(
            String::from_utf8(shaped.bytes)
                .unwrap()
                .contains("\"short\""),
            "{from:?}"
        );
        // Larger than half the room, but the whole result fits: written whole, the member
        // with it (the writer's own spelling of the rest), nothing reported lost.
        let dump = "m".repeat(3000);
        let fits = match from {
            FormatId::Mcp => {
                json!({"content": [{"type": "text", "text": "hi"}], "_meta": {"trace": dump}})
            }
            _ => {
                json!({"ok": true, "data": {"rows": []}, "meta": {"source": "local", "operationId": "rows.list", "durationMs": 3}, "debug": {"dump": dump}})
            }
        };
        let fits = serde_json::to_vec(&fits).unwrap();
        let shaped = Pipeline::new(&fits)
            .input_format(from)
            .limit(4096)
            .run()
            .unwrap();
        let out = String::from_utf8(shaped.bytes).unwrap();
        assert!(
            out.contains(&dump) && !out.contains("Left out"),
            "{from:?}: {out}"
        );
        assert!(
            shaped.losses.items.iter().all(|l| l.field != member),
            "{from:?}: {:?}",
            shaped.losses
        );
    }
}

/// A generated content block: text, an image or audio (base64 of a size), an embedded
/// resource, a resource link.
fn content_block() -> impl Strategy<Value = Value> {
    let data = |n: usize| -> String { "QUJD".repeat(n / 4 + 1)[..n].to_string() };
    prop_oneof![
        (0usize..6000).prop_map(|n| json!({"type": "text", "text": "t ".repeat(n / 2)})),
        (0usize..20_000).prop_map(move |n| json!({"type": "image", "mimeType": "image/png", "data": data(n)})),
        (0usize..5000).prop_map(move |n| json!({"type": "audio", "mimeType": "audio/wav", "data": data(n)})),
        (0usize..5000).prop_map(|n| json!({"type": "resource", "resource": {"uri": "file:///a.txt", "mimeType": "text/plain", "text": "r".repeat(n)}})),
        Just(json!({"type": "resource_link", "uri": "file:///b.bin", "name": "b.bin"})),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Whatever the blocks and the limit: the output fits, and each non-text block of the
    /// output is one of the input's, whole; one that is missing within the kept blocks
    /// was replaced by its placeholder.
    #[test]
    fn a_cut_keeps_each_non_text_block_whole_or_names_it(
        blocks in prop::collection::vec(content_block(), 2..7),
        limit in 600usize..20_000,
        to in prop::sample::select(vec![FormatId::Mcp, FormatId::Operations, FormatId::ProtocolV1]),
    ) {
        // Each block's long string starts with a tag of its own: the tell below.
        let mut blocks = blocks;
        for (i, block) in blocks.iter_mut().enumerate() {
            let long = match block.get("data").is_some() {
                true => block.get_mut("data"),
                false => block.pointer_mut("/resource/text"),
            };
            if let Some(Value::String(s)) = long {
                s.insert_str(0, &format!("<{i}>"));
            }
        }
        let input = serde_json::to_vec(&json!({"content": blocks})).unwrap();
        let shaped = match Pipeline::new(&input).input_format(FormatId::Mcp).output_format(to).limit(limit).run() {
            Ok(shaped) => shaped,
            Err(e) => {
                prop_assert_eq!(e.code(), "budget.too-small");
                return Ok(());
            }
        };
        prop_assert!(shaped.bytes.len() <= limit);
        let out = String::from_utf8(shaped.bytes).unwrap();
        for block in blocks.iter().filter(|b| b["type"] != "text") {
            let text = serde_json::to_string(block).unwrap();
            let inner = match block.get("data").or_else(|| block.pointer("/resource/text")) {
                Some(Value::String(s)) => s.as_str(),
                _ => continue,
            };
            // Inside another format, the block is written in its dialect: its long string
            // is the tell. Whole, or not there at all.
            let tag = &inner[..inner.find('>').unwrap() + 1];
            let found = out.matches(tag).count();
            prop_assert!(
                found == 0 || out.contains(&text) || out.contains(inner),
                "a shortened {} block in {}", block["type"], out
            );
        }
    }
}
