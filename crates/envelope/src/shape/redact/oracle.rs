//! The free-text rules as they ran before the anchor scan (every shape rule in turn, then a
//! search for every `name=value` pair, then the names split into words), kept as the oracle of a
//! differential test: the scan must mask exactly what they mask, over random text with the
//! redaction corpus planted in it.

use std::borrow::Cow;
use std::sync::LazyLock;

use proptest::prelude::*;
use regex::{Captures, Regex};

use super::keys::{keeps_text_value, rule_of_words, surely_plain, words};
use super::pairs::PAIR_PATTERN;
use super::text::{SHAPE_RULES, masked_match};
use super::{MASK, redact_text, secret_key_rule};

static PAIR: LazyLock<Regex> = LazyLock::new(|| Regex::new(PAIR_PATTERN).expect("valid"));

/// A name's rule from its words as [`words`] splits them (the scan compares its words in
/// place, without splitting).
fn old_secret_key_rule(name: &str) -> Option<String> {
    if surely_plain(name) {
        return None;
    }
    let words = words(name);
    rule_of_words(words.iter().rev().map(|w| w.as_bytes()))
}

fn old_redact_pairs(text: &str) -> Option<String> {
    let mut out = String::new();
    let mut copied = 0;
    let mut from = 0;
    while let Some(found) = PAIR.find_at(text, from) {
        let name_len = text[found.start()..]
            .bytes()
            .take_while(|&b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
            .count();
        if old_secret_key_rule(&text[found.start()..found.start() + name_len]).is_none() {
            from = found.start() + name_len;
            continue;
        }
        let caps = PAIR.captures_at(text, from).expect("matched above");
        let name = &caps["name"];
        let value = ["escaped", "double", "single", "bare"]
            .iter()
            .find_map(|g| caps.name(g))
            .expect("one value group matches");
        let rule = old_secret_key_rule(name);
        if rule
            .as_ref()
            .is_none_or(|rule| keeps_text_value(rule, value.as_str()))
        {
            from = caps.name("name").map_or(text.len(), |m| m.end());
            continue;
        }
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

/// The free-text redaction before the anchor scan.
fn old_redact_text(text: &str) -> Option<(String, Vec<&'static str>)> {
    if text.len() < 10 && !text.contains(['=', ':']) {
        return None;
    }
    let mut current = Cow::Borrowed(text);
    let mut fired = Vec::new();
    // Every rule, in order, on what the ones before it left.
    for rule in SHAPE_RULES.iter() {
        let mut hit = false;
        let replaced = rule.regex.replace_all(&current, |caps: &Captures<'_>| {
            match masked_match(rule, caps) {
                Some(masked) => {
                    hit = true;
                    masked
                }
                None => caps.get(0).map_or("", |m| m.as_str()).to_string(),
            }
        });
        if hit {
            fired.push(rule.id);
            current = Cow::Owned(replaced.into_owned());
        }
    }
    if let Some(masked) = old_redact_pairs(&current) {
        fired.push("text:secret_pair");
        current = Cow::Owned(masked);
    }
    (!fired.is_empty()).then(|| (current.into_owned(), fired))
}

/// Pieces random text is made of: the corpus (should-redact texts, must-keep texts, names),
/// separators and quotes pairs are made of, the rules' anchors alone and half-made (so
/// candidates that are no match abound), case and Unicode folding tricks, and filler.
fn pieces() -> Vec<String> {
    let corpus: serde_json::Value =
        serde_json::from_str(include_str!("../../../tests/redaction/corpus.json"))
            .expect("the corpus is JSON");
    let mut pieces: Vec<String> = Vec::new();
    for item in corpus["redact"].as_array().expect("redact list") {
        pieces.push(item["text"].as_str().expect("text").to_string());
    }
    for list in ["keep", "secret_names", "keep_names"] {
        for item in corpus[list].as_array().expect("list") {
            pieces.push(item.as_str().expect("string").to_string());
        }
    }
    let extra = [
        "=",
        ":",
        ": ",
        " = ",
        "\"",
        "'",
        "\\\"",
        "\\",
        "\n",
        "\r\n",
        " ",
        "\t",
        ",",
        ";",
        "&",
        ".",
        "-",
        "_",
        "***",
        "\"***\"",
        "Author",
        "Date",
        "commit",
        "password",
        "Password",
        "PASSWORD",
        "apiKey",
        "api_key",
        "api",
        "key",
        "Key",
        "token",
        "TOKEN",
        "auth",
        "Authorization",
        "secret",
        "pwd",
        "pass",
        "cookie",
        "Cookie",
        "set-",
        "Set-Cookie: ",
        "credentials",
        "_b64",
        "_2",
        "2",
        "value",
        "Bearer ",
        "bearer\t",
        "BEARER ",
        "Basic ",
        "basic ",
        "dTpw",
        "dXNlcjpwYXNz",
        "Token ",
        "abc123XYZ",
        "hunter2",
        "a b",
        "ſ",
        "K",
        "baſic ",
        "Coo\u{212A}ie: x=1",
        "é",
        "日本",
        "-----BEGIN ",
        "RSA ",
        "PRIVATE KEY-----",
        "-----END RSA PRIVATE KEY-----",
        "MIIE",
        "eyJ",
        "eyJhbGciOi",
        "ghp_",
        "gho_",
        "github_pat_",
        "0123456789abcdefghijABCDEFGHIJ012345",
        "AKIA",
        "ASIA",
        "ABCDEFGHIJKLMNOP",
        "xoxb-",
        "xapp-",
        "1234567890",
        "sk-",
        "sk_live_",
        "rk_test_",
        "abcdefghij12",
        "AIza",
        "0123456789abcdefghijklmnopqrstuvwxy",
        "x",
        "9",
        "  ",
        // Separators with what may stand between a name and them, and letters that are
        // also escapes' letters.
        "\t=",
        " \t: ",
        "\"=",
        "'=",
        "\\\"=",
        "\\=",
        "\\",
        "n",
        "t",
        "b",
        "B",
        "bearer",
        "BaSiC\t",
        "cookies",
        "COOKIE=",
        "00:00",
    ];
    pieces.extend(extra.iter().map(|p| p.to_string()));
    // The corpus of `tests/redact_corpus.rs`, and pieces of the newer rules' shapes.
    let secrets: serde_json::Value =
        serde_json::from_str(include_str!("../../../tests/data/secrets.json"))
            .expect("the secrets are JSON");
    for item in secrets.as_array().expect("secrets list") {
        pieces.push(item["text"].as_str().expect("text").to_string());
    }
    let lookalikes: serde_json::Value =
        serde_json::from_str(include_str!("../../../tests/data/lookalikes.json"))
            .expect("the look-alikes are JSON");
    for item in lookalikes.as_array().expect("look-alikes list") {
        pieces.push(item.as_str().expect("text").to_string());
    }
    let newer = [
        "://",
        "postgres://u:",
        "@",
        "@h",
        "curl -u ",
        "curl",
        " --user ",
        ":AA",
        "123456789",
        "pwd=",
        "PWD",
        "/home/ann",
        "true",
        "\\\\\\\"",
        "\\\\",
        "LS0tLS1CRUdJTi",
        "cGFzc3dvcmQ",
        "AKIAZQ3456789ABCDEFG",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzqEXAMPLE",
        "AC0123456789abcdef0123456789abcdef",
        "0123456789abcdef0123456789abcdef",
        "sig=",
        "hooks.slack.com/services/",
        "-----END PGP PRIVATE KEY BLOCK-----",
        "PGP ",
        "PRIVATE KEY BLOCK-----",
        "sk-circle-bounce-delay",
        "Allow-Credentials",
    ];
    pieces.extend(newer.iter().map(|p| p.to_string()));
    pieces
}

static PIECES: LazyLock<Vec<String>> = LazyLock::new(pieces);

pub(super) fn random_text() -> impl Strategy<Value = String> {
    prop::collection::vec(0..PIECES.len(), 0..40)
        .prop_map(|picks| picks.into_iter().map(|i| PIECES[i].as_str()).collect())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4096))]

    #[test]
    fn the_anchor_scan_masks_what_the_regex_path_masks(text in random_text()) {
        prop_assert_eq!(redact_text(&text), old_redact_text(&text), "{:?}", text);
    }

    #[test]
    fn names_are_secrets_as_before(text in random_text()) {
        // Each run of name-like text, and the whole text, as a name.
        prop_assert_eq!(secret_key_rule(&text), old_secret_key_rule(&text), "{:?}", text);
        for name in text.split([' ', '=', ':', '"', '\'', '\n']) {
            prop_assert_eq!(secret_key_rule(name), old_secret_key_rule(name), "{:?}", name);
        }
    }
}

#[test]
fn folded_letters_are_anchors_too() {
    // The regex crate folds `ſ` to `s` and the Kelvin sign to `k` in case-insensitive rules.
    for text in [
        "Authorization: baſic dXNlcjpwYXNz",
        "Coo\u{212A}ie: session=abc",
    ] {
        let old = old_redact_text(text);
        assert!(old.is_some(), "{text}: the regex path masks it");
        assert_eq!(redact_text(text), old, "{text}");
    }
}

#[test]
fn a_long_log_with_secrets_far_apart_is_masked_as_before() {
    let mut log = String::new();
    for i in 0..2000 {
        log.push_str(&format!(
            "commit {i:040x}\nAuthor: Dev <dev@example.com>\nDate: Mon Jan 1 00:00:00 2026\n\n"
        ));
        match i % 500 {
            7 => log.push_str("    password=hunter2 token: \"a b\"\n"),
            99 => log.push_str("Authorization: Bearer abc123XYZdef\n"),
            250 => log.push_str("key ghp_0123456789abcdefghijABCDEFGHIJ012345 here\n"),
            _ => {}
        }
    }
    let new = redact_text(&log);
    assert!(new.is_some());
    assert_eq!(new, old_redact_text(&log));
}
