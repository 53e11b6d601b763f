//! The README's examples run as written, and `envelope completions` prints a script.
//!
//! Which README lines are commands, and what they must print:
//!
//! - Only fenced blocks tagged `sh` are read (`rust` and `json` blocks are not run).
//! - In a block with prompts, each line starting with `$ ` is a command (a line ending in `\`
//!   continues it). The lines under it, up to the next `$ ` line, are its exact stdout; blank
//!   lines at the end of that output only separate commands. A command with no lines under
//!   it may print anything.
//! - In a block without prompts, each line starting with `envelope ` is a command whose output
//!   is not shown (the install block's `cargo` lines are not run).
//! - A `# exit N` comment on a command's first line gives its exit status; otherwise it is 0.
//! - A fenced block right after a `<!-- stderr -->` line is the exact stderr of the last
//!   command before it.
//! - The time of a call, `"timestamp":<Unix ms>` in an operations envelope, matches any
//!   number (the README shows one call's).
//!
//! Commands run in README order through `sh -c`, from the repository root, with the built
//! binary first on `PATH`, a fresh `ENVELOPE_STORE` shared by all of them (an `artifact get`
//! reads what the `put` before it stored) and stdin empty. Commands that cannot run here are
//! listed in [`SKIPPED`] with the reason; each entry must still be found in the README.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// README commands that are not run, each with the reason.
const SKIPPED: &[(&str, &str)] = &[
    (
        "envelope completions bash > ~/.local/share/bash-completion/completions/envelope",
        INTO_HOME,
    ),
    (
        "envelope completions zsh > ~/.zfunc/_envelope    # with fpath+=~/.zfunc before compinit in ~/.zshrc",
        INTO_HOME,
    ),
    (
        "envelope completions fish > ~/.config/fish/completions/envelope.fish",
        INTO_HOME,
    ),
    (
        "envelope serve --registry examples/envelope.toml --http 127.0.0.1:8080 &",
        IN_THE_BACKGROUND,
    ),
    (
        "curl -s -H 'content-type: application/json' -d '\"abc\"' http://127.0.0.1:8080/ops/text.upper",
        IN_THE_BACKGROUND,
    ),
];

const INTO_HOME: &str = "installs into the user's home directory \
    (readme_completion_commands_create_their_folders runs the block with HOME in a temporary folder)";

const IN_THE_BACKGROUND: &str = "a server in the background, on a fixed port \
    (readme_http_example_answers_as_shown runs both on a free port)";

/// Sample files the README names must stay small.
const MAX_SAMPLE_BYTES: u64 = 50_000;

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// One command of the README and what it must do.
#[derive(Debug)]
struct Example {
    /// README line of the command (1-based).
    line: usize,
    command: String,
    status: i32,
    stdout: Option<String>,
    stderr: Option<String>,
}

/// The exit status a `# exit N` comment on the command's first line gives, else 0.
fn expected_status(command: &str) -> i32 {
    let first = command.lines().next().unwrap_or_default();
    first
        .match_indices('#')
        .filter(|(at, _)| *at > 0 && first[..*at].ends_with(char::is_whitespace))
        .find_map(|(at, _)| {
            let comment = first[at + 1..].trim_start().strip_prefix("exit ")?;
            let digits: String = comment.chars().take_while(char::is_ascii_digit).collect();
            digits.parse().ok()
        })
        .unwrap_or(0)
}

/// `text` with each `"timestamp":<digits>` written `"timestamp":0` (the time of a call).
fn without_timestamps(text: &str) -> String {
    const KEY: &str = "\"timestamp\":";
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(KEY) {
        out.push_str(&rest[..at + KEY.len()]);
        rest = &rest[at + KEY.len()..];
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 {
            out.push('0');
            rest = &rest[digits..];
        }
    }
    out.push_str(rest);
    out
}

/// Lines as one text, each ending in a newline.
fn joined(lines: &[&str]) -> String {
    lines.iter().map(|l| format!("{l}\n")).collect()
}

/// The commands of one `sh` block (its lines, the README line of the first).
fn block_examples(lines: &[&str], first_line: usize, out: &mut Vec<Example>) {
    let prompted = lines.iter().any(|l| l.starts_with("$ "));
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let (start, rest) = if prompted {
            match line.strip_prefix("$ ") {
                Some(rest) => (i, rest),
                None => {
                    i += 1;
                    continue;
                }
            }
        } else if line.starts_with("envelope ") {
            (i, line)
        } else {
            i += 1;
            continue;
        };
        let mut command = rest.to_string();
        while command.ends_with('\\') && i + 1 < lines.len() {
            i += 1;
            command.push('\n');
            command.push_str(lines[i]);
        }
        i += 1;
        let mut output = Vec::new();
        if prompted {
            while i < lines.len() && !lines[i].starts_with("$ ") {
                output.push(lines[i]);
                i += 1;
            }
            while output.last().is_some_and(|l| l.trim().is_empty()) {
                output.pop();
            }
        }
        out.push(Example {
            line: first_line + start,
            status: expected_status(&command),
            command,
            stdout: (!output.is_empty()).then(|| joined(&output)),
            stderr: None,
        });
    }
}

/// Every command of the README, in order.
fn readme_examples(readme: &str) -> Vec<Example> {
    let lines: Vec<&str> = readme.lines().collect();
    let mut examples: Vec<Example> = Vec::new();
    let mut stderr_next = false;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let Some(info) = line.strip_prefix("```") else {
            if !line.trim().is_empty() {
                stderr_next = line.trim() == "<!-- stderr -->";
            }
            i += 1;
            continue;
        };
        let start = i + 1;
        let mut end = start;
        while end < lines.len() && lines[end] != "```" {
            end += 1;
        }
        assert!(
            end < lines.len(),
            "README line {}: unclosed code block",
            i + 1
        );
        let body = &lines[start..end];
        if stderr_next {
            let last = examples
                .last_mut()
                .unwrap_or_else(|| panic!("README line {}: stderr with no command", i + 1));
            last.stderr = Some(joined(body));
            stderr_next = false;
        } else if info.trim() == "sh" {
            block_examples(body, start + 1, &mut examples);
        }
        i = end + 1;
    }
    examples
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("envelope-readme-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn sh(command: &str, root: &Path, store: &Path) -> Output {
    let bin = Path::new(env!("CARGO_BIN_EXE_envelope")).parent().unwrap();
    let path = std::env::var_os("PATH").unwrap_or_default();
    let path = std::env::join_paths(
        std::iter::once(bin.to_path_buf()).chain(std::env::split_paths(&path)),
    )
    .unwrap();
    Command::new("sh")
        .arg("-c")
        .arg(command)
        .current_dir(root)
        .env("PATH", path)
        .env("ENVELOPE_STORE", store)
        .env_remove("CTXO_RESPONSE_LIMIT")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .unwrap()
}

fn top_level_entries(root: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(root)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn readme_commands_run_as_written() {
    let root = repo_root();
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let examples = readme_examples(&readme);
    let store = temp_dir("store");
    let before = top_level_entries(&root);
    let mut failures = Vec::new();
    let mut skipped = vec![0; SKIPPED.len()];
    let mut ran = 0;
    for example in &examples {
        if let Some(k) = SKIPPED.iter().position(|(c, _)| *c == example.command) {
            skipped[k] += 1;
            continue;
        }
        ran += 1;
        let out = sh(&example.command, &root, &store);
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let mut wrong = Vec::new();
        if out.status.code() != Some(example.status) {
            wrong.push(format!(
                "exit status {:?}, README says {}",
                out.status.code(),
                example.status
            ));
        }
        if let Some(want) = &example.stdout
            && without_timestamps(want) != without_timestamps(&stdout)
        {
            wrong.push(format!("stdout:\n{stdout}README shows:\n{want}"));
        }
        if let Some(want) = &example.stderr
            && *want != stderr
        {
            wrong.push(format!("stderr:\n{stderr}README shows:\n{want}"));
        }
        if !wrong.is_empty() {
            if example.stderr.is_none() {
                wrong.push(format!("(stderr: {})", stderr.trim_end()));
            }
            failures.push(format!(
                "README line {}: $ {}\n{}",
                example.line,
                example.command,
                wrong.join("\n")
            ));
        }
    }
    let _ = std::fs::remove_dir_all(&store);
    for ((command, reason), count) in SKIPPED.iter().zip(&skipped) {
        assert_eq!(
            *count, 1,
            "skipped command not found once in the README ({reason}): {command}"
        );
    }
    assert!(
        failures.is_empty(),
        "{} of {ran} README commands differ from the README:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
    // The README covers every command it documents with an example that runs.
    for name in [
        "detect", "convert", "wrap", "unwrap", "shape", "artifact", "validate", "ops", "call",
    ] {
        assert!(
            examples
                .iter()
                .any(|e| !SKIPPED.iter().any(|(c, _)| *c == e.command)
                    && e.command.contains(&format!("envelope {name} "))),
            "no README example runs `envelope {name}`"
        );
    }
    assert_eq!(
        top_level_entries(&root),
        before,
        "README commands left files in the repository root"
    );
}

#[test]
fn readme_sample_files_are_bundled_and_small() {
    let root = repo_root();
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let mut named = Vec::new();
    for (at, _) in readme.match_indices("examples/") {
        let path: String = readme[at..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '/' | '.' | '-' | '_'))
            .collect();
        let path = path.trim_end_matches('.');
        if path.len() > "examples/".len() && !path.ends_with('/') {
            named.push(path.to_string());
        }
    }
    assert!(named.len() >= 4, "README names few sample files: {named:?}");
    for path in named {
        let meta = std::fs::metadata(root.join(&path))
            .unwrap_or_else(|e| panic!("README names {path}, which is not bundled: {e}"));
        assert!(
            meta.len() < MAX_SAMPLE_BYTES,
            "{path} is {} bytes; samples stay under {MAX_SAMPLE_BYTES}",
            meta.len()
        );
    }
}

#[test]
fn readme_rules_read_prompts_outputs_statuses_and_stderr() {
    let readme = "text\n```sh\n$ envelope a \\\n    --b\nout 1\nout 2\n\n$ envelope c    # exit 1\n```\n\
                  <!-- stderr -->\n```json\nerr\n```\n```sh\nenvelope d > x    # exit 2\ncargo e\n```\n\
                  ```rust\n$ envelope f\n```\n";
    let examples = readme_examples(readme);
    let got: Vec<_> = examples
        .iter()
        .map(|e| {
            (
                e.line,
                e.command.as_str(),
                e.status,
                e.stdout.as_deref(),
                e.stderr.as_deref(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (3, "envelope a \\\n    --b", 0, Some("out 1\nout 2\n"), None),
            (8, "envelope c    # exit 1", 1, None, Some("err\n")),
            (15, "envelope d > x    # exit 2", 2, None, None),
        ]
    );
}

fn completions(shell: &str) -> Output {
    Command::new(env!("CARGO_BIN_EXE_envelope"))
        .args(["completions", shell])
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

#[test]
fn completions_print_a_script_for_each_shell() {
    let out = completions("bash");
    assert!(out.status.success(), "{out:?}");
    let script = String::from_utf8(out.stdout).unwrap();
    assert!(script.contains("_envelope"), "{script}");
    for command in ["validate", "shape", "artifact", "completions"] {
        assert!(script.contains(command), "bash script lacks {command}");
    }
    for shell in ["zsh", "fish", "powershell", "elvish"] {
        let out = completions(shell);
        assert!(out.status.success(), "{shell}: {out:?}");
        let script = String::from_utf8(out.stdout).unwrap();
        assert!(
            script.contains("envelope") && script.contains("validate"),
            "{shell}: {script}"
        );
    }
}

#[test]
fn completions_for_an_unknown_shell_exit_2() {
    let out = completions("tcsh");
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("tcsh"), "{stderr}");
}

#[test]
fn timestamps_of_calls_match_any_number() {
    assert_eq!(
        without_timestamps(r#"{"a":1,"timestamp":1795465995572},"timestamp":"x""#),
        r#"{"a":1,"timestamp":0},"timestamp":"x""#
    );
    assert_ne!(
        without_timestamps(r#"{"timestamp":1,"b":1}"#),
        without_timestamps(r#"{"timestamp":1,"b":2}"#)
    );
}

/// The lines of the README's `sh` block holding `needle`.
fn sh_block_with(readme: &str, needle: &str) -> Vec<String> {
    let mut block = Vec::new();
    let mut inside = false;
    for line in readme.lines() {
        if line == "```sh" {
            inside = true;
            block.clear();
        } else if line == "```" && inside {
            inside = false;
            if block.iter().any(|l: &String| l.contains(needle)) {
                return block;
            }
        } else if inside {
            block.push(line.to_string());
        }
    }
    panic!("no sh block of the README holds {needle:?}")
}

#[test]
fn readme_completion_commands_create_their_folders() {
    let readme = std::fs::read_to_string(repo_root().join("README.md")).unwrap();
    let block = sh_block_with(&readme, "envelope completions bash");
    let home = temp_dir("home");
    let bin = Path::new(env!("CARGO_BIN_EXE_envelope")).parent().unwrap();
    let path = std::env::join_paths(std::iter::once(bin.to_path_buf()).chain(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
    ))
    .unwrap();
    // The whole block as written, in a home where none of the folders exists yet.
    let script = format!("set -e\n{}\n", block.join("\n"));
    let out = Command::new("sh")
        .arg("-c")
        .arg(&script)
        .env("HOME", &home)
        .env("PATH", path)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{script}\n{out:?}");
    let mut written = 0;
    for line in &block {
        let Some((_, target)) = line.split_once(" > ~/") else {
            continue;
        };
        let target = target.split_whitespace().next().unwrap();
        let script = std::fs::read_to_string(home.join(target)).unwrap();
        assert!(script.contains("envelope"), "{target}: {script}");
        written += 1;
    }
    assert_eq!(written, 3, "{block:?}");
    let _ = std::fs::remove_dir_all(&home);
}

#[test]
fn readme_http_example_answers_as_shown() {
    let root = repo_root();
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let block = sh_block_with(&readme, "/ops/");
    let command = |prefix: &str| {
        block
            .iter()
            .find_map(|l| l.strip_prefix("$ ").filter(|c| c.starts_with(prefix)))
            .unwrap_or_else(|| panic!("no `{prefix}` in {block:?}"))
            .to_string()
    };
    let serve = command("envelope serve ");
    let curl = command("curl ");
    let shown = block
        .iter()
        .skip_while(|l| !l.starts_with("$ curl "))
        .nth(1)
        .expect("the README shows what curl prints")
        .clone();
    // On a free port instead of 8080, in the foreground (killed below).
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let serve = serve
        .trim_end_matches('&')
        .trim_end()
        .replace(":8080", &format!(":{port}"));
    let curl = curl.replace(":8080", &format!(":{port}"));
    let args: Vec<&str> = serve.split_whitespace().skip(1).collect();
    // A store of the test's own, as the other README commands get: serve checks (and
    // creates) its store at start, which must not be the repository's `.envelope`.
    let store = temp_dir("http-store");
    let mut server = Command::new(env!("CARGO_BIN_EXE_envelope"))
        .args(&args)
        .current_dir(&root)
        .env("ENVELOPE_STORE", &store)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let answer = loop {
        let out = sh(&curl, &root, &store);
        if out.status.success() && !out.stdout.is_empty() {
            break String::from_utf8_lossy(&out.stdout).into_owned();
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no answer from `{serve}` to `{curl}`: {out:?}"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    // Without the content type: 415, as the README says.
    let bare = curl.replace(" -H 'content-type: application/json'", "");
    let refused = sh(&format!("{bare} -w ' %{{http_code}}'"), &root, &store);
    let _ = server.kill();
    let _ = server.wait();
    let _ = std::fs::remove_dir_all(&store);
    assert_eq!(
        without_timestamps(answer.trim_end()),
        without_timestamps(&shown),
        "{curl}"
    );
    let refused = String::from_utf8_lossy(&refused.stdout);
    assert!(
        refused.ends_with(" 415") && refused.contains("VALIDATION_ERROR"),
        "{refused}"
    );
}

#[test]
fn rust_version_covers_every_locked_dependency() {
    let root = repo_root();
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    let ours = version_of(
        manifest
            .lines()
            .find_map(|l| l.strip_prefix("rust-version = "))
            .expect("the workspace declares a rust-version"),
    );
    // The README states the same minimum.
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let stated = format!("Rust ({}.{}+", ours.0, ours.1);
    assert!(readme.contains(&stated), "the README does not say {stated}");
    // Each locked registry package's own rust-version, from its source in cargo's cache
    // (those not unpacked here are for other platforms).
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
        .unwrap();
    let sources: Vec<PathBuf> = std::fs::read_dir(cargo_home.join("registry/src"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    let lock = std::fs::read_to_string(root.join("Cargo.lock")).unwrap();
    let mut checked = 0;
    let mut above = Vec::new();
    for package in lock.split("[[package]]") {
        let field = |key: &str| {
            package
                .lines()
                .find_map(|l| l.strip_prefix(key))
                .map(|v| v.trim_matches('"').to_string())
        };
        let (Some(name), Some(version), Some(_)) =
            (field("name = "), field("version = "), field("source = "))
        else {
            continue;
        };
        let Some(toml) = sources
            .iter()
            .map(|s| s.join(format!("{name}-{version}/Cargo.toml")))
            .find(|p| p.exists())
        else {
            continue;
        };
        checked += 1;
        let text = std::fs::read_to_string(toml).unwrap();
        if let Some(theirs) = text.lines().find_map(|l| l.strip_prefix("rust-version = ")) {
            let theirs = version_of(theirs);
            if theirs > ours {
                above.push(format!("{name} {version} needs {theirs:?}"));
            }
        }
    }
    assert!(
        checked > 100,
        "only {checked} locked packages found in {sources:?}"
    );
    assert!(
        above.is_empty(),
        "rust-version {ours:?} is below what locked dependencies declare: {above:?}"
    );
}

/// `"1.89"` or `"1.89.0"` as (major, minor, patch).
fn version_of(text: &str) -> (u32, u32, u32) {
    let mut parts = text
        .trim()
        .trim_matches('"')
        .split('.')
        .map(|p| p.parse::<u32>().unwrap());
    (
        parts.next().unwrap(),
        parts.next().unwrap_or(0),
        parts.next().unwrap_or(0),
    )
}

#[test]
fn scripts_install_python_tools_into_venvs_of_their_own() {
    let root = repo_root();
    let mut installs = 0;
    for script in ["scripts/test.sh", "scripts/install-mcp-tools.sh"] {
        let text = std::fs::read_to_string(root.join(script)).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        for (at, line) in lines.iter().enumerate() {
            let installs_something = line.contains("pip install") || line.contains("pip\" install");
            if !installs_something || line.trim_start().starts_with('#') {
                continue;
            }
            installs += 1;
            // Through a venv's own interpreter or pip, never the first python3 on PATH.
            let command = line.trim_start();
            assert!(
                command.starts_with("\"$venv/bin/python3\" -m pip install")
                    || command.starts_with("\"$sqlite_venv/bin/python3\" -m pip install")
                    || command.starts_with("\"$openapi_venv/bin/pip\" install"),
                "{script}:{}: {line}",
                at + 1
            );
        }
    }
    assert!(installs >= 3, "{installs} pip installs found");
    let test = std::fs::read_to_string(root.join("scripts/test.sh")).unwrap();
    let install = test.find("bash scripts/install-mcp-tools.sh").unwrap();
    let path = test
        .find("export PATH=\"${ENVELOPE_TOOLS:-$HOME/.cache/envelope-tools}/venv/bin:$PATH\"")
        .expect("scripts/test.sh puts the tools' venv first on PATH");
    let cargo_test = test.find("cargo test --workspace").unwrap();
    assert!(install < path && path < cargo_test);
    let tools = std::fs::read_to_string(root.join("scripts/install-mcp-tools.sh")).unwrap();
    assert!(
        tools.contains("venv=\"$tools/venv\""),
        "the venv is under the tools folder"
    );
}
