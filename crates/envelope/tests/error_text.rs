//! An MCP error result whose message is one long text block (spliced by the pipeline): its
//! output, spliced around the input's text, is the whole path's (decode the document,
//! redact, offload, fit or encode, check), byte for byte, with the same report and the
//! same errors, for texts of every kind of escape, with and without secrets, every output
//! format, limit and store option; `unwrap`'s error object and `convert`'s outputs too. And
//! the text is never decoded whole.

mod common;
#[path = "common/heap.rs"]
mod heap;

use envelope::convert::Document;
use envelope::shape::{OffloadOptions, Offloaded, Pipeline};
use envelope::{DecodeOptions, FormatId};
use serde_json::json;

use common::{Memory, encode_options};

/// Output, offload and redactions (rule, place), or the error's text.
type Outcome = Result<(String, Offloaded, Vec<(String, String)>), String>;

#[derive(Debug)]
struct Case {
    to: Option<FormatId>,
    store: bool,
    max_capture: Option<usize>,
    limit: Option<usize>,
    redact: bool,
}

fn whole(input: &[u8], case: &Case) -> Outcome {
    let mut sink = Memory::default();
    let result = (|| {
        let (format, mut env) =
            envelope::formats::decode_any(input, None, &DecodeOptions::default())?;
        let format = case.to.unwrap_or(format);
        let redactions = match case.redact {
            true => envelope::shape::redact::redact_envelope(&mut env),
            false => Vec::new(),
        };
        let options = OffloadOptions {
            max_capture: case.max_capture,
            ..OffloadOptions::default()
        };
        let offloaded = match case.store {
            true => envelope::shape::offload::offload(&mut env, format, &options, &mut sink)?,
            false => envelope::shape::offload::capture(&mut env, format, case.max_capture),
        };
        let bytes = match case.limit {
            Some(limit) => envelope::shape::fit(&env, format, limit, &encode_options())?.encoded,
            None => envelope::encode(format, &env, &encode_options())?,
        };
        envelope::validate::check_output_of(&bytes.bytes, format, input)?;
        let redactions = redactions.into_iter().map(|r| (r.rule, r.at)).collect();
        Ok::<_, envelope::Error>((
            String::from_utf8_lossy(&bytes.bytes).into_owned(),
            offloaded,
            redactions,
        ))
    })();
    result.map_err(|e| e.to_string())
}

fn pipeline<'a>(input: &'a [u8], case: &Case, sink: &'a mut Memory) -> Pipeline<'a> {
    let mut pipeline = Pipeline::new(input)
        .output_format(case.to)
        .max_capture(case.max_capture)
        .limit(case.limit)
        .redact(case.redact)
        .encode_options(encode_options());
    if case.store {
        pipeline = pipeline.store(sink);
    }
    pipeline
}

/// `run` and `run_spliced`, which must agree.
fn piped(input: &[u8], case: &Case) -> Outcome {
    let outcome = |s: envelope::shape::Shaped, bytes: Vec<u8>| {
        let redactions = s.redactions.into_iter().map(|r| (r.rule, r.at)).collect();
        (
            String::from_utf8_lossy(&bytes).into_owned(),
            s.offloaded,
            redactions,
        )
    };
    let mut sink = Memory::default();
    let run = pipeline(input, case, &mut sink)
        .run()
        .map(|mut s| {
            let bytes = std::mem::take(&mut s.bytes);
            outcome(s, bytes)
        })
        .map_err(|e| e.to_string());
    let mut sink = Memory::default();
    let spliced = pipeline(input, case, &mut sink)
        .run_spliced()
        .map(|(output, s)| {
            assert!(s.bytes.is_empty());
            outcome(s, output.to_vec())
        })
        .map_err(|e| e.to_string());
    assert_eq!(run, spliced, "run and run_spliced: {case:?}");
    run
}

fn cases() -> Vec<Case> {
    let mut all = Vec::new();
    for to in [
        None,
        Some(FormatId::Operations),
        Some(FormatId::Ctxo),
        Some(FormatId::ProtocolV1),
        Some(FormatId::ToolResultEnvelope),
        Some(FormatId::ToolEnvelopeV1),
    ] {
        for (store, max_capture) in [(false, None), (true, None), (true, Some(10))] {
            for limit in [None, Some(4096), Some(1 << 20)] {
                for redact in [false, true] {
                    all.push(Case {
                        to,
                        store,
                        max_capture,
                        limit,
                        redact,
                    });
                }
            }
        }
    }
    all
}

fn assert_same(name: &str, input: &[u8]) {
    for case in cases() {
        assert_eq!(piped(input, &case), whole(input, &case), "{name}: {case:?}");
    }
    // unwrap's error object, and every conversion.
    let decode = DecodeOptions::default();
    let decoded = envelope::formats::decode_any(input, None, &decode).ok();
    let error = decoded.and_then(|(_, env)| env.error.filter(|_| env.payload.is_none()));
    if let Some(error) = &error {
        let document = Document::new(input);
        let object = document.unwrap().unwrap();
        let expected = envelope::json::to_vec(
            &envelope::formats::operations::error_object(error),
            envelope::json::Dialect::Js,
        );
        assert!(object.to_vec() == expected, "{name}: unwrap");
    }
    for to in FormatId::ALL {
        let document = Document::new(input);
        let converted = document
            .convert(to, &encode_options())
            .map(|s| (s.to_vec(), format!("{:?}", s.losses)))
            .map_err(|e| e.to_string());
        let whole = envelope::convert::convert(input, None, to, &decode, &encode_options())
            .map(|e| (e.bytes, format!("{:?}", e.losses)))
            .map_err(|e| e.to_string());
        assert!(converted == whole, "{name}: convert to {to}");
    }
}

/// Whether `convert` to `to` wrote `input` from its parts (spliced), not read whole.
fn spliced(input: &[u8], to: FormatId) -> bool {
    let document = Document::new(input);
    !document
        .convert(to, &encode_options())
        .unwrap()
        .read_whole()
}

/// A log of `lines` lines, each with `extra` in it.
fn log(lines: usize, extra: &str) -> String {
    (0..lines)
        .map(|i| format!("commit {i:040x}\nAuthor: Dev <dev@example.com>\n\n    {extra} {i}\n"))
        .collect()
}

fn error_result(text: &str) -> String {
    json!({"content": [{"type": "text", "text": text}], "isError": true}).to_string()
}

/// A protocol-v1 error whose message is `text`.
fn protocol_error(text: &str) -> String {
    json!({
        "version": 1, "status": "error", "command": "fs/ls", "data": null,
        "meta": {"ts": "2025-11-12T10:32:10Z", "duration_ms": 21},
        "error": {"code": "EIO", "message": text}
    })
    .to_string()
}

/// A ctxo error whose message is `text`.
fn ctxo_error(text: &str) -> String {
    json!({"error": true, "message": text}).to_string()
}

#[test]
fn error_results_of_a_long_text_are_shaped_as_the_whole_read_does() {
    let _shared = heap::shared();
    let lines = 3_000;
    let secrets = format!(
        "{}    token: abc123XYZdef\n{}Authorization: Bearer x9Y8z7W6v5U4t\n-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----\n",
        log(lines, "failed"),
        log(10, "then")
    );
    let plain = log(lines, "failed");
    let docs = [
        ("plain", error_result(&plain)),
        ("escapes", error_result(&log(lines, "tab\t \"quoted\" back\\slash é 😀 \u{1} \u{2028} \u{85} \u{2029}"))),
        ("secrets", error_result(&secrets)),
        // Escapes JS does not write (the text is decoded and escaped again).
        ("other escapes", error_result(&plain).replacen("commit", "\\u0063ommit", 1).replace("Dev <", "Dev \\/<")),
        // `_meta` with a secret, and the keys in another order.
        (
            "meta",
            json!({"isError": true, "_meta": {"api_token": "ghp_0123456789abcdefghijABCDEFGHIJ012345"}, "content": [{"type": "text", "text": plain}]}).to_string(),
        ),
        // Texts the stand-in could not stand for (whole path), and other shapes.
        ("a document", error_result(&format!("{{\"log\":{}}}", serde_json::to_string(&plain).unwrap()))),
        ("an envelope block", error_result(&format!("__ENVELOPE_V1__:{plain}"))),
        (
            "two blocks",
            json!({"content": [{"type": "text", "text": plain}, {"type": "text", "text": "x"}], "isError": true}).to_string(),
        ),
        ("not an error", json!({"content": [{"type": "text", "text": plain}], "isError": false}).to_string()),
        // Results whose payload is the text: `convert` splices it too.
        ("a text payload", json!({"content": [{"type": "text", "text": plain}]}).to_string()),
        ("a text payload with escapes", text_result(&log(lines, "tab\t \"quoted\" back\\slash é 😀 \u{1} \u{2028} \u{85} \u{2029}"))),
        ("a text payload with secrets", text_result(&secrets)),
        ("a text payload with other escapes", text_result(&plain).replacen("commit", "\\u0063ommit", 1).replace("Dev <", "Dev \\/<")),
        (
            "a text payload and meta",
            json!({"_meta": {"api_token": "ghp_0123456789abcdefghijABCDEFGHIJ012345"}, "content": [{"type": "text", "text": plain}]}).to_string(),
        ),
        ("a text payload that is a document", text_result(&format!("{{\"log\":{}}}", serde_json::to_string(&plain).unwrap()))),
        // Other formats' errors whose message is the long text.
        ("protocol-v1", protocol_error(&plain)),
        ("protocol-v1 with escapes and secrets", protocol_error(&format!("{secrets}tab\t \"quoted\" é 😀 \u{1} \u{2028} <&>"))),
        ("protocol-v1 with details", protocol_error(&plain).replace(r#""code":"EIO""#, r#""code":"EIO","details":{"path":"/x"}"#)),
        ("ctxo", ctxo_error(&plain)),
        ("ctxo with secrets", ctxo_error(&secrets)),
    ];
    for (name, doc) in &docs {
        assert_same(name, doc.as_bytes());
    }
    // The plain log's conversions and unwrap are spliced, not left to the whole path.
    let plain = docs[0].1.as_bytes();
    for to in FormatId::ALL {
        assert!(spliced(plain, to), "{to}");
    }
    // So are other formats' errors.
    for (name, doc) in docs
        .iter()
        .filter(|(n, _)| n.starts_with("protocol-v1") || n.starts_with("ctxo"))
    {
        for to in FormatId::ALL {
            assert!(spliced(doc.as_bytes(), to), "{name} to {to}");
        }
    }
    let document = Document::new(plain);
    assert!(!document.unwrap().unwrap().read_whole());
    // So are those of a result whose payload is the text (to ctxo with the size of the
    // `result` wrapper ctxo writes around it; to tool-envelope-v1 in base64).
    for (at, spliced_to) in [
        (8, true),
        (9, true),
        (10, true),
        (11, true),
        (12, true),
        (13, true),
        (14, false),
    ] {
        let (name, doc) = &docs[at];
        for to in FormatId::ALL {
            assert_eq!(spliced(doc.as_bytes(), to), spliced_to, "{name} to {to}");
        }
    }
}

fn text_result(text: &str) -> String {
    json!({"content": [{"type": "text", "text": text}]}).to_string()
}

/// Limits around the smallest output that holds the message whole: under it the message
/// is cut (the budget's last resort), only its start read; at and over it, the message
/// read whole and fitted; under the envelope around an empty message, the budget error.
/// Each as the whole path gives it, with and without redaction, for a text with secrets
/// on every line (a cut may fall inside one).
#[test]
fn limits_around_the_smallest_output_are_met_as_the_whole_read_meets_them() {
    let _shared = heap::shared();
    let builders: [fn(&str) -> String; 3] = [error_result, protocol_error, ctxo_error];
    // In the input's format, and in tool-envelope-v1, which writes the message twice (the
    // read decides on sizes that count it once).
    let targets = [None, Some(FormatId::ToolEnvelopeV1)];
    for (line, build, to) in ["x", "failed with token: abc123XYZdef"]
        .into_iter()
        .flat_map(|line| builders.map(|build| (line, build)))
        .flat_map(|(line, build)| targets.map(|to| (line, build, to)))
    {
        let at = |limit, redact| Case {
            to,
            store: false,
            max_capture: None,
            limit: Some(limit),
            redact,
        };
        let doc = build(&log(3_000, line));
        let cut = |limit| match whole(doc.as_bytes(), &at(limit, false)) {
            Ok((out, _, _)) => out.contains("the error message kept its first"),
            Err(e) => panic!("{e}"),
        };
        // The smallest limit whose output holds the message whole (tool-envelope-v1's
        // output of it is over twice the input).
        let roomy = 3 * doc.len();
        let (mut lo, mut hi) = (4096, roomy);
        assert!(cut(lo) && !cut(hi));
        while lo + 1 < hi {
            let mid = (lo + hi) / 2;
            match cut(mid) {
                true => lo = mid,
                false => hi = mid,
            }
        }
        let smallest = hi;
        for limit in [100, 4096, smallest - 1, smallest, smallest + 1, roomy] {
            for redact in [false, true] {
                let case = at(limit, redact);
                assert_eq!(
                    piped(doc.as_bytes(), &case),
                    whole(doc.as_bytes(), &case),
                    "{case:?}"
                );
            }
        }
        assert!(piped(doc.as_bytes(), &at(100, false)).is_err());
        let (out, _, _) = piped(doc.as_bytes(), &at(4096, false)).unwrap();
        assert!(
            out.len() <= 4096 && out.contains("the error message kept its first"),
            "{out}"
        );
    }
}

/// A 30 MB error of protocol-v1 or ctxo cut to a limit, with and without redaction, in its
/// own format, MCP's and tool-envelope-v1's: the heap holds a fraction of the message, and
/// the output is the whole path's.
#[test]
fn another_format_s_long_error_is_cut_from_its_start() {
    let _serial = heap::serial();
    let text = log(250_000, "failed with token: abc123XYZdef");
    for (name, doc) in [
        ("protocol-v1", protocol_error(&text)),
        ("ctxo", ctxo_error(&text)),
    ] {
        let targets = [
            (false, None),
            (true, None),
            (false, Some(FormatId::Mcp)),
            // Which writes the message twice (in base64 too): nothing is spliced.
            (true, Some(FormatId::ToolEnvelopeV1)),
        ];
        for (redact, to) in targets {
            let case = Case {
                to,
                store: false,
                max_capture: None,
                limit: Some(65_536),
                redact,
            };
            let mut sink = Memory::default();
            let before = heap::start();
            let shaped = pipeline(doc.as_bytes(), &case, &mut sink).run().unwrap();
            let peak = heap::peak_since(before);
            assert!(peak < doc.len() / 4, "{name} {case:?}: heap {peak}");
            assert!(shaped.bytes.len() <= 65_536);
            let out = String::from_utf8(shaped.bytes.clone()).unwrap();
            // The hint is in what the output reads back as (tool-envelope-v1's marker is in
            // its block's inner document, in base64).
            let (_, read_back) =
                envelope::formats::decode_any(&shaped.bytes, None, &DecodeOptions::default())
                    .unwrap();
            let hinted = format!("{read_back:?}").contains("the error message kept its first");
            assert!(hinted, "{name} {case:?}");
            assert_eq!(!out.contains("abc123XYZdef"), redact, "{name} {case:?}");
            let redactions = shaped
                .redactions
                .iter()
                .map(|r| (r.rule.clone(), r.at.clone()));
            assert_eq!(
                Ok((out, shaped.offloaded, redactions.collect())),
                whole(doc.as_bytes(), &case),
                "{name} {case:?}"
            );
        }
    }
}

/// A 30 MB error result, its text redacted as it is written: the heap holds a fraction of
/// the text, never the text (the whole path held it decoded, masked and encoded).
#[test]
fn the_text_is_never_held_whole() {
    let _serial = heap::serial();
    let text = log(250_000, "failed with token: abc123XYZdef");
    let doc = error_result(&text);
    let mut sink = Memory::default();
    let case = Case {
        to: None,
        store: true,
        max_capture: None,
        limit: None,
        redact: true,
    };
    let before = heap::start();
    let (output, shaped) = pipeline(doc.as_bytes(), &case, &mut sink)
        .run_spliced()
        .unwrap();
    let ready = heap::peak_since(before);
    let mut written = Vec::with_capacity(doc.len());
    output.write_to(&mut written).unwrap();
    let peak = heap::peak_since(before);
    assert!(
        ready < doc.len() / 4,
        "heap {ready} before writing a {} byte result",
        doc.len()
    );
    // Writing: the output's own buffer and a piece at a time.
    assert!(peak < written.capacity() + doc.len() / 3, "heap {peak}");
    let out = String::from_utf8(written).unwrap();
    assert!(!out.contains("abc123XYZdef"));
    let redactions = shaped
        .redactions
        .into_iter()
        .map(|r| (r.rule, r.at))
        .collect::<Vec<_>>();
    assert_eq!(redactions.len(), 1);
    assert_eq!(
        Ok((out, shaped.offloaded, redactions)),
        whole(doc.as_bytes(), &case)
    );
}

/// In tokens, as in bytes: the message's start read and cut, what the whole read gives
/// (decode, fit within the token budget, check), or the same error; a 30 MB error in a
/// fraction of its size.
#[test]
fn a_token_limit_cuts_as_the_whole_read_cuts() {
    use envelope::shape::{Budget, fit_within};
    use envelope::tokens::Tokenizer;
    let _serial = heap::serial();
    let tokenizer = Tokenizer::O200kBase;
    let builders: [fn(&str) -> String; 3] = [error_result, protocol_error, ctxo_error];
    for build in builders {
        let doc = build(&log(3_000, "failed"));
        for tokens in [50, 1_000, 5_000] {
            let piped = Pipeline::new(doc.as_bytes())
                .limit_tokens(tokens, &tokenizer)
                .encode_options(encode_options())
                .run()
                .map(|s| s.bytes)
                .map_err(|e| e.to_string());
            let whole = (|| {
                let (format, env) =
                    envelope::formats::decode_any(doc.as_bytes(), None, &DecodeOptions::default())?;
                let budget = Budget::of_tokens(tokens, &tokenizer);
                let bytes = fit_within(&env, format, budget, &encode_options())?
                    .encoded
                    .bytes;
                envelope::validate::check_output_of(&bytes, format, doc.as_bytes())?;
                Ok::<_, envelope::Error>(bytes)
            })()
            .map_err(|e| e.to_string());
            assert_eq!(piped, whole, "{tokens} tokens: {}", &doc[..40]);
        }
    }
    let doc = protocol_error(&log(250_000, "failed"));
    let before = heap::start();
    let shaped = Pipeline::new(doc.as_bytes())
        .limit_tokens(4_000, &tokenizer)
        .run()
        .unwrap();
    let peak = heap::peak_since(before);
    assert!(peak < doc.len() / 4, "heap {peak}");
    assert!(tokenizer.count(std::str::from_utf8(&shaped.bytes).unwrap()) <= 4_000);
}
