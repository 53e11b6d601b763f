//! The offload of a payload that passes through unchanged: stored as the bytes it already
//! has in the input, without building it.
//!
//! Offloading reads the document, serializes the payload in the output format's dialect and
//! stores those bytes. When a format moves its payload out of one root member untouched
//! ([`PayloadSource::Member`]) and that member's text is already exactly what the writer
//! would write (`json::canonical::is_written_as`), the serialization is
//! those bytes: they are stored as they are, and the document is read with `json::skim`,
//! which builds only what the summary's preview can show (array items past the preview
//! limit are sized, never built). A 500 MB payload then costs the input and a few
//! kilobytes, not a tree several times its size, and is hashed at the store's speed.
//!
//! Anything else takes the whole path, with the same result: a text form, a format that
//! decodes its payload (mcp, tool-envelope-v1), a payload spread over the root
//! ([`PayloadSource::RootWithout`]), text the writer would spell otherwise, or a skimmed
//! payload that would stay inline. `tests/passthrough.rs` compares both paths byte for byte.

use std::ops::Range;

use super::bounded::{self, Mirror};
pub use super::envelope_block::Scratch;
use super::follow::{Follow, NoVerdictMeansNone};
use super::offload::{
    ArtifactSink, OffloadOptions, Offloaded, PREVIEW_LIMIT, stored, summary_skimmed, too_large,
};
pub use super::spliced::Spliced;
use super::spliced::{Bytes, EnvelopeBlock, Piece, escaped_text};
use crate::error::{Error, Result};
use crate::formats::{self, DecodeOptions, EncodeOptions, FormatId, PayloadSource};
use crate::json::Dialect;
use crate::json::canonical::is_written_as;
use crate::json::minified::decodes_to_minified;
use crate::json::size::escaped_len;
use crate::json::skim::{self, LongString, Tail};
use crate::model::{BudgetReport, Envelope, Payload, Status};
use serde_json::{Value, json};

/// What the pass-through offload did: the format read, the envelope after the offload.
pub(super) struct Passed {
    pub format: FormatId,
    pub env: Envelope,
    pub offloaded: Offloaded,
    /// What was masked when the envelope was redacted on the way (`None`: it was not, the
    /// pipeline redacts it).
    pub redactions: Option<Vec<super::redact::Redaction>>,
    /// Whether the envelope had a presentation (content blocks) before the offload, which
    /// leaves it out: the loss report says so.
    pub had_presentation: bool,
}

/// A document whose payload (JSON, or an MCP result's blocks) is a root member moved into
/// the envelope untouched.
pub(super) struct Read<'a> {
    pub format: FormatId,
    /// The envelope, its payload's large arrays skimmed (see `tails`).
    pub env: Envelope,
    /// The payload's skimmed arrays, pointers from the payload's root.
    pub tails: Vec<Tail>,
    /// The payload's strings read as prefixes, pointers from the payload's root.
    pub strings: Vec<LongString>,
    /// The payload's text in the input.
    pub bytes: &'a [u8],
    /// Whether that text is what the writer writes in the dialect asked for.
    pub written: bool,
    /// The texts of the envelope's presentation (an MCP result's blocks beside its
    /// `structuredContent`, pointers `/content/<i>/text`) read as prefixes: an output that
    /// writes the presentation must take them from the input.
    pub presentation_texts: Vec<LongString>,
}

/// Reads `input` for its payload's bytes; `None` when the payload is not a root member
/// moved into the envelope untouched (or the `payload` of a tool-envelope-v1 result's
/// envelope block, decoded into `scratch`). [`Read::written`] says whether its text is
/// what `want` (else `output_format`'s dialect, else the input format's) writes. `report`
/// follows the skimmed read (see `skim::read_reporting`).
pub(super) fn read_member<'a>(
    input: &'a [u8],
    scratch: &'a Scratch,
    from: Option<FormatId>,
    decode: &DecodeOptions,
    output_format: Option<FormatId>,
    want: Option<Dialect>,
    report: Option<&dyn Fn(Range<usize>)>,
) -> Option<Read<'a>> {
    if formats::identify_text(input).is_some() {
        return None;
    }
    if super::text_result::names(input, from, FormatId::ToolEnvelopeV1) {
        let target = output_format.unwrap_or(FormatId::ToolEnvelopeV1);
        let dialect = want.unwrap_or_else(|| formats::get(target).dialect());
        let block = super::envelope_block::read(input, scratch, decode, dialect)?;
        return Some(Read {
            format: FormatId::ToolEnvelopeV1,
            env: block.env,
            tails: block.tails,
            strings: Vec::new(),
            bytes: block.bytes,
            written: block.written,
            presentation_texts: Vec::new(),
        });
    }
    read_root_member(
        input,
        Some(scratch),
        from,
        decode,
        output_format,
        want,
        report,
    )
}

/// [`read_member`] of a document whose payload is a root member (not in an envelope
/// block): the read borrows the input only.
pub(super) fn read_root_member<'a>(
    input: &'a [u8],
    scratch: Option<&'a Scratch>,
    from: Option<FormatId>,
    decode: &DecodeOptions,
    output_format: Option<FormatId>,
    want: Option<Dialect>,
    report: Option<&dyn Fn(Range<usize>)>,
) -> Option<Read<'a>> {
    // One pass reads the document and checks every root member's spelling in the dialect
    // the output will most likely have. An MCP result's long texts (the mirror of its
    // `structuredContent`) are read as prefixes: they are compared on the input's text.
    let guessed = want.unwrap_or_else(|| likely_dialect(input, from, output_format));
    let mcp = super::text_result::names_mcp(input, from);
    // A result's `_meta` is sized, not built: it is read from its text (see below).
    let doc = skim::read_checking(input, PREVIEW_LIMIT, Some(guessed), report, true, &[META])?;
    let skim::Skimmed {
        mut value,
        tails,
        mut strings,
        members,
        written,
    } = doc;
    // Whether the blocks, kept as they are beside `structuredContent`, hold texts read as
    // prefixes (then the envelope's presentation is not whole).
    let mut presentation_texts = Vec::new();
    let mut no_mirror = false;
    if mcp {
        let structured = structured_member(input, &members, &written, guessed);
        let member = structured.as_ref().map(|m| &input[m.span.clone()]);
        let mirror = bounded::mcp_mirror_from_text(input, &mut value, &mut strings, structured);
        // Detection parses the last text block (a ctxo document travels there): a text
        // read as a prefix must not start like one, unless it was found to be the mirror,
        // or is `structuredContent`'s text indented, which holds no ctxo document.
        let indented = |s: &LongString| {
            member.is_some_and(|member| {
                !crate::formats::ctxo::may_hold_ctxo_document(member)
                    && decodes_to_minified(&input[s.span.clone()], member)
            })
        };
        let sways_detection = |s: &LongString| {
            bounded::may_hold_document(&value, s) && !(mirror == Mirror::None && indented(s))
        };
        if strings.iter().any(sways_detection) {
            return None;
        }
        let all_read = tails.is_empty() && strings.is_empty();
        if value.get(bounded::STRUCTURED).is_some() {
            match mirror {
                Mirror::Found => {}
                // Proven on the text: the decoder keeps the blocks, which hold no part of
                // the payload (their long texts stay prefixes).
                Mirror::None => {
                    no_mirror = true;
                    let in_blocks = |s: &LongString| s.pointer.starts_with("/content/");
                    let (held, rest) = strings.drain(..).partition(in_blocks);
                    (presentation_texts, strings) = (held, rest);
                }
                // Else the decoder would compare the blocks with a skimmed
                // `structuredContent`, or a text read as a prefix with it.
                Mirror::Unknown if all_read => {}
                Mirror::Unknown => return None,
            }
        }
    }
    // The root `_meta` (the last of a repeated key), as its text: detection reads the names
    // of its members, the decoders keep it as text (MCP) or build it (the others).
    let meta = (members.iter().rev())
        .find(|(key, _)| key == META)
        .map(|(_, span)| &input[span.clone()]);
    let mut read = formats::meta_text::Read::from_parts(value, meta);
    let format = match from {
        Some(f) => f,
        None => read.detect().ok()?,
    };
    if mcp != (format == FormatId::Mcp) {
        return None;
    }
    let mut env = read.decode(format, decode).ok()?;
    // The decoder found no mirror either (no comparison of a skimmed value said equal).
    if no_mirror && env.presentation.is_none() {
        return None;
    }
    let (place, tails, mut strings) = match (format, &env.payload) {
        // The decoder moves `structuredContent` out as it is; what else it does with it
        // (compare it with the blocks) was made sure of above.
        (FormatId::Mcp, Payload::Json(_)) => {
            let place = PayloadSource::Member(bounded::STRUCTURED.to_string());
            let (tails, strings) =
                bounded::in_payload_at(Some(place.clone()), &env, tails, strings)?;
            (place, tails, strings)
        }
        // Blocks are `content` moved out as it is (no skimmed array in them).
        (FormatId::Mcp, Payload::Blocks(_)) if tails.is_empty() => {
            let (tails, strings) = bounded::in_mcp_content(&env, strings)?;
            (PayloadSource::Member("content".to_string()), tails, strings)
        }
        (FormatId::Mcp, _) => return None,
        _ => {
            let place = formats::get(format).payload_source(&env);
            let (tails, strings) = bounded::in_payload_at(place.clone(), &env, tails, strings)?;
            (place?, tails, strings)
        }
    };
    // A payload that is one long string is previewed from its whole text: decoded whole,
    // as a read without prefixes gives it (an MCP result's goes whole: its mirror was
    // compared on prefixes).
    if let Some(at) = strings.iter().position(|s| s.pointer.is_empty()) {
        if mcp {
            return None;
        }
        let (whole, _) = crate::json::unescape::unescape(&input[strings[at].span.clone()])?;
        env.payload = Payload::Json(Value::String(whole));
        strings.remove(at);
    }
    let dialect = want.unwrap_or_else(|| formats::get(output_format.unwrap_or(format)).dialect());
    let (bytes, written) = match place {
        // The root without one member: its other members, copied once.
        PayloadSource::RootWithout(left_out) => {
            let members = root_members_but(input, &members, left_out)?;
            let bytes = scratch?.root_without(input, members)?;
            (bytes, is_written_as(bytes, dialect))
        }
        PayloadSource::Member(key) => {
            // Of duplicate keys, the last is the payload (serde_json keeps the last value).
            let (member, (_, span)) = members
                .iter()
                .enumerate()
                .rev()
                .find(|(_, (k, _))| *k == key)?;
            let bytes = &input[span.clone()];
            // A wrong guess costs a second pass over the payload, never a wrong answer.
            let written = match guessed == dialect {
                true => written[member],
                false => is_written_as(bytes, dialect),
            };
            (bytes, written)
        }
    };
    if !matches!(env.payload, Payload::Json(_) | Payload::Blocks(_)) {
        return None;
    }
    Some(Read {
        format,
        env,
        tails,
        strings,
        bytes,
        written,
        presentation_texts,
    })
}

/// [`bounded::decode`], a payload member the pass-through reads asked for first where that
/// read would be whole (a tool-envelope-v1 result, whose payload is in its envelope block; a
/// long text detection would read, which may be an indented mirror): what the pipeline
/// reads for a limit.
///
/// # Errors
///
/// As [`bounded::decode`].
pub fn decode_bounded(
    input: &[u8],
    from: Option<FormatId>,
    options: &DecodeOptions,
    limit: usize,
) -> Result<bounded::Decoded> {
    let member = || member_for_cut(input, from, options, limit);
    bounded::decode_with(input, from, options, limit, &member)
}

/// [`bounded::decode`] of a document whose JSON payload is a member [`read_member`] reads
/// (a root member, or the `payload` of a tool-envelope-v1 result's envelope block), its
/// text read for the limit; `None`: any other document. Blocks the read keeps beside the
/// payload with long texts (an indented mirror) are written only when the payload is not
/// cut: then the document is read whole.
fn member_for_cut(
    input: &[u8],
    from: Option<FormatId>,
    options: &DecodeOptions,
    limit: usize,
) -> Option<bounded::Decoded> {
    let scratch = Scratch::default();
    let want = Some(Dialect::Js);
    let read = read_member(input, &scratch, from, options, None, want, None)?;
    if !matches!(read.env.payload, Payload::Json(_)) {
        return None;
    }
    let held = !read.presentation_texts.is_empty();
    let decoded = bounded::with_payload_text(read.format, read.env, read.bytes, limit)?;
    match decoded {
        bounded::Decoded::Whole(..) if held => None,
        decoded => Some(decoded),
    }
}

/// The one `structuredContent` member of an MCP result read as `members` (their spelling
/// checked in `checked`), and whether it is written as the JS writer writes it; `None` when
/// there is none or more than one.
fn structured_member(
    input: &[u8],
    members: &[(String, Range<usize>)],
    written: &[bool],
    checked: Dialect,
) -> Option<bounded::StructuredMember> {
    let mut named = members
        .iter()
        .enumerate()
        .filter(|(_, (key, _))| key == bounded::STRUCTURED);
    let (Some((i, (_, span))), None) = (named.next(), named.next()) else {
        return None;
    };
    let written = match checked {
        Dialect::Js => written[i],
        _ => is_written_as(&input[span.clone()], Dialect::Js),
    };
    Some(bounded::StructuredMember {
        span: span.clone(),
        written,
    })
}

/// The dialect the payload will be checked in: the output format's, else the input
/// format's, else that of the format the top of the document names (protocol-v1's keys come
/// first), else JS (most formats'). A wrong guess costs a second pass, never a wrong answer.
fn likely_dialect(
    input: &[u8],
    from: Option<FormatId>,
    output_format: Option<FormatId>,
) -> Dialect {
    if let Some(format) = output_format.or(from) {
        return formats::get(format).dialect();
    }
    let top = &input[..input.len().min(64 << 10)];
    crate::json::prefix::parse_prefix(top)
        .and_then(|doc| formats::identify(&doc).map(|(format, _)| format.dialect()))
        .unwrap_or(Dialect::Js)
}

/// The payload of `input` as compact `dialect` JSON (what `envelope unwrap` prints), from
/// its text in the input when it is a root member of the document (of a tool-envelope-v1
/// result, its envelope block's `payload`, decoded into `scratch`: one per input): the
/// text itself when it is written so already, else that text rewritten
/// ([`json::rewrite`](crate::json::rewrite)), never the payload built. `None`: decode the
/// document and write its payload; so for a shaped output (it carries a budget marker),
/// whose payload may hold the notice the cut wrote beside what it kept (`shape::kept`).
pub(crate) fn payload_text<'a>(
    input: &'a [u8],
    scratch: &'a Scratch,
    from: Option<FormatId>,
    decode: &DecodeOptions,
    dialect: Dialect,
) -> Option<&'a [u8]> {
    let read = read_member(input, scratch, from, decode, None, Some(dialect), None)
        .filter(|read| super::kept::marker(&read.env).is_none())?;
    match read.written {
        true => Some(read.bytes),
        false => scratch.rewritten(read.bytes, dialect),
    }
}

/// The payload stage of [`offload`](super::offload::offload) on the document `input`,
/// its payload stored as the bytes it has there; `Ok(None)` when that is not certain to
/// give what the whole path gives (then nothing was stored).
///
/// On a large input whose sink stores artifacts a piece at a time, the payload is stored
/// while the document is read (see [`follow`](super::follow)).
pub(super) fn offload(
    input: &[u8],
    from: Option<FormatId>,
    decode: &DecodeOptions,
    output_format: Option<FormatId>,
    options: &OffloadOptions,
    sink: &mut dyn ArtifactSink,
) -> Result<Option<Passed>> {
    let follow = Follow::default();
    let scratch = Scratch::default();
    let writer = match input.len() >= FOLLOW_FROM {
        true => sink.begin(),
        false => None,
    };
    let (read, streamed) = std::thread::scope(|scope| {
        let storing = writer.map(|writer| scope.spawn(|| follow.store(input, writer, KIND)));
        // Whatever happens below, the storing thread gets a verdict and ends.
        let _verdict = NoVerdictMeansNone(&follow);
        let report = |read: Range<usize>| follow.report(read);
        let read = read_member(
            input,
            &scratch,
            from,
            decode,
            output_format,
            None,
            Some(&report),
        );
        // (A payload decoded out of the input, or rewritten, is not followed: it is stored
        // once read.)
        let stored = read
            .as_ref()
            .filter(|read| read.written && to_store(read.bytes.len(), options))
            .and_then(|read| offset_in(input, read.bytes));
        follow.decide(stored);
        let streamed = storing.and_then(|storing| match storing.join() {
            Ok(streamed) => streamed,
            Err(panic) => std::panic::resume_unwind(panic),
        });
        (read, streamed)
    });
    let Some(read) = read else {
        return Ok(None);
    };
    if read.written {
        return offload_bytes(read, streamed, options, sink);
    }
    // Spelled otherwise than the writer spells it: the artifact's bytes are its text
    // rewritten ([`json::rewrite`](crate::json::rewrite)), never the payload built.
    let dialect = formats::get(output_format.unwrap_or(read.format)).dialect();
    let Some(bytes) = scratch.rewritten(read.bytes, dialect) else {
        return Ok(None);
    };
    let read = Read {
        bytes,
        written: true,
        ..read
    };
    offload_bytes(read, None, options, sink)
}

/// The payload stage of the offload on `read`, its payload being `read.bytes` (the
/// artifact's bytes: the payload written in the output's dialect) and its skimmed arrays
/// `read.tails`; `streamed`: those bytes, stored already. `Ok(None)` when the payload stays
/// inline but was skimmed (it is needed whole).
pub(super) fn offload_bytes(
    read: Read<'_>,
    streamed: Option<std::result::Result<crate::model::ArtifactRef, crate::error::SinkError>>,
    options: &OffloadOptions,
    sink: &mut dyn ArtifactSink,
) -> Result<Option<Passed>> {
    let Read {
        format,
        mut env,
        tails,
        strings,
        bytes,
        presentation_texts,
        ..
    } = read;
    let size = bytes.len();
    let had_presentation = env.presentation.is_some();
    let passed = |env, offloaded| Passed {
        format,
        env,
        offloaded,
        redactions: None,
        had_presentation,
    };
    if let Some(max) = options.max_capture.filter(|&max| size > max) {
        let offloaded = too_large(&mut env, size, max);
        return Ok(Some(passed(env, offloaded)));
    }
    if size <= options.inline_threshold {
        if !(tails.is_empty() && strings.is_empty() && presentation_texts.is_empty()) {
            // The payload stays inline, and the blocks: they are needed whole.
            return Ok(None);
        }
        return Ok(Some(passed(env, Offloaded::Inline)));
    }
    let artifact = match streamed {
        Some(stored) => stored,
        None => sink.put(bytes, KIND),
    };
    let artifact = artifact.map_err(Error::Store)?;
    let summary = summary_skimmed(&env, KIND, size, &tails, &strings);
    let offloaded = stored(&mut env, artifact, summary, size);
    Ok(Some(passed(env, offloaded)))
}

/// The media type of a payload stored as the JSON text it has in the input.
const KIND: &str = "application/json";

/// Inputs from this size on have their payload stored while they are read, when the sink
/// can (below it, the thread costs more than it saves).
const FOLLOW_FROM: usize = 16 << 20;

/// Whether a payload of `size` bytes goes to the store: over the inline threshold, not over
/// the capture limit.
fn to_store(size: usize, options: &OffloadOptions) -> bool {
    size > options.inline_threshold && options.max_capture.is_none_or(|max| size <= max)
}

/// Where `part` is in `whole`, when it is a slice of it.
fn offset_in(whole: &[u8], part: &[u8]) -> Option<Range<usize>> {
    let start = (part.as_ptr() as usize).checked_sub(whole.as_ptr() as usize)?;
    (start + part.len() <= whole.len()).then_some(start..start + part.len())
}

/// The index of the block whose text `pointer` (`/content/<i>/text`) names.
pub(super) fn block_index(pointer: &str) -> Option<usize> {
    pointer
        .strip_prefix("/content/")?
        .strip_suffix("/text")?
        .parse()
        .ok()
}

/// The text of the block `pointer` (`/content/<i>/text`) names among `blocks`.
fn blocks_text<'b>(blocks: &'b mut [Value], pointer: &str) -> Option<&'b mut String> {
    match blocks.get_mut(block_index(pointer)?)?.get_mut("text")? {
        Value::String(text) => Some(text),
        _ => None,
    }
}

/// `{"type":"text","text":…}` and nothing else.
pub(super) fn is_plain_text_block(block: &Value) -> bool {
    block.as_object().is_some_and(|b| {
        b.len() == 2
            && b.get("type") == Some(&json!("text"))
            && b.get("text").is_some_and(Value::is_string)
    })
}

/// The text of the root object's members but `left_out` (`"a":1,"b":2` of
/// `{"a":1,"b":2,"_meta":{}}`): `left_out` must be there once, first or last (where
/// writers put ctxo's `_meta` and tool-result-envelope's `__envelope`), beside at least
/// one other member; `None` otherwise.
fn root_members_but<'i>(
    input: &'i [u8],
    members: &[(String, Range<usize>)],
    left_out: &str,
) -> Option<&'i [u8]> {
    let mut named = (members.iter().enumerate())
        .filter(|(_, (k, _))| k == left_out)
        .map(|(i, _)| i);
    let (Some(at), None) = (named.next(), named.next()) else {
        return None;
    };
    if members.len() < 2 {
        return None;
    }
    let open = input.iter().position(|&b| b == b'{')?;
    let close = input.iter().rposition(|&b| b == b'}')?;
    if at + 1 == members.len() {
        // Last: from after the root's `{` to the end of the member before it.
        let end = members[at - 1].1.end;
        Some(&input[open + 1..end])
    } else if at == 0 {
        // First: from after the comma that follows it to the root's `}`.
        let after = members[0].1.end;
        let comma = after + input[after..].iter().position(|&b| b == b',')?;
        Some(&input[comma + 1..close])
    } else {
        None
    }
}

/// Formats whose encoder writes the payload as JSON values in its dialect (or, in the JS
/// dialect, as the text of a string: a mirror) and looks at no more of it than its type:
/// protocol-v1 (`data`), operations (`data`, and an MCP result's `structuredContent` and
/// mirror in `meta`), tool-result-envelope (its payload key), mcp (`structuredContent` and
/// its mirror); ctxo, for an object payload it does not cut ([`ctxo_as_written`]); and
/// tool-envelope-v1, whose envelope block is the base64 of an inner document holding the
/// payload (that text is a stand-in of its own, [`Piece::Base64`]).
const SPLICED_TARGETS: [FormatId; 6] = [
    FormatId::ProtocolV1,
    FormatId::Operations,
    FormatId::ToolResultEnvelope,
    FormatId::Mcp,
    FormatId::Ctxo,
    FormatId::ToolEnvelopeV1,
];

/// The key of a result's `_meta`.
const META: &str = "_meta";

/// A stand-in of the payload's type that no document holds twice by chance.
const MARK: &str = "\u{0}envelope:passthrough\u{0}";

/// [`convert`](crate::convert::convert) of `input` to `to` without building the payload,
/// when it is a root member of the input already written as `to`'s writer writes it (or
/// the `payload` of a tool-envelope-v1 result's envelope block, decoded into `scratch`: one
/// per input): the envelope is encoded around a stand-in of the payload's type, and the
/// payload's bytes take its places ([`Spliced`]). `Ok(None)`: convert whole (the same
/// bytes, or the error).
///
/// # Errors
///
/// The encoder's errors.
///
/// What [`Document::convert`](crate::convert::Document::convert) tries first (its
/// [`read_whole`](crate::convert::Written::read_whole) is then `false`).
pub(crate) fn convert_as_written<'a>(
    input: &'a [u8],
    scratch: &'a Scratch,
    from: Option<FormatId>,
    to: FormatId,
    decode: &DecodeOptions,
    options: &EncodeOptions,
) -> Result<Option<Spliced<'a>>> {
    let spliced = spliced_in(input, Some(scratch), from, Some(to), decode, options)?;
    Ok(spliced.map(|(_, spliced)| spliced))
}

/// [`convert_as_written`] to `to`, or (`None`) to the input's own format (what a shaping
/// run without a stage writes), with the format written. Without a `scratch` of the
/// caller's, what the read decodes or copies (a tool-envelope-v1 result's inner document,
/// a payload spread over the root) is kept in one of its own, which the output then holds.
pub(crate) fn spliced_in<'a>(
    input: &'a [u8],
    scratch: Option<&'a Scratch>,
    from: Option<FormatId>,
    to: Option<FormatId>,
    decode: &DecodeOptions,
    options: &EncodeOptions,
) -> Result<Option<(FormatId, Spliced<'a>)>> {
    if to.is_some_and(|to| !SPLICED_TARGETS.contains(&to)) {
        return Ok(None);
    }
    let own = Scratch::default();
    let Some(read) = read_member(input, scratch.unwrap_or(&own), from, decode, to, None, None)
    else {
        return Ok(None);
    };
    let to = to.unwrap_or(read.format);
    if !SPLICED_TARGETS.contains(&to) {
        return Ok(None);
    }
    // With an artifact, encoders read the payload (its summary names the artifact's kind
    // and size in MCP's `resource_link`): a stand-in would not say them.
    if read.env.artifact.is_some() {
        return Ok(None);
    }
    if !read.written && matches!(read.env.payload, Payload::Blocks(_)) {
        let spliced = blocks_apart(input, read, to, options)?;
        return Ok(spliced.map(|spliced| (to, spliced)));
    }
    let Read {
        env,
        presentation_texts,
        bytes,
        written,
        ..
    } = read;
    // Where the payload's text is: in the input, in the caller's scratch, or in ours.
    let at = (bytes.as_ptr() as usize, bytes.len());
    let Some(held) = super::envelope_block::bytes_at(input, at, scratch, own) else {
        return Ok(None);
    };
    // A payload spelled otherwise (Python's `1.0`, keys out of the writer's order): its
    // text rewritten as the target writes it, never built; the output holds the rewrite.
    let bytes = match written {
        true => held,
        false => {
            let mut rewritten = Vec::with_capacity(held.len());
            let dialect = formats::get(to).dialect();
            if crate::json::rewrite::rewrite(&held, dialect, &mut rewritten).is_err() {
                return Ok(None);
            }
            Bytes::made(rewritten)
        }
    };
    let spliced = splice_payload(input, env, bytes, &presentation_texts, to, options)?;
    Ok(spliced.map(|spliced| (to, spliced)))
}

/// The envelope `env` written as `to` around a stand-in of its payload, whose place the
/// payload's text `bytes` (written as `to`'s writer writes it) takes; the blocks' long
/// texts `presentation_texts` from the input. `Ok(None)`: write it whole.
pub(super) fn splice_payload<'a>(
    input: &'a [u8],
    mut env: Envelope,
    bytes: Bytes<'a>,
    presentation_texts: &[LongString],
    to: FormatId,
    options: &EncodeOptions,
) -> Result<Option<Spliced<'a>>> {
    // ctxo has no place for blocks kept beside the payload (a loss, whatever their texts):
    // their long texts are not needed.
    if to == FormatId::Ctxo {
        if let Payload::Json(Value::Object(_)) = env.payload {
            return ctxo_as_written(input, env, bytes, options);
        }
        report_uncut_wrapped(&mut env, bytes.len());
    }
    let stand_in = match &env.payload {
        Payload::Json(Value::Object(_)) => Payload::Json(json!({ MARK: 0 })),
        Payload::Json(Value::Array(_)) => Payload::Json(json!([MARK])),
        Payload::Json(Value::String(_)) => Payload::Json(json!(MARK)),
        // As many plain text blocks (what an encoder may tell blocks by), each a mark.
        Payload::Blocks(blocks) if blocks.iter().all(is_plain_text_block) => {
            Payload::Blocks(vec![json!({"type": "text", "text": MARK}); blocks.len()])
        }
        _ => return Ok(None),
    };
    let dialect = formats::get(to).dialect();
    let written = crate::json::to_vec(&stand_in.json(), dialect);
    env.payload = stand_in;
    let mut stand_ins = vec![(written.clone(), Piece::Json(bytes.clone()))];
    // A text mirror holds the payload's JS text: only a JS writer's payload is that text.
    if dialect == Dialect::Js {
        let text = String::from_utf8_lossy(&written);
        stand_ins.push((escaped_text(&text), Piece::JsonInString(bytes.clone())));
    }
    // The long texts of the blocks kept beside the payload, from the input.
    if !presentation_texts.is_empty() {
        let blocks = env.presentation.as_deref_mut().unwrap_or_default();
        if texts_as_stand_ins(blocks, presentation_texts, "", input, &mut stand_ins).is_none() {
            return Ok(None);
        }
    }
    // A large result `_meta` is written from its text, not copied into the encoded output.
    if matches!(to, FormatId::Mcp | FormatId::Operations)
        && let Some(stand_in) = super::meta_apart::meta_as_piece(&mut env, &format!("{MARK}meta"))
    {
        stand_ins.push(stand_in);
    }
    // tool-envelope-v1 writes a time in the inner document: the block found and the one
    // written must hold the same.
    let options = &match to {
        FormatId::ToolEnvelopeV1 => EnvelopeBlock::pinned(options),
        _ => options.clone(),
    };
    let block = match to {
        FormatId::ToolEnvelopeV1 => {
            let Some(block) = EnvelopeBlock::new(&env, options, &written, Piece::Json(bytes))
            else {
                return Ok(None);
            };
            stand_ins.push(block.stand_in.clone());
            Some(block)
        }
        _ => None,
    };
    let encoded = formats::encode(to, &env, options)?;
    if block.is_some_and(|block| !block.found_once_in(&encoded.bytes)) {
        return Ok(None);
    }
    Ok(checked_splice(encoded, &stand_ins, to, input))
}

/// `encoded` (`to`'s writer's output around stand-ins) with the pieces of `stand_ins` in
/// their places, when it passes the output check: its envelope is the real one, and no
/// rule of these formats reads into a payload but to compare it with its mirror, which
/// holds the same stand-in. `None`: one the whole path refuses goes whole, which says why.
pub(super) fn checked_splice<'a>(
    encoded: crate::formats::Encoded,
    stand_ins: &[(Vec<u8>, Piece<'a>)],
    to: FormatId,
    input: &[u8],
) -> Option<Spliced<'a>> {
    crate::validate::check_output_of(&encoded.bytes, to, input).ok()?;
    let dialect = formats::get(to).dialect();
    Spliced::new(encoded.bytes, stand_ins, MARK, encoded.losses, dialect)
}

/// [`convert_as_written`] of an MCP result whose blocks (its payload) are not written as
/// `to`'s writer writes them (Go's sorts each block's keys and escapes U+2028 and U+2029):
/// the blocks are encoded, each long text a stand-in of its own whose place the text takes,
/// written with the target writer's escapes. `Ok(None)`: any other payload, or a target
/// that writes the payload as one piece (ctxo, tool-envelope-v1, both JS's).
fn blocks_apart<'a>(
    input: &'a [u8],
    read: Read<'_>,
    to: FormatId,
    options: &EncodeOptions,
) -> Result<Option<Spliced<'a>>> {
    let Read {
        mut env,
        strings,
        presentation_texts,
        ..
    } = read;
    let one_piece = matches!(to, FormatId::Ctxo | FormatId::ToolEnvelopeV1);
    let Payload::Blocks(blocks) = &mut env.payload else {
        return Ok(None);
    };
    let mut stand_ins = Vec::new();
    if one_piece
        || !presentation_texts.is_empty()
        || texts_as_stand_ins(blocks, &strings, "/content", input, &mut stand_ins).is_none()
    {
        return Ok(None);
    }
    let encoded = formats::encode(to, &env, options)?;
    Ok(checked_splice(encoded, &stand_ins, to, input))
}

/// Puts a stand-in of its own in the place of each long text of `blocks` (`texts`,
/// pointers `base` + `/<i>/text`), and the input's text for it in `stand_ins`; `None`
/// when one is not a block's text.
fn texts_as_stand_ins<'a>(
    blocks: &mut [Value],
    texts: &[LongString],
    base: &str,
    input: &'a [u8],
    stand_ins: &mut Vec<(Vec<u8>, Piece<'a>)>,
) -> Option<()> {
    texts_as_pieces(blocks, texts, base, input, Piece::Text, stand_ins)
}

/// [`texts_as_stand_ins`], each text written as `piece` makes it of the input's text (a
/// masked one: [`Piece::MaskedText`]).
pub(super) fn texts_as_pieces<'a>(
    blocks: &mut [Value],
    texts: &[LongString],
    base: &str,
    input: &'a [u8],
    piece: fn(&'a [u8]) -> Piece<'a>,
    stand_ins: &mut Vec<(Vec<u8>, Piece<'a>)>,
) -> Option<()> {
    for (n, long) in texts.iter().enumerate() {
        let text = blocks_text(blocks, &format!("{base}{}", long.pointer))?;
        let stand_in = format!("\u{0}envelope:passthrough:text {n}\u{0}");
        *text = stand_in.clone();
        stand_ins.push((escaped_text(&stand_in), piece(&input[long.span.clone()])));
    }
    Some(())
}

/// Gives `env` the report ctxo writes in its `_meta` for a payload it does not cut, whose
/// compact JS size is `total_bytes`, where ctxo writes one and `env` has none of its own.
pub(super) fn report_uncut(env: &mut Envelope, total_bytes: usize) {
    if env.budget.is_none() && !env.layout.without_meta {
        env.budget = Some(BudgetReport {
            total_items: 0,
            returned_items: 0,
            truncated: false,
            total_bytes: total_bytes as u64,
            tokens: None,
            hint: None,
            cuts: Vec::new(),
        });
    }
}

/// [`report_uncut`] for a payload that is not an object, of compact JS size `size`: ctxo
/// wraps it as `{"result":…}`, a key it does not cut, and reports the wrapper's size.
pub(super) fn report_uncut_wrapped(env: &mut Envelope, size: usize) {
    report_uncut(env, 3 + escaped_len("result") + size);
}

/// [`convert_as_written`] to ctxo: ctxo writes an object payload's members and then its
/// `_meta`, whose report on a payload it does not cut (one without a truncatable key:
/// nothing the reference may cut) says its compact size. The envelope is encoded around a
/// one-member stand-in, with that report as its own, and the payload's members take the
/// member's place. The output is checked as the document of the payload's skimmed value
/// (its top-level members whole: all that ctxo's rules and detection read of such a
/// payload); `Ok(None)` when that check fails, or the payload is of another kind.
fn ctxo_as_written<'a>(
    input: &'a [u8],
    mut env: Envelope,
    bytes: Bytes<'a>,
    options: &EncodeOptions,
) -> Result<Option<Spliced<'a>>> {
    let Payload::Json(Value::Object(members)) = &env.payload else {
        return Ok(None);
    };
    let reserved_at = env.layout.reserved_key_index;
    // A report of the envelope's own (a ctxo document's `_meta`, read) is written as it is:
    // nothing is cut, whatever the payload's keys. Without one, the reference's truncation
    // may cut an array under a key it truncates.
    let truncatable = members
        .keys()
        .any(|key| formats::ctxo::hint_for(key).is_some());
    let uncut = !members.is_empty()
        && !members.contains_key(formats::ctxo::META)
        && (env.budget.is_some() || !truncatable)
        // `_meta` first or last: where it is beside the stand-in too.
        && reserved_at.is_none_or(|at| at == 0 || at >= members.len())
        // An artifact's `_meta` is remade from the payload; an error has no payload.
        && env.artifact.is_none()
        && env.error.is_none()
        && env.status != Status::Error;
    if !uncut {
        return Ok(None);
    }
    // The whole path's report: nothing cut, of the payload's compact JS size (`bytes` are
    // written as the JS writer writes them).
    report_uncut(&mut env, bytes.len());
    // ctxo's rules count the items of a truncatable array, which the skimmed value does
    // not hold: such an output is checked as it is written (below).
    if !truncatable {
        let light = formats::encode(FormatId::Ctxo, &env, options)?;
        if crate::validate::check_output_of(&light.bytes, FormatId::Ctxo, input).is_err() {
            return Ok(None);
        }
    }
    env.payload = Payload::Json(json!({ MARK: 0 }));
    let encoded = formats::encode(FormatId::Ctxo, &env, options)?;
    let mut member = crate::json::to_vec(&json!(MARK), Dialect::Js);
    member.extend_from_slice(b":0");
    if !(bytes.len() >= 2 && bytes.starts_with(b"{") && bytes.ends_with(b"}")) {
        return Ok(None);
    }
    let inner = bytes.part(1..bytes.len() - 1);
    let spliced = Spliced::new(
        encoded.bytes,
        &[(member, Piece::Json(inner))],
        MARK,
        encoded.losses,
        Dialect::Js,
    );
    match spliced {
        Some(spliced) if truncatable && !checked_as_written(&spliced, input) => Ok(None),
        spliced => Ok(spliced),
    }
}

/// Whether a ctxo `output` read from `input` passes
/// [`check_output_of`](crate::validate::check_output_of). An output that is its input, byte
/// for byte, breaks no rule its input does not: it passes when the input is detected as
/// ctxo (compared a piece at a time; detection reads the root's keys). Any other output is
/// written out and checked whole (its payload abridged by the validator).
fn checked_as_written(output: &Spliced<'_>, input: &[u8]) -> bool {
    if output.is(input) {
        return crate::detect::detect(input).is_ok_and(|found| found.format == FormatId::Ctxo);
    }
    crate::validate::check_output_of(&output.to_vec(), FormatId::Ctxo, input).is_ok()
}

#[cfg(test)]
mod tests {
    use super::{Scratch, convert_as_written};
    use crate::{DecodeOptions, EncodeOptions, FormatId};

    /// A scratch holds the envelope block of the input it was first used with: used for
    /// another input, the conversion goes whole, never mixes the two. (A `Document` has
    /// one scratch for its one input; this is the guard behind that.)
    #[test]
    fn a_scratch_of_another_input_makes_the_conversion_whole() {
        let result = |payload: &str| {
            let inner = format!(r#"{{"payload":{payload},"meta":{{"tool":"t","version":1}}}}"#);
            let block = crate::base64::encode(inner.as_bytes());
            format!(
                r#"{{"content":[{{"type":"text","text":"Rows."}},{{"type":"text","text":"__ENVELOPE_V1__:{block}"}}]}}"#
            )
        };
        let (first, second) = (result(r#"{"a":1}"#), result(r#"{"b":2}"#));
        let decode = DecodeOptions::default();
        let options = EncodeOptions {
            now: Some("2026-07-04T00:00:00Z".into()),
            ..EncodeOptions::default()
        };
        let scratch = Scratch::default();
        let convert = |doc: &'_ str| {
            convert_as_written(
                doc.as_bytes(),
                &scratch,
                None,
                FormatId::Operations,
                &decode,
                &options,
            )
            .unwrap()
            .map(|spliced| String::from_utf8(spliced.to_vec()).unwrap())
        };
        let converted = convert(&first).expect("the first input is spliced");
        assert!(converted.contains(r#""data":{"a":1}"#), "{converted}");
        assert_eq!(convert(&second), None);
        // The same input again reads the block it decoded.
        assert_eq!(convert(&first), Some(converted));
    }
}
