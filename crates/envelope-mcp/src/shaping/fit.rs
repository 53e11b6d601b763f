//! A stored result cut to the limit, MCP to MCP, with the link to the full result.
//!
//! The cut ([`cut`]) needs the stored result's size only, not its digest, so it runs while
//! the store hashes and writes the result; [`link`] then names the stored result.
//!
//! The library's budget cut ([`Pipeline`] with a limit) does the cutting: arrays keep a
//! prefix, strings are cut at character boundaries, `structuredContent` and its text mirror
//! stay equal, and a notice plus a `_meta` marker say what was cut. This module reserves the
//! link's bytes, adds the link, and checks the result against the tool's `outputSchema`.
//! Non-text blocks (an image, audio, a resource) are the library's to keep whole: each is
//! kept whole or replaced by a line saying what it was, never shortened.

use envelope::FormatId;
use envelope::json::Dialect;
use envelope::model::{Cut as BudgetCut, CutUnit, Payload};
use envelope::shape::{Budget, Pipeline};
use serde_json::Value;

use super::notice::Notices;
use envelope_store::Digest;

use super::limits::Limits;
use super::{CallContext, Channels, Fitted, ShapeError, Stored, link, schema};

/// The digest the cut is made with before the stored result's is known: `0a` 32 times,
/// whose hex every tokenizer we know splits one character a token (a digit, then a letter,
/// …), the most 64 characters can take. The real digest's URI is as long and takes at
/// most as many tokens, so a cut that fits with this one fits with it (checked again in
/// [`link`]).
fn stand_in_digest() -> Digest {
    format!("sha256:{}", "0a".repeat(32))
        .parse()
        .expect("a digest's canonical text")
}

/// Tokens kept beside the link's own count: BPE counts of a concatenation are not exactly
/// the sum of the parts' counts.
const LINK_TOKEN_MARGIN: usize = 2;

/// What [`cut`] made of a result.
pub(crate) enum Cut {
    /// The shaped result, its link to the stored result last in `content` (for a stand-in
    /// digest: see [`link`]), and whether the payload was cut.
    Fitted { out: Value, truncated: bool },
    /// No shaped form fits or satisfies the tool's `outputSchema`: an error result saying
    /// this must be sent instead.
    Refused(String),
}

/// `full` (the stored result's compact JSON, `size` bytes) within `limits` (bytes, tokens
/// or both), with a link to the stored result.
///
/// The stored result's digest is not needed: every link has the same length whatever the
/// digest (64 hex digits), so the cut is made with a stand-in and [`link`] puts the real
/// one in. The store can hash and write the result meanwhile.
pub(crate) fn cut(
    full: &[u8],
    size: usize,
    call: &CallContext,
    channels: Channels,
    limits: &Limits,
) -> Result<Cut, ShapeError> {
    let stand_in = Stored {
        digest: stand_in_digest(),
        size,
    };
    let link = link::block(&stand_in, call.revision);
    let stand_in_uri = stand_in.uri();
    let notices = Notices::new(full, &stand_in_uri, call.offers_search);
    // The link is appended to `content`: its bytes and a comma; in tokens, the count of
    // that text and a margin.
    let link_bytes = envelope::json::size::js_size(&link) + 1;
    let link_text = format!(",{}", envelope::json::to_string(&link, Dialect::Js));
    let link_tokens = limits
        .tokens
        .map_or(0, |t| t.count(link_text.as_bytes()) + LINK_TOKEN_MARGIN);
    let inner = limits.less(link_bytes, link_tokens);
    let names = limits.names();
    // Two channels in two forms: each cut in its own (see `channels`), fitted to `inner`
    // by the same cost the pipeline uses, so a token limit holds there too.
    if let Some(parts) = super::channels::parts(full)
        && let Some(mut out) = super::channels::cut(
            &parts,
            &notices,
            call,
            channels,
            &inner,
            (&names, limits.scale()),
        )
        && schema::honest(&out, call)
    {
        if let Some(content) = out.get_mut("content").and_then(Value::as_array_mut) {
            content.push(link.clone());
        }
        if limits.fits(&envelope::json::to_vec(&out, Dialect::Js)) {
            let truncated = out.get("_meta").and_then(|m| m.get(BUDGET_KEY)).is_some();
            return Ok(Cut::Fitted { out, truncated });
        }
        // (Over by the link's tokens at a seam: the pipeline's cut below instead.)
    }
    // The cut is fitted with the notice and pointers it is sent with, the link's bytes
    // reserved, and non-text blocks kept whole or replaced (the library's budget does
    // both): one pipeline run gives the result to send.
    let restated = Restated { notices: &notices };
    let tokenizer = limits.tokens.map(|t| t.tokenizer);
    let mut pipeline = Pipeline::new(full)
        .input_format(FormatId::Mcp)
        .output_format(FormatId::Mcp)
        .limit(limits.byte_limit())
        .reserve(link_bytes)
        .notice(&restated);
    if let (Some(t), Some(tokenizer)) = (limits.tokens, tokenizer.as_ref()) {
        pipeline = pipeline
            .limit_tokens(t.limit, tokenizer)
            .reserve_tokens(link_tokens);
    }
    let shaped = match pipeline.run() {
        Ok(shaped) => shaped,
        Err(
            envelope::Error::BudgetTooSmall { .. } | envelope::Error::TokenBudgetTooSmall { .. },
        ) => {
            return Ok(Cut::Refused(format!(
                "The result of tool {} takes {size} bytes; not even its smallest form fits the limit of {names}.",
                call.tool
            )));
        }
        Err(e) => {
            return Ok(Cut::Refused(format!(
                "The result of tool {} ({size} bytes) could not be cut to the limit of {names}: {e}",
                call.tool
            )));
        }
    };
    let mut out: Value = serde_json::from_slice(&shaped.bytes)?;
    let truncated = out.get("_meta").and_then(|m| m.get(BUDGET_KEY)).is_some();
    if let Some(content) = out.get_mut("content").and_then(Value::as_array_mut) {
        content.push(link.clone());
    }
    // The library fitted the cut into the limits less the link's bytes and tokens; a
    // token count is not quite additive, so the whole is counted again (never over on the
    // tests' inputs: the margin covers the seam).
    if !limits.fits(&envelope::json::to_vec(&out, Dialect::Js)) {
        return Ok(Cut::Refused(format!(
            "The result of tool {} ({size} bytes) was cut to fit the limit of {names}, and with the link to the full result it is over.",
            call.tool
        )));
    }
    if !schema::honest(&out, call) {
        return Ok(Cut::Refused(format!(
            "The result of tool {} ({size} bytes) was cut to fit the limit of {names}, and the cut does not satisfy the tool's outputSchema.",
            call.tool
        )));
    }
    Ok(Cut::Fitted { out, truncated })
}

/// The bytes of a [`Cut`] linking `stored`: the shaped result with the real link in place
/// of the stand-in (as long, and no more tokens, so still within `limits`: checked), or
/// the error result of a refusal, quoting `excerpt` (the result's text).
pub(crate) fn link(
    cut: Cut,
    stored: &Stored,
    excerpt: &dyn Fn() -> Result<link::Excerpt, serde_json::Error>,
    call: &CallContext,
    limits: &Limits,
) -> Result<Fitted, ShapeError> {
    let refuse = |reason: String| -> Result<Fitted, ShapeError> {
        Ok(Fitted {
            bytes: link::error_result(&reason, &excerpt()?, stored, call.revision, limits)?,
            truncated: true,
        })
    };
    match cut {
        Cut::Fitted { mut out, truncated } => {
            if let Some(last) = out
                .get_mut("content")
                .and_then(Value::as_array_mut)
                .and_then(|content| content.last_mut())
            {
                *last = link::block(stored, call.revision);
            }
            // The notice's `envelope_read` call names the stand-in URI the cut was made
            // with: the stored result's is as long.
            let stand_in = Stored {
                digest: stand_in_digest(),
                size: stored.size,
            }
            .uri();
            // The notice and its copy in the marker.
            let marker_hint = format!("/_meta/{}/hint", BUDGET_KEY.replace('/', "~1"));
            for at in ["/content/0/text", marker_hint.as_str()] {
                if let Some(notice) = out.pointer_mut(at)
                    && let Some(text) = notice.as_str().filter(|t| t.contains(&stand_in))
                {
                    *notice = Value::String(text.replace(&stand_in, &stored.uri()));
                }
            }
            let bytes = envelope::json::to_vec(&out, Dialect::Js);
            debug_assert!(
                limits.byte_limit().is_none_or(|limit| bytes.len() <= limit),
                "a link is as long whatever its digest"
            );
            // The stand-in's hex takes the most tokens hex can: the real one fits where it
            // did. Were it ever over, the result is refused rather than sent over the limit.
            if !limits.tokens_fit(&bytes) {
                return refuse(format!(
                    "The result of tool {} ({} bytes) was cut to fit the limit of {}, and with the link to the full result it is over.",
                    call.tool,
                    stored.size,
                    limits.names()
                ));
            }
            Ok(Fitted { bytes, truncated })
        }
        Cut::Refused(reason) => refuse(reason),
    }
}

/// The `_meta` key of the library's budget marker.
const BUDGET_KEY: &str = envelope::formats::mcp::BUDGET_META_KEY;

/// How the proxy words a cut: pointers into the whole stored result (the ones
/// `envelope_read` takes: `/structuredContent/rows`, `/content/0/text`) instead of into the
/// payload (`/rows`, `""` for a text payload), and the notice with the facts of the cut part
/// and the `envelope_read` call that reads on from where the cut stops.
struct Restated<'n> {
    notices: &'n Notices<'n>,
}

impl envelope::shape::Notice for Restated<'_> {
    fn restate(
        &self,
        cuts: &[BudgetCut],
        kept: &Payload,
        budget: &Budget<'_>,
    ) -> (Vec<BudgetCut>, String) {
        // The payload is the result's `structuredContent` when it is JSON (the MCP writer
        // writes it there); a text, or the content blocks, otherwise.
        let structured = matches!(kept, Payload::Json(_));
        let restated: Vec<BudgetCut> = cuts
            .iter()
            .map(|c| BudgetCut {
                pointer: document_pointer(structured, c),
                ..c.clone()
            })
            .collect();
        // The cut the hint names (as `budget::hint` picks it) is the one read on from.
        let named = (0..cuts.len()).max_by_key(|&i| {
            let c = &cuts[i];
            (c.unit == CutUnit::Items, c.total - c.kept)
        });
        let read_on = named.map(|i| {
            let offset = match cuts[i].unit {
                CutUnit::Items => cuts[i].kept,
                // `envelope_read` counts a string's offset in characters.
                _ => kept_chars(kept, &cuts[i].pointer).unwrap_or(cuts[i].kept),
            };
            (restated[i].pointer.as_str(), offset)
        });
        let hint = envelope::shape::budget::hint(&restated, &budget.names());
        let notice = self.notices.compose(&hint, read_on, budget.scale());
        (restated, notice)
    }
}

/// Where the cut's value is in the stored result.
fn document_pointer(structured: bool, cut: &BudgetCut) -> String {
    match (structured, cut.pointer.as_str(), cut.unit) {
        (true, p, _) => format!("/structuredContent{p}"),
        // A text payload: the result's one text block.
        (false, "", CutUnit::Bytes) => "/content/0/text".to_string(),
        (false, p, _) => format!("/content{p}"),
    }
}

/// The characters of the string the cut kept at `pointer` (into the payload).
fn kept_chars(kept: &Payload, pointer: &str) -> Option<u64> {
    let count = |s: &str| s.chars().count() as u64;
    match kept {
        Payload::Text(text) if pointer.is_empty() => Some(count(text)),
        Payload::Blocks(blocks) => {
            let rest = pointer.strip_prefix('/')?;
            let (index, tail) = rest.split_once('/').unwrap_or((rest, ""));
            let block = blocks.get(index.parse::<usize>().ok()?)?;
            match tail {
                "" => block.as_str().map(count),
                tail => block.pointer(&format!("/{tail}"))?.as_str().map(count),
            }
        }
        Payload::Json(value) => value.pointer(pointer)?.as_str().map(count),
        _ => None,
    }
}
