//! Protocol revisions and what each can carry.
//!
//! A session's revision comes from `initialize`: the `protocolVersion` the server answered
//! with ([`Revision::from_protocol_version`]). 2026-07-28 has no `initialize`: each request
//! names its revision in `params._meta["io.modelcontextprotocol/protocolVersion"]`
//! ([`Revision::from_request_meta`]).
//!
//! Revision strings are dates (`YYYY-MM-DD`), so they order as strings. A revision this
//! build does not know is read as the nearest one it knows that is not newer: a newer one as
//! the newest known ([`Revision::NEWEST`]; a later revision keeps what earlier ones carry), an
//! older one, or a string that is not a date, as the oldest, 2024-11-05 (what every client
//! can read: a text line instead of a `resource_link`, never a block type it lacks).

use serde_json::Value;

/// The `_meta` key of a 2026-07-28 request that names its revision.
pub const PROTOCOL_VERSION_META_KEY: &str = "io.modelcontextprotocol/protocolVersion";

/// An MCP protocol revision this build knows, oldest first (so `<` means older).
///
/// ```
/// use envelope_mcp::revision::Revision;
///
/// let r = Revision::from_protocol_version("2025-06-18");
/// assert_eq!(r, Revision::V2025_06_18);
/// assert!(r.supports_resource_link());
/// assert!(!Revision::from_protocol_version("2025-03-26").supports_resource_link());
/// // Newer than any known: the newest known; older or not a date: the oldest.
/// assert_eq!(Revision::from_protocol_version("2099-01-01"), Revision::NEWEST);
/// assert_eq!(Revision::from_protocol_version("2024-01-01"), Revision::V2024_11_05);
/// assert_eq!(Revision::from_protocol_version("latest"), Revision::V2024_11_05);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum Revision {
    /// 2024-11-05: text, image and embedded resource blocks.
    V2024_11_05,
    /// 2025-03-26: adds audio blocks (and JSON-RPC batches, this revision only).
    V2025_03_26,
    /// 2025-06-18: adds `resource_link` blocks, `structuredContent` and `outputSchema`,
    /// `_meta` on blocks.
    V2025_06_18,
    /// 2025-11-25: output schemas default to JSON Schema 2020-12; bad tool arguments are
    /// `isError` results.
    V2025_11_25,
    /// 2026-07-28: stateless (no `initialize`; the revision is in each request's `_meta`);
    /// `structuredContent` may be any JSON value; results carry `resultType`.
    V2026_07_28,
}

impl Revision {
    /// Every known revision, oldest first.
    pub const ALL: [Revision; 5] = [
        Revision::V2024_11_05,
        Revision::V2025_03_26,
        Revision::V2025_06_18,
        Revision::V2025_11_25,
        Revision::V2026_07_28,
    ];

    /// The oldest known revision.
    pub const OLDEST: Revision = Revision::V2024_11_05;

    /// The newest known revision.
    pub const NEWEST: Revision = Revision::V2026_07_28;

    /// The revision a negotiated `protocolVersion` names; an unknown one is read as the
    /// newest known revision not newer than it (see the module documentation).
    pub fn from_protocol_version(version: &str) -> Revision {
        if let Some(known) = Revision::ALL.into_iter().find(|r| r.as_str() == version) {
            return known;
        }
        if !is_date(version) {
            return Revision::OLDEST;
        }
        Revision::ALL
            .into_iter()
            .rev()
            .find(|r| r.as_str() < version)
            .unwrap_or(Revision::OLDEST)
    }

    /// The revision a request names in its `params._meta` (2026-07-28 and later, which
    /// have no `initialize`); `None` when `params` has no such key or it is not a string.
    ///
    /// ```
    /// use envelope_mcp::revision::Revision;
    /// use serde_json::json;
    ///
    /// let params = json!({"name": "ls", "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}});
    /// assert_eq!(Revision::from_request_meta(&params), Some(Revision::V2026_07_28));
    /// assert_eq!(Revision::from_request_meta(&json!({"name": "ls"})), None);
    /// ```
    pub fn from_request_meta(params: &Value) -> Option<Revision> {
        params
            .get("_meta")?
            .get(PROTOCOL_VERSION_META_KEY)?
            .as_str()
            .map(Revision::from_protocol_version)
    }

    /// The revision's string (`2025-06-18`).
    pub fn as_str(self) -> &'static str {
        match self {
            Revision::V2024_11_05 => "2024-11-05",
            Revision::V2025_03_26 => "2025-03-26",
            Revision::V2025_06_18 => "2025-06-18",
            Revision::V2025_11_25 => "2025-11-25",
            Revision::V2026_07_28 => "2026-07-28",
        }
    }

    /// Whether results may hold `resource_link` content blocks (2025-06-18 and later).
    pub fn supports_resource_link(self) -> bool {
        self >= Revision::V2025_06_18
    }

    /// Whether results may hold `structuredContent` and tools an `outputSchema`
    /// (2025-06-18 and later).
    pub fn supports_structured_content(self) -> bool {
        self >= Revision::V2025_06_18
    }

    /// Whether `structuredContent` may be any JSON value rather than an object
    /// (2026-07-28 and later).
    pub fn structured_content_any_value(self) -> bool {
        self >= Revision::V2026_07_28
    }

    /// Whether results may hold `audio` content blocks (2025-03-26 and later).
    pub fn supports_audio(self) -> bool {
        self >= Revision::V2025_03_26
    }

    /// Whether content blocks may carry `_meta` (2025-06-18 and later).
    pub fn supports_block_meta(self) -> bool {
        self >= Revision::V2025_06_18
    }

    /// Whether a result carries `resultType` (`"complete"`; 2026-07-28 and later; a missing
    /// one is read as complete).
    pub fn has_result_type(self) -> bool {
        self >= Revision::V2026_07_28
    }

    /// Whether sessions start with `initialize` (every revision before 2026-07-28).
    pub fn has_initialize(self) -> bool {
        self < Revision::V2026_07_28
    }
}

impl std::fmt::Display for Revision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `YYYY-MM-DD` with digits (the form of every revision string).
fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 10
        && b.iter().enumerate().all(|(i, c)| {
            if i == 4 || i == 7 {
                *c == b'-'
            } else {
                c.is_ascii_digit()
            }
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_known_revision_reads_back_as_itself_and_agrees_with_the_validator() {
        let names: Vec<&str> = Revision::ALL.iter().map(|r| r.as_str()).collect();
        assert_eq!(names, envelope::validate::MCP_REVISIONS);
        for r in Revision::ALL {
            assert_eq!(Revision::from_protocol_version(r.as_str()), r);
            assert_eq!(r.to_string(), r.as_str());
        }
    }

    #[test]
    fn unknown_revisions_fall_to_the_nearest_older_known_one() {
        let cases = [
            ("2099-12-31", Revision::V2026_07_28),
            ("2026-07-29", Revision::V2026_07_28),
            ("2026-01-01", Revision::V2025_11_25),
            ("2025-06-17", Revision::V2025_03_26),
            ("2025-01-01", Revision::V2024_11_05),
            ("2024-11-04", Revision::V2024_11_05),
            ("1999-01-01", Revision::V2024_11_05),
            ("", Revision::V2024_11_05),
            ("2025-6-18", Revision::V2024_11_05),
            ("DRAFT-2026-v1", Revision::V2024_11_05),
        ];
        for (version, expected) in cases {
            assert_eq!(
                Revision::from_protocol_version(version),
                expected,
                "{version}"
            );
        }
    }

    #[test]
    fn what_each_revision_carries() {
        use Revision::*;
        let link: Vec<bool> = Revision::ALL
            .iter()
            .map(|r| r.supports_resource_link())
            .collect();
        assert_eq!(link, [false, false, true, true, true]);
        assert!(!V2024_11_05.supports_audio() && V2025_03_26.supports_audio());
        assert!(!V2025_03_26.supports_structured_content());
        assert!(V2025_06_18.supports_structured_content() && V2025_06_18.supports_block_meta());
        assert!(!V2025_11_25.structured_content_any_value());
        assert!(V2026_07_28.structured_content_any_value() && V2026_07_28.has_result_type());
        assert!(V2025_11_25.has_initialize() && !V2026_07_28.has_initialize());
    }

    #[test]
    fn request_meta_names_the_revision_of_a_stateless_request() {
        let params = |v: Value| json!({"name": "t", "_meta": {PROTOCOL_VERSION_META_KEY: v, "progressToken": 1}});
        assert_eq!(
            Revision::from_request_meta(&params(json!("2026-07-28"))),
            Some(Revision::V2026_07_28)
        );
        assert_eq!(
            Revision::from_request_meta(&params(json!("2031-01-01"))),
            Some(Revision::NEWEST)
        );
        assert_eq!(Revision::from_request_meta(&params(json!(20260728))), None);
        assert_eq!(Revision::from_request_meta(&json!({"_meta": {}})), None);
        assert_eq!(Revision::from_request_meta(&json!(null)), None);
    }
}
