//! The ids of the formats.

use std::fmt;
use std::str::FromStr;

use crate::error::{Error, Result};

/// The six format ids. They display and parse exactly as the CLI spells them.
///
/// ```
/// use envelope::FormatId;
///
/// let id: FormatId = "protocol-v1".parse().unwrap();
/// assert_eq!(id, FormatId::ProtocolV1);
/// assert_eq!(id.to_string(), "protocol-v1");
/// assert!("protocol-v2".parse::<FormatId>().is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FormatId {
    /// `tool-envelope-v1`: an MCP result whose second text block is `__ENVELOPE_V1__:` and
    /// base64 JSON.
    ToolEnvelopeV1,
    /// `ctxo`: a JSON payload with a `_meta` budget report, cut to a byte limit.
    Ctxo,
    /// `operations`: `{data, meta}` with `meta.source` `local`, `http` or `mcp`.
    Operations,
    /// `protocol-v1`: `{version, status, command, data, meta, error}` written by Go.
    ProtocolV1,
    /// `tool-result-envelope`: the payload beside a reserved `__envelope` key, written by
    /// Newtonsoft.Json.
    ToolResultEnvelope,
    /// `mcp`: a native MCP `CallToolResult`.
    Mcp,
}

impl FormatId {
    /// Every format id.
    pub const ALL: [FormatId; 6] = [
        FormatId::ToolEnvelopeV1,
        FormatId::Ctxo,
        FormatId::Operations,
        FormatId::ProtocolV1,
        FormatId::ToolResultEnvelope,
        FormatId::Mcp,
    ];

    /// The id as the CLI spells it (`tool-envelope-v1`, `protocol-v1`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            FormatId::ToolEnvelopeV1 => "tool-envelope-v1",
            FormatId::Ctxo => "ctxo",
            FormatId::Operations => "operations",
            FormatId::ProtocolV1 => "protocol-v1",
            FormatId::ToolResultEnvelope => "tool-result-envelope",
            FormatId::Mcp => "mcp",
        }
    }
}

impl fmt::Display for FormatId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Parses the CLI spelling; anything else is [`Error::UnknownFormat`].
impl FromStr for FormatId {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        FormatId::ALL
            .into_iter()
            .find(|f| f.as_str() == s)
            .ok_or_else(|| Error::UnknownFormat(s.to_string()))
    }
}
