//! The upstream over Streamable HTTP (`--upstream-url`). (to be written)

use super::Link;

/// Opens a Streamable HTTP session to `url`, sending `headers` with every request.
///
/// # Errors
///
/// When the endpoint cannot be reached.
pub async fn connect(url: &str, headers: &[(String, String)]) -> std::io::Result<Link> {
    let _ = (url, headers);
    Err(std::io::Error::other(
        "Streamable HTTP upstream: not written yet",
    ))
}
