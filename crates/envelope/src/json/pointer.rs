//! JSON Pointer (RFC 6901) building.

/// Escapes one reference token (`~` → `~0`, `/` → `~1`).
pub fn escape(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// `base` + `/` + escaped `token`.
pub fn join(base: &str, token: &str) -> String {
    format!("{base}/{}", escape(token))
}
