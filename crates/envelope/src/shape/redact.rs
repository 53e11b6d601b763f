//! Secrets redaction on parsed values (never on JSON text, so the output is always valid).
//!
//! Two kinds of rules:
//! - keys: the value under a secret-like key becomes `"***"`. Keys are split into words
//!   (`_`, `-`, `.`, spaces, camelCase), and a rule matches whole words, so `max_tokens`,
//!   `author` and `oauth_url` are not secrets while `auth_token` and `X-Api-Key` are.
//! - free text: tokens inside any string (bearer tokens, cloud and SaaS keys, JWTs, private
//!   key blocks, `password=…` pairs) are replaced in place.
//!
//! Redacting twice changes nothing the second time, and reports nothing.

use std::sync::LazyLock;

use regex::{Captures, Regex};
use serde_json::Value;

use crate::json::pointer;
use crate::model::{Envelope, Payload, Source};

/// What replaces a secret.
pub const MASK: &str = "***";

/// One redaction: which rule, where (never the secret itself).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Redaction {
    /// Stable rule id (`key:password`, `text:bearer`, …).
    pub rule: String,
    /// Where: a canonical field, then a JSON Pointer inside it (`payload/config/token`).
    pub at: String,
}

/// Secret key words, as sequences of lower-case words.
const SECRET_KEYS: [&[&str]; 19] = [
    &["password"],
    &["passwd"],
    &["pwd"],
    &["secret"],
    &["api", "key"],
    &["apikey"],
    &["token"],
    &["auth"],
    &["authorization"],
    &["private", "key"],
    &["privatekey"],
    &["credential"],
    &["credentials"],
    &["encryption", "key"],
    &["signing", "key"],
    &["ssh", "key"],
    &["ssl", "key"],
    &["session", "secret"],
    &["client", "secret"],
];

/// The words of a key: split at separators and lower-to-upper case changes, lower-cased.
fn key_words(key: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut current = String::new();
    let mut previous_lower = false;
    for c in key.chars() {
        if !c.is_alphanumeric() {
            if !current.is_empty() {
                words.push(std::mem::take(&mut current));
            }
            previous_lower = false;
            continue;
        }
        if c.is_uppercase() && previous_lower && !current.is_empty() {
            words.push(std::mem::take(&mut current));
        }
        previous_lower = c.is_lowercase() || c.is_ascii_digit();
        current.extend(c.to_lowercase());
    }
    if !current.is_empty() {
        words.push(current);
    }
    words
}

/// The rule id a key matches, if it names a secret.
pub fn secret_key_rule(key: &str) -> Option<String> {
    let words = key_words(key);
    SECRET_KEYS.iter().find_map(|rule| {
        words
            .windows(rule.len())
            .any(|w| w.iter().zip(rule.iter()).all(|(a, b)| a == b))
            .then(|| format!("key:{}", rule.join("_")))
    })
}

struct TextRule {
    id: &'static str,
    regex: Regex,
    /// Capture group kept before the mask (`password=` in `password=***`), if any.
    keep: Option<usize>,
}

static TEXT_RULES: LazyLock<Vec<TextRule>> = LazyLock::new(|| {
    let rule = |id, pattern: &str, keep| TextRule {
        id,
        regex: Regex::new(pattern).expect("valid redaction pattern"),
        keep,
    };
    vec![
        rule(
            "text:private_key",
            r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----[\s\S]*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----",
            None,
        ),
        rule(
            "text:jwt",
            r"\beyJ[A-Za-z0-9_-]+\.eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*",
            None,
        ),
        rule(
            "text:bearer",
            r"(?i)(\bbearer\s+)[A-Za-z0-9\-._~+/]+=*",
            Some(1),
        ),
        rule(
            "text:aws_access_key",
            r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",
            None,
        ),
        rule(
            "text:github_token",
            r"\bgh[pousr]_[A-Za-z0-9]{36,255}\b",
            None,
        ),
        rule("text:slack_token", r"\bxox[baprs]-[A-Za-z0-9-]{10,}", None),
        rule(
            "text:stripe_key",
            r"\b[rs]k_(?:live|test)_[A-Za-z0-9]{10,}",
            None,
        ),
        rule(
            "text:secret_pair",
            r#"(?i)(\b(?:password|passwd|pwd|secret|token|api[_-]?key|access[_-]?token|refresh[_-]?token|client[_-]?secret)\s*[=:]\s*"?)([^\s"',;&]+)"#,
            Some(1),
        ),
    ]
});

/// `text` with every free-text secret masked, and the rules that matched.
pub fn redact_text(text: &str) -> Option<(String, Vec<&'static str>)> {
    let mut current = std::borrow::Cow::Borrowed(text);
    let mut fired = Vec::new();
    for rule in TEXT_RULES.iter() {
        let mut hit = false;
        let replaced = rule.regex.replace_all(&current, |caps: &Captures<'_>| {
            let whole = caps.get(0).map_or("", |m| m.as_str());
            let kept = rule
                .keep
                .and_then(|i| caps.get(i))
                .map_or("", |m| m.as_str());
            // Already masked: leave it, so a second pass reports nothing.
            if &whole[kept.len()..] == MASK {
                return whole.to_string();
            }
            hit = true;
            format!("{kept}{MASK}")
        });
        if hit {
            fired.push(rule.id);
            current = std::borrow::Cow::Owned(replaced.into_owned());
        }
    }
    (!fired.is_empty()).then(|| (current.into_owned(), fired))
}

/// Redacts a JSON value in place; `at` names where it is, for the report.
pub fn redact_value(value: &mut Value, at: &str, report: &mut Vec<Redaction>) {
    match value {
        Value::String(s) => {
            if let Some((masked, rules)) = redact_text(s) {
                *s = masked;
                report.extend(rules.into_iter().map(|rule| Redaction {
                    rule: rule.to_string(),
                    at: at.to_string(),
                }));
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter_mut().enumerate() {
                redact_value(item, &format!("{at}/{i}"), report);
            }
        }
        Value::Object(map) => {
            for (key, v) in map.iter_mut() {
                let here = pointer::join(at, key);
                match secret_key_rule(key) {
                    Some(rule) if !is_masked_or_empty(v) => {
                        *v = Value::String(MASK.into());
                        report.push(Redaction { rule, at: here });
                    }
                    Some(_) => {}
                    None => redact_value(v, &here, report),
                }
            }
        }
        _ => {}
    }
}

/// Nothing to hide: already masked, null, or empty.
fn is_masked_or_empty(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::String(s) => s.is_empty() || s == MASK,
        _ => false,
    }
}

fn redact_string(s: &mut String, at: &str, report: &mut Vec<Redaction>) {
    let mut v = Value::String(std::mem::take(s));
    redact_value(&mut v, at, report);
    if let Value::String(masked) = v {
        *s = masked;
    }
}

/// Redacts every part of an envelope that can carry text: payload, summary, presentation,
/// error, source metadata (HTTP headers, MCP `_meta`) and unknown fields.
pub fn redact_envelope(env: &mut Envelope) -> Vec<Redaction> {
    let mut report = Vec::new();
    match &mut env.payload {
        Payload::Json(v) => redact_value(v, "payload", &mut report),
        Payload::Text(s) => redact_string(s, "payload", &mut report),
        Payload::Blocks(blocks) => {
            for (i, b) in blocks.iter_mut().enumerate() {
                redact_value(b, &format!("payload/{i}"), &mut report);
            }
        }
        Payload::Bytes { .. } | Payload::None => {}
    }
    if let Some(s) = &mut env.summary {
        redact_string(s, "summary", &mut report);
    }
    if let Some(blocks) = &mut env.presentation {
        for (i, b) in blocks.iter_mut().enumerate() {
            redact_value(b, &format!("presentation/{i}"), &mut report);
        }
    }
    if let Some(e) = &mut env.error {
        redact_string(&mut e.message, "error.message", &mut report);
        for (name, field) in [
            ("error.suggested_action", &mut e.suggested_action),
            ("error.hint", &mut e.hint),
        ] {
            if let Some(s) = field {
                redact_string(s, name, &mut report);
            }
        }
        if let Some(d) = &mut e.details {
            redact_value(d, "error.details", &mut report);
        }
    }
    match &mut env.source {
        Some(Source::Http { headers, .. }) => {
            let mut v = Value::Object(std::mem::take(headers));
            redact_value(&mut v, "source.headers", &mut report);
            if let Value::Object(h) = v {
                *headers = h;
            }
        }
        Some(Source::Mcp {
            result_meta: Some(m),
        }) => redact_value(m, "source._meta", &mut report),
        _ => {}
    }
    for ext in &mut env.extensions {
        let at = format!("extensions{}", ext.pointer);
        // An unknown field named like a secret is masked whole, as in a payload.
        let name = ext.pointer.rsplit('/').next().unwrap_or("");
        match secret_key_rule(name) {
            Some(rule) if !is_masked_or_empty(&ext.value) => {
                ext.value = Value::String(MASK.into());
                report.push(Redaction { rule, at });
            }
            Some(_) => {}
            None => redact_value(&mut ext.value, &at, &mut report),
        }
    }
    report
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keys_match_on_word_boundaries() {
        for secret in [
            "password",
            "db_password",
            "apiKey",
            "X-Api-Key",
            "api_key",
            "apikey",
            "auth_token",
            "AUTHORIZATION",
            "clientSecret",
            "private_key",
            "ssh-key",
            "credentials",
            "refresh_token",
            "Token",
        ] {
            assert!(secret_key_rule(secret).is_some(), "{secret}");
        }
        for plain in [
            "max_tokens",
            "author",
            "oauth_url",
            "tokens",
            "keyboard",
            "monkey",
            "passage",
            "authority",
            "authored_by",
            "key",
        ] {
            assert_eq!(secret_key_rule(plain), None, "{plain}");
        }
    }

    #[test]
    fn free_text_patterns() {
        let cases = [
            (
                "Authorization: Bearer abc.def-123",
                "Authorization: Bearer ***",
            ),
            ("key AKIAABCDEFGHIJKLMNOP used", "key *** used"),
            (
                "ghp_0123456789abcdefghijABCDEFGHIJ012345 leaked",
                "*** leaked",
            ),
            ("jwt eyJhbGciOi.eyJzdWIiOi.sig-_x end", "jwt *** end"),
            ("slack xoxb-1234567890-abc", "slack ***"),
            ("stripe sk_live_abcdefghij12", "stripe ***"),
            ("url?password=hunter2&x=1", "url?password=***&x=1"),
            ("token: \"abc\"", "token: \"***\""),
            (
                "-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY----- after",
                "*** after",
            ),
        ];
        for (input, expected) in cases {
            let (masked, rules) = redact_text(input).unwrap_or_else(|| panic!("{input}"));
            assert_eq!(masked, expected);
            assert!(!rules.is_empty());
            // Idempotent: a second pass finds nothing.
            assert_eq!(redact_text(&masked), None, "{masked}");
        }
        assert_eq!(redact_text("max_tokens=5 and tokens: 7"), None);
    }

    #[test]
    fn values_under_secret_keys_become_the_mask_and_the_report_has_no_secret() {
        let mut v = json!({"user": "ann", "password": "hunter2", "nested": {"apiKey": {"v": 1}, "max_tokens": 5}, "empty": {"token": ""}});
        let mut report = Vec::new();
        redact_value(&mut v, "payload", &mut report);
        assert_eq!(
            v,
            json!({"user": "ann", "password": "***", "nested": {"apiKey": "***", "max_tokens": 5}, "empty": {"token": ""}})
        );
        assert_eq!(
            report,
            vec![
                Redaction {
                    rule: "key:password".into(),
                    at: "payload/password".into()
                },
                Redaction {
                    rule: "key:api_key".into(),
                    at: "payload/nested/apiKey".into()
                },
            ]
        );
        let mut again = Vec::new();
        redact_value(&mut v, "payload", &mut again);
        assert!(again.is_empty());
    }
}
