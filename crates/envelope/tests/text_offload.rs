//! The offload of an MCP result whose payload is one long text block (`shape::text_offload`,
//! what `envelope shape` with a store runs on a large `git log` result): the same output,
//! artifacts, report and redactions as reading the document whole, redacting, storing the
//! text and encoding, for long texts of every kind of escape, results of other shapes,
//! every offload option, output format and limit, with and without redaction; and the text
//! is stored a piece at a time.

use std::collections::BTreeMap;

use envelope::model::ArtifactRef;
use envelope::shape::{
    ArtifactSink, ArtifactWriter, OffloadOptions, Offloaded, Pipeline, SinkError,
};
use envelope::{DecodeOptions, EncodeOptions, FormatId};
use serde_json::json;

/// Artifacts in memory, named by their content (FNV-1a, as a made-up digest); with `pieces`,
/// it takes artifacts a piece at a time and counts the pieces of each.
#[derive(Default)]
struct Memory {
    stored: BTreeMap<String, (Vec<u8>, String)>,
    pieces: Option<Vec<usize>>,
}

impl ArtifactSink for Memory {
    fn put(&mut self, bytes: &[u8], kind: &str) -> Result<ArtifactRef, SinkError> {
        let mut hash = 0xcbf2_9ce4_8422_2325u64;
        for &b in bytes {
            hash = (hash ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
        }
        let digest = format!("sha256:{hash:064x}");
        self.stored
            .insert(digest.clone(), (bytes.to_vec(), kind.to_string()));
        Ok(ArtifactRef { digest })
    }

    fn begin(&mut self) -> Option<Box<dyn ArtifactWriter + '_>> {
        self.pieces.is_some().then(|| {
            Box::new(Pieces {
                memory: self,
                bytes: Vec::new(),
                pieces: 0,
            }) as Box<dyn ArtifactWriter + '_>
        })
    }
}

struct Pieces<'a> {
    memory: &'a mut Memory,
    bytes: Vec<u8>,
    pieces: usize,
}

impl ArtifactWriter for Pieces<'_> {
    fn write(&mut self, bytes: &[u8]) -> Result<(), SinkError> {
        self.bytes.extend_from_slice(bytes);
        self.pieces += 1;
        Ok(())
    }

    fn finish(self: Box<Self>, kind: &str) -> Result<ArtifactRef, SinkError> {
        let Pieces {
            memory,
            bytes,
            pieces,
        } = *self;
        if let Some(counts) = &mut memory.pieces {
            counts.push(pieces);
        }
        memory.put(&bytes, kind)
    }
}

fn encode_options() -> EncodeOptions {
    EncodeOptions {
        now: Some("2026-07-04T00:00:00Z".into()),
        ..EncodeOptions::default()
    }
}

/// What a run gave: output bytes, the offload, the redactions' rules and places.
type Outcome = Result<(String, Offloaded, Vec<(String, String)>), String>;

/// The whole path: read the document whole, redact, offload, encode, check the output.
fn whole(input: &[u8], case: &Case) -> (Outcome, Memory) {
    let mut sink = Memory::default();
    let result = (|| {
        let (format, mut env) =
            envelope::formats::decode_any(input, None, &DecodeOptions::default())?;
        let format = case.to.unwrap_or(format);
        let redactions = match case.redact {
            true => envelope::shape::redact::redact_envelope(&mut env),
            false => Vec::new(),
        };
        let offloaded =
            envelope::shape::offload::offload(&mut env, format, &case.options, &mut sink)?;
        let bytes = match case.limit {
            Some(limit) => envelope::shape::fit(&env, format, limit, &encode_options())?.encoded,
            None => envelope::encode(format, &env, &encode_options())?,
        };
        // The pipeline refuses what would not read back as valid.
        envelope::validate::check_output_of(&bytes.bytes, format, input)?;
        let redactions = redactions.into_iter().map(|r| (r.rule, r.at)).collect();
        Ok::<_, envelope::Error>((
            String::from_utf8_lossy(&bytes.bytes).into_owned(),
            offloaded,
            redactions,
        ))
    })();
    (result.map_err(|e| e.to_string()), sink)
}

/// The pipeline, which takes the text offload where it can.
fn piped(input: &[u8], case: &Case, pieces: bool) -> (Outcome, Memory) {
    let mut sink = Memory {
        pieces: pieces.then(Vec::new),
        ..Memory::default()
    };
    let result = Pipeline::new(input)
        .output_format(case.to)
        .inline_threshold(case.options.inline_threshold)
        .max_capture(case.options.max_capture)
        .limit(case.limit)
        .redact(case.redact)
        .encode_options(encode_options())
        .store(&mut sink)
        .run()
        .map(|s| {
            let redactions = s.redactions.into_iter().map(|r| (r.rule, r.at)).collect();
            (
                String::from_utf8_lossy(&s.bytes).into_owned(),
                s.offloaded,
                redactions,
            )
        });
    (result.map_err(|e| e.to_string()), sink)
}

struct Case {
    to: Option<FormatId>,
    options: OffloadOptions,
    limit: Option<usize>,
    redact: bool,
}

fn cases() -> Vec<Case> {
    let mut all = Vec::new();
    for to in [None, Some(FormatId::ProtocolV1)] {
        for (threshold, capture) in [(32 * 1024, None), (1 << 20, None), (0, Some(200 << 10))] {
            for limit in [None, Some(4096)] {
                for redact in [false, true] {
                    all.push(Case {
                        to,
                        options: OffloadOptions {
                            inline_threshold: threshold,
                            max_capture: capture,
                        },
                        limit,
                        redact,
                    });
                }
            }
        }
    }
    all
}

/// A log of `lines` lines, each with something of `extra` in it.
fn log(lines: usize, extra: &str) -> String {
    (0..lines)
        .map(|i| format!("commit {i:040x}\nAuthor: Dev <dev@example.com>\n\n    {extra} {i}\n"))
        .collect()
}

fn assert_same(name: &str, input: &[u8]) {
    for case in cases() {
        let what = format!(
            "{name} to {:?}, {:?}, limit {:?}, redact {}",
            case.to, case.options, case.limit, case.redact
        );
        let (expected, expected_store) = whole(input, &case);
        for pieces in [false, true] {
            let (got, got_store) = piped(input, &case, pieces);
            assert_eq!(got, expected, "{what}");
            assert!(
                got_store.stored == expected_store.stored,
                "{what}: stored artifacts differ"
            );
        }
    }
}

#[test]
fn long_texts_are_offloaded_as_the_whole_read_does() {
    let lines = 3_500; // over 256 KiB of text: what the text offload takes
    let texts = [
        ("plain log", log(lines, "change")),
        (
            "escapes of every kind",
            log(lines, "tab\t \"quoted\" back\\slash é 😀 \u{1} /"),
        ),
        (
            "a secret in it",
            log(lines, "change") + "password=hunter2\n",
        ),
        ("secrets of every kind", secrets_log(lines * 2)),
        (
            "a document",
            format!("{{\"rows\": \"{}\"}}", log(lines, "x").replace('\n', " ")),
        ),
        (
            "like tool-envelope-v1",
            format!("__ENVELOPE_V1__:{}", log(lines, "x")),
        ),
    ];
    for (name, text) in &texts {
        let docs = [
            json!({"content": [{"type": "text", "text": text}]}).to_string(),
            json!({"content": [{"type": "text", "text": text}], "_meta": {"trace": "t1"}, "isError": false}).to_string(),
            // `\/` and `\u` escapes the writer does not use, and spaces.
            format!(
                "{{ \"content\" : [ {{\"type\":\"text\", \"text\": {}}} ] }}",
                serde_json::to_string(text).unwrap().replace('/', "\\/").replace('é', "\\u00e9")
            ),
            // Shapes the text offload leaves to the whole path.
            json!({"content": [{"type": "text", "text": text}], "isError": true}).to_string(),
            json!({"content": [{"type": "text", "text": text, "annotations": {"audience": ["user"]}}]}).to_string(),
            json!({"content": [{"type": "text", "text": text}, {"type": "text", "text": "more"}]}).to_string(),
            json!({"content": [{"type": "text", "text": text}], "structuredContent": {"n": 1}}).to_string(),
            json!({"content": [{"type": "text", "text": text}], "x-extra": "password=hunter2"}).to_string(),
        ];
        // The shapes the text offload leaves alone need one text to show it.
        let shapes = if *name == "plain log" || name.starts_with("secrets") {
            docs.len()
        } else {
            3
        };
        for (i, doc) in docs.iter().take(shapes).enumerate() {
            assert!(doc.len() > 256 << 10);
            assert_same(&format!("{name}, document {i}"), doc.as_bytes());
        }
    }
}

/// A log of `lines` lines where every tenth holds a secret, of each free-text rule in turn,
/// some over several lines (a private key block, an escaped JSON value with a newline,
/// one without its closing quote), some next to quotes a cookie's mask takes away.
fn secrets_log(lines: usize) -> String {
    let secrets = [
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA0123\nabcdEFGH+/==\n-----END RSA PRIVATE KEY-----",
        "event {\\\"token\\\": \\\"first line\nsecond line\\\"} done",
        "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl",
        "Authorization: Bearer abc123DEF456ghi789",
        "Authorization: Basic dXNlcjpwYXNz",
        "key AKIAABCDEFGHIJKLMNOP used",
        "ghp_0123456789abcdefghijABCDEFGHIJ012345 leaked",
        "slack xoxb-1234567890-abcdef",
        "Set-Cookie: session=\"abc\"; token=\\\"x",
        "password=\"a b\" and api_key: 'k1' and AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI",
        "Passphrase: correct horse battery",
        "log {\\\"api_key\\\":\\\"k1\\\"} end é 😀",
    ];
    (0..lines)
        .map(|i| match i % 10 {
            0 => format!("line {i}: {}\n", secrets[(i / 10) % secrets.len()]),
            _ => format!("line {i}: nothing to see, \"quoted\" text = 5: fine\n"),
        })
        .collect()
}

#[test]
fn a_long_text_with_secrets_is_redacted_a_piece_at_a_time() {
    // Over 2 MiB: the text is redacted in pieces of about a megabyte, a private key block
    // and an escaped value running across the first megabyte's end.
    let mut text = log(30_000, "change");
    let first_mib = text[..1 << 20].rfind('\n').unwrap() + 1;
    text.insert_str(first_mib - 200, "\n-----BEGIN PRIVATE KEY-----\nMIIE\n");
    text.insert_str(
        first_mib + 300,
        "\n-----END PRIVATE KEY-----\n{\\\"secret\\\":\\\"one\n",
    );
    text.insert_str((3 << 19) + 5, "\nmore\\\"} password=x\n");
    text.push_str(&secrets_log(200));
    let doc =
        json!({"content": [{"type": "text", "text": text}], "_meta": {"api_key": "k"}}).to_string();
    for case in cases()
        .into_iter()
        .filter(|c| c.redact && c.limit.is_some())
    {
        let what = format!("{:?}, {:?}", case.to, case.options);
        let (expected, expected_store) = whole(doc.as_bytes(), &case);
        let (got, got_store) = piped(doc.as_bytes(), &case, true);
        assert_eq!(got, expected, "{what}");
        assert!(got_store.stored == expected_store.stored, "{what}");
        let (output, offloaded, redactions) = got.unwrap();
        assert!(
            !output.contains("MIIE") && !output.contains("hunter"),
            "{what}"
        );
        assert!(redactions.len() > 5, "{what}: {redactions:?}");
        if let Offloaded::Stored { size_bytes, .. } = offloaded {
            // Stored as it was redacted, a piece at a time: never whole.
            assert_eq!(got_store.pieces.as_ref().map(Vec::len), Some(1), "{what}");
            assert!(got_store.pieces.as_ref().unwrap()[0] >= 2, "{what}");
            let (bytes, _) = got_store.stored.values().next().unwrap();
            assert_eq!(bytes.len(), size_bytes);
            let stored = String::from_utf8_lossy(bytes);
            assert!(
                !stored.contains("MIIE") && !stored.contains("\"one"),
                "{what}"
            );
        }
    }
}

#[test]
fn the_text_goes_to_the_store_a_piece_at_a_time() {
    let text = log(40_000, "change");
    let doc = json!({"content": [{"type": "text", "text": text}]}).to_string();
    let case = Case {
        to: None,
        options: OffloadOptions::default(),
        limit: None,
        redact: true,
    };
    let (got, sink) = piped(doc.as_bytes(), &case, true);
    let (_, offloaded, redactions) = got.unwrap();
    assert!(matches!(offloaded, Offloaded::Stored { size_bytes, .. } if size_bytes == text.len()));
    assert!(redactions.is_empty());
    // About 3.4 MB in pieces of about the redaction's cut (256 KiB, to the next newline):
    // never whole, never in pieces of a few bytes.
    let pieces = sink.pieces.as_deref().expect("written a piece at a time");
    assert_eq!(pieces.len(), 1, "one artifact");
    let expected = text.len().div_ceil(512 << 10)..=text.len().div_ceil(128 << 10);
    assert!(expected.contains(&pieces[0]), "{pieces:?}");
    let (bytes, kind) = sink.stored.values().next().unwrap();
    assert_eq!(
        (bytes.as_slice(), kind.as_str()),
        (text.as_bytes(), "text/plain")
    );
}

#[test]
fn a_long_text_without_a_store_is_redacted_as_the_whole_read_does() {
    // No store, redaction on: a result with nothing to redact is read with its text as a
    // prefix (with a limit); one with secrets has its text redacted a piece at a time. The
    // output and report are the whole read's, redacted, then cut or encoded whole.
    let clean = log(3_500, "change");
    let secret = log(3_500, "change") + "token: abc123XYZdef\n";
    let mut across = log(30_000, "change");
    across.insert_str(1 << 20, "\n-----BEGIN PRIVATE KEY-----\nMIIE\n");
    across.push_str(&secrets_log(300));
    // Masks that make the text shorter or longer than the input's, and multi-byte
    // characters where the prefix read for the limit ends.
    let grows = "é😀".repeat(1_500) + "\n" + &"password=a\n".repeat(30_000);
    let texts = [
        (&clean, true),
        (&secret, false),
        (&across, false),
        (&grows, false),
    ];
    for (text, is_clean) in texts {
        // Metadata with a secret of its own beside a text with secrets.
        let meta = match is_clean {
            true => json!({"trace": "t1"}),
            false => json!({"api_key": "k"}),
        };
        let doc = json!({"content": [{"type": "text", "text": text}], "_meta": meta}).to_string();
        for to in [None, Some(FormatId::ProtocolV1)] {
            for limit in [Some(4096), Some(4097), None] {
                let expected = (|| {
                    let (format, mut env) = envelope::formats::decode_any(
                        doc.as_bytes(),
                        None,
                        &DecodeOptions::default(),
                    )?;
                    let format = to.unwrap_or(format);
                    let redactions = envelope::shape::redact::redact_envelope(&mut env);
                    let bytes = match limit {
                        Some(limit) => {
                            envelope::shape::fit(&env, format, limit, &encode_options())?.encoded
                        }
                        None => envelope::encode(format, &env, &encode_options())?,
                    };
                    let redactions: Vec<_> =
                        redactions.into_iter().map(|r| (r.rule, r.at)).collect();
                    Ok::<_, envelope::Error>((bytes.bytes, redactions))
                })()
                .unwrap();
                let shaped = Pipeline::new(doc.as_bytes())
                    .output_format(to)
                    .limit(limit)
                    .redact(true)
                    .encode_options(encode_options())
                    .run()
                    .unwrap();
                let redactions: Vec<_> = shaped
                    .redactions
                    .into_iter()
                    .map(|r| (r.rule, r.at))
                    .collect();
                assert_eq!(
                    (String::from_utf8_lossy(&shaped.bytes), redactions),
                    (String::from_utf8_lossy(&expected.0), expected.1),
                    "{to:?} {limit:?}"
                );
                // Clean or redacted a piece at a time, the text is read for the limit.
                assert_eq!(shaped.skimmed, limit.is_some(), "{to:?} clean {is_clean}");
            }
        }
    }
}

/// A long text block that holds a ctxo document is detected as ctxo (the whole path parses
/// the last text block): the text offload leaves it to the whole path, which reads the
/// ctxo document, instead of storing the block's text as an MCP result's.
#[test]
fn a_long_text_holding_a_ctxo_document_is_read_as_ctxo() {
    let rows: Vec<String> = (0..20_000)
        .map(|i| format!(r#"{{"id":{i},"name":"row {i}"}}"#))
        .collect();
    let ctxo = format!(
        r#"{{"results":[{}],"_meta":{{"totalItems":20000,"returnedItems":20000,"truncated":false,"totalBytes":100}}}}"#,
        rows.join(",")
    );
    let doc = json!({"content": [{"type": "text", "text": ctxo}]}).to_string();
    assert_eq!(
        envelope::detect(doc.as_bytes()).unwrap().format,
        FormatId::Ctxo
    );
    assert_same("a ctxo document in a text block", doc.as_bytes());
    let mut sink = Memory::default();
    let shaped = Pipeline::new(doc.as_bytes())
        .store(&mut sink)
        .run()
        .unwrap();
    assert_eq!(shaped.format, FormatId::Ctxo);
}
