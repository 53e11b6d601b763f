//! Conversion between formats through the canonical model.

use crate::error::Result;
use crate::formats::{self, DecodeOptions, EncodeOptions, Encoded, FormatId};
use crate::shape::bounded::{self, Decoded};

/// Decodes `input` (as `from`, or the detected format) and encodes it as `to`.
pub fn convert(
    input: &[u8],
    from: Option<FormatId>,
    to: FormatId,
    decode_options: &DecodeOptions,
    encode_options: &EncodeOptions,
) -> Result<Encoded> {
    if to == FormatId::Ctxo {
        // ctxo's compat truncation keeps a few kilobytes of a large payload: read no more of
        // it than that needs (the same bytes as a whole read).
        let limit = encode_options
            .ctxo_limit
            .unwrap_or(formats::ctxo::DEFAULT_LIMIT);
        match bounded::decode(input, from, decode_options, limit)? {
            Decoded::Whole(_, env) => return formats::encode(to, &env, encode_options),
            Decoded::Skimmed(skimmed) => {
                if let Some(encoded) = skimmed.encode_ctxo(encode_options)? {
                    return Ok(encoded);
                }
            }
        }
    }
    let (_, env) = formats::decode_any(input, from, decode_options)?;
    formats::encode(to, &env, encode_options)
}
