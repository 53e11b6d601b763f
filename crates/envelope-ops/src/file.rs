//! The registry file: TOML (`envelope.toml`) or JSON (`*.json`), one structure with the
//! sources by kind — `commands.<ns>.<name>`, `mcpServers.<ns>`, `openapi.<ns>`. Unknown keys
//! inside a source refuse the file, naming the key and its line; a source with a malformed
//! value is left out with a warning; unknown top-level keys are warnings (MCP client
//! configuration files carry other settings).

mod config;
mod lenient;

pub use config::{
    AuthConfig, AuthKind, CommandConfig, McpServerConfig, McpTransport, OpenApiConfig,
};

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, Visitor};

use crate::error::{RegistryError, TextError};

/// A parsed registry file.
#[derive(Clone, Debug, Default)]
pub struct RegistryFile {
    /// `commands.<ns>.<name>`.
    pub commands: BTreeMap<String, BTreeMap<String, CommandConfig>>,
    /// `mcpServers.<ns>`.
    pub mcp_servers: BTreeMap<String, McpServerConfig>,
    /// `openapi.<ns>`.
    pub openapi: BTreeMap<String, OpenApiConfig>,
    /// The top-level keys that are none of these, in file order.
    pub unknown_keys: Vec<String>,
    /// The folder of the file it was read from: relative `openapi.<ns>.spec` paths are
    /// read from there (else from the working directory).
    pub base_dir: Option<std::path::PathBuf>,
    /// The sources left out because they are malformed, each as its warning
    /// (`mcpServers.x: not registered: line 4: invalid type: integer `5`, …`).
    pub invalid_sources: Vec<String>,
    /// The same, while the file is read (see `lenient`).
    invalid: Vec<lenient::Invalid>,
}

impl RegistryFile {
    /// Parses TOML.
    ///
    /// ```
    /// use envelope_ops::file::RegistryFile;
    ///
    /// let file = RegistryFile::from_toml("[commands.sys.date]\ncommand = [\"date\", \"-u\"]\n").unwrap();
    /// assert_eq!(file.commands["sys"]["date"].command, ["date", "-u"]);
    /// // A malformed source is left out, with its warning; the others are read.
    /// let file = RegistryFile::from_toml("[commands.sys.date]\ncommand = [\"date\"]\ntimeout = 0\n\n[commands.sys.up]\ncommand = [\"uptime\"]\n").unwrap();
    /// assert!(file.invalid_sources[0].starts_with("commands.sys.date: not registered: line 1: `timeout` must be"));
    /// assert_eq!(file.commands["sys"].len(), 1);
    /// // An unknown key in a source refuses the file, naming the line, the source and the key.
    /// let e = RegistryFile::from_toml("[commands.sys.date]\ncommand = [\"date\"]\nshell = true\n").unwrap_err();
    /// let e = e.to_string();
    /// assert!(e.starts_with("line 3: commands.sys.date: unknown field `shell`"), "{e}");
    /// // A file that is not TOML, or not a table of sources, is an error with its line.
    /// assert!(RegistryFile::from_toml("[commands\n").unwrap_err().message().starts_with("line 1"));
    /// ```
    pub fn from_toml(text: &str) -> Result<Self, TextError> {
        Self::toml_text(text).map_err(TextError)
    }

    /// [`from_toml`](Self::from_toml), its error a sentence.
    fn toml_text(text: &str) -> Result<Self, String> {
        Self::strict_toml(text).or_else(|strict| match lenient::toml_as_json(text) {
            Some(document) => lenient::read(text, document, strict),
            None => Err(strict),
        })
    }

    /// TOML, every source well-formed.
    fn strict_toml(text: &str) -> Result<Self, String> {
        toml::from_str(text).map_err(|e| {
            let at = e
                .span()
                .map(|span| {
                    let line = text[..span.start.min(text.len())].matches('\n').count() + 1;
                    format!("line {line}: ")
                })
                .unwrap_or_default();
            format!("{at}{}", e.message().trim_end())
        })
    }

    /// Parses JSON (a Claude Desktop style `{"mcpServers": {...}}` file is one as is).
    pub fn from_json(text: &str) -> Result<Self, TextError> {
        Self::json_text(text).map_err(TextError)
    }

    /// [`from_json`](Self::from_json), its error a sentence.
    fn json_text(text: &str) -> Result<Self, String> {
        Self::strict_json(text).or_else(|strict| {
            match serde_json::from_str::<serde_json::Value>(text) {
                Ok(document) => lenient::read(text, document, strict),
                Err(_) => Err(strict),
            }
        })
    }

    /// JSON, every source well-formed.
    fn strict_json(text: &str) -> Result<Self, String> {
        serde_json::from_str(text).map_err(|e| {
            let message = e.to_string();
            // serde_json ends its messages with " at line L column C": lead with it instead.
            let cause = message
                .rsplit_once(" at line ")
                .map(|(cause, _)| cause.to_string())
                .unwrap_or(message);
            format!("line {} column {}: {cause}", e.line(), e.column())
        })
    }

    /// Reads `path`: JSON when it ends in `.json`, TOML otherwise.
    pub fn read(path: &Path) -> Result<Self, RegistryError> {
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| RegistryError::Io {
            path: shown.clone(),
            source,
        })?;
        let parsed = if path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("json"))
        {
            Self::from_json(&text)
        } else {
            Self::from_toml(&text)
        };
        let mut file = parsed.map_err(|e| RegistryError::Invalid {
            path: shown.clone(),
            message: e.0,
        })?;
        file.base_dir = path.parent().map(Path::to_path_buf);
        // A left-out source's warning names the file before its line.
        for warning in &mut file.invalid_sources {
            *warning = warning.replacen(
                ": not registered: ",
                &format!(": not registered: {shown}: "),
                1,
            );
        }
        Ok(file)
    }
}

/// A namespace: not empty, no `.` (the id is `namespace.name`).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Namespace(String);

impl<'de> Deserialize<'de> for Namespace {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        if name.is_empty() || name.contains('.') {
            return Err(de::Error::custom(format!(
                "namespace {name:?} must be non-empty and contain no '.' (ids are namespace.name)"
            )));
        }
        Ok(Namespace(name))
    }
}

fn unwrap_keys<V>(map: BTreeMap<Namespace, V>) -> BTreeMap<String, V> {
    map.into_iter().map(|(k, v)| (k.0, v)).collect()
}

impl<'de> Deserialize<'de> for RegistryFile {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(FileVisitor)
    }
}

/// The top level by hand: the known sections are read straight from the parser (so their
/// errors keep their line), the unknown ones are skipped and remembered.
struct FileVisitor;

impl<'de> Visitor<'de> for FileVisitor {
    type Value = RegistryFile;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a registry: a table of commands, mcpServers and openapi sections")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RegistryFile, A::Error> {
        let mut file = RegistryFile::default();
        let mut seen: Vec<String> = Vec::new();
        while let Some(key) = map.next_key::<String>()? {
            if seen.contains(&key) {
                return Err(de::Error::custom(format!("duplicate key {key:?}")));
            }
            match key.as_str() {
                "commands" => {
                    let commands: BTreeMap<Namespace, BTreeMap<String, CommandConfig>> =
                        map.next_value()?;
                    file.commands = unwrap_keys(commands);
                }
                "mcpServers" => file.mcp_servers = unwrap_keys(map.next_value()?),
                "openapi" => file.openapi = unwrap_keys(map.next_value()?),
                _ => {
                    map.next_value::<IgnoredAny>()?;
                    file.unknown_keys.push(key.clone());
                }
            }
            seen.push(key);
        }
        Ok(file)
    }
}
