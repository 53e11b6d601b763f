//! The ids of the formats.

use std::fmt;
use std::str::FromStr;

use crate::error::{Error, Result};

/// The six format ids (exactly as the CLI spells them).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FormatId {
    ToolEnvelopeV1,
    Ctxo,
    Operations,
    ProtocolV1,
    ToolResultEnvelope,
    Mcp,
}

impl FormatId {
    pub const ALL: [FormatId; 6] = [
        FormatId::ToolEnvelopeV1,
        FormatId::Ctxo,
        FormatId::Operations,
        FormatId::ProtocolV1,
        FormatId::ToolResultEnvelope,
        FormatId::Mcp,
    ];

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

impl FromStr for FormatId {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        FormatId::ALL
            .into_iter()
            .find(|f| f.as_str() == s)
            .ok_or_else(|| Error::UnknownFormat(s.to_string()))
    }
}
