//! Which format a document is in, and why we think so.
//!
//! Each format states its own evidence ([`Format::detect`](crate::formats::Format::detect));
//! detection takes the most specific ([`Rank`](crate::formats::Rank)).

use serde_json::Value;

use crate::error::Result;
use crate::formats::{self, FormatId};

/// A detected format and the evidence for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Detection {
    /// The format.
    pub format: FormatId,
    /// What was seen, in words.
    pub reason: String,
}

/// Detects the format of raw input (JSON, or a bare tool-envelope-v1 block).
///
/// ```
/// let found = envelope::detect(br#"{"data":1,"meta":{"source":"local"}}"#).unwrap();
/// assert_eq!(found.format.as_str(), "operations");
/// assert!(envelope::detect(b"[]").is_err());
/// ```
pub fn detect(input: &[u8]) -> Result<Detection> {
    if let Some((format, evidence)) = formats::identify_text(input) {
        return Ok(Detection {
            format: format.id(),
            reason: evidence.reason,
        });
    }
    let value = crate::json::from_slice(input)?;
    detect_value(&value)
}

/// Detects the format of a parsed document.
pub fn detect_value(value: &Value) -> Result<Detection> {
    match formats::identify(value) {
        Some((format, evidence)) => Ok(Detection {
            format: format.id(),
            reason: evidence.reason,
        }),
        None => Err(formats::undetected(value)),
    }
}
