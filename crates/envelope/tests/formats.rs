//! Every registered format, through the `Format` trait alone: detect → decode → encode on
//! its bundled example gives the same bytes back, and every `FormatId` is registered once.

use envelope::FormatId;
use envelope::formats::{DecodeOptions, EncodeOptions, Format, LossReport, registered};
use serde_json::Value;

fn example(format: &dyn Format) -> Vec<u8> {
    let path = format!(
        "{}/../../examples/{}.json",
        env!("CARGO_MANIFEST_DIR"),
        format.id().as_str()
    );
    let text = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    text.strip_suffix(b"\n").unwrap_or(&text).to_vec()
}

#[test]
fn every_format_id_is_registered_once() {
    let ids: Vec<FormatId> = registered().iter().map(|f| f.id()).collect();
    for id in FormatId::ALL {
        assert_eq!(ids.iter().filter(|i| **i == id).count(), 1, "{id}");
    }
    assert_eq!(ids.len(), FormatId::ALL.len());
}

#[test]
fn detect_decode_encode_through_the_trait() {
    let options = EncodeOptions {
        now: Some("2026-07-04T00:00:00Z".into()),
        ..EncodeOptions::default()
    };
    for format in registered() {
        let input = example(*format);
        let doc: Value = serde_json::from_slice(&input).unwrap();
        // This format has evidence, and it is the most specific any format has.
        let own = format
            .detect(&doc)
            .unwrap_or_else(|| panic!("{}: no evidence", format.id()));
        for other in registered() {
            if let Some(evidence) = other.detect(&doc) {
                assert!(
                    own.rank <= evidence.rank,
                    "{}: {} has more specific evidence ({:?})",
                    format.id(),
                    other.id(),
                    evidence
                );
            }
        }
        let env = format.decode(doc, &DecodeOptions::default()).unwrap();
        let mut losses = LossReport::default();
        let bytes = format.encode(&env, &options, &mut losses).unwrap();
        assert_eq!(
            String::from_utf8_lossy(bytes.strip_suffix(b"\n").unwrap_or(&bytes)),
            String::from_utf8_lossy(&input),
            "{}",
            format.id()
        );
        assert!(losses.is_empty(), "{}: {:?}", format.id(), losses);
        // The schema each format publishes accepts its own example.
        let schema = format.schema().to_value();
        let validator = jsonschema::validator_for(&schema).unwrap();
        let doc: Value = serde_json::from_slice(&input).unwrap();
        assert!(validator.is_valid(&doc), "{}", format.id());
    }
}

#[test]
fn a_bare_block_is_text_evidence_of_tool_envelope_v1_only() {
    let block = b"__ENVELOPE_V1__:eyJwYXlsb2FkIjp7fSwibWV0YSI6eyJ0b29sIjoidCIsInRzIjoiMjAyNi0wNy0wNFQwMDowMDowMFoiLCJ2ZXJzaW9uIjoxfX0=";
    let found: Vec<FormatId> = registered()
        .iter()
        .filter(|f| f.detect_text(block).is_some())
        .map(|f| f.id())
        .collect();
    assert_eq!(found, [FormatId::ToolEnvelopeV1]);
    let tev1 = envelope::formats::get(FormatId::ToolEnvelopeV1);
    let env = tev1.decode_bytes(block, &DecodeOptions::default()).unwrap();
    assert_eq!(env.tool.as_deref(), Some("t"));
}
