//! Documents of every shape the shaping paths read differently: the repository's examples,
//! the reference's fixtures, and generated ones (a payload of records in each format that
//! moves it from a root member, MCP results with and without mirrors, tool-envelope-v1
//! results in their many shapes).

use std::path::Path;

use serde_json::{Value, json};

use super::Gen;

/// The repository's examples and the reference's protocol-v1 fixtures, by name.
pub fn examples_and_fixtures() -> Vec<(String, Vec<u8>)> {
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let mut docs: Vec<(String, Vec<u8>)> = std::fs::read_dir(&examples)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .map(|p| (p.display().to_string(), std::fs::read(&p).unwrap()))
        .collect();
    for path in super::protocol_v1_fixtures() {
        docs.push((path.display().to_string(), std::fs::read(&path).unwrap()));
    }
    docs
}

/// A payload of records, written in `dialect` (or indented), in each format that moves its
/// payload from a root member.
pub fn random_documents(rng: &mut Gen) -> Vec<Vec<u8>> {
    let records: Vec<Value> = (0..rng.below(300))
        .map(|i| {
            let mut record = serde_json::Map::new();
            record.insert("id".into(), json!(i));
            record.insert("name".into(), Value::String(rng.string()));
            record.insert("value".into(), rng.value(3));
            if rng.below(3) == 0 {
                record.insert(rng.key(), rng.number());
            }
            Value::Object(record)
        })
        .collect();
    let payload = match rng.below(4) {
        0 => Value::Array(records),
        1 => json!({"rows": records, "next": rng.value(2)}),
        2 => json!({"items": records}),
        _ => rng.value(4),
    };
    let text = match rng.below(4) {
        0 => envelope::json::to_vec(&payload, envelope::json::Dialect::Go),
        1 => envelope::json::to_vec(&payload, envelope::json::Dialect::Js),
        2 => envelope::json::to_vec(&payload, envelope::json::Dialect::Newtonsoft),
        _ => serde_json::to_vec_pretty(&payload).unwrap(),
    };
    let text = String::from_utf8(text).unwrap();
    vec![
        format!(r#"{{"version":1,"status":"ok","command":"a.b","data":{text},"meta":{{"ts":"2026-01-01T00:00:00Z","source":"run"}},"error":{{}}}}"#),
        format!(r#"{{"data":{text},"meta":{{"source":"local","operationId":"x"}}}}"#),
        format!(r#"{{"data":{text},"meta":{{"source":"http","statusCode":200,"headers":{{"Link":"<a>; rel=\"next\"","X-Total-Count":"9"}}}}}}"#),
        format!(r#"{{"__envelope":{{"status":"ok","payloadPath":"result"}},"result":{text}}}"#),
        // Content blocks beside the payload: left out by the offload, and reported.
        format!(r#"{{"data":{text},"meta":{{"source":"mcp","isError":false,"content":[{{"type":"text","text":"x"}},{{"type":"image","data":"AAAA","mimeType":"image/png"}}]}}}}"#),
        format!(r#"{{"results":{text},"_meta":{{"totalItems":1,"returnedItems":1,"truncated":false}}}}"#),
    ]
    .into_iter()
    .chain(mcp_results(rng, &payload, &text))
    .chain(tool_envelope_v1_results(rng, &text))
    .map(String::into_bytes)
    .collect()
}

/// tool-envelope-v1 results whose envelope block's inner document holds `text` as its
/// payload: as the reference writes them, and two of the other shapes (members of their
/// own around it; the shapes read whole: an error, a dual emit, a block written with
/// escapes, a block the strict reader refuses, another version).
pub fn tool_envelope_v1_results(rng: &mut Gen, text: &str) -> Vec<String> {
    let block = |inner: &str| {
        let base64 = envelope::base64::encode(inner.as_bytes());
        format!("__ENVELOPE_V1__:{base64}")
    };
    let meta = r#"{"tool":"rows.list","ts":"2026-01-01T00:00:00.000Z","version":1}"#;
    let inner = format!(r#"{{"payload":{text},"meta":{meta}}}"#);
    let plain = block(&inner);
    let extras = block(&format!(
        r#"{{"trace":[1,2],"payload":{text},"meta":{{"tool":"t","extra":true,"version":1}},"payload":{text}}}"#
    ));
    let error = block(&format!(
        r#"{{"payload":{{"category":"validation","code":"EARG","message":"no","recoverable":false,"details":{text}}},"meta":{meta}}}"#
    ));
    let escaped = plain.replace('/', "\\/");
    let unpadded = plain.trim_end_matches('=');
    let second = block(&inner).replacen("V1__", "V01__", 1);
    let third = block(&inner).replacen("V1__", "V2__", 1);
    let shapes = [
        format!(
            r#"{{"content":[{{"type":"text","text":"Rows."}},{{"type":"text","text":"{plain}"}}]}}"#
        ),
        format!(
            r#"{{"content":[{{"type":"text","text":"Rows.","annotations":{{"priority":1}}}},{{"type":"text","text":"{extras}"}},{{"type":"text","text":"more"}}],"isError":false,"_meta":{{"k":1}}}}"#
        ),
        format!(
            r#"{{"content":[{{"type":"image","data":"AAAA","mimeType":"image/png"}},{{"type":"text","text":"{plain}"}}]}}"#
        ),
        format!(
            r#"{{"content":[{{"type":"text","text":"x"}},{{"type":"text","text":"{second}"}}]}}"#
        ),
        format!(
            r#"{{"content":[{{"type":"text","text":"no"}},{{"type":"text","text":"{error}"}}],"isError":true}}"#
        ),
        format!(
            r#"{{"content":[{{"type":"text","text":"Rows."}},{{"type":"text","text":"{plain}"}}],"structuredContent":{inner}}}"#
        ),
        format!(
            r#"{{"content":[{{"type":"text","text":"Rows."}},{{"type":"text","text":"{escaped}"}}]}}"#
        ),
        format!(
            r#"{{"content":[{{"type":"text","text":"Rows."}},{{"type":"text","text":"{unpadded}"}}]}}"#
        ),
        format!(
            r#"{{"content":[{{"type":"text","text":"Rows."}},{{"type":"text","text":"{third}"}}]}}"#
        ),
    ];
    let (first, second) = (1 + rng.below(8), 1 + rng.below(8));
    vec![
        shapes[0].clone(),
        shapes[first as usize].clone(),
        shapes[second as usize].clone(),
    ]
}

/// MCP results whose `structuredContent` is `text` (the JSON text of `payload`): with its
/// text mirror, after a summary, beside other blocks, in an error, with a mirror that says
/// something else, with none.
pub fn mcp_results(rng: &mut Gen, payload: &Value, text: &str) -> Vec<String> {
    let js =
        String::from_utf8(envelope::json::to_vec(payload, envelope::json::Dialect::Js)).unwrap();
    let mirror = serde_json::to_string(&js).unwrap();
    // The mirror as Python's json.dumps writes it (non-ASCII escaped): the same text.
    let ascii_mirror = super::spelling::ascii_escaped(&mirror);
    let other = serde_json::to_string(&rng.value(2).to_string()).unwrap();
    let pretty = serde_json::to_string(&serde_json::to_string_pretty(payload).unwrap()).unwrap();
    let pretty_other =
        serde_json::to_string(&serde_json::to_string_pretty(&json!({"other": payload})).unwrap())
            .unwrap();
    // A log of the payload's text: long (a prefix in the skimmed read) when it is.
    let log = serde_json::to_string(&format!("log: {js}\n{}", rng.string())).unwrap();
    vec![
        format!(r#"{{"content":[{{"type":"text","text":{mirror}}}],"structuredContent":{text}}}"#),
        format!(
            r#"{{"structuredContent":{text},"content":[{{"type":"text","text":{ascii_mirror}}}],"isError":false}}"#
        ),
        format!(
            r#"{{"content":[{{"type":"text","text":"Found rows."}},{{"type":"text","text":{mirror}}}],"structuredContent":{text},"_meta":{{"trace":"t1"}}}}"#
        ),
        format!(
            r#"{{"content":[{{"type":"text","text":{mirror}}},{{"type":"image","data":"AAAA","mimeType":"image/png"}}],"structuredContent":{text}}}"#
        ),
        format!(
            r#"{{"content":[{{"type":"text","text":{mirror}}}],"structuredContent":{text},"isError":true}}"#
        ),
        format!(r#"{{"content":[{{"type":"text","text":{other}}}],"structuredContent":{text}}}"#),
        format!(r#"{{"content":[],"structuredContent":{text}}}"#),
        // The mirror indented (as the Python SDK writes it): no mirror to the decoder, which
        // keeps the block; after a summary; indented but another value.
        format!(r#"{{"content":[{{"type":"text","text":{pretty}}}],"structuredContent":{js}}}"#),
        format!(
            r#"{{"content":[{{"type":"text","text":"Rows:"}},{{"type":"text","text":{pretty}}}],"structuredContent":{js}}}"#
        ),
        format!(
            r#"{{"content":[{{"type":"text","text":{pretty_other}}}],"structuredContent":{js}}}"#
        ),
        // Blocks: the payload is `content` (texts read as prefixes when long).
        format!(
            r#"{{"content":[{{"type":"text","text":{log}}},{{"type":"text","text":"done"}}]}}"#
        ),
        format!(
            r#"{{"content":[{{"type":"text","text":"a"}},{{"type":"text","text":{log}}},{{"type":"image","data":"AAAA","mimeType":"image/png"}}],"_meta":{{"k":1}}}}"#
        ),
        format!(
            r#"{{"content":[{{"type":"text","text":{mirror}}},{{"type":"text","text":{log}}}]}}"#
        ),
        format!(
            r#"{{"content":[{{"type":"text","text":{log}}},{{"type":"text","text":{log}}}],"isError":true}}"#
        ),
        format!(
            r#"{{"content":[{{"type":"text","text":{log},"annotations":{{"priority":1}}}},{{"type":"text","text":"x"}}]}}"#
        ),
    ]
}
