//! A registry from a registry file ([`RegistryFile::load`]): one source per section
//! (`commands.<ns>`, `mcpServers.<ns>`, `openapi.<ns>`), registered side by side. The file's
//! own types ([`crate::file`]) know nothing of the sources they become.

use std::collections::BTreeMap;

use crate::command::{CommandHandler, DEFAULT_TIMEOUT};
use crate::error::RegistryError;
use crate::file::{CommandConfig, RegistryFile};
use crate::mcp::McpSource;
use crate::openapi::OpenApiSource;
use crate::registry::Registry;
use crate::source::{OperationSource, Operations, SourceFuture, register_all};
use crate::spec::{OperationSpec, OperationType};

/// A registry built from a file, with what the file did not register and why.
pub struct Loaded {
    /// The operations.
    pub registry: Registry,
    /// Warnings: unknown top-level keys, sources left out (malformed, unreachable).
    pub warnings: Vec<String>,
}

impl RegistryFile {
    /// The sources: one per `commands.<ns>`, `mcpServers.<ns>` and `openapi.<ns>`.
    pub fn sources(&self) -> Vec<Box<dyn OperationSource>> {
        let commands = self.commands.iter().map(|(namespace, commands)| {
            Box::new(CommandSource {
                namespace: namespace.clone(),
                commands: commands.clone(),
            }) as Box<dyn OperationSource>
        });
        let mcp = self.mcp_servers.iter().map(|(namespace, config)| {
            Box::new(McpSource::new(namespace, config.clone())) as Box<dyn OperationSource>
        });
        let openapi = self.openapi.iter().map(|(namespace, config)| {
            Box::new(OpenApiSource::new(
                namespace,
                config.clone(),
                self.base_dir.clone(),
            )) as Box<dyn OperationSource>
        });
        commands.chain(mcp).chain(openapi).collect()
    }

    /// Registers every source. A source that fails (an MCP server that does not start, an
    /// OpenAPI document that cannot be read) is a warning naming it; the others are
    /// registered.
    pub async fn load(&self) -> Loaded {
        let mut registry = Registry::new();
        let mut warnings: Vec<String> = self
            .unknown_keys
            .iter()
            .map(|key| format!("unknown top-level key {key:?} ignored"))
            .chain(self.invalid_sources.iter().cloned())
            .collect();
        warnings.extend(register_all(&mut registry, &self.sources()).await);
        Loaded { registry, warnings }
    }
}

/// `commands.<ns>`: each command an operation `<ns>.<name>`.
struct CommandSource {
    namespace: String,
    commands: BTreeMap<String, CommandConfig>,
}

impl OperationSource for CommandSource {
    fn name(&self) -> String {
        format!("commands.{}", self.namespace)
    }

    fn operations(&self) -> SourceFuture<'_> {
        Box::pin(async move {
            let mut operations: Operations = Vec::new();
            for (name, config) in &self.commands {
                let mut spec =
                    OperationSpec::new(self.namespace.clone(), name.clone(), config.kind);
                spec.description = config.description.clone();
                spec.input_schema = config.input_schema.clone();
                spec.output_schema = config.output_schema.clone();
                spec.error_schemas = config.error_schemas.clone();
                spec.access_control = config.access_control.clone();
                let codes = config
                    .error_schemas
                    .iter()
                    .map(|e| e.code.clone())
                    .collect();
                let timeout = config.timeout.unwrap_or(DEFAULT_TIMEOUT);
                let handler = CommandHandler::new(config.command.clone(), timeout, codes)
                    .ok_or_else(|| RegistryError::Operation {
                        id: spec.id(),
                        message: "empty command".into(),
                    })?
                    .streaming(config.kind == OperationType::Subscription);
                operations.push((spec, Box::new(handler)));
            }
            Ok(operations)
        })
    }
}
