//! No public function of the workspace returns `Result<_, String>` (docs/architecture.md:
//! errors are types a caller can match on, with a stable id, not sentences). Read from the
//! source of every crate, as `tests/layers.rs` reads the imports.

use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The generic arguments of the first `Result<…>` after `->` in `signature`, split at its
/// top-level commas.
fn result_arguments(signature: &str) -> Option<Vec<String>> {
    let returns = &signature[signature.find("->")? + 2..];
    let start = returns.find("Result<")? + "Result<".len();
    let (mut depth, mut arguments, mut current) = (0usize, Vec::new(), String::new());
    for c in returns[start..].chars() {
        match c {
            '<' | '(' | '[' => depth += 1,
            '>' if depth == 0 => {
                arguments.push(current.trim().to_owned());
                return Some(arguments);
            }
            '>' | ')' | ']' => depth -= 1,
            ',' if depth == 0 => {
                arguments.push(std::mem::take(&mut current).trim().to_owned());
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    None
}

/// The signatures (from `pub fn` to the body's `{` or a `;`) of the public functions in
/// `text` whose error type is `String`.
fn string_errors(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("pub fn ") {
        let starts_line = rest[..at]
            .rsplit('\n')
            .next()
            .is_some_and(|before| before.trim().is_empty() || before.trim() == "const");
        let tail = &rest[at..];
        let end = tail.find(['{', ';']).unwrap_or(tail.len());
        let signature = &tail[..end];
        if starts_line
            && result_arguments(signature).is_some_and(|a| a.len() == 2 && a[1] == "String")
        {
            found.push(signature.split_whitespace().collect::<Vec<_>>().join(" "));
        }
        rest = &tail[end..];
    }
    found
}

#[test]
fn the_scanner_finds_a_string_error_over_several_lines_and_nothing_else() {
    let text = "pub fn a(x: u8) -> Result<Vec<(u8, String)>, Error> {\n}\n\
                pub(crate) fn b() -> Result<(), String> {}\n\
                    pub fn c<'a>(\n        x: &'a str,\n    ) -> Result<HashMap<String, u8>, String>\n    where T: X {\n}\n\
                // pub fn d() -> Result<(), String> {}\n\
                pub fn e() -> std::io::Result<()> {}\n";
    assert_eq!(
        string_errors(text),
        ["pub fn c<'a>( x: &'a str, ) -> Result<HashMap<String, u8>, String> where T: X"]
    );
}

#[test]
fn no_public_function_returns_a_string_error() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let mut files = Vec::new();
    for entry in std::fs::read_dir(crates).unwrap() {
        let src = entry.unwrap().path().join("src");
        if src.is_dir() {
            sources(&src, &mut files);
        }
    }
    assert!(
        files.len() > 100,
        "the workspace's sources: {}",
        files.len()
    );
    let mut found = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for signature in string_errors(&text) {
            found.push(format!("{}: {signature}", file.display()));
        }
    }
    assert!(
        found.is_empty(),
        "public functions with a String error (give them an error type):\n{}",
        found.join("\n")
    );
}
