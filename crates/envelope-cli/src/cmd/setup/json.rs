//! The JSON clients: Claude Desktop, Claude Code, Cursor, VS Code, Windsurf, Gemini CLI.
//!
//! The file is parsed with its key order kept (serde_json's `preserve_order`) and written
//! back indented as it was (its first indented line decides: two spaces when none), with its
//! line ends (CRLF stays CRLF), its byte-order mark and its final newline or lack of one.

use std::path::Path;

use serde_json::{Map, Value};

use super::{ALREADY, Front, NOW_HTTP, NOW_STDIO, Outcome, Remote, SSE, malformed};
use crate::Failure;
use crate::cli::Client;

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Keys of a remote entry whose sign-in the proxy cannot do in the client's place.
const AUTH_KEYS: &[&str] = &["oauth", "authProviderType", "headersHelper"];

/// The rewritten file and what became of each entry.
pub fn rewrite(
    client: Client,
    path: &Path,
    original: &[u8],
    front: &Front,
) -> Result<(Vec<u8>, Vec<Outcome>), Failure> {
    let (bom, body) = match original.strip_prefix(BOM) {
        Some(rest) => (true, rest),
        None => (false, original),
    };
    let mut doc: Value = serde_json::from_slice(body).map_err(|e| {
        let text = e.to_string();
        let message = text.split(" at line ").next().unwrap_or(&text);
        malformed(
            path,
            format!("{}:{}: not JSON: {message}", e.line(), e.column()),
        )
    })?;
    let Value::Object(root) = &mut doc else {
        return Err(malformed(path, "1:1: not a JSON object"));
    };
    let key = if client == Client::Vscode {
        "servers"
    } else {
        "mcpServers"
    };
    let mut outcomes = Vec::new();
    let mut changed = false;
    if let Some(servers) = root.get_mut(key) {
        changed |= section(client, path, key, servers, front, "", &mut outcomes)?;
    }
    // Claude Code's ~/.claude.json: the servers of each project ("local" scope) too.
    if client == Client::ClaudeCode
        && let Some(Value::Object(projects)) = root.get_mut("projects")
    {
        for (project, settings) in projects.iter_mut() {
            if let Some(servers) = settings.get_mut("mcpServers") {
                let label = format!("projects.{project}.mcpServers");
                let prefix = format!("{project}: ");
                changed |= section(client, path, &label, servers, front, &prefix, &mut outcomes)?;
            }
        }
    }
    if !changed {
        return Ok((original.to_vec(), outcomes));
    }
    Ok((write(&doc, body, bom), outcomes))
}

/// Rewrites the entries of one `mcpServers` (or `servers`) object; true if any changed.
fn section(
    client: Client,
    path: &Path,
    label: &str,
    servers: &mut Value,
    front: &Front,
    prefix: &str,
    outcomes: &mut Vec<Outcome>,
) -> Result<bool, Failure> {
    let Value::Object(servers) = servers else {
        return Err(malformed(
            path,
            format!("{label}: not an object of servers (name: entry)"),
        ));
    };
    let mut changed = false;
    for (name, entry) in servers.iter_mut() {
        let shown = format!("{prefix}{name}");
        match plan(client, entry, front) {
            Ok((rewritten, note)) => {
                *entry = Value::Object(rewritten);
                changed = true;
                outcomes.push(Outcome::new(&shown, note));
            }
            Err(reason) => outcomes.push(Outcome::new(&shown, reason)),
        }
    }
    Ok(changed)
}

/// The entry behind the proxy and what was done, or why it is left as it is.
fn plan(
    client: Client,
    entry: &Value,
    front: &Front,
) -> Result<(Map<String, Value>, String), String> {
    let Value::Object(map) = entry else {
        return Err("left as is: not an object".into());
    };
    if let Some(command) = map.get("command") {
        let command = command
            .as_str()
            .ok_or("left as is: its command is not a string")?;
        let args = match map.get("args") {
            None => Vec::new(),
            Some(Value::Array(items)) => items
                .iter()
                .map(|item| item.as_str().map(str::to_string))
                .collect::<Option<Vec<_>>>()
                .ok_or("left as is: an argument is not a string")?,
            Some(_) => return Err("left as is: its args are not a list".into()),
        };
        if front.fronts(command, &args) {
            return Err(ALREADY.into());
        }
        let new_args = strings(front.stdio_args(command, &args));
        let mut out = Map::new();
        for (key, value) in map {
            match key.as_str() {
                "command" => {
                    out.insert(key.clone(), Value::String(front.envelope.into()));
                    if !map.contains_key("args") {
                        out.insert("args".into(), new_args.clone());
                    }
                }
                "args" => {
                    out.insert(key.clone(), new_args.clone());
                }
                _ => {
                    out.insert(key.clone(), value.clone());
                }
            }
        }
        return Ok((out, NOW_STDIO.into()));
    }
    let Some((url_key, url)) = ["httpUrl", "serverUrl", "url"]
        .iter()
        .find_map(|key| map.get(*key).map(|url| (*key, url)))
    else {
        return Err("left as is: neither a command nor a url".into());
    };
    let url = url.as_str().ok_or("left as is: its url is not a string")?;
    let kind = map.get("type").and_then(Value::as_str);
    if super::remote_kind(client, url_key, kind, url) == Remote::Sse {
        return Err(SSE.into());
    }
    if let Some(key) = AUTH_KEYS.iter().find(|key| map.contains_key(**key)) {
        return Err(format!(
            "left as is: it signs in with `{key}`, which envelope proxy cannot do (it sends fixed headers only)"
        ));
    }
    let headers = match map.get("headers") {
        None => Vec::new(),
        Some(Value::Object(headers)) => headers
            .iter()
            .map(|(name, value)| value.as_str().map(|v| (name.clone(), v.to_string())))
            .collect::<Option<Vec<_>>>()
            .ok_or("left as is: a header value is not a string")?,
        Some(_) => return Err("left as is: its headers are not an object".into()),
    };
    let new_args = strings(front.http_args(url, &headers));
    let mut out = Map::new();
    // VS Code needs the type; the others take a command as stdio.
    let typed = map.contains_key("type") || client == Client::Vscode;
    for (key, value) in map {
        if key == url_key {
            if typed && !map.contains_key("type") {
                out.insert("type".into(), Value::String("stdio".into()));
            }
            out.insert("command".into(), Value::String(front.envelope.into()));
            out.insert("args".into(), new_args.clone());
        } else if key == "type" {
            out.insert(key.clone(), Value::String("stdio".into()));
        } else if key != "headers" {
            out.insert(key.clone(), value.clone());
        }
    }
    Ok((out, NOW_HTTP.into()))
}

fn strings(items: Vec<String>) -> Value {
    Value::Array(items.into_iter().map(Value::String).collect())
}

/// The document as the file was laid out: its indentation, line ends and final newline.
fn write(doc: &Value, body: &[u8], bom: bool) -> Vec<u8> {
    let text = String::from_utf8_lossy(body);
    let indent = text
        .lines()
        .skip(1)
        .find(|line| !line.trim().is_empty())
        .map(|line| {
            let trimmed = line.trim_start_matches([' ', '\t']);
            line[..line.len() - trimmed.len()].to_string()
        })
        .filter(|indent| !indent.is_empty())
        .unwrap_or_else(|| "  ".to_string());
    let crlf = text.contains("\r\n");
    let final_newline = text.ends_with('\n');
    // serde_json's pretty form indents by two spaces; a JSON string never holds a raw line
    // break, so each line's leading spaces are indentation only.
    let pretty = serde_json::to_string_pretty(doc).expect("a Value always serializes");
    let newline = if crlf { "\r\n" } else { "\n" };
    let mut out = String::with_capacity(pretty.len() + pretty.len() / 8);
    for (at, line) in pretty.lines().enumerate() {
        if at > 0 {
            out.push_str(newline);
        }
        let content = line.trim_start_matches(' ');
        let depth = (line.len() - content.len()) / 2;
        for _ in 0..depth {
            out.push_str(&indent);
        }
        out.push_str(content);
    }
    if final_newline {
        out.push_str(newline);
    }
    let mut bytes = Vec::with_capacity(out.len() + 3);
    if bom {
        bytes.extend_from_slice(BOM);
    }
    bytes.extend_from_slice(out.as_bytes());
    bytes
}
