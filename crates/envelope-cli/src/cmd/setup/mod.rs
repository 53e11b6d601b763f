//! `envelope setup CLIENT`: a client's MCP configuration file rewritten so that every server
//! runs behind `envelope proxy` (docs/proxy.md, "envelope setup").
//!
//! The file is read whole, each server entry is planned on its own (rewritten, or left as it
//! is with the reason), and the new text is written only when it differs: a second run finds
//! every entry already behind the proxy and writes nothing. The first change keeps the
//! original in `FILE.envelope-backup`, which `--undo` puts back.

mod codex;
mod diff;
mod json;

use std::path::{Path, PathBuf};

use crate::cli::{Client, SetupArgs};
use crate::{CmdResult, Failure};

/// The suffix of the backup next to the configuration file.
const BACKUP_SUFFIX: &str = ".envelope-backup";

/// Proxy options that would fight the entry's own upstream or the client's stdio.
const REFUSED_OPTIONS: &[&str] = &["--upstream-url", "--header", "--listen"];

pub fn run(args: &SetupArgs) -> CmdResult {
    let path = match &args.config {
        Some(path) => path.clone(),
        None => default_path(args.client)?,
    };
    let backup = backup_path(&path);
    if args.undo {
        if args.envelope.is_some() || !args.proxy_options.is_empty() {
            return Err(Failure::usage(
                crate::flags::NOT_APPLICABLE,
                "--envelope and proxy options do not apply with --undo (the backup is put back as it is)",
            ));
        }
        return undo(&path, &backup, args.dry_run);
    }
    check_proxy_options(&args.proxy_options)?;
    let envelope = envelope_path(args.envelope.as_deref())?;
    let front = Front {
        envelope: &envelope,
        options: &args.proxy_options,
    };
    let original = read(&path)?;
    let (rewritten, outcomes) = match args.client {
        Client::Codex => codex::rewrite(&path, &original, &front)?,
        client => json::rewrite(client, &path, &original, &front)?,
    };
    let mut report = format!("{}: {}\n", client_name(args.client), path.display());
    if outcomes.is_empty() {
        report.push_str("  no MCP servers in this file\n");
    }
    for outcome in &outcomes {
        report.push_str(&format!("  {}: {}\n", outcome.name, outcome.note));
    }
    let changed = rewritten != original;
    if args.dry_run {
        if changed {
            let text = diff::unified(
                &String::from_utf8_lossy(&original),
                &String::from_utf8_lossy(&rewritten),
                &path.display().to_string(),
            );
            crate::input::write_stdout(text.as_bytes())?;
            report.push_str("dry run: nothing written\n");
        } else {
            report.push_str("nothing to change\n");
        }
        eprint!("{report}");
        return Ok(());
    }
    if !changed {
        report.push_str("nothing to change\n");
        eprint!("{report}");
        return Ok(());
    }
    // The first change keeps the original; a later one (servers added since) keeps the
    // backup of the file as it was before any setup.
    let kept = if backup.exists() {
        format!(
            "the backup from before the first setup is kept in {}",
            backup.display()
        )
    } else {
        write_file(&backup, &original, &path)?;
        format!("the original is in {}", backup.display())
    };
    write_file(&path, &rewritten, &path)?;
    report.push_str(&format!(
        "wrote {} ({kept}; `envelope setup {} --undo` puts it back)\n",
        path.display(),
        client_name(args.client)
    ));
    eprint!("{report}");
    Ok(())
}

/// `--undo`: the backup back in place (and removed); with `--dry-run`, only the diff.
fn undo(path: &Path, backup: &Path, dry_run: bool) -> CmdResult {
    let saved = match std::fs::read(backup) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(Failure::usage(
                "setup.no-backup",
                format!(
                    "{}: no backup to put back ({} does not exist: setup never changed this file, or it was undone)",
                    path.display(),
                    backup.display()
                ),
            ));
        }
        Err(e) => return Err(unreadable(backup, &e)),
    };
    let current = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(unreadable(path, &e)),
    };
    if dry_run {
        if current != saved {
            let text = diff::unified(
                &String::from_utf8_lossy(&current),
                &String::from_utf8_lossy(&saved),
                &path.display().to_string(),
            );
            crate::input::write_stdout(text.as_bytes())?;
        }
        eprintln!(
            "dry run: {} would be put back from {}; nothing written",
            path.display(),
            backup.display()
        );
        return Ok(());
    }
    write_file(path, &saved, path)?;
    std::fs::remove_file(backup).map_err(|e| {
        Failure::usage(
            "setup.unwritable",
            format!("{}: cannot remove the backup: {e}", backup.display()),
        )
    })?;
    eprintln!(
        "put back {} from {} (backup removed)",
        path.display(),
        backup.display()
    );
    Ok(())
}

/// What `envelope proxy` the entries run, and with which options.
pub(crate) struct Front<'a> {
    pub envelope: &'a str,
    pub options: &'a [String],
}

impl Front<'_> {
    /// `proxy OPTIONS... -- COMMAND ARGS...`
    pub fn stdio_args(&self, command: &str, args: &[String]) -> Vec<String> {
        let mut out = vec!["proxy".to_string()];
        out.extend(self.options.iter().cloned());
        out.push("--".into());
        out.push(command.into());
        out.extend(args.iter().cloned());
        out
    }

    /// `proxy OPTIONS... --upstream-url URL --header 'Name: value'...`
    pub fn http_args(&self, url: &str, headers: &[(String, String)]) -> Vec<String> {
        let mut out = vec!["proxy".to_string()];
        out.extend(self.options.iter().cloned());
        out.push("--upstream-url".into());
        out.push(url.into());
        for (name, value) in headers {
            out.push("--header".into());
            out.push(format!("{name}: {value}"));
        }
        out
    }

    /// An entry that already runs `envelope proxy` (this binary, or any program named
    /// `envelope`), whatever its options.
    pub fn fronts(&self, command: &str, args: &[String]) -> bool {
        if args.first().map(String::as_str) != Some("proxy") {
            return false;
        }
        command == self.envelope
            || Path::new(command)
                .file_stem()
                .is_some_and(|stem| stem == "envelope")
    }
}

/// What became of one server entry.
pub(crate) struct Outcome {
    pub name: String,
    pub note: String,
}

impl Outcome {
    pub fn new(name: &str, note: impl Into<String>) -> Self {
        Outcome {
            name: name.to_string(),
            note: note.into(),
        }
    }
}

pub(crate) const NOW_STDIO: &str = "now behind envelope proxy";
pub(crate) const NOW_HTTP: &str =
    "Streamable HTTP server, now behind envelope proxy --upstream-url";
pub(crate) const ALREADY: &str = "left as is: already behind envelope proxy";
pub(crate) const SSE: &str =
    "left as is: an SSE server (envelope proxy fronts Streamable HTTP servers only)";

/// How a remote entry is reached, from its URL key, its `type` and its URL.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Remote {
    StreamableHttp,
    Sse,
}

/// The transport of a remote entry: an explicit `type` decides; Gemini CLI's `url` is SSE
/// and its `httpUrl` Streamable HTTP; otherwise a URL whose path ends in `/sse` is SSE
/// (Cursor and Windsurf take both transports under one key and tell them apart by trying).
pub(crate) fn remote_kind(client: Client, key: &str, kind: Option<&str>, url: &str) -> Remote {
    match kind {
        Some("sse") => return Remote::Sse,
        Some("http" | "streamable-http" | "streamableHttp" | "streamable_http") => {
            return Remote::StreamableHttp;
        }
        _ => {}
    }
    if key == "httpUrl" {
        return Remote::StreamableHttp;
    }
    if client == Client::Gemini && key == "url" {
        return Remote::Sse;
    }
    let path = url.split(['?', '#']).next().unwrap_or(url);
    if path.trim_end_matches('/').ends_with("/sse") {
        Remote::Sse
    } else {
        Remote::StreamableHttp
    }
}

/// The name the user typed for the client (its clap value).
pub(crate) fn client_name(client: Client) -> &'static str {
    match client {
        Client::ClaudeDesktop => "claude-desktop",
        Client::ClaudeCode => "claude-code",
        Client::Cursor => "cursor",
        Client::Vscode => "vscode",
        Client::Windsurf => "windsurf",
        Client::Codex => "codex",
        Client::Gemini => "gemini",
    }
}

fn home() -> Result<PathBuf, Failure> {
    let var = if cfg!(windows) { "USERPROFILE" } else { "HOME" };
    std::env::var_os(var)
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .ok_or_else(|| {
            Failure::usage(
                "usage.invalid",
                format!("${var} is not set: give the file with --config PATH"),
            )
        })
}

fn env_dir(var: &str) -> Option<PathBuf> {
    std::env::var_os(var)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// The client's user-level file (VS Code: the current folder's workspace file).
fn default_path(client: Client) -> Result<PathBuf, Failure> {
    Ok(match client {
        Client::ClaudeDesktop => {
            let dir = if cfg!(target_os = "macos") {
                home()?.join("Library/Application Support")
            } else if cfg!(windows) {
                match env_dir("APPDATA") {
                    Some(dir) => dir,
                    None => home()?.join("AppData").join("Roaming"),
                }
            } else {
                match env_dir("XDG_CONFIG_HOME") {
                    Some(dir) => dir,
                    None => home()?.join(".config"),
                }
            };
            dir.join("Claude").join("claude_desktop_config.json")
        }
        Client::ClaudeCode => home()?.join(".claude.json"),
        Client::Cursor => home()?.join(".cursor").join("mcp.json"),
        Client::Vscode => PathBuf::from(".vscode").join("mcp.json"),
        Client::Windsurf => home()?
            .join(".codeium")
            .join("windsurf")
            .join("mcp_config.json"),
        Client::Codex => match env_dir("CODEX_HOME") {
            Some(dir) => dir.join("config.toml"),
            None => home()?.join(".codex").join("config.toml"),
        },
        Client::Gemini => home()?.join(".gemini").join("settings.json"),
    })
}

fn backup_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(BACKUP_SUFFIX);
    PathBuf::from(name)
}

/// `--envelope PATH` as given, else this binary's absolute path.
fn envelope_path(given: Option<&Path>) -> Result<String, Failure> {
    let path = match given {
        Some(path) => path.to_path_buf(),
        None => std::env::current_exe()
            .and_then(|exe| exe.canonicalize())
            .map_err(|e| {
                Failure::usage(
                    "usage.invalid",
                    format!("cannot find this binary's path ({e}): give it with --envelope PATH"),
                )
            })?,
    };
    path.into_os_string().into_string().map_err(|p| {
        Failure::usage(
            "usage.bad-value",
            format!(
                "--envelope {}: the path is not UTF-8",
                Path::new(&p).display()
            ),
        )
    })
}

/// The proxy options parse as `envelope proxy`'s (a typo is refused now, not when the
/// client starts the server), and none of them names the upstream or the transport.
fn check_proxy_options(options: &[String]) -> CmdResult {
    for option in options {
        let flag = option.split('=').next().unwrap_or(option);
        if REFUSED_OPTIONS.contains(&flag) {
            return Err(Failure::usage(
                "usage.bad-value",
                format!(
                    "proxy option {flag}: setup writes each entry's own upstream (its command, or its url and headers), and the client speaks stdio"
                ),
            ));
        }
    }
    let mut argv = vec!["envelope".to_string(), "proxy".to_string()];
    argv.extend(options.iter().cloned());
    argv.push("--".into());
    argv.push("server".into());
    use clap::Parser as _;
    match crate::cli::Cli::try_parse_from(&argv) {
        // The proxy takes what it does not know as the start of the server's command.
        Ok(crate::cli::Cli {
            command: crate::cli::Command::Proxy(proxy),
        }) if proxy.command.len() > 1 => Err(Failure::usage(
            "usage.bad-value",
            format!(
                "proxy options: `{}` is not an option of envelope proxy (see envelope proxy --help)",
                proxy.command[0]
            ),
        )),
        Ok(_) => Ok(()),
        Err(e) => {
            let rendered = e.render().to_string();
            let first = rendered
                .lines()
                .next()
                .unwrap_or_default()
                .trim_start_matches("error: ")
                .to_string();
            Err(Failure::usage(
                "usage.bad-value",
                format!("proxy options: {first}"),
            ))
        }
    }
}

fn unreadable(path: &Path, e: &std::io::Error) -> Failure {
    Failure::usage("input.unreadable", format!("{}: {e}", path.display()))
}

fn read(path: &Path) -> Result<Vec<u8>, Failure> {
    std::fs::read(path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            Failure::usage(
                "input.unreadable",
                format!(
                    "{}: no such file (the client has no configuration there yet; give the file with --config PATH)",
                    path.display()
                ),
            )
        } else {
            unreadable(path, &e)
        }
    })
}

/// Writes `bytes` to `path` through a temporary file beside it, renamed over it, with the
/// permissions of `like` (the configuration file) when it exists. A symbolic link (a
/// dotfiles repository's) is written through: the file it points to changes, the link stays.
fn write_file(path: &Path, bytes: &[u8], like: &Path) -> CmdResult {
    let resolved = match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => std::fs::canonicalize(path).ok(),
        _ => None,
    };
    let path = resolved.as_deref().unwrap_or(path);
    let failed =
        |e: std::io::Error| Failure::usage("setup.unwritable", format!("{}: {e}", path.display()));
    let mut temp = path.as_os_str().to_owned();
    temp.push(".envelope-tmp");
    let temp = PathBuf::from(temp);
    std::fs::write(&temp, bytes).map_err(failed)?;
    if let Ok(meta) = std::fs::metadata(like) {
        let _ = std::fs::set_permissions(&temp, meta.permissions());
    }
    std::fs::rename(&temp, path).map_err(|e| {
        let _ = std::fs::remove_file(&temp);
        failed(e)
    })
}

/// `line:column` (1-based) of byte `offset` in `text`.
pub(crate) fn line_column(text: &[u8], offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |at| at + 1);
    let column = String::from_utf8_lossy(&before[start..]).chars().count() + 1;
    (line, column)
}

/// A configuration file that is not what its client reads (exit 1: the input is at fault).
pub(crate) fn malformed(path: &Path, message: impl std::fmt::Display) -> Failure {
    Failure::invalid("setup.malformed", format!("{}:{message}", path.display()))
}
