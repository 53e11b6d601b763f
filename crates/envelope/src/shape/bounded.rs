//! Decoding an envelope for a byte budget, from JSON text: what `envelope shape --limit`
//! and `envelope convert --to ctxo` do with a large payload.
//!
//! Parsing the whole document costs several serializations of it; cutting it to a few
//! kilobytes then costs almost nothing. Most of what a parse builds is cut right away, so
//! the document is read with `json::skim`: array items no cut within the limit
//! can keep are sized, not built, and a string longer than any such cut keeps is read as
//! its prefix and its length (`json::skim::read_for_cut`); the result is the same bytes as
//! parse-then-cut.
//!
//! A skimmed read is used only when that is certain; otherwise the document is read whole
//! ([`formats::decode_any`]), with the same result or the same error as without this module:
//! - the format decodes its payload by moving it out of a known place of the document,
//!   without looking at how long its arrays are ([`Format::payload_source`](crate::formats::Format::payload_source) says where): ctxo (not inside an MCP result: the root
//!   without `_meta`), protocol-v1 and operations (`/data`), tool-result-envelope (its
//!   payload key, or the root without `__envelope`). mcp and tool-envelope-v1 (whose payload
//!   is also text in a block, or base64) are read whole. Detection decides by keys, and by
//!   the root `content` array only between mcp, tool-envelope-v1 and ctxo-inside-MCP, all
//!   three read whole.
//! - every skimmed array lies inside that place (the pointers of its tails say where each is), and
//!   is found in the decoded payload at the same pointer below it: nothing outside the
//!   payload was skimmed, so whatever a decoder copied, compared or checked there (a
//!   protocol-v1 `meta`, an operations `meta.content`, a tool-result-envelope `compat` list)
//!   is whole.
//! - no decoder compared a skimmed array of the payload with something else. A skimmed
//!   array is a shorter array to anyone who does not ask for its tail, so such a comparison
//!   could say equal where the whole arrays differ. One decoder compares its payload:
//!   operations, with `meta.structuredContent` (kept as an extension when it differs from
//!   `data`) and with `meta.content` (then the payload is the blocks). Found equal, the
//!   document is read whole — the payload is no longer JSON moved from `/data`, or
//!   `structuredContent` is not kept. Found different, they are: arrays read identically
//!   whenever they are identical, so arrays equal whole are equal skimmed.
//! - the document reads at all (any syntax or encoding error is reported by the whole read).
//!
//! Strings read as prefixes follow the same rules as skimmed arrays (each lies in the
//! payload and is found there, pointers re-based), plus:
//! - an MCP result's text blocks are its payload (moved out of `content` as they are) when
//!   it has no `structuredContent` and is not an error (whose message is their text);
//!   with a mirror, the mirror's text is compared with `structuredContent` on the input's
//!   bytes (`json::skim::decodes_to`), never built;
//! - detection parses the last text block of an MCP result (a ctxo document travels there):
//!   without a format given, a prefix that starts with `{` has the document read again with
//!   its strings whole (its arrays still skimmed), as before strings were read as prefixes;
//! - the ctxo compat truncation ([`SkimmedEnvelope::encode_ctxo`]) knows skimmed arrays
//!   only: with a string read as a prefix, the document is decoded whole for it.

use super::budget::{Budget, Fitted, fit_measured, item_index, payload_value};
use super::cut::{Measured, StringIndex};
use crate::error::Result;
use crate::formats::{self, DecodeOptions, EncodeOptions, Encoded, FormatId, PayloadSource};
use crate::json::minified::has_white_space;
use crate::json::pointer;
use crate::json::skim::{self, LongString, Tail, TailIndex};
use crate::model::{Envelope, Payload};
use serde_json::Value;

/// A document decoded for a limit.
#[derive(Debug)]
pub enum Decoded {
    /// Everything was read: the envelope is the one [`formats::decode_any`] gives.
    Whole(FormatId, Envelope),
    /// Array items of the payload that no output within the limit can hold were skimmed.
    Skimmed(SkimmedEnvelope),
}

/// An envelope whose payload was read by `json::skim`: it can only be cut to its limit, never
/// written whole.
#[derive(Debug)]
pub struct SkimmedEnvelope {
    format: FormatId,
    env: Envelope,
    /// The skimmed arrays of the payload (JSON), pointers from its root.
    tails: Vec<Tail>,
    /// The strings of the payload read as prefixes, pointers from its root.
    strings: Vec<LongString>,
    limit: usize,
}

/// Decodes `input` (as `from`, or the detected format) for outputs of at most `limit` bytes.
/// (The pipeline reads with [`decode_bounded`](super::passthrough::decode_bounded), which
/// also reads payload members this reads whole.)
pub fn decode(
    input: &[u8],
    from: Option<FormatId>,
    options: &DecodeOptions,
    limit: usize,
) -> Result<Decoded> {
    decode_with(input, from, options, limit, &|| None)
}

/// [`decode`], asking `member` (the pass-through's read of a payload member,
/// [`decode_bounded`](super::passthrough::decode_bounded)) first for a tool-envelope-v1 result, whose payload is in
/// its envelope block, and for a document with a long text detection would read whole
/// (which the pass-through may prove to be an indented mirror).
pub(super) fn decode_with(
    input: &[u8],
    from: Option<FormatId>,
    options: &DecodeOptions,
    limit: usize,
    member: &dyn Fn() -> Option<Decoded>,
) -> Result<Decoded> {
    let whole = || {
        let (format, env) = formats::decode_any(input, from, options)?;
        Ok(Decoded::Whole(format, env))
    };
    if formats::identify_text(input).is_some() {
        return whole();
    }
    // A tool-envelope-v1 result: its payload is read out of the envelope block.
    if super::text_result::names(input, from, FormatId::ToolEnvelopeV1) {
        return member().map_or_else(whole, Ok);
    }
    let Some(mut doc) = skim::read_for_cut(input, limit) else {
        return whole();
    };
    // Detection parses the last text block of an MCP result (a ctxo document travels
    // there): when a string read as a prefix may hold a document, the strings are read
    // whole (arrays are still skimmed).
    let detects = from.is_none();
    if detects && doc.strings.iter().any(|s| may_hold_document(&doc.value, s)) {
        // Unless the pass-through proves what such a text is (an indented mirror).
        if let Some(decoded) = member() {
            return Ok(decoded);
        }
        let Some(read) = skim::read(input, limit) else {
            return whole();
        };
        doc = read;
    }
    let long = !doc.strings.is_empty();
    let format = match from {
        Some(f) => Ok(f),
        None => crate::detect::detect_value(&doc.value).map(|d| d.format),
    };
    if doc.tails.is_empty() && !long {
        // Nothing skimmed: this is the parsed document.
        let format = format?;
        return Ok(Decoded::Whole(
            format,
            formats::decode_value(format, doc.value, options)?,
        ));
    }
    let Ok(format) = format else {
        return whole();
    };
    let mut value = doc.value;
    let mut strings = doc.strings;
    let mirror = match format {
        FormatId::Mcp => {
            let structured = structured_member(input, &value);
            mcp_mirror_from_text(input, &mut value, &mut strings, structured)
        }
        _ => Mirror::Unknown,
    };
    let mirrored = mirror == Mirror::Found;
    // An MCP result's text blocks are its payload, moved out as they are, when it has no
    // `structuredContent` to compare them with and is no error (whose message they are).
    let mcp_blocks = format == FormatId::Mcp
        && !mirrored
        && doc.tails.is_empty()
        && value.get(STRUCTURED).is_none()
        && value.get("isError").is_none_or(|e| *e == false);
    let Ok(env) = formats::decode_value(format, value, options) else {
        return whole();
    };
    // With its mirror, or with blocks proven not to be one (a summary beside it: the
    // decoder keeps them as they are), the payload is `structuredContent` moved out as it is.
    let place = if mirrored || (mirror == Mirror::None && env.presentation.is_some()) {
        let structured = PayloadSource::Member(STRUCTURED.to_string());
        in_payload_at(Some(structured), &env, doc.tails, strings)
    } else if mcp_blocks {
        in_mcp_content(&env, strings)
    } else {
        let place = formats::get(format).payload_source(&env);
        in_payload_at(place, &env, doc.tails, strings)
    };
    // Skimmed outside the payload (a large `_meta`): the pass-through read sizes what it
    // does not need, else the document is read whole.
    let Some((tails, strings)) = place else {
        return member().map_or_else(whole, Ok);
    };
    Ok(Decoded::Skimmed(SkimmedEnvelope {
        format,
        env,
        tails,
        strings,
        limit,
    }))
}

/// `env`, decoded as `format`, with its payload replaced by the JSON text `payload` read for
/// outputs of at most `limit` bytes (as [`decode`] reads a payload): [`Decoded::Whole`] when
/// nothing had to be skimmed; `None` when the text cannot be read this way.
pub(super) fn with_payload_text(
    format: FormatId,
    mut env: Envelope,
    payload: &[u8],
    limit: usize,
) -> Option<Decoded> {
    let doc = skim::read_for_cut(payload, limit)?;
    env.payload = Payload::Json(doc.value);
    Some(skimmed_or_whole(format, env, doc.tails, doc.strings, limit))
}

/// `env`, decoded as `format`, whose JSON payload or blocks hold the skimmed arrays `tails`
/// and the strings read as prefixes `strings` (pointers from the payload's root), for
/// outputs of at most `limit` bytes: [`Decoded::Whole`] when there are none.
pub(super) fn skimmed_or_whole(
    format: FormatId,
    env: Envelope,
    tails: Vec<Tail>,
    strings: Vec<LongString>,
    limit: usize,
) -> Decoded {
    if tails.is_empty() && strings.is_empty() {
        return Decoded::Whole(format, env);
    }
    Decoded::Skimmed(SkimmedEnvelope {
        format,
        env,
        tails,
        strings,
        limit,
    })
}

/// A long text's masked form ([`decode_masked_text`]): its first bytes, the whole's length
/// and its compact JS-dialect size (quotes and escapes included).
pub(super) struct MaskedText {
    pub prefix: String,
    pub len: usize,
    pub size: usize,
}

/// [`decode`] of an MCP result of one long text block (and nothing else but `_meta`), its
/// text replaced by `masked` (the text redacted a piece at a time): read for `limit` as
/// [`decode`] reads it when there is nothing to redact (a prefix, a length and a size), the
/// rest of the envelope redacted by `redact_rest` (given the envelope with an empty text).
/// `None` when it cannot be read so, or the masked text is short enough to be read whole.
pub(super) fn decode_masked_text(
    input: &[u8],
    from: Option<FormatId>,
    options: &DecodeOptions,
    limit: usize,
    masked: MaskedText,
    redact_rest: impl FnOnce(&mut Envelope),
) -> Option<SkimmedEnvelope> {
    let kept = skim::kept_bytes(limit);
    if masked.len <= kept || masked.prefix.len() < kept.min(masked.len) {
        return None;
    }
    let mut doc = skim::read_for_cut(input, limit)?;
    let [long] = doc.strings.as_mut_slice() else {
        return None;
    };
    if long.pointer != "/content/0/text" || !doc.tails.is_empty() {
        return None;
    }
    let mut end = kept;
    while !masked.prefix.is_char_boundary(end) {
        end -= 1;
    }
    *doc.value.pointer_mut(&long.pointer)? = serde_json::Value::String(masked.prefix[..end].into());
    long.len = masked.len;
    long.size = masked.size;
    let format = match from {
        Some(format) => format,
        None => crate::detect::detect_value(&doc.value).ok()?.format,
    };
    if format != FormatId::Mcp {
        return None;
    }
    let mut env = formats::decode_value(format, doc.value, options).ok()?;
    let text = std::mem::replace(&mut env.payload, Payload::Text(String::new()));
    redact_rest(&mut env);
    env.payload = text;
    let (tails, strings) = in_mcp_content(&env, doc.strings)?;
    Some(SkimmedEnvelope {
        format,
        env,
        tails,
        strings,
        limit,
    })
}

/// Whether the string `long` (read as a prefix) of `doc` may be a JSON document detection
/// parses: its text starts with `{`.
pub(super) fn may_hold_document(doc: &serde_json::Value, long: &LongString) -> bool {
    doc.pointer(&long.pointer)
        .and_then(|s| s.as_str())
        .is_none_or(|s| s.trim_start().starts_with('{'))
}

/// `strings` (pointers in an MCP result) re-based on the payload the MCP decoder moved out
/// of its `content`: its one plain text block's text, or the blocks; `None` unless each is
/// found there.
pub(super) fn in_mcp_content(
    env: &Envelope,
    mut strings: Vec<LongString>,
) -> Option<(Vec<Tail>, Vec<LongString>)> {
    match &env.payload {
        Payload::Text(_) => {
            let [only] = strings.as_mut_slice() else {
                return None;
            };
            if only.pointer != "/content/0/text" {
                return None;
            }
            only.pointer.clear();
        }
        Payload::Blocks(_) => {
            for long in &mut strings {
                if !long.pointer.starts_with("/content/") {
                    return None;
                }
                long.pointer.replace_range(.."/content".len(), "");
            }
        }
        _ => return None,
    }
    let payload = payload_value(&env.payload);
    StringIndex::new(&payload, &strings)?;
    Some((Vec::new(), strings))
}

/// `tails` and `strings` (pointers in the document) re-based on the payload taken from
/// `place` into `env`: `None` unless the payload is JSON moved from the document and each
/// lies inside it and is found there.
pub(super) fn in_payload_at(
    place: Option<PayloadSource>,
    env: &Envelope,
    mut tails: Vec<Tail>,
    mut strings: Vec<LongString>,
) -> Option<(Vec<Tail>, Vec<LongString>)> {
    let Payload::Json(payload) = &env.payload else {
        return None;
    };
    let place = place?;
    let pointers = tails
        .iter_mut()
        .map(|t| &mut t.pointer)
        .chain(strings.iter_mut().map(|s| &mut s.pointer));
    match place {
        PayloadSource::Member(key) => {
            let base = pointer::join("", &key);
            for pointer in pointers {
                if !pointer::is_within(pointer, &base) {
                    return None;
                }
                pointer.replace_range(..base.len(), "");
            }
        }
        PayloadSource::RootWithout(key) => {
            // The payload object has the root's members but one: pointers stay.
            let excluded = pointer::join("", key);
            for pointer in pointers {
                if pointer.is_empty() || pointer::is_within(pointer, &excluded) {
                    return None;
                }
            }
        }
    }
    TailIndex::new(payload, &tails)?;
    StringIndex::new(payload, &strings)?;
    Some((tails, strings))
}

/// The MCP result member the payload comes from when it has a text mirror.
pub(super) const STRUCTURED: &str = "structuredContent";

/// Where an MCP result's `structuredContent` is in the input, and whether it is written as
/// the JS writer writes it.
pub(super) struct StructuredMember {
    pub span: std::ops::Range<usize>,
    pub written: bool,
}

/// The one `structuredContent` member of the document `input`, read as `doc`; `None` when
/// it has none, or more than one (the input is not scanned again when `doc` has none: it
/// may be huge).
fn structured_member(input: &[u8], doc: &serde_json::Value) -> Option<StructuredMember> {
    doc.get(STRUCTURED)?;
    let members = crate::json::canonical::root_members(input, crate::json::Dialect::Js)?;
    let mut named = members.iter().filter(|m| m.key == STRUCTURED.as_bytes());
    let (Some(member), None) = (named.next(), named.next()) else {
        return None;
    };
    // Not written as the JS writer writes it: the check stopped there, so where it ends is
    // read by the pull reader.
    let span = match member.written {
        true => member.span.clone(),
        false => root_member_span(input, STRUCTURED)?,
    };
    Some(StructuredMember {
        span,
        written: member.written,
    })
}

/// Where the value of the root member `key` of the document `input` is; `None` when the
/// root is not an object, the member is not there once, or the text is not JSON.
fn root_member_span(input: &[u8], key: &str) -> Option<std::ops::Range<usize>> {
    use crate::json::reader::{Event, Reader};
    let mut reader = Reader::new(input);
    if reader.next().ok()? != Some(Event::BeginObject) {
        return None;
    }
    let mut found = None;
    loop {
        match reader.next().ok()?? {
            Event::Key(name) => {
                let span = reader.skip().ok()??;
                if name.value() == key {
                    if found.is_some() {
                        return None;
                    }
                    found = Some(span);
                }
            }
            Event::EndObject => return found,
            _ => return None,
        }
    }
}

/// What the MCP decoder will find of `structuredContent`'s text mirror, told on the input's
/// text ([`mcp_mirror_from_text`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Mirror {
    /// The last text block is the mirror; in the skimmed document it now holds the text of
    /// the skimmed `structuredContent`, so the decoder finds it as it would in the whole.
    Found,
    /// There is no mirror: the decoder keeps the blocks as they are (the presentation).
    None,
    /// Not known: read the document whole.
    Unknown,
}

/// An MCP result's decoder compares `structuredContent` with its text mirror (the last of
/// one or two plain text blocks), which a skimmed value cannot be: the comparison is made
/// on the text instead. When `input` holds `structuredContent` written as the JS writer
/// writes it (`structured`, see [`structured_member`]), and the mirror's text is those very
/// bytes, the mirror in `doc` (read with skimmed arrays) is replaced by the text of the
/// skimmed value, so the decoder finds the mirror it would have found in the whole
/// document: [`Mirror::Found`]. When the text is another (or the blocks are not one or two
/// plain text blocks), the decoder keeps the blocks: [`Mirror::None`]. The decoder moves
/// `structuredContent` out untouched otherwise, so the payload comes from that member.
///
/// A mirror read as a prefix (in `strings`) is compared on its text in the input, and
/// leaves `strings` once replaced.
pub(super) fn mcp_mirror_from_text(
    input: &[u8],
    doc: &mut serde_json::Value,
    strings: &mut Vec<LongString>,
    structured: Option<StructuredMember>,
) -> Mirror {
    let Some(member) = structured else {
        return Mirror::Unknown;
    };
    // An error result's message is its blocks' text: it must stay theirs.
    let is_error = doc.get("isError").is_some_and(|e| e != false);
    if is_error {
        return Mirror::Unknown;
    }
    let Some(structured) = doc.get(STRUCTURED) else {
        return Mirror::Unknown;
    };
    let skimmed = crate::json::to_string(structured, crate::json::Dialect::Js);
    let Some(blocks) = doc.get_mut("content").and_then(|c| c.as_array_mut()) else {
        return Mirror::Unknown;
    };
    // Plain text blocks only: otherwise the decoder keeps the blocks as they are.
    let plain = |b: &serde_json::Value| {
        b.as_object().is_some_and(|o| {
            o.len() == 2
                && o.get("type").and_then(|t| t.as_str()) == Some("text")
                && o.get("text").is_some_and(|t| t.is_string())
        })
    };
    if !(1..=2).contains(&blocks.len()) || !blocks.iter().all(plain) {
        return Mirror::None;
    }
    let at = format!("/content/{}/text", blocks.len() - 1);
    let long = strings.iter().position(|s| s.pointer == at);
    let Some(serde_json::Value::String(text)) = blocks.last_mut().and_then(|b| b.get_mut("text"))
    else {
        return Mirror::Unknown;
    };
    let text_is = |bytes: &[u8]| match long {
        Some(i) => skim::decodes_to(&input[strings[i].span.clone()], bytes),
        None => text.as_bytes() == bytes,
    };
    // The mirror the decoder compares is the JS writer's text of `structuredContent`: the
    // member's own bytes when it is spelled so, else its text rewritten (Python's `1.0`
    // and `": "`: the whole read would find no mirror unless the text is the rewrite). A
    // text that is the member's own bytes with white space between their tokens (what the
    // Python SDK writes) is not that rewrite, which has none: no rewrite written out then.
    let member_text = &input[member.span.clone()];
    let same = if member.written {
        text_is(member_text)
    } else if text_is(member_text) && has_white_space(member_text) {
        false
    } else {
        let mut rewritten = Vec::new();
        let js = crate::json::Dialect::Js;
        if crate::json::rewrite::rewrite(member_text, js, &mut rewritten).is_err() {
            return Mirror::Unknown;
        }
        text_is(&rewritten)
    };
    if !same {
        return Mirror::None;
    }
    *text = skimmed;
    if let Some(i) = long {
        strings.remove(i);
    }
    Mirror::Found
}

impl SkimmedEnvelope {
    /// An envelope built in code ([`wrap`](crate::convert::wrap)) around a JSON payload
    /// read from `payload` for outputs of at most `limit` bytes, and encoded as `format`:
    /// `env`'s payload is replaced. `None` when nothing was skimmed or the text cannot be
    /// read this way (then parse it whole, which also says what is wrong with it).
    pub fn from_payload(
        mut env: Envelope,
        payload: &[u8],
        format: FormatId,
        limit: usize,
    ) -> Option<SkimmedEnvelope> {
        let doc = skim::read(payload, limit)?;
        if doc.tails.is_empty() {
            return None;
        }
        env.payload = Payload::Json(doc.value);
        Some(SkimmedEnvelope {
            format,
            env,
            tails: doc.tails,
            strings: Vec::new(),
            limit,
        })
    }

    /// The format the document was decoded from.
    pub fn format(&self) -> FormatId {
        self.format
    }

    /// [`fit`](super::fit) into `budget`, whose [room](Budget::room) is the limit it was
    /// read for.
    pub fn fit_within(
        &self,
        format: FormatId,
        budget: Budget<'_>,
        options: &EncodeOptions,
    ) -> Result<Fitted> {
        assert_eq!(budget.room(), self.limit, "read for another limit");
        let payload = payload_value(&self.env.payload);
        let tails = TailIndex::new(&payload, &self.tails).expect("found when decoded");
        let strings = StringIndex::new(&payload, &self.strings).expect("found when decoded");
        let measured = Measured::read_for_cut(&payload, self.limit, &tails, &strings);
        // Every skimmed array and long string is larger than the limit, so the payload is
        // never written whole: every output is a cut, and no cut that fits reaches a
        // skimmed item or the part of a string that was not read.
        assert!(measured.size() > self.limit);
        // Once blocks are replaced by placeholders, what was skimmed in them is gone.
        let remeasure = |payload: &Value, replaced: &[usize]| {
            let outside =
                |pointer: &str| item_index(pointer).is_none_or(|i| !replaced.contains(&i));
            let tails: Vec<Tail> = (self.tails.iter())
                .filter(|t| outside(&t.pointer))
                .cloned()
                .collect();
            let strings: Vec<LongString> = (self.strings.iter())
                .filter(|s| outside(&s.pointer))
                .cloned()
                .collect();
            let tails = TailIndex::new(payload, &tails).expect("found when decoded");
            let strings = StringIndex::new(payload, &strings).expect("found when decoded");
            Measured::read_for_cut(payload, self.limit, &tails, &strings)
        };
        fit_measured(
            &self.env, &payload, &measured, &remeasure, format, budget, options,
        )
    }

    /// The ctxo document with the compat truncation at `options.ctxo_limit` (ctxo's
    /// default when unset), or `None` when that needs skimmed items (the limit is not the
    /// one it was read for, or an array other than the one the truncation cuts was skimmed,
    /// or the payload is written whole): then decode the input whole.
    pub fn encode_ctxo(&self, options: &EncodeOptions) -> Result<Option<Encoded>> {
        let limit = options.ctxo_limit.unwrap_or(formats::ctxo::DEFAULT_LIMIT);
        // The compat truncation knows skimmed arrays only, not strings read as prefixes.
        if limit != self.limit || !self.strings.is_empty() {
            return Ok(None);
        }
        formats::encode_ctxo_skimmed(&self.env, options, &self.tails)
    }
}
