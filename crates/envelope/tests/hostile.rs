//! Hostile input: every decoder answers with an error that says where, never a panic.

mod common;

use envelope::{DecodeOptions, FormatId, decode, detect};

fn decode_all(input: &[u8]) -> Vec<Result<envelope::Envelope, envelope::Error>> {
    FormatId::ALL
        .iter()
        .flat_map(|&f| [false, true].map(|lenient| decode(f, input, &DecodeOptions { lenient })))
        .collect()
}

#[test]
fn malformed_json_has_line_column_and_offset() {
    let input = b"{\n  \"content\": [1,,]\n}";
    for result in decode_all(input) {
        let err = result.unwrap_err();
        assert_eq!(err.code(), "json.syntax");
        let loc = err.location().unwrap();
        assert_eq!((loc.line, loc.column), (Some(2), Some(17)), "{err}");
        assert_eq!(loc.offset, Some(18));
        assert!(err.to_string().contains("line 2 column 17"), "{err}");
    }
}

#[test]
fn truncated_and_empty_input() {
    for input in [&b"{\"content\":[{\"type\":\"te"[..], b"", b"  \n"] {
        for result in decode_all(input) {
            assert_eq!(
                result.unwrap_err().code(),
                "json.eof",
                "{:?}",
                String::from_utf8_lossy(input)
            );
        }
        assert_eq!(detect(input).unwrap_err().code(), "json.eof");
    }
}

#[test]
fn invalid_utf8_and_bom() {
    let input = b"{\"content\":\"\xff\xfe\"}";
    for result in decode_all(input) {
        let err = result.unwrap_err();
        assert_eq!(err.code(), "text.utf8");
        assert_eq!(err.location().unwrap().offset, Some(12));
    }
    let bom = b"\xEF\xBB\xBF{\"content\":[]}";
    for result in decode_all(bom) {
        let err = result.unwrap_err();
        assert_eq!(err.code(), "text.bom");
        assert!(err.to_string().contains("byte-order mark"));
    }
}

#[test]
fn deep_nesting_is_an_error_not_a_stack_overflow() {
    for depth in [200usize, 100_000] {
        let input = format!("{{\"content\":{}{}}}", "[".repeat(depth), "]".repeat(depth));
        for result in decode_all(input.as_bytes()) {
            let err = result.unwrap_err();
            // Its own id, the one `validate` reports for it.
            assert_eq!(err.code(), "json.depth");
            assert!(err.to_string().contains("deeper than 127 levels"), "{err}");
        }
        assert!(detect(input.as_bytes()).is_err());
    }
}

#[test]
fn wrong_types_point_at_the_field() {
    let cases: [(FormatId, &str, &str); 8] = [
        (FormatId::ToolEnvelopeV1, r#"{"content":{}}"#, "/content"),
        (FormatId::Mcp, r#"{"content":[{"text":"x"}]}"#, "/content/0"),
        (
            FormatId::Mcp,
            r#"{"content":[],"isError":"yes"}"#,
            "/isError",
        ),
        (FormatId::Operations, r#"{"data":1,"meta":[]}"#, "/meta"),
        (
            FormatId::ProtocolV1,
            r#"{"version":1,"status":"ok","command":"a/b","meta":[]}"#,
            "/meta",
        ),
        (
            FormatId::ProtocolV1,
            r#"{"version":1,"status":"ok","command":7}"#,
            "/command",
        ),
        (
            FormatId::ToolResultEnvelope,
            r#"{"__envelope":"x"}"#,
            "/__envelope",
        ),
        (
            FormatId::Ctxo,
            r#"{"results":[],"_meta":{"totalItems":"3"}}"#,
            "/_meta/totalItems",
        ),
    ];
    for (format, doc, pointer) in cases {
        let err = decode(format, doc.as_bytes(), &DecodeOptions::default()).unwrap_err();
        assert_eq!(err.code(), "format.wrong-type", "{format} {doc}: {err}");
        assert_eq!(
            err.location().unwrap().pointer.as_deref(),
            Some(pointer),
            "{format} {doc}"
        );
    }
}

#[test]
fn unknown_versions_are_rejected_with_a_location() {
    let err = decode(
        FormatId::ProtocolV1,
        br#"{"version":2,"status":"ok","command":"a/b"}"#,
        &DecodeOptions::default(),
    )
    .unwrap_err();
    assert_eq!(err.code(), "format.unsupported-version");
    assert_eq!(err.location().unwrap().pointer.as_deref(), Some("/version"));
    let block =
        r#"{"content":[{"type":"text","text":"s"},{"type":"text","text":"__ENVELOPE_V2__:e30="}]}"#;
    let err = decode(
        FormatId::ToolEnvelopeV1,
        block.as_bytes(),
        &DecodeOptions::default(),
    )
    .unwrap_err();
    assert_eq!(err.code(), "format.unsupported-version");
    assert_eq!(
        err.location().unwrap().pointer.as_deref(),
        Some("/content/1/text")
    );
}

#[test]
fn not_an_object_at_the_root() {
    for doc in ["[]", "1", "\"x\"", "null"] {
        assert_eq!(
            detect(doc.as_bytes()).unwrap_err().code(),
            "format.undetected"
        );
        for result in decode_all(doc.as_bytes()) {
            assert!(result.is_err(), "{doc}");
        }
    }
}

#[test]
fn embedded_block_errors_point_into_the_block() {
    let bad_json = envelope::base64::encode(b"{\"payload\":");
    let doc = format!(
        r#"{{"content":[{{"type":"text","text":"s"}},{{"type":"text","text":"__ENVELOPE_V1__:{bad_json}"}}]}}"#
    );
    let err = decode(
        FormatId::ToolEnvelopeV1,
        doc.as_bytes(),
        &DecodeOptions::default(),
    )
    .unwrap_err();
    assert_eq!(err.code(), "json.eof");
    assert!(
        err.location()
            .unwrap()
            .pointer
            .as_deref()
            .unwrap()
            .starts_with("/content/1/text#")
    );
    let bad_utf8 = envelope::base64::encode(b"{\"payload\":\"\xff\",\"meta\":{}}");
    let doc = format!(
        r#"{{"content":[{{"type":"text","text":"s"}},{{"type":"text","text":"__ENVELOPE_V1__:{bad_utf8}"}}]}}"#
    );
    let err = decode(
        FormatId::ToolEnvelopeV1,
        doc.as_bytes(),
        &DecodeOptions::default(),
    )
    .unwrap_err();
    assert_eq!(err.code(), "text.utf8");
    // The lenient reader replaces invalid UTF-8 as Node does, and reads the block.
    let env = decode(
        FormatId::ToolEnvelopeV1,
        doc.as_bytes(),
        &DecodeOptions { lenient: true },
    )
    .unwrap();
    assert_eq!(
        env.payload,
        envelope::Payload::Json(serde_json::json!("\u{fffd}"))
    );
}

/// Random mutations of valid documents never panic any decoder, and every format reads back
/// what it writes of whatever decoded (cargo-fuzz goes further).
#[test]
fn mutated_documents_never_panic() {
    let seeds: Vec<&[u8]> = vec![
        include_bytes!("../../../examples/tool-envelope-v1.json"),
        include_bytes!("../../../examples/ctxo.json"),
        include_bytes!("../../../examples/operations.json"),
        include_bytes!("../../../examples/protocol-v1.json"),
        include_bytes!("../../../examples/tool-result-envelope.json"),
        include_bytes!("../../../examples/mcp.json"),
    ];
    let mut g = common::Gen::new(99);
    for _ in 0..3000 {
        let mut doc = seeds[g.below(seeds.len() as u64) as usize].to_vec();
        for _ in 0..=g.below(4) {
            let at = g.below(doc.len() as u64) as usize;
            match g.below(3) {
                0 => doc[at] = g.next() as u8,
                1 => {
                    doc.remove(at);
                }
                _ => doc.insert(at, b"{}[]\",:0e-\\"[g.below(11) as usize]),
            }
        }
        let _ = detect(&doc);
        for env in decode_all(&doc).into_iter().flatten() {
            for f in FormatId::ALL {
                // What an encoder writes, its own decoder reads back.
                let bytes = envelope::encode(f, &env, &envelope::EncodeOptions::default())
                    .unwrap()
                    .bytes;
                if let Err(e) = decode(f, &bytes, &DecodeOptions::default()) {
                    panic!(
                        "{f} cannot read its own output: {e}\n{}",
                        String::from_utf8_lossy(&bytes)
                    );
                }
            }
        }
    }
}

/// Found by fuzzing (decode_mcp): a payload with a `content` array of its own, written as
/// ctxo, was read back as an MCP result carrying a ctxo document, and failed.
#[test]
fn regression_ctxo_payload_with_a_content_array_is_not_mcp_transport() {
    let input = include_bytes!("regressions/mcp-payload-with-content-array.json");
    let env = decode(FormatId::Mcp, input, &DecodeOptions::default()).unwrap();
    for format in FormatId::ALL {
        let bytes = envelope::encode(format, &env, &envelope::EncodeOptions::default())
            .unwrap()
            .bytes;
        let back = decode(format, &bytes, &DecodeOptions::default())
            .unwrap_or_else(|e| panic!("{format}: {e}"));
        assert_eq!(back.payload, env.payload, "{format}");
        assert_eq!(detect(&bytes).unwrap().format, format, "{format}");
    }
}
