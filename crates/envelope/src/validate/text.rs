//! The JSON text of a document, read the way Go's `encoding/json` (the shipped protocol-v1
//! validator) reads it where it is lenient — bad UTF-8 read as U+FFFD, a `\u` escape of a
//! lone surrogate read as U+FFFD, a duplicate key's last value kept — with a finding of the
//! `strict` profile for each leniency; and refusing, from `compat` on, what Go refuses even
//! though it can be read past: a byte-order mark and data after the document. Duplicate keys
//! are found by a second, allocation-light pass.

use std::borrow::Cow;

use serde_json::Value;

use super::Findings;
use crate::json::pointer;

/// A document read: its value (a `serde_json::Value`, or what another reader makes of the
/// text), and the text it was read from (after the byte-order mark, with bad UTF-8 and lone
/// surrogates replaced), for readers that need it again.
pub(crate) struct Parsed<'a, T = Value> {
    pub(crate) value: T,
    pub(crate) text: Cow<'a, str>,
}

/// Parses `input` into a value, reporting syntax errors (then `None`) and text defects.
pub(crate) fn parse<'a>(input: &'a [u8], findings: &mut Findings) -> Option<Parsed<'a>> {
    parse_with(input, findings, read)
}

/// [`parse`] with another reader (see [`read_with`]).
pub(crate) fn parse_with<'a>(
    input: &'a [u8],
    findings: &mut Findings,
    read: Reader<Value>,
) -> Option<Parsed<'a>> {
    let parsed = read_with(input, findings, read)?;
    duplicate_keys(&parsed.text, findings);
    Some(parsed)
}

/// How a reader reads the first document of a text: what it makes of it, and the error
/// about what follows it, if anything does (see [`read`]).
pub(crate) type Reader<T> = fn(&str) -> Result<(T, Option<serde_json::Error>), serde_json::Error>;

/// [`parse`] with another reader and without the duplicate keys (see [`duplicate_keys`]):
/// the findings about the text are the same whatever the reader, as long as it walks the
/// whole document with serde_json's `deserialize_any` (the errors are the parser's).
pub(crate) fn read_with<'a, T>(
    input: &'a [u8],
    findings: &mut Findings,
    read: Reader<T>,
) -> Option<Parsed<'a, T>> {
    let mut body = input;
    if let Some(rest) = body.strip_prefix(b"\xEF\xBB\xBF") {
        findings.report_at(
            "text.bom",
            "",
            Some(1),
            Some(1),
            "byte-order mark before the document (Go's encoding/json refuses it: \
             invalid character 'ï' looking for beginning of value)",
        );
        body = rest;
    }
    let mut text = match std::str::from_utf8(body) {
        Ok(text) => Cow::Borrowed(text),
        Err(e) => {
            let at = crate::json::parse::location_at(body, e.valid_up_to());
            findings.report_at(
                "text.utf8",
                "",
                at.line.map(|l| l as u64),
                at.column.map(|c| c as u64),
                format!(
                    "invalid UTF-8 at byte {} (read as U+FFFD)",
                    e.valid_up_to() + (input.len() - body.len())
                ),
            );
            String::from_utf8_lossy(body)
        }
    };
    let (value, de) = match read(&text) {
        Ok(read) => read,
        Err(e) => {
            // serde_json refuses a lone surrogate escape, which Go reads as U+FFFD: replace
            // each with `\ufffd` (as long, so every later position stays) and read again.
            let Some((replaced, first)) = replace_lone_surrogates(&text) else {
                report_json_error(&e, text.as_bytes(), findings);
                return None;
            };
            let at = crate::json::parse::location_at(text.as_bytes(), first);
            findings.report_at(
                "text.surrogate",
                "",
                at.line.map(|l| l as u64),
                at.column.map(|c| c as u64),
                "a \\u escape of a lone UTF-16 surrogate (read as U+FFFD)",
            );
            text = Cow::Owned(replaced);
            match read(&text) {
                Ok(read) => read,
                Err(e) => {
                    report_json_error(&e, text.as_bytes(), findings);
                    return None;
                }
            }
        }
    };
    if let Some(e) = de {
        findings.report_at(
            "text.trailing-data",
            "",
            Some(e.line() as u64),
            Some(e.column() as u64),
            crate::json::parse::TRAILING_DATA,
        );
    }
    Some(Parsed { value, text })
}

/// Reports every key that appears twice in one object of `text` (known to be valid JSON),
/// when the profile checks it.
pub(crate) fn duplicate_keys(text: &str, findings: &mut Findings) {
    if findings.checks("text.duplicate-key") {
        find_duplicate_keys(text, findings);
    }
}

/// The first document of `text`, and the error about what follows it, if anything does.
pub(super) fn read(text: &str) -> Result<(Value, Option<serde_json::Error>), serde_json::Error> {
    let mut de = serde_json::Deserializer::from_str(text);
    let value = serde::Deserialize::deserialize(&mut de)?;
    Ok((value, de.end().err()))
}

/// `text` with every `\u` escape of a lone surrogate (inside a string) replaced by
/// `\ufffd`, as Go's decoder reads it, and the byte offset of the first; `None` when there
/// is none. A high surrogate escape followed by a low one is a pair, kept.
fn replace_lone_surrogates(text: &str) -> Option<(String, usize)> {
    let b = text.as_bytes();
    let unit = |at: usize| -> Option<u16> {
        let hex = b.get(at..at + 6)?;
        if hex[0] != b'\\' || hex[1] != b'u' {
            return None;
        }
        u16::from_str_radix(std::str::from_utf8(&hex[2..]).ok()?, 16).ok()
    };
    let mut lone = Vec::new();
    let (mut i, mut in_string) = (0, false);
    while i < b.len() {
        match b[i] {
            b'"' => {
                in_string = !in_string;
                i += 1;
            }
            b'\\' if in_string => match unit(i) {
                Some(0xD800..=0xDBFF) if matches!(unit(i + 6), Some(0xDC00..=0xDFFF)) => i += 12,
                Some(0xD800..=0xDFFF) => {
                    lone.push(i);
                    i += 6;
                }
                // Any other escape is two bytes, or six for `\uXXXX`; a malformed one is a
                // syntax error the reader reports.
                _ => i += 2,
            },
            _ => i += 1,
        }
    }
    let first = *lone.first()?;
    let mut out = b.to_vec();
    for at in lone {
        out[at + 2..at + 6].copy_from_slice(b"fffd");
    }
    // Only ASCII hex digits were replaced by ASCII.
    Some((String::from_utf8(out).expect("still UTF-8"), first))
}

/// A serde_json error reading `text` as a `json.*` finding with its line and column. The
/// nesting limit is told by where the error is, not by its message. An empty input and the
/// nesting limit are worded as every other command words them (`json::parse`).
fn report_json_error(e: &serde_json::Error, text: &[u8], findings: &mut Findings) {
    use crate::json::parse;
    use serde_json::error::Category;
    let (line, column) = (Some(e.line() as u64), Some(e.column() as u64));
    let message = parse::message_of(e);
    match e.classify() {
        Category::Eof if text.iter().all(u8::is_ascii_whitespace) => {
            let at = parse::location_at(text, text.len());
            let (line, column) = (at.line.map(|l| l as u64), at.column.map(|c| c as u64));
            findings.report_at("json.eof", "", line, column, parse::EMPTY_INPUT);
        }
        Category::Eof => findings.report_at("json.eof", "", line, column, message),
        _ if parse::is_nesting_limit(text, e) => {
            findings.report_at("json.depth", "", line, column, parse::depth_message());
        }
        _ => findings.report_at("json.syntax", "", line, column, message),
    }
}

/// Reports every key that appears twice in one object (the text is known to be valid JSON).
fn find_duplicate_keys(text: &str, findings: &mut Findings) {
    for (at, key) in super::duplicates::find(text) {
        findings.report(
            "text.duplicate-key",
            pointer::join(&at, &key),
            format!("key {key:?} appears more than once in this object; the last one is used"),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::{find_duplicate_keys, replace_lone_surrogates};
    use crate::formats::findings::{Findings, Profile};

    #[test]
    fn duplicate_keys_are_reported_in_document_order_at_their_pointers() {
        let text = r#"{"a":1,"a":{"b":[0,{"c":1,"c":2}],"b":1},"x/y~":[{"k":{"z":0,"z":0}},{"k\"":1,"k\"":2}],"a":[]}"#;
        let mut findings = Findings::new(Profile::Strict);
        find_duplicate_keys(text, &mut findings);
        let found: Vec<(&str, &str)> = findings
            .iter()
            .map(|f| (f.pointer.as_str(), f.message.as_str()))
            .collect();
        let message = |k: &str| {
            format!("key {k:?} appears more than once in this object; the last one is used")
        };
        assert_eq!(
            found,
            [
                ("/a", message("a").as_str()),
                ("/a/b/1/c", message("c").as_str()),
                ("/a/b", message("b").as_str()),
                ("/x~1y~0/0/k/z", message("z").as_str()),
                ("/x~1y~0/1/k\"", message("k\"").as_str()),
                ("/a", message("a").as_str()),
            ]
        );
    }

    #[test]
    fn lone_surrogates_are_replaced_as_go_reads_them() {
        let replaced = replace_lone_surrogates;
        // Go: "\ud800" → U+FFFD, "\udc00" → U+FFFD, "\ud800\u0041" → U+FFFD then "A",
        // "\ud800\ud83d\ude00" → U+FFFD then the pair.
        assert_eq!(
            replaced(r#"{"a":"x\ud800y"}"#),
            Some((r#"{"a":"x\ufffdy"}"#.to_string(), 7))
        );
        assert_eq!(
            replaced(r#"["\udc00","\ud800\u0041","\uD800\uD83D\uDE00"]"#),
            Some((
                r#"["\ufffd","\ufffd\u0041","\ufffd\uD83D\uDE00"]"#.to_string(),
                2
            ))
        );
        // Pairs, escaped backslashes and text outside strings are left alone.
        for kept in [
            r#"{"a":"\ud83d\ude00"}"#,
            r#"{"a":"\\ud800"}"#,
            r#"{"a\"\\":"\u00e9\n"}"#,
            r#"{"a":1}"#,
        ] {
            assert_eq!(replaced(kept), None, "{kept}");
        }
    }
}
