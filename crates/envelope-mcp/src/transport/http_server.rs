//! Clients over Streamable HTTP (`--listen`): each MCP session (`Mcp-Session-Id`) becomes a
//! [`Link`](super::Link) handed to the relay. (to be written)
