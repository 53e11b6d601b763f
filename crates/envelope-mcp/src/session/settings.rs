//! The settings of one tool: the command line's, with the policy file's table for the tool
//! applied over them.

use crate::config::Config;
use crate::policy::Emit;
use crate::shaping::ToolSettings;

/// The settings `tool`'s results are shaped with.
pub fn tool_settings(config: &Config, tool: &str) -> ToolSettings {
    let policy = config.policy.for_tool(tool);
    ToolSettings {
        limit: policy.limit.unwrap_or(config.limit),
        redact: policy.redact.unwrap_or(config.redact),
        pass_through: policy.pass_through,
        emit: match policy.emit {
            Emit::Mcp => None,
            Emit::Format(format) => Some(format),
        },
    }
}
