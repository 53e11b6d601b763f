//! ctxo: the worked cases, the JS parseInt limit, and the compat truncation against a
//! JavaScript implementation of the reference algorithm (binary search, re-serializing).

mod common;

use envelope::formats::ctxo::{DEFAULT_LIMIT, parse_limit};
use envelope::{DecodeOptions, EncodeOptions, Envelope, FormatId, Status, decode, encode};
use serde_json::{Map, Value, json};

fn wrap(payload: &str, limit: Option<usize>, root: Option<&str>) -> String {
    let env = Envelope {
        workspace: root.map(str::to_string),
        ..Envelope::ok(serde_json::from_str(payload).unwrap())
    };
    let options = EncodeOptions {
        ctxo_limit: limit,
        ..EncodeOptions::default()
    };
    String::from_utf8(encode(FormatId::Ctxo, &env, &options).unwrap().bytes).unwrap()
}

#[test]
fn worked_cases() {
    assert_eq!(
        wrap(
            r#"{"symbolId":"s","impactedSymbols":[{"symbolId":"a"},{"symbolId":"b"}]}"#,
            None,
            None
        ),
        r#"{"symbolId":"s","impactedSymbols":[{"symbolId":"a"},{"symbolId":"b"}],"_meta":{"totalItems":2,"returnedItems":2,"truncated":false,"totalBytes":70}}"#
    );
    let one = r#"{"impactedSymbols":[{"symbolId":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}]}"#;
    assert_eq!(one.len(), 97);
    assert_eq!(
        wrap(one, Some(10), None),
        format!(
            r#"{},"_meta":{{"totalItems":1,"returnedItems":1,"truncated":false,"totalBytes":97}}}}"#,
            &one[..one.len() - 1]
        )
    );
    let clusters: Vec<String> = (0..40).map(|i| format!(r#"{{"id":{i}}}"#)).collect();
    let nested = format!(
        r#"{{"communities":{{"clusters":[{}]}},"layers":{{}}}}"#,
        clusters.join(",")
    );
    assert_eq!(nested.len(), 432);
    assert!(wrap(&nested, Some(100), None).ends_with(
        r#""_meta":{"totalItems":0,"returnedItems":0,"truncated":false,"totalBytes":432}}"#
    ));
    assert_eq!(
        wrap(r#"{"results":[{"id":1}]}"#, None, Some("/repo")),
        r#"{"results":[{"id":1}],"_meta":{"totalItems":1,"returnedItems":1,"truncated":false,"totalBytes":22,"workspace":{"root":"/repo"}}}"#
    );
    assert_eq!(
        wrap(
            r#"{"found":false,"symbolId":"nope","hint":"Symbol not found. Run \"ctxo index\"."}"#,
            None,
            None
        ),
        r#"{"found":false,"symbolId":"nope","hint":"Symbol not found. Run \"ctxo index\".","_meta":{"totalItems":0,"returnedItems":0,"truncated":false,"totalBytes":80}}"#
    );
}

#[test]
fn limit_parses_like_js_parse_int() {
    for (text, expected) in [
        (Some("300abc"), 300),
        (Some("12.9"), 12),
        (Some("3e2"), 3),
        (Some("0x200"), DEFAULT_LIMIT),
        (Some(""), DEFAULT_LIMIT),
        (Some("   42"), 42),
        (Some("\u{a0}\t7"), 7),
        (Some("+15"), 15),
        (Some("-5"), DEFAULT_LIMIT),
        (Some("0"), DEFAULT_LIMIT),
        (Some("abc"), DEFAULT_LIMIT),
        (Some("99999999999999999999999999"), usize::MAX),
        (None, DEFAULT_LIMIT),
    ] {
        assert_eq!(parse_limit(text), expected, "{text:?}");
    }
}

#[test]
fn truncation_cuts_the_largest_array_and_reports_it() {
    let items: Vec<Value> = (0..100)
        .map(|i| json!({"symbolId": format!("sym-{i:03}")}))
        .collect();
    let payload = json!({"importers": items, "results": [1, 2, 3]}).to_string();
    let out = wrap(&payload, Some(500), None);
    assert!(out.len() <= 500, "{}", out.len());
    let v: Value = serde_json::from_str(&out).unwrap();
    let meta = &v["_meta"];
    assert_eq!(meta["truncated"], json!(true));
    assert_eq!(meta["totalItems"], json!(100));
    assert_eq!(
        meta["returnedItems"],
        json!(v["importers"].as_array().unwrap().len())
    );
    assert_eq!(
        meta["hint"],
        json!("Use find_importers with edgeKinds filter or maxDepth to narrow results.")
    );
    assert_eq!(v["results"], json!([1, 2, 3]));
    // The decoded envelope re-encodes to the same bytes.
    let env = decode(FormatId::Ctxo, out.as_bytes(), &DecodeOptions::default()).unwrap();
    assert_eq!(
        String::from_utf8(
            encode(FormatId::Ctxo, &env, &EncodeOptions::default())
                .unwrap()
                .bytes
        )
        .unwrap(),
        out
    );
}

#[test]
fn graceful_miss_and_error_shapes() {
    let miss = r#"{"found":false,"hint":"Run \"ctxo index\" to build the codebase index."}"#;
    let env = decode(FormatId::Ctxo, miss.as_bytes(), &DecodeOptions::default()).unwrap();
    assert!(env.budget.is_none());
    assert_eq!(
        encode(FormatId::Ctxo, &env, &EncodeOptions::default())
            .unwrap()
            .bytes,
        miss.as_bytes()
    );

    let error =
        r#"{"error":true,"message":"symbolId: String must contain at least 1 character(s)"}"#;
    let env = decode(FormatId::Ctxo, error.as_bytes(), &DecodeOptions::default()).unwrap();
    assert_eq!(env.status, Status::Error);
    assert_eq!(
        env.error.as_ref().unwrap().message,
        "symbolId: String must contain at least 1 character(s)"
    );
    assert_eq!(
        encode(FormatId::Ctxo, &env, &EncodeOptions::default())
            .unwrap()
            .bytes,
        error.as_bytes()
    );
}

#[test]
fn transport_form_takes_the_last_text_block() {
    let doc = r#"{"results":[],"_meta":{"totalItems":0,"returnedItems":0,"truncated":false,"totalBytes":14}}"#;
    let result = json!({"content": [{"type": "text", "text": "advisory: index is stale"}, {"type": "text", "text": doc}]}).to_string();
    assert_eq!(
        envelope::detect(result.as_bytes()).unwrap().format,
        FormatId::Ctxo
    );
    let env = decode(FormatId::Ctxo, result.as_bytes(), &DecodeOptions::default()).unwrap();
    assert_eq!(env.payload.to_json(), json!({"results": []}));
    assert_eq!(
        String::from_utf8(
            encode(FormatId::Ctxo, &env, &EncodeOptions::default())
                .unwrap()
                .bytes
        )
        .unwrap(),
        result
    );
}

#[test]
fn existing_meta_key_keeps_its_position() {
    let out = wrap(r#"{"_meta":{"x":1},"results":[1]}"#, None, None);
    assert_eq!(
        out,
        r#"{"_meta":{"totalItems":1,"returnedItems":1,"truncated":false,"totalBytes":31},"results":[1]}"#
    );
    let env = decode(FormatId::Ctxo, out.as_bytes(), &DecodeOptions::default()).unwrap();
    assert_eq!(
        encode(FormatId::Ctxo, &env, &EncodeOptions::default())
            .unwrap()
            .bytes,
        out.as_bytes()
    );
}

#[test]
fn a_payload_meta_replaced_by_the_report_is_a_loss() {
    // The reference writes `{...payload, _meta}`: the payload's own `_meta` is gone. Same
    // bytes as the reference, and the loss report says so.
    let env = Envelope::ok(json!({"_meta": {"x": 1}, "results": [1]}));
    let out = encode(FormatId::Ctxo, &env, &EncodeOptions::default()).unwrap();
    assert_eq!(
        String::from_utf8(out.bytes).unwrap(),
        r#"{"_meta":{"totalItems":1,"returnedItems":1,"truncated":false,"totalBytes":31},"results":[1]}"#
    );
    assert!(
        out.losses.items.iter().any(|l| l.field == "payload/_meta"),
        "{:?}",
        out.losses
    );
    // Without a `_meta` of its own, nothing of the payload is lost.
    let plain = encode(
        FormatId::Ctxo,
        &Envelope::ok(json!({"results": [1]})),
        &EncodeOptions::default(),
    )
    .unwrap();
    assert!(plain.losses.is_empty(), "{:?}", plain.losses);
}

const REFERENCE_JS: &str = concat!(
    include_str!("common/ctxo_reference.js"),
    r#"
const out = [];
for (const line of require('fs').readFileSync(0, 'utf8').split('\n')) {
  if (!line) continue;
  const [limit, root, payload] = JSON.parse(line);
  out.push(wrap(payload, limit, root));
}
process.stdout.write(out.join('\n') + '\n');
"#
);

#[test]
fn compat_truncation_matches_the_reference_algorithm_in_node() {
    let mut g = common::Gen::new(7);
    let keys = [
        "impactedSymbols",
        "importers",
        "results",
        "files",
        "clusters",
        "other",
        "_meta",
        "3",
        "symbolId",
    ];
    let mut cases = Vec::new();
    for _ in 0..1500 {
        let mut payload = Map::new();
        for _ in 0..g.below(5) + 1 {
            let key = keys[g.below(keys.len() as u64) as usize];
            let value = if g.below(4) == 0 {
                g.value(2)
            } else {
                Value::Array((0..g.below(60)).map(|_| g.value(2)).collect())
            };
            payload.insert(key.to_string(), value);
        }
        let payload = Value::Object(payload);
        let size = payload.to_string().len() as u64;
        let limit = 1 + g.below(size + 300);
        let root = if g.below(3) == 0 {
            Value::String("/wörk/spacé".into())
        } else {
            Value::Null
        };
        cases.push((limit as usize, root, payload));
    }
    let input: String = cases
        .iter()
        .map(|(l, r, p)| format!("{}\n", json!([l, r, p])))
        .collect();
    let expected = common::node(REFERENCE_JS, &input);
    // The cases must exercise the cut, not only the pass-through.
    let truncated = expected
        .lines()
        .filter(|l| l.contains(r#""truncated":true"#))
        .count();
    assert!(truncated > 300, "only {truncated} truncated cases");
    for ((limit, root, payload), expected) in cases.iter().zip(expected.lines()) {
        let env = Envelope {
            workspace: root.as_str().map(str::to_string),
            ..Envelope::ok(payload.clone())
        };
        let options = EncodeOptions {
            ctxo_limit: Some(*limit),
            ..EncodeOptions::default()
        };
        let ours = encode(FormatId::Ctxo, &env, &options).unwrap().bytes;
        assert_eq!(
            String::from_utf8(ours).unwrap(),
            expected,
            "limit {limit}, payload {payload}"
        );
    }
}
