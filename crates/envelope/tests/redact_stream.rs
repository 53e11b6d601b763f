//! `redact_json_text` (one pass over the text) writes exactly what `redact_value` on the
//! parsed text, then the compact JS-dialect writer, writes, and reports the same: the
//! redaction corpus planted in random documents, written compact or spread out, with or
//! without escapes the writer does not use.

use envelope::json::{Dialect, to_vec};
use envelope::shape::redact::{compact_json_text, redact_json_text, redact_value};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

/// The corpus: texts with secrets, texts without, secret and plain key names.
struct Corpus {
    texts: Vec<String>,
    names: Vec<String>,
}

fn corpus() -> Corpus {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/redaction/corpus.json");
    let doc: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let strings = |key: &str| -> Vec<String> {
        doc[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.get("text").unwrap_or(v).as_str().unwrap().to_string())
            .collect()
    };
    let mut texts = strings("redact");
    texts.extend(strings("keep"));
    let mut names = strings("secret_names");
    names.extend(strings("keep_names"));
    Corpus { texts, names }
}

/// A string: from the corpus, plain, or a document or base64 of one holding corpus texts.
fn string(corpus: &'static Corpus) -> impl Strategy<Value = String> {
    let texts = prop::sample::select(corpus.texts.clone());
    let names = prop::sample::select(corpus.names.clone());
    prop_oneof![
        3 => texts.clone(),
        2 => "[a-z /._-]{0,20}",
        1 => Just(String::new()),
        1 => Just("***".to_string()),
        1 => (names.clone(), texts.clone()).prop_map(|(k, t)| json!({ k: t, "n": [1, 2.5] }).to_string()),
        1 => (names, texts.clone()).prop_map(|(k, t)| format!("  [{}] ", json!({ k: t }))),
        1 => texts.prop_map(|t| {
            use base64::Engine as _;
            base64::engine::general_purpose::STANDARD.encode(t)
        }),
    ]
}

fn scalar(corpus: &'static Corpus) -> impl Strategy<Value = Value> {
    prop_oneof![
        4 => string(corpus).prop_map(Value::String),
        1 => any::<i64>().prop_map(Value::from),
        1 => any::<u64>().prop_map(Value::from),
        1 => prop::num::f64::NORMAL.prop_map(Value::from),
        1 => prop::sample::select(vec![1.0, -0.0, 1e21, 1.5e-7, 100.0]).prop_map(Value::from),
        1 => any::<bool>().prop_map(Value::from),
        1 => Just(Value::Null),
    ]
}

/// A key: mostly the corpus's names (secret or not), sometimes a corpus text (a key
/// holding a secret), an array index, or a plain name.
fn key(corpus: &'static Corpus) -> impl Strategy<Value = String> {
    prop_oneof![
        4 => prop::sample::select(corpus.names.clone()),
        4 => "[a-z_]{1,8}",
        1 => prop::sample::select(corpus.texts.clone()),
        1 => (0u32..20).prop_map(|i| i.to_string()),
    ]
}

fn document(corpus: &'static Corpus) -> impl Strategy<Value = Value> {
    scalar(corpus).prop_recursive(4, 48, 6, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((key(corpus), inner), 0..6)
                .prop_map(|members| Value::Object(members.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// The text of `value` as an upstream may write it.
fn written(value: &Value, pretty: bool, escape_slashes: bool) -> String {
    let text = match pretty {
        true => serde_json::to_string_pretty(value).unwrap(),
        false => serde_json::to_string(value).unwrap(),
    };
    // `/` only occurs inside strings in JSON text: `\/` is the same string.
    match escape_slashes {
        true => text.replace('/', "\\/"),
        false => text,
    }
}

fn tree(text: &str) -> (Vec<u8>, Vec<envelope::shape::redact::Redaction>) {
    let mut value: Value = serde_json::from_str(text).unwrap();
    let mut report = Vec::new();
    redact_value(&mut value, "result", &mut report);
    (to_vec(&value, Dialect::Js), report)
}

/// Whether `value` has a key holding a secret or a key that is an array index.
fn has_odd_key(value: &Value) -> bool {
    match value {
        Value::Array(items) => items.iter().any(has_odd_key),
        Value::Object(map) => map.iter().any(|(k, v)| {
            let mut key = Value::String(k.clone());
            let mut report = Vec::new();
            redact_value(&mut key, "", &mut report);
            !report.is_empty() || k.bytes().all(|b| b.is_ascii_digit()) || has_odd_key(v)
        }),
        _ => false,
    }
}

static CORPUS: std::sync::LazyLock<Corpus> = std::sync::LazyLock::new(corpus);

proptest! {
    #![proptest_config(ProptestConfig::with_cases(600))]

    #[test]
    fn the_text_pass_writes_what_the_value_path_writes(
        doc in document(&CORPUS),
        pretty in any::<bool>(),
        escape_slashes in any::<bool>(),
    ) {
        let text = written(&doc, pretty, escape_slashes);
        let (expected, expected_report) = tree(&text);
        let redacted = redact_json_text(text.as_bytes(), "result");
        // Only keys holding secrets and number-like keys are left to the value path here
        // (the generated text has no duplicate keys and no syntax errors).
        prop_assert!(redacted.is_some() || has_odd_key(&doc), "{}", text);
        if let Some(redacted) = redacted {
            let bytes = redacted.bytes.unwrap_or_else(|| text.clone().into_bytes());
            prop_assert_eq!(String::from_utf8(bytes).unwrap(), String::from_utf8(expected.clone()).unwrap());
            prop_assert_eq!(redacted.report, expected_report);
        }
        let plain: Value = serde_json::from_str(&text).unwrap();
        if let Some(compact) = compact_json_text(text.as_bytes()) {
            let bytes = compact.unwrap_or_else(|| text.clone().into_bytes());
            prop_assert_eq!(bytes, to_vec(&plain, Dialect::Js));
        }
    }
}

#[test]
fn the_pass_handles_the_common_cases_itself() {
    // Secrets in strings and under keys, documents in strings, escapes, numbers: written by
    // the pass, not left to the value path.
    let text = r#"{ "content": [ {"type": "text", "text": "Authorization: Bearer abcDEF123456\nok"},
        {"type":"text","text":"{\"password\":\"hunter2\",\"rows\":[1,2]}"} ],
        "structuredContent": {"api_key": {"nested": true, "id": 7}, "token": "", "path": "a\/b\u00e9",
        "n": [1.0, 1e2, -0, 12345678901234567890] } }"#;
    let redacted = redact_json_text(text.as_bytes(), "result").expect("written by the pass");
    let (expected, report) = tree(text);
    assert_eq!(redacted.bytes.unwrap(), expected);
    assert_eq!(redacted.report, report);
    assert_eq!(report.len(), 3, "{report:?}");
    assert!(
        String::from_utf8(expected)
            .unwrap()
            .contains(r#""path":"a/bé""#)
    );
}

#[test]
fn what_the_pass_leaves_to_the_value_path() {
    for text in [
        r#"{"a":1,"a":2}"#,                                  // duplicate key
        r#"{"b":1,"2":2}"#,                                  // array index after a name
        r#"{"ghp_0123456789abcdefghijABCDEFGHIJ012345":1}"#, // a key holding a secret
        r#"{"a":"\ud800"}"#,                                 // lone surrogate
        r#"{"a":1e400}"#,                                    // out of range
        r#"{"a":[1,]}"#,                                     // syntax
        r#"{"a":1} x"#,                                      // trailing text
        "\"a\u{1}\"",                                        // control character
    ] {
        assert!(redact_json_text(text.as_bytes(), "r").is_none(), "{text}");
    }
    let deep = format!("{}{}", "[".repeat(120), "]".repeat(120));
    assert!(redact_json_text(deep.as_bytes(), "r").is_none());
}

/// A text of more than 64 KiB (what the pass masks a piece at a time): corpus texts and
/// plain lines joined by newlines (or not), sometimes a document or base64 at its start.
fn long_text(corpus: &'static Corpus) -> impl Strategy<Value = String> {
    let texts = prop::sample::select(corpus.texts.clone());
    let line = prop_oneof![3 => "[a-zA-Z0-9 /._=:-]{0,80}", 1 => texts];
    let start = prop_oneof![
        6 => Just(String::new()),
        1 => Just("{\"rows\": [1, 2]}\n".to_string()),
        1 => Just("[1,".to_string()),
        1 => Just("Z2hwXzAxMjM0NTY3ODlhYmNkZWZnaGlqQUJDREVGR0hJSjAxMjM0NQ==".to_string()),
    ];
    let separator = prop_oneof![8 => Just("\n"), 1 => Just(" "), 1 => Just("\r\n")];
    (start, prop::collection::vec(line, 50..400), separator).prop_map(|(start, lines, sep)| {
        let mut text = start;
        while text.len() <= 70_000 {
            for line in &lines {
                text.push_str(line);
                text.push_str(sep);
            }
        }
        text
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]

    #[test]
    fn long_texts_are_masked_as_the_value_path_masks_them(
        text in long_text(&CORPUS),
        place in 0..3usize,
        escape_slashes in any::<bool>(),
    ) {
        let doc = match place {
            0 => Value::String(text),
            1 => json!({"data": {"log": text, "n": 1}, "meta": {"source": "local"}}),
            _ => json!({"content": [{"type": "text", "text": "ok"}, {"type": "text", "text": text}]}),
        };
        let text = written(&doc, false, escape_slashes);
        let (expected, expected_report) = tree(&text);
        let redacted = redact_json_text(text.as_bytes(), "result").expect("written by the pass");
        let bytes = redacted.bytes.unwrap_or_else(|| text.clone().into_bytes());
        prop_assert!(bytes == expected, "the pass and the value path differ");
        prop_assert_eq!(redacted.report, expected_report);
    }
}
