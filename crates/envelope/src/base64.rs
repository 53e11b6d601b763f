//! Base64 for tool-envelope-v1: a strict reader (standard alphabet, canonical padding) and
//! the lenient reader of the reference (Node's `Buffer.from(s, "base64")`).
//!
//! The encoder writes what the reference writes (standard alphabet, `=` padding). Decoding
//! comes in two strengths: [`decode_strict`] accepts only canonical text and says where it
//! went wrong; [`decode_lenient`] reads what Node reads and never fails.
//!
//! ```
//! use envelope::base64::{decode_lenient, decode_strict, encode};
//!
//! assert_eq!(encode(b"hi?"), "aGk/");
//! // Canonical text reads the same both ways.
//! assert_eq!(decode_strict(b"aGk/").unwrap(), b"hi?");
//! assert_eq!(decode_lenient(b"aGk/"), b"hi?");
//!
//! // URL-safe symbols, a missing `=` and a line break: Node reads them, the strict
//! // reader points at the first byte it cannot take.
//! let sloppy = b"aGk_\naGk";
//! assert_eq!(decode_lenient(sloppy), b"hi?hi");
//! let err = decode_strict(sloppy).unwrap_err();
//! assert_eq!(err.offset, 3);
//! ```

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

/// Encodes `bytes` in the standard alphabet with `=` padding and no line breaks, as Node's
/// `Buffer.toString("base64")` does.
pub fn encode(bytes: &[u8]) -> String {
    STANDARD.encode(bytes)
}

/// Appends the encoding of `bytes` (as [`encode`] writes it) to `out`.
pub(crate) fn encode_into(bytes: &[u8], out: &mut String) {
    STANDARD.encode_string(bytes, out);
}

/// Why [`decode_strict`] refused a text, and at which byte of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Base64Error {
    /// Byte offset in the base64 text: the offending byte, or the text's length when the
    /// text ends too early or its padding is wrong.
    pub offset: usize,
    /// What is wrong, in words (`byte 0x5f is not in the standard base64 alphabet`).
    pub message: String,
}

/// Decodes standard-alphabet base64 with canonical padding.
///
/// # Errors
///
/// A [`Base64Error`] with the offset of the first problem: a byte outside the standard
/// alphabet (URL-safe `-` and `_`, whitespace, line breaks), a length that cannot end a
/// text, missing or misplaced padding, or a last symbol with bits set past the data.
pub fn decode_strict(text: &[u8]) -> Result<Vec<u8>, Base64Error> {
    use base64::DecodeError;
    STANDARD.decode(text).map_err(|e| match e {
        DecodeError::InvalidByte(offset, byte) => Base64Error {
            offset,
            message: format!("byte {byte:#04x} is not in the standard base64 alphabet"),
        },
        DecodeError::InvalidLength(len) => Base64Error {
            offset: text.len(),
            message: format!("{len} symbols cannot end a base64 text (missing padding?)"),
        },
        DecodeError::InvalidLastSymbol {
            offset,
            symbol: byte,
            ..
        } => Base64Error {
            offset,
            message: format!("last symbol {:?} has bits set past the data", byte as char),
        },
        DecodeError::InvalidPadding => Base64Error {
            offset: text.len(),
            message: "padding is missing or wrong".into(),
        },
    })
}

/// Symbol values of both alphabets (`+/` and `-_`); 0xFF = not a symbol.
const fn lenient_table() -> [u8; 256] {
    let mut t = [0xFFu8; 256];
    let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut i = 0;
    while i < 64 {
        t[alphabet[i] as usize] = i as u8;
        i += 1;
    }
    t[b'-' as usize] = 62;
    t[b'_' as usize] = 63;
    t
}
static LENIENT: [u8; 256] = lenient_table();

/// Decodes base64 as Node's `Buffer.from(text, "base64")` does, the reader of the
/// tool-envelope-v1 reference: both alphabets (`+/` and `-_`), bytes outside them skipped,
/// reading stops at the first `=`, and missing padding is accepted (2 trailing symbols give
/// 1 byte, 3 give 2, a lone symbol gives nothing). Never fails; canonical text gives the
/// same bytes as [`decode_strict`].
pub fn decode_lenient(text: &[u8]) -> Vec<u8> {
    // Canonical input (the usual case) reads the same both ways: take the fast reader.
    if let Ok(bytes) = STANDARD.decode(text) {
        return bytes;
    }
    let mut out = Vec::with_capacity(text.len() / 4 * 3 + 2);
    let mut acc: u32 = 0;
    let mut count = 0u8;
    for &c in text {
        if c == b'=' {
            break;
        }
        let v = LENIENT[c as usize];
        if v == 0xFF {
            continue;
        }
        acc = (acc << 6) | u32::from(v);
        count += 1;
        if count == 4 {
            out.extend_from_slice(&[(acc >> 16) as u8, (acc >> 8) as u8, acc as u8]);
            acc = 0;
            count = 0;
        }
    }
    match count {
        2 => out.push((acc >> 4) as u8),
        3 => out.extend_from_slice(&[(acc >> 10) as u8, (acc >> 2) as u8]),
        _ => {}
    }
    out
}
