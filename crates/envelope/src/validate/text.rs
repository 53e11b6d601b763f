//! The JSON text of a document: read as leniently as the shipped validator (a byte-order
//! mark skipped, bad UTF-8 read as U+FFFD, the first document taken), with a finding for
//! each leniency, and duplicate keys found by a second, allocation-light pass.

use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use super::Findings;
use crate::json::pointer;

/// Parses `input` into a value, reporting syntax errors (then `None`) and text leniencies.
pub(crate) fn parse(input: &[u8], findings: &mut Findings) -> Option<Value> {
    let mut body = input;
    if let Some(rest) = body.strip_prefix(b"\xEF\xBB\xBF") {
        findings.report_at(
            "text.bom",
            "",
            Some(1),
            Some(1),
            "byte-order mark before the document",
        );
        body = rest;
    }
    let text = match std::str::from_utf8(body) {
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
    let mut de = serde_json::Deserializer::from_str(&text);
    let value = match serde::Deserialize::deserialize(&mut de) {
        Ok(value) => value,
        Err(e) => {
            report_json_error(&e, text.as_bytes(), findings);
            return None;
        }
    };
    if let Err(e) = de.end() {
        findings.report_at(
            "text.trailing-data",
            "",
            Some(e.line() as u64),
            Some(e.column() as u64),
            "data after the end of the document",
        );
    }
    if findings.checks("text.duplicate-key") {
        find_duplicate_keys(&text, findings);
    }
    Some(value)
}

/// A serde_json error reading `text` as a `json.*` finding with its line and column. The
/// nesting limit is told by where the error is, not by its message.
fn report_json_error(e: &serde_json::Error, text: &[u8], findings: &mut Findings) {
    use serde_json::error::Category;
    let (line, column) = (Some(e.line() as u64), Some(e.column() as u64));
    let message = crate::json::parse::message_of(e);
    match e.classify() {
        Category::Eof => findings.report_at("json.eof", "", line, column, message),
        _ if crate::json::parse::is_nesting_limit(text, e) => {
            findings.report_at("json.depth", "", line, column, message);
        }
        _ => findings.report_at("json.syntax", "", line, column, message),
    }
}

/// Reports every key that appears twice in one object (the text is known to be valid JSON).
fn find_duplicate_keys(text: &str, findings: &mut Findings) {
    let mut de = serde_json::Deserializer::from_str(text);
    let mut found = Vec::new();
    let _ = DuplicateKeys {
        at: String::new(),
        found: &mut found,
    }
    .deserialize(&mut de);
    for (at, key) in found {
        findings.report(
            "text.duplicate-key",
            pointer::join(&at, &key),
            format!("key {key:?} appears more than once in this object; the last one is used"),
        );
    }
}

/// Walks a document without building it, collecting `(object pointer, key)` duplicates.
struct DuplicateKeys<'f> {
    at: String,
    found: &'f mut Vec<(String, String)>,
}

impl<'de> DeserializeSeed<'de> for DuplicateKeys<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for DuplicateKeys<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen = HashSet::new();
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            let child = pointer::join(&self.at, &key);
            if !seen.insert(key.clone()) {
                self.found.push((self.at.clone(), key.into_owned()));
            }
            map.next_value_seed(DuplicateKeys {
                at: child,
                found: self.found,
            })?;
        }
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut i = 0usize;
        while seq
            .next_element_seed(DuplicateKeys {
                at: format!("{}/{i}", self.at),
                found: self.found,
            })?
            .is_some()
        {
            i += 1;
        }
        Ok(())
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
}
