//! `shape::Pipeline` gives the bytes of the stages called by hand (decode → redact →
//! offload → fit), on documents of every format, output formats and limits, through the
//! skimmed read and the whole one, and with a file store it lists and stores the artifacts.

use std::path::PathBuf;

use envelope::formats::decode_any;
use envelope::shape::offload::{OffloadOptions, artifact_bytes, offload};
use envelope::shape::redact::redact_envelope;
use envelope::shape::{ArtifactSink, Offloaded, Pipeline, Shaped, SinkError, fit};
use envelope::{DecodeOptions, EncodeOptions, Envelope, FormatId, encode};
use envelope_store::{Digest, FileStore, Store, StoreSink};
use serde_json::{Value, json};

mod common;

use common::spelling::{Spelling, spell};

const SECRET: &str = "ghp_0123456789abcdefghijABCDEFGHIJ012345";

fn options() -> EncodeOptions {
    EncodeOptions {
        now: Some("2026-07-04T00:00:00Z".into()),
        ..EncodeOptions::default()
    }
}

/// A fresh folder for a store (not created: the store creates it on its first put).
fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("envelope-pipeline-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// A tool result of `n` records, each with a secret; long arrays are what skimming is for.
fn records(n: usize) -> Value {
    let rows: Vec<Value> = (0..n)
        .map(|i| {
            json!({
                "id": i,
                "path": format!("src/module_{}/file_{i}.rs", i % 40),
                "score": i as f64 / 7.0,
                "token": SECRET,
                "lines": (0..i % 7).collect::<Vec<_>>(),
            })
        })
        .collect();
    json!({"symbolId": "src/index.ts::main", "results": rows, "note": "é «quoted» \"text\"\n"})
}

/// The input documents: a large and a small result in every format, and the bundled
/// examples.
fn documents() -> Vec<(String, Vec<u8>)> {
    let mut docs = Vec::new();
    for n in [400, 3] {
        let env = Envelope {
            tool: Some("search".into()),
            command: Some("code/search".into()),
            ..Envelope::ok(records(n))
        };
        for format in FormatId::ALL {
            let bytes = encode(format, &env, &options()).unwrap().bytes;
            docs.push((format!("{format} ({n} records)"), bytes));
        }
    }
    let examples = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    for format in FormatId::ALL {
        let name = format!("{format}.json");
        let bytes = std::fs::read(examples.join(&name)).unwrap();
        docs.push((name, bytes));
    }
    docs
}

const LIMITS: [Option<usize>; 4] = [None, Some(900), Some(4096), Some(30_000)];

/// What `envelope shape --no-offload` did by hand before the pipeline: the whole read,
/// then the budget (or a plain encode).
fn by_hand_whole(
    bytes: &[u8],
    to: Option<FormatId>,
    limit: Option<usize>,
) -> envelope::Result<(FormatId, Vec<u8>)> {
    let (format, env) = decode_any(bytes, None, &DecodeOptions::default())?;
    let target = to.unwrap_or(format);
    let encoded = match limit {
        Some(limit) => fit(&env, target, limit, &options())?.encoded,
        None => encode(target, &env, &options())?,
    };
    Ok((target, encoded.bytes))
}

fn shape(bytes: &[u8], to: Option<FormatId>, limit: Option<usize>) -> envelope::Result<Shaped> {
    Pipeline::new(bytes)
        .output_format(to)
        .limit(limit)
        .encode_options(options())
        .run()
}

#[test]
fn without_a_store_the_pipeline_gives_the_bytes_of_the_stages() {
    let mut skimmed = std::collections::BTreeSet::new();
    let mut cases = 0;
    for (name, bytes) in documents() {
        for to in [
            None,
            Some(FormatId::Mcp),
            Some(FormatId::ProtocolV1),
            Some(FormatId::Ctxo),
        ] {
            for limit in LIMITS {
                let case = format!("{name} -> {to:?}, limit {limit:?}");
                let expected = by_hand_whole(&bytes, to, limit);
                let got = shape(&bytes, to, limit);
                match (expected, got) {
                    (Ok((format, expected)), Ok(got)) => {
                        assert_eq!(
                            String::from_utf8_lossy(&got.bytes),
                            String::from_utf8_lossy(&expected),
                            "{case}"
                        );
                        assert_eq!(got.format, format, "{case}");
                        assert_eq!(got.offloaded, Offloaded::Inline, "{case}");
                        assert!(got.artifacts.is_empty() && got.redactions.is_empty());
                        if let Some(limit) = limit {
                            assert!(got.bytes.len() <= limit, "{case}");
                            if got.skimmed {
                                skimmed.insert(name.clone());
                            }
                        } else {
                            assert!(!got.skimmed, "{case}");
                        }
                        cases += 1;
                    }
                    (Err(expected), Err(got)) => {
                        assert_eq!(got.to_string(), expected.to_string(), "{case}");
                        assert_eq!(got.code(), "budget.too-small", "{case}");
                    }
                    (expected, got) => panic!("{case}: by hand {expected:?}, pipeline {got:?}"),
                }
            }
        }
    }
    assert!(cases > 100, "{cases}");
    // The large documents of the formats that move their payload out untouched are skimmed,
    // MCP results whose text mirror is the text of their `structuredContent`, and
    // tool-envelope-v1 results (their envelope block's `payload`).
    let expected: std::collections::BTreeSet<String> = FormatId::ALL
        .into_iter()
        .map(|f| format!("{f} (400 records)"))
        .collect();
    assert_eq!(skimmed, expected, "documents read for a limit");
}

#[test]
fn the_input_format_and_decode_options_are_used() {
    let env = Envelope::ok(records(50));
    let bytes = encode(FormatId::Operations, &env, &options())
        .unwrap()
        .bytes;
    let shaped = Pipeline::new(&bytes)
        .input_format(FormatId::Operations)
        .decode_options(DecodeOptions { lenient: true })
        .encode_options(options())
        .run()
        .unwrap();
    assert_eq!(shaped.format, FormatId::Operations);
    assert_eq!(shaped.bytes, bytes, "re-encoded byte for byte");
    // Read as a format it is not: the decoder's error.
    let err = Pipeline::new(&bytes)
        .input_format(FormatId::ProtocolV1)
        .run()
        .unwrap_err();
    let expected = decode_any(
        &bytes,
        Some(FormatId::ProtocolV1),
        &DecodeOptions::default(),
    )
    .unwrap_err();
    assert_eq!(err.to_string(), expected.to_string());
}

/// Redaction and offload into a file store, by hand: the CLI's path before the pipeline.
fn by_hand_with_store(
    bytes: &[u8],
    to: Option<FormatId>,
    limit: Option<usize>,
    offload_options: &OffloadOptions,
    store: &FileStore,
) -> (Vec<u8>, usize, Offloaded, Option<Vec<u8>>) {
    by_hand_storing(bytes, to, limit, true, offload_options, store)
}

/// [`by_hand_with_store`], redacting or not.
fn by_hand_storing(
    bytes: &[u8],
    to: Option<FormatId>,
    limit: Option<usize>,
    redact: bool,
    offload_options: &OffloadOptions,
    store: &FileStore,
) -> (Vec<u8>, usize, Offloaded, Option<Vec<u8>>) {
    let (format, mut env) = decode_any(bytes, None, &DecodeOptions::default()).unwrap();
    let target = to.unwrap_or(format);
    let redacted = match redact {
        true => redact_envelope(&mut env),
        false => Vec::new(),
    };
    let payload = artifact_bytes(&env.payload, target).map(|(b, _)| b.into_owned());
    let offloaded = offload(
        &mut env,
        target,
        offload_options,
        &mut StoreSink::new(store),
    )
    .unwrap();
    let encoded = match limit {
        Some(limit) => fit(&env, target, limit, &options()).unwrap().encoded,
        None => encode(target, &env, &options()).unwrap(),
    };
    (encoded.bytes, redacted.len(), offloaded, payload)
}

#[test]
fn with_redaction_and_a_file_store_the_pipeline_gives_the_bytes_of_the_stages() {
    let root = temp_dir("store");
    let by_hand_root = temp_dir("store-by-hand");
    let store = FileStore::new(&root);
    let by_hand_store = FileStore::new(&by_hand_root);
    let offload_options = OffloadOptions::default();
    let mut stored = 0;
    for (name, bytes) in documents() {
        for to in [
            None,
            Some(FormatId::Mcp),
            Some(FormatId::ToolResultEnvelope),
        ] {
            for limit in [None, Some(4096)] {
                let case = format!("{name} -> {to:?}, limit {limit:?}");
                let (expected, redacted, offloaded, payload) =
                    by_hand_with_store(&bytes, to, limit, &offload_options, &by_hand_store);
                let mut sink = StoreSink::new(&store);
                let shaped = Pipeline::new(&bytes)
                    .output_format(to)
                    .limit(limit)
                    .redact(true)
                    .store(&mut sink)
                    .encode_options(options())
                    .run()
                    .unwrap();
                assert_eq!(
                    String::from_utf8_lossy(&shaped.bytes),
                    String::from_utf8_lossy(&expected),
                    "{case}"
                );
                assert!(!shaped.skimmed, "{case}: a store needs the whole payload");
                assert_eq!(shaped.redactions.len(), redacted, "{case}");
                assert_eq!(shaped.offloaded, offloaded, "{case}");
                assert!(
                    !String::from_utf8_lossy(&shaped.bytes).contains(SECRET),
                    "{case}: a secret reached the output"
                );
                match &shaped.offloaded {
                    Offloaded::Stored { digest, size_bytes } => {
                        stored += 1;
                        let payload = payload.unwrap();
                        let [artifact] = shaped.artifacts.as_slice() else {
                            panic!("{case}: {:?}", shaped.artifacts);
                        };
                        assert_eq!(
                            (
                                &artifact.digest,
                                artifact.size_bytes,
                                artifact.kind.as_str()
                            ),
                            (digest, *size_bytes, "application/json"),
                            "{case}"
                        );
                        assert_eq!(*digest, Digest::of(&payload).to_string(), "{case}");
                        // Read back from the store, verified against the digest: exactly the
                        // redacted payload in the output format's dialect.
                        let digest: Digest = digest.parse().unwrap();
                        let back = store.get(&digest).unwrap();
                        assert_eq!(back, payload, "{case}");
                        assert!(!String::from_utf8_lossy(&back).contains(SECRET), "{case}");
                        let sidecar = store.verify(&digest).unwrap();
                        assert_eq!(sidecar.size_bytes as usize, back.len());
                        assert_eq!(sidecar.kind, "application/json");
                    }
                    _ => assert!(shaped.artifacts.is_empty(), "{case}"),
                }
            }
        }
    }
    // The large documents of every format but ctxo (whose writer already cut the input to
    // its compat limit, under the inline threshold) are offloaded, in every run.
    assert_eq!(stored, 5 * 3 * 2, "runs offloaded");
    // Both stores hold the same artifacts: the pipeline stored what the stages stored.
    assert_eq!(store.list().unwrap(), by_hand_store.list().unwrap());
    std::fs::remove_dir_all(&root).unwrap();
    std::fs::remove_dir_all(&by_hand_root).unwrap();
}

/// The large documents of [`documents`] as other writers spell them: Python's spacing and
/// integral floats (`1.0`), keys JS orders first (`"7"`), members in reverse order.
fn respelled() -> Vec<(String, Vec<u8>)> {
    let mut docs = Vec::new();
    for (i, (name, bytes)) in documents().into_iter().enumerate() {
        if !name.contains("400 records") {
            continue;
        }
        let mut value: Value = serde_json::from_slice(&bytes).unwrap();
        add_index_keys(&mut value);
        let spelling = Spelling {
            spaced: true,
            ascii: i % 2 == 0,
            reversed: i % 3 == 0,
            seed: i as u64,
        };
        docs.push((
            format!("{name}, respelled"),
            spell(&value, spelling).into_bytes(),
        ));
    }
    docs
}

/// A key JS writes first (`"7"`) in every record (an object with `"id"`).
fn add_index_keys(value: &mut Value) {
    match value {
        Value::Object(map) => {
            if map.contains_key("id") {
                map.insert("7".into(), json!(7.0));
            }
            map.values_mut().for_each(add_index_keys);
        }
        Value::Array(items) => items.iter_mut().for_each(add_index_keys),
        _ => {}
    }
}

#[test]
fn a_payload_spelled_otherwise_is_stored_as_the_stages_store_it() {
    let root = temp_dir("respelled");
    let by_hand_root = temp_dir("respelled-by-hand");
    let store = FileStore::new(&root);
    let by_hand_store = FileStore::new(&by_hand_root);
    let offload_options = OffloadOptions::default();
    let mut stored = 0;
    for (name, bytes) in respelled() {
        for to in [
            None,
            Some(FormatId::Operations),
            Some(FormatId::ProtocolV1),
            Some(FormatId::ToolResultEnvelope),
        ] {
            for limit in [None, Some(4096)] {
                let case = format!("{name} -> {to:?}, limit {limit:?}");
                let (expected, _, offloaded, payload) =
                    by_hand_storing(&bytes, to, limit, false, &offload_options, &by_hand_store);
                let mut sink = StoreSink::new(&store);
                let shaped = Pipeline::new(&bytes)
                    .output_format(to)
                    .limit(limit)
                    .store(&mut sink)
                    .encode_options(options())
                    .run()
                    .unwrap();
                assert_eq!(
                    String::from_utf8_lossy(&shaped.bytes),
                    String::from_utf8_lossy(&expected),
                    "{case}"
                );
                assert_eq!(shaped.offloaded, offloaded, "{case}");
                if let Offloaded::Stored { digest, .. } = &shaped.offloaded {
                    stored += 1;
                    let digest: Digest = digest.parse().unwrap();
                    assert_eq!(Some(store.get(&digest).unwrap()), payload, "{case}");
                }
            }
        }
    }
    assert!(stored >= 5 * 4 * 2 - 8, "runs offloaded: {stored}");
    assert_eq!(store.list().unwrap(), by_hand_store.list().unwrap());
    std::fs::remove_dir_all(&root).unwrap();
    std::fs::remove_dir_all(&by_hand_root).unwrap();
}

#[test]
fn thresholds_and_the_capture_limit() {
    let env = Envelope::ok(records(400));
    let bytes = encode(FormatId::ProtocolV1, &env, &options())
        .unwrap()
        .bytes;
    let root = temp_dir("capture");
    let store = FileStore::new(&root);
    let size = artifact_bytes(&env.payload, FormatId::ProtocolV1)
        .unwrap()
        .0
        .len();
    let run = |threshold: usize, max_capture: Option<usize>| {
        Pipeline::new(&bytes)
            .store(&mut StoreSink::new(&store))
            .inline_threshold(threshold)
            .max_capture(max_capture)
            .encode_options(options())
            .run()
            .unwrap()
    };
    // Exactly the threshold stays inline: the output is the input.
    let inline = run(size, None);
    assert_eq!(inline.offloaded, Offloaded::Inline);
    assert_eq!(inline.bytes, bytes);
    assert!(
        !root.exists(),
        "nothing stored, the store is not even created"
    );
    // Over the capture limit: an error envelope, nothing stored.
    let capped = run(size - 1, Some(size - 1));
    assert_eq!(capped.offloaded, Offloaded::TooLarge { size_bytes: size });
    assert!(capped.artifacts.is_empty());
    let doc: Value = serde_json::from_slice(&capped.bytes).unwrap();
    assert_eq!(doc["error"]["code"], "EOUTPUT_TOO_LARGE");
    assert!(!root.exists());
    // One byte over the threshold and within the capture limit: stored.
    let stored = run(size - 1, Some(size));
    assert!(matches!(stored.offloaded, Offloaded::Stored { size_bytes, .. } if size_bytes == size));
    assert_eq!(store.list().unwrap().len(), 1);
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn an_envelope_built_in_code_is_shaped_as_by_hand() {
    let root = temp_dir("envelope");
    let store = FileStore::new(&root);
    let env = Envelope::ok(records(2000));
    for format in FormatId::ALL {
        let shaped = Pipeline::from_envelope(env.clone(), format)
            .redact(true)
            .store(&mut StoreSink::new(&store))
            .limit(4096)
            .encode_options(options())
            .run()
            .unwrap();
        let mut by_hand = env.clone();
        let redacted = redact_envelope(&mut by_hand);
        let offloaded = offload(
            &mut by_hand,
            format,
            &OffloadOptions::default(),
            &mut StoreSink::new(&store),
        )
        .unwrap();
        let fitted = fit(&by_hand, format, 4096, &options()).unwrap();
        assert_eq!(shaped.bytes, fitted.encoded.bytes, "{format}");
        assert_eq!(shaped.losses, fitted.encoded.losses, "{format}");
        assert_eq!(shaped.redactions, redacted, "{format}");
        assert_eq!(shaped.redactions.len(), 2000, "{format}");
        assert_eq!(shaped.offloaded, offloaded, "{format}");
        assert_eq!(shaped.format, format);
        assert_eq!(shaped.artifacts.len(), 1, "{format}");
        let digest: Digest = shaped.artifacts[0].digest.parse().unwrap();
        assert_eq!(
            store.get(&digest).unwrap().len(),
            shaped.artifacts[0].size_bytes
        );
        // Another output format than the envelope's.
        let other = Pipeline::from_envelope(env.clone(), format)
            .output_format(FormatId::Ctxo)
            .limit(2000)
            .run()
            .unwrap();
        assert_eq!(other.format, FormatId::Ctxo);
        assert!(other.bytes.len() <= 2000);
    }
    std::fs::remove_dir_all(&root).unwrap();
}

/// A sink that always fails, with its own code.
struct Down;
impl ArtifactSink for Down {
    fn put(&mut self, _: &[u8], _: &str) -> Result<envelope::model::ArtifactRef, SinkError> {
        Err(SinkError::new("store.backend", "the bucket is unreachable"))
    }
}

#[test]
fn store_failures_keep_their_code_and_cause() {
    let env = Envelope::ok(records(400));
    let bytes = encode(FormatId::Mcp, &env, &options()).unwrap().bytes;
    let err = Pipeline::new(&bytes).store(&mut Down).run().unwrap_err();
    assert!(matches!(err, envelope::Error::Store(_)));
    assert_eq!(err.code(), "store.backend");
    assert_eq!(err.to_string(), "artifact store: the bucket is unreachable");

    // A file store whose folder is a file: the store's `io` error, as its source.
    let file = temp_dir("not-a-folder");
    std::fs::write(&file, b"a file").unwrap();
    let store = FileStore::new(&file);
    let err = Pipeline::new(&bytes)
        .store(&mut StoreSink::new(&store))
        .run()
        .unwrap_err();
    assert_eq!(err.code(), "store.io");
    assert!(
        err.to_string()
            .starts_with("artifact store: cannot create "),
        "{err}"
    );
    let envelope::Error::Store(sink) = &err else {
        panic!("{err:?}")
    };
    let source = sink.get_ref().downcast_ref::<envelope_store::StoreError>();
    assert!(
        matches!(source, Some(envelope_store::StoreError::Io { .. })),
        "{source:?}"
    );
    assert!(std::error::Error::source(&err).is_some());
    std::fs::remove_file(&file).unwrap();

    // A payload under the threshold never reaches the sink.
    let small = encode(FormatId::Mcp, &Envelope::ok(json!({"a": 1})), &options())
        .unwrap()
        .bytes;
    let shaped = Pipeline::new(&small).store(&mut Down).run().unwrap();
    assert_eq!(shaped.offloaded, Offloaded::Inline);
    assert_eq!(shaped.bytes, Pipeline::new(&small).run().unwrap().bytes);
}
