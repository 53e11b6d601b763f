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
        "installs into the user's home directory (the completions tests below run the command)",
    ),
    (
        "envelope completions zsh > ~/.zfunc/_envelope    # with fpath+=~/.zfunc before compinit in ~/.zshrc",
        "installs into the user's home directory (the completions tests below run the command)",
    ),
    (
        "envelope completions fish > ~/.config/fish/completions/envelope.fish",
        "installs into the user's home directory (the completions tests below run the command)",
    ),
];

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
            && *want != stdout
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
        "detect", "convert", "wrap", "unwrap", "shape", "artifact", "validate",
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
