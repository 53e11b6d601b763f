//! Decoding the text of a JSON string literal that has escapes, in one pass into a buffer of
//! the right size (serde_json, given the literal alone, copies it and grows a scratch buffer
//! by doubling: three times a long string's size at once).

/// The text of a string literal whose bytes between the quotes are `raw`, and whether
/// `raw` is written as the JS dialect writes that text (`\/`, `\u0041` and uppercase hex
/// are not). `None` where serde_json refuses the literal: a raw control character, an
/// unknown escape, a lone surrogate, bytes that are not UTF-8.
pub(crate) fn unescape(raw: &[u8]) -> Option<(String, bool)> {
    // Escapes only shorten the text.
    unescape_into(raw, raw.len())
}

/// [`unescape`] into a buffer of `capacity` bytes (the decoded length, when the caller
/// knows it: a `\u` escape of a CJK character decodes to half its size).
pub(crate) fn unescape_into(raw: &[u8], capacity: usize) -> Option<(String, bool)> {
    let mut text = Vec::with_capacity(capacity);
    let mut canonical = true;
    let mut at = 0;
    loop {
        let run = memchr::memchr(b'\\', &raw[at..]).unwrap_or(raw.len() - at);
        text.extend_from_slice(&raw[at..at + run]);
        at += run;
        if at == raw.len() {
            break;
        }
        let escape = *raw.get(at + 1)?;
        at += 2;
        let byte = match escape {
            b'"' => b'"',
            b'\\' => b'\\',
            b'/' => {
                canonical = false;
                b'/'
            }
            b'b' => 0x08,
            b'f' => 0x0c,
            b'n' => b'\n',
            b'r' => b'\r',
            b't' => b'\t',
            b'u' => {
                let unit = hex4(raw, at)?;
                canonical &= unit < 0x20
                    && !matches!(unit, 0x08 | 0x09 | 0x0a | 0x0c | 0x0d)
                    && !raw[at..at + 4].iter().any(u8::is_ascii_uppercase);
                at += 4;
                let code = match unit {
                    0xD800..=0xDBFF => {
                        if raw.get(at..at + 2)? != b"\\u" {
                            return None;
                        }
                        let low = hex4(raw, at + 2)?;
                        if !(0xDC00..=0xDFFF).contains(&low) {
                            return None;
                        }
                        at += 6;
                        0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
                    }
                    0xDC00..=0xDFFF => return None,
                    unit => unit,
                };
                let mut buf = [0u8; 4];
                text.extend_from_slice(char::from_u32(code)?.encode_utf8(&mut buf).as_bytes());
                continue;
            }
            _ => return None,
        };
        text.push(byte);
    }
    if raw.iter().any(|&b| b < 0x20) {
        return None;
    }
    Some((String::from_utf8(text).ok()?, canonical))
}

/// The code unit of the four hex digits at `raw[at..]`.
fn hex4(raw: &[u8], at: usize) -> Option<u32> {
    raw.get(at..at + 4)?.iter().try_fold(0, |code, &digit| {
        Some(code * 16 + char::from(digit).to_digit(16)?)
    })
}

/// Whether [`unescape`] decodes `raw` (the text between a string literal's quotes), told
/// without writing anything: no raw control character, every escape known, `\\u` escapes
/// with four hex digits and surrogates in pairs. (UTF-8 is the caller's to check.)
pub(crate) fn is_valid(raw: &[u8]) -> bool {
    if raw.iter().fold(false, |control, &b| control | (b < 0x20)) {
        return false;
    }
    let mut at = 0;
    while let Some(run) = memchr::memchr(b'\\', &raw[at..]) {
        at += run;
        match raw.get(at + 1) {
            Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => at += 2,
            Some(b'u') => match hex4(raw, at + 2) {
                Some(0xD800..=0xDBFF) => {
                    let low = match raw.get(at + 6..at + 8) {
                        Some(b"\\u") => hex4(raw, at + 8),
                        _ => None,
                    };
                    if !low.is_some_and(|low| (0xDC00..=0xDFFF).contains(&low)) {
                        return false;
                    }
                    at += 12;
                }
                Some(0xDC00..=0xDFFF) | None => return false,
                Some(_) => at += 6,
            },
            _ => return false,
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::{is_valid, unescape};

    proptest! {
        #[test]
        fn valid_is_what_decodes(
            raw in r#"(a|é|\\\\|\\"|\\/|\\n|\\x|\\u00e9|\\uD83D|\\ude00|\\u12|\x01|\\){0,8}"#
        ) {
            prop_assert_eq!(is_valid(raw.as_bytes()), unescape(raw.as_bytes()).is_some(), "{:?}", raw);
        }
    }

    #[test]
    fn decodes_as_serde_json_does_and_refuses_what_it_refuses() {
        for raw in [
            r"plain",
            r#"a\nb\t\u0001\u00e9\/\u0041\uD83D\uDE00\\\""#,
            r"\u001f\u001F",
            "",
        ] {
            let expected: String = serde_json::from_str(&format!("\"{raw}\"")).unwrap();
            assert_eq!(unescape(raw.as_bytes()).unwrap().0, expected, "{raw}");
        }
        assert!(unescape(br"a\nb\u0001\\").unwrap().1);
        for raw in [r"\/", r"\u0041", r"\u001F", r"\u000a"] {
            assert!(!unescape(raw.as_bytes()).unwrap().1, "{raw}");
        }
        for raw in [
            r"\ud800",
            r"\udc00",
            r"\ud800\u0041",
            r"\x",
            r"\u12",
            "a\u{1}",
            "\\",
        ] {
            assert!(unescape(raw.as_bytes()).is_none(), "{raw}");
            assert!(
                serde_json::from_str::<String>(&format!("\"{raw}\"")).is_err(),
                "{raw}"
            );
        }
    }
}
