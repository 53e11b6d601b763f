//! Whatever `shape`, `convert` and `wrap` write is read back by the tool itself as the format
//! it was written in (issue 12, items 4 and 6): `detect` names the output format and
//! `validate` finds no error in the default `spec` profile (in `compat` where the input was
//! only compat-valid). Where a writer cannot make a valid envelope the call refuses with
//! `Error::InvalidOutput`; documents nested to the parser's limit are processed or refused
//! with `json.depth`.
//!
//! Inputs: the bundled examples, the protocol-v1 reference fixtures, envelopes built in code
//! (every status, errors, sources, a budget report and an artifact), random payloads
//! (proptest). Paths: `convert`, `Pipeline` (limits, a store, redaction, re-shaping its
//! own output), `encode` of an envelope built as `wrap` builds it.

mod common;
use common::Memory;

use envelope::model::{ArtifactRef, BudgetReport, Cut, CutUnit};
use envelope::shape::Pipeline;
use envelope::validate::{Options, Profile, validate_document};
use envelope::{
    Category, DecodeOptions, EncodeOptions, Envelope, EnvelopeError, Error, FormatId, Payload,
    Source, Status,
};
use proptest::prelude::*;
use serde_json::{Value, json};

// ---------------------------------------------------------------------------------------
// The check
// ---------------------------------------------------------------------------------------

/// The strongest profile `input` is valid in (`None`: not even compat).
fn profile_of(input: &[u8]) -> Option<Profile> {
    [Profile::Spec, Profile::Compat]
        .into_iter()
        .find(|&p| validate_document(input, &Options::new(None, p)).is_valid())
}

/// Panics unless `bytes` is detected as `format` and valid in `profile`.
#[track_caller]
fn assert_readable(bytes: &[u8], format: FormatId, profile: Profile, what: &str) {
    let text = String::from_utf8_lossy(bytes);
    match envelope::detect(bytes) {
        Ok(found) => assert_eq!(found.format, format, "{what}: detected as\n{text}"),
        Err(e) => panic!("{what}: not detected ({e}):\n{text}"),
    }
    let report = validate_document(bytes, &Options::new(Some(format), profile));
    assert!(
        report.is_valid(),
        "{what}: invalid in {profile:?}: {:?}\n{text}",
        report
            .findings
            .iter()
            .map(|f| format!("{} {} {}", f.rule, f.pointer, f.message))
            .collect::<Vec<_>>()
    );
}

/// Counts outputs and refusals: a writer that refuses everything must not pass.
#[derive(Default)]
struct Tally {
    written: usize,
    /// The output format, the rule the output would break, and what was run.
    refused: Vec<(FormatId, &'static str, String)>,
}

impl Tally {
    /// `result` must be readable bytes, or a refusal (`InvalidOutput`) or one of the
    /// documented errors of the path.
    #[track_caller]
    fn check(
        &mut self,
        result: Result<Vec<u8>, Error>,
        format: FormatId,
        profile: Profile,
        what: &str,
    ) {
        match result {
            Ok(bytes) => {
                assert_readable(&bytes, format, profile, what);
                self.written += 1;
            }
            Err(Error::InvalidOutput { rule, .. }) => {
                self.refused.push((format, rule, what.into()))
            }
            Err(Error::BudgetTooSmall { .. }) => {}
            Err(e) => panic!("{what}: unexpected error {e} ({})", e.code()),
        }
    }
}

// ---------------------------------------------------------------------------------------
// Inputs
// ---------------------------------------------------------------------------------------

fn options() -> EncodeOptions {
    EncodeOptions {
        now: Some("2026-07-04T00:00:00Z".into()),
        ..EncodeOptions::default()
    }
}

/// The bundled example of each format and the protocol-v1 reference fixtures.
fn documents() -> Vec<(String, Vec<u8>)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let mut out: Vec<_> = FormatId::ALL
        .iter()
        .map(|f| format!("{f}.json"))
        .chain(["protocol-v1-error.json".to_string()])
        .map(|name| {
            let bytes = std::fs::read(dir.join(&name)).unwrap();
            (name, bytes)
        })
        .collect();
    for path in common::protocol_v1_fixtures() {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        out.push((name, std::fs::read(&path).unwrap()));
    }
    out
}

fn rows(n: usize) -> Value {
    Value::Array(
        (0..n)
            .map(|i| json!({"id": i, "name": format!("row {i}"), "body": "b".repeat(40)}))
            .collect(),
    )
}

/// Envelopes of every status, with and without an error, with and without a source, a
/// budget report and an artifact.
fn built_envelopes() -> Vec<(String, Envelope)> {
    let payloads = [
        (
            "object",
            Payload::Json(json!({"items": rows(20), "note": "n"})),
        ),
        ("array", Payload::Json(rows(20))),
        ("string", Payload::Json(json!("just text"))),
        ("number", Payload::Json(json!(42))),
        ("text", Payload::Text("t".repeat(300))),
        ("none", Payload::None),
        (
            "progress",
            Payload::Json(json!({"pct": 40, "message": "half"})),
        ),
    ];
    let errors = [
        None,
        Some(EnvelopeError::from_code("ENOTFOUND", "no such row")),
        Some(EnvelopeError::new(Category::Other("weird".into()), "odd")),
    ];
    let sources = [
        None,
        Some(Source::Local {
            operation_id: Some("rows.list".into()),
        }),
        Some(Source::Http {
            status_code: Some(200.into()),
            headers: serde_json::Map::new(),
            content_type: Some("application/json".into()),
        }),
        Some(Source::Mcp { result_meta: None }),
    ];
    let mut out = Vec::new();
    for status in [Status::Ok, Status::Error, Status::Progress] {
        // An error exactly when the status is error (a contradiction is refused: see
        // `contradictory_envelopes_are_refused`).
        for (e, error) in errors.iter().enumerate() {
            if error.is_some() != (status == Status::Error) {
                continue;
            }
            for (p, payload) in payloads.iter() {
                for (s, source) in sources.iter().enumerate() {
                    for shaped in [false, true] {
                        let mut env = Envelope {
                            status,
                            payload: payload.clone(),
                            tool: (s != 2).then(|| "rows".into()),
                            command: (s == 1).then(|| "rows/list".into()),
                            source: source.clone(),
                            error: error.clone(),
                            ..Envelope::default()
                        };
                        if shaped {
                            env.budget = Some(budget());
                            env.artifact = Some(ArtifactRef {
                                digest: format!("sha256:{}", "ab".repeat(32)),
                            });
                        }
                        out.push((
                            format!("{status:?} error{e} {p} source{s} shaped {shaped}"),
                            env,
                        ));
                    }
                }
            }
        }
    }
    out
}

fn budget() -> BudgetReport {
    BudgetReport {
        total_items: 20,
        returned_items: 2,
        truncated: true,
        total_bytes: 4000,
        tokens: None,
        hint: Some("more with a larger limit".into()),
        cuts: vec![Cut {
            pointer: "/items".into(),
            kept: 2,
            total: 20,
            unit: CutUnit::Items,
        }],
    }
}

// ---------------------------------------------------------------------------------------
// Running every path
// ---------------------------------------------------------------------------------------

/// The ways `shape` is run: limit, store, redaction.
const SHAPINGS: [(Option<usize>, bool, bool); 6] = [
    (None, false, false),
    (None, true, true),
    (Some(400), false, false),
    (Some(900), true, false),
    (Some(2500), false, true),
    (Some(100_000), false, false),
];

fn shape<'a>(
    pipeline: Pipeline<'a>,
    (limit, store, redact): (Option<usize>, bool, bool),
    memory: &'a mut Memory,
) -> Result<Vec<u8>, Error> {
    let mut pipeline = pipeline
        .limit(limit)
        .redact(redact)
        .inline_threshold(64)
        .encode_options(options());
    if store {
        pipeline = pipeline.store(memory);
    }
    pipeline.run().map(|s| s.bytes)
}

/// Every output of a document: converted and shaped into every format, and each shaped
/// output shaped again (the tool's own markers come back as input).
fn check_document(name: &str, input: &[u8], tally: &mut Tally) {
    let Some(profile) = profile_of(input) else {
        return;
    };
    for to in FormatId::ALL {
        let what = format!("{name} → {to} (convert)");
        let converted =
            envelope::convert::convert(input, None, to, &DecodeOptions::default(), &options())
                .map(|e| e.bytes);
        tally.check(converted, to, profile, &what);
        for shaping in SHAPINGS {
            let what = format!("{name} → {to} (shape {shaping:?})");
            let mut memory = Memory::default();
            let shaped = shape(Pipeline::new(input).output_format(to), shaping, &mut memory);
            if let Ok(bytes) = &shaped {
                for again in FormatId::ALL {
                    let mut memory = Memory::default();
                    let reshaped = shape(
                        Pipeline::new(bytes).output_format(again),
                        (Some(600), true, false),
                        &mut memory,
                    );
                    tally.check(reshaped, again, profile, &format!("{what} → {again} again"));
                }
            }
            tally.check(shaped, to, profile, &what);
        }
    }
}

/// What `wrap` does: encode, then check the output in the spec profile.
fn wrap_like(to: FormatId, env: &Envelope) -> Result<Vec<u8>, Error> {
    let bytes = envelope::encode(to, env, &options())?.bytes;
    envelope::validate::check_output(&bytes, to, Profile::Spec)?;
    Ok(bytes)
}

/// Every output of an envelope built in code: encoded whole and shaped.
fn check_envelope(name: &str, env: &Envelope, tally: &mut Tally) {
    for to in FormatId::ALL {
        let what = format!("{name} → {to} (encode)");
        tally.check(wrap_like(to, env), to, Profile::Spec, &what);
        for shaping in SHAPINGS {
            let what = format!("{name} → {to} (shape {shaping:?})");
            let mut memory = Memory::default();
            let shaped = shape(
                Pipeline::from_envelope(env.clone(), to),
                shaping,
                &mut memory,
            );
            tally.check(shaped, to, Profile::Spec, &what);
        }
    }
}

/// Refusals of outputs whose writers belong to other changes (issue 12): ctxo writes an
/// earlier shaping's `_meta.artifact` beside the new one (item 8, its duplicate-key fix is
/// pending). The guard refuses it.
const PENDING: [(FormatId, &str); 1] = [(FormatId::Ctxo, "text.duplicate-key")];

/// Panics when a refusal is not one of `allowed`, listing those that are not.
#[track_caller]
fn assert_refusals_within(tally: &Tally, allowed: &[(FormatId, &str)]) {
    let unexpected: Vec<String> = tally
        .refused
        .iter()
        .filter(|(format, rule, _)| !allowed.contains(&(*format, *rule)))
        .map(|(format, rule, what)| format!("{what}: {format} {rule}"))
        .collect();
    assert!(
        unexpected.is_empty(),
        "{} refused, {} written:\n{}",
        unexpected.len(),
        tally.written,
        unexpected.join("\n")
    );
}

#[test]
fn every_output_of_the_examples_and_fixtures_is_readable() {
    let mut tally = Tally::default();
    for (name, bytes) in documents() {
        check_document(&name, &bytes, &mut tally);
    }
    // Refused on purpose (docs/formats.md): an error code outside the protocol-v1
    // catalogue, read from a format without one (a tool-envelope-v1 error made from a
    // fixture with such a code), is not rewritten.
    let refused_on_purpose = [(FormatId::ProtocolV1, "pv1.error-code")];
    assert_refusals_within(&tally, &[&PENDING[..], &refused_on_purpose].concat());
    assert!(tally.written > 10_000, "{} outputs", tally.written);
}

#[test]
fn every_output_of_envelopes_built_in_code_is_readable() {
    let mut tally = Tally::default();
    for (name, env) in built_envelopes() {
        check_envelope(&name, &env, &mut tally);
    }
    // Refused on purpose (docs/formats.md): a progress event without a sequence number is
    // no protocol-v1 stream line (`meta.seq` is not invented); an error whose HTTP source
    // says 2xx, which protocol-v1 calls a contradiction once offload writes the status
    // into the summary.
    let refused_on_purpose = [
        (FormatId::ProtocolV1, "stream.seq"),
        (FormatId::ProtocolV1, "pv1.status-code"),
    ];
    assert_refusals_within(&tally, &[&PENDING[..], &refused_on_purpose].concat());
    assert!(tally.written > 5_000, "{} outputs", tally.written);
}

// ---------------------------------------------------------------------------------------
// Random payloads
// ---------------------------------------------------------------------------------------

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        (-1e6f64..1e6).prop_map(Value::from),
        "[a-z \"\\\\/\n\u{e9}\u{2028}]{0,12}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec(("[a-zA-Z_]{1,8}", inner), 0..6)
                .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

/// A payload, or a progress event, or an error envelope.
fn random_envelope() -> impl Strategy<Value = Envelope> {
    (
        json_value(),
        0..3u8,
        prop::option::of("[a-z]{1,6}/[a-z]{1,6}"),
    )
        .prop_map(|(payload, kind, tool)| match kind {
            0 => Envelope {
                payload: Payload::Json(payload),
                tool,
                ..Envelope::default()
            },
            1 => Envelope {
                status: Status::Error,
                payload: Payload::Json(payload),
                error: Some(EnvelopeError::from_code("ERUNTIME", "it broke")),
                tool,
                ..Envelope::default()
            },
            _ => Envelope {
                payload: Payload::Json(json!({"rows": payload, "items": [1, 2, 3]})),
                tool,
                ..Envelope::default()
            },
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Random payloads × every format × wrap / convert / shape (limits, store, redaction):
    /// whatever is written is detected as its format and valid (the inputs here are
    /// spec-valid, so the spec profile); nothing is refused.
    #[test]
    fn random_payloads_in_every_format_are_readable(env in random_envelope()) {
        let mut tally = Tally::default();
        for from in FormatId::ALL {
            let Ok(bytes) = wrap_like(from, &env) else { continue };
            check_document(&format!("{from}"), &bytes, &mut tally);
        }
        check_envelope("random", &env, &mut tally);
        assert_refusals_within(&tally, &PENDING);
    }
}

// ---------------------------------------------------------------------------------------
// Depth (item 6)
// ---------------------------------------------------------------------------------------

/// `[[…[1]…]]`, `levels` arrays deep.
fn nested(levels: usize) -> Value {
    (0..levels).fold(json!(1), |inner, _| Value::Array(vec![inner]))
}

/// How deep the arrays and objects of a JSON text nest (outside strings).
fn depth_of(text: &[u8]) -> usize {
    let (mut depth, mut max, mut in_string, mut escaped) = (0usize, 0, false, false);
    for &b in text {
        match b {
            _ if in_string && escaped => escaped = false,
            b'\\' if in_string => escaped = true,
            b'"' => in_string = !in_string,
            b'[' | b'{' if !in_string => {
                depth += 1;
                max = max.max(depth);
            }
            b']' | b'}' if !in_string => depth -= 1,
            _ => {}
        }
    }
    max
}

/// `result` is readable back (detected, valid, decoded to the same format) or the one
/// depth error, `json.depth`.
#[track_caller]
fn readable_or_too_deep(result: Result<Vec<u8>, Error>, format: FormatId, what: &str) -> bool {
    match result {
        Ok(bytes) => {
            assert_readable(&bytes, format, Profile::Spec, what);
            assert!(
                envelope::decode(format, &bytes, &DecodeOptions::default()).is_ok(),
                "{what}: not decoded back"
            );
            true
        }
        Err(e) => {
            assert_eq!(e.code(), "json.depth", "{what}: {e}");
            false
        }
    }
}

#[test]
fn documents_around_the_depth_limit_are_processed_or_refused_with_one_error() {
    // Inputs of every format whose text nests 120 to 130 levels, through convert, shape
    // and wrap into every format.
    let (mut written, mut refused) = (0, 0);
    for from in FormatId::ALL {
        for levels in 110..=130 {
            let env = Envelope {
                payload: Payload::Json(nested(levels)),
                tool: Some("deep/test".into()),
                ..Envelope::default()
            };
            // Built without the check: the input may be too deep to read.
            let Ok(input) = envelope::encode(from, &env, &options()).map(|e| e.bytes) else {
                continue;
            };
            let input_depth = depth_of(&input);
            if !(120..=130).contains(&input_depth) {
                continue;
            }
            for to in FormatId::ALL {
                let what = format!("{from} of depth {input_depth} → {to}");
                let converted = envelope::convert::convert(
                    &input,
                    Some(from),
                    to,
                    &DecodeOptions::default(),
                    &options(),
                );
                let shaped = |limit: Option<usize>| {
                    Pipeline::new(&input)
                        .input_format(from)
                        .output_format(to)
                        .limit(limit)
                        .encode_options(options())
                        .run()
                        .map(|s| s.bytes)
                };
                for (path, result) in [
                    ("convert", converted.map(|e| e.bytes)),
                    ("shape", shaped(None)),
                    ("shape --limit 4000", shaped(Some(4000))),
                ] {
                    let ok = readable_or_too_deep(result, to, &format!("{what} ({path})"));
                    if input_depth > 127 {
                        assert!(!ok, "{what} ({path}): an input over the limit was read");
                    }
                    if ok { written += 1 } else { refused += 1 }
                }
            }
        }
    }
    assert!(
        written > 100 && refused > 100,
        "{written} written, {refused} refused"
    );
}

#[test]
fn wrap_of_a_payload_around_the_depth_limit_is_readable_or_refused() {
    for levels in 120..=127 {
        let payload = envelope::json::from_slice(nested(levels).to_string().as_bytes()).unwrap();
        let env = Envelope {
            payload: Payload::Json(payload),
            ..Envelope::default()
        };
        for to in FormatId::ALL {
            let what = format!("wrap of depth {levels} → {to}");
            readable_or_too_deep(wrap_like(to, &env), to, &what);
        }
    }
    // The 128th level is refused when the payload is read.
    let too_deep = nested(128).to_string();
    let e = envelope::json::from_slice(too_deep.as_bytes()).unwrap_err();
    assert_eq!(e.code(), "json.depth");
    assert_eq!(e.location().unwrap().column, Some(128));
}
