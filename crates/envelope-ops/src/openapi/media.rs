//! Media types as a document names them (`application/problem+json; charset=utf-8`).

/// `text/event-stream` (parameters ignored).
pub fn is_event_stream(media: &str) -> bool {
    media
        .trim()
        .to_ascii_lowercase()
        .starts_with("text/event-stream")
}

/// A media type without its parameters, lowercase (`application/json; charset=utf-8` →
/// `application/json`).
pub fn essence(media: &str) -> String {
    media
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

/// `application/json`, `application/problem+json`, … (parameters ignored).
pub fn is_json(media: &str) -> bool {
    let essence = essence(media);
    essence == "application/json" || essence.ends_with("+json")
}
