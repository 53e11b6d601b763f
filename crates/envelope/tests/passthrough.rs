//! The offload of a payload passed through unchanged (what `envelope
//! shape` with a store runs): the same output, the same artifacts and the same report as
//! reading the document whole, serializing the payload and storing that, for every example,
//! fixture and random document; and the payload is never built.

mod common;
#[path = "common/heap.rs"]
mod heap;

use common::Gen;
use envelope::convert::Document;
use envelope::model::ArtifactRef;
use envelope::shape::{
    ArtifactSink, ArtifactWriter, OffloadOptions, Offloaded, Pipeline, SinkError,
};
use envelope::{DecodeOptions, FormatId};
use serde_json::{Value, json};

use common::shapes::{examples_and_fixtures, random_documents};
use common::{ByContent as Memory, encode_options};

/// What a run gave: the output, the offload, the loss report (its debug text).
type Outcome = Result<(Vec<u8>, Offloaded, String), String>;

/// The whole path: read the document whole, then the offload stage, then encode and check;
/// the loss report as the pipeline makes it (content blocks the offload left out first).
fn whole(
    input: &[u8],
    to: Option<FormatId>,
    options: &OffloadOptions,
    limit: Option<usize>,
) -> (Outcome, Memory) {
    let mut sink = Memory::default();
    let result = (|| {
        let (format, mut env) =
            envelope::formats::decode_any(input, None, &DecodeOptions::default())?;
        let format = to.unwrap_or(format);
        let had_presentation = env.presentation.is_some();
        let offloaded = envelope::shape::offload::offload(&mut env, format, options, &mut sink)?;
        let mut encoded = match limit {
            Some(limit) => envelope::shape::fit(&env, format, limit, &encode_options())?.encoded,
            None => envelope::encode(format, &env, &encode_options())?,
        };
        // The pipeline refuses what would not read back as valid.
        envelope::validate::check_output_of(&encoded.bytes, format, input)?;
        if had_presentation && env.presentation.is_none() {
            let field = "presentation".to_string();
            let reason = "the content blocks are not stored with the payload: left out when it was offloaded or refused by the capture limit".to_string();
            encoded
                .losses
                .items
                .insert(0, envelope::formats::Loss { field, reason });
        }
        let losses = format!("{:?}", encoded.losses);
        Ok::<_, envelope::Error>((encoded.bytes, offloaded, losses))
    })();
    (result.map_err(|e| e.to_string()), sink)
}

/// The pipeline, which takes the pass-through offload where it can.
fn piped(
    input: &[u8],
    to: Option<FormatId>,
    options: &OffloadOptions,
    limit: Option<usize>,
) -> (Outcome, Memory) {
    let mut sink = Memory::default();
    let mut pipeline = Pipeline::new(input)
        .output_format(to)
        .inline_threshold(options.inline_threshold)
        .max_capture(options.max_capture)
        .limit(limit)
        .encode_options(encode_options());
    pipeline = pipeline.store(&mut sink);
    let result = pipeline
        .run()
        .map(|s| (s.bytes, s.offloaded, format!("{:?}", s.losses)));
    (result.map_err(|e| e.to_string()), sink)
}

fn assert_same(name: &str, input: &[u8]) {
    let targets = [
        None,
        Some(FormatId::ProtocolV1),
        Some(FormatId::Operations),
        Some(FormatId::ToolResultEnvelope),
        Some(FormatId::Mcp),
    ];
    for to in targets {
        for (threshold, capture) in [(0, None), (64, None), (32 * 1024, None), (0, Some(200))] {
            for limit in [None, Some(4096)] {
                let options = OffloadOptions {
                    inline_threshold: threshold,
                    max_capture: capture,
                };
                let (expected, expected_store) = whole(input, to, &options, limit);
                let (got, got_store) = piped(input, to, &options, limit);
                let what = format!(
                    "{name} to {to:?}, threshold {threshold}, capture {capture:?}, limit {limit:?}"
                );
                assert_eq!(
                    got.as_ref()
                        .map(|(b, o, l)| (String::from_utf8_lossy(b), o, l)),
                    expected
                        .as_ref()
                        .map(|(b, o, l)| (String::from_utf8_lossy(b), o, l)),
                    "{what}"
                );
                assert!(
                    got_store.0 == expected_store.0,
                    "{what}: stored artifacts differ"
                );
            }
        }
    }
}

#[test]
fn examples_and_fixtures_offload_as_the_whole_read_does() {
    let _shared = heap::shared();
    for (name, doc) in examples_and_fixtures() {
        assert_same(&name, &doc);
    }
}

// The random documents' rounds in two halves (even and odd rounds), each a test of its own,
// so that they run on both cores: in one test they took 52 s on one.
#[test]
fn random_documents_offload_as_the_whole_read_does_even_rounds() {
    random_documents_offload_as_the_whole_read_does(0);
}

#[test]
fn random_documents_offload_as_the_whole_read_does_odd_rounds() {
    random_documents_offload_as_the_whole_read_does(1);
}

/// The rounds `round % 2 == half` of the random documents (every round's documents are
/// made, so each half checks the same documents as one test did).
fn random_documents_offload_as_the_whole_read_does(half: usize) {
    let _shared = heap::shared();
    let mut rng = Gen::new(0x05ee_d0ff_10ad);
    for round in 0..25 {
        let documents = random_documents(&mut rng);
        if round % 2 != half {
            continue;
        }
        for (i, doc) in documents.into_iter().enumerate() {
            assert_same(&format!("round {round}, document {i}"), &doc);
        }
    }
}

/// `shape --no-offload --limit`: a document whose payload member is read as the
/// pass-through reads it (a tool-envelope-v1 result's envelope block, an MCP result whose
/// indented mirror the detection would read whole) is cut as the whole document is.
#[test]
fn cuts_of_a_payload_read_as_a_member_are_the_whole_cuts() {
    let _shared = heap::shared();
    let mut rng = Gen::new(0x0c07_5a1e);
    let mut cut = 0;
    for _ in 0..8 {
        for doc in random_documents(&mut rng) {
            for to in [None, Some(FormatId::Operations), Some(FormatId::Ctxo)] {
                for limit in [400, 3000, 1 << 20] {
                    let whole = (|| {
                        let decode = DecodeOptions::default();
                        let (format, env) = envelope::formats::decode_any(&doc, None, &decode)?;
                        let format = to.unwrap_or(format);
                        let fitted = envelope::shape::fit(&env, format, limit, &encode_options())?;
                        let bytes = fitted.encoded.bytes;
                        envelope::validate::check_output_of(&bytes, format, &doc)?;
                        Ok::<_, envelope::Error>(bytes)
                    })();
                    let piped = Pipeline::new(&doc)
                        .output_format(to)
                        .limit(limit)
                        .encode_options(encode_options())
                        .run()
                        .map(|shaped| shaped.bytes);
                    assert_eq!(
                        piped
                            .as_ref()
                            .map(|b| String::from_utf8_lossy(b))
                            .map_err(ToString::to_string),
                        whole
                            .as_ref()
                            .map(|b| String::from_utf8_lossy(b))
                            .map_err(ToString::to_string),
                        "to {to:?}, limit {limit}: {}",
                        String::from_utf8_lossy(&doc)
                    );
                    cut += usize::from(piped.is_ok());
                }
            }
        }
    }
    assert!(cut > 100, "only {cut} documents cut");
}

/// An offloaded 16 MB payload, already in the dialect the store holds: the run holds a
/// fraction of it besides the input (the whole read held a tree several times its size).
#[test]
fn a_payload_passed_through_is_never_built() {
    let _serial = heap::serial();
    let rows: Vec<String> = (0..200_000)
        .map(|i| format!(r#"{{"id":{i},"name":"row {i}","path":"src/m_{}/f_{i}.rs","score":{}.25,"tags":["a","b"]}}"#, i % 97, i % 1000))
        .collect();
    let doc = format!(
        r#"{{"version":1,"status":"ok","command":"bench","data":{{"rows":[{}]}},"meta":{{"ts":"2026-01-01T00:00:00Z"}},"error":{{}}}}"#,
        rows.join(",")
    );
    drop(rows);
    let mut sink = Memory::default();
    let before = heap::start();
    let shaped = Pipeline::new(doc.as_bytes())
        .store(&mut sink)
        .encode_options(encode_options())
        .run()
        .unwrap();
    let peak = heap::peak_since(before);
    let Offloaded::Stored { size_bytes, .. } = shaped.offloaded else {
        panic!("not offloaded");
    };
    // The memory sink copies what it stores: that copy is the payload's size.
    assert!(
        peak < size_bytes + doc.len() / 4,
        "peak heap {peak} bytes for a {} byte document",
        doc.len()
    );
    let text = String::from_utf8(shaped.bytes).unwrap();
    assert!(text.contains(r#""first_keys":["rows"]"#), "{text}");
}

/// `envelope unwrap` from the input's bytes (a payload taken as written or rewritten, a
/// long text, an error's object): the payload the decoder gives (or its error object),
/// written compactly, byte for byte.
#[test]
fn payloads_taken_as_written_are_the_decoded_payloads() {
    let _shared = heap::shared();
    let mut rng = Gen::new(0x00dd_ba11);
    let mut docs: Vec<Vec<u8>> = examples_and_fixtures()
        .into_iter()
        .map(|(_, d)| d)
        .collect();
    for _ in 0..25 {
        docs.extend(random_documents(&mut rng));
    }
    let mut taken = 0;
    for doc in &docs {
        let document = Document::new(doc);
        let Ok(written) = document.unwrap() else {
            continue;
        };
        if written.read_whole() {
            continue;
        }
        let (_, env) = envelope::formats::decode_any(doc, None, &DecodeOptions::default())
            .expect("a document whose payload was taken decodes");
        let expected = match (&env.payload, &env.error) {
            (envelope::Payload::None, Some(error)) => {
                envelope::formats::operations::error_object(error)
            }
            (payload, _) => payload.to_json(),
        };
        let expected = envelope::json::to_vec(&expected, envelope::json::Dialect::Js);
        assert_eq!(
            String::from_utf8_lossy(&written.to_vec()),
            String::from_utf8_lossy(&expected),
            "{}",
            String::from_utf8_lossy(doc)
        );
        taken += 1;
    }
    assert!(taken > 20, "only {taken} payloads taken as written");
}

/// `envelope convert`'s shortcut: the output spliced around the payload's bytes is the
/// output of converting the whole document, byte for byte, with the same losses.
#[test]
fn conversions_around_a_payload_as_written_are_the_whole_conversions() {
    let _shared = heap::shared();
    let mut rng = Gen::new(0x00c0_4e47);
    let mut docs: Vec<Vec<u8>> = examples_and_fixtures()
        .into_iter()
        .map(|(_, d)| d)
        .collect();
    for _ in 0..25 {
        docs.extend(random_documents(&mut rng));
    }
    // ctxo's cases: `_meta` first, last, absent; a payload that reads as another format
    // once `_meta` is beside it; keys ctxo may cut; a payload `_meta` of its own.
    for doc in [
        r#"{"_meta":{"totalItems":0,"returnedItems":0,"truncated":false,"totalBytes":12},"rows":[1,2],"n":"x"}"#,
        r#"{"rows":[1,2],"n":"x","_meta":{"totalItems":0,"returnedItems":0,"truncated":false,"totalBytes":12}}"#,
        r#"{"rows":[1,2],"_meta":{"totalItems":0,"returnedItems":0,"truncated":false,"totalBytes":12},"n":"x"}"#,
        r#"{"data":{"rows":[1,2],"note":"a\u2028b"},"meta":{"source":"local"}}"#,
        r#"{"data":{"content":[{"type":"text","text":"hi"}]},"meta":{"source":"local"}}"#,
        r#"{"data":{"results":[1,2,3]},"meta":{"source":"local"}}"#,
        r#"{"data":{"_meta":{"a":1},"rows":[1]},"meta":{"source":"local"}}"#,
        r#"{"content":[{"type":"text","text":"{\"rows\":[1,2]}"}],"structuredContent":{"rows":[1,2]}}"#,
        r#"{"version":1,"status":"ok","command":"a/b","data":{"rows":[1,2]},"meta":{"ts":"2026-01-01T00:00:00Z"},"error":{}}"#,
    ] {
        docs.push(doc.as_bytes().to_vec());
    }
    let (mut spliced, mut to_ctxo, mut to_tev1, mut from_tev1) = (0, 0, 0, 0);
    for doc in &docs {
        for to in FormatId::ALL {
            let decode = DecodeOptions::default();
            let document = Document::new(doc);
            let Ok(out) = document.convert(to, &encode_options()) else {
                continue;
            };
            if out.read_whole() {
                continue;
            }
            let whole = envelope::convert::convert(doc, None, to, &decode, &encode_options())
                .expect("a document whose payload was taken converts");
            assert_eq!(
                String::from_utf8_lossy(&out.to_vec()),
                String::from_utf8_lossy(&whole.bytes),
                "to {to}: {}",
                String::from_utf8_lossy(doc)
            );
            assert_eq!(format!("{:?}", out.losses), format!("{:?}", whole.losses));
            spliced += 1;
            to_ctxo += usize::from(to == FormatId::Ctxo);
            to_tev1 += usize::from(to == FormatId::ToolEnvelopeV1);
            from_tev1 += usize::from(doc.windows(16).any(|w| w == b"__ENVELOPE_V1__:"));
        }
    }
    assert!(
        from_tev1 > 20,
        "only {from_tev1} conversions from tool-envelope-v1 spliced"
    );
    assert!(spliced > 20, "only {spliced} conversions spliced");
    assert!(to_ctxo > 5, "only {to_ctxo} conversions to ctxo spliced");
    assert!(
        to_tev1 > 5,
        "only {to_tev1} conversions to tool-envelope-v1 spliced"
    );
}

/// Documents over a mebibyte, read in one pass that also checks every root member's
/// spelling in the dialect the output likely has: still the bytes of the whole path,
/// whether the guess was right or not.
#[test]
fn large_documents_read_side_by_side_offload_as_the_whole_read_does() {
    let _shared = heap::shared();
    let mut rng = Gen::new(0x1a56_e000);
    let records: Vec<Value> = (0..30_000)
        .map(|i| json!({"id": i, "name": rng.string(), "score": (i % 97) as f64 / 4.0}))
        .collect();
    let payload = json!({"rows": records});
    for text in [
        envelope::json::to_vec(&payload, envelope::json::Dialect::Go),
        envelope::json::to_vec(&payload, envelope::json::Dialect::Js),
        serde_json::to_vec_pretty(&payload).unwrap(),
    ] {
        let text = String::from_utf8(text).unwrap();
        assert!(text.len() > 1 << 20);
        let docs = [
            format!(
                r#"{{"version":1,"status":"ok","command":"a/b","data":{text},"meta":{{"ts":"2026-01-01T00:00:00Z"}},"error":{{}}}}"#
            ),
            format!(r#"{{"data":{text},"meta":{{"source":"local"}}}}"#),
            format!(r#"{{"data" : {text} , "meta":{{"source":"local"}}, "data":{text}}}"#),
        ];
        for (i, doc) in docs.iter().enumerate() {
            for to in [None, Some(FormatId::Operations)] {
                let options = OffloadOptions::default();
                let (expected, expected_store) = whole(doc.as_bytes(), to, &options, None);
                let (got, got_store) = piped(doc.as_bytes(), to, &options, None);
                assert_eq!(got, expected, "document {i} to {to:?}");
                assert!(got_store.0 == expected_store.0, "document {i} to {to:?}");
            }
        }
    }
}

/// A sink that also stores artifacts a piece at a time (as the file store does): what
/// `Memory` stores, and how each artifact came.
#[derive(Default)]
struct Streaming {
    memory: Memory,
    /// Pieces each finished streamed artifact came in; abandoned streamed artifacts.
    finished: Vec<usize>,
    abandoned: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

struct Pieces<'a> {
    memory: &'a mut Memory,
    finished: &'a mut Vec<usize>,
    abandoned: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    bytes: Vec<u8>,
    pieces: usize,
    done: bool,
}

impl ArtifactSink for Streaming {
    fn put(&mut self, bytes: &[u8], kind: &str) -> Result<ArtifactRef, SinkError> {
        self.memory.put(bytes, kind)
    }

    fn begin(&mut self) -> Option<Box<dyn ArtifactWriter + '_>> {
        Some(Box::new(Pieces {
            memory: &mut self.memory,
            finished: &mut self.finished,
            abandoned: self.abandoned.clone(),
            bytes: Vec::new(),
            pieces: 0,
            done: false,
        }))
    }
}

impl ArtifactWriter for Pieces<'_> {
    fn write(&mut self, bytes: &[u8]) -> Result<(), SinkError> {
        self.bytes.extend_from_slice(bytes);
        self.pieces += 1;
        Ok(())
    }

    fn finish(mut self: Box<Self>, kind: &str) -> Result<ArtifactRef, SinkError> {
        self.done = true;
        self.finished.push(self.pieces);
        let bytes = std::mem::take(&mut self.bytes);
        self.memory.put(&bytes, kind)
    }
}

impl Drop for Pieces<'_> {
    fn drop(&mut self) {
        if !self.done {
            self.abandoned
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
    }
}

/// Documents large enough that the payload is stored while the document is read: the
/// output and the artifact are those of the whole path; the payload came in pieces when it
/// was the member followed, and what was followed otherwise was abandoned.
#[test]
fn large_payloads_stored_while_read_are_those_of_the_whole_read() {
    let _shared = heap::shared();
    let records: Vec<Value> = (0..300_000)
        .map(|i| json!({"id": i, "name": format!("row {i}"), "score": (i % 97) as f64 / 4.0, "tags": ["a", "b"]}))
        .collect();
    let payload = json!({"rows": records});
    let go = String::from_utf8(envelope::json::to_vec(
        &payload,
        envelope::json::Dialect::Go,
    ))
    .unwrap();
    assert!(go.len() > 17 << 20, "{}", go.len());
    let spaced = go.replacen(r#""rows":[{"#, r#""rows": [{"#, 1);
    let meta = r#""meta":{"ts":"2026-01-01T00:00:00Z"}"#;
    let js = String::from_utf8(envelope::json::to_vec(
        &payload,
        envelope::json::Dialect::Js,
    ))
    .unwrap();
    let mirror = serde_json::to_string(&js).unwrap();
    // (document, whether the payload is streamed)
    let docs = [
        (
            format!(
                r#"{{"version":1,"status":"ok","command":"a/b","data":{go},{meta},"error":{{}}}}"#
            ),
            true,
        ),
        // Not as the writer writes it: the whole path; the member followed is abandoned.
        (
            format!(r#"{{"data":{spaced},"meta":{{"source":"local"}}}}"#),
            false,
        ),
        // The payload is the last `data`: the first one, followed, is abandoned.
        (
            format!(r#"{{"data":{go},"meta":{{"source":"local"}},"data":[1,{go}]}}"#),
            false,
        ),
        // An MCP result: its `structuredContent`, after the text mirror (read as a prefix
        // and compared on the input's text).
        (
            format!(
                r#"{{"content":[{{"type":"text","text":{mirror}}}],"structuredContent":{js}}}"#
            ),
            true,
        ),
    ];
    for (i, (doc, streamed)) in docs.iter().enumerate() {
        let options = OffloadOptions::default();
        let (expected, expected_store) = whole(doc.as_bytes(), None, &options, None);
        let mut sink = Streaming::default();
        let shaped = Pipeline::new(doc.as_bytes())
            .encode_options(encode_options())
            .store(&mut sink)
            .run()
            .map_err(|e| e.to_string());
        let artifacts = shaped
            .as_ref()
            .map(|s| s.artifacts.clone())
            .unwrap_or_default();
        let got = shaped.map(|s| (s.bytes, s.offloaded, format!("{:?}", s.losses)));
        assert_eq!(got, expected, "document {i}");
        // The artifact is recorded once, however it was stored.
        let Ok((_, Offloaded::Stored { digest, size_bytes }, _)) = &got else {
            panic!("document {i} not offloaded: {got:?}");
        };
        assert_eq!(artifacts.len(), 1, "document {i}");
        assert_eq!(
            (&artifacts[0].digest, artifacts[0].size_bytes),
            (digest, *size_bytes)
        );
        assert!(
            sink.memory.0 == expected_store.0,
            "document {i}: artifacts differ"
        );
        let abandoned = sink.abandoned.load(std::sync::atomic::Ordering::Relaxed);
        match streamed {
            true => {
                assert_eq!(sink.finished.len(), 1, "document {i}");
                assert!(sink.finished[0] > 1, "document {i}: {:?}", sink.finished);
                assert_eq!(abandoned, 0, "document {i}");
            }
            false => {
                assert!(sink.finished.is_empty(), "document {i}");
                assert_eq!(abandoned, 1, "document {i}");
            }
        }
    }
}

/// An MCP result with `structuredContent` and its text mirror (the usual modern result),
/// 16 MB: offloaded, unwrapped and converted without building the payload or decoding the
/// mirror, to the bytes of the whole path. Operations writes the payload three times
/// (`data`, the mirror in `meta.content`, `meta.structuredContent`): each is spliced in.
#[test]
fn a_structured_result_passes_through_without_being_built() {
    let _serial = heap::serial();
    let rows: Vec<String> = (0..100_000)
        .map(|i| {
            format!(
                r#"{{"id":{i},"name":"row {i} é","path":"src/m_{}/f_{i}.rs","score":{}.25}}"#,
                i % 97,
                i % 1000
            )
        })
        .collect();
    let payload = format!(r#"{{"rows":[{}]}}"#, rows.join(","));
    drop(rows);
    let mirror = serde_json::to_string(&payload).unwrap();
    let doc = format!(
        r#"{{"content":[{{"type":"text","text":{mirror}}}],"structuredContent":{payload}}}"#
    );
    unwrapped_and_offloaded(doc.as_bytes(), payload.as_bytes());

    // convert: spliced, every place of the payload (ctxo: its members, and their size in
    // its `_meta`).
    converted_spliced(
        doc.as_bytes(),
        &[
            FormatId::Operations,
            FormatId::Mcp,
            FormatId::ProtocolV1,
            FormatId::Ctxo,
            FormatId::ToolEnvelopeV1,
        ],
    );
}

/// A stand-in the encoder wrote in a way the splice does not know (here: a metadata field
/// that holds the stand-in's mark) makes the conversion whole, never a wrong splice.
#[test]
fn a_trace_of_the_stand_in_outside_its_places_converts_whole() {
    let _shared = heap::shared();
    let doc = br#"{"data":{"rows":[1,2]},"meta":{"source":"local","operationId":"envelope:passthrough"}}"#;
    let converted = |doc: &[u8]| {
        let document = Document::new(doc);
        let written = document.convert(FormatId::Operations, &encode_options());
        let written = written.unwrap();
        (written.read_whole(), written.to_vec())
    };
    let (whole, bytes) = converted(doc);
    assert!(whole, "spliced");
    let expected = envelope::convert::convert(
        doc,
        None,
        FormatId::Operations,
        &DecodeOptions::default(),
        &encode_options(),
    );
    assert!(bytes == expected.unwrap().bytes);
    let plain = br#"{"data":{"rows":[1,2]},"meta":{"source":"local","operationId":"ok"}}"#;
    assert!(!converted(plain).0, "not spliced");
}

/// The Python SDK indents the text mirror of `structuredContent`: the decoder finds no
/// mirror and keeps the block. A 20 MB such result is offloaded, unwrapped and converted
/// without building the payload or decoding the block (which the offload leaves out, and
/// a conversion takes from the input), to the bytes and the report of the whole path.
#[test]
fn a_structured_result_with_an_indented_mirror_is_offloaded_without_being_built() {
    let _serial = heap::serial();
    let rows: Vec<Value> = (0..100_000)
        .map(|i| json!({"id": i, "name": format!("row {i}"), "path": format!("src/m_{}/f_{i}.rs", i % 97)}))
        .collect();
    let payload = json!({ "rows": rows });
    drop(rows);
    let compact = String::from_utf8(envelope::json::to_vec(
        &payload,
        envelope::json::Dialect::Js,
    ))
    .unwrap();
    let pretty = serde_json::to_string(&serde_json::to_string_pretty(&payload).unwrap()).unwrap();
    drop(payload);
    let doc = format!(
        r#"{{"content":[{{"type":"text","text":{pretty}}}],"structuredContent":{compact}}}"#
    );
    drop(pretty);
    let losses = unwrapped_and_offloaded(doc.as_bytes(), compact.as_bytes());
    assert!(losses.contains("presentation"), "{losses}");

    // convert: the payload spliced in, and the kept block's text taken from the input
    // (written with each writer's escapes; ctxo has no place for it).
    converted_spliced(
        doc.as_bytes(),
        &[
            FormatId::Operations,
            FormatId::Mcp,
            FormatId::ProtocolV1,
            FormatId::ToolResultEnvelope,
            FormatId::Ctxo,
        ],
    );
}

/// A 13 MB tool-envelope-v1 result: its envelope block is decoded to the inner document's
/// bytes (¾ of the block) and the inner `payload` passes through as the bytes it has
/// there, never built: unwrapped, offloaded, cut and converted to every format as the
/// whole path does.
#[test]
fn a_tool_envelope_v1_result_is_read_from_its_block_without_building_the_payload() {
    let _serial = heap::serial();
    let payload = format!(r#"{{"rows":{}}}"#, common::records_text(100_000));
    let inner = format!(
        r#"{{"payload":{payload},"meta":{{"tool":"rows.list","ts":"2026-01-01T00:00:00.000Z","version":1}}}}"#
    );
    let block = envelope::base64::encode(inner.as_bytes());
    let doc = format!(
        r#"{{"content":[{{"type":"text","text":"Rows."}},{{"type":"text","text":"__ENVELOPE_V1__:{block}"}}]}}"#
    );
    drop(block);
    let decoded = inner.len();

    let before = heap::start();
    let document = Document::new(doc.as_bytes());
    let raw = document.unwrap().unwrap();
    assert!(!raw.read_whole(), "taken as written");
    assert!(heap::peak_since(before) < decoded + doc.len() / 8);
    assert!(raw.to_vec() == payload.as_bytes());
    drop(raw);
    drop(document);

    // Offloaded (the payload stored as it is) and cut, as the whole path.
    let options = OffloadOptions::default();
    let before = heap::start();
    let (got, got_store) = piped(doc.as_bytes(), None, &options, None);
    assert!(heap::peak_since(before) < decoded + payload.len() + doc.len() / 8);
    let (expected, expected_store) = whole(doc.as_bytes(), None, &options, None);
    assert_eq!(got, expected);
    assert!(got_store.0 == expected_store.0);
    for limit in [500, 4096, 65_536] {
        let before = heap::start();
        let cut = Pipeline::new(doc.as_bytes())
            .limit(limit)
            .encode_options(encode_options())
            .run()
            .unwrap();
        // The cut's own items, as values (a tree costs many times its text), besides.
        let peak = heap::peak_since(before);
        assert!(
            peak < decoded + doc.len() / 8 + 32 * limit,
            "{limit}: {peak}"
        );
        let (_, env) =
            envelope::formats::decode_any(doc.as_bytes(), None, &DecodeOptions::default()).unwrap();
        let format = FormatId::ToolEnvelopeV1;
        let fitted = envelope::shape::fit(&env, format, limit, &encode_options()).unwrap();
        assert!(cut.bytes == fitted.encoded.bytes, "{limit}");
    }

    converted_spliced_within(doc.as_bytes(), &FormatId::ALL, decoded);
}

/// An MCP result of long text blocks (the payload), written as JS writes them: into Go's
/// and Newtonsoft's formats (which sort the keys of each block, and escape other
/// characters) block by block, each long text taken from the input as it is written.
#[test]
fn long_text_blocks_are_converted_block_by_block_to_other_writers() {
    let _serial = heap::serial();
    let log: String = (0..60_000)
        .map(|i| format!("commit {i:040x}\\nAuthor: Dev <dev@example.com> & co \u{2028} {i}\\n"))
        .collect();
    let doc = format!(
        r#"{{"content":[{{"type":"text","text":"{log}"}},{{"type":"text","text":"done"}},{{"type":"text","text":"{log}"}}]}}"#
    );
    converted_spliced(doc.as_bytes(), &FormatId::ALL);
}

/// `unwrap` of `doc` gives `payload`'s own bytes, and the offload stores it as it is (the
/// summary from the skimmed read), each with a heap far below the document's size: the
/// whole path's output, artifacts and losses. The losses, as text.
fn unwrapped_and_offloaded(doc: &[u8], payload: &[u8]) -> String {
    let before = heap::start();
    let document = Document::new(doc);
    let raw = document.unwrap().unwrap();
    assert!(!raw.read_whole(), "taken as written");
    assert!(heap::peak_since(before) < doc.len() / 8);
    let mut written = Vec::new();
    raw.write_to(&mut written).unwrap();
    assert_eq!(written, payload);

    let mut sink = Memory::default();
    let before = heap::start();
    let shaped = Pipeline::new(doc)
        .store(&mut sink)
        .encode_options(encode_options())
        .run()
        .unwrap();
    let peak = heap::peak_since(before);
    assert!(peak < payload.len() + doc.len() / 8, "peak heap {peak}");
    let (expected, expected_store) = whole(doc, None, &OffloadOptions::default(), None);
    let losses = format!("{:?}", shaped.losses);
    assert_eq!(
        Ok((shaped.bytes, shaped.offloaded, losses.clone())),
        expected
    );
    assert!(sink.0 == expected_store.0);
    losses
}

/// Converts `doc` to each of `targets` spliced, with a heap far below its size: the bytes
/// and the losses of the whole conversion.
fn converted_spliced(doc: &[u8], targets: &[FormatId]) {
    converted_spliced_within(doc, targets, 0);
}

/// [`converted_spliced`], the heap allowed `decoded` bytes more (a tool-envelope-v1
/// result's decoded envelope block).
fn converted_spliced_within(doc: &[u8], targets: &[FormatId], decoded: usize) {
    let decode = DecodeOptions::default();
    for &to in targets {
        let before = heap::start();
        let document = Document::new(doc);
        let spliced = document.convert(to, &encode_options()).unwrap();
        assert!(!spliced.read_whole(), "{to} spliced");
        assert!(heap::peak_since(before) < decoded + doc.len() / 8, "{to}");
        let whole = envelope::convert::convert(doc, None, to, &decode, &encode_options()).unwrap();
        assert!(spliced.to_vec() == whole.bytes, "{to}");
        assert_eq!(
            format!("{:?}", spliced.losses),
            format!("{:?}", whole.losses),
            "{to}"
        );
    }
}

/// An output the whole path refuses (here: the input's timestamp, carried into
/// tool-result-envelope's `createdUtc`, is not the format's) is never spliced: the
/// conversion goes whole, which says why (found by the `convert_spliced` fuzz target).
#[test]
fn an_output_the_whole_path_refuses_is_not_spliced() {
    let _shared = heap::shared();
    let doc = br#"{"version":1,"status":"ok","command":"a.b","data":{"rows":[1,2]},"meta":{"ts":"2025-11-12T10:total_items30:00Z"},"error":{}}"#;
    let decode = DecodeOptions::default();
    for to in FormatId::ALL {
        let whole = envelope::convert::convert(doc, None, to, &decode, &encode_options());
        let document = Document::new(doc);
        let converted = document.convert(to, &encode_options());
        match whole {
            Ok(whole) => assert!(converted.unwrap().to_vec() == whole.bytes, "{to}"),
            Err(e) => assert_eq!(
                converted.map(|c| c.to_vec()).unwrap_err().to_string(),
                e.to_string(),
                "{to}"
            ),
        }
    }
    let refused = envelope::convert::convert(
        doc,
        None,
        FormatId::ToolResultEnvelope,
        &decode,
        &encode_options(),
    );
    assert!(refused.is_err());
}

/// tool-envelope-v1 writes the payload in its envelope block, the base64 of an inner
/// document (and, with `--dual-emit`, that document raw as `structuredContent`): spliced
/// as the base64 of the inner document around the payload, for payloads whose length
/// leaves every remainder of three, the whole conversion's bytes either way.
#[test]
fn conversions_to_tool_envelope_v1_write_the_payload_in_base64_as_the_whole_path_does() {
    let _shared = heap::shared();
    let decode = DecodeOptions::default();
    for dual_emit in [false, true] {
        let options = envelope::EncodeOptions {
            dual_emit,
            ..encode_options()
        };
        for pad in 0..3 {
            let note = "x".repeat(pad);
            let doc = format!(
                r#"{{"data":{{"rows":[{{"id":1,"note":"{note}"}}],"long":"{}"}},"meta":{{"source":"local"}}}}"#,
                "é".repeat(2_000_000 + pad)
            );
            let document = Document::new(doc.as_bytes());
            let spliced = document
                .convert(FormatId::ToolEnvelopeV1, &options)
                .unwrap();
            assert!(!spliced.read_whole(), "spliced");
            let whole = envelope::convert::convert(
                doc.as_bytes(),
                None,
                FormatId::ToolEnvelopeV1,
                &decode,
                &options,
            )
            .unwrap();
            assert!(
                spliced.to_vec() == whole.bytes,
                "pad {pad}, dual emit {dual_emit}"
            );
            assert_eq!(
                format!("{:?}", spliced.losses),
                format!("{:?}", whole.losses)
            );
        }
    }
}

/// The decoder reads the envelope block from a text block only: a block 1 of another type
/// is refused by the whole path, and never read from its block here.
#[test]
fn an_envelope_block_in_a_block_of_another_type_is_not_read() {
    let _shared = heap::shared();
    let inner = r#"{"payload":{"a":1},"meta":{"tool":"t","version":1}}"#;
    let block = envelope::base64::encode(inner.as_bytes());
    let doc = format!(
        r#"{{"content":[{{"type":"text","text":"__ENVELOPE_V1__:{block}"}},{{"type":"image","text":"__ENVELOPE_V1__:{block}","data":"AAAA","mimeType":"image/png"}}]}}"#
    );
    let decode = DecodeOptions::default();
    let to = FormatId::Operations;
    assert!(
        envelope::convert::convert(doc.as_bytes(), None, to, &decode, &encode_options()).is_err()
    );
    let document = Document::new(doc.as_bytes());
    assert!(document.convert(to, &encode_options()).is_err());
}
