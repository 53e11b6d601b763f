//! JSON Pointer (RFC 6901) building.
//!
//! Losses, extensions and errors name places in a document by JSON Pointer. An
//! [`Extension`](crate::model::Extension) inside an embedded document (tool-envelope-v1's
//! base64 block) adds `#` after the pointer of the string that holds it
//! (`/content/1/text#/meta/runner`).
//!
//! ```
//! use envelope::json::pointer::{child, escape, join, unescape};
//!
//! assert_eq!(escape("a/b~c"), "a~1b~0c");
//! assert_eq!(unescape("a~1b~0c"), "a/b~c");
//! let p = join("/meta", "dev.envelope/budget");
//! assert_eq!(p, "/meta/dev.envelope~1budget");
//! // The key one level below a base, unescaped.
//! assert_eq!(child(&p, "/meta").as_deref(), Some("dev.envelope/budget"));
//! assert_eq!(child("/meta/a/b", "/meta"), None);
//! assert_eq!(child("/content/1/text#/meta", "/content/1/text"), None);
//! ```

/// Escapes one reference token (`~` → `~0`, `/` → `~1`), so that any object key can be
/// one step of a pointer.
pub fn escape(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// The pointer `base` + `/` + the escaped `token`: one step below `base` (`""` is the
/// document root).
pub fn join(base: &str, token: &str) -> String {
    format!("{base}/{}", escape(token))
}

/// Unescapes one reference token (`~1` → `/`, then `~0` → `~`, the order RFC 6901 requires).
pub fn unescape(token: &str) -> String {
    token.replace("~1", "/").replace("~0", "~")
}

/// Whether `pointer` is `base` or a pointer below it (`/a/b` is within `/a`, `/ab` is not).
pub fn is_within(pointer: &str, base: &str) -> bool {
    below(pointer, base).is_some()
}

/// What of `pointer` is below `base` (`""` for `base` itself, else from its `/`): the
/// pointer re-based on `base`; `None` when it is not at or below `base`.
pub fn below<'p>(pointer: &'p str, base: &str) -> Option<&'p str> {
    pointer
        .strip_prefix(base)
        .filter(|rest| rest.is_empty() || rest.starts_with('/'))
}

/// `Some(key)` (unescaped) when `pointer` is `base/key`: exactly one level below `base`,
/// and not inside an embedded document (`#`). `None` otherwise.
pub fn child(pointer: &str, base: &str) -> Option<String> {
    let rest = pointer.strip_prefix(base)?.strip_prefix('/')?;
    (!rest.contains('/') && !rest.contains('#')).then(|| unescape(rest))
}

#[cfg(test)]
mod within_tests {
    use super::{below, is_within};

    #[test]
    fn a_pointer_is_within_itself_and_its_base_only() {
        assert!(is_within("/a", "/a"));
        assert!(is_within("/a/b/0", "/a"));
        assert!(is_within("/a", ""));
        assert!(!is_within("/ab", "/a"));
        assert!(!is_within("/b/a", "/a"));
        assert!(!is_within("", "/a"));
    }

    #[test]
    fn below_re_bases_a_pointer() {
        assert_eq!(below("/a/b/0", "/a"), Some("/b/0"));
        assert_eq!(below("/a", "/a"), Some(""));
        assert_eq!(below("/a", ""), Some("/a"));
        assert_eq!(below("/ab", "/a"), None);
    }
}
