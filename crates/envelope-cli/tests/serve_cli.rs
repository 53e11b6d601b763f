//! `envelope serve` on the command line: refusals before anything starts (exit 2 with their
//! error id), and `--stats` written on exit.

mod common;

use std::process::Output;

use serde_json::Value;

fn serve(args: &[&str], stdin: &[u8]) -> Output {
    let mut all = vec!["serve"];
    all.extend_from_slice(args);
    common::run(&all, stdin)
}

fn refused(output: &Output, id: &str) -> String {
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains(&format!("error[{id}]")), "{id}: {stderr}");
    assert!(output.stdout.is_empty());
    stderr
}

fn registry(dir: &std::path::Path, text: &str) -> String {
    let path = dir.join("envelope.toml");
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

#[test]
fn bad_flags_tokens_and_registries_are_refused_before_anything_starts() {
    let dir = tempfile::tempdir().unwrap();
    let good = registry(dir.path(), "[commands.a.b]\ncommand = [\"true\"]\n");
    let store = dir.path().join("store").display().to_string();
    let base = ["--registry", good.as_str(), "--store", store.as_str()];
    let with = |extra: &[&str]| -> Vec<String> {
        base.iter().chain(extra).map(|s| s.to_string()).collect()
    };
    let run = |args: Vec<String>| {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        serve(&args, b"")
    };

    refused(&run(with(&["--listen", "localhost"])), "usage.bad-value");
    refused(&run(with(&["--limit", "0"])), "usage.bad-value");
    refused(&run(with(&["--timeout", "0"])), "usage.bad-value");
    let open = refused(&run(with(&["--http", "0.0.0.0:0"])), "serve.start");
    assert!(open.contains("token") || open.contains("TOKEN"), "{open}");

    let secret = "a-secret-token-that-must-not-show";
    let tokens = dir.path().join("tokens.json");
    std::fs::write(
        &tokens,
        format!(r#"{{"{secret}": {{"id": "x", "scope": ["a"]}}}}"#),
    )
    .unwrap();
    let bad = refused(
        &run(with(&["--tokens", tokens.to_str().unwrap()])),
        "serve.tokens",
    );
    assert!(
        bad.contains("unknown field") && !bad.contains(secret),
        "{bad}"
    );
    let missing = dir.path().join("nope.json");
    refused(
        &run(with(&["--tokens", missing.to_str().unwrap()])),
        "serve.tokens",
    );

    let clash = registry(
        dir.path(),
        "[commands.a.b_c]\ncommand = [\"true\"]\n[commands.a_b.c]\ncommand = [\"true\"]\n",
    );
    let names = refused(
        &serve(&["--registry", &clash, "--store", &store], b""),
        "serve.names",
    );
    assert!(
        names.contains("a.b_c") && names.contains("a_b.c"),
        "{names}"
    );
    // A typo in a source (issue 29): the file is refused, not the source quietly left out.
    let typo = registry(
        dir.path(),
        "[commands.a.b]\ncommand = [\"true\"]\n\n[openapi.x]\nspec = \"a.yaml\"\ntimeoutSecs = 3\n",
    );
    let refusal = refused(
        &serve(&["--registry", &typo, "--store", &store], b""),
        "ops.registry",
    );
    assert!(
        refusal.contains("line 6: openapi.x: unknown field `timeoutSecs`"),
        "{refusal}"
    );
    let not_toml = registry(dir.path(), "commands = 5\n");
    refused(
        &serve(&["--registry", &not_toml, "--store", &store], b""),
        "ops.registry",
    );
}

#[test]
fn stdio_serves_until_stdin_ends_and_writes_its_stats() {
    let dir = tempfile::tempdir().unwrap();
    let path = registry(
        dir.path(),
        "[commands.text.upper]\ncommand = [\"tr\", \"a-z\", \"A-Z\"]\ninputSchema = { type = \"string\" }\n",
    );
    let stats = dir.path().join("stats.json");
    let store = dir.path().join("store");
    let input = concat!(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"text_upper","arguments":{"input":"abc"}}}"#,
        "\n"
    );
    let output = serve(
        &[
            "--registry",
            &path,
            "--store",
            store.to_str().unwrap(),
            "--stats",
            stats.to_str().unwrap(),
        ],
        input.as_bytes(),
    );
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let answers: Vec<Value> = String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let call = answers
        .iter()
        .find(|a| a["id"] == 2)
        .expect("the call is answered");
    assert_eq!(call["result"]["structuredContent"]["result"], "ABC");
    let stats: Value = serde_json::from_slice(&std::fs::read(&stats).unwrap()).unwrap();
    assert_eq!(stats["calls"], 1, "{stats}");
    assert!(stats["per_tool"]["text_upper"].is_object(), "{stats}");
}

/// The tool names `serve` lists (stdio) for the registry at `path`.
fn listed_tools(path: &str, store: &str) -> Vec<String> {
    let input = concat!(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}"#,
        "\n"
    );
    let output = serve(&["--registry", path, "--store", store], input.as_bytes());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(!stderr.contains("warning"), "{stderr}");
    let answers: Vec<Value> = String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let list = answers
        .iter()
        .find(|a| a["id"] == 2)
        .expect("tools/list is answered");
    list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap().to_owned())
        .collect()
}

/// Issue 29: GitHub's API has operation ids whose first 64 characters are alike, and `serve`
/// refused to start (`error[serve.names]`). A long name is now cut with a hash of the whole
/// id: every tool is listed, distinct, within 64 characters, and the same in every run.
#[test]
fn long_operation_ids_sharing_a_prefix_are_distinct_tools_in_every_run() {
    let dir = tempfile::tempdir().unwrap();
    let prefix = format!("repos/{}", "list-attestations-for-a-repository-".repeat(3));
    let mut paths = serde_json::Map::new();
    let count = 40;
    for i in 0..count {
        paths.insert(
            format!("/p{i}"),
            serde_json::json!({"get": {"operationId": format!("{prefix}{i}"), "responses": {"200": {"description": "ok"}}}}),
        );
    }
    // Ids that fit keep their names as they are.
    paths.insert(
        "/short".into(),
        serde_json::json!({"get": {"operationId": "repos/get", "responses": {}}}),
    );
    let fits = "x".repeat(64 - "gh_".len());
    paths.insert(
        "/fits".into(),
        serde_json::json!({"get": {"operationId": fits, "responses": {}}}),
    );
    let doc = serde_json::json!({"openapi": "3.1.0", "info": {"title": "t", "version": "1"}, "paths": paths});
    std::fs::write(dir.path().join("api.json"), doc.to_string()).unwrap();
    let path = registry(
        dir.path(),
        &format!(
            "[openapi.gh]\nspec = \"api.json\"\nbaseUrl = \"http://127.0.0.1:9\"\n\n[openapi.gh.rename]\n{:?} = \"attestations_7\"\n",
            format!("{prefix}7")
        ),
    );
    let store = dir.path().join("store").display().to_string();
    let names = listed_tools(&path, &store);
    let mine: Vec<&String> = names.iter().filter(|n| n.starts_with("gh_")).collect();
    assert_eq!(mine.len(), count + 2, "{names:?}");
    let unique: std::collections::BTreeSet<&&String> = mine.iter().collect();
    assert_eq!(unique.len(), mine.len(), "{names:?}");
    assert!(names.iter().all(|n| n.len() <= 64), "{names:?}");
    assert!(names.contains(&"gh_repos_get".to_owned()), "{names:?}");
    assert!(names.contains(&format!("gh_{fits}")), "{names:?}");
    assert!(names.contains(&"gh_attestations_7".to_owned()), "{names:?}");
    // The cut ones: the first 55 characters of the name, `_`, 8 hex digits.
    let cut: Vec<&&String> = mine
        .iter()
        .filter(|n| n.len() == 64 && !n.starts_with("gh_x"))
        .collect();
    assert_eq!(cut.len(), count - 1, "{names:?}");
    let head = format!("gh_{}", prefix.replace('/', "_"));
    for name in &cut {
        assert!(name.starts_with(&head[..55]), "{name}");
        assert!(name[56..].chars().all(|c| c.is_ascii_hexdigit()), "{name}");
    }
    // Another process gives the same names.
    assert_eq!(listed_tools(&path, &store), names);
}

#[test]
fn a_store_that_cannot_be_written_is_refused_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let registry = registry(
        dir.path(),
        "[commands.text.upper]\ncommand = [\"tr\", \"a-z\", \"A-Z\"]\n",
    );
    let store = dir.path().join("store");
    std::fs::write(&store, b"not a folder").unwrap();
    let store = store.display().to_string();
    for extra in [&[][..], &["--http", "127.0.0.1:0"][..]] {
        let mut args = vec!["--registry", &registry, "--store", &store];
        args.extend_from_slice(extra);
        let stderr = refused(&serve(&args, b""), "store.io");
        assert!(stderr.contains(&store), "{stderr}");
    }
}

/// Starts `envelope ARGS` with `env` and waits (at most 20 s) for its "listening" log
/// line: true when it came, false when the command exited first. The child is killed.
fn starts_listening(args: &[&str], env: &[(&str, &str)]) -> (bool, String) {
    use std::io::BufRead as _;
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_envelope"));
    // The "listening" line is logged at level info.
    cmd.args(&args[..1])
        .args(["--log-level", "info"])
        .args(&args[1..])
        .env_remove("ENVELOPE_TOKEN")
        .env_remove("ENVELOPE_TOKENS")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped());
    for (name, value) in env {
        cmd.env(name, value);
    }
    let mut child = cmd.spawn().unwrap();
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut seen = String::new();
    let mut listening = false;
    while let Ok(line) = rx.recv_timeout(std::time::Duration::from_secs(20)) {
        seen.push_str(&line);
        seen.push('\n');
        if line.contains("listening") {
            listening = true;
            break;
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    (listening, seen)
}

#[test]
fn a_public_address_without_tokens_names_the_remedy_that_works() {
    let dir = tempfile::tempdir().unwrap();
    let registry = registry(dir.path(), "[commands.a.b]\ncommand = [\"true\"]\n");
    let store = dir.path().join("store").display().to_string();
    let tokens_json = r#"{"a-long-enough-secret-token": {"id": "team", "scopes": []}}"#;
    let tokens = dir.path().join("tokens.json");
    std::fs::write(&tokens, tokens_json).unwrap();
    for flag in ["--http", "--listen"] {
        let args = [
            "serve",
            "--registry",
            &registry,
            "--store",
            &store,
            flag,
            "0.0.0.0:0",
        ];
        let (listening, stderr) = starts_listening(&args, &[]);
        assert!(!listening, "{stderr}");
        assert!(stderr.contains("error[serve.start]"), "{stderr}");
        assert!(
            stderr.contains("--tokens") && stderr.contains("ENVELOPE_TOKENS"),
            "{stderr}"
        );
        assert!(!stderr.contains("ENVELOPE_TOKEN "), "{stderr}");
        // Following the advice, either way, starts it.
        let (listening, stderr) = starts_listening(&args, &[("ENVELOPE_TOKENS", tokens_json)]);
        assert!(listening, "ENVELOPE_TOKENS: {stderr}");
        let mut with_file = args.to_vec();
        with_file.extend(["--tokens", tokens.to_str().unwrap()]);
        let (listening, stderr) = starts_listening(&with_file, &[]);
        assert!(listening, "--tokens: {stderr}");
    }
    // The proxy's remedy is its own variable, ENVELOPE_TOKEN: following it works too.
    let args = [
        "proxy",
        "--store",
        &store,
        "--listen",
        "0.0.0.0:0",
        "--",
        "cat",
    ];
    let (listening, stderr) = starts_listening(&args, &[]);
    assert!(
        !listening && stderr.contains("set ENVELOPE_TOKEN to a secret"),
        "{stderr}"
    );
    let (listening, stderr) =
        starts_listening(&args, &[("ENVELOPE_TOKEN", "a-long-enough-secret-token")]);
    assert!(listening, "{stderr}");
}
