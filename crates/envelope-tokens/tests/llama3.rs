//! `llama3`: the tokenizer.json scripts/install-tokenizers.sh installs counts as npm
//! llama3-tokenizer-js 1.2.0 counts (`encode(text, {bos: false, eos: false}).length`), text by
//! text, on the corpus of tests/reference.rs (issue 30).

mod support;

use envelope_tokens::Tokenizer;
use support::{Reference, shown};

fn llama3() -> Tokenizer {
    Tokenizer::by_name("llama3").unwrap_or_else(|error| panic!("{error}"))
}

#[test]
fn llama3_counts_as_llama3_tokenizer_js() {
    let reference = Reference::find().unwrap_or_else(|message| panic!("{message}"));
    reference
        .package("llama3-tokenizer-js")
        .unwrap_or_else(|message| panic!("{message}"));
    let tokenizer = llama3();
    let texts = support::corpus::corpus(30, 2_000);
    let rows = reference.counts(&texts, &["llama3-js"]);
    let mut differ = Vec::new();
    for (text, row) in texts.iter().zip(&rows) {
        let ours = tokenizer.count(text) as u64;
        match &row[0] {
            Ok(theirs) if *theirs == ours => {}
            theirs => differ.push(format!("we count {ours}, they {theirs:?}: {}", shown(text))),
        }
    }
    assert!(
        differ.is_empty(),
        "{} of {} texts differ:\n{}",
        differ.len(),
        texts.len(),
        differ[..differ.len().min(20)].join("\n")
    );
}

/// `llama3` and `file:` on the same file differ only where JavaScript's regular expressions
/// and the file's (Oniguruma's) read the text differently: U+0085 and U+FEFF (`\s`), and the
/// long s (`(?i:'s)`); and on the special-token names Llama 3.1 (llama3-tokenizer-js) and the
/// file (Llama 3.0) do not share. docs/tokens.md says why `llama3` follows llama3-tokenizer-js.
#[test]
fn llama3_and_its_file_differ_only_on_javascript_spaces() {
    let tokenizer = llama3();
    let path = tokenizer
        .path()
        .expect("llama3 is read from a file")
        .display();
    let file = Tokenizer::by_name(&format!("file:{path}")).unwrap();
    let mut differ = 0;
    for text in support::corpus::corpus(30, 2_000) {
        if tokenizer.count(&text) != file.count(&text) {
            differ += 1;
            let not_shared = [
                "<|eom_id|>",
                "<|python_tag|>",
                "<|finetune_right_pad_id|>",
                "<|reserved_special_token_24",
                "<|reserved_special_token_25",
            ];
            assert!(
                text.contains(['\u{85}', '\u{FEFF}', 'ſ'])
                    || not_shared.iter().any(|name| text.contains(name)),
                "differ on {}",
                shown(&text)
            );
        }
    }
    assert!(differ > 0, "the corpus holds texts where they differ");
}

#[test]
fn special_token_names_are_one_token_and_no_bos_or_eos_is_added() {
    let tokenizer = llama3();
    assert_eq!(tokenizer.name(), "llama3");
    assert_eq!(tokenizer.count(""), 0);
    assert_eq!(tokenizer.count("<|eot_id|>"), 1);
    assert_eq!(
        tokenizer.count("a<|eot_id|>b"),
        tokenizer.count("a") + 1 + tokenizer.count("b")
    );
    // Llama 3.1's names, as llama3-tokenizer-js has them; 3.0's extra reserved ones are text.
    assert_eq!(tokenizer.count("<|eom_id|>"), 1);
    assert!(tokenizer.count("<|reserved_special_token_250|>") > 3);
    // Not a special token's name: ordinary text.
    assert!(tokenizer.count("<|eot_idx|>") > 3);
    // Llama 3's first 100,256 tokens are cl100k_base's: plain English counts alike.
    let english = &support::corpus::fixed()[0];
    assert_eq!(
        tokenizer.count(english),
        Tokenizer::Cl100kBase.count(english)
    );
}

/// Without the installed file, `llama3` is an error that says which file is missing, which
/// script installs it and what to give instead; `$ENVELOPE_TOKENIZERS` says where to look. The
/// variable is set for a child run of this test (setting it here would race the other tests).
#[test]
fn a_missing_llama3_names_the_file_and_the_script() {
    if std::env::var_os("ENVELOPE_TOKENS_CHILD").is_some() {
        let folder = std::env::var("ENVELOPE_TOKENIZERS").unwrap();
        let message = Tokenizer::by_name("llama3").unwrap_err().to_string();
        let file = format!("{folder}/llama3.json is missing");
        for needed in [file.as_str(), "scripts/install-tokenizers.sh", "file:PATH"] {
            assert!(message.contains(needed), "{needed:?} not in {message}");
        }
        assert_eq!(
            envelope_tokens::llama3_path().display().to_string(),
            format!("{folder}/llama3.json")
        );
        return;
    }
    let empty =
        std::env::temp_dir().join(format!("envelope-tokens-no-llama3-{}", std::process::id()));
    std::fs::create_dir_all(&empty).unwrap();
    let output = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "a_missing_llama3_names_the_file_and_the_script",
            "--nocapture",
        ])
        .env("ENVELOPE_TOKENS_CHILD", "1")
        .env("ENVELOPE_TOKENIZERS", &empty)
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&empty);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && stdout.contains("1 passed"),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
}
