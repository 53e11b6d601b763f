//! Helpers of the shaping tests: a store in a temporary folder, random results, and the
//! promises every shaped result keeps.

use envelope::FormatId;
use envelope::json::Dialect;
use envelope::validate::{Options, Profile, validate_document};
use envelope_mcp::revision::Revision;
use envelope_mcp::shaping::{CallContext, Outcome};
use envelope_store::{FileStore, Store};
use serde_json::{Value, json};

/// A token the redaction rules know (`text:github`).
pub const GITHUB_TOKEN: &str = "ghp_0123456789abcdefghijABCDEFGHIJ012345";

/// A file store in a folder removed at the end.
pub struct TempStore {
    _dir: tempfile::TempDir,
    /// The store.
    pub store: FileStore,
}

impl TempStore {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let store = FileStore::new(dir.path());
        TempStore { _dir: dir, store }
    }

    pub fn is_empty(&self) -> bool {
        self.store.list().unwrap().is_empty()
    }

    /// Every stored blob.
    pub fn all(&self) -> Vec<Vec<u8>> {
        let digests = self.store.list().unwrap();
        digests.iter().map(|d| self.store.get(d).unwrap()).collect()
    }
}

pub fn text(s: &str) -> Value {
    json!({"type": "text", "text": s})
}

/// `{"rows": [{"id", "name"}…], "total"}`.
pub fn rows_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "rows": {"type": "array", "items": {
                "type": "object",
                "properties": {"id": {"type": "integer"}, "name": {"type": "string"}},
                "required": ["id", "name"]
            }},
            "total": {"type": "integer"}
        },
        "required": ["rows", "total"]
    })
}

/// A generated result and the schema its tool declares.
pub struct Generated {
    pub result: Value,
    pub schema: Option<Value>,
}

/// xorshift64: deterministic randomness from a proptest seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0.max(1);
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    fn chance(&mut self, one_in: u64) -> bool {
        self.below(one_in) == 0
    }
}

/// Words of a random length below `max` bytes.
fn some_words(rng: &mut Rng, max: u64) -> String {
    let bytes = rng.below(max) as usize;
    words(rng, bytes)
}

fn words(rng: &mut Rng, bytes: usize) -> String {
    const WORDS: [&str; 8] = [
        "alpha",
        "beta",
        "gamma",
        "ünïcode",
        "line\n",
        "tab\t",
        "\"quoted\"",
        "δ",
    ];
    let mut s = String::new();
    while s.len() < bytes {
        s.push_str(WORDS[rng.below(8) as usize]);
        s.push(' ');
        if rng.chance(400) {
            s.push_str(GITHUB_TOKEN);
            s.push(' ');
        }
    }
    s
}

/// A random result of what `revision` can carry: text, structured rows (with or without a
/// mirror and a schema), mixed blocks, an error, or a small one; sometimes with `_meta`,
/// an unknown member and secrets.
pub fn random_result(seed: u64, revision: Revision) -> Generated {
    let mut rng = Rng(seed);
    let mut schema = None;
    let kind = rng.below(5);
    let mut result = match kind {
        1 if revision.supports_structured_content() => {
            let n = rng.below(900) as usize;
            let rows: Vec<Value> = (0..n)
                .map(|i| {
                    let mut row =
                        json!({"id": i, "name": format!("row {i} {}", words(&mut rng, 8))});
                    if rng.chance(300) {
                        row["password"] = json!("hunter2");
                    }
                    row
                })
                .collect();
            let sc = json!({"rows": rows, "total": n});
            if rng.chance(2) {
                schema = Some(rows_schema());
            }
            let content = match rng.below(3) {
                0 => vec![text(&envelope::json::to_string(&sc, Dialect::Js))],
                1 => vec![],
                _ => vec![text(&format!("{n} rows"))],
            };
            json!({"content": content, "structuredContent": sc})
        }
        2 => {
            let mut blocks = vec![text(&some_words(&mut rng, 8000))];
            blocks.push(json!({"type": "image", "data": "QUJD".repeat(rng.below(6000) as usize + 1), "mimeType": "image/png"}));
            blocks.push(json!({"type": "resource", "resource": {"uri": "file:///r", "mimeType": "text/plain", "text": some_words(&mut rng, 6000)}}));
            blocks.push(json!({"type": "x-unknown", "payload": {"n": rng.below(100)}}));
            if revision.supports_audio() {
                blocks.push(json!({"type": "audio", "data": "QUJD".repeat(rng.below(500) as usize + 1), "mimeType": "audio/wav"}));
            }
            if revision.supports_resource_link() {
                blocks.push(json!({"type": "resource_link", "uri": "file:///x", "name": "x"}));
            }
            blocks.push(text(&some_words(&mut rng, 3000)));
            json!({"content": blocks})
        }
        3 => json!({"content": [text(&some_words(&mut rng, 20_000))], "isError": true}),
        4 => json!({"content": [text(&some_words(&mut rng, 300))]}),
        _ => {
            let blocks: Vec<Value> = (0..rng.below(3) + 1)
                .map(|_| text(&some_words(&mut rng, 15_000)))
                .collect();
            json!({"content": blocks})
        }
    };
    if rng.chance(3) {
        result["_meta"] = json!({"trace": words(&mut rng, 20)});
    }
    if rng.chance(3) {
        result["x-future"] = json!({"kept": [1, 2, 3]});
    }
    if revision.has_result_type() && rng.chance(2) {
        result["resultType"] = json!("complete");
    }
    Generated { result, schema }
}

/// What redaction makes of a result, and how many secrets it masks.
pub fn redacted(result: &Value) -> (Value, usize) {
    let mut v = result.clone();
    let mut report = Vec::new();
    envelope::shape::redact::redact_value(&mut v, "result", &mut report);
    (v, report.len())
}

/// The promises of `shape_result` on one generated result.
pub fn check_promises(
    input: &str,
    generated: &Generated,
    outcome: &Outcome,
    call: &CallContext,
    limit: usize,
    store: &TempStore,
) {
    let (full, secrets) = redacted(&generated.result);
    assert_eq!(outcome.redactions, secrets);
    let size = envelope::json::size::js_size(&generated.result);
    if secrets == 0 && size <= limit {
        assert!(!outcome.changed);
        assert_eq!(
            outcome.bytes,
            input.as_bytes(),
            "a small clean result is unchanged"
        );
        return;
    }
    assert!(
        outcome.bytes.len() <= limit,
        "{} > {limit}",
        outcome.bytes.len()
    );
    assert!(!String::from_utf8_lossy(&outcome.bytes).contains(GITHUB_TOKEN));
    let out: Value = serde_json::from_slice(&outcome.bytes).unwrap();
    // Valid MCP for the revision, structuredContent valid against the schema.
    let mut options = Options::new(Some(FormatId::Mcp), Profile::Spec)
        .with_mcp_revision(call.revision.as_str())
        .unwrap();
    if let Some(schema) = &generated.schema {
        options = options.with_output_schema(schema).unwrap();
    }
    let report = validate_document(&outcome.bytes, &options);
    assert!(report.is_valid(), "{:?}\n{out}", report.findings);
    if let Some(schema) = &call.output_schema
        && out["isError"] != true
    {
        assert!(schema.is_valid(&out["structuredContent"]), "{out}");
    }
    match &outcome.stored {
        None => {
            assert!(envelope::json::size::js_size(&full) <= limit);
            assert!(store.is_empty());
        }
        Some(digest) => {
            let stored = store.store.get(digest).unwrap();
            assert_eq!(
                stored,
                envelope::json::to_vec(&full, Dialect::Js),
                "the store holds the full redacted result"
            );
            let uri = envelope_mcp::drill::artifact_uri(digest);
            let linked =
                out["content"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|b| match b["type"].as_str() {
                        Some("resource_link") => {
                            envelope_mcp::drill::parse_artifact_uri(b["uri"].as_str().unwrap())
                                .as_ref()
                                == Some(digest)
                                && b["size"] == stored.len()
                        }
                        Some("text") => b["text"].as_str().unwrap().contains(&uri),
                        _ => false,
                    });
            assert!(linked, "no link to {uri}: {out}");
            // Only the one-line error result (limits too small for anything else) has no
            // resource_link where the revision has them.
            let one_line = out["content"].as_array().unwrap().len() == 1 && out["isError"] == true;
            if call.revision.supports_resource_link() && !one_line {
                assert!(out.to_string().contains("\"resource_link\""));
            }
        }
    }
}

/// The document an `emit` result carries: the result itself, or its single text block,
/// whichever `envelope detect` names as `format`.
pub fn emitted_document(result: &[u8], format: FormatId) -> Vec<u8> {
    if envelope::detect(result).map(|d| d.format).ok() == Some(format) {
        return result.to_vec();
    }
    let out: Value = serde_json::from_slice(result).unwrap();
    let texts: Vec<&str> = out["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["type"] == "text")
        .filter_map(|b| b["text"].as_str())
        .collect();
    assert_eq!(texts.len(), 1, "{format:?}: not a single text block: {out}");
    let doc = texts[0].as_bytes().to_vec();
    let detected = envelope::detect(&doc).map(|d| d.format).ok();
    assert_eq!(detected, Some(format), "{}", texts[0]);
    doc
}
