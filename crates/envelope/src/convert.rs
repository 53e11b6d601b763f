//! Conversion between formats through the canonical model: decode as one format, encode as
//! another, and say what the target could not hold.

use crate::error::Result;
use crate::formats::{self, DecodeOptions, EncodeOptions, Encoded, FormatId};
use crate::shape::bounded::{self, Decoded};

/// Decodes `input` (as `from`, or the detected format when `from` is `None`) and encodes it
/// as `to`. The result holds the bytes and the loss report: every field the source carried
/// that `to` has no place for (canonical fields by name, fields only the source format
/// knows by their JSON Pointer in the source document).
///
/// Converting to ctxo reads no more of a large payload than ctxo's byte limit needs; the
/// bytes are the same as decoding the whole document and encoding it.
///
/// # Errors
///
/// Whatever [`decode`](crate::decode) or [`encode`](crate::encode) return: invalid JSON
/// (with its location), a document no format recognises
/// ([`Error::Undetected`](crate::Error::Undetected)), or one that is not a valid envelope of
/// its format; [`Error::InvalidOutput`](crate::Error::InvalidOutput) when the output would
/// not be read back as a valid `to` envelope (see
/// [`check_output_of`](crate::validate::check_output_of)): nothing is returned then.
///
/// ```
/// use envelope::convert::convert;
/// use envelope::{DecodeOptions, EncodeOptions, FormatId};
///
/// let input = include_str!("../../../examples/protocol-v1.json");
/// let out = convert(
///     input.as_bytes(),
///     None, // detected: protocol-v1
///     FormatId::Mcp,
///     &DecodeOptions::default(),
///     &EncodeOptions::default(),
/// )
/// .unwrap();
///
/// let result: serde_json::Value = serde_json::from_slice(&out.bytes).unwrap();
/// assert_eq!(result["structuredContent"]["message"], "Hello from inline envelope");
///
/// // MCP has no place for the command, the time or the workspace, nor for protocol-v1's
/// // own meta fields: each is reported, by name or by its pointer in the source.
/// let lost: Vec<&str> = out.losses.items.iter().map(|l| l.field.as_str()).collect();
/// assert!(lost.contains(&"command"));
/// assert!(lost.contains(&"timestamp"));
/// assert!(lost.contains(&"/meta/runner"));
/// let runner = out.losses.items.iter().find(|l| l.field == "/meta/runner").unwrap();
/// assert_eq!(runner.reason, "protocol-v1 field with no place in mcp");
/// ```
pub fn convert(
    input: &[u8],
    from: Option<FormatId>,
    to: FormatId,
    decode_options: &DecodeOptions,
    encode_options: &EncodeOptions,
) -> Result<Encoded> {
    let encoded = convert_unchecked(input, from, to, decode_options, encode_options)?;
    crate::validate::check_output_of(&encoded.bytes, to, input)?;
    Ok(encoded)
}

/// [`convert`] without the check of its output.
fn convert_unchecked(
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
