//! The shapes of the registry file's sources. Each is read through a `Raw…` struct that
//! refuses unknown keys, then checked (`TryFrom`), so that the parser's error names the key
//! or the cause with its line.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;

use crate::schema::Compiled;
use crate::spec::{AccessControl, ErrorSchema, OperationType, unknown_schema};

/// `commands.<ns>.<name>`: a local program.
#[derive(Clone, Debug, Deserialize)]
#[serde(try_from = "RawCommand")]
pub struct CommandConfig {
    /// The program and its arguments (no shell).
    pub command: Vec<String>,
    /// Query, mutation (the default) or subscription (each stdout line an item).
    pub kind: OperationType,
    /// What it does.
    pub description: String,
    /// JSON Schema of the input (default `{}`).
    pub input_schema: Value,
    /// JSON Schema of the output (default `{}`, unknown).
    pub output_schema: Value,
    /// Declared errors.
    pub error_schemas: Vec<ErrorSchema>,
    /// How long the program may run (default [`crate::command::DEFAULT_TIMEOUT`]).
    pub timeout: Option<Duration>,
    /// Who may call it.
    pub access_control: AccessControl,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawCommand {
    command: Vec<String>,
    #[serde(default, rename = "type")]
    kind: OperationType,
    #[serde(default)]
    description: String,
    input_schema: Option<Value>,
    output_schema: Option<Value>,
    #[serde(default)]
    error_schemas: Vec<ErrorSchema>,
    timeout: Option<f64>,
    #[serde(default)]
    access_control: AccessControl,
}

impl TryFrom<RawCommand> for CommandConfig {
    type Error = String;

    fn try_from(raw: RawCommand) -> Result<Self, String> {
        if raw.command.first().is_none_or(|program| program.is_empty()) {
            return Err("`command` must be a non-empty argv array, the program first".into());
        }
        let input_schema = raw.input_schema.unwrap_or_else(unknown_schema);
        let output_schema = raw.output_schema.unwrap_or_else(unknown_schema);
        Compiled::new(&input_schema).map_err(|e| format!("`inputSchema` is {e}"))?;
        Compiled::new(&output_schema).map_err(|e| format!("`outputSchema` is {e}"))?;
        Ok(CommandConfig {
            command: raw.command,
            kind: raw.kind,
            description: raw.description,
            input_schema,
            output_schema,
            error_schemas: raw.error_schemas,
            timeout: raw.timeout.map(seconds).transpose()?,
            access_control: raw.access_control,
        })
    }
}

/// A `rename` table: operation (or tool) names to new names, none empty.
fn renames<'de, D: serde::Deserializer<'de>>(d: D) -> Result<BTreeMap<String, String>, D::Error> {
    let renames = BTreeMap::<String, String>::deserialize(d)?;
    if let Some((from, _)) = renames.iter().find(|(_, to)| to.is_empty()) {
        return Err(serde::de::Error::custom(format!(
            "`rename`: {from:?} cannot be renamed to an empty name"
        )));
    }
    Ok(renames)
}

/// `timeout` is seconds, a positive number.
fn seconds(s: f64) -> Result<Duration, String> {
    Duration::try_from_secs_f64(s)
        .ok()
        .filter(|d| !d.is_zero())
        .ok_or_else(|| format!("`timeout` must be a positive number of seconds, not {s}"))
}

fn opt_seconds<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
    let s = f64::deserialize(d)?;
    seconds(s).map(Some).map_err(serde::de::Error::custom)
}

/// How an MCP server is reached.
#[derive(Clone, Debug, PartialEq)]
pub enum McpTransport {
    /// A child process over stdio.
    Stdio {
        /// The program.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Added to a minimal inherited environment (PATH, HOME, USER, LANG, TERM, SHELL).
        env: BTreeMap<String, String>,
        /// Its working directory.
        cwd: Option<String>,
    },
    /// Streamable HTTP.
    Http {
        /// The endpoint.
        url: String,
        /// Extra request headers.
        headers: BTreeMap<String, String>,
    },
}

/// `mcpServers.<ns>`: the shape of the MCP client configuration files.
#[derive(Clone, Debug, Deserialize)]
#[serde(try_from = "RawMcpServer")]
pub struct McpServerConfig {
    /// stdio or HTTP.
    pub transport: McpTransport,
    /// How long one call may take.
    pub timeout: Option<Duration>,
    /// How long starting it (connect, initialize, list its tools) may take.
    pub connect_timeout: Option<Duration>,
    /// Applies to each of its operations.
    pub access_control: Option<AccessControl>,
    /// A tool's name on the server → the name of its operation (the tool is still called
    /// by its own name).
    pub rename: BTreeMap<String, String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawMcpServer {
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    env: Option<BTreeMap<String, String>>,
    cwd: Option<String>,
    url: Option<String>,
    headers: Option<BTreeMap<String, String>>,
    /// Some client files name the transport (`stdio`, `http`, `streamable-http`).
    #[serde(rename = "type")]
    transport: Option<String>,
    timeout: Option<f64>,
    connect_timeout: Option<f64>,
    access_control: Option<AccessControl>,
    #[serde(default, deserialize_with = "renames")]
    rename: BTreeMap<String, String>,
}

impl TryFrom<RawMcpServer> for McpServerConfig {
    type Error = String;

    fn try_from(raw: RawMcpServer) -> Result<Self, String> {
        let transport = match (raw.command, raw.url) {
            (Some(_), Some(_)) => {
                return Err("give `command` (stdio) or `url` (HTTP), not both".into());
            }
            (None, None) => return Err("needs `command` (stdio) or `url` (Streamable HTTP)".into()),
            (Some(command), None) => {
                if raw.headers.is_some() {
                    return Err("`headers` applies to `url` servers, not `command` ones".into());
                }
                if !matches!(raw.transport.as_deref(), None | Some("stdio")) {
                    return Err(format!(
                        "`type` {:?} does not match `command` (stdio)",
                        raw.transport.unwrap_or_default()
                    ));
                }
                if command.is_empty() {
                    return Err("`command` is empty".into());
                }
                McpTransport::Stdio {
                    command,
                    args: raw.args,
                    env: raw.env.unwrap_or_default(),
                    cwd: raw.cwd,
                }
            }
            (None, Some(url)) => {
                if !raw.args.is_empty() || raw.env.is_some() || raw.cwd.is_some() {
                    return Err(
                        "`args`, `env` and `cwd` apply to `command` servers, not `url` ones".into(),
                    );
                }
                if !matches!(
                    raw.transport.as_deref(),
                    None | Some("http" | "streamable-http")
                ) {
                    return Err(format!(
                        "`type` {:?} does not match `url` (Streamable HTTP: \"http\")",
                        raw.transport.unwrap_or_default()
                    ));
                }
                if !(url.starts_with("http://") || url.starts_with("https://")) {
                    return Err(format!("`url` {url:?} is not an http:// or https:// URL"));
                }
                McpTransport::Http {
                    url,
                    headers: raw.headers.unwrap_or_default(),
                }
            }
        };
        Ok(McpServerConfig {
            transport,
            timeout: raw.timeout.map(seconds).transpose()?,
            connect_timeout: raw
                .connect_timeout
                .map(seconds)
                .transpose()
                .map_err(|e| e.replace("`timeout`", "`connectTimeout`"))?,
            access_control: raw.access_control,
            rename: raw.rename,
        })
    }
}

/// How an OpenAPI service authenticates, the secret read from an environment variable.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AuthConfig {
    /// bearer, apiKey or basic.
    #[serde(rename = "type")]
    pub kind: AuthKind,
    /// The environment variable holding the token (basic: `user:password`).
    pub token_env: String,
    /// apiKey: the header to send it in.
    pub header_name: Option<String>,
    /// A prefix before the token.
    pub prefix: Option<String>,
}

/// The kinds of authentication.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum AuthKind {
    /// `Authorization: Bearer <token>`.
    Bearer,
    /// `<headerName>: <prefix><token>`.
    ApiKey,
    /// `Authorization: Basic base64(user:password)`.
    Basic,
}

/// `openapi.<ns>`: an HTTP service described by an OpenAPI document.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct OpenApiConfig {
    /// The document: a path or a URL.
    pub spec: String,
    /// Overrides the document's server.
    pub base_url: Option<String>,
    /// Extra request headers.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// Authentication.
    pub auth: Option<AuthConfig>,
    /// How long one request may take.
    #[serde(default, deserialize_with = "opt_seconds")]
    pub timeout: Option<Duration>,
    /// Applies to each of its operations.
    pub access_control: Option<AccessControl>,
    /// Take an `operationId` of the form `namespace.name` as the operation's id, without the
    /// source's namespace (for the document of another `envelope serve`, whose ids are
    /// kept that way).
    #[serde(default)]
    pub keep_ids: bool,
    /// An operation's name in the document (its `operationId`, else the derived
    /// `<method>_<path>`) → the name it is registered under (`<ns>.<new name>`).
    #[serde(default, deserialize_with = "renames")]
    pub rename: BTreeMap<String, String>,
    /// Where what is derived from the document is kept (`false`: nowhere; a folder; by
    /// default the user's cache folder): docs/operations.md, "Load once".
    pub cache: Option<crate::openapi::cache::CacheSetting>,
}
