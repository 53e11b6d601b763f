//! Drill-in: the full result one read away. Artifact URIs, `resources/read` on them, and the
//! `envelope_read` tool. (The reads are to be written; the URI form is fixed here because
//! [`shaping`](crate::shaping) writes what this module reads.)

use envelope_store::Digest;

/// The scheme and authority of every artifact URI: `envelope://artifact/sha256/<hex>`.
pub const URI_PREFIX: &str = "envelope://artifact/sha256/";

/// The URI of a stored result: `envelope://artifact/sha256/<64 hex digits>`.
pub fn artifact_uri(digest: &Digest) -> String {
    format!("{URI_PREFIX}{}", digest.hex())
}

/// The digest an artifact URI names; also accepts the bare `sha256:<hex>` form the library's
/// MCP writer puts in a `resource_link`. `None` for anything else.
pub fn parse_artifact_uri(uri: &str) -> Option<Digest> {
    let hex = uri
        .strip_prefix(URI_PREFIX)
        .or_else(|| uri.strip_prefix("sha256:"))?;
    format!("sha256:{hex}").parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uri_round_trip() {
        let digest = Digest::of(b"result");
        let uri = artifact_uri(&digest);
        assert_eq!(uri, format!("envelope://artifact/sha256/{}", digest.hex()));
        assert_eq!(parse_artifact_uri(&uri), Some(digest));
        assert_eq!(parse_artifact_uri(&digest.to_string()), Some(digest));
        assert_eq!(parse_artifact_uri("envelope://artifact/sha256/00"), None);
        assert_eq!(parse_artifact_uri("file:///etc/passwd"), None);
    }
}
