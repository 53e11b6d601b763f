//! Secrets in free text: tokens of known shapes, private key blocks and `name=value` pairs
//! whose name is secret-like ([`secret_key_rule`](super::keys::secret_key_rule)).
//!
//! Each secret is replaced in place by [`MASK`], keeping what names it (`password=***`,
//! `Bearer ***`), so the text still reads. Text that is already masked is left alone, so a
//! second pass finds nothing.

use std::sync::LazyLock;

use regex::{Captures, Regex, RegexSet};

use super::MASK;
use super::keys::secret_key_rule;

/// A secret recognised by its shape.
struct ShapeRule {
    id: &'static str,
    regex: Regex,
    /// Capture group kept before the mask (`Bearer ` in `Bearer ***`), if any.
    keep: Option<usize>,
    /// A further test of the match (a bearer "token" must look like one), if any.
    accept: Option<fn(&Captures<'_>) -> bool>,
}

static SHAPE_RULES: LazyLock<Vec<ShapeRule>> = LazyLock::new(|| {
    let rule = |id, pattern: &str, keep, accept| ShapeRule {
        id,
        regex: Regex::new(pattern).expect("valid redaction pattern"),
        keep,
        accept,
    };
    vec![
        // A block cut before its END line is masked up to where its base64 (and header
        // lines) stop.
        rule(
            "text:private_key",
            r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----(?:[\s\S]*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----|[A-Za-z0-9+/=\s:,\\-]*)",
            None,
            None,
        ),
        rule(
            "text:jwt",
            r"\beyJ[A-Za-z0-9_-]+\.eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*",
            None,
            None,
        ),
        rule(
            "text:bearer",
            r"(?i)(\bbearer[ \t]+)([A-Za-z0-9\-._~+/]+=*)",
            Some(1),
            Some(looks_random),
        ),
        rule(
            "text:basic_auth",
            r"(?i)(\bbasic[ \t]+)([A-Za-z0-9+/]{4,}={0,2})",
            Some(1),
            Some(is_basic_credential),
        ),
        rule(
            "text:aws_access_key",
            r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",
            None,
            None,
        ),
        rule(
            "text:github_token",
            r"\b(?:gh[pousr]_[A-Za-z0-9]{36,255}\b|github_pat_[A-Za-z0-9_]{22,255})",
            None,
            None,
        ),
        rule(
            "text:slack_token",
            r"\b(?:xox[abposr]|xapp)-[A-Za-z0-9-]{10,}",
            None,
            None,
        ),
        rule(
            "text:stripe_key",
            r"\b[rs]k_(?:live|test)_[A-Za-z0-9]{10,}",
            None,
            None,
        ),
        rule(
            "text:openai_key",
            r"\bsk-(?:proj-|ant-)?[A-Za-z0-9_-]{20,}",
            None,
            None,
        ),
        rule(
            "text:google_api_key",
            r"\bAIza[0-9A-Za-z_-]{35}",
            None,
            None,
        ),
        // A cookie header's value is a list of name=value pairs: all of the line goes.
        rule(
            "text:cookie",
            r#"(?im)(\b(?:set-)?cookies?\\?["']?[ \t]*[:=][ \t]*)([^\r\n]+)"#,
            Some(1),
            None,
        ),
    ]
});

/// All the shape rules' patterns at once, to find which may match in one pass.
static SHAPE_SET: LazyLock<RegexSet> = LazyLock::new(|| {
    RegexSet::new(SHAPE_RULES.iter().map(|r| r.regex.as_str())).expect("valid redaction patterns")
});

/// A bearer token has a digit or both cases (`bearer of this letter` is prose).
fn looks_random(caps: &Captures<'_>) -> bool {
    let token = caps.get(2).map_or("", |m| m.as_str());
    token.len() >= 8
        && (token.bytes().any(|b| b.is_ascii_digit())
            || (token.bytes().any(|b| b.is_ascii_uppercase())
                && token.bytes().any(|b| b.is_ascii_lowercase())))
}

/// Basic credentials are base64 of `user:password`.
fn is_basic_credential(caps: &Captures<'_>) -> bool {
    let token = caps.get(2).map_or("", |m| m.as_str());
    crate::base64::decode_strict(token.as_bytes())
        .ok()
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .is_some_and(|text| text.contains(':'))
}

/// `name = value` with a secret-like name; the value quoted (`"a b"`, `'x'`, `\"x\"` in
/// escaped JSON) or bare, after an optional auth scheme (`Authorization: Token abc`).
static PAIR: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r#"(?P<name>[A-Za-z_][A-Za-z0-9_.-]*)(?P<sep>\\?["']?[ \t]*[=:][ \t]*)"#,
        r#"(?:\\"(?P<escaped>(?:[^"\\]|\\[^"])*)\\"|"(?P<double>(?:[^"\\\n]|\\.)*)"|'(?P<single>[^'\n]*)'"#,
        r#"|(?P<scheme>(?i:bearer|basic|token|digest|bot)[ \t]+)?(?P<bare>[^\s"',;&]+))"#,
    ))
    .expect("valid pair pattern")
});

/// Masks the values of secret-like `name=value` pairs; `None` when there is none.
fn redact_pairs(text: &str) -> Option<String> {
    let mut out = String::new();
    let mut copied = 0;
    let mut from = 0;
    while let Some(found) = PAIR.find_at(text, from) {
        // The name is the run of name characters the match starts with (none of the
        // characters that may follow it is one): most names are no secret, told without
        // the slower search for the groups.
        let name_len = text[found.start()..]
            .bytes()
            .take_while(|&b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
            .count();
        if secret_key_rule(&text[found.start()..found.start() + name_len]).is_none() {
            from = found.start() + name_len;
            continue;
        }
        let caps = PAIR.captures_at(text, from).expect("matched above");
        let name = &caps["name"];
        let value = ["escaped", "double", "single", "bare"]
            .iter()
            .find_map(|g| caps.name(g))
            .expect("one value group matches");
        if secret_key_rule(name).is_none() || value.as_str() == MASK || value.as_str().is_empty() {
            // Not a secret: look again right after the name (its value may be a pair).
            from = caps.name("name").map_or(text.len(), |m| m.end());
            continue;
        }
        // A header or YAML line (`Passphrase: correct horse`): the value is the rest of it.
        let name_start = caps.name("name").map_or(0, |m| m.start());
        let line_start = text[..name_start].rsplit('\n').next().unwrap_or("");
        let end = if caps.name("bare").is_some()
            && caps["sep"].contains(':')
            && line_start.trim().is_empty()
        {
            text[value.start()..]
                .find(['\r', '\n'])
                .map_or(text.len(), |i| value.start() + i)
        } else {
            value.end()
        };
        out.push_str(&text[copied..value.start()]);
        out.push_str(MASK);
        copied = end;
        from = end.max(caps.get(0).map_or(text.len(), |m| m.end()));
    }
    (copied > 0).then(|| {
        out.push_str(&text[copied..]);
        out
    })
}

/// `text` with every free-text secret masked, and the ids of the rules that matched (in
/// rule order, each once).
pub fn redact_text(text: &str) -> Option<(String, Vec<&'static str>)> {
    // No rule matches fewer than 10 bytes without `=` or `:` (the shortest JWT has 10):
    // most keys and values of a payload are that short.
    if text.len() < 10 && !text.contains(['=', ':']) {
        return None;
    }
    let mut current = std::borrow::Cow::Borrowed(text);
    let mut fired = Vec::new();
    // One pass over the text tells which rules can match; only those run.
    let candidates = SHAPE_SET.matches(text);
    for rule in candidates.iter().map(|i| &SHAPE_RULES[i]) {
        let mut hit = false;
        let replaced = rule.regex.replace_all(&current, |caps: &Captures<'_>| {
            let whole = caps.get(0).map_or("", |m| m.as_str());
            let kept = rule
                .keep
                .and_then(|i| caps.get(i))
                .map_or("", |m| m.as_str());
            // Already masked, or not a secret after all: leave it.
            if &whole[kept.len()..] == MASK || rule.accept.is_some_and(|accept| !accept(caps)) {
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
    if let Some(masked) = redact_pairs(&current) {
        fired.push("text:secret_pair");
        current = std::borrow::Cow::Owned(masked);
    }
    (!fired.is_empty()).then(|| (current.into_owned(), fired))
}
