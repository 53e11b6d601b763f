//! The hard byte budget: the whole encoded envelope, in its target format, is at most
//! `limit` bytes — payload, metadata and markers included — or there is no output at all.
//!
//! The payload is measured once ([`Measured`]); each attempt cuts it to a payload budget,
//! encodes the (small) result and checks the real size; the payload budget shrinks by what
//! the attempt overshot until it fits. Encoding is what decides, so format overheads (base64,
//! the MCP text mirror, markers that grow with the cuts) are always accounted for.

use std::borrow::Cow;

use serde_json::Value;

use envelope_tokens::Tokenizer;

use super::cut::Measured;
use crate::error::{Error, Result};
use crate::formats::{self, EncodeOptions, Encoded, FormatId};
use crate::json::size::escaped_len;
use crate::model::{
    BudgetReport, Cut, CutUnit, Envelope, Extension, JsonText, LossReport, Payload, Source, Status,
    TokenReport,
};

/// An envelope fitted to a budget.
#[derive(Debug)]
pub struct Fitted {
    /// The output: at most the limit in bytes, and what the format lost of it.
    pub encoded: Encoded,
    /// The envelope that was encoded (payload cut, budget report set), when anything was cut.
    pub envelope: Option<Envelope>,
}

/// At most this many attempts before falling back to the minimal envelope.
const MAX_ATTEMPTS: usize = 64;

/// How a caller restates what a cut says: the proxy names the cuts as pointers into the
/// whole result it stored and composes a longer notice (the facts of the cut value, the
/// call that reads on). Given to the budget ([`Budget::notice`]), the restated notice and
/// pointers are what each attempt encodes and measures, so the output fits with them, by
/// construction, in one run.
pub trait Notice {
    /// The cuts as the output names them (`cuts` name pointers into the payload, `kept` is
    /// the payload as cut) and the notice that says what was cut, for an output that fits
    /// `budget` (its [names](Budget::names) say the limits, its [scale](Budget::scale) how
    /// many bytes they are about).
    fn restate(&self, cuts: &[Cut], kept: &Payload, budget: &Budget<'_>) -> (Vec<Cut>, String);
}

/// What a cut must fit: `limit` bytes, of which the caller keeps `reserve` for what it
/// appends after the cut (the proxy's link to the stored result), and who words the notice;
/// and, with [`tokens`](Budget::tokens), at most so many tokens as well. Both limits hold.
#[derive(Clone, Copy)]
pub struct Budget<'n> {
    /// The limit the output and what the caller appends keep together, and the one notices
    /// name; [`Budget::NO_BYTE_LIMIT`] when only tokens are limited.
    pub limit: usize,
    /// Bytes of the limit the output leaves to the caller.
    pub reserve: usize,
    /// Restates the cuts and the notice; `None`: the library's own ([`hint`]).
    pub notice: Option<&'n dyn Notice>,
    /// A limit in tokens, beside the byte limit.
    pub tokens: Option<TokenLimit<'n>>,
    /// How the output reaches the reader: as it is, or as the text of a JSON string in
    /// the caller's document. Both limits hold for what is sent.
    pub carried: Carried,
}

/// How a budget's output reaches the reader, and so what its limits measure.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Carried {
    /// As it is: its bytes and their tokens.
    #[default]
    AsIs,
    /// As the text of a JSON string in the caller's document, escaped as the JS writer
    /// escapes it (the proxy's `emit`: a document in a text block), without the quotes:
    /// each `"` and `\` of the output takes two bytes there. The caller's own bytes
    /// around it are its [reserve](Budget::reserve).
    InString,
}

/// A limit in tokens: the whole output as the model's tokenizer counts it (its JSON text,
/// the bytes the model is sent) is at most `limit` tokens, of which `reserve` are the
/// caller's, for what it appends after the cut.
#[derive(Clone, Copy, Debug)]
pub struct TokenLimit<'t> {
    /// The most tokens the output and what the caller appends may take.
    pub limit: usize,
    /// Tokens of the limit the output leaves to the caller.
    pub reserve: usize,
    /// The tokenizer that counts them.
    pub tokenizer: &'t Tokenizer,
}

impl TokenLimit<'_> {
    /// The tokens the output may take.
    pub fn room(&self) -> usize {
        self.limit.saturating_sub(self.reserve)
    }
}

/// The most bytes a token is taken to hold on average when a budget counts tokens alone:
/// its output is cut for at most this many bytes a token, so a huge input is never read
/// whole for a token limit (reading for 256 bytes a token, more than any token of the
/// OpenAI encodings holds, made a limit of 16,384 tokens read 4 MB of every input, 8 times
/// the cost of the byte limit of the same output). Text and JSON hold 2 to 5 bytes a token; only output made mostly of
/// long runs of one character holds more, and then keeps less than its tokens allow. The
/// token count always decides: the limit holds either way.
const BYTES_PER_TOKEN_AT_MOST: usize = 16;

/// The bytes a token holds on average in JSON and prose (3.5 to 4.5 for the OpenAI
/// encodings): where a token budget needs a size in bytes only to estimate (the first cut
/// tried, how long a notice may be).
pub const BYTES_PER_TOKEN_ESTIMATE: usize = 4;

impl<'n> Budget<'n> {
    /// The [`limit`](Budget::limit) of a budget that limits tokens only.
    pub const NO_BYTE_LIMIT: usize = usize::MAX;

    /// `limit` bytes, all of them the output's, with the library's notice.
    pub fn of(limit: usize) -> Budget<'static> {
        Budget {
            limit,
            reserve: 0,
            notice: None,
            tokens: None,
            carried: Carried::AsIs,
        }
    }

    /// `limit` tokens counted by `tokenizer` (and no byte limit), all of them the
    /// output's, with the library's notice.
    pub fn of_tokens(limit: usize, tokenizer: &'n Tokenizer) -> Budget<'n> {
        Budget {
            limit: Budget::NO_BYTE_LIMIT,
            reserve: 0,
            notice: None,
            tokens: Some(TokenLimit {
                limit,
                reserve: 0,
                tokenizer,
            }),
            carried: Carried::AsIs,
        }
    }

    /// The bytes the output may take: the byte limit's room, and never more than the
    /// token room can hold.
    pub fn room(&self) -> usize {
        let bytes = self.limit.saturating_sub(self.reserve);
        match &self.tokens {
            Some(tokens) => bytes.min(tokens.room().saturating_mul(BYTES_PER_TOKEN_AT_MOST)),
            None => bytes,
        }
    }

    /// The limit in bytes, or for a budget in tokens alone an estimate of the bytes its
    /// tokens hold ([`BYTES_PER_TOKEN_ESTIMATE`]): what sizes a notice or a first cut.
    pub fn scale(&self) -> usize {
        let estimate = self
            .tokens
            .map(|t| t.limit.saturating_mul(BYTES_PER_TOKEN_ESTIMATE));
        match estimate {
            Some(estimate) => self.limit.min(estimate),
            None => self.limit,
        }
    }

    /// The limits as a notice names them: `16384 bytes`, `4000 tokens (o200k_base)`, or
    /// both joined by `and`.
    pub fn names(&self) -> String {
        let bytes = (self.limit != Budget::NO_BYTE_LIMIT).then(|| format!("{} bytes", self.limit));
        let tokens = self
            .tokens
            .map(|t| format!("{} tokens ({})", t.limit, t.tokenizer.name()));
        match (bytes, tokens) {
            (Some(bytes), Some(tokens)) => format!("{bytes} and {tokens}"),
            (Some(one), None) | (None, Some(one)) => one,
            (None, None) => "no limit".to_string(),
        }
    }

    /// How far `output` is from fitting, in bytes of the [room](Budget::room): its size,
    /// or, when the budget counts tokens and that is larger, its tokens scaled so that the
    /// token room is the room (`tokens × room ÷ token room`, rounded up). The output fits
    /// exactly when this is at most the room (the whole output and the smallest envelope are
    /// judged by it; cuts by `fit_cut`'s rounds, one count each).
    fn cost(&self, output: &[u8]) -> usize {
        let room = self.room();
        let len = self.sent_len(output);
        let Some(tokens) = self.tokens else {
            return len;
        };
        let count = self.sent_tokens(&tokens, output);
        let scaled = match tokens.room() {
            0 if count > 0 => usize::MAX,
            0 => 0,
            token_room => {
                let scaled = (count as u128 * room as u128).div_ceil(token_room as u128);
                usize::try_from(scaled).unwrap_or(usize::MAX)
            }
        };
        len.max(scaled)
    }

    /// The bytes `output` takes as it is sent ([`Carried`]).
    fn sent_len(&self, output: &[u8]) -> usize {
        match self.carried {
            Carried::AsIs => output.len(),
            Carried::InString => escaped_len(&String::from_utf8_lossy(output)) - 2,
        }
    }

    /// The tokens `output` takes as it is sent ([`Carried`]), counted by `tokens`'
    /// tokenizer.
    fn sent_tokens(&self, tokens: &TokenLimit<'_>, output: &[u8]) -> usize {
        let text = String::from_utf8_lossy(output);
        match self.carried {
            Carried::AsIs => tokens.tokenizer.count(&text),
            Carried::InString => {
                let quoted = crate::json::to_vec(
                    &Value::String(text.into_owned()),
                    crate::json::Dialect::Js,
                );
                tokens
                    .tokenizer
                    .count(&String::from_utf8_lossy(&quoted[1..quoted.len() - 1]))
            }
        }
    }

    /// The bytes a character of a JSON string the output writes takes as it is sent: its
    /// JS escape, escaped again when the output is itself in a string (`\"` → `\\\"`).
    fn char_len(&self, c: char) -> usize {
        let once = escaped_len(c.encode_utf8(&mut [0; 4])) - 2;
        match self.carried {
            Carried::AsIs => once,
            // An escape's backslash is escaped again, and so is a quote or backslash it
            // escapes; other characters are written as they are.
            Carried::InString if once > c.len_utf8() => {
                once + 1 + usize::from(matches!(c, '"' | '\\'))
            }
            Carried::InString => once,
        }
    }

    /// The cuts as the output names them and the notice.
    fn restate(&self, cuts: &[Cut], kept: &Payload) -> (Vec<Cut>, String) {
        match self.notice {
            Some(notice) => notice.restate(cuts, kept, self),
            None => (cuts.to_vec(), hint(cuts, &self.names())),
        }
    }

    /// What a budget report says of a token limit.
    fn token_report(&self) -> Option<TokenReport> {
        self.tokens.map(|t| TokenReport {
            limit: t.limit as u64,
            tokenizer: t.tokenizer.name().to_string(),
        })
    }
}

impl std::fmt::Debug for Budget<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Budget")
            .field("limit", &self.limit)
            .field("reserve", &self.reserve)
            .field("notice", &self.notice.is_some())
            .field("tokens", &self.tokens)
            .field("carried", &self.carried)
            .finish()
    }
}

/// Encodes `env` as `format` in at most `limit` bytes.
///
/// Fails with [`Error::BudgetTooSmall`] only when not even a minimal envelope (no payload, a
/// marker saying so) fits; it never returns more than `limit` bytes.
pub fn fit(
    env: &Envelope,
    format: FormatId,
    limit: usize,
    options: &EncodeOptions,
) -> Result<Fitted> {
    fit_within(env, format, Budget::of(limit), options)
}

/// [`fit`] into a [`Budget`]: the output takes at most its [room](Budget::room), and its
/// notice is the budget's.
pub fn fit_within(
    env: &Envelope,
    format: FormatId,
    budget: Budget<'_>,
    options: &EncodeOptions,
) -> Result<Fitted> {
    let payload = payload_value(&env.payload);
    let measured = Measured::bounded(&payload, budget.room());
    let remeasure = |payload: &Value, _: &[usize]| Measured::bounded(payload, budget.room());
    fit_measured(
        env, &payload, &measured, &remeasure, format, budget, options,
    )
}

/// The size of the smallest output a cut of `env` into `room` bytes can have (the
/// `minimum` of [`Error::BudgetTooSmall`]): no payload, and no member beside it that
/// takes more than its share of that room.
pub(crate) fn smallest(
    env: &Envelope,
    format: FormatId,
    room: usize,
    options: &EncodeOptions,
) -> Result<usize> {
    let base = Base::of(env, room);
    let total_bytes = crate::json::size::js_size(&payload_value(&env.payload)) as u64;
    // Bytes only: the callers size a message around this smallest envelope.
    match minimal(
        (env, &base),
        format,
        Budget::of(0),
        options,
        total_bytes,
        Message::Uncut,
    ) {
        Err(Error::BudgetTooSmall { minimum, .. }) => Ok(minimum),
        Err(e) => Err(e),
        // Nothing fits in no bytes: an output here is the encoder's bug.
        Ok(fitted) => Ok(fitted.encoded.bytes.len()),
    }
}

/// [`fit_within`] of an error too long to fit whole, given only the start of its message
/// (`message_total` bytes in all; the start longer than the budget's room) and no
/// payload: the output the whole message would give, without holding it. The caller knows
/// that nothing less than a cut of the message fits (the whole envelope, and the smallest
/// one, are over): then [`fit_within`] comes to [`minimal`]'s cut of the message too.
pub(crate) fn fit_error_start(
    env: &Envelope,
    format: FormatId,
    budget: Budget<'_>,
    options: &EncodeOptions,
    message_total: usize,
) -> Result<Fitted> {
    let total_bytes = crate::json::size::js_size(&payload_value(&env.payload)) as u64;
    cut_of_message_start(env, format, budget, options, total_bytes, message_total)
}

/// [`minimal`]'s cut of the message of `env`, which holds only its start.
fn cut_of_message_start(
    env: &Envelope,
    format: FormatId,
    budget: Budget<'_>,
    options: &EncodeOptions,
    total_bytes: u64,
    message_total: usize,
) -> Result<Fitted> {
    let base = Base::of(env, budget.room().min(budget.scale()));
    minimal(
        (env, &base),
        format,
        budget,
        options,
        total_bytes,
        Message::Start {
            total: message_total,
        },
    )
}

/// An error without a payload whose message alone is over `room`, copied with only the
/// start of its message (a character more than the room), the length of the message
/// beside it: every format writes an error's message at least once, escaped at least as
/// JS escapes it, so nothing fits but a cut of the message (what the search for a cut comes
/// to, only later, holding copies of the message). `None`: any other envelope.
fn with_message_start(env: &Envelope, room: usize) -> Option<(Envelope, usize)> {
    let message = &env.error.as_ref()?.message;
    let over = env.status == Status::Error
        && matches!(env.payload, Payload::None)
        && message.len() > room
        && escaped_len(message) - 2 > room;
    if !over {
        return None;
    }
    let mut keep = (room + 4).min(message.len());
    while !message.is_char_boundary(keep) {
        keep -= 1;
    }
    let mut start = env.clone_with_message_start(keep);
    // What a cut reports of the envelope it cut: whether it had content blocks.
    start.presentation = env.presentation.as_ref().map(|_| Vec::new());
    Some((start, message.len()))
}

/// [`fit`] of an envelope not needed afterwards: a text payload over the limit is moved
/// into the value the cut reads instead of copied, so a huge text is held once. `env`'s
/// text is left empty then (the cut reads only its payload's kind from `env`).
pub(crate) fn fit_taking_text(
    env: &mut Envelope,
    format: FormatId,
    budget: Budget<'_>,
    options: &EncodeOptions,
) -> Result<Fitted> {
    let Payload::Text(text) = &mut env.payload else {
        return fit_within(env, format, budget, options);
    };
    let payload = Value::String(std::mem::take(text));
    let measured = Measured::bounded(&payload, budget.room());
    if measured.size() <= budget.room() {
        // It may be written whole: the envelope needs its text back.
        if let Value::String(text) = payload {
            env.payload = Payload::Text(text);
        }
        return fit_within(env, format, budget, options);
    }
    // A text payload has no blocks to replace: it is never measured again.
    let remeasure = |payload: &Value, _: &[usize]| Measured::bounded(payload, budget.room());
    fit_measured(
        env, &payload, &measured, &remeasure, format, budget, options,
    )
}

/// Measures a payload again once the content blocks at the given indices were replaced by
/// placeholders (a skimmed read forgets what it knew of the replaced blocks).
pub(crate) type Remeasure<'a> = &'a dyn Fn(&Value, &[usize]) -> Measured;

/// [`fit`] with the payload measured for the budget's room already.
///
/// A content block that is not text (an image, audio, an embedded resource, a link) is
/// never shortened: half an image is no image. When the best cut would shorten one, the
/// largest such block is replaced by a text block saying what it was
/// (`[image block (image/png, 48213 bytes) left out to fit the limit]`) and the payload is
/// cut again, at most once per block. Each replacement is a cut of the report: the block at
/// `/N` kept 0 of its bytes.
pub(crate) fn fit_measured(
    env: &Envelope,
    payload: &Value,
    measured: &Measured,
    remeasure: Remeasure<'_>,
    format: FormatId,
    within: Budget<'_>,
    options: &EncodeOptions,
) -> Result<Fitted> {
    if let Some((start, message_total)) = with_message_start(env, within.room()) {
        let total_bytes = measured.size() as u64;
        return cut_of_message_start(&start, format, within, options, total_bytes, message_total);
    }
    fit_by_search(env, payload, measured, remeasure, format, within, options)
}

/// [`fit_measured`] by the search for a cut, whatever the envelope.
fn fit_by_search(
    env: &Envelope,
    payload: &Value,
    measured: &Measured,
    remeasure: Remeasure<'_>,
    format: FormatId,
    within: Budget<'_>,
    options: &EncodeOptions,
) -> Result<Fitted> {
    let total_bytes = measured.size() as u64;
    // (A budget in tokens alone is about its tokens' bytes, not the most they could hold.)
    let base = Base::of(env, within.room().min(within.scale()));
    let cut = |payload: &Value, measured: &Measured, replaced: &[Cut]| {
        fit_cut(
            (env, &base),
            (payload, measured, total_bytes),
            replaced,
            format,
            within,
            options,
        )
    };
    let (mut fitted, mut cuts) = cut(payload, measured, &[])?;
    // Content blocks (MCP's, or an operations result's): no other payload has any.
    if !matches!(env.payload, Payload::Blocks(_)) {
        return Ok(fitted);
    }
    let mut shortened = shortened_block(payload, &cuts, measured);
    if shortened.is_none() {
        return Ok(fitted);
    }
    // The payload with placeholders for the blocks replaced so far.
    let mut current = payload.clone();
    let mut replaced: Vec<Cut> = Vec::new();
    while let Some((index, size)) = shortened {
        current[index] = placeholder(&current[index], size);
        replaced.push(Cut {
            pointer: format!("/{index}"),
            kept: 0,
            total: size as u64,
            unit: CutUnit::Bytes,
        });
        let indices: Vec<usize> = replaced
            .iter()
            .filter_map(|c| item_index(&c.pointer))
            .collect();
        let measured = remeasure(&current, &indices);
        (fitted, cuts) = cut(&current, &measured, &replaced)?;
        shortened = shortened_block(&current, &cuts, &measured);
    }
    Ok(fitted)
}

/// Whether a content block is one the cut may shorten: a text block, or no block at all
/// (only objects whose `type` names another kind are kept whole).
fn is_cuttable_block(block: &Value) -> bool {
    match block.get("type").and_then(Value::as_str) {
        Some(kind) => kind == "text",
        None => true,
    }
}

/// The index and measured size of the largest non-text block of `blocks` that `cuts`
/// shorten.
fn shortened_block(blocks: &Value, cuts: &[Cut], measured: &Measured) -> Option<(usize, usize)> {
    let items = blocks.as_array()?;
    let mut shortened: Vec<usize> = cuts
        .iter()
        .filter_map(|c| item_index(&c.pointer))
        .filter(|&i| items.get(i).is_some_and(|b| !is_cuttable_block(b)))
        .collect();
    shortened.sort_unstable();
    shortened.dedup();
    shortened
        .into_iter()
        .map(|i| {
            let size = measured
                .item_size(blocks, i)
                .unwrap_or_else(|| crate::json::size::js_size(&items[i]));
            (i, size)
        })
        .max_by_key(|&(i, size)| (size, std::cmp::Reverse(i)))
}

/// The index of the item of an array a pointer into it leads into (`/3/data` → 3).
pub(super) fn item_index(pointer: &str) -> Option<usize> {
    let rest = pointer.strip_prefix('/')?;
    rest.split('/').next()?.parse().ok()
}

/// The text block that stands for `block` (`size` bytes) once it is left out.
fn placeholder(block: &Value, size: usize) -> Value {
    let kind = block.get("type").and_then(Value::as_str).unwrap_or("?");
    let mime = block
        .get("mimeType")
        .or_else(|| block.get("resource").and_then(|r| r.get("mimeType")))
        .and_then(Value::as_str);
    let what = match mime {
        Some(mime) => format!("{mime}, {size} bytes"),
        None => format!("{size} bytes"),
    };
    serde_json::json!({
        "type": "text",
        "text": format!("[{kind} block ({what}) left out to fit the limit]"),
    })
}

/// A member beside the payload (an extension, an MCP result's `_meta`) larger than this
/// share of the room is left out of every cut, and reported: the payload, what the caller
/// asked for, keeps the room. (Kept, a 2 MB `_meta` made every limit fail.)
const SIDE_SHARE: usize = 2;

/// What every cut of an envelope is built on: the envelope without its payload and without
/// the members beside it that take more than 1/[`SIDE_SHARE`] of the room each (format
/// identifiers stay), and the words the notice adds about those
/// (`Left out beside the payload: _meta (2000160 bytes).`).
struct Base {
    envelope: Envelope,
    left_out: Option<String>,
}

impl Base {
    fn of(env: &Envelope, room: usize) -> Base {
        let mut envelope = env.clone_without_payload();
        let mut left_out = Vec::new();
        let mut oversized = |name: &str, size: usize| {
            let over = size > room / SIDE_SHARE;
            if over {
                left_out.push(format!("{name} ({size} bytes)"));
            }
            over
        };
        envelope.extensions.retain(|ext| {
            is_identifier(ext) || !oversized(&ext.pointer, crate::json::size::js_size(&ext.value))
        });
        if let Some(Source::Mcp { result_meta }) = &mut envelope.source
            && result_meta
                .as_ref()
                .is_some_and(|meta| oversized("_meta", meta.len()))
        {
            *result_meta = None;
        }
        let left_out = (!left_out.is_empty())
            .then(|| format!(" Left out beside the payload: {}.", left_out.join(", ")));
        Base { envelope, left_out }
    }
}

/// An MCP result's own `_meta`.
fn mcp_meta(env: &Envelope) -> Option<&JsonText> {
    match &env.source {
        Some(Source::Mcp { result_meta }) => result_meta.as_ref(),
        _ => None,
    }
}

/// The cut of a measured payload (and its whole size) that fits `within`, and the cuts it
/// made; `replaced`: blocks already left out, reported as cuts too (and the payload is then
/// never written whole: the report must say what was replaced). The envelope is written
/// whole when it fits; a cut is built on `base`.
fn fit_cut(
    (env, base): (&Envelope, &Base),
    (payload, measured, total_bytes): (&Value, &Measured, u64),
    replaced: &[Cut],
    format: FormatId,
    within: Budget<'_>,
    options: &EncodeOptions,
) -> Result<(Fitted, Vec<Cut>)> {
    // Every format writes the payload at least once, so its compact JS size is a lower bound
    // of the output (up to number spellings: Newtonsoft writes 1e15 as 1E+15): the full
    // encoding is only tried when it might fit. It fits when its bytes and its tokens do
    // (`Budget::cost`).
    // (A member beside the payload that `base` leaves out is kept when all of it fits.) An
    // MCP result's `_meta` is written whole by the formats that carry it: counted too.
    let beside = match format {
        FormatId::Mcp | FormatId::Operations => mcp_meta(env).map_or(0, JsonText::len),
        _ => 0,
    };
    if measured.size().saturating_add(beside) <= within.room() && replaced.is_empty() {
        let full = formats::encode(format, env, options)?;
        if within.cost(&full.bytes) <= within.room() {
            let fitted = Fitted {
                encoded: full,
                envelope: None,
            };
            return Ok((fitted, Vec::new()));
        }
    }
    let cut_in = |room: usize| {
        search_cut(
            (env, base),
            (payload, measured, total_bytes),
            replaced,
            format,
            (within, room),
            options,
        )
    };
    let Some(tokens) = within.tokens else {
        return cut_in(within.room());
    };
    // In tokens: counting every attempt of the search made a token limit cost 4-12 times a
    // byte limit. The search runs in bytes, in a room the token count moves: each result is
    // counted once, and the room scaled by how far its count is from the token room, kept
    // above the largest room whose cut fitted and below the size of the smallest cut that
    // did not, until a cut uses at least 95% of the tokens or the two meet.
    let token_room = tokens.room();
    let mut room = within.room().min(within.scale()).max(1);
    let (mut fits_at, mut fails_at) = (0, within.room().saturating_add(1));
    let mut best: Option<(usize, (Fitted, Vec<Cut>))> = None;
    for _ in 0..MAX_TOKEN_ROUNDS {
        let fitted = cut_in(room)?;
        let len = within.sent_len(&fitted.0.encoded.bytes);
        let count = within.sent_tokens(&tokens, &fitted.0.encoded.bytes);
        let fits = count <= token_room && len <= within.room();
        if fits {
            fits_at = room;
            if best.as_ref().is_none_or(|(most, _)| count > *most) {
                best = Some((count, fitted));
            }
            if count * 100 >= token_room * 95 {
                break;
            }
        } else {
            // Any room that holds this cut gives it (or a larger one) again.
            fails_at = fails_at.min(len);
        }
        if fits_at + 1 >= fails_at {
            break;
        }
        // The room the count predicts, a little under it (tokens do not scale exactly with
        // bytes: aiming at the limit itself lands over it half the time, one round more). Once a room fitted and a cut did not, within the middle half
        // between them: the count of a small cut (the notice and marker, no payload) says
        // little of a larger one, and jumps to the far ends could swing for ever.
        let scaled = (room as u128 * token_room as u128 / count.max(1) as u128) as usize;
        let scaled = if fits {
            scaled - scaled / 128
        } else {
            scaled - scaled / 64
        };
        let quarter = match fits_at > 0 && fails_at <= within.room() {
            true => (fails_at - fits_at) / 4,
            false => 0,
        };
        let next = scaled.clamp(fits_at + 1 + quarter, fails_at - 1 - quarter);
        room = if next == room {
            (fits_at + fails_at) / 2
        } else {
            next
        };
    }
    match best {
        Some((_, fitted)) => Ok(fitted),
        // No room tried gave a cut within the tokens: the smallest envelope, or the error.
        None => smallest_envelope((env, base), format, within, options, total_bytes),
    }
}

/// When no cut of the payload fits: [`minimal`]'s envelope (its message cut as the last
/// resort), which cuts nothing of the payload's inside, or its error.
fn smallest_envelope(
    (env, base): (&Envelope, &Base),
    format: FormatId,
    within: Budget<'_>,
    options: &EncodeOptions,
    total_bytes: u64,
) -> Result<(Fitted, Vec<Cut>)> {
    let fitted = minimal(
        (env, base),
        format,
        within,
        options,
        total_bytes,
        Message::Whole,
    )?;
    Ok((fitted, Vec::new()))
}

/// At most this many searches in bytes for a cut within a token limit ([`fit_cut`]).
const MAX_TOKEN_ROUNDS: usize = 12;

/// The best cut of the payload whose encoding takes at most `room` bytes (its notice and
/// report those of `within`): the search of [`fit_cut`], in bytes. When no cut fits, the
/// smallest envelope that fits `within` (or the error that none does).
fn search_cut(
    (env, base): (&Envelope, &Base),
    (payload, measured, total_bytes): (&Value, &Measured, u64),
    replaced: &[Cut],
    format: FormatId,
    (within, limit): (Budget<'_>, usize),
    options: &EncodeOptions,
) -> Result<(Fitted, Vec<Cut>)> {
    // The payload cut at a level, and its cuts: the replaced blocks the cut keeps first.
    let cut_at = |level: usize| {
        let mut cuts = Vec::new();
        let cut = measured.cut(payload, level, "", &mut cuts);
        let kept_blocks = cut.as_array().map_or(0, Vec::len);
        let kept_replaced = replaced
            .iter()
            .filter(|c| item_index(&c.pointer).is_some_and(|i| i < kept_blocks))
            .cloned();
        let cuts: Vec<Cut> = kept_replaced.chain(cuts).collect();
        (cut, cuts)
    };
    // Its envelope encoded (dropped once written).
    let encode_at = |level: usize| {
        let (cut, cuts) = cut_at(level);
        let candidate = cut_envelope((env, base), cut, &cuts, total_bytes, within);
        formats::encode(format, &candidate, options)
    };

    // First the estimates, until a level fits; then a search between the largest level
    // that fits and the smallest that does not, until they are neighbours. Stopping at the
    // first fit made the result depend on how the estimates fell: a larger limit could keep
    // less, or nothing.
    // The best fit's level and output: its envelope is built again at the end, not kept
    // beside each later attempt's (a cut's tree is many times its text).
    let mut best: Option<(usize, Encoded)> = None;
    // (payload size, encoded size) of the best fit and of the last attempt that did not fit.
    let mut fit_point = (0, 0);
    let mut fail_point: Option<(usize, usize)> = None;
    let mut fails_at = measured.full_level() + 1;
    let mut budget = measured.size().min(limit);
    // (payload size, encoded size) of the last attempt: with two points the overhead and
    // the expansion of the format (base64, the MCP mirror) are estimated as a line.
    let mut previous: Option<(usize, usize)> = None;
    for attempt in 0..MAX_ATTEMPTS {
        let level = match &best {
            Some((fit, ..)) if fit + 1 >= fails_at => break,
            // The level the line through the two bounds predicts, every third step the
            // middle (the line may be off: markers grow with the cuts).
            Some((fit, ..)) => fail_point
                .filter(|_| attempt % 3 != 0)
                .and_then(|fail| interpolate(fit_point, fail, limit))
                .and_then(|budget| measured.level_for(payload, budget))
                .map_or(fit + (fails_at - fit) / 2, |guess| {
                    guess.clamp(fit + 1, fails_at - 1)
                }),
            // Below the smallest cut's size, level 0 is still worth one encoding: the
            // estimate is only an estimate.
            None => measured
                .level_for(payload, budget)
                .unwrap_or(0)
                .min(fails_at.saturating_sub(1)),
        };
        // A payload over the limit on its own (or beyond the measured bound) cannot fit.
        let size = measured.size_at(payload, level);
        if size > limit {
            fails_at = level;
            if level == 0 {
                break;
            }
            continue;
        }
        let encoded = encode_at(level)?;
        let written = within.sent_len(&encoded.bytes);
        if written <= limit {
            best = Some((level, encoded));
            fit_point = (size, written);
            continue;
        }
        fails_at = level;
        fail_point = Some((size, written));
        if best.is_none() {
            if level == 0 {
                break;
            }
            budget = next_budget(previous, (size, written), limit);
            previous = Some((size, written));
        }
    }
    // The written size is not monotonic in the level: a cut writes an entry for every
    // array or string it shortens (protocol-v1's `meta.budget.cuts`, the notice), so a
    // shallower cut can overflow where a deeper one fits, and a search that ends with
    // nothing kept (no fit, or level 0) would leave the payload out at a limit above one
    // that kept part of it. Probe the levels upwards before settling for that: each one up
    // to 64, then doubling (every probed cut is at most the limit in payload bytes, so
    // each encoding is small).
    if best.as_ref().is_none_or(|(level, ..)| *level == 0) {
        let mut level = 1;
        while level <= measured.full_level() && measured.size_at(payload, level) <= limit {
            let encoded = encode_at(level)?;
            if within.sent_len(&encoded.bytes) <= limit {
                best = Some((level, encoded));
                break;
            }
            level = if level < 64 { level + 1 } else { level * 2 };
        }
    }
    match best {
        Some((level, mut encoded)) => {
            let (cut, cuts) = cut_at(level);
            let candidate = cut_envelope((env, base), cut, &cuts, total_bytes, within);
            report_cut(env, &candidate, &cuts, &within.names(), &mut encoded.losses);
            let fitted = Fitted {
                encoded,
                envelope: Some(candidate),
            };
            Ok((fitted, cuts))
        }
        None => smallest_envelope((env, base), format, within, options, total_bytes),
    }
}

/// The payload budget at which the line through `fit` and `fail` (payload size, encoded
/// size) reaches `limit`.
fn interpolate(
    (fit_size, fit_written): (usize, usize),
    (fail_size, fail_written): (usize, usize),
    limit: usize,
) -> Option<usize> {
    if fail_size <= fit_size || fail_written <= fit_written {
        return None;
    }
    let slope = (fail_written - fit_written) as f64 / (fail_size - fit_size) as f64;
    Some(fit_size + ((limit - fit_written) as f64 / slope) as usize)
}

/// The next payload budget after an attempt of `size` payload bytes gave `encoded` bytes
/// (more than `limit`); always smaller than `size`.
fn next_budget(
    previous: Option<(usize, usize)>,
    (size, encoded): (usize, usize),
    limit: usize,
) -> usize {
    let proportional = size * limit / encoded;
    let estimate = match previous {
        // The slope between two attempts is the format's expansion of payload bytes.
        Some((s0, e0)) if s0 > size && e0 > encoded => {
            let slope = (e0 - encoded) as f64 / (s0 - size) as f64;
            let shrink = ((encoded - limit) as f64 / slope).ceil() as usize;
            size.saturating_sub(shrink)
        }
        _ => proportional,
    };
    estimate.min(size - 1)
}

/// The payload as the JSON value that gets cut (text as a string, blocks as an array),
/// borrowed when it is JSON already.
pub(crate) fn payload_value(payload: &Payload) -> Cow<'_, Value> {
    match payload {
        // Bytes cannot be cut meaningfully: they are kept whole or dropped.
        Payload::Bytes { .. } | Payload::None => Cow::Owned(Value::Null),
        other => other.json(),
    }
}

/// `base` (what every cut of `env` is built on) with the cut payload and a budget report
/// that says what was cut.
fn cut_envelope(
    (env, base): (&Envelope, &Base),
    cut: Value,
    cuts: &[Cut],
    total_bytes: u64,
    budget: Budget<'_>,
) -> Envelope {
    let mut out = base.envelope.clone();
    out.payload = match (&env.payload, cut) {
        (Payload::Text(_), Value::String(s)) => Payload::Text(s),
        (Payload::Blocks(_), Value::Array(blocks)) => Payload::Blocks(blocks),
        (Payload::Bytes { .. } | Payload::None, _) => Payload::None,
        (_, cut) => Payload::Json(cut),
    };
    // Content rendered from the old payload would contradict the cut one: the presentation
    // stays empty and is rendered from the cut payload.
    let mut report = report(cuts, &out.payload, total_bytes, budget);
    if let (Some(hint), Some(left_out)) = (&mut report.hint, &base.left_out) {
        hint.push_str(left_out);
    }
    out.budget = Some(report);
    out
}

fn report(cuts: &[Cut], kept: &Payload, total_bytes: u64, budget: Budget<'_>) -> BudgetReport {
    // ctxo's item counts describe the largest array cut.
    let largest = cuts
        .iter()
        .filter(|c| c.unit == CutUnit::Items)
        .max_by_key(|c| c.total)
        .cloned();
    let (cuts, hint) = budget.restate(cuts, kept);
    BudgetReport {
        total_items: largest.as_ref().map_or(0, |c| c.total),
        returned_items: largest.as_ref().map_or(0, |c| c.kept),
        truncated: true,
        total_bytes,
        tokens: budget.token_report(),
        hint: Some(hint),
        cuts,
    }
}

/// The cut [`hint`] names: one at the payload's root first, then the largest, array cuts
/// before string cuts (what a caller reading on from the hint's cut starts from).
pub fn named_cut(cuts: &[Cut]) -> Option<&Cut> {
    cuts.iter().max_by_key(|c| {
        (
            c.pointer.is_empty(),
            c.unit == CutUnit::Items,
            c.total - c.kept,
        )
    })
}

/// A drill-in hint naming the largest cut (array cuts before string cuts); `limit` names
/// the limits ([`Budget::names`]: `16384 bytes`, `4000 tokens (o200k_base)`).
pub fn hint(cuts: &[Cut], limit: &str) -> String {
    match named_cut(cuts) {
        Some(c) if c.pointer.is_empty() && c.kept == 0 => {
            format!("Output truncated to fit {limit}: the payload was left out. Ask for less.")
        }
        // A text payload (or a string) cut at its root.
        Some(c) if c.pointer.is_empty() => format!(
            "Output truncated to fit {limit}: the payload kept {} of {} {}. Ask for less.",
            c.kept,
            c.total,
            c.unit.as_str()
        ),
        Some(c) => {
            let more = match cuts.len() {
                1 => String::new(),
                n => format!(" ({n} cuts in all)"),
            };
            format!(
                "Output truncated to fit {limit}: {} kept {} of {} {}{more}. Narrow the request or page through the rest.",
                c.pointer,
                c.kept,
                c.total,
                c.unit.as_str()
            )
        }
        None => format!("Output truncated to fit {limit}."),
    }
}

/// Adds to `losses` what cutting `env` into `cut` left out: each cut of the payload (the
/// same list the marker and its notice summarize), the content blocks, and whatever the
/// minimal envelope stripped (summary, extensions, the notice).
/// `cuts`: the cuts as the payload's pointers name them (the report's may be restated).
fn report_cut(env: &Envelope, cut: &Envelope, cuts: &[Cut], limit: &str, losses: &mut LossReport) {
    if let Some(budget) = &cut.budget {
        for c in cuts {
            let field = format!("payload{}", c.pointer);
            let reason = match c.pointer.is_empty() && c.kept == 0 {
                true => format!(
                    "left out to fit the limit of {limit} (it takes {} bytes)",
                    c.total
                ),
                false => format!(
                    "kept {} of {} {} to fit the limit of {limit}",
                    c.kept,
                    c.total,
                    c.unit.as_str()
                ),
            };
            losses.push(field, reason);
        }
        if budget.hint.is_none() {
            losses.push(
                "budget.hint",
                format!("the truncation notice is left out to fit the limit of {limit}"),
            );
        }
    }
    if env.presentation.is_some() {
        losses.push(
            "presentation",
            "the content blocks are left out of a cut result: its content is rendered from the cut payload",
        );
    }
    if env.budget.as_ref().is_some_and(|b| b.truncated) {
        losses.push(
            "budget",
            "the report of an earlier cut, replaced by this one",
        );
    }
    if env.summary.is_some() && cut.summary.is_none() {
        losses.push("summary", format!("left out to fit the limit of {limit}"));
    }
    if mcp_meta(env).is_some() && mcp_meta(cut).is_none() {
        losses.push("_meta", format!("left out to fit the limit of {limit}"));
    }
    for ext in &env.extensions {
        if !cut.extensions.contains(ext) {
            losses.push(
                ext.pointer.clone(),
                format!("left out to fit the limit of {limit}"),
            );
        }
    }
}

/// Whether an extension holds a format identifier (`version`, `status`, `command`,
/// `operationId` wherever the format has them): the minimal envelope keeps it, since an
/// output without it would not be the format any more.
fn is_identifier(ext: &Extension) -> bool {
    let name = ext.pointer.rsplit('/').next().unwrap_or("");
    IDENTIFIERS.contains(&name)
}

/// What [`minimal`] may do with an error's message, and what of it the envelope holds.
#[derive(Clone, Copy)]
enum Message {
    /// Never cut it: the size of the smallest envelope holding it whole is asked for.
    Uncut,
    /// Cut it as its last resort; the envelope holds it whole.
    Whole,
    /// Cut it; the envelope holds only its start, of a message `total` bytes long.
    Start { total: usize },
}

/// What [`cut_error_message`] came to.
enum MessageCut {
    /// A cut of the message that fits.
    Fitted(Box<Fitted>),
    /// None fits: the size of the smallest cut (a character kept) at a limit of that size,
    /// when there is a message to cut.
    TooSmall(Option<SmallestCut>),
}

/// The smallest cut of an error's message: a character kept.
#[derive(Clone, Copy)]
struct SmallestCut {
    /// Its size in bytes at a limit of that size (the hint names the limit).
    bytes: usize,
    /// Its tokens, when the budget counts them.
    tokens: Option<usize>,
}

/// The last resort of [`minimal`] for an error whose own fields are what does not fit (a
/// failing command's whole log as its message): the message cut to the longest start that
/// fits, the hint saying how much was kept; when not even a character of it fits beside
/// them, the error's details left out first. `candidate` is changed only when a cut fits.
///
/// The cut is no cut of the payload (the report's `cuts` name the payload's), so the
/// marker says it in its hint, and the losses under `error.message`. `total`: the
/// message's length in bytes (more than the candidate holds when the caller gave only its
/// start: [`fit_error_start`]).
fn cut_error_message(
    candidate: &mut Envelope,
    format: FormatId,
    budget: Budget<'_>,
    options: &EncodeOptions,
    total: usize,
) -> Result<MessageCut> {
    if candidate
        .error
        .as_ref()
        .is_none_or(|e| e.message.is_empty())
    {
        return Ok(MessageCut::TooSmall(None));
    }
    // The cut is tried on a copy without the message.
    let whole = std::mem::take(&mut error_of(candidate).message);
    let mut cut = candidate.clone();
    error_of(candidate).message = whole;
    let message = candidate.error.as_ref().map_or("", |e| e.message.as_str());
    let first = message.chars().next().map_or(0, char::len_utf8);
    let names = budget.names();
    let limit = budget.room();
    let marked = formats::get(format).shows_error_hint();
    let set = |cut: &mut Envelope, keep: usize, names: &str| {
        let hint = format!(
            "Output truncated to fit {names}: the error message kept its first {keep} of {total} bytes."
        );
        if let Some(error) = cut.error.as_mut() {
            error.message = match marked {
                true => message[..keep].to_string(),
                // No marker a reader sees says it: the message does.
                false => format!("{}\n[{hint}]", &message[..keep]),
            };
        }
        if let Some(report) = cut.budget.as_mut() {
            report.hint = Some(hint);
        }
    };
    let encode_at = |cut: &mut Envelope, keep: usize, names: &str| {
        set(cut, keep, names);
        formats::encode(format, cut, options)
    };
    let fitting = |cut: &mut Envelope, keep: usize| -> Result<Option<Encoded>> {
        let encoded = encode_at(cut, keep, &names)?;
        Ok((budget.cost(&encoded.bytes) <= limit).then_some(encoded))
    };
    let mut details_left_out = false;
    let mut best = fitting(&mut cut, first)?;
    if best.is_none() && cut.error.as_mut().and_then(|e| e.details.take()).is_some() {
        details_left_out = true;
        best = fitting(&mut cut, first)?;
    }
    let Some(around) = best.as_ref().map(|e| budget.sent_len(&e.bytes)) else {
        let tokens = match budget.tokens {
            Some(t) => {
                let cut = encode_at(&mut cut, first, &names)?;
                Some(budget.sent_tokens(&t, &cut.bytes))
            }
            None => None,
        };
        // The size at a limit of that size (the hint names the limit).
        let mut bytes = 0;
        for _ in 0..4 {
            let size =
                budget.sent_len(&encode_at(&mut cut, first, &format!("{bytes} bytes"))?.bytes);
            if size <= bytes {
                break;
            }
            bytes = size;
        }
        return Ok(MessageCut::TooSmall(Some(SmallestCut { bytes, tokens })));
    };
    // The longest start that fits: at most what its JS-escaped text (as sent) leaves of
    // the room around the first character (the other writers escape at least as much, and
    // tokens count less), then halved towards the start that fits.
    let room = limit.saturating_sub(around);
    let mut used = 0;
    let mut most = first;
    for (at, c) in message[first..].char_indices() {
        used += budget.char_len(c);
        if used > room {
            break;
        }
        most = first + at + c.len_utf8();
    }
    // `fits`: the longest start known to fit; `over`: the shortest known not to.
    let (mut fits, mut over) = (first, most + 1);
    let mut keep = most;
    while keep > fits {
        match fitting(&mut cut, keep)? {
            Some(encoded) => {
                fits = keep;
                best = Some(encoded);
            }
            None => over = keep,
        }
        keep = fits + (over - fits) / 2;
        while !message.is_char_boundary(keep) {
            keep -= 1;
        }
    }
    let mut encoded = best.expect("a start that fits was encoded");
    // The envelope holds what was written.
    set(&mut cut, fits, &names);
    if details_left_out {
        encoded.losses.push(
            "error.details",
            format!("left out to fit the limit of {names}"),
        );
    }
    encoded.losses.push(
        "error.message",
        format!("kept its first {fits} of {total} bytes to fit the limit of {names}"),
    );
    *candidate = cut;
    Ok(MessageCut::Fitted(Box::new(Fitted {
        encoded,
        envelope: Some(candidate.clone()),
    })))
}

/// The error of an envelope known to have one.
fn error_of(env: &mut Envelope) -> &mut crate::model::EnvelopeError {
    env.error.as_mut().expect("an error envelope")
}

/// The names of format identifiers.
const IDENTIFIERS: [&str; 4] = ["version", "status", "command", "operationId"];

/// No payload, a report that says so; then without summary; then without the extensions
/// that are not identifiers and without the notice. Else an error: the identifiers, the
/// typed fields and the artifact reference are never cut.
fn minimal(
    (env, base): (&Envelope, &Base),
    format: FormatId,
    budget: Budget<'_>,
    options: &EncodeOptions,
    total_bytes: u64,
    message: Message,
) -> Result<Fitted> {
    let limit = budget.room();
    // The payload left out, when there is one: an error without one (the cut is then its
    // message's, reported by the hint) names no cut of it.
    let whole = match env.payload {
        Payload::None => Vec::new(),
        _ => vec![Cut {
            pointer: String::new(),
            kept: 0,
            total: total_bytes,
            unit: CutUnit::Bytes,
        }],
    };
    let mut candidate = cut_envelope((env, base), Value::Null, &whole, total_bytes, budget);
    candidate.payload = Payload::None;
    // The smallest encoding tried, in bytes and (when the budget counts them) tokens.
    let mut smallest = usize::MAX;
    let mut fewest_tokens = usize::MAX;
    for strip in 0..3 {
        match strip {
            1 => candidate.summary = None,
            2 => {
                candidate.extensions.retain(is_identifier);
                // ctxo's marker is `_meta`, and a truncated ctxo payload must say how to get
                // the rest (rule `ctxo.hint`): without its hint it would be refused by the
                // output check, so there the hint stays, and when it does not fit the
                // result is `budget.too-small`.
                if format != FormatId::Ctxo
                    && let Some(b) = &mut candidate.budget
                {
                    b.hint = None;
                }
            }
            _ => {}
        }
        let mut encoded = formats::encode(format, &candidate, options)?;
        if budget.cost(&encoded.bytes) <= limit {
            report_cut(
                env,
                &candidate,
                &whole,
                &budget.names(),
                &mut encoded.losses,
            );
            return Ok(Fitted {
                encoded,
                envelope: Some(candidate),
            });
        }
        smallest = smallest.min(budget.sent_len(&encoded.bytes));
        if let Some(tokens) = budget.tokens {
            fewest_tokens = fewest_tokens.min(budget.sent_tokens(&tokens, &encoded.bytes));
        }
    }
    let total = match message {
        Message::Uncut => None,
        Message::Whole => env.error.as_ref().map(|e| e.message.len()),
        Message::Start { total } => Some(total),
    };
    let mut smallest_cut = None;
    if let Some(total) = total {
        match cut_error_message(&mut candidate, format, budget, options, total)? {
            MessageCut::Fitted(fitted) => {
                let mut fitted = *fitted;
                report_cut(
                    env,
                    &candidate,
                    &whole,
                    &budget.names(),
                    &mut fitted.encoded.losses,
                );
                return Ok(fitted);
            }
            MessageCut::TooSmall(size) => smallest_cut = size,
        }
    }
    // With only the message's start, the strips above say nothing of the whole: the
    // smallest cut does.
    if let (Message::Start { .. }, Some(cut)) = (message, smallest_cut) {
        smallest = cut.bytes;
        fewest_tokens = cut.tokens.unwrap_or(fewest_tokens);
    }
    // The bytes fit, the tokens do not: the error says so in tokens.
    if let Some(tokens) = budget.tokens
        && smallest.min(smallest_cut.map_or(usize::MAX, |c| c.bytes))
            <= budget.limit.saturating_sub(budget.reserve)
    {
        return Err(Error::TokenBudgetTooSmall {
            format: format.as_str(),
            limit: tokens.room(),
            tokenizer: tokens.tokenizer.name().to_string(),
            minimum: smallest_cut
                .and_then(|c| c.tokens)
                .map_or(fewest_tokens, |cut| cut.min(fewest_tokens)),
        });
    }
    // A hint that stays (ctxo's) names the limit, so the size depends on the limit's digits:
    // the minimum reported is the size at a limit of that minimum, what a retry with it gets.
    let mut minimum = smallest;
    for _ in 0..4 {
        let Some(report) = candidate.budget.as_mut().filter(|b| b.hint.is_some()) else {
            break;
        };
        report.hint = Some(hint(&whole, &format!("{minimum} bytes")));
        let size = budget.sent_len(&formats::encode(format, &candidate, options)?.bytes);
        if size <= minimum {
            break;
        }
        minimum = size;
    }
    Err(Error::BudgetTooSmall {
        format: format.as_str(),
        limit,
        minimum: match (message, smallest_cut) {
            // The strips above held only the message's start.
            (Message::Start { .. }, Some(cut)) => cut.bytes,
            (_, Some(cut)) => cut.bytes.min(minimum),
            (_, None) => minimum,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Category, EnvelopeError};

    /// The search for a cut of an error whose message alone is over the room (what
    /// [`with_message_start`] spares) gives what the cut of the message's start gives: the
    /// same bytes and losses, or the same error, in every format, in bytes and in tokens.
    #[test]
    fn a_message_over_the_room_is_cut_as_the_search_cuts_it() {
        let tokenizer = Tokenizer::O200kBase;
        let texts = [
            "plain log line\n".repeat(400),
            "quote \" back \\ tab \t bell \u{7} <&> \u{2028}\n".repeat(150),
            "ünïcødé 日本語 😀 line\n".repeat(300),
        ];
        let options = EncodeOptions {
            now: Some("2026-07-04T00:00:00Z".into()),
            ..EncodeOptions::default()
        };
        let mut taken = 0;
        for text in &texts {
            for details in [None, Some(serde_json::json!({"stack": vec!["frame"; 300]}))] {
                let mut error = EnvelopeError::new(Category::Execution, text.clone());
                error.code = Some("ERUNTIME".into());
                error.details = details;
                let env = Envelope {
                    status: Status::Error,
                    error: Some(error),
                    summary: Some("a summary".into()),
                    ..Envelope::default()
                };
                for format in FormatId::ALL {
                    for budget in [
                        Budget::of(150),
                        Budget::of(700),
                        Budget::of(3000),
                        Budget::of_tokens(400, &tokenizer),
                    ] {
                        let payload = payload_value(&env.payload);
                        let measured = Measured::bounded(&payload, budget.room());
                        let remeasure =
                            |p: &Value, _: &[usize]| Measured::bounded(p, budget.room());
                        taken += usize::from(with_message_start(&env, budget.room()).is_some());
                        let searched = fit_by_search(
                            &env, &payload, &measured, &remeasure, format, budget, &options,
                        );
                        let started = fit_within(&env, format, budget, &options);
                        let outcome = |r: Result<Fitted>| {
                            r.map(|f| (f.encoded.bytes, f.encoded.losses))
                                .map_err(|e| e.to_string())
                        };
                        assert_eq!(outcome(started), outcome(searched), "{format} {budget:?}");
                    }
                }
            }
        }
        // Most cases are ones the start is taken for (not the tokens' room).
        assert!(taken >= 3 * 2 * 6 * 3 / 2, "{taken}");
    }
}
