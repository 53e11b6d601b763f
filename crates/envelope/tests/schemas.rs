//! The published JSON Schemas (`schemas/`): generated from the wire types, never edited by
//! hand (a drift fails here; `ENVELOPE_UPDATE_SCHEMAS=1 cargo test -p envelope --test
//! schemas` rewrites them), and every document our codecs write conforms to them.

mod common;

use std::path::{Path, PathBuf};

use envelope::formats::schema::{file_name, generate, validator};
use envelope::{DecodeOptions, EncodeOptions, FormatId};
use serde_json::Value;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn errors(format: FormatId, doc: &Value) -> Vec<String> {
    validator(format)
        .iter_errors(doc)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect()
}

#[test]
fn published_schemas_match_the_wire_types() {
    let update = std::env::var_os("ENVELOPE_UPDATE_SCHEMAS").is_some();
    let mut drifted = Vec::new();
    for format in FormatId::ALL {
        let path = repo().join("schemas").join(file_name(format));
        let generated = serde_json::to_string_pretty(&generate(format)).unwrap() + "\n";
        if update {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, &generated).unwrap();
        } else if std::fs::read_to_string(&path).ok().as_deref() != Some(generated.as_str()) {
            drifted.push(path.display().to_string());
        }
    }
    assert!(
        drifted.is_empty(),
        "schemas differ from the wire types: {drifted:?}; if the types are right, rerun with ENVELOPE_UPDATE_SCHEMAS=1"
    );
}

#[test]
fn schemas_are_draft_2020_12_with_ids() {
    for format in FormatId::ALL {
        let schema = generate(format);
        assert_eq!(
            schema["$schema"],
            "https://json-schema.org/draft/2020-12/schema"
        );
        assert!(
            schema["$id"]
                .as_str()
                .unwrap()
                .ends_with(&file_name(format))
        );
    }
}

#[test]
fn examples_converted_to_every_format_conform_to_its_schema() {
    let mut checked = 0;
    for source in FormatId::ALL {
        let bytes = std::fs::read(repo().join("examples").join(format!("{source}.json"))).unwrap();
        let env = envelope::decode(source, &bytes, &DecodeOptions::default()).unwrap();
        for target in FormatId::ALL {
            let options = EncodeOptions {
                now: Some("2026-01-02T03:04:05Z".into()),
                ..EncodeOptions::default()
            };
            let out = envelope::encode(target, &env, &options).unwrap();
            let doc: Value = serde_json::from_slice(&out.bytes).unwrap();
            let found = errors(target, &doc);
            assert!(found.is_empty(), "{source} → {target}: {found:?}\n{doc}");
            // A hard budget keeps the shape too.
            let fitted = envelope::shape::fit(&env, target, 400, &options).unwrap();
            let doc: Value = serde_json::from_slice(&fitted.encoded.bytes).unwrap();
            let found = errors(target, &doc);
            assert!(
                found.is_empty(),
                "{source} → {target} in 400 bytes: {found:?}\n{doc}"
            );
            checked += 1;
        }
    }
    assert_eq!(checked, 36);
}

/// The schema is the closed (strict) shape: on every fixture it agrees with the strict
/// profile's shape rules (unknown fields, JSON types).
#[test]
fn the_protocol_v1_schema_agrees_with_the_strict_profile_on_every_fixture() {
    use envelope::validate::{Options, Profile, validate_document};
    let strict = Options::new(Some(FormatId::ProtocolV1), Profile::Strict);
    let mut rejected = Vec::new();
    for path in common::protocol_v1_fixtures() {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let bytes = std::fs::read(&path).unwrap();
        let doc: Value = serde_json::from_slice(&bytes).unwrap();
        let schema_ok = errors(FormatId::ProtocolV1, &doc).is_empty();
        let report = validate_document(&bytes, &strict);
        let shape_ok = !report
            .findings
            .iter()
            .any(|f| matches!(f.rule, "pv1.unknown-field" | "pv1.type"));
        assert_eq!(schema_ok, shape_ok, "{name}: {:#?}", report.findings);
        if !schema_ok {
            rejected.push(name);
        }
    }
    // The fixtures that extend the shape (e.g. `error.hint`, extra meta keys) are known.
    rejected.sort();
    assert_eq!(
        rejected,
        [
            "error-EMBEDDING_PROVIDER_FAILURE.json",
            "error-PROVIDER_CONFIG_INVALID.json",
            "semantic-index-init-ok.json",
            "semantic-index-partial-error.json",
            "semantic-index-update-ok.json"
        ]
    );
}

#[test]
fn schemas_reject_what_they_should() {
    let cases: [(FormatId, &str); 6] = [
        (
            FormatId::ProtocolV1,
            r#"{"version":1,"status":"done","command":"a/b","meta":{"ts":"x"}}"#,
        ),
        (
            FormatId::ProtocolV1,
            r#"{"version":1,"status":"ok","command":"a/b","meta":{"ts":"x","colour":1}}"#,
        ),
        (
            FormatId::Ctxo,
            r#"{"items":[],"_meta":{"totalItems":"1","returnedItems":1,"truncated":false,"totalBytes":2}}"#,
        ),
        (
            FormatId::Operations,
            r#"{"data":1,"meta":{"source":"ftp"}}"#,
        ),
        (
            FormatId::Mcp,
            r#"{"content":[{"type":"resource_link","uri":"file:///a"}]}"#,
        ),
        (
            FormatId::ToolEnvelopeV1,
            r#"{"content":[{"type":"text","text":"hi"},{"type":"text","text":"ENVELOPE:abc"}]}"#,
        ),
    ];
    for (format, text) in cases {
        let doc: Value = serde_json::from_str(text).unwrap();
        assert!(!errors(format, &doc).is_empty(), "{format} accepted {text}");
    }
    // Unknown MCP block types pass through.
    let doc: Value = serde_json::from_str(r#"{"content":[{"type":"hologram","x":1}]}"#).unwrap();
    assert!(errors(FormatId::Mcp, &doc).is_empty());
}
