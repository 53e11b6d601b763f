//! Redaction of a JSON value: object keys, the values under secret-like keys, and every
//! string, including the documents strings carry (JSON text, base64 of text or JSON).

use std::collections::HashSet;

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
use serde_json::{Map, Value};

use super::keys::{keeps_text_value, secret_key_rule};
use super::text::redact_text;
use super::{MASK, Redaction};
use crate::json::pointer;
use crate::json::writer::Dialect;

/// How many documents deep (JSON in a string in base64 in …) redaction looks.
pub(super) const MAX_EMBEDDED: usize = 4;

/// The shortest string read as base64 (shorter ones cannot hold a secret worth a rule).
const MIN_BASE64: usize = 12;

/// The longest prefix before base64 (`data:application/json;base64,`).
const MAX_BASE64_PREFIX: usize = 64;

/// Redacts a JSON value in place; `at` names where it is, for the report.
pub fn redact_value(value: &mut Value, at: &str, report: &mut Vec<Redaction>) {
    redact_nested(value, at, report, 0);
}

fn redact_nested(value: &mut Value, at: &str, report: &mut Vec<Redaction>, depth: usize) {
    match value {
        Value::String(s) => {
            if let Some(masked) = redact_string(s, at, report, depth) {
                *s = masked;
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter_mut().enumerate() {
                redact_nested(item, &format!("{at}/{i}"), report, depth);
            }
        }
        Value::Object(map) => redact_object(map, at, report, depth),
        _ => {}
    }
}

fn redact_object(
    map: &mut Map<String, Value>,
    at: &str,
    report: &mut Vec<Redaction>,
    depth: usize,
) {
    let redact_member = |key: &str, v: &mut Value, report: &mut Vec<Redaction>| {
        let here = pointer::join(at, key);
        match secret_key_rule(key) {
            Some(rule) => mask_member(rule, v, &here, report, depth),
            None => redact_nested(v, &here, report, depth),
        }
    };
    for_each_member(map, at, report, redact_member);
}

/// Calls `member` with each member of `map`, in order, after the keys holding a secret
/// are renamed (reported at their new place).
fn for_each_member(
    map: &mut Map<String, Value>,
    at: &str,
    report: &mut Vec<Redaction>,
    mut member: impl FnMut(&str, &mut Value, &mut Vec<Redaction>),
) {
    let renames = rename_keys(map.keys().map(String::as_str));
    if renames.iter().all(Option::is_none) {
        for (key, v) in map.iter_mut() {
            member(key, v, report);
        }
        return;
    }
    // A key holds a secret: rebuild the object, in its order, with the masked keys.
    let members = std::mem::take(map);
    for ((key, mut v), rename) in members.into_iter().zip(renames) {
        let key = match rename {
            Some(Renamed { key, rules }) => {
                let here = pointer::join(at, &key);
                report.extend(rules.into_iter().map(|rule| Redaction {
                    rule,
                    at: here.clone(),
                }));
                key
            }
            None => key,
        };
        member(&key, &mut v, report);
        map.insert(key, v);
    }
}

/// The value of a member whose key names a secret (rule `rule`, at `here`): masked, its
/// JSON type and shape kept ([`mask_leaves`]); reported once, at `here`, when anything was
/// masked. A value with nothing to hide (null, a flag, an empty or masked string, `0`, a
/// path under `pwd`, a container of such) changes only as any value's redaction changes
/// it (a key or a kept string holding a secret), and the member is not reported.
pub(super) fn mask_member(
    rule: String,
    v: &mut Value,
    here: &str,
    report: &mut Vec<Redaction>,
    depth: usize,
) {
    let before = report.len();
    if mask_leaves(&rule, v, here, report, depth) {
        report.insert(
            before,
            Redaction {
                rule,
                at: here.to_string(),
            },
        );
    }
}

/// Masks a value under a secret name of rule `rule`, keeping its JSON type and shape: a
/// string becomes `"***"` (unless [`keeps_text_value`] keeps it: it is then redacted as
/// any string), a number `0`, null and booleans stay; arrays and objects keep their
/// length, keys and order, and their leaves are masked so, at any depth (a member whose own
/// key names a secret by its rule). Keys are redacted as any key. Whether anything was
/// masked (what a kept string's redaction found is reported, at its place, as usual).
fn mask_leaves(
    rule: &str,
    v: &mut Value,
    at: &str,
    report: &mut Vec<Redaction>,
    depth: usize,
) -> bool {
    match v {
        Value::Null | Value::Bool(_) => false,
        Value::Number(n) => {
            let hidden = !is_zero(n);
            if hidden {
                *v = Value::from(0u8);
            }
            hidden
        }
        Value::String(s) if keeps_text_value(rule, s) => {
            if let Some(masked) = redact_string(s, at, report, depth) {
                *s = masked;
            }
            false
        }
        Value::String(_) => {
            *v = Value::String(MASK.into());
            true
        }
        Value::Array(items) => {
            let mut masked = false;
            for (i, item) in items.iter_mut().enumerate() {
                masked |= mask_leaves(rule, item, &format!("{at}/{i}"), report, depth);
            }
            masked
        }
        Value::Object(map) => {
            let mut masked = false;
            for_each_member(map, at, report, |key, v, report| {
                let inner = secret_key_rule(key);
                let rule = inner.as_deref().unwrap_or(rule);
                masked |= mask_leaves(rule, v, &pointer::join(at, key), report, depth);
            });
            masked
        }
    }
}

/// Whether a number is zero (`0`, `-0`, `0.0`): it hides nothing.
pub(super) fn is_zero(n: &serde_json::Number) -> bool {
    n.as_f64() == Some(0.0)
}

/// A key that held a secret: its masked text and the rules that fired.
pub(super) struct Renamed {
    pub(super) key: String,
    pub(super) rules: Vec<String>,
}

/// A key's masked text and the rules that fired.
type MaskedKey = (String, Vec<String>);

/// A key's masked text and the rules that fired: keys are redacted as any string is (a key
/// can be JSON text or base64 too).
fn mask_key(key: &str) -> Option<MaskedKey> {
    let mut found = Vec::new();
    let masked = redact_string(key, "", &mut found, 0)?;
    Some((masked, found.into_iter().map(|r| r.rule).collect()))
}

/// New names for the keys of one object, in order: `None` keeps a key, `Some` replaces a key
/// holding a secret by its masked text (`ghp_…` → `***`, `password=x` → `password=***`),
/// made unique among its siblings with ` (2)`, ` (3)`, … so no two members share a key.
pub(super) fn rename_keys<'k>(keys: impl Iterator<Item = &'k str>) -> Vec<Option<Renamed>> {
    let masked: Vec<(&str, Option<MaskedKey>)> = keys.map(|k| (k, mask_key(k))).collect();
    if masked.iter().all(|(_, m)| m.is_none()) {
        return masked.into_iter().map(|_| None).collect();
    }
    let mut taken: HashSet<String> = masked
        .iter()
        .filter(|(_, m)| m.is_none())
        .map(|(k, _)| (*k).to_string())
        .collect();
    masked
        .into_iter()
        .map(|(_, m)| {
            let (text, rules) = m?;
            let mut key = text.clone();
            let mut n = 2;
            while taken.contains(&key) {
                key = format!("{text} ({n})");
                n += 1;
            }
            taken.insert(key.clone());
            Some(Renamed { key, rules })
        })
        .collect()
}

/// The masked text of a string, or `None` when it holds no secret. A string that is a JSON
/// object or array is redacted as a document (and written again, compact, in the JS
/// dialect); a string that is base64 of text is redacted inside and encoded again in the
/// same alphabet; any other string by the free-text rules. Inner places are reported after
/// a `#` (`payload/body#/token`).
pub(super) fn redact_string(
    s: &str,
    at: &str,
    report: &mut Vec<Redaction>,
    depth: usize,
) -> Option<String> {
    if depth < MAX_EMBEDDED {
        if let Some(masked) = redact_embedded_json(s, at, report, depth) {
            return Some(masked);
        }
        if let Some(masked) = redact_base64(s, at, report, depth) {
            return Some(masked);
        }
    }
    let (masked, rules) = redact_text(s)?;
    report.extend(rules.into_iter().map(|rule| Redaction {
        rule: rule.to_string(),
        at: at.to_string(),
    }));
    Some(masked)
}

/// A string holding a JSON object or array (a tool's result passed on as text).
fn redact_embedded_json(
    s: &str,
    at: &str,
    report: &mut Vec<Redaction>,
    depth: usize,
) -> Option<String> {
    let trimmed = s.trim();
    if !(trimmed.starts_with('{') || trimmed.starts_with('[')) {
        return None;
    }
    // Most documents hold nothing to redact: tell so in one pass over the text, without
    // building them (a large `structuredContent`'s text mirror).
    if super::stream::is_clean_document(trimmed, depth + 1) == Some(true) {
        return None;
    }
    let mut doc: Value = serde_json::from_str(trimmed).ok()?;
    let before = report.len();
    redact_nested(&mut doc, &format!("{at}#"), report, depth + 1);
    if report.len() == before {
        return None;
    }
    // The whitespace around the document stays as it was.
    let start = s.len() - s.trim_start().len();
    let end = s.trim_end().len();
    let written = crate::json::to_string(&doc, Dialect::Js);
    Some(format!("{}{written}{}", &s[..start], &s[end..]))
}

/// The prefix and the body of a string that may be base64 (`redact_base64`): a body of at
/// least [`MIN_BASE64`] bytes of the base64 alphabets, after a prefix of fewer than
/// [`MAX_BASE64_PREFIX`] bytes ending in the first `:` or `,`, if any.
pub(super) fn base64_body(s: &str) -> Option<(&str, &str)> {
    if s.len() < MIN_BASE64 {
        return None;
    }
    let (prefix, body) = match memchr::memchr2(b':', b',', s.as_bytes()) {
        Some(i) if i < MAX_BASE64_PREFIX => s.split_at(i + 1),
        _ => ("", s),
    };
    (body.len() >= MIN_BASE64 && body.bytes().all(super::escaped::is_base64_byte))
        .then_some((prefix, body))
}

/// A string that is base64 of UTF-8 text (an encoded config), possibly after a short
/// prefix ending in `:` or `,` (tool-envelope-v1's `__ENVELOPE_V1__:` block, a
/// `data:…;base64,` URL), which is kept.
fn redact_base64(s: &str, at: &str, report: &mut Vec<Redaction>, depth: usize) -> Option<String> {
    let (prefix, body) = base64_body(s)?;
    let engines = [&STANDARD, &STANDARD_NO_PAD, &URL_SAFE, &URL_SAFE_NO_PAD];
    let (engine, text) = engines.into_iter().find_map(|engine| {
        let bytes = engine.decode(body).ok()?;
        String::from_utf8(bytes).ok().map(|text| (engine, text))
    })?;
    let masked = redact_string(&text, &format!("{at}#"), report, depth + 1)?;
    Some(format!("{prefix}{}", engine.encode(masked)))
}
