//! The payload of a tool-envelope-v1 result read from its envelope block without building
//! it. The block is `__ENVELOPE_V1__:` and the base64 of an inner document
//! `{"payload":P,"meta":{…}}`: the base64 is decoded to the inner document's bytes (¾ of the
//! block's size, kept in a [`Scratch`] the caller owns), and the inner document is read as
//! the pass-through reads any document (`json::skim`): its `payload` member passes through
//! as the bytes it has there, so a 500 MB result costs its input and those bytes, never a
//! tree. The result itself is read with its long texts as prefixes (the block's base64
//! is read from the input, never copied into a string).
//!
//! Only the shape the reference writes for a result is read this way: block 1 a text block
//! whose text, when long, is written without escapes (base64 needs none), no
//! `structuredContent` (a
//! dual emit is compared with the inner document), not an error (its payload is read into
//! the error), no other long text. Anything else, or a block the whole path would refuse
//! (bad base64, invalid UTF-8, another version), goes whole: the same result, or the error.

use std::cell::OnceCell;
use std::ops::Range;
use std::sync::Arc;

use super::offload::PREVIEW_LIMIT;
use super::spliced::Bytes;
use crate::formats::tool_envelope_v1::{decode_parts, split_prefix};
use crate::formats::{DecodeOptions, FormatId, PayloadSource};
use crate::json::Dialect;
use crate::json::skim::{self, Tail};
use crate::model::{Envelope, Payload};
use serde_json::Value;

/// Where a pass-through keeps what it decodes out of its input and reads the payload from
/// (a tool-envelope-v1 result's inner document): it outlives what is read from it. Use one
/// per input: a scratch that holds another input's block makes the read go whole.
#[derive(Debug, Default)]
pub struct Scratch {
    /// The input the block was decoded from (its address and length), and the block.
    block: OnceCell<((usize, usize), Vec<u8>)>,
    /// A payload's text rewritten as a dialect's writer writes it (`json::rewrite`): the
    /// text it was rewritten from (address and length), the dialect, and the text.
    rewritten: OnceCell<((usize, usize), crate::json::Dialect, Vec<u8>)>,
    /// The payload a format spreads over the root (the root without one member): the input
    /// it was copied from (address and length), and the text.
    root_without: OnceCell<((usize, usize), Vec<u8>)>,
}

impl Scratch {
    /// The text of the object `{` `members` `}` (`members`: the text of the root's members
    /// but one, in `input`), copied once and kept; `None` when this scratch holds another
    /// input's.
    pub(crate) fn root_without(&self, input: &[u8], members: &[u8]) -> Option<&[u8]> {
        let key = (input.as_ptr() as usize, input.len());
        let (held, bytes) = self.root_without.get_or_init(|| {
            let mut text = Vec::with_capacity(members.len() + 2);
            text.push(b'{');
            text.extend_from_slice(members);
            text.push(b'}');
            (key, text)
        });
        (*held == key).then_some(bytes.as_slice())
    }

    /// The part of a text this scratch holds at `at` (its address and length); `None` when
    /// no text of this scratch holds it.
    pub(crate) fn part_at(&self, at: (usize, usize)) -> Option<&[u8]> {
        let block = self.block.get().map(|(_, text)| text);
        let rewritten = self.rewritten.get().map(|(_, _, text)| text);
        let root_without = self.root_without.get().map(|(_, text)| text);
        [block, rewritten, root_without]
            .into_iter()
            .flatten()
            .find_map(|text| range_at(text, at).map(|range| &text[range]))
    }

    /// [`part_at`](Self::part_at), as bytes that hold the text it is in: moved out of
    /// the scratch, not copied.
    pub(crate) fn into_part(self, at: (usize, usize)) -> Option<Bytes<'static>> {
        let Scratch {
            block,
            rewritten,
            root_without,
        } = self;
        let block = block.into_inner().map(|(_, text)| text);
        let rewritten = rewritten.into_inner().map(|(_, _, text)| text);
        let root_without = root_without.into_inner().map(|(_, text)| text);
        [block, rewritten, root_without]
            .into_iter()
            .flatten()
            .find_map(|text| {
                let range = range_at(&text, at)?;
                Some(Bytes::Made(Arc::new(text), range))
            })
    }

    /// `text` (a payload's text, in this scratch's input) as `dialect`'s writer writes it,
    /// rewritten once and kept; `None` when the text is not JSON serde_json reads, or this
    /// scratch holds another rewrite (use one scratch per input and target).
    pub(crate) fn rewritten(&self, text: &[u8], dialect: crate::json::Dialect) -> Option<&[u8]> {
        let key = (text.as_ptr() as usize, text.len());
        let (held, held_dialect, bytes) = match self.rewritten.get() {
            Some(done) => done,
            None => {
                let mut out = Vec::with_capacity(text.len());
                crate::json::rewrite::rewrite(text, dialect, &mut out).ok()?;
                self.rewritten.get_or_init(|| (key, dialect, out))
            }
        };
        (*held == key && *held_dialect == dialect).then_some(bytes.as_slice())
    }
}

/// The text at `at` (address and length) as bytes an output may hold: a part of `input`, of
/// the `caller`'s scratch, or of `own` (moved out of it, not copied); `None` when none of
/// them holds it.
pub(crate) fn bytes_at<'a>(
    input: &'a [u8],
    at: (usize, usize),
    caller: Option<&'a Scratch>,
    own: Scratch,
) -> Option<Bytes<'a>> {
    if let Some(range) = range_at(input, at) {
        return Some(Bytes::Input(&input[range]));
    }
    match caller {
        Some(scratch) => scratch.part_at(at).map(Bytes::Input),
        None => own.into_part(at),
    }
}

/// Where the part at `at` (address and length) is in `text`, when it is there.
fn range_at(text: &[u8], at: (usize, usize)) -> Option<Range<usize>> {
    let start = at.0.checked_sub(text.as_ptr() as usize)?;
    (start + at.1 <= text.len()).then_some(start..start + at.1)
}

/// A tool-envelope-v1 result read for its payload (as `passthrough::Read` holds it).
pub(super) struct Read<'a> {
    /// The envelope, its payload's large arrays skimmed (see `tails`).
    pub env: Envelope,
    /// The payload's skimmed arrays, pointers from the payload's root.
    pub tails: Vec<Tail>,
    /// The payload's text in the inner document.
    pub bytes: &'a [u8],
    /// Whether that text is what the writer writes in the dialect asked for.
    pub written: bool,
}

/// The pointer of the envelope block's text.
const BLOCK_TEXT: &str = "/content/1/text";

/// The inner document's member that is the payload.
const PAYLOAD: &str = "payload";

/// Reads the tool-envelope-v1 result `input` for its payload (see the module's
/// documentation), checking its spelling in `dialect` ([`Read::written`]); `None`: read it
/// whole.
pub(super) fn read<'a>(
    input: &[u8],
    scratch: &'a Scratch,
    decode: &DecodeOptions,
    dialect: Dialect,
) -> Option<Read<'a>> {
    let outer = skim::read_checking(input, PREVIEW_LIMIT, None, None, true, &[])?;
    let root = outer.value.as_object()?;
    // Block 1 a text block, as the decoder requires.
    let text_block = outer.value.pointer("/content/1/type") == Some(&Value::from("text"));
    // A dual emit's `structuredContent` (the block's document again) may be skimmed: it is
    // compared with the document on the text below.
    let structured = |pointer: &str| crate::json::pointer::is_within(pointer, "/structuredContent");
    let plain = text_block
        && outer.tails.iter().all(|t| structured(&t.pointer))
        && root.get("isError") != Some(&Value::Bool(true));
    if !plain {
        return None;
    }
    let block_strings: Vec<_> = (outer.strings.iter())
        .filter(|s| !structured(&s.pointer))
        .collect();
    // A long text was read as a prefix: its text is taken from the input.
    let text = match block_strings.as_slice() {
        [] => outer.value.pointer(BLOCK_TEXT)?.as_str()?,
        [long] if long.pointer == BLOCK_TEXT => {
            let raw = &input[long.span.clone()];
            if memchr::memchr(b'\\', raw).is_some() {
                return None;
            }
            std::str::from_utf8(raw).ok()?
        }
        _ => return None,
    };
    let this_input = (input.as_ptr() as usize, input.len());
    let inner = match scratch.block.get() {
        Some((from, inner)) if *from == this_input => inner,
        Some(_) => return None,
        None => {
            let inner = inner_document(text, decode)?;
            &scratch.block.get_or_init(|| (this_input, inner)).1
        }
    };
    let doc = skim::read_checking(inner, PREVIEW_LIMIT, Some(dialect), None, false, &[])?;
    // The decoder's, on the inner document as the whole path parses it.
    let mut env = match root.contains_key("structuredContent") {
        false => decode_parts(root, doc.value).ok()?,
        true => {
            // A dual emit when `structuredContent` is the block's document: proven on
            // their texts (the same tokens read to the same value), else read whole.
            let mut spans = (outer.members.iter()).filter(|(k, _)| k == "structuredContent");
            let (Some((_, span)), None) = (spans.next(), spans.next()) else {
                return None;
            };
            let member = &input[span.clone()];
            if !(member == inner.as_slice() || crate::json::minified::same_minified(member, inner))
            {
                return None;
            }
            let mut root = root.clone();
            root.insert("structuredContent".into(), doc.value.clone());
            decode_parts(&root, doc.value).ok()?
        }
    };
    env.origin = Some(FormatId::ToolEnvelopeV1);
    if !matches!(env.payload, Payload::Json(_)) {
        return None;
    }
    let place = PayloadSource::Member(PAYLOAD.to_string());
    let (tails, strings) =
        super::bounded::in_payload_at(Some(place), &env, doc.tails, doc.strings)?;
    // The inner document's strings are read whole: none is a prefix.
    if !strings.is_empty() {
        return None;
    }
    // Of duplicate keys, the last is the payload (as serde_json keeps it).
    let (member, (_, span)) = doc
        .members
        .iter()
        .enumerate()
        .rev()
        .find(|(_, (key, _))| key == PAYLOAD)?;
    Some(Read {
        env,
        tails,
        bytes: &inner[span.clone()],
        written: doc.written[member],
    })
}

/// The inner document's bytes from the text of the envelope block, as the decoder reads
/// them (`parse_block`); `None` when the decoder would refuse it (it says why).
fn inner_document(text: &str, decode: &DecodeOptions) -> Option<Vec<u8>> {
    let (digits, base64) = split_prefix(text)?;
    if digits.trim_start_matches('0') != "1" {
        return None;
    }
    let bytes = match decode.lenient {
        true => crate::base64::decode_lenient(base64.as_bytes()),
        false => crate::base64::decode_strict(base64.as_bytes()).ok()?,
    };
    // Lenient reading replaces invalid UTF-8: then the bytes are not the document's.
    std::str::from_utf8(&bytes).ok()?;
    Some(bytes)
}
