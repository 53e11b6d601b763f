//! Looking for a secret everywhere a reader of some output could find it: in the bytes, in
//! every string and key once unescaped, in JSON held in strings and in base64 (also after a
//! `prefix:`, as tool-envelope-v1's block), to any depth. Shared by the library and CLI
//! redaction tests.
#![allow(dead_code)]

use envelope::base64::{decode_lenient, encode};
use serde_json::Value;

/// Every text a reader of `bytes` can get at, one after the other.
pub fn exposed(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes).into_owned();
    let mut out = text.clone();
    // A document, or NDJSON lines.
    match serde_json::from_str::<Value>(&text) {
        Ok(v) => collect(&v, &mut out, 0),
        Err(_) => {
            for line in text.lines() {
                if let Ok(v) = serde_json::from_str::<Value>(line) {
                    collect(&v, &mut out, 0);
                }
            }
        }
    }
    out
}

fn collect(v: &Value, out: &mut String, depth: usize) {
    match v {
        Value::String(s) => collect_string(s, out, depth),
        Value::Array(items) => items.iter().for_each(|i| collect(i, out, depth)),
        Value::Object(map) => {
            for (k, v) in map {
                collect_string(k, out, depth);
                collect(v, out, depth);
            }
        }
        _ => {}
    }
}

fn collect_string(s: &str, out: &mut String, depth: usize) {
    out.push('\n');
    out.push_str(s);
    if depth >= 6 {
        return;
    }
    if let Ok(inner) = serde_json::from_str::<Value>(s) {
        collect(&inner, out, depth + 1);
    }
    let tail = s.rsplit(':').next().unwrap_or(s);
    let base64ish = |c: &str| {
        c.len() >= 8
            && c.bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'-' | b'_' | b'='))
    };
    for candidate in [s.trim(), tail.trim()] {
        if base64ish(candidate)
            && let Ok(text) = String::from_utf8(decode_lenient(candidate.as_bytes()))
        {
            collect_string(&text, out, depth + 1);
        }
    }
}

/// Whether `secret` can be found in `bytes`: as is, JSON-escaped, base64-encoded, or in
/// anything [`exposed`] decodes.
pub fn leaks(bytes: &[u8], secret: &str) -> bool {
    let raw = String::from_utf8_lossy(bytes);
    let escaped = serde_json::to_string(secret).unwrap();
    let escaped = &escaped[1..escaped.len() - 1];
    raw.contains(escaped)
        || raw.contains(&encode(secret.as_bytes()))
        || exposed(bytes).contains(secret)
}

/// Every file under `dir` (a store folder), read whole.
pub fn files_under(dir: &std::path::Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(files_under(&path));
        } else if let Ok(bytes) = std::fs::read(&path) {
            out.push((path, bytes));
        }
    }
    out
}

/// The redaction corpus: texts holding a secret (and the secret), texts to keep, secret and
/// plain key names.
pub struct Corpus {
    pub redact: Vec<(String, String)>,
    pub keep: Vec<String>,
    pub secret_names: Vec<String>,
    pub keep_names: Vec<String>,
}

pub fn corpus() -> Corpus {
    let text = include_str!("corpus.json");
    let doc: Value = serde_json::from_str(text).unwrap();
    let strings = |key: &str| -> Vec<String> {
        doc[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect()
    };
    Corpus {
        redact: doc["redact"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| {
                (
                    e["text"].as_str().unwrap().to_string(),
                    e["secret"].as_str().unwrap().to_string(),
                )
            })
            .collect(),
        keep: strings("keep"),
        secret_names: strings("secret_names"),
        keep_names: strings("keep_names"),
    }
}
