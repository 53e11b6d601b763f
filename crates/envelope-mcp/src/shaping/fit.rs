//! A stored result cut to the limit, MCP to MCP, with the link to the full result.
//!
//! The library's budget cut ([`Pipeline`] with a limit) does the cutting: arrays keep a
//! prefix, strings are cut at character boundaries, `structuredContent` and its text mirror
//! stay equal, and a notice plus a `_meta` marker say what was cut. This module reserves the
//! link's bytes, adds the link, keeps non-text blocks whole ([`odd`](super::odd)), and
//! checks the result against the tool's `outputSchema`.

use std::borrow::Cow;

use envelope::FormatId;
use envelope::json::Dialect;
use envelope::shape::Pipeline;
use serde_json::Value;

use super::odd::{self, Atomic};
use super::{CallContext, Fitted, ShapeError, Stored, link, schema};

/// Attempts before giving up on a shaped form (each may replace a non-text block or shrink
/// the budget by what the last one overshot).
const MAX_ATTEMPTS: usize = 8;

/// `full` (the stored result's compact JSON) in at most `limit` bytes, linking `stored`;
/// `atomic` lists its non-text blocks, `excerpt` gives its text for an error result.
pub(crate) fn cut(
    full: &[u8],
    atomic: &[Atomic],
    excerpt: &dyn Fn() -> Result<String, serde_json::Error>,
    stored: &Stored,
    call: &CallContext,
    limit: usize,
) -> Result<Fitted, ShapeError> {
    let link = link::block(stored, call.revision);
    // The link is appended to `content`: its bytes and a comma.
    let mut budget = limit.saturating_sub(envelope::json::size::js_size(&link) + 1);
    let mut input = Cow::Borrowed(full);
    // The result with placeholders for the non-text blocks replaced so far.
    let mut edited: Option<Value> = None;
    let mut replaced: Vec<usize> = Vec::new();
    let refuse = |reason: String| -> Result<Fitted, ShapeError> {
        let bytes = link::error_result(&reason, &excerpt()?, stored, call.revision, limit)?;
        Ok(Fitted {
            bytes,
            truncated: true,
        })
    };
    for _ in 0..MAX_ATTEMPTS {
        let shaped = Pipeline::new(&input)
            .input_format(FormatId::Mcp)
            .output_format(FormatId::Mcp)
            .limit(budget)
            .run();
        let shaped = match shaped {
            Ok(shaped) => shaped,
            Err(envelope::Error::BudgetTooSmall { .. }) => {
                return refuse(format!(
                    "The result of tool {} takes {} bytes; not even its smallest form fits the limit of {limit} bytes.",
                    call.tool, stored.size
                ));
            }
            Err(e) => {
                return refuse(format!(
                    "The result of tool {} ({} bytes) could not be cut to the limit of {limit} bytes: {e}",
                    call.tool, stored.size
                ));
            }
        };
        let mut out: Value = serde_json::from_slice(&shaped.bytes)?;
        // A non-text block the cut shortened: the largest one left goes, whole, to the
        // full result only.
        if let Some(index) = cut_block(&out, atomic, &replaced) {
            let work = match &mut edited {
                Some(work) => work,
                None => edited.insert(serde_json::from_slice(full)?),
            };
            replaced.push(index);
            odd::replace(work, atomic, &replaced);
            input = Cow::Owned(envelope::json::to_vec(work, Dialect::Js));
            continue;
        }
        let truncated = out.get("_meta").and_then(|m| m.get(BUDGET_KEY)).is_some();
        restate_limit(&mut out, budget, limit);
        if let Some(content) = out.get_mut("content").and_then(Value::as_array_mut) {
            content.push(link.clone());
        }
        let bytes = envelope::json::to_vec(&out, Dialect::Js);
        if bytes.len() > limit {
            budget = budget.saturating_sub(bytes.len() - limit);
            continue;
        }
        if !schema::honest(&out, call) {
            return refuse(format!(
                "The result of tool {} ({} bytes) was cut to fit the limit of {limit} bytes, and the cut does not satisfy the tool's outputSchema.",
                call.tool, stored.size
            ));
        }
        return Ok(Fitted {
            bytes,
            truncated: truncated || !replaced.is_empty(),
        });
    }
    refuse(format!(
        "The result of tool {} ({} bytes) could not be cut to the limit of {limit} bytes.",
        call.tool, stored.size
    ))
}

/// The `_meta` key of the library's budget marker.
const BUDGET_KEY: &str = envelope::formats::mcp::BUDGET_META_KEY;

/// The index (in the input) of a non-text block to replace: when a block of the shaped
/// result is neither text nor one of `atomic` whole, the largest block of `atomic` not
/// replaced yet.
fn cut_block(out: &Value, atomic: &[Atomic], replaced: &[usize]) -> Option<usize> {
    let blocks = out.get("content")?.as_array()?;
    let shortened = blocks
        .iter()
        .any(|b| !odd::is_text(b) && !Atomic::is_whole(b, atomic));
    if !shortened {
        return None;
    }
    atomic
        .iter()
        .filter(|a| !replaced.contains(&a.index))
        .max_by_key(|a| a.size)
        .map(|a| a.index)
}

/// The cut's notice and marker name the budget the cut was given (the limit less the
/// link's bytes): they name the limit instead, the number the client knows.
fn restate_limit(out: &mut Value, budget: usize, limit: usize) {
    let from = format!("to fit {budget} bytes");
    let to = format!("to fit {limit} bytes");
    let restate = |text: Option<&mut Value>| {
        if let Some(text) = text
            && let Some(s) = text.as_str().filter(|s| s.starts_with("Output truncated"))
        {
            *text = Value::String(s.replacen(&from, &to, 1));
        }
    };
    restate(
        out.get_mut("content")
            .and_then(|c| c.get_mut(0))
            .and_then(|b| b.get_mut("text")),
    );
    restate(
        out.get_mut("_meta")
            .and_then(|m| m.get_mut(BUDGET_KEY))
            .and_then(|b| b.get_mut("hint")),
    );
}
