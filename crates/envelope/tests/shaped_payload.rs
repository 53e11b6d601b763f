//! What a shaped output gives back as its payload (issue 12, item 5): the payload, or the
//! part the cut kept, never the truncation notice; and keeping it is monotonic in the limit.

use envelope::shape::Pipeline;
use envelope::shape::kept::{Kept, kept_payload};
use envelope::{DecodeOptions, EncodeOptions, Envelope, FormatId, Payload, encode};
use proptest::prelude::*;
use serde_json::{Value, json};

fn options() -> EncodeOptions {
    EncodeOptions {
        now: Some("2026-07-04T00:00:00Z".into()),
        ..EncodeOptions::default()
    }
}

fn decoded(bytes: &[u8], format: FormatId) -> Envelope {
    envelope::formats::decode(format, bytes, &DecodeOptions::default())
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(bytes)))
}

/// `kept` is a cut of `whole`: arrays are prefixes, strings are prefixes, objects have the
/// same keys (a cut never removes one); a string holding JSON (an MCP text payload, a
/// non-object payload MCP carries as text) may hold a cut of the JSON text.
fn is_cut_of(kept: &Value, whole: &Value) -> bool {
    match (kept, whole) {
        (Value::Array(k), Value::Array(w)) => {
            k.len() <= w.len() && k.iter().zip(w).all(|(k, w)| is_cut_of(k, w))
        }
        (Value::Object(k), Value::Object(w)) => {
            k.len() == w.len()
                && k.iter()
                    .all(|(key, v)| w.get(key).is_some_and(|wv| is_cut_of(v, wv)))
        }
        (Value::String(k), Value::String(w)) => {
            w.starts_with(k.as_str())
                || match (
                    serde_json::from_str::<Value>(k),
                    serde_json::from_str::<Value>(w),
                ) {
                    (Ok(k), Ok(w)) => is_cut_of(&k, &w),
                    _ => false,
                }
        }
        (k, w) => k == w,
    }
}

fn value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i32>().prop_map(Value::from),
        "[a-z é\"\\\\]{0,60}".prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 80, 12, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..20).prop_map(Value::Array),
            prop::collection::btree_map("[a-z]{1,5}", inner, 0..5)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn payload() -> impl Strategy<Value = Payload> {
    prop_oneof![
        value().prop_map(Payload::Json),
        prop::collection::btree_map("[a-z]{1,5}", value(), 1..5)
            .prop_map(|m| Payload::Json(Value::Object(m.into_iter().collect()))),
        "[a-z \n]{0,400}".prop_map(Payload::Text),
        prop::collection::vec("[a-z ]{0,80}", 1..5).prop_map(|texts| Payload::Blocks(
            texts
                .into_iter()
                .map(|t| json!({"type": "text", "text": t}))
                .collect()
        )),
    ]
}

/// Shapes `env` as `format` at every limit of `limits` (ascending) and checks what the
/// output gives back: a cut of the whole payload, and once some limit keeps it, every
/// larger limit keeps it too.
fn check_limits(env: &Envelope, format: FormatId, limits: impl Iterator<Item = usize>) {
    let whole = encode(format, env, &options()).unwrap();
    let Kept::Whole(whole_payload) = kept_payload(&decoded(&whole.bytes, format)) else {
        panic!("an output that was not cut reads as cut");
    };
    let mut kept_at = None;
    for limit in limits {
        let kept = match Pipeline::from_envelope(env.clone(), format)
            .limit(limit)
            .encode_options(options())
            .run()
        {
            Err(e) => {
                assert_eq!(e.code(), "budget.too-small", "{e}");
                None
            }
            Ok(shaped) => match kept_payload(&decoded(&shaped.bytes, format)) {
                Kept::LeftOut => None,
                Kept::Whole(v) | Kept::Part(v) => {
                    assert!(
                        is_cut_of(&v, &whole_payload),
                        "{format} at {limit}: {v} is not a cut of {whole_payload}\n{}",
                        String::from_utf8_lossy(&shaped.bytes)
                    );
                    Some(v)
                }
            },
        };
        match (kept, kept_at) {
            (Some(_), None) => kept_at = Some(limit),
            (None, Some(at)) => panic!(
                "{format}: the payload is kept at a limit of {at} bytes but not at {limit}: {env:?}"
            ),
            _ => {}
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Every format, random payloads (JSON, text, MCP blocks) with and without a summary,
    /// every limit from nothing to the whole output (in steps).
    #[test]
    fn the_payload_read_back_is_a_cut_and_keeping_it_is_monotonic_in_the_limit(
        payload in payload(),
        summary in prop::option::of("[a-z ]{1,40}"),
        format in prop::sample::select(FormatId::ALL.to_vec()),
    ) {
        let env = Envelope {
            tool: Some("rows/list".into()),
            summary,
            payload,
            ..Envelope::default()
        };
        let size = encode(format, &env, &options()).unwrap().bytes.len();
        let step = (size / 80).max(1);
        check_limits(&env, format, (0..=size + step).step_by(step));
    }
}

#[test]
fn every_limit_of_a_small_result_in_every_format() {
    let env = Envelope {
        tool: Some("rows/list".into()),
        ..Envelope::ok(json!({"rows": (0..12).map(|i| format!("row {i}")).collect::<Vec<_>>()}))
    };
    for format in FormatId::ALL {
        let size = encode(format, &env, &options()).unwrap().bytes.len();
        check_limits(&env, format, 0..=size + 1);
    }
}

/// The bug: an MCP text result cut to nothing decoded to the notice as its text, and cut
/// to a part, to the notice and the part as two blocks.
#[test]
fn an_mcp_text_result_gives_back_its_text_not_the_notice() {
    let env = Envelope {
        payload: Payload::Text("t".repeat(900)),
        ..Envelope::default()
    };
    let part = Pipeline::from_envelope(env.clone(), FormatId::Mcp)
        .limit(600)
        .run()
        .unwrap();
    let read = decoded(&part.bytes, FormatId::Mcp);
    assert!(matches!(read.payload, Payload::Blocks(_)), "{read:?}");
    match kept_payload(&read) {
        Kept::Part(Value::String(text)) => {
            assert!(
                !text.is_empty() && text.bytes().all(|b| b == b't'),
                "{text}"
            )
        }
        other => panic!("{other:?}"),
    }
    let none = Pipeline::from_envelope(env, FormatId::Mcp)
        .limit(200)
        .run()
        .unwrap();
    let read = decoded(&none.bytes, FormatId::Mcp);
    assert_eq!(kept_payload(&read), Kept::LeftOut, "{read:?}");
}

/// protocol-v1 writes the hint into a `data` object; it is not part of the payload.
#[test]
fn protocol_v1_gives_back_data_without_the_hint_it_added() {
    let env = Envelope {
        command: Some("rows/list".into()),
        ..Envelope::ok(json!({"rows": (0..200).collect::<Vec<_>>()}))
    };
    let shaped = Pipeline::from_envelope(env, FormatId::ProtocolV1)
        .limit(600)
        .run()
        .unwrap();
    let out: Value = serde_json::from_slice(&shaped.bytes).unwrap();
    assert!(out["data"]["hint"].is_string(), "{out}");
    let Kept::Part(kept) = kept_payload(&decoded(&shaped.bytes, FormatId::ProtocolV1)) else {
        panic!("not cut");
    };
    assert_eq!(kept.as_object().unwrap().len(), 1, "{kept}");
    assert!(!kept["rows"].as_array().unwrap().is_empty());
}
