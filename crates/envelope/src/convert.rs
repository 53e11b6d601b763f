//! Conversion between formats through the canonical model.

use crate::error::Result;
use crate::formats::{self, DecodeOptions, EncodeOptions, Encoded, FormatId};

/// Decodes `input` (as `from`, or the detected format) and encodes it as `to`.
pub fn convert(
    input: &[u8],
    from: Option<FormatId>,
    to: FormatId,
    decode_options: &DecodeOptions,
    encode_options: &EncodeOptions,
) -> Result<Encoded> {
    let (_, env) = formats::decode_any(input, from, decode_options)?;
    formats::encode(to, &env, encode_options)
}
