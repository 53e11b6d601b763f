//! A long error is cut to the limit like a long payload: when the error's own fields are
//! what does not fit (a failing command's whole log as its message), the budget keeps the
//! message's start, as much as fits, and says so (the hint, the losses), in every format;
//! an error's details are left out before its message is cut to nothing. When not even a
//! character fits, the budget error names the smallest limit that does.

mod common;

use envelope::shape::Pipeline;
use envelope::{DecodeOptions, Error, FormatId};
use serde_json::{Value, json};

fn log(lines: usize) -> String {
    (0..lines)
        .map(|i| {
            format!("commit {i:040x}\nAuthor: Dev <dev@example.com> <é>\n\n    change {i}\n\n")
        })
        .collect()
}

fn mcp_error(text: &str) -> Vec<u8> {
    json!({"content": [{"type": "text", "text": text}], "isError": true})
        .to_string()
        .into_bytes()
}

/// The output's error message, decoded as its format reads it (tool-result-envelope has
/// no error: it writes the error object as its payload).
fn message_of(output: &[u8], format: FormatId) -> String {
    let env = envelope::formats::decode(format, output, &DecodeOptions::default())
        .unwrap_or_else(|e| panic!("{format}: {e}"));
    match (env.error, env.payload) {
        (Some(error), _) => error.message,
        (None, envelope::model::Payload::Json(error)) => error["message"].as_str().unwrap().into(),
        _ => panic!("{format}: no error"),
    }
}

fn loss_of<'s>(shaped: &'s envelope::shape::Shaped, field: &str) -> Option<&'s str> {
    let loss = shaped.losses.items.iter().find(|l| l.field == field)?;
    Some(&loss.reason)
}

#[test]
fn an_mcp_error_with_a_long_text_is_cut_to_the_limit() {
    let text = log(40_000);
    let input = mcp_error(&text);
    let limit = 65_536;
    let shaped = Pipeline::new(&input)
        .limit(limit)
        .run()
        .expect("a long error is cut, not refused");
    assert!(shaped.bytes.len() <= limit, "{}", shaped.bytes.len());
    // Most of the room is the message's.
    assert!(shaped.bytes.len() > limit - 1024, "{}", shaped.bytes.len());
    let out: Value = serde_json::from_slice(&shaped.bytes).unwrap();
    assert_eq!(out["isError"], true);
    let marker = &out["_meta"]["dev.envelope/budget"];
    assert_eq!(marker["truncated"], true, "{out}");
    let hint = marker["hint"].as_str().unwrap();
    // The notice before the text says how much of it was kept; the text is its start.
    assert_eq!(out["content"][0]["text"], hint);
    let kept = out["content"][1]["text"].as_str().unwrap();
    assert!(
        text.starts_with(kept) && kept.len() > 60_000,
        "{}",
        kept.len()
    );
    assert!(
        hint.ends_with(&format!(
            "the error message kept its first {} of {} bytes.",
            kept.len(),
            text.len()
        )),
        "{hint}"
    );
    let loss = loss_of(&shaped, "error.message").expect("the cut is a loss");
    assert!(loss.contains(&format!("of {} bytes", text.len())), "{loss}");
    // The error has no payload: the marker names no cut of one, nor do the losses.
    assert_eq!(marker.get("cuts"), None, "{marker}");
    assert_eq!(loss_of(&shaped, "payload"), None);
}

/// Every output format cuts the message to its limit, and what it kept is the message's
/// start (MCP's has the notice before it).
#[test]
fn every_format_cuts_a_long_message_to_its_limit() {
    let text = log(2_000);
    let input = mcp_error(&text);
    for to in FormatId::ALL {
        for limit in [4_096, 20_000] {
            let shaped = Pipeline::new(&input)
                .output_format(to)
                .limit(limit)
                .run()
                .unwrap_or_else(|e| panic!("{to} at {limit}: {e}"));
            assert!(shaped.bytes.len() <= limit, "{to}: {}", shaped.bytes.len());
            let message = message_of(&shaped.bytes, to);
            // MCP's notice before it; ctxo's and tool-envelope-v1's after it (no marker a
            // reader sees: ctxo's error has none, tool-envelope-v1's is in base64).
            let start = message
                .rsplit_once("bytes.\n")
                .map_or(&*message, |(_, s)| s);
            let hinted_after = matches!(to, FormatId::Ctxo | FormatId::ToolEnvelopeV1);
            let start = match start.rsplit_once("\n[Output truncated to fit ") {
                Some((start, _)) if hinted_after => start,
                None if hinted_after => panic!("{to} at {limit}: no hint after {message:?}"),
                _ => start,
            };
            if to == FormatId::ToolEnvelopeV1 {
                // What a reader of the result reads: block 0, the error's rendering.
                let out: Value = serde_json::from_slice(&shaped.bytes).unwrap();
                let block0 = out["content"][0]["text"].as_str().unwrap();
                assert!(
                    block0.contains("the error message kept its first"),
                    "{block0}"
                );
            }
            assert!(
                text.starts_with(start) && start.len() > limit / 4,
                "{to} at {limit}: kept {} bytes",
                start.len()
            );
            assert!(loss_of(&shaped, "error.message").is_some(), "{to}");
            // Nothing of the marker is lost: it has no item counts to keep (a format that
            // holds them only through cuts reported losing counts of 0).
            assert_eq!(loss_of(&shaped, "budget"), None, "{to}");
        }
    }
}

/// A protocol-v1 error whose details do not fit beside its message: the details are left
/// out, the message kept whole when it then fits, cut when it does not.
#[test]
fn long_details_are_left_out_before_the_message_is_cut() {
    let details: Vec<String> = (0..2_000).map(|i| format!("frame {i}")).collect();
    let doc = |message: &str| {
        json!({
            "version": 1, "status": "error", "command": "fs/ls",
            "data": null,
            "meta": {"ts": "2025-11-12T10:32:10Z", "duration_ms": 21},
            "error": {"code": "EIO", "message": message, "details": {"stack": details}}
        })
        .to_string()
        .into_bytes()
    };
    let short = doc("read /root/protected: permission denied");
    let shaped = Pipeline::new(&short).limit(4_096).run().unwrap();
    let out: Value = serde_json::from_slice(&shaped.bytes).unwrap();
    assert_eq!(
        out["error"]["message"],
        "read /root/protected: permission denied"
    );
    assert!(out["error"].get("details").is_none(), "{out}");
    assert!(loss_of(&shaped, "error.details").is_some());
    assert!(loss_of(&shaped, "error.message").is_some());

    let text = log(500);
    let long = doc(&text);
    let shaped = Pipeline::new(&long).limit(4_096).run().unwrap();
    assert!(shaped.bytes.len() <= 4_096);
    let out: Value = serde_json::from_slice(&shaped.bytes).unwrap();
    let kept = out["error"]["message"].as_str().unwrap();
    assert!(text.starts_with(kept) && kept.len() > 2_000, "{out}");
    assert!(out["error"].get("details").is_none(), "{out}");
}

/// Under the envelope around a message's first character: the budget error, whose
/// smallest limit is one a retry is cut within (at one time: the formats that write it
/// write its fraction digits, so the size depends on it).
#[test]
fn the_smallest_limit_named_is_one_a_retry_meets() {
    let input = mcp_error(&log(2_000));
    let pipeline = |to| {
        Pipeline::new(&input)
            .encode_options(common::encode_options())
            .output_format(to)
    };
    for to in FormatId::ALL {
        let error = pipeline(to).limit(100).run().unwrap_err();
        let Error::BudgetTooSmall { minimum, .. } = error else {
            panic!("{to}: {error}");
        };
        let shaped = pipeline(to)
            .limit(minimum)
            .run()
            .unwrap_or_else(|e| panic!("{to} at {minimum}: {e}"));
        assert!(shaped.bytes.len() <= minimum);
        assert!(loss_of(&shaped, "error.message").is_some(), "{to}");
        let under = pipeline(to).limit(minimum - 1).run();
        assert!(under.is_err(), "{to}: {minimum} is not the smallest");
    }
}

/// In tokens: the message is cut to the token limit (the search counts each start it
/// tries), most of the tokens used.
#[test]
fn a_long_error_is_cut_to_a_token_limit() {
    use envelope::tokens::Tokenizer;
    let text = log(2_000);
    let input = mcp_error(&text);
    let tokenizer = Tokenizer::O200kBase;
    for to in [FormatId::Mcp, FormatId::ProtocolV1, FormatId::Ctxo] {
        let shaped = Pipeline::new(&input)
            .output_format(to)
            .limit_tokens(1_000, &tokenizer)
            .run()
            .unwrap_or_else(|e| panic!("{to}: {e}"));
        let count = tokenizer.count(std::str::from_utf8(&shaped.bytes).unwrap());
        assert!((800..=1_000).contains(&count), "{to}: {count} tokens");
        let loss = loss_of(&shaped, "error.message").expect("cut");
        assert!(loss.contains("1000 tokens"), "{to}: {loss}");
    }
}
