//! The counts equal npm js-tiktoken's exactly, text by text, for both encodings (issue 30).
//! js-tiktoken runs under Node (tests/js_tiktoken_counts.cjs); without it the test fails and
//! names scripts/install-token-refs.sh.

mod support;

use envelope_tokens::Tokenizer;
use serde_json::Value;
use support::{Reference, shown};

fn reference() -> Reference {
    Reference::find().unwrap_or_else(|message| panic!("{message}"))
}

/// Compares every text's counts with the reference's; fails on the first that differs.
fn assert_counts_equal(texts: &[String]) -> Vec<Value> {
    let output = reference().run(texts, &[]);
    let answers: Vec<Value> = output
        .lines()
        .map(|line| serde_json::from_str(line).expect("the Node script prints JSON lines"))
        .collect();
    assert_eq!(answers.len(), texts.len(), "one answer per text");
    for (text, answer) in texts.iter().zip(&answers) {
        for tokenizer in [Tokenizer::O200kBase, Tokenizer::Cl100kBase] {
            let theirs = answer[tokenizer.name()].as_u64().expect("a count");
            let ours = tokenizer.count(text) as u64;
            assert_eq!(
                ours,
                theirs,
                "{tokenizer}: we count {ours} tokens, js-tiktoken {theirs}, in {}",
                shown(text)
            );
        }
    }
    answers
}

/// The hand-picked texts of 10,000 characters and more (the two long runs of one
/// character), or the others. js-tiktoken's merge loop is quadratic in a piece's length:
/// each long run takes it about 10 s an encoding, so each is counted in a test of its own,
/// on its own Node process, and the two run on the two cores (in one test the hand-picked
/// texts took 64 s).
fn hand_picked(long: bool) -> Vec<String> {
    let texts: Vec<String> = support::corpus::fixed()
        .into_iter()
        .filter(|text| (text.chars().count() >= 10_000) == long)
        .collect();
    assert!(!texts.is_empty());
    texts
}

#[test]
fn the_first_long_run_counts_as_js_tiktoken_counts_it() {
    let long = hand_picked(true);
    assert_eq!(long.len(), 2, "the corpus has two long runs");
    assert_counts_equal(&long[..1]);
}

#[test]
fn the_second_long_run_counts_as_js_tiktoken_counts_it() {
    assert_counts_equal(&hand_picked(true)[1..]);
}

#[test]
fn hand_picked_texts_count_as_js_tiktoken_counts_them() {
    let texts = hand_picked(false);
    let answers = assert_counts_equal(&texts);
    // The choice for special-token look-alikes is checked, not only stated: js-tiktoken's plain
    // `encode(text)` refuses exactly the texts that hold a special token's name, and we count
    // those as ordinary text, as `encode(text, [], [])` does.
    let mut asked = 0;
    for (text, answer) in texts.iter().zip(&answers) {
        if answer["default_throws"].is_null() {
            continue; // a long run: not asked
        }
        asked += 1;
        let holds_special = ["<|endoftext|>", "<|endofprompt|>"]
            .iter()
            .any(|s| text.contains(s));
        assert_eq!(
            answer["default_throws"],
            Value::Bool(holds_special),
            "{}",
            shown(text)
        );
    }
    assert!(asked > 30, "the refusal was asked of the short texts");
    assert!(Tokenizer::O200kBase.count("<|endoftext|>") > 1);
}

#[test]
fn generated_texts_count_as_js_tiktoken_counts_them() {
    let texts: Vec<String> =
        support::corpus::corpus(30, 2_000).split_off(support::corpus::fixed().len());
    assert_eq!(texts.len(), 2_000);
    assert_counts_equal(&texts);
}

#[test]
fn names_and_unknown_names() {
    for tokenizer in Tokenizer::ALL {
        assert_eq!(Tokenizer::by_name(tokenizer.name()).as_ref(), Ok(tokenizer));
    }
    let error = Tokenizer::by_name("gpt-4o").unwrap_err();
    assert_eq!(
        error.to_string(),
        "unknown tokenizer \"gpt-4o\"; known: o200k_base, cl100k_base, llama3, anthropic-estimate, \
         file:PATH (a Hugging Face tokenizer.json)"
    );
    assert!(Tokenizer::by_name("O200K_BASE").is_err(), "names are exact");
}
