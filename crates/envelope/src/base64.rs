//! Base64 for tool-envelope-v1: a strict reader (standard alphabet, canonical padding) and
//! the lenient reader of the reference (Node's `Buffer.from(s, "base64")`).

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

/// Standard alphabet, `=` padding, no line breaks.
pub fn encode(bytes: &[u8]) -> String {
    STANDARD.encode(bytes)
}

/// Appends the encoding of `bytes` to `out`.
pub fn encode_into(bytes: &[u8], out: &mut String) {
    STANDARD.encode_string(bytes, out);
}

/// A strict-decoding failure: what and at which byte of the base64 text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Base64Error {
    pub offset: usize,
    pub message: String,
}

/// Standard alphabet with canonical padding; anything else is an error with its offset.
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

/// Node's reader: both alphabets, non-alphabet bytes skipped, stops at the first `=`,
/// missing padding accepted (2 trailing symbols → 1 byte, 3 → 2, 1 → nothing). Never fails.
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
