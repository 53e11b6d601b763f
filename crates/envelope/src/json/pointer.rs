//! JSON Pointer (RFC 6901) building.

/// Escapes one reference token (`~` → `~0`, `/` → `~1`).
pub fn escape(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// `base` + `/` + escaped `token`.
pub fn join(base: &str, token: &str) -> String {
    format!("{base}/{}", escape(token))
}

/// Unescapes one reference token (`~1` → `/`, `~0` → `~`).
pub fn unescape(token: &str) -> String {
    token.replace("~1", "/").replace("~0", "~")
}

/// `Some(key)` when `pointer` is `base/key`: exactly one level below `base`, and not inside
/// an embedded document (`#`).
pub fn child(pointer: &str, base: &str) -> Option<String> {
    let rest = pointer.strip_prefix(base)?.strip_prefix('/')?;
    (!rest.contains('/') && !rest.contains('#')).then(|| unescape(rest))
}
