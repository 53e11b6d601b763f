//! The policy file: which table applies to a tool, and every refusal naming its line.

use envelope::FormatId;
use envelope::tokens::Tokenizer;
use envelope_mcp::policy::{Emit, Policy, PolicyError, ToolPolicy};
use envelope_mcp::shaping::{NO_BYTE_LIMIT, TokenBudget};

fn policy(text: &str) -> Policy {
    text.parse()
        .unwrap_or_else(|e| panic!("policy refused: {e}"))
}

/// The refusal's line and reason; panics when the text is accepted.
fn refusal(text: &str) -> (usize, String) {
    match text.parse::<Policy>() {
        Ok(p) => panic!("accepted: {p:?}"),
        Err(PolicyError::Invalid { line, reason, path }) => {
            assert_eq!(path, None);
            (line, reason)
        }
        Err(other) => panic!("not an Invalid error: {other}"),
    }
}

#[test]
fn every_setting_is_read() {
    let p = policy(
        r#"
[tools."search"]
limit = 32768
redact = false
pass_through = true
emit = "protocol-v1"
"#,
    );
    assert_eq!(
        p.for_tool("search"),
        ToolPolicy {
            limit: Some(32768),
            limit_tokens: None,
            tokenizer: None,
            redact: Some(false),
            pass_through: true,
            emit: Emit::Format(FormatId::ProtocolV1),
            channels: Default::default(),
        }
    );
    // A tool no table names: every setting at its default.
    assert_eq!(p.for_tool("other"), ToolPolicy::default());
    assert_eq!(ToolPolicy::default().emit, Emit::Mcp);
}

#[test]
fn every_format_id_is_accepted_and_mcp_is_the_native_form() {
    for id in FormatId::ALL {
        let p = policy(&format!("[tools.t]\nemit = \"{id}\"\n"));
        let expected = if id == FormatId::Mcp {
            Emit::Mcp
        } else {
            Emit::Format(id)
        };
        assert_eq!(p.for_tool("t").emit, expected, "{id}");
    }
}

#[test]
fn an_empty_file_is_the_default_policy() {
    assert_eq!(policy(""), Policy::default());
    assert_eq!(policy("[tools]\n"), Policy::default());
}

#[test]
fn exact_names_win_over_globs() {
    let p = policy(
        r#"
[tools."*"]
limit = 1
[tools."git_*"]
limit = 2
[tools."git_log"]
limit = 3
"#,
    );
    assert_eq!(p.for_tool("git_log").limit, Some(3));
    assert_eq!(p.for_tool("git_diff").limit, Some(2));
    assert_eq!(p.for_tool("fetch").limit, Some(1));
}

#[test]
fn the_longest_glob_wins_and_ties_go_to_the_first_in_the_file() {
    let p = policy(
        r#"
[tools."*_log"]
limit = 10
[tools."git_*"]
limit = 20
[tools."git_l*"]
limit = 30
[tools."*"]
limit = 40
"#,
    );
    // git_l* (6 chars) beats *_log and git_* (5 each) regardless of file order.
    assert_eq!(p.for_tool("git_log").limit, Some(30));
    // git_l* does not match these; *_log and git_* tie at 5 characters: *_log comes first.
    assert_eq!(p.for_tool("git__log").limit, Some(10));
    assert_eq!(p.for_tool("git_show_log").limit, Some(10));
    assert_eq!(p.for_tool("git_show").limit, Some(20));
    assert_eq!(p.for_tool("svn_log").limit, Some(10));
    assert_eq!(p.for_tool("fetch").limit, Some(40));

    // The same tables in the other order: the tie now goes the other way.
    let p = policy("[tools.\"git_*\"]\nlimit = 20\n[tools.\"*_log\"]\nlimit = 10\n");
    assert_eq!(p.for_tool("git_show_log").limit, Some(20));
}

#[test]
fn one_table_applies_whole() {
    let p = policy("[tools.\"a*\"]\nredact = false\n[tools.abc]\nlimit = 5\n");
    // abc's table has no `redact`: the glob's is not merged in.
    assert_eq!(
        p.for_tool("abc"),
        ToolPolicy {
            limit: Some(5),
            ..ToolPolicy::default()
        }
    );
}

#[test]
fn question_mark_matches_one_character() {
    let p = policy("[tools.\"v?\"]\npass_through = true\n");
    assert!(p.for_tool("v1").pass_through);
    assert!(p.for_tool("vé").pass_through);
    assert!(!p.for_tool("v").pass_through);
    assert!(!p.for_tool("v12").pass_through);
}

#[test]
fn syntax_errors_name_the_line() {
    let (line, reason) = refusal("[tools.a]\nlimit = 10\n\n[tools.b\nlimit = 1\n");
    assert_eq!(line, 4, "{reason}");
    let (line, _) = refusal("[tools.a]\nlimit = = 3\n");
    assert_eq!(line, 2);
}

#[test]
fn unknown_keys_are_refused_with_their_line() {
    let (line, reason) = refusal("[tools.a]\nlimit = 10\nlimt = 3\n");
    assert_eq!(line, 3, "{reason}");
    assert!(reason.contains("limt"), "{reason}");

    let (line, reason) = refusal("\n\n[servers.a]\nlimit = 10\n");
    assert_eq!(line, 3, "{reason}");
    assert!(reason.contains("servers"), "{reason}");
}

#[test]
fn unknown_formats_are_refused_with_their_line() {
    let (line, reason) = refusal("[tools.a]\nlimit = 10\n\n[tools.b]\nemit = \"yaml\"\n");
    assert_eq!(line, 5, "{reason}");
    assert!(
        reason.contains("\"yaml\"") && reason.contains("ctxo"),
        "{reason}"
    );
}

#[test]
fn wrong_types_and_bad_limits_are_refused_with_their_line() {
    for (text, line, word) in [
        ("[tools.a]\nlimit = \"16k\"\n", 2, "integer"),
        ("[tools.a]\n\nredact = \"yes\"\n", 3, "bool"),
        ("[tools.a]\npass_through = 1\n", 2, "bool"),
        ("[tools.a]\nemit = 3\n", 2, "string"),
        ("[tools.a]\nlimit = 0\n", 2, "greater than 0"),
        ("[tools.a]\nlimit = -5\n", 2, "greater than 0"),
        ("[tools.a]\nlimit = 1.5\n", 2, "integer"),
        ("tools = 3\n", 1, "map"),
        ("[tools]\na = 1\n", 2, "table of tool settings"),
    ] {
        let (got, reason) = refusal(text);
        assert_eq!(got, line, "{text:?}: {reason}");
        assert!(
            !reason.contains("Raw") && !reason.contains("i64"),
            "{reason}"
        );
        assert!(reason.to_lowercase().contains(word), "{text:?}: {reason}");
    }
}

#[test]
fn load_names_the_file_and_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("policy.toml");
    std::fs::write(&path, "[tools.a]\nlimit = 10\nemit = \"nope\"\n").unwrap();
    let err = Policy::load(&path).unwrap_err();
    assert_eq!(err.line(), Some(3));
    let text = err.to_string();
    assert!(
        text.starts_with(&format!("{}: line 3: ", path.display())),
        "{text}"
    );

    std::fs::write(&path, "[tools.\"fs_*\"]\nlimit = 100\n").unwrap();
    assert_eq!(
        Policy::load(&path).unwrap().for_tool("fs_read").limit,
        Some(100)
    );

    let err = Policy::load(dir.path().join("absent.toml")).unwrap_err();
    assert!(matches!(err, PolicyError::Read { .. }));
    assert_eq!(err.line(), None);
    assert!(err.to_string().contains("absent.toml"), "{err}");
}

#[test]
fn a_table_given_twice_is_refused_with_its_line() {
    let (line, reason) = refusal("[tools.a]\nlimit = 1\n\n[tools.a]\nlimit = 2\n");
    assert_eq!(line, 4, "{reason}");
    assert!(
        reason.contains("duplicate") || reason.contains("redefin"),
        "{reason}"
    );
}

#[test]
fn the_readme_example_is_a_policy_that_loads_and_says_what_it_says() {
    let readme = include_str!("../../../README.md");
    // The policy's block (the README has other TOML blocks: the operations registry).
    let start = readme
        .find("```toml\n[tools.")
        .expect("a toml block of a policy in the README")
        + 8;
    let end = start + readme[start..].find("```").unwrap();
    let policy: Policy = readme[start..end].parse().unwrap();
    assert_eq!(policy.for_tool("directory_tree").limit, Some(65536));
    assert_eq!(
        policy.for_tool("git_log").emit,
        Emit::Format(FormatId::ProtocolV1)
    );
    assert!(policy.for_tool("get_env").pass_through);
    assert_eq!(policy.for_tool("other").limit, None);
}

#[test]
fn channels_and_text_share_are_read_and_bad_values_refused_with_their_line() {
    use envelope_mcp::shaping::Channels;
    let p = policy(
        "[tools.read_text_file]\ntext_share = 30\n[tools.tree]\nchannels = \"pointer\"\n[tools.both]\nchannels = \"both\"\n",
    );
    assert_eq!(
        p.for_tool("read_text_file").channels,
        Channels::Both {
            text_share: Some(30)
        }
    );
    assert_eq!(p.for_tool("tree").channels, Channels::Pointer);
    assert_eq!(p.for_tool("both").channels, Channels::default());
    assert_eq!(p.for_tool("other").channels, Channels::default());
    assert_eq!(
        p.tool_settings("tree", 100, None, true).channels,
        Channels::Pointer
    );
    let (line, reason) = refusal("[tools.a]\n\nchannels = \"half\"\n");
    assert_eq!(line, 3);
    assert!(reason.contains("both, pointer"), "{reason}");
    let (line, reason) = refusal("[tools.a]\ntext_share = 101\n");
    assert_eq!(line, 2);
    assert!(reason.contains("0 to 100"), "{reason}");
    let (line, reason) = refusal("[tools.a]\nchannels = \"pointer\"\ntext_share = 50\n");
    assert_eq!(line, 3);
    assert!(reason.contains("\"both\" only"), "{reason}");
}

#[test]
fn the_proxy_docs_policy_example_loads() {
    let doc = include_str!("../../../docs/proxy.md");
    let start = doc
        .find("```toml\n[tools.")
        .expect("a policy block in docs/proxy.md")
        + 8;
    let end = start + doc[start..].find("```").unwrap();
    let policy: Policy = doc[start..end].parse().unwrap();
    assert_eq!(
        policy.for_tool("read_text_file").channels,
        envelope_mcp::shaping::Channels::Both {
            text_share: Some(60)
        }
    );
}

#[test]
fn a_table_with_a_limit_sets_both_limits_and_its_tokenizer_defaults_to_the_command_lines() {
    let p = policy(
        "[tools.chat]\nlimit_tokens = 4000\n[tools.both]\nlimit = 9000\nlimit_tokens = 2000\ntokenizer = \"cl100k_base\"\n[tools.bytes]\nlimit = 5000\n[tools.quiet]\nredact = false\n",
    );
    let cl100k = TokenBudget {
        limit: 1000,
        tokenizer: envelope_mcp::shaping::shared_tokenizer(Tokenizer::Cl100kBase),
    };
    let limits = |tool: &str, limit: usize, tokens: Option<TokenBudget>| {
        let s = p.tool_settings(tool, limit, tokens, true);
        (s.limit, s.tokens)
    };
    // limit_tokens alone: no byte limit, whatever the command line's.
    assert_eq!(
        limits("chat", 16384, None),
        (NO_BYTE_LIMIT, Some(TokenBudget::o200k(4000)))
    );
    // The command line's tokenizer counts a table's limit_tokens that names none.
    assert_eq!(
        limits("chat", 16384, Some(cl100k)).1,
        Some(TokenBudget {
            limit: 4000,
            tokenizer: envelope_mcp::shaping::shared_tokenizer(Tokenizer::Cl100kBase)
        })
    );
    assert_eq!(
        limits("both", NO_BYTE_LIMIT, Some(TokenBudget::o200k(10))),
        (
            9000,
            Some(TokenBudget {
                limit: 2000,
                tokenizer: envelope_mcp::shaping::shared_tokenizer(Tokenizer::Cl100kBase)
            })
        )
    );
    // A byte limit alone: the command line's token limit does not apply to the tool.
    assert_eq!(limits("bytes", 16384, Some(cl100k)), (5000, None));
    // No limit in the table (or no table): the command line's limits.
    assert_eq!(limits("quiet", 700, Some(cl100k)), (700, Some(cl100k)));
    assert_eq!(limits("other", 700, Some(cl100k)), (700, Some(cl100k)));
}

#[test]
fn bad_token_settings_are_refused_with_their_line() {
    let (line, reason) = refusal("[tools.a]\nlimit_tokens = 0\n");
    assert_eq!(line, 2);
    assert!(
        reason.contains("limit_tokens must be a number of tokens"),
        "{reason}"
    );
    let (line, reason) = refusal("[tools.a]\nlimit_tokens = 10\ntokenizer = \"gpt2\"\n");
    assert_eq!(line, 3);
    assert!(
        reason.contains("\"gpt2\"") && reason.contains("o200k_base, cl100k_base"),
        "{reason}"
    );
    let (line, reason) = refusal("[tools.a]\nredact = true\ntokenizer = \"o200k_base\"\n");
    assert_eq!(line, 3);
    assert!(reason.contains("beside limit_tokens"), "{reason}");
    let (_, reason) = refusal("[tools.a]\nlimit_tokens = \"many\"\n");
    assert!(reason.contains("integer"), "{reason}");
}
