//! Timestamp conversions between the formats' conventions.

use serde_json::Number;
use time::format_description::well_known::Rfc3339;
use time::{OffsetDateTime, UtcOffset};

/// Parses RFC 3339 text (any offset).
pub fn parse_rfc3339(text: &str) -> Option<OffsetDateTime> {
    OffsetDateTime::parse(text.trim(), &Rfc3339).ok()
}

/// `2026-07-04T00:00:00.000Z`: JavaScript's `Date.prototype.toISOString`.
pub fn iso_millis(t: OffsetDateTime) -> String {
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
pub fn rfc3339_trimmed(t: OffsetDateTime, max_fraction_digits: usize) -> String {
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

/// The current time, RFC 3339 UTC (`millis`: always three fraction digits, as JS writes).
pub fn now_rfc3339(millis: bool) -> String {
    let now = OffsetDateTime::now_utc();
    if millis {
        iso_millis(now)
    } else {
        rfc3339_trimmed(now, 9)
    }
}

/// Epoch milliseconds → `2026-07-04T00:00:00.000Z`.
pub fn epoch_millis_to_rfc3339(ms: &Number) -> Option<String> {
    let ms = ms.as_i64().or_else(|| ms.as_f64().map(|f| f as i64))?;
    let t = OffsetDateTime::from_unix_timestamp_nanos(i128::from(ms) * 1_000_000).ok()?;
    Some(iso_millis(t))
}

/// RFC 3339 text → epoch milliseconds.
pub fn rfc3339_to_epoch_millis(text: &str) -> Option<i64> {
    let t = parse_rfc3339(text)?;
    i64::try_from(t.unix_timestamp_nanos() / 1_000_000).ok()
}
