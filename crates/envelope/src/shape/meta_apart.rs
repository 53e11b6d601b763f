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
    // A cut's marker is written into the `_meta` (built then, and small: it fits the cut).
    if formats::truncation(env).is_some() {
        return None;
    }
    let Some(Source::Mcp {
        result_meta: Some(meta),
    }) = &mut env.source
    else {
        return None;
    };
    if meta.len() <= APART_FROM || !meta.is_object() {
        return None;
    }
    let keys = formats::keys_for_detection(meta.as_str().as_bytes()).ok()?;
    if formats::ctxo::is_ctxo_meta(&keys) {
        return None;
    }
    let stand_in = JsonText::from_value(&json!({ MARK: 0 }));
    let text = std::mem::replace(meta, stand_in.clone());
    let encoded = formats::encode(to, env, options);
    if let Some(Source::Mcp { result_meta }) = &mut env.source {
        *result_meta = Some(text.clone());
    }
    let encoded = encoded.ok()?;
    check(&encoded.bytes).ok()?;
    let pattern = stand_in.as_str().as_bytes().to_vec();
    let piece = Piece::Json(Bytes::kept(text));
    let dialect = formats::get(to).dialect();
    Spliced::new(
        encoded.bytes,
        &[(pattern, piece)],
        MARK,
        encoded.losses,
        dialect,
    )
}
