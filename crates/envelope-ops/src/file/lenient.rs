//! A registry file with a malformed source: the file is read again as a plain document and
//! each source checked on its own, so that a bad source is left out with an error naming it
//! and its line, and the others are still registered. An unknown key in a source is the
//! exception: it refuses the whole file (a typo such as `timeoutSecs` must not silently
//! remove operations), with the line and the key, as the policy file does.

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::RegistryFile;

/// The file without its malformed sources (each an entry of `invalid_sources`), or
/// `strict_error` when no source is to blame (a wrong top-level shape), or the first
/// unknown key of a source (`line 3: commands.a.b: unknown field `shel`, expected …`).
pub(super) fn read(
    text: &str,
    document: Value,
    strict_error: String,
) -> Result<RegistryFile, String> {
    let Value::Object(top) = document else {
        return Err(strict_error);
    };
    let mut file = RegistryFile::default();
    for (key, value) in top {
        let sources = match (key.as_str(), value) {
            ("commands" | "mcpServers" | "openapi", Value::Object(sources)) => sources,
            ("commands" | "mcpServers" | "openapi", _) => return Err(strict_error),
            _ => {
                file.unknown_keys.push(key);
                continue;
            }
        };
        for (namespace, source) in sources {
            let at = [key.as_str(), namespace.as_str()];
            if namespace.is_empty() || namespace.contains('.') {
                file.invalid(
                    text,
                    &at,
                    "the namespace must be non-empty and contain no '.'",
                );
                continue;
            }
            match key.as_str() {
                "mcpServers" => match typed(source) {
                    Ok(config) => drop(file.mcp_servers.insert(namespace, config)),
                    Err(e) => file.invalid(text, &at, &e),
                },
                "openapi" => match typed(source) {
                    Ok(config) => drop(file.openapi.insert(namespace, config)),
                    Err(e) => file.invalid(text, &at, &e),
                },
                _ => commands(&mut file, text, namespace, source),
            }
        }
    }
    if file.invalid.is_empty() {
        return Err(strict_error);
    }
    // The strict parser stopped at the first error in the file, at its exact line: it
    // belongs to the last bad source that starts before it.
    let strict_line = strict_error
        .strip_prefix("line ")
        .and_then(|rest| rest.split([':', ' ']).next())
        .and_then(|n| n.parse::<usize>().ok());
    if let Some(strict) = strict_line
        && let Some(owner) = file
            .invalid
            .iter_mut()
            .filter(|bad| bad.start.is_some_and(|start| start <= strict))
            .max_by_key(|bad| bad.start)
    {
        owner.line = Some(strict);
    }
    if let Some(unknown) = file
        .invalid
        .iter()
        .filter(|bad| bad.unknown_field)
        .min_by_key(|bad| bad.line)
    {
        return Err(unknown.error());
    }
    let invalid = std::mem::take(&mut file.invalid);
    file.invalid_sources = invalid.into_iter().map(|bad| bad.warning()).collect();
    Ok(file)
}

/// A malformed source, before it becomes its warning.
#[derive(Clone, Debug, Default)]
pub(super) struct Invalid {
    path: String,
    /// The line where the source starts.
    start: Option<usize>,
    /// The line to report (the field's, the parser's, else `start`).
    line: Option<usize>,
    message: String,
    /// The cause is a key the source does not know: the file is refused.
    unknown_field: bool,
}

impl Invalid {
    fn line(&self) -> String {
        self.line.map(|n| format!("line {n}: ")).unwrap_or_default()
    }

    fn warning(&self) -> String {
        format!(
            "{}: not registered: {}{}",
            self.path,
            self.line(),
            self.message
        )
    }

    /// The file's error: `line N: <source>: <cause>`.
    fn error(&self) -> String {
        format!("{}{}: {}", self.line(), self.path, self.message)
    }
}

/// `commands.<ns>`: each command is a source of its own here.
fn commands(file: &mut RegistryFile, text: &str, namespace: String, source: Value) {
    let Value::Object(commands) = source else {
        file.invalid(
            text,
            &["commands", &namespace],
            "must be a table of commands",
        );
        return;
    };
    for (name, config) in commands {
        match typed(config) {
            Ok(config) => drop(
                file.commands
                    .entry(namespace.clone())
                    .or_default()
                    .insert(name, config),
            ),
            Err(e) => file.invalid(text, &["commands", &namespace, &name], &e),
        }
    }
}

fn typed<T: DeserializeOwned>(value: Value) -> Result<T, String> {
    serde_json::from_value(value).map_err(|e| e.to_string())
}

impl RegistryFile {
    fn invalid(&mut self, text: &str, path: &[&str], message: &str) {
        let start = line_of(text, path, None);
        let field = message
            .strip_prefix("unknown field `")
            .and_then(|rest| rest.split('`').next());
        self.invalid.push(Invalid {
            path: path.join("."),
            start,
            line: line_of(text, path, field).or(start),
            message: message.to_string(),
            unknown_field: field.is_some(),
        });
    }
}

/// The line (1-based) of the source `path` in `text`, found by its keys in order (TOML
/// headers or keys, JSON keys); with `field`, the line of that field after it.
fn line_of(text: &str, path: &[&str], field: Option<&str>) -> Option<usize> {
    let lines: Vec<&str> = text.lines().collect();
    let mut at = 0;
    for key in path.iter().copied().chain(field) {
        at += lines[at..].iter().position(|line| names(line, key))?;
    }
    Some(at + 1)
}

/// Whether `line` names `key`: `"key"`, `[key`, `.key`, or `key =` at its start.
fn names(line: &str, key: &str) -> bool {
    let trimmed = line.trim_start();
    line.contains(&format!("\"{key}\""))
        || line.contains(&format!("[{key}"))
        || line.contains(&format!(".{key}"))
        || trimmed
            .strip_prefix(key)
            .is_some_and(|rest| rest.trim_start().starts_with('='))
}

/// The TOML document as JSON values (the source shapes read either).
pub(super) fn toml_as_json(text: &str) -> Option<Value> {
    let table: toml::Table = toml::from_str(text).ok()?;
    serde_json::to_value(table).ok()
}
