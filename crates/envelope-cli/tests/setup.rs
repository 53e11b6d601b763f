//! `envelope setup CLIENT`: each client's configuration file (tests/fixtures/setup/, written
//! from the clients' documentation) rewritten byte for byte as expected
//! (`CLIENT.expected.EXT`), a second run changing nothing, `--dry-run` writing nothing,
//! `--undo` putting the original bytes back, and the errors with their ids and exit codes.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The envelope binary written into the fixtures' expected files.
const ENVELOPE: &str = "/opt/envelope/bin/envelope";

/// The proxy options of every run.
const OPTIONS: [&str; 4] = [
    "--limit",
    "16384",
    "--store",
    "/home/me/.cache/envelope/store",
];

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/setup")
        .join(name)
}

/// Runs `envelope setup ARGS` with HOME in `home` and none of the variables that move the
/// clients' files.
fn setup(args: &[&str], home: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_envelope"))
        .arg("setup")
        .args(args)
        .env("HOME", home)
        .env("USERPROFILE", home)
        .env_remove("CODEX_HOME")
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("APPDATA")
        .current_dir(home)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .expect("the built envelope binary")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The id of the `envelope: error[ID]: …` line, which must be the only line.
fn error_id(out: &Output) -> String {
    let text = stderr(out);
    assert_eq!(text.lines().count(), 1, "{text}");
    let rest = text
        .strip_prefix("envelope: error[")
        .unwrap_or_else(|| panic!("not an error line: {text}"));
    rest.split(']').next().unwrap().to_string()
}

fn backup_of(path: &Path) -> PathBuf {
    PathBuf::from(format!("{}.envelope-backup", path.display()))
}

/// `setup CLIENT --config FILE --envelope ENVELOPE -- OPTIONS` on a copy of `fixture`.
fn run_on(client: &str, file: &Path) -> Output {
    let mut args = vec![
        client,
        "--config",
        file.to_str().unwrap(),
        "--envelope",
        ENVELOPE,
        "--",
    ];
    args.extend(OPTIONS);
    setup(&args, file.parent().unwrap())
}

/// The whole cycle on one client's fixture: dry run, setup, second run, undo.
fn cycle(client: &str, name: &str, notes: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let original = std::fs::read(fixture(name)).unwrap();
    let (stem, ext) = name.rsplit_once('.').unwrap();
    let expected = std::fs::read(fixture(&format!("{stem}.expected.{ext}"))).unwrap();
    let file = dir.path().join(name);
    std::fs::write(&file, &original).unwrap();
    let backup = backup_of(&file);

    // --dry-run: the diff on stdout, nothing written.
    let mut args = vec![
        client,
        "--config",
        file.to_str().unwrap(),
        "--envelope",
        ENVELOPE,
        "--dry-run",
        "--",
    ];
    args.extend(OPTIONS);
    let dry = setup(&args, dir.path());
    assert_eq!(dry.status.code(), Some(0), "{client}: {}", stderr(&dry));
    assert_eq!(
        std::fs::read(&file).unwrap(),
        original,
        "{client}: dry run wrote"
    );
    assert!(!backup.exists(), "{client}: dry run made a backup");
    let diff = stdout(&dry);
    assert!(
        diff.starts_with(&format!("--- {}\n+++ {}", file.display(), file.display())),
        "{client}: {diff}"
    );
    assert!(diff.contains("\n@@ -"), "{client}: {diff}");
    assert!(diff.contains(ENVELOPE), "{client}: {diff}");
    assert!(
        stderr(&dry).contains("dry run: nothing written"),
        "{client}"
    );

    // The run: the expected bytes, the original kept.
    let out = run_on(client, &file);
    assert_eq!(out.status.code(), Some(0), "{client}: {}", stderr(&out));
    assert!(out.stdout.is_empty(), "{client}: {}", stdout(&out));
    let written = std::fs::read(&file).unwrap();
    assert_eq!(
        String::from_utf8_lossy(&written),
        String::from_utf8_lossy(&expected),
        "{client}: the rewritten file"
    );
    assert_eq!(written, expected, "{client}: byte for byte");
    assert_eq!(
        std::fs::read(&backup).unwrap(),
        original,
        "{client}: backup"
    );
    let report = stderr(&out);
    for note in notes {
        assert!(report.contains(note), "{client}: {note:?} not in\n{report}");
    }
    assert!(report.contains("wrote "), "{client}: {report}");

    // The dry run's diff was the change made: applying it gives the written file.
    assert_eq!(
        apply(&original, &diff),
        written,
        "{client}: the diff applied"
    );

    // Twice: nothing changes, byte for byte, and the backup stays the original.
    let again = run_on(client, &file);
    assert_eq!(again.status.code(), Some(0), "{client}: {}", stderr(&again));
    assert_eq!(
        std::fs::read(&file).unwrap(),
        expected,
        "{client}: second run"
    );
    assert_eq!(
        std::fs::read(&backup).unwrap(),
        original,
        "{client}: backup"
    );
    assert!(stderr(&again).contains("nothing to change"), "{client}");
    assert!(!stderr(&again).contains("wrote "), "{client}");

    // --undo: the original bytes, the backup gone; a second --undo has nothing to restore.
    let file_arg = file.to_str().unwrap();
    let undo = setup(&[client, "--config", file_arg, "--undo"], dir.path());
    assert_eq!(undo.status.code(), Some(0), "{client}: {}", stderr(&undo));
    assert_eq!(std::fs::read(&file).unwrap(), original, "{client}: undo");
    assert!(!backup.exists(), "{client}: the backup was not removed");
    let none = setup(&[client, "--config", file_arg, "--undo"], dir.path());
    assert_eq!(none.status.code(), Some(2), "{client}");
    assert_eq!(error_id(&none), "setup.no-backup");
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(leftovers, [std::ffi::OsString::from(name)], "{client}");
}

/// Applies a unified diff made by `setup --dry-run` to `original`.
fn apply(original: &[u8], diff: &str) -> Vec<u8> {
    let text = String::from_utf8_lossy(original);
    let old: Vec<&str> = text.split_inclusive('\n').collect();
    let mut out = String::new();
    let mut at = 0;
    let mut lines = diff.lines().skip(2).peekable();
    while let Some(header) = lines.next() {
        let start: usize = header
            .strip_prefix("@@ -")
            .unwrap()
            .split(',')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        let start = start.saturating_sub(1);
        for line in &old[at..start] {
            out.push_str(line);
        }
        at = start;
        while let Some(line) = lines.next_if(|l| !l.starts_with("@@")) {
            let newline = if lines.peek() == Some(&"\\ No newline at end of file") {
                lines.next();
                ""
            } else if text.contains("\r\n") {
                "\r\n"
            } else {
                "\n"
            };
            match line.split_at(1) {
                (" ", rest) => {
                    out.push_str(rest);
                    out.push_str(newline);
                    at += 1;
                }
                ("-", _) => at += 1,
                ("+", rest) => {
                    out.push_str(rest);
                    out.push_str(newline);
                }
                _ => panic!("not a diff line: {line:?}"),
            }
        }
    }
    for line in &old[at..] {
        out.push_str(line);
    }
    out.into_bytes()
}

#[test]
fn claude_desktop() {
    cycle(
        "claude-desktop",
        "claude-desktop.json",
        &[
            "filesystem: now behind envelope proxy",
            "github: now behind envelope proxy",
            "time: left as is: already behind envelope proxy",
        ],
    );
}

#[test]
fn claude_code_user_file_and_its_projects() {
    cycle(
        "claude-code",
        "claude-code-user.json",
        &[
            "sentry: Streamable HTTP server, now behind envelope proxy --upstream-url",
            "asana: left as is: an SSE server",
            "airtable: now behind envelope proxy",
            "internal: left as is: it signs in with `headersHelper`",
            "/home/me/code/app: playwright: now behind envelope proxy",
        ],
    );
}

#[test]
fn claude_code_project_file() {
    cycle(
        "claude-code",
        "claude-code-project.json",
        &[
            "shared-server: Streamable HTTP server",
            "memory: now behind envelope proxy",
        ],
    );
}

#[test]
fn cursor_with_four_spaces_and_no_final_newline() {
    cycle(
        "cursor",
        "cursor.json",
        &[
            "context7: Streamable HTTP server",
            "legacy-sse: left as is: an SSE server",
            "postgres: now behind envelope proxy",
        ],
    );
}

#[test]
fn vscode_with_tabs_and_inputs() {
    cycle(
        "vscode",
        "vscode.json",
        &[
            "Perplexity: now behind envelope proxy",
            "github: Streamable HTTP server",
            "fetch: now behind envelope proxy",
            "legacy: left as is: an SSE server",
        ],
    );
}

#[test]
fn windsurf_with_crlf_line_ends() {
    cycle(
        "windsurf",
        "windsurf.json",
        &[
            "github: now behind envelope proxy",
            "figma: Streamable HTTP server",
            "tidewave: left as is: an SSE server",
        ],
    );
}

#[test]
fn gemini_cli() {
    cycle(
        "gemini",
        "gemini.json",
        &[
            "pythonTools: now behind envelope proxy",
            "httpServer: Streamable HTTP server",
            "sseServer: left as is: an SSE server",
            "googleCloud: left as is: it signs in with `oauth`",
        ],
    );
}

#[test]
fn codex_toml_keeps_its_comments() {
    cycle(
        "codex",
        "codex.toml",
        &[
            "context7: now behind envelope proxy",
            "figma: Streamable HTTP server",
            "linear: left as is: its headers come from `bearer_token_env_var`",
            "time: now behind envelope proxy",
        ],
    );
}

#[test]
fn the_default_files_are_the_clients_own() {
    let home = tempfile::tempdir().unwrap();
    let places: [(&str, &str); 6] = [
        ("claude-code", ".claude.json"),
        ("cursor", ".cursor/mcp.json"),
        ("windsurf", ".codeium/windsurf/mcp_config.json"),
        ("gemini", ".gemini/settings.json"),
        ("vscode", ".vscode/mcp.json"),
        (
            "claude-desktop",
            if cfg!(target_os = "macos") {
                "Library/Application Support/Claude/claude_desktop_config.json"
            } else {
                ".config/Claude/claude_desktop_config.json"
            },
        ),
    ];
    let server = r#"{"mcpServers": {"time": {"command": "uvx", "args": ["mcp-server-time"]}}}"#;
    for (client, place) in places {
        let file = home.path().join(place);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(
            &file,
            server.replace(
                "mcpServers",
                if client == "vscode" {
                    "servers"
                } else {
                    "mcpServers"
                },
            ),
        )
        .unwrap();
        let out = setup(&[client, "--envelope", ENVELOPE], home.path());
        assert_eq!(out.status.code(), Some(0), "{client}: {}", stderr(&out));
        let written = std::fs::read_to_string(&file).unwrap();
        assert!(written.contains(ENVELOPE), "{client}: {written}");
        assert!(backup_of(&file).exists(), "{client}");
    }
    // Codex: ~/.codex/config.toml, or $CODEX_HOME/config.toml.
    let codex = home.path().join(".codex/config.toml");
    std::fs::create_dir_all(codex.parent().unwrap()).unwrap();
    std::fs::write(&codex, "[mcp_servers.time]\ncommand = \"uvx\"\n").unwrap();
    let out = setup(&["codex", "--envelope", ENVELOPE], home.path());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(&codex).unwrap(),
        format!(
            "[mcp_servers.time]\ncommand = \"{ENVELOPE}\"\nargs = [\"proxy\", \"--\", \"uvx\"]\n"
        )
    );
    let elsewhere = home.path().join("codex-home");
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::fs::write(
        elsewhere.join("config.toml"),
        "[mcp_servers.time]\ncommand = \"uvx\"\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_envelope"))
        .args(["setup", "codex", "--envelope", ENVELOPE])
        .env("HOME", home.path())
        .env("CODEX_HOME", &elsewhere)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        std::fs::read_to_string(elsewhere.join("config.toml"))
            .unwrap()
            .contains(ENVELOPE)
    );
}

#[test]
fn the_default_envelope_is_this_binary_by_its_absolute_path() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("mcp.json");
    std::fs::write(&file, "{\"mcpServers\": {\"t\": {\"command\": \"uvx\"}}}\n").unwrap();
    let out = setup(&["cursor", "--config", file.to_str().unwrap()], dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let exe = Path::new(env!("CARGO_BIN_EXE_envelope"))
        .canonicalize()
        .unwrap();
    let written: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    assert_eq!(written["mcpServers"]["t"]["command"], exe.to_str().unwrap());
    assert_eq!(
        written["mcpServers"]["t"]["args"],
        serde_json::json!(["proxy", "--", "uvx"])
    );
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        format!(
            "{{\n  \"mcpServers\": {{\n    \"t\": {{\n      \"command\": {},\n      \"args\": [\n        \"proxy\",\n        \"--\",\n        \"uvx\"\n      ]\n    }}\n  }}\n}}\n",
            serde_json::Value::String(exe.to_str().unwrap().into())
        )
    );
}

#[test]
fn a_later_run_keeps_the_first_backup() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("claude_desktop_config.json");
    let original =
        "{\n  \"mcpServers\": {\n    \"a\": {\n      \"command\": \"uvx\"\n    }\n  }\n}\n";
    std::fs::write(&file, original).unwrap();
    assert!(run_on("claude-desktop", &file).status.success());
    // A server added since: the next run fronts it, and the backup is still the original.
    let mut doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    doc["mcpServers"]["b"] = serde_json::json!({"command": "npx", "args": ["server-b"]});
    std::fs::write(&file, serde_json::to_string_pretty(&doc).unwrap() + "\n").unwrap();
    let out = run_on("claude-desktop", &file);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("b: now behind envelope proxy"),
        "{}",
        stderr(&out)
    );
    assert!(
        stderr(&out).contains("a: left as is: already behind"),
        "{}",
        stderr(&out)
    );
    assert!(stderr(&out).contains("the backup from before the first setup is kept"));
    assert_eq!(std::fs::read_to_string(backup_of(&file)).unwrap(), original);
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    assert_eq!(
        doc["mcpServers"]["b"]["args"],
        serde_json::json!([
            "proxy",
            "--limit",
            "16384",
            "--store",
            "/home/me/.cache/envelope/store",
            "--",
            "npx",
            "server-b"
        ])
    );
}

#[test]
fn nothing_to_change_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("settings.json");
    let text = "{\"theme\": \"GitHub\"}";
    std::fs::write(&file, text).unwrap();
    let out = run_on("gemini", &file);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("no MCP servers in this file"),
        "{}",
        stderr(&out)
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
    assert!(!backup_of(&file).exists());
}

#[test]
fn errors_are_one_line_with_their_id() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    std::fs::write(
        path("bad.json"),
        "{\n  \"mcpServers\": {\n    \"a\": {,\n  }\n}\n",
    )
    .unwrap();
    std::fs::write(
        path("bad.toml"),
        "model = \"x\"\n[mcp_servers.a]\ncommand = \n",
    )
    .unwrap();
    std::fs::write(path("list.json"), "{\"mcpServers\": [1, 2]}").unwrap();
    std::fs::write(path("ok.json"), "{\"mcpServers\": {}}").unwrap();
    let missing = path("missing.json");
    let bad_json = path("bad.json");
    let bad_toml = path("bad.toml");
    let list = path("list.json");
    let ok = path("ok.json");
    let cases: [(&[&str], i32, &str, &str); 8] = [
        (
            &["cursor", "--config", &missing],
            2,
            "input.unreadable",
            "no such file",
        ),
        (
            &["cursor", "--config", &bad_json],
            1,
            "setup.malformed",
            "bad.json:3:11: not JSON: key must be a string",
        ),
        (
            &["codex", "--config", &bad_toml],
            1,
            "setup.malformed",
            "bad.toml:3:11: not TOML",
        ),
        (
            &["cursor", "--config", &list],
            1,
            "setup.malformed",
            "mcpServers: not an object",
        ),
        (
            &["cursor", "--config", &ok, "--undo"],
            2,
            "setup.no-backup",
            "no backup",
        ),
        (
            &["cursor", "--config", &ok, "--", "--limt", "5"],
            2,
            "usage.bad-value",
            "--limt",
        ),
        (
            &[
                "cursor",
                "--config",
                &ok,
                "--",
                "--upstream-url",
                "http://x",
            ],
            2,
            "usage.bad-value",
            "--upstream-url",
        ),
        (
            &["cursor", "--config", &ok, "--undo", "--", "--limit", "5"],
            2,
            "usage.not-applicable",
            "--undo",
        ),
    ];
    for (args, code, id, words) in cases {
        let out = setup(args, dir.path());
        assert_eq!(out.status.code(), Some(code), "{args:?}: {}", stderr(&out));
        assert_eq!(error_id(&out), id, "{args:?}");
        assert!(
            stderr(&out).contains(words),
            "{args:?}: {words:?} not in {}",
            stderr(&out)
        );
        assert!(out.stdout.is_empty(), "{args:?}");
    }
    // Nothing was written beside the files.
    assert!(!Path::new(&format!("{ok}.envelope-backup")).exists());
    // An unknown client: clap's usage error, naming every known client.
    let out = setup(&["zed", "--config", &ok], dir.path());
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(error_id(&out), "usage.invalid");
    for client in [
        "claude-desktop",
        "claude-code",
        "cursor",
        "vscode",
        "windsurf",
        "codex",
        "gemini",
    ] {
        assert!(
            stderr(&out).contains(client),
            "{client} not in {}",
            stderr(&out)
        );
    }
}

#[test]
fn a_linked_file_is_written_through_its_link() {
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().join("dotfiles-mcp.json");
    let original = "{\"mcpServers\": {\"t\": {\"command\": \"uvx\"}}}\n";
    std::fs::write(&real, original).unwrap();
    let link = dir.path().join("mcp.json");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let out = run_on("cursor", &link);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(std::fs::read_to_string(&real).unwrap().contains(ENVELOPE));
    // --undo --dry-run: the diff back to the original, nothing written.
    let args = [
        "cursor",
        "--config",
        link.to_str().unwrap(),
        "--undo",
        "--dry-run",
    ];
    let dry = setup(&args, dir.path());
    assert_eq!(dry.status.code(), Some(0), "{}", stderr(&dry));
    assert!(
        stdout(&dry).contains(&format!("-      \"command\": \"{ENVELOPE}\",")),
        "{}",
        stdout(&dry)
    );
    assert!(backup_of(&link).exists());
    let undo = setup(&args[..4], dir.path());
    assert_eq!(undo.status.code(), Some(0), "{}", stderr(&undo));
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(std::fs::read_to_string(&real).unwrap(), original);
}
