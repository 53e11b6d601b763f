//! Telling that a string holds nothing to redact from its JSON text, without decoding it.
//!
//! A long text block of a tool result (a `git log`, a file) is mostly clean. Decoding it to
//! look at it costs a copy of its size and a pass over every escape; the rules' anchors and
//! separators are in its escaped text as they are in the decoded one
//! ([`anchors::Spelling::Escaped`]), so that text is looked at instead. Only a string that
//! may hold something is decoded and redacted the usual way.

use super::anchors::{self, Spelling};
use super::keys::secret_key_rule;
use super::value::{MAX_EMBEDDED, base64_body};

/// How a string literal's text is escaped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Escapes {
    /// Not at all: the text is the string.
    None,
    /// Only with `\"`, `\\`, `\b`, `\f`, `\n`, `\r` and `\t`, which is how the JS dialect
    /// writes those characters.
    Simple,
    /// Otherwise (`\/`, `\u…`), or maybe not validly: decode it to know.
    Other,
}

/// How the text between a string literal's quotes is escaped; `None` when it holds a raw
/// control character (which JSON does not allow). The passes over it are written so that
/// the compiler turns them into vector instructions (no early exit, no lookup table).
pub(super) fn escapes(raw: &[u8]) -> Option<Escapes> {
    if raw.iter().fold(false, |control, &b| control | (b < 0x20)) {
        return None;
    }
    let Some(first) = memchr::memchr(b'\\', raw) else {
        return Some(Escapes::None);
    };
    let raw = &raw[first..];
    // A backslash followed by anything but a simple escape's letter is either an escape
    // that is not simple or the second half of `\\` (then decoding tells). The last byte
    // is followed by the closing quote, a simple escape's letter.
    let complex = raw.iter().zip(&raw[1..]).fold(false, |complex, (&a, &b)| {
        let simple = (b == b'"')
            | (b == b'\\')
            | (b == b'b')
            | (b == b'f')
            | (b == b'n')
            | (b == b'r')
            | (b == b't');
        complex | ((a == b'\\') & !simple)
    });
    match complex {
        true => Some(Escapes::Other),
        false => Some(Escapes::Simple),
    }
}

/// Whether redacting the string whose literal text is `raw` (escaped as `escapes` says,
/// never [`Escapes::Other`]; a string held `depth` documents deep) surely changes nothing,
/// as `value::redact_string` would find: not a document, not base64, and none of the
/// free-text rules' anchors or secret pair names in it. `false` when it may change.
pub(super) fn surely_clean(raw: &str, escapes: Escapes, depth: usize) -> bool {
    debug_assert_ne!(escapes, Escapes::Other);
    let spelling = match escapes {
        Escapes::None => Spelling::Decoded,
        _ => Spelling::Escaped,
    };
    if depth < MAX_EMBEDDED && (may_be_document(raw, spelling) || may_be_base64(raw, spelling)) {
        return false;
    }
    // The same few names come back (`Author:` in every entry of a log).
    let mut last_plain = "";
    let no_secret_name = |name: std::ops::Range<usize>| {
        let run = &raw[name];
        // The name starts at its first letter or `_` (`PAIR_PATTERN`).
        let start = run
            .find(|c: char| c.is_ascii_alphabetic() || c == '_')
            .unwrap_or(run.len());
        let name = &run[start..];
        if name == last_plain {
            return true;
        }
        last_plain = name;
        secret_key_rule(name).is_none()
    };
    anchors::scan(raw.as_bytes(), spelling, no_secret_name) == Some(0)
}

/// Whether the string may be a JSON document once trimmed (it starts with `{` or `[`).
fn may_be_document(raw: &str, spelling: Spelling) -> bool {
    if spelling == Spelling::Decoded {
        return raw.trim_start().starts_with(['{', '[']);
    }
    let bytes = raw.as_bytes();
    let mut at = 0;
    loop {
        match bytes.get(at..at + 2) {
            Some([b'\\', b't' | b'n' | b'r' | b'f']) => at += 2,
            _ if bytes.get(at) == Some(&b' ') => at += 1,
            // Beyond ASCII, it might be more white space.
            _ => {
                return bytes
                    .get(at)
                    .is_some_and(|&b| matches!(b, b'{' | b'[') || b >= 0x80);
            }
        }
    }
}

/// Whether the string may be read as base64 (`value::redact_base64`).
fn may_be_base64(raw: &str, spelling: Spelling) -> bool {
    if spelling == Spelling::Decoded {
        return base64_body(raw).is_some();
    }
    // The body is all alphabet and starts within the first 64 characters; every escape
    // here decodes to a character outside the alphabet, and no byte from 130 on is in the
    // first 64 characters (an escape is two bytes for one). So a byte outside the alphabet
    // from 130 on rules base64 out.
    !raw.as_bytes()
        .get(130..)
        .is_some_and(|rest| rest.iter().any(|&b| !is_base64_byte(b)))
}

/// A byte of the base64 alphabets `value::redact_base64` reads (standard and URL-safe).
pub(super) fn is_base64_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'-' | b'_' | b'=')
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::super::oracle::random_text;
    use super::super::value::redact_string;
    use super::*;

    /// A string as tools write them: a few pieces of random corpus text, between clean log
    /// lines (so that the string is often clean but for those pieces, and often long), maybe
    /// led by white space or a bracket; or base64 of such text after a prefix.
    fn string() -> impl Strategy<Value = String> {
        use base64::Engine as _;
        let lead = prop::sample::select(vec!["", " ", "\n", "\t ", "{", " [", "\u{a0}{"]);
        let line = "commit 1\nAuthor: Dev <dev@example.com>\nDate: 00:00 x=1\n";
        let few = prop::collection::vec(random_text(), 1..3).prop_map(|texts| {
            texts
                .iter()
                .map(|t| t.chars().take(12).collect::<String>())
                .collect::<String>()
        });
        prop_oneof![
            2 => (lead.clone(), random_text()).prop_map(|(lead, text)| format!("{lead}{text}")),
            4 => (lead, 0..4usize, few, 0..4usize).prop_map(move |(lead, before, text, after)| {
                format!("{lead}{}{text}{}", line.repeat(before), line.repeat(after))
            }),
            1 => random_text().prop_map(|text| {
                base64::engine::general_purpose::STANDARD.encode(text)
            }),
            1 => random_text().prop_map(|text| {
                format!("data:;base64,{}", base64::engine::general_purpose::URL_SAFE.encode(text))
            }),
            // A prefix with an escape in it, ending anywhere up to where prefixes may end.
            1 => (0..70usize, random_text()).prop_map(|(pad, text)| {
                let body = base64::engine::general_purpose::STANDARD.encode(text);
                format!("\t{}:{body}", "x".repeat(pad))
            }),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4096))]

        /// The decoded path is the oracle: a string told clean from its JSON text is one it
        /// leaves alone, at every depth.
        #[test]
        fn a_string_told_clean_is_left_alone_by_the_decoded_path(
            text in string(),
            depth in 0..=MAX_EMBEDDED,
        ) {
            let literal = serde_json::to_string(&text).expect("a string");
            let raw = &literal[1..literal.len() - 1];
            let escapes = escapes(raw.as_bytes()).expect("serde_json writes no raw control character");
            prop_assume!(escapes != Escapes::Other);
            if surely_clean(raw, escapes, depth) {
                let mut report = Vec::new();
                prop_assert_eq!(redact_string(&text, "", &mut report, depth), None, "{:?}", raw);
            }
        }
    }

    #[test]
    fn clean_texts_are_told_clean_and_others_are_not() {
        // Escaped text, as it is between a literal's quotes.
        let log = r#"commit 1\nAuthor: Dev <dev@example.com>\nDate: Mon Jan 1 00:00:00 2026\n\n    fix: a=b\n"#;
        assert!(surely_clean(&log.repeat(20), Escapes::Simple, 0));
        for dirty in [
            r#"x\npassword=hunter2"#,
            r#"\\\"token\\\": \\\"abc\\\""#,
            "Authorization: Bearer abc123XYZdef",
            "key ghp_0123456789abcdefghijABCDEFGHIJ012345",
            r#"\tSet-Cookie: a=b"#,
            "baſic dXNlcjpwYXNz",
        ] {
            assert!(!surely_clean(dirty, Escapes::Simple, 0), "{dirty}");
        }
    }

    #[test]
    fn escapes_are_told_apart() {
        assert_eq!(escapes(b""), Some(Escapes::None));
        assert_eq!(escapes(b"plain text"), Some(Escapes::None));
        assert_eq!(escapes(br#"a\nb\"c\\"#), Some(Escapes::Simple));
        assert_eq!(escapes(br#"a\/b"#), Some(Escapes::Other));
        assert_eq!(escapes(br#"\u0041"#), Some(Escapes::Other));
        // `\\x` is valid (a backslash, then x) but not told here.
        assert_eq!(escapes(br#"\\x"#), Some(Escapes::Other));
        assert_eq!(escapes(b"a\nb"), None);
        assert_eq!(escapes(b"ab\x01"), None);
    }

    #[test]
    fn documents_and_base64_are_left_to_decoding() {
        assert!(may_be_document(r#" \n\t{"a":1}"#, Spelling::Escaped));
        assert!(may_be_document("\u{a0}[1]", Spelling::Escaped));
        assert!(!may_be_document(r#"\n x {"a":1}"#, Spelling::Escaped));
        assert!(may_be_base64("cGFzc3dvcmQ9aHVudGVyMg==", Spelling::Decoded));
        let long = format!("{}\\n", "QUJD".repeat(40));
        assert!(may_be_base64(&long[..long.len() - 2], Spelling::Escaped));
        assert!(!may_be_base64(&long, Spelling::Escaped));
    }
}
