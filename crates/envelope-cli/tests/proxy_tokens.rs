//! Token budgets in `envelope proxy` and `envelope serve` (issue 30): real servers' results
//! through `--limit-tokens N`, counted with `o200k_base` (or the tool's tokenizer) on the
//! exact `result` text the client receives, are at most N tokens, and a cut one keeps at
//! least half of them; the policy's `limit_tokens` per tool; bad token flags refused.

mod common;

#[path = "../../envelope-mcp/tests/common/tools.rs"]
mod tools;

use std::collections::HashMap;
use std::io::{BufRead as _, BufReader, Write as _};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use envelope::tokens::Tokenizer;
use serde_json::value::RawValue;
use serde_json::{Value, json};

/// A proxy (or serve) on stdio, spoken to in raw JSON-RPC lines so that the exact bytes of
/// each answer's `result` are what is counted.
struct Session {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
}

impl Session {
    fn start(args: &[String]) -> Session {
        let mut child = Command::new(env!("CARGO_BIN_EXE_envelope"))
            .args(args)
            .env_remove("ENVELOPE_STORE")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut session = Session {
            child,
            stdin,
            stdout,
            next_id: 1,
        };
        session.request(
            "initialize",
            json!({"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}),
        );
        writeln!(
            session.stdin,
            "{}",
            json!({"jsonrpc":"2.0","method":"notifications/initialized"})
        )
        .unwrap();
        session
    }

    /// The raw text of the answer's `result` (panics on an error answer).
    fn request(&mut self, method: &str, params: Value) -> String {
        let id = self.next_id;
        self.next_id += 1;
        let message = json!({"jsonrpc":"2.0","id":id,"method":method,"params":params});
        writeln!(self.stdin, "{message}").unwrap();
        self.stdin.flush().unwrap();
        loop {
            let mut line = String::new();
            assert!(self.stdout.read_line(&mut line).unwrap() > 0, "no answer");
            let members: HashMap<String, Box<RawValue>> = serde_json::from_str(&line).unwrap();
            if members.get("id").map(|i| i.get()) != Some(id.to_string().as_str()) {
                continue; // a notification
            }
            let result = members.get("result").unwrap_or_else(|| panic!("{line}"));
            return result.get().to_string();
        }
    }

    fn call(&mut self, tool: &str, arguments: Value) -> String {
        self.request("tools/call", json!({"name": tool, "arguments": arguments}))
    }

    fn finish(mut self) {
        drop(self.stdin);
        assert!(self.child.wait().unwrap().success());
    }
}

fn o200k() -> Tokenizer {
    Tokenizer::by_name("o200k_base").unwrap()
}

/// The URI of the stored full result a cut result names.
fn artifact_uri(result: &str) -> String {
    let hex = result
        .split("envelope://artifact/sha256/")
        .nth(1)
        .expect("a cut result names its stored result");
    format!("envelope://artifact/sha256/{}", &hex[..64])
}

/// The result was cut (it names the stored full result).
fn is_cut(result: &str) -> bool {
    result.contains("envelope://artifact/sha256/")
}

/// Asserts `result` is within `limit` tokens of `tokenizer` and, when cut, keeps at least
/// half of them; returns its count.
fn within(result: &str, limit: usize, tokenizer: Tokenizer, what: &str) -> usize {
    let count = tokenizer.count(result);
    // (With --nocapture: how much of the limit each result used.)
    eprintln!("{what}: {count} of {limit} tokens, cut: {}", is_cut(result));
    assert!(count <= limit, "{what}: {count} tokens > {limit}: {result}");
    if is_cut(result) {
        assert!(
            count * 2 >= limit,
            "{what}: {count} tokens, less than half of {limit}: {result}"
        );
    }
    count
}

/// A text file of every kind of content a tokenizer treats differently: prose in several
/// scripts, numbers, code, JSON, base64, emoji, a long run of one character.
fn mixed_text() -> String {
    let mut text = String::new();
    for i in 0..400 {
        text.push_str(&match i % 8 {
            0 => format!("Line {i}: the quick brown fox jumps over the lazy dog.\n"),
            1 => format!("{i} {} {}.{}\n", i * 7919, i as f64 / 7.0, i * 31),
            2 => format!("第{i}行：敏捷的棕色狐狸跳过了懒狗。日本語のテキストも。\n"),
            3 => format!("fn f{i}(x: u64) -> u64 {{ x.wrapping_mul({i}) ^ 0xdead_beef }}\n"),
            4 => format!("{{\"id\": {i}, \"name\": \"item-{i}\", \"tags\": [\"a\", \"b\"]}}\n"),
            5 => "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo0MTIzNDU2Nzg5MA==\n".to_string(),
            6 => "🙂🚀✨ émoji и кириллица, ελληνικά, עברית\n".to_string(),
            _ => format!("{}\n", "=".repeat(60)),
        });
    }
    text
}

fn filesystem(root: &Path) -> Vec<String> {
    vec![
        tools::node22().display().to_string(),
        tools::npm("@modelcontextprotocol/server-filesystem/dist/index.js")
            .display()
            .to_string(),
        root.display().to_string(),
    ]
}

fn everything() -> Vec<String> {
    vec![
        tools::node22().display().to_string(),
        tools::npm("@modelcontextprotocol/server-everything/dist/index.js")
            .display()
            .to_string(),
        "stdio".into(),
    ]
}

/// A folder for server-filesystem: the mixed text, and a tree of many files.
fn files(dir: &Path) -> std::path::PathBuf {
    let root = dir.join("files");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("mixed.txt"), mixed_text()).unwrap();
    for a in 0..12 {
        let sub = root.join(format!("directory-{a:02}"));
        std::fs::create_dir_all(&sub).unwrap();
        for b in 0..40 {
            std::fs::write(sub.join(format!("file-{b:03}-{}.txt", b * 7919)), b"x").unwrap();
        }
    }
    root
}

fn proxy_args(dir: &Path, extra: &[&str], upstream: &[String]) -> Vec<String> {
    let mut args: Vec<String> = vec![
        "proxy".into(),
        "--store".into(),
        dir.join("store").display().to_string(),
        "--stats".into(),
        dir.join("stats.json").display().to_string(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    args.push("--".into());
    args.extend(upstream.iter().cloned());
    args
}

#[test]
fn real_results_through_limit_tokens_are_within_it_and_use_at_least_half() {
    let dir = tempfile::tempdir().unwrap();
    let root = files(dir.path());
    let limit = 1500;
    let mut proxy = Session::start(&proxy_args(
        dir.path(),
        &["--limit-tokens", "1500"],
        &filesystem(&root),
    ));
    let file = root.join("mixed.txt").display().to_string();
    // read_text_file: the file as text and again in structuredContent (the two-channel
    // cut); directory_tree: a JSON text; list_directory: a listing.
    let calls = [
        ("read_text_file", json!({"path": file})),
        (
            "directory_tree",
            json!({"path": root.display().to_string()}),
        ),
        (
            "list_directory",
            json!({"path": root.join("directory-03").display().to_string()}),
        ),
    ];
    let mut cut = 0;
    for (tool, arguments) in calls {
        let result = proxy.call(tool, arguments);
        within(&result, limit, o200k(), tool);
        if is_cut(&result) {
            cut += 1;
            // envelope_read answers the stored result within the token limit too.
            let read = proxy.call(
                "envelope_read",
                json!({"uri": artifact_uri(&result), "pointer": "/content/0/text"}),
            );
            let count = o200k().count(&read);
            assert!(count <= limit && read.contains("text"), "{count}: {read}");
            // The notice names the limit as the model pays for it.
            assert!(
                result.contains("1500 tokens (o200k_base)"),
                "{tool}: {result}"
            );
            // No byte limit of its own: the text kept is more than the old 16 KiB default
            // would hold only when the tokens allow; never a 16384-byte cut.
            assert!(!result.contains("16384 bytes"), "{tool}: {result}");
        }
    }
    assert!(cut >= 2, "the big results were cut");
    proxy.finish();
    // --stats gives the tokens sent beside the bytes.
    let stats: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("stats.json")).unwrap()).unwrap();
    let tokens = stats["tokens_to_client"]
        .as_u64()
        .expect("tokens_to_client");
    assert!(tokens > 0 && tokens <= 3 * limit as u64, "{stats}");
    assert!(
        stats["per_tool"]["read_text_file"]["tokens_to_client"]
            .as_u64()
            .is_some_and(|t| t <= limit as u64),
        "{stats}"
    );

    // server-everything: text and resource links (the library's cut, MCP to MCP). (Below
    // some 600 tokens the notice, written twice, and the link take most of the room.)
    let dir = tempfile::tempdir().unwrap();
    let mut proxy = Session::start(&proxy_args(
        dir.path(),
        &["--limit-tokens", "1000"],
        &everything(),
    ));
    let long = mixed_text();
    let echoed = proxy.call("echo", json!({"message": long}));
    assert!(is_cut(&echoed), "{echoed}");
    within(&echoed, 1000, o200k(), "echo");
    assert!(echoed.contains("Line 0: the quick brown fox"), "{echoed}");
    let links = proxy.call("get-resource-links", json!({"count": 10}));
    within(&links, 1000, o200k(), "get-resource-links");
    // A small result is passed on as it came.
    let small = proxy.call("echo", json!({"message": "hello"}));
    assert!(!is_cut(&small) && small.contains("hello"), "{small}");
    proxy.finish();
}

#[test]
fn a_byte_limit_and_a_token_limit_both_hold() {
    let dir = tempfile::tempdir().unwrap();
    let root = files(dir.path());
    let file = root.join("mixed.txt").display().to_string();
    // Tokens decide (digits and CJK take more tokens a byte), then bytes decide.
    for (bytes, tokens) in [(20_000, 1200), (3000, 5000)] {
        let (b, t) = (bytes.to_string(), tokens.to_string());
        let mut proxy = Session::start(&proxy_args(
            dir.path(),
            &[
                "--limit",
                &b,
                "--limit-tokens",
                &t,
                "--tokenizer",
                "cl100k_base",
            ],
            &filesystem(&root),
        ));
        let cl100k = Tokenizer::by_name("cl100k_base").unwrap();
        for (tool, arguments) in [
            ("read_text_file", json!({"path": file})),
            (
                "directory_tree",
                json!({"path": root.display().to_string()}),
            ),
        ] {
            let result = proxy.call(tool, arguments);
            assert!(result.len() <= bytes, "{tool}: {} bytes", result.len());
            let count = cl100k.count(&result);
            assert!(count <= tokens, "{tool}: {count} tokens > {tokens}");
            assert!(is_cut(&result), "{tool}");
            assert!(
                result.contains(&format!("{bytes} bytes and {tokens} tokens (cl100k_base)")),
                "{tool}: {result}"
            );
            // The tighter of the two is well used.
            assert!(
                result.len() * 2 >= bytes || count * 2 >= tokens,
                "{tool}: {} bytes, {count} tokens",
                result.len()
            );
        }
        proxy.finish();
    }
}

#[test]
fn a_policy_file_limits_tokens_per_tool() {
    let dir = tempfile::tempdir().unwrap();
    let root = files(dir.path());
    let policy = dir.path().join("policy.toml");
    std::fs::write(
        &policy,
        "[tools.directory_tree]\nlimit_tokens = 600\n\n[tools.\"read_*\"]\nlimit_tokens = 2500\ntokenizer = \"cl100k_base\"\n\n[tools.list_directory]\nlimit = 2000\n",
    )
    .unwrap();
    let mut proxy = Session::start(&proxy_args(
        dir.path(),
        &[
            "--policy",
            policy.to_str().unwrap(),
            "--limit-tokens",
            "1200",
        ],
        &filesystem(&root),
    ));
    let cl100k = Tokenizer::by_name("cl100k_base").unwrap();
    let file = root.join("mixed.txt").display().to_string();
    let tree = proxy.call(
        "directory_tree",
        json!({"path": root.display().to_string()}),
    );
    assert!(is_cut(&tree));
    within(&tree, 600, o200k(), "directory_tree");
    assert!(tree.contains("600 tokens (o200k_base)"), "{tree}");
    let read = proxy.call("read_text_file", json!({"path": file}));
    assert!(is_cut(&read));
    within(&read, 2500, cl100k, "read_text_file");
    assert!(read.contains("2500 tokens (cl100k_base)"), "{read}");
    // A table with a byte limit alone: bytes only, the command line's tokens do not apply.
    let listing = proxy.call(
        "list_directory",
        json!({"path": root.join("directory-01").display().to_string()}),
    );
    assert!(listing.len() <= 2000, "{listing}");
    assert!(listing.contains("fit 2000 bytes:"), "{listing}");
    assert!(!listing.contains("tokens ("), "{listing}");
    // No table: the command line's token limit.
    let other = proxy.call(
        "search_files",
        json!({"path": root.display().to_string(), "pattern": "**/*.txt"}),
    );
    assert!(is_cut(&other), "{other}");
    within(&other, 1200, o200k(), "search_files");
    proxy.finish();
}

/// Exit 2 with `error[id]` and the text on stderr.
fn refused(args: &[&str], id: &str) -> String {
    let output = common::run(args, b"");
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
    assert!(
        stderr.contains(&format!("error[{id}]")),
        "{args:?}: {stderr}"
    );
    stderr
}

#[test]
fn bad_token_flags_are_usage_errors_naming_the_known_tokenizers() {
    let dir = tempfile::tempdir().unwrap();
    let registry = dir.path().join("envelope.toml");
    std::fs::write(&registry, "[commands.a.b]\ncommand = [\"true\"]\n").unwrap();
    let registry = registry.to_str().unwrap();
    for command in [vec!["proxy"], vec!["serve", "--registry", registry]] {
        let with = |extra: &[&'static str]| -> Vec<&str> {
            let mut args = command.clone();
            args.extend_from_slice(extra);
            if args[0] == "proxy" {
                args.extend_from_slice(&["--", "true"]);
            }
            args
        };
        let unknown = refused(
            &with(&["--limit-tokens", "100", "--tokenizer", "nope"]),
            "usage.bad-value",
        );
        assert!(
            unknown.contains("\"nope\"")
                && unknown.contains("o200k_base")
                && unknown.contains("cl100k_base"),
            "{unknown}"
        );
        refused(&with(&["--limit-tokens", "0"]), "usage.bad-value");
        // --tokenizer says who counts a token limit: alone it is refused.
        let alone = refused(&with(&["--tokenizer", "cl100k_base"]), "usage.invalid");
        assert!(alone.contains("--limit-tokens"), "{alone}");
    }
    // In the policy file: the line and the known names.
    let policy = dir.path().join("policy.toml");
    for (text, line, words) in [
        (
            "[tools.echo]\nlimit_tokens = 100\ntokenizer = \"nope\"\n",
            "line 3",
            &["nope", "o200k_base", "cl100k_base"][..],
        ),
        (
            "[tools.echo]\nlimit_tokens = 0\n",
            "line 2",
            &["limit_tokens"][..],
        ),
        (
            "[tools.echo]\ntokenizer = \"o200k_base\"\n",
            "line 2",
            &["beside limit_tokens"][..],
        ),
    ] {
        std::fs::write(&policy, text).unwrap();
        let stderr = refused(
            &["proxy", "--policy", policy.to_str().unwrap(), "--", "true"],
            "proxy.policy",
        );
        assert!(stderr.contains(line), "{text}: {stderr}");
        for word in words {
            assert!(stderr.contains(word), "{text}: {stderr}");
        }
    }
}

#[test]
fn serve_holds_a_token_limit_for_a_tool() {
    let dir = tempfile::tempdir().unwrap();
    let registry = dir.path().join("envelope.toml");
    // A tool whose output is numbers: about 2 bytes a token, where a byte budget guesses
    // worst.
    std::fs::write(
        &registry,
        "[commands.nums.count]\ncommand = [\"seq\", \"1\", \"40000\"]\n",
    )
    .unwrap();
    let mut serve = Session::start(&[
        "serve".to_string(),
        "--registry".into(),
        registry.display().to_string(),
        "--store".into(),
        dir.path().join("store").display().to_string(),
        "--limit-tokens".into(),
        "800".into(),
    ]);
    let result = serve.call("nums_count", json!({}));
    assert!(is_cut(&result), "{result}");
    within(&result, 800, o200k(), "nums_count");
    assert!(result.contains("800 tokens (o200k_base)"), "{result}");
    // envelope_read of the stored result answers within the token limit too.
    let read = serve.call(
        "envelope_read",
        json!({"uri": artifact_uri(&result), "pointer": "/structuredContent"}),
    );
    let count = o200k().count(&read);
    assert!(count <= 800, "{count}: {read}");
    serve.finish();
}
