//! The settings of one tool: the command line's, with the policy file's table for the tool
//! applied over them.

use crate::config::Config;
use crate::shaping::ToolSettings;

/// The settings `tool`'s results are shaped with.
pub fn tool_settings(config: &Config, tool: &str) -> ToolSettings {
    config
        .policy
        .tool_settings(tool, config.limit, config.tokens, config.redact)
}
