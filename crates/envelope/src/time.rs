//! Timestamp conversions between the formats' conventions: RFC 3339 text as JavaScript
//! writes it (three fraction digits), as Go and .NET write it (fraction trimmed), and Unix
//! epoch milliseconds (operations' `meta.timestamp`).
//!
//! ```
//! use envelope::time::{epoch_millis_to_rfc3339, rfc3339_to_epoch_millis};
//!
//! let ms = rfc3339_to_epoch_millis("2026-07-04T02:00:00+02:00").unwrap();
//! assert_eq!(ms, 1_783_123_200_000);
//! assert_eq!(
//!     epoch_millis_to_rfc3339(&ms.into()).as_deref(),
//!     Some("2026-07-04T00:00:00.000Z")
//! );
//! ```

use serde_json::Number;
use time::format_description::well_known::Rfc3339;
use time::{OffsetDateTime, UtcOffset};

/// Parses RFC 3339 text with any offset, ignoring surrounding whitespace; `None` when the
/// text is not RFC 3339.
pub fn parse_rfc3339(text: &str) -> Option<OffsetDateTime> {
    OffsetDateTime::parse(text.trim(), &Rfc3339).ok()
}

/// `2026-07-04T00:00:00.000Z`: JavaScript's `Date.prototype.toISOString`.
pub(crate) fn iso_millis(t: OffsetDateTime) -> String {
    let t = t.to_offset(UtcOffset::UTC);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
        t.year(),
        u8::from(t.month()),
        t.day(),
        t.hour(),
        t.minute(),
        t.second(),
        t.millisecond()
    )
}

/// `2026-07-04T00:00:00Z` or with the fraction trimmed of trailing zeros (Go's RFC3339Nano).
pub(crate) fn rfc3339_trimmed(t: OffsetDateTime, max_fraction_digits: usize) -> String {
    let t = t.to_offset(UtcOffset::UTC);
    let mut out = format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}",
        t.year(),
        u8::from(t.month()),
        t.day(),
        t.hour(),
        t.minute(),
        t.second()
    );
    let nanos = format!("{:09}", t.nanosecond());
    let fraction = nanos[..max_fraction_digits.min(9)].trim_end_matches('0');
    if !fraction.is_empty() {
        out.push('.');
        out.push_str(fraction);
    }
    out.push('Z');
    out
}

/// The current time as RFC 3339 text in UTC: with `millis`, always three fraction digits
/// (`2026-07-04T00:00:00.000Z`, as JavaScript writes); without, the fraction trimmed of
/// trailing zeros and left out when zero (`2026-07-04T00:00:00.5Z`, as Go writes).
///
/// This reads the clock: callers that must be deterministic pass a time instead
/// ([`EncodeOptions::now`](crate::EncodeOptions::now)).
pub fn now_rfc3339(millis: bool) -> String {
    let now = OffsetDateTime::now_utc();
    if millis {
        iso_millis(now)
    } else {
        rfc3339_trimmed(now, 9)
    }
}

/// Unix epoch milliseconds as JavaScript's `toISOString` writes them
/// (`2026-07-04T00:00:00.000Z`). A fractional number is truncated toward zero; `None` when
/// it lies outside the years the `time` crate represents.
pub fn epoch_millis_to_rfc3339(ms: &Number) -> Option<String> {
    let ms = ms.as_i64().or_else(|| ms.as_f64().map(|f| f as i64))?;
    let t = OffsetDateTime::from_unix_timestamp_nanos(i128::from(ms) * 1_000_000).ok()?;
    Some(iso_millis(t))
}

/// RFC 3339 text (any offset) as Unix epoch milliseconds, sub-millisecond digits dropped
/// toward zero; `None` when the text is not RFC 3339.
pub fn rfc3339_to_epoch_millis(text: &str) -> Option<i64> {
    let t = parse_rfc3339(text)?;
    i64::try_from(t.unix_timestamp_nanos() / 1_000_000).ok()
}
