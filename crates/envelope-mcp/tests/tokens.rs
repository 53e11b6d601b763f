//! `shape_result` under a token limit (issue 30): over generated results of every kind
//! (text, structured rows with and without a mirror, mixed blocks, errors, two channels in
//! two forms), every revision, both tokenizers, with and without a byte limit too, MCP and
//! `emit` formats, the result sent is within the token limit as the tokenizer counts its
//! text (and within the byte limit when there is one); `shaped_tokens` is that count; a cut
//! result keeps a fair part of the limit.

mod common;

use common::shaping::{TempStore, random_result, text};
use envelope::FormatId;
use envelope::tokens::Tokenizer;
use envelope_mcp::revision::Revision;
use envelope_mcp::shaping::{CallContext, NO_BYTE_LIMIT, TokenBudget, ToolSettings, shape_result};
use proptest::prelude::*;
use serde_json::{Value, json};

/// Text a tokenizer treats in every way: prose, CJK, digits, code, base64, emoji.
fn mixed_text(lines: usize, seed: u64) -> String {
    let mut text = String::new();
    for i in 0..lines {
        let i = i as u64 + seed % 100_000;
        text.push_str(&match i % 6 {
            0 => format!("Line {i}: the quick brown fox jumps over the lazy dog.\n"),
            1 => format!("{i} {} {}\n", i * 7919, i as f64 / 7.0),
            2 => format!("第{i}行：敏捷的棕色狐狸跳过了懒狗。\n"),
            3 => format!("fn f{i}(x: u64) -> u64 {{ x ^ 0x{i:x} }}\n"),
            4 => "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo=\n".to_string(),
            _ => "🙂🚀 émoji и кириллица\n".to_string(),
        });
    }
    text
}

/// server-filesystem's `read_text_file`: the text, and again in `structuredContent`.
fn two_channels(seed: u64) -> Value {
    let file = mixed_text(300 + (seed % 300) as usize, seed);
    json!({"content": [text(&file)], "structuredContent": {"content": file}})
}

/// Shapes `result` with `settings` and checks both limits; returns (tokens, cut).
fn check(result: &Value, call: &CallContext, settings: &ToolSettings) -> (usize, bool) {
    let store = TempStore::new();
    let input = result.to_string();
    let outcome = shape_result(input.as_bytes(), call, settings, &store.store)
        .unwrap_or_else(|e| panic!("{e} for {settings:?}"));
    let tokens = settings.tokens.unwrap();
    let sent = std::str::from_utf8(&outcome.bytes).unwrap();
    let count = tokens.tokenizer.count(sent);
    assert!(
        count <= tokens.limit,
        "{count} tokens > {} ({settings:?}): {sent}",
        tokens.limit
    );
    assert!(outcome.bytes.len() <= settings.limit, "{settings:?}");
    assert_eq!(outcome.shaped_tokens, Some(count));
    // The link's tokens (and an emitted document's, the result around it) are reserved
    // with a margin and the stand-in digest takes the most tokens a digest can: the
    // recount of the whole is never over.
    assert!(
        !sent.contains("with the link to the full result it is over")
            && !sent.contains("with the result around it it is over"),
        "{sent}"
    );
    let value: Value = serde_json::from_str(sent).unwrap();
    assert!(value.is_object(), "{sent}");
    (count, outcome.stored.is_some())
}

const EMITS: [Option<FormatId>; 4] = [
    None,
    Some(FormatId::Ctxo),
    Some(FormatId::ProtocolV1),
    Some(FormatId::ToolEnvelopeV1),
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn random_results_are_within_the_token_limit(
        seed in any::<u64>(),
        limit in 300usize..5000,
        rev in 0usize..5,
        bytes in prop_oneof![Just(None), (2000usize..40_000).prop_map(Some)],
        cl100k in any::<bool>(),
        emit in 0usize..4,
        channels in any::<bool>(),
    ) {
        let revision = Revision::ALL[rev];
        let (result, schema) = match channels && revision.supports_structured_content() {
            true => (two_channels(seed), None),
            false => {
                let generated = random_result(seed, revision);
                (generated.result, generated.schema)
            }
        };
        let call = CallContext::new("tool", schema.as_ref(), revision);
        let tokenizer = if cl100k { Tokenizer::Cl100kBase } else { Tokenizer::O200kBase };
        let settings = ToolSettings {
            limit: bytes.unwrap_or(NO_BYTE_LIMIT),
            tokens: Some(TokenBudget { limit, tokenizer: envelope_mcp::shaping::shared_tokenizer(tokenizer) }),
            emit: EMITS[emit],
            ..ToolSettings::default()
        };
        check(&result, &call, &settings);
    }
}

/// The cut is tight: over results of the two cut paths (the library's, two channels) and a
/// range of limits, a cut result takes at least half of the limit, and the median at least
/// 80% (measured: printed with --nocapture).
#[test]
fn cut_results_use_most_of_the_token_limit() {
    let call = CallContext::new("tool", None, Revision::V2025_06_18);
    let mut shares = Vec::new();
    for (i, limit) in [600, 1000, 1500, 2500, 4000, 8000].into_iter().enumerate() {
        let text_only = json!({"content": [text(&mixed_text(2000, i as u64))]});
        let rows: Vec<Value> = (0..3000)
            .map(|r| json!({"id": r, "name": format!("row {r}"), "value": r as f64 * 1.5}))
            .collect();
        let sc = json!({"rows": rows});
        let mirror = json!({"content": [text(&sc.to_string())], "structuredContent": sc});
        for result in [text_only, mirror, two_channels(i as u64 * 97)] {
            let settings = ToolSettings {
                limit: NO_BYTE_LIMIT,
                tokens: Some(TokenBudget::o200k(limit)),
                ..ToolSettings::default()
            };
            let (count, cut) = check(&result, &call, &settings);
            assert!(cut);
            let share = count as f64 / limit as f64;
            eprintln!("{limit} tokens: {count} sent ({:.0}%)", share * 100.0);
            assert!(share >= 0.5, "{count} of {limit}");
            shares.push(share);
        }
    }
    shares.sort_by(f64::total_cmp);
    let median = shares[shares.len() / 2];
    eprintln!("median share of the limit: {:.0}%", median * 100.0);
    assert!(median >= 0.8, "median {median}");
}

/// A result within the byte limit but over the token limit is shaped (stored and cut); one
/// within both comes back as it was.
#[test]
fn under_the_byte_limit_but_over_the_token_limit_is_shaped() {
    let call = CallContext::new("tool", None, Revision::V2025_06_18);
    // Digits: about 3 bytes a token.
    let digits: String = (0..3000).map(|i| format!("{i} ")).collect();
    let result = json!({"content": [text(&digits)]});
    let size = result.to_string().len();
    let tokens = Tokenizer::O200kBase.count(&result.to_string());
    let settings = ToolSettings {
        limit: size + 100,
        tokens: Some(TokenBudget::o200k(tokens - 10)),
        ..ToolSettings::default()
    };
    let (count, cut) = check(&result, &call, &settings);
    assert!(cut && count < tokens - 10);
    let roomy = ToolSettings {
        tokens: Some(TokenBudget::o200k(tokens)),
        ..settings
    };
    let store = TempStore::new();
    let input = result.to_string();
    let outcome = shape_result(input.as_bytes(), &call, &roomy, &store.store).unwrap();
    assert!(!outcome.changed);
    assert_eq!(outcome.shaped_tokens, Some(tokens));
    assert!(store.is_empty());
}

/// What a token limit costs beside a byte limit, on the proxy's path (`shape_result` of a
/// large result: store, cut, link). Run with `--ignored --nocapture`; the numbers are in
/// docs/proxy.md ("Token budgets").
#[test]
#[ignore = "a measurement, not a check"]
fn measure_a_token_limit_against_a_byte_limit() {
    let call = CallContext::new("tool", None, Revision::V2025_06_18);
    let rows: Vec<Value> = (0..20_000)
        .map(|r| json!({"id": r, "name": format!("row {r} {}", mixed_text(1, r)), "value": r as f64 * 1.5}))
        .collect();
    let sc = json!({"rows": rows});
    let mirror = json!({"content": [text(&sc.to_string())], "structuredContent": sc});
    let two = json!({"content": [text(&mixed_text(20_000, 0))], "structuredContent": {"content": mixed_text(20_000, 0)}});
    for (name, result) in [("rows (mirror)", mirror), ("text (two channels)", two)] {
        let input = result.to_string();
        let time = |settings: &ToolSettings| {
            let mut runs: Vec<f64> = (0..9)
                .map(|_| {
                    let store = TempStore::new();
                    let start = std::time::Instant::now();
                    shape_result(input.as_bytes(), &call, settings, &store.store).unwrap();
                    start.elapsed().as_secs_f64() * 1000.0
                })
                .collect();
            runs.sort_by(f64::total_cmp);
            runs[runs.len() / 2]
        };
        let bytes = time(&ToolSettings {
            limit: 16384,
            ..ToolSettings::default()
        });
        let tokens = time(&ToolSettings {
            limit: NO_BYTE_LIMIT,
            tokens: Some(TokenBudget::o200k(4000)),
            ..ToolSettings::default()
        });
        eprintln!(
            "{name}, {} bytes: 16384 bytes {bytes:.2} ms, 4000 tokens {tokens:.2} ms ({:.2}x)",
            input.len(),
            tokens / bytes
        );
    }
}
