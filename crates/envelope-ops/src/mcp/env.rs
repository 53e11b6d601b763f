//! The environment of an MCP server started over stdio: a minimal inherited set plus the
//! source's `env`, never the caller's whole environment (its secrets stay out of servers).

use std::collections::BTreeMap;

/// The variables a server inherits from the caller, as the MCP SDKs do on Unix (the
/// TypeScript and Python SDKs' `DEFAULT_INHERITED_ENV_VARS`, plus `LANG` for the locale).
pub const INHERITED: [&str; 7] = ["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG"];

/// The inherited variables that are set (a value starting with `()`, a shell function, is
/// skipped, as the SDKs do), then `extra` on top (a key in both takes `extra`'s value).
///
/// ```
/// use std::collections::BTreeMap;
/// use envelope_ops::mcp::env::server_env;
///
/// let extra = BTreeMap::from([("GIT_AUTHOR_NAME".to_string(), "x".to_string())]);
/// let env = server_env(&extra, |name| (name == "PATH").then(|| "/bin".to_string()));
/// assert_eq!(env, [("PATH".into(), "/bin".into()), ("GIT_AUTHOR_NAME".into(), "x".into())]);
/// ```
pub fn server_env(
    extra: &BTreeMap<String, String>,
    lookup: impl Fn(&str) -> Option<String>,
) -> Vec<(String, String)> {
    let mut env: Vec<(String, String)> = INHERITED
        .iter()
        .filter(|name| !extra.contains_key(**name))
        .filter_map(|name| lookup(name).map(|value| (name.to_string(), value)))
        .filter(|(_, value)| !value.starts_with("()"))
        .collect();
    env.extend(extra.iter().map(|(k, v)| (k.clone(), v.clone())));
    env
}

/// [`server_env`] over this process's environment.
pub fn from_process(extra: &BTreeMap<String, String>) -> Vec<(String, String)> {
    server_env(extra, |name| std::env::var(name).ok())
}
