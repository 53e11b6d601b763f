//! An MCP error result whose message is one long text block (a failing command's whole
//! log), read with its text as a prefix (`text_result::error_text_result`), or an error of
//! another format whose message is its one long string (protocol-v1's `error.message`,
//! ctxo's `message`: `text_result::error_message_result`): the envelope
//! is encoded around a stand-in message, and the text takes its place when the output is
//! written ([`Spliced`]), as it is in the input or masked a piece at a time. With a limit,
//! the output either holds the message whole (then it is short, and read whole) or the
//! budget cuts it as its last resort: then only its start is read.
//!
//! What each gives is the whole path's (decode the document, redact, encode or fit): the
//! same bytes, report and errors (`tests/error_text.rs` compares them). It is taken only
//! where the stand-in is read as the text would be: no reader of an envelope looks into an
//! error's message but detection, which a text starting like a JSON document or a
//! tool-envelope-v1 block could sway; such a text takes the whole path. `convert` to
//! tool-envelope-v1, which also writes the text in base64 (its envelope block), splices
//! the base64 of the block's inner document around the text (`spliced::EnvelopeBlock`); `shape`
//! does not splice there, but with a limit it writes any format, tool-envelope-v1
//! included: nothing is spliced then (the message is short and read whole, or cut from its
//! start). The text is written with the target writer's escapes (JS's, Go's or
//! Newtonsoft's).
//!
//! `convert` takes the same way for an MCP result whose payload is one long text block (a
//! plain result: `text_result::text_result`) to the formats that write the payload as that
//! text; to ctxo too, which wraps it under `result` and reports the wrapper's size in its
//! `_meta` (it has nothing to cut in a text): that report is given from the text's size.

use super::budget::{self, Budget};
use super::redact::{Apart, Redaction, redact_envelope_apart};
use super::shaped::Shaped;
use super::spliced::{EnvelopeBlock, Piece, Spliced, escaped_text};
use super::text_redacted::Head;
use super::text_result::{
    PIECE, error_message_result, error_text_result, text_result, undecodable,
};
use crate::error::{Error, Result};
use crate::formats::{self, DecodeOptions, EncodeOptions, Encoded, FormatId};
use crate::json::Dialect;
use crate::json::size::escaped_len;
use crate::json::skim::LongString;
use crate::json::skim::{decode_in_pieces, raw_end_for};
use crate::model::{Envelope, Payload};
use crate::shape::Offloaded;

/// The stand-in message.
const MARK: &str = "\u{0}envelope:message\u{0}";

/// The formats that write an error's message as it is in strings of the document (the
/// text is spliced in with their writer's escapes). Not tool-envelope-v1, which also
/// writes it in base64: only `convert` splices it there.
const TARGETS: [FormatId; 5] = [
    FormatId::Mcp,
    FormatId::Operations,
    FormatId::Ctxo,
    FormatId::ProtocolV1,
    FormatId::ToolResultEnvelope,
];

/// Whether the message can be spliced into `format`'s output (see [`TARGETS`]).
fn spliceable(format: FormatId) -> bool {
    TARGETS.contains(&format)
}

/// An MCP error result of one long text block (or, for `convert`, a result whose payload
/// is one).
struct ErrorText<'a> {
    /// The envelope, its message (or payload) the stand-in.
    env: Envelope,
    /// The text's literal in the input, between its quotes.
    raw: &'a [u8],
    /// The text's compact JS size, quotes included.
    size: usize,
    /// The text's length in bytes, decoded.
    len: usize,
}

/// Reads `input` as an MCP error result of one long text block (see the module's
/// documentation); `None` when it is not one, or its text could sway detection.
fn read<'a>(
    input: &'a [u8],
    from: Option<FormatId>,
    decode: &DecodeOptions,
) -> Option<ErrorText<'a>> {
    let (env, long) = error_text_result(input, from, decode)
        .or_else(|| error_message_result(input, from, decode))?;
    stood_in(input, env, long)
}

/// `env` (read with its message as a prefix, the string `long` of `input`) with the
/// stand-in for its message; `None` when the message could sway detection.
fn stood_in<'a>(input: &'a [u8], mut env: Envelope, long: LongString) -> Option<ErrorText<'a>> {
    let message = &mut env.error.as_mut()?.message;
    stand_in_for(message)?;
    Some(ErrorText {
        env,
        raw: &input[long.span],
        size: long.size,
        len: long.len,
    })
}

/// Reads `input` as an MCP result whose payload is one long plain text block, the text the
/// stand-in; `None` when it is not one, or its text could sway detection.
fn read_text_payload<'a>(
    input: &'a [u8],
    from: Option<FormatId>,
    decode: &DecodeOptions,
) -> Option<ErrorText<'a>> {
    let (mut env, long) = text_result(input, from, decode)?;
    let Payload::Text(text) = &mut env.payload else {
        return None;
    };
    stand_in_for(text)?;
    Some(ErrorText {
        env,
        raw: &input[long.span],
        size: long.size,
        len: long.len,
    })
}

/// Puts the stand-in in `text`'s place; `None` when the text (its prefix) starts like a
/// JSON document or a tool-envelope-v1 block, which detection reads.
fn stand_in_for(text: &mut String) -> Option<()> {
    let start = text.trim_start();
    if start.starts_with(['{', '[']) || start.starts_with("__ENVELOPE") {
        return None;
    }
    *text = MARK.to_string();
    Some(())
}

/// `encoded` (an envelope encoded around the stand-in message by a writer of `dialect`)
/// with the pieces of `stand_ins` in their places; `None` when there is none, or the
/// stand-in was written otherwise.
fn splice<'a>(
    encoded: Encoded,
    stand_ins: &[(Vec<u8>, Piece<'a>)],
    dialect: Dialect,
) -> Option<Spliced<'a>> {
    Spliced::new(encoded.bytes, stand_ins, MARK, encoded.losses, dialect)
}

/// What `envelope unwrap` prints for an MCP error result of one long text block: its error
/// as an object (`operations::error_object`), the text spliced in as the message. `None`:
/// decode the document whole.
pub fn error_object_as_written<'a>(
    input: &'a [u8],
    from: Option<FormatId>,
    decode: &DecodeOptions,
) -> Option<Spliced<'a>> {
    let read = read(input, from, decode)?;
    let object = formats::operations::error_object(read.env.error.as_ref()?);
    let encoded = Encoded {
        bytes: crate::json::to_vec(&object, Dialect::Js),
        losses: Default::default(),
    };
    splice(
        encoded,
        &[(escaped_text(MARK), Piece::Text(read.raw))],
        Dialect::Js,
    )
}

/// [`convert`](crate::convert::convert) of an MCP error result of one long text block to
/// `to`, the text spliced in where the message goes, or of a result whose payload is such a
/// text (see the module's documentation); `Ok(None)`: convert whole.
///
/// # Errors
///
/// The encoder's, and [`Error::InvalidOutput`] when the output would not read back as a
/// valid `to` envelope.
pub fn convert<'a>(
    input: &'a [u8],
    from: Option<FormatId>,
    to: FormatId,
    decode: &DecodeOptions,
    options: &EncodeOptions,
) -> Result<Option<Spliced<'a>>> {
    // Every format writes a text payload as it is (in strings, and tool-envelope-v1 in
    // base64 too) and looks at no more of it than its type (ctxo: and its size).
    let read = read(input, from, decode).or_else(|| read_text_payload(input, from, decode));
    let Some(mut read) = read else {
        return Ok(None);
    };
    if to == FormatId::Ctxo && matches!(read.env.payload, Payload::Text(_)) {
        super::passthrough::report_uncut_wrapped(&mut read.env, read.size);
    }
    let mark = escaped_text(MARK);
    let mut stand_ins = vec![(mark.clone(), Piece::Text(read.raw))];
    // tool-envelope-v1 writes a time in the inner document: the block found and the one
    // written must hold the same.
    let options = &match to {
        FormatId::ToolEnvelopeV1 => EnvelopeBlock::pinned(options),
        _ => options.clone(),
    };
    // tool-envelope-v1 writes the text in its envelope block's inner document too (and an
    // error's message in block 0's rendering, a string like the others).
    let block = match to {
        FormatId::ToolEnvelopeV1 => {
            let piece = Piece::Text(read.raw);
            let Some(block) = EnvelopeBlock::new(&read.env, options, &mark, piece) else {
                return Ok(None);
            };
            stand_ins.push(block.stand_in.clone());
            Some(block)
        }
        _ => None,
    };
    let encoded = formats::encode(to, &read.env, options)?;
    if block.is_some_and(|block| !block.found_once_in(&encoded.bytes)) {
        return Ok(None);
    }
    let light = encoded.bytes.clone();
    let dialect = formats::get(to).dialect();
    let Some(spliced) = splice(encoded, &stand_ins, dialect) else {
        return Ok(None);
    };
    // The output is checked around the stand-in (see the module's documentation).
    crate::validate::check_output_of(&light, to, input)?;
    Ok(Some(spliced))
}

/// What the pipeline asks of a run.
pub(super) struct Run<'r> {
    pub from: Option<FormatId>,
    pub decode: &'r DecodeOptions,
    pub output_format: Option<FormatId>,
    pub budget: Option<Budget<'r>>,
    pub redact: bool,
    pub encode: &'r EncodeOptions,
}

/// The pipeline's run on such a result (whatever the store and the capture limit: it has
/// no payload to offload or refuse): its output spliced, with the run's facts (the output
/// in the splice, not in [`Shaped::bytes`]); `Ok(None)`: run the whole path.
pub(super) fn shape<'a>(input: &'a [u8], run: &Run<'_>) -> Result<Option<(Spliced<'a>, Shaped)>> {
    // With a limit nothing is spliced (the output is the cut's, or the message is short
    // and read whole), so any format is a target; without, only those it splices into.
    let writable = |format: FormatId| run.budget.is_some() || spliceable(format);
    if run.output_format.is_some_and(|to| !writable(to)) {
        return Ok(None);
    }
    let Some(mut read) = read(input, run.from, run.decode) else {
        return Ok(None);
    };
    // Written as it was read, unless told otherwise.
    let format = run
        .output_format
        .or(read.env.origin)
        .unwrap_or(FormatId::Mcp);
    if !writable(format) {
        return Ok(None);
    }
    // With a limit, the message's start is all the output can hold (see `fit`).
    let keep = run.budget.map_or(0, |budget| start_kept(budget.room()));
    // Redacted as the pipeline redacts: the message's rules in its place in the report.
    // One pass masks the text: its rules, size, length and start.
    let (piece, size, start, redactions) = match run.redact {
        false => (Piece::Text(read.raw), read.size, None, Vec::new()),
        true => {
            let Some((rules, masked)) = super::text_redacted::masked_text(read.raw, keep)? else {
                return Ok(None);
            };
            let message: Vec<Redaction> = rules
                .into_iter()
                .map(|rule| Redaction {
                    rule: rule.to_string(),
                    at: "error.message".to_string(),
                })
                .collect();
            let apart = Apart {
                message: Some(message),
                ..Apart::default()
            };
            let redactions = redact_envelope_apart(&mut read.env, apart);
            let start = Start {
                text: masked.prefix,
                len: masked.len,
            };
            (
                Piece::MaskedText(read.raw),
                masked.size,
                Some(start),
                redactions,
            )
        }
    };
    if let Some(budget) = run.budget {
        let start = match start {
            Some(start) => start,
            None => text_start(&read, keep)?,
        };
        return fit(
            input,
            read.env,
            run,
            format,
            budget,
            (size, start),
            redactions,
        );
    }
    spliced_around(input, read, format, piece, redactions, run)
}

/// A shaping run without a limit, store or capture limit on an MCP result whose payload is
/// one long plain text block: the envelope written around a stand-in, the text (masked a
/// piece at a time, with redaction) spliced in its place. `Ok(None)`: run the whole path.
pub(super) fn shape_text_payload<'a>(
    input: &'a [u8],
    run: &Run<'_>,
) -> Result<Option<(Spliced<'a>, Shaped)>> {
    let format = run.output_format.unwrap_or(FormatId::Mcp);
    // ctxo reports on its payload in `_meta` (its size): a stand-in would report itself.
    if !spliceable(format) || format == FormatId::Ctxo || run.budget.is_some() {
        return Ok(None);
    }
    let Some(mut read) = read_text_payload(input, run.from, run.decode) else {
        return Ok(None);
    };
    let (piece, redactions) = match run.redact {
        false => (Piece::Text(read.raw), Vec::new()),
        true => {
            let Some((rules, _)) = super::text_redacted::masked_text(read.raw, 0)? else {
                return Ok(None);
            };
            // As the pipeline redacts: the payload first (the text's rules), then the
            // rest of the envelope around it.
            let mut redactions: Vec<Redaction> = rules
                .into_iter()
                .map(|rule| Redaction {
                    rule: rule.to_string(),
                    at: "payload".to_string(),
                })
                .collect();
            let stand_in = std::mem::replace(&mut read.env.payload, Payload::Text(String::new()));
            redactions.extend(super::redact::redact_envelope(&mut read.env));
            read.env.payload = stand_in;
            (Piece::MaskedText(read.raw), redactions)
        }
    };
    spliced_around(input, read, format, piece, redactions, run)
}

/// `read`'s envelope written as `format` around the stand-in, `piece` in its place; the
/// output is checked as the whole path checks it. `Ok(None)`: the stand-in was written
/// otherwise.
fn spliced_around<'a>(
    input: &'a [u8],
    read: ErrorText<'a>,
    format: FormatId,
    piece: Piece<'a>,
    redactions: Vec<Redaction>,
    run: &Run<'_>,
) -> Result<Option<(Spliced<'a>, Shaped)>> {
    let encoded = formats::encode(format, &read.env, run.encode)?;
    let light = encoded.bytes.clone();
    let losses = encoded.losses.clone();
    let stand_ins = [(escaped_text(MARK), piece)];
    let Some(spliced) = splice(encoded, &stand_ins, formats::get(format).dialect()) else {
        return Ok(None);
    };
    crate::validate::check_output_of(&light, format, input)?;
    let shaped = Shaped {
        bytes: Vec::new(),
        format,
        losses,
        redactions,
        artifacts: Vec::new(),
        offloaded: Offloaded::Inline,
        skimmed: false,
    };
    Ok(Some((spliced, shaped)))
}

/// The first bytes of the message (masked, with redaction) and its whole length.
struct Start {
    text: String,
    len: usize,
}

/// How much of the message's start a run within `room` bytes reads: longer than the
/// room, so no output holds it whole (a character more: up to four bytes).
fn start_kept(room: usize) -> usize {
    room.saturating_add(4)
}

/// The run with a limit, given the message's JS size and its start as long as
/// [`start_kept`]: when the whole output fits, or the smallest one (the message whole,
/// nothing else beside it), the message is short, so the start is all of it: fitted as
/// the whole path fits it. Else the budget cuts the message ([`budget::fit_error_start`]).
fn fit(
    input: &[u8],
    mut env: Envelope,
    run: &Run<'_>,
    format: FormatId,
    budget: Budget<'_>,
    (size, start): (usize, Start),
    redactions: Vec<Redaction>,
) -> Result<Option<(Spliced<'static>, Shaped)>> {
    let limit = budget.room();
    // The stand-in must be where the message is, once.
    let encoded = formats::encode(format, &env, run.encode)?;
    let stand_in = escaped_text(MARK);
    if memchr::memmem::find_iter(&encoded.bytes, &stand_in).count() != 1 {
        return Ok(None);
    }
    let smallest = budget::smallest(&env, format, limit, run.encode)?;
    // The whole output, when it fits, is written as it is (nothing cut, no notice).
    let whole = encoded.bytes.len() - stand_in.len() - 2 + size;
    let minimum = smallest - escaped_len(MARK) + size;
    // The sizes are JS's, and count the message once: another writer escapes at least as
    // much, and tool-envelope-v1 writes the message in base64 too, so both are lower
    // bounds and a cut decided here is one the whole path makes too; otherwise the message
    // is short (its size at most the room), and the start holds it whole.
    let cut = minimum > limit && whole > limit;
    if !cut && start.text.len() != start.len {
        return Ok(None); // Not reached: a message that fits is shorter than its start.
    }
    if let Some(error) = env.error.as_mut() {
        error.message = start.text;
    }
    let fitted = match cut {
        true => budget::fit_error_start(&env, format, budget, run.encode, start.len)?,
        false => budget::fit_within(&env, format, budget, run.encode)?,
    };
    let encoded = fitted.encoded;
    crate::validate::check_output_of(&encoded.bytes, format, input)?;
    let shaped = Shaped {
        bytes: Vec::new(),
        format,
        losses: encoded.losses,
        redactions,
        artifacts: Vec::new(),
        offloaded: Offloaded::Inline,
        skimmed: false,
    };
    Ok(Some((Spliced::whole(encoded.bytes), shaped)))
}

/// The first `keep` bytes of `read`'s text (at a character boundary: up to three less),
/// decoded from only as much of its literal as they need, and its length.
fn text_start(read: &ErrorText<'_>, keep: usize) -> Result<Start> {
    let mut head = Head::new(keep);
    let mut take = |piece: &str| {
        head.push(piece);
        Ok(())
    };
    let end = raw_end_for(read.raw, keep);
    decode_in_pieces(&read.raw[..end], PIECE, &mut take, undecodable).map_err(Error::Store)?;
    Ok(Start {
        text: head.text,
        len: read.len,
    })
}
