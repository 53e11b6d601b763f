//! Secret `name=value` pairs in free text: `password=x`, `token: "a b"`, `\"api_key\":\"k\"`
//! (escaped JSON in a log line), `Authorization: Token abc`.
//!
//! A pair's name is a run of name characters (from its first letter or `_`) followed by a
//! separator, and a secret name holds a stem of a secret word (`pass`, `token`, `key`, …):
//! only the runs around the stems found in the text are looked at, and the pair's pattern
//! runs anchored at the name, never searching ahead. What is masked is what a search for
//! the pattern over the whole text, looking at each name in turn, masks.

use std::sync::LazyLock;

use regex::Regex;

use super::MASK;
use super::keys::{keeps_text_value, secret_key_rule};

/// `name = value` with a secret-like name; the value quoted (`"a b"`, `'x'`, `\"x\"` in
/// escaped JSON, `\\\"x\\\"` in JSON escaped again, at any depth) or bare, after an optional auth scheme (`Authorization: Token abc`).
pub(super) const PAIR_PATTERN: &str = concat!(
    r#"(?P<name>[A-Za-z_][A-Za-z0-9_.-]*)(?P<sep>\\*["']?[ \t]*[=:][ \t]*)"#,
    r#"(?:\\+"(?P<escaped>(?:[^"\\]|\\+[^"\\])*)\\+"|"(?P<double>(?:[^"\\\n]|\\.)*)"|'(?P<single>[^'\n]*)'"#,
    r#"|(?P<scheme>(?i:bearer|basic|token|digest|bot)[ \t]+)?(?P<bare>[^\s"',;&]+))"#,
);

/// [`PAIR_PATTERN`] matched only at the start of the text it is given.
static PAIR_HERE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(&format!(r"\A(?:{PAIR_PATTERN})")).expect("valid pair pattern"));

/// A byte of a pair's name (what `[A-Za-z0-9_.-]` matches). None of the bytes that may
/// follow a name in a pair is one, so a name always runs to the end of its run.
pub(super) const fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-')
}

/// Masks the values of secret-like `name=value` pairs; `None` when there is none. `stems`:
/// places in `text`, in order, inside every run of name characters that may be a secret
/// pair's name (where the stems of its secret words start, or where the run does:
/// [`super::anchors`]).
pub(super) fn redact_pairs(text: &str, stems: &[usize]) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = String::new();
    let mut copied = 0;
    // No pair starts before `from`: the end of the last name looked at, or of a masked value.
    let mut from = 0;
    for &stem in stems {
        if stem < from {
            continue;
        }
        let mut run_start = stem;
        while run_start > from && is_name_byte(bytes[run_start - 1]) {
            run_start -= 1;
        }
        let mut run_end = stem;
        while run_end < bytes.len() && is_name_byte(bytes[run_end]) {
            run_end += 1;
        }
        // The other stems of this run are in the same name.
        from = run_end;
        let Some(offset) = bytes[run_start..run_end]
            .iter()
            .position(|&b| b.is_ascii_alphabetic() || b == b'_')
        else {
            continue;
        };
        let name_start = run_start + offset;
        let Some(rule) = secret_key_rule(&text[name_start..run_end]) else {
            continue;
        };
        let Some(caps) = PAIR_HERE.captures(&text[name_start..]) else {
            continue;
        };
        let value = ["escaped", "double", "single", "bare"]
            .iter()
            .find_map(|g| caps.name(g))
            .expect("one value group matches");
        if keeps_text_value(&rule, value.as_str()) {
            continue;
        }
        let value_start = name_start + value.start();
        // A header or YAML line (`Passphrase: correct horse`): the value is the rest of it.
        let line_start = text[..name_start].rsplit('\n').next().unwrap_or("");
        let end = if caps.name("bare").is_some()
            && caps["sep"].contains(':')
            && line_start.trim().is_empty()
        {
            text[value_start..]
                .find(['\r', '\n'])
                .map_or(text.len(), |i| value_start + i)
        } else {
            name_start + value.end()
        };
        out.push_str(&text[copied..value_start]);
        out.push_str(MASK);
        copied = end;
        from = end.max(name_start + caps.get(0).map_or(text.len(), |m| m.end()));
    }
    (copied > 0).then(|| {
        out.push_str(&text[copied..]);
        out
    })
}
