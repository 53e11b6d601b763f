//! Whatever shaping drops is in the loss report: for every bundled example and protocol-v1
//! fixture, at limits from nothing to the whole document, with and without a store, each
//! part of the input that is not in the output (payload, summary, content blocks, fields
//! only the format knows, typed fields) is named in the report. And the notice a cut
//! writes agrees with the report: each cut the marker lists is a reported loss.

mod common;
use common::Memory;

use envelope::shape::kept::{Kept, kept_payload};
use envelope::shape::{Offloaded, Pipeline};
use envelope::{DecodeOptions, EncodeOptions, Envelope, FormatId};
use serde_json::Value;

fn options() -> EncodeOptions {
    EncodeOptions {
        now: Some("2026-07-04T00:00:00Z".into()),
        ..EncodeOptions::default()
    }
}

/// The bundled examples that are envelopes, and the protocol-v1 fixtures.
fn inputs() -> Vec<(String, Vec<u8>)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let mut out = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let bytes = std::fs::read(&path).unwrap();
        if path.extension().is_some_and(|e| e == "json")
            && envelope::formats::decode_any(&bytes, None, &DecodeOptions::default()).is_ok()
        {
            out.push((
                path.file_name().unwrap().to_string_lossy().into_owned(),
                bytes,
            ));
        }
    }
    assert!(out.iter().any(|(n, _)| n == "big-result.json"));
    for path in common::protocol_v1_fixtures() {
        out.push((
            path.file_name().unwrap().to_string_lossy().into_owned(),
            std::fs::read(&path).unwrap(),
        ));
    }
    out.sort();
    out
}

/// Every string of a JSON document, and of the documents embedded in its strings (JSON
/// text in an MCP block, tool-envelope-v1's base64 block).
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

/// What of `input` is missing from `output` (decoded as `format`) and not reported in
/// `lost`, by the name the report uses.
fn unreported(
    input: &Envelope,
    output: &[u8],
    format: FormatId,
    lost: &[String],
    offloaded: bool,
) -> Vec<String> {
    let out = envelope::formats::decode(format, output, &DecodeOptions::default()).unwrap();
    let mut texts = Vec::new();
    strings(&serde_json::from_slice(output).unwrap(), &mut texts);
    let written = |text: &str| texts.iter().any(|t| t.contains(text));
    let reported = |field: &str| {
        lost.iter().any(|l| {
            l == field || l.starts_with(&format!("{field}/")) || l.starts_with(&format!("{field}."))
        })
    };
    let mut missing = Vec::new();
    // An offloaded payload is in the store, not lost.
    if !offloaded {
        let whole = input.payload.to_json();
        let same = match kept_payload(&out) {
            Kept::Whole(v) | Kept::Part(v) => v == whole,
            Kept::LeftOut => whole.is_null(),
        };
        if !same && !reported("payload") {
            missing.push("payload".to_string());
        }
    }
    if let Some(summary) = &input.summary
        && !written(summary)
        && !reported("summary")
    {
        missing.push("summary".into());
    }
    for block in input.presentation.iter().flatten() {
        let text = block.get("text").and_then(Value::as_str);
        if !text.is_some_and(written) && !reported("presentation") {
            missing.push(format!("presentation: {block}"));
        }
    }
    for ext in &input.extensions {
        if !out.extensions.contains(ext) && !reported(&ext.pointer) {
            missing.push(ext.pointer.clone());
        }
    }
    for (field, a, b) in [
        ("tool", &input.tool, &out.tool),
        ("command", &input.command, &out.command),
        ("workspace", &input.workspace, &out.workspace),
    ] {
        if a.is_some() && a != b && !reported(field) {
            missing.push(field.into());
        }
    }
    missing
}

#[test]
fn what_shaping_drops_is_reported_for_every_example_and_fixture_at_every_limit() {
    let mut checked = 0;
    for (name, bytes) in inputs() {
        let (format, input) =
            envelope::formats::decode_any(&bytes, None, &DecodeOptions::default()).unwrap();
        let size = bytes.len() + 64;
        let step = (size / 24).max(1);
        for limit in (0..=size).step_by(step).map(Some).chain([None]) {
            for store in [false, true] {
                let mut memory = Memory::default();
                let mut pipeline = Pipeline::new(&bytes)
                    .limit(limit)
                    .inline_threshold(64)
                    .encode_options(options());
                if store {
                    pipeline = pipeline.store(&mut memory);
                }
                let Ok(shaped) = pipeline.run() else { continue };
                let lost: Vec<String> = shaped
                    .losses
                    .items
                    .iter()
                    .map(|l| l.field.clone())
                    .collect();
                let offloaded = matches!(shaped.offloaded, Offloaded::Stored { .. });
                let missing = unreported(&input, &shaped.bytes, format, &lost, offloaded);
                assert!(
                    missing.is_empty(),
                    "{name} at {limit:?} (store {store}): {missing:?} dropped, reported {lost:?}\n{}",
                    String::from_utf8_lossy(&shaped.bytes)
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 500, "{checked}");
}

/// The noticed bug: `envelope shape --limit N examples/big-result.json` left out the text
/// block "320 matches for \"handler\"" and reported nothing lost.
#[test]
fn big_result_cut_or_offloaded_reports_its_text_block() {
    let bytes = std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/big-result.json"),
    )
    .unwrap();
    for store in [false, true] {
        let mut memory = Memory::default();
        let mut pipeline = Pipeline::new(&bytes).limit(1500);
        if store {
            pipeline = pipeline.store(&mut memory);
        }
        let shaped = pipeline.run().unwrap();
        assert!(!String::from_utf8_lossy(&shaped.bytes).contains("320 matches"));
        assert!(
            shaped
                .losses
                .items
                .iter()
                .any(|l| l.field == "presentation"),
            "store {store}: {:?}",
            shaped.losses
        );
    }
}

/// The notice agrees with the report: every cut the marker lists is a reported loss, and
/// the cut the hint names is reported with the same numbers.
#[test]
fn the_notice_and_the_report_name_the_same_cuts() {
    let bytes = std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/big-result.json"),
    )
    .unwrap();
    for format in FormatId::ALL {
        for limit in [700, 1500, 4000] {
            let Ok(shaped) = Pipeline::new(&bytes)
                .output_format(format)
                .limit(limit)
                .encode_options(options())
                .run()
            else {
                continue;
            };
            let fitted = envelope::shape::fit(
                &envelope::formats::decode_any(&bytes, None, &DecodeOptions::default())
                    .unwrap()
                    .1,
                format,
                limit,
                &options(),
            )
            .unwrap();
            let budget = fitted.envelope.unwrap().budget.unwrap();
            // The hint names one of the reported cuts, with its numbers.
            if let Some(hint) = &budget.hint {
                assert!(
                    budget.cuts.iter().any(|c| {
                        let named = match (c.pointer.as_str(), c.kept) {
                            ("", 0) => "the payload was left out".to_string(),
                            ("", _) => format!("the payload kept {} of {}", c.kept, c.total),
                            (p, _) => format!("{p} kept {} of {}", c.kept, c.total),
                        };
                        hint.contains(&named)
                    }),
                    "{format} at {limit}: {hint} names no cut of {:?}",
                    budget.cuts
                );
            }
            for cut in &budget.cuts {
                let field = format!("payload{}", cut.pointer);
                let loss = shaped
                    .losses
                    .items
                    .iter()
                    .find(|l| l.field == field)
                    .unwrap_or_else(|| panic!("{format} at {limit}: {field} not reported"));
                if cut.kept > 0 {
                    let numbers = format!("kept {} of {}", cut.kept, cut.total);
                    assert!(loss.reason.contains(&numbers), "{}", loss.reason);
                }
            }
        }
    }
}

/// ctxo's own truncation (the reference's, at `CTXO_RESPONSE_LIMIT`, when writing ctxo
/// without a budget of ours) drops items too: the report says so.
#[test]
fn ctxo_compat_truncation_is_reported() {
    let rows: Vec<Value> = (0..2000)
        .map(|i| serde_json::json!({"id": i, "name": format!("symbol {i}")}))
        .collect();
    let env = Envelope::ok(serde_json::json!({"results": rows}));
    let out = envelope::encode(FormatId::Ctxo, &env, &options()).unwrap();
    let doc: Value = serde_json::from_slice(&out.bytes).unwrap();
    assert_eq!(doc["_meta"]["truncated"], true);
    let kept = doc["results"].as_array().unwrap().len();
    assert!(
        out.losses
            .items
            .iter()
            .any(|l| l.field == "payload" && l.reason.contains(&format!("kept {kept} of 2000"))),
        "{:?}",
        out.losses
    );
}
