//! The last step of every whole-envelope output: encoding it. A result's `_meta` is kept as
//! text ([`JsonText`]) and the encoders copy it into the output as it is; for an envelope
//! whose `_meta` is most of it, the output then holds that text a second time. Here a large
//! one is left out of the encoded bytes (a stand-in takes its place) and written from the
//! kept text when the output is ([`Spliced`]): the output costs the text once.

use serde_json::json;

use super::spliced::{Bytes, Piece, Spliced};
use crate::error::Result;
use crate::formats::{self, EncodeOptions, FormatId};
use crate::model::{Envelope, JsonText, Source};

/// A result `_meta` larger than this is written from its text.
const APART_FROM: usize = 64 << 10;

/// The stand-in's mark: a key no document holds by chance.
const MARK: &str = "\u{0}envelope:meta-apart\u{0}";

/// `env` encoded as `to` and checked by `check` (given the encoded document), a large
/// result `_meta` written from its kept text (see the module's documentation). The bytes
/// written are those of encoding it whole, which is done when the stand-in cannot stand in
/// (a small `_meta`, one that carries ctxo's budget fields, which detection reads, a target
/// that writes no `_meta`, a failed check: the whole encoding then says why).
///
/// # Errors
///
/// The encoder's, and `check`'s on the whole encoding.
pub(crate) fn encode(
    to: FormatId,
    env: &mut Envelope,
    options: &EncodeOptions,
    check: &dyn Fn(&[u8]) -> Result<()>,
) -> Result<Spliced<'static>> {
    if let Some(spliced) = with_stand_in(to, env, options, check) {
        return Ok(spliced);
    }
    let encoded = formats::encode(to, env, options)?;
    check(&encoded.bytes)?;
    let mut output = Spliced::whole(encoded.bytes);
    output.losses = encoded.losses;
    Ok(output)
}

/// The encoding with a stand-in in the place of `env`'s large result `_meta`, which the
/// output writes from its text; `None` where it cannot be (see [`encode`]). `env` is left
/// as it was given.
fn with_stand_in(
    to: FormatId,
    env: &mut Envelope,
    options: &EncodeOptions,
    check: &dyn Fn(&[u8]) -> Result<()>,
) -> Option<Spliced<'static>> {
    let kept = result_meta(env)?.clone();
    let (pattern, piece) = meta_as_piece(env, MARK)?;
    let encoded = formats::encode(to, env, options);
    if let Some(Source::Mcp { result_meta }) = &mut env.source {
        *result_meta = Some(kept);
    }
    let encoded = encoded.ok()?;
    check(&encoded.bytes).ok()?;
    let dialect = formats::get(to).dialect();
    Spliced::new(
        encoded.bytes,
        &[(pattern, piece)],
        MARK,
        encoded.losses,
        dialect,
    )
}

/// Puts a stand-in (an object whose one key is `mark`) in the place of `env`'s result
/// `_meta` when it is larger than [`APART_FROM`], and gives the stand-in as the encoders
/// write it (the formats that carry a `_meta`, MCP and operations, write its text as it
/// is) with the piece that takes its place. `None` for a small `_meta`, one that is not an
/// object, one with ctxo's budget keys (detection reads them: an output checked around the
/// stand-in must be detected as the real one), or a cut's (its marker is written into it).
pub(super) fn meta_as_piece(env: &mut Envelope, mark: &str) -> Option<(Vec<u8>, Piece<'static>)> {
    if formats::truncation(env).is_some() {
        return None;
    }
    let meta = result_meta(env)?;
    if meta.len() <= APART_FROM || !meta.is_object() {
        return None;
    }
    let keys = formats::keys_for_detection(meta.as_str().as_bytes()).ok()?;
    if formats::ctxo::is_ctxo_meta(&keys) {
        return None;
    }
    let stand_in = JsonText::from_value(&json!({ mark: 0 }));
    let pattern = stand_in.as_str().as_bytes().to_vec();
    let Some(Source::Mcp {
        result_meta: Some(meta),
    }) = &mut env.source
    else {
        return None;
    };
    let text = std::mem::replace(meta, stand_in);
    Some((pattern, Piece::Json(Bytes::kept(text))))
}

/// `env`'s result `_meta` (an MCP source's), kept as text.
fn result_meta(env: &Envelope) -> Option<&JsonText> {
    match &env.source {
        Some(Source::Mcp { result_meta }) => result_meta.as_ref(),
        _ => None,
    }
}
