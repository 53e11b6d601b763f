//! Codex's config.toml: `[mcp_servers.NAME]` tables with `command`, `args`, `env`… (stdio)
//! or `url` and `http_headers` (Streamable HTTP, the only remote transport Codex has).
//!
//! Edited with toml_edit, so comments, blank lines, key order and every other table stay as
//! they were; only the changed values are written anew (a comment after `command = ...` on
//! its line stays there).

use std::path::Path;

use toml_edit::{Array, DocumentMut, Entry, Item, Key, TableLike, Value};

use super::{ALREADY, Front, NOW_HTTP, NOW_STDIO, Outcome, line_column, malformed};
use crate::Failure;

/// Keys of a remote entry whose headers come from the environment or a sign-in, which
/// envelope proxy cannot do in Codex's place.
const AUTH_KEYS: &[&str] = &["bearer_token_env_var", "env_http_headers", "oauth"];

pub fn rewrite(
    path: &Path,
    original: &[u8],
    front: &Front,
) -> Result<(Vec<u8>, Vec<Outcome>), Failure> {
    let text = std::str::from_utf8(original).map_err(|e| {
        let (line, column) = line_column(original, e.valid_up_to());
        malformed(path, format!("{line}:{column}: not UTF-8"))
    })?;
    let mut doc: DocumentMut = text.parse().map_err(|e: toml_edit::TomlError| {
        let (line, column) = line_column(original, e.span().map_or(0, |span| span.start));
        malformed(
            path,
            format!("{line}:{column}: not TOML: {}", e.message().trim()),
        )
    })?;
    let mut outcomes = Vec::new();
    let mut changed = false;
    if let Some(servers) = doc.get_mut("mcp_servers") {
        let Some(servers) = servers.as_table_like_mut() else {
            return Err(malformed(path, "mcp_servers: not a table of servers"));
        };
        for (name, entry) in servers.iter_mut() {
            let name = name.get().to_string();
            let Some(table) = entry.as_table_like_mut() else {
                outcomes.push(Outcome::new(&name, "left as is: not a table"));
                continue;
            };
            match plan(table, front) {
                Ok(note) => {
                    changed = true;
                    outcomes.push(Outcome::new(&name, note));
                }
                Err(reason) => outcomes.push(Outcome::new(&name, reason)),
            }
        }
    }
    if !changed {
        return Ok((original.to_vec(), outcomes));
    }
    Ok((doc.to_string().into_bytes(), outcomes))
}

/// Puts the entry behind the proxy in place, or says why it is left as it is.
fn plan(table: &mut dyn TableLike, front: &Front) -> Result<&'static str, String> {
    if let Some(command) = table.get("command") {
        let command = command
            .as_str()
            .ok_or("left as is: its command is not a string")?
            .to_string();
        let args = match table.get("args") {
            None => Vec::new(),
            Some(item) => {
                let array = item
                    .as_array()
                    .ok_or("left as is: its args are not a list")?;
                array
                    .iter()
                    .map(|v| v.as_str().map(str::to_string))
                    .collect::<Option<Vec<_>>>()
                    .ok_or("left as is: an argument is not a string")?
            }
        };
        if front.fronts(&command, &args) {
            return Err(ALREADY.into());
        }
        let new_args = array(front.stdio_args(&command, &args));
        let had_args = table.contains_key("args");
        rebuild(table, |key, item| match key.get() {
            "command" => {
                let mut out = vec![(key.clone(), replaced(item, front.envelope.into()))];
                if !had_args {
                    out.push((Key::new("args"), Item::Value(new_args.clone())));
                }
                out
            }
            "args" => vec![(key.clone(), replaced(item, new_args.clone()))],
            _ => vec![(key.clone(), item)],
        });
        return Ok(NOW_STDIO);
    }
    let Some(url) = table.get("url") else {
        return Err("left as is: neither a command nor a url".into());
    };
    let url = url
        .as_str()
        .ok_or("left as is: its url is not a string")?
        .to_string();
    if let Some(key) = AUTH_KEYS.iter().find(|key| table.contains_key(key)) {
        return Err(format!(
            "left as is: its headers come from `{key}`, which envelope proxy cannot read (it sends fixed headers only)"
        ));
    }
    let headers = match table.get("http_headers") {
        None => Vec::new(),
        Some(item) => {
            let headers = item
                .as_table_like()
                .ok_or("left as is: its http_headers are not a table")?;
            headers
                .iter()
                .map(|(name, value)| value.as_str().map(|v| (name.to_string(), v.to_string())))
                .collect::<Option<Vec<_>>>()
                .ok_or("left as is: a header value is not a string")?
        }
    };
    let new_args = array(front.http_args(&url, &headers));
    rebuild(table, |key, item| match key.get() {
        "url" => {
            let command = Key::new("command").with_leaf_decor(key.leaf_decor().clone());
            vec![
                (command, replaced(item, front.envelope.into())),
                (Key::new("args"), Item::Value(new_args.clone())),
            ]
        }
        "http_headers" => Vec::new(),
        _ => vec![(key.clone(), item)],
    });
    Ok(NOW_HTTP)
}

/// `new` with the decor (spacing, a comment after it) of the value it replaces.
fn replaced(old: Item, mut new: Value) -> Item {
    if let Some(old) = old.as_value() {
        *new.decor_mut() = old.decor().clone();
    }
    Item::Value(new)
}

fn array(items: Vec<String>) -> Value {
    Value::Array(Array::from_iter(items))
}

/// The table's entries again, in order, each replaced by what `f` makes of it (none, one or
/// more entries): toml_edit inserts at the end only.
fn rebuild(table: &mut dyn TableLike, mut f: impl FnMut(&Key, Item) -> Vec<(Key, Item)>) {
    let keys: Vec<String> = table.iter().map(|(key, _)| key.to_string()).collect();
    let entries: Vec<(Key, Item)> = keys
        .iter()
        .filter_map(|key| {
            table
                .get_key_value(key)
                .map(|(key, item)| (key.clone(), item.clone()))
        })
        .collect();
    table.clear();
    for (key, item) in entries {
        for (key, item) in f(&key, item) {
            match table.entry_format(&key) {
                Entry::Vacant(vacant) => {
                    vacant.insert(item);
                }
                Entry::Occupied(mut occupied) => {
                    occupied.insert(item);
                }
            }
        }
    }
}
