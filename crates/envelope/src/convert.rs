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
    let from = match from {
        Some(f) => f,
        None => crate::detect::detect(input)?.format,
    };
    let env = formats::decode(from, input, decode_options)?;
    formats::encode(to, &env, encode_options)
}
