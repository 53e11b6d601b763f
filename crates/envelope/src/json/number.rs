//! Number formatting per dialect.
//!
//! - JS and RFC 8785: ECMAScript `Number::toString` (`1.0` → `1`, `1e21` → `1e+21`, `-0` → `0`),
//!   implemented by `ryu-js`.
//! - Go: `strconv.AppendFloat` with 'f' below 1e21 and 'e' from there (or below 1e-6),
//!   exponent cleaned to at least one digit: the same text as JS except `-0` stays `-0`.
//! - Newtonsoft: .NET Core `double.ToString("R")` (scientific from 1E+15 and from 1E-05 down,
//!   exponent with sign and at least two digits), then `.0` appended to integral values.
//!
//! Integers that serde_json read as `i64`/`u64` are written with all their digits in every
//! dialect but RFC 8785: the JS and Go references would round integers beyond 2^53 to a
//! double, which would change data the user gave us. RFC 8785 is a canonical form defined
//! on doubles, so there they are rounded as the RFC requires.

use serde_json::Number;

use super::writer::Dialect;

/// The largest integer every double represents exactly.
const MAX_SAFE_INTEGER: u64 = 1 << 53;

pub fn write(out: &mut Vec<u8>, n: &Number, dialect: Dialect) {
    if let Some(u) = n.as_u64() {
        if dialect == Dialect::Jcs && u > MAX_SAFE_INTEGER {
            return write_f64(out, u as f64, dialect);
        }
        out.extend_from_slice(itoa::Buffer::new().format(u).as_bytes());
    } else if let Some(i) = n.as_i64() {
        if dialect == Dialect::Jcs && i.unsigned_abs() > MAX_SAFE_INTEGER {
            return write_f64(out, i as f64, dialect);
        }
        out.extend_from_slice(itoa::Buffer::new().format(i).as_bytes());
    } else if let Some(f) = n.as_f64() {
        write_f64(out, f, dialect);
    }
}

/// Writes a finite double (JSON numbers are always finite).
pub fn write_f64(out: &mut Vec<u8>, f: f64, dialect: Dialect) {
    match dialect {
        Dialect::Js | Dialect::Jcs => js(out, f),
        Dialect::Go => {
            if f == 0.0 && f.is_sign_negative() {
                out.extend_from_slice(b"-0");
            } else {
                js(out, f);
            }
        }
        Dialect::Newtonsoft => dotnet(out, f),
    }
}

fn js(out: &mut Vec<u8>, f: f64) {
    let mut buf = ryu_js::Buffer::new();
    out.extend_from_slice(buf.format_finite(f).as_bytes());
}

/// Shortest round-trip digits of `f` and its decimal exponent: `f = 0.d1d2d3… × 10^exp`.
fn shortest_digits(f: f64) -> (String, i32) {
    let mut buf = ryu_js::Buffer::new();
    let text = buf.format_finite(f.abs());
    let (mantissa, exp) = match text.split_once('e') {
        Some((m, e)) => (m, e.parse::<i32>().unwrap_or(0)),
        None => (text, 0),
    };
    let (int_part, frac_part) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let all: String = format!("{int_part}{frac_part}");
    let leading_zeros = all.len() - all.trim_start_matches('0').len();
    let digits = all
        .trim_start_matches('0')
        .trim_end_matches('0')
        .to_string();
    // Position of the decimal point relative to the first significant digit.
    let point = int_part.len() as i32 - leading_zeros as i32 + exp;
    if digits.is_empty() {
        return ("0".to_string(), 1);
    }
    (digits, point)
}

fn dotnet(out: &mut Vec<u8>, f: f64) {
    if f == 0.0 {
        out.extend_from_slice(if f.is_sign_negative() {
            b"-0.0"
        } else {
            b"0.0"
        });
        return;
    }
    if f.is_sign_negative() {
        out.push(b'-');
    }
    let (digits, point) = shortest_digits(f);
    // Decimal exponent of the first digit in scientific notation.
    let sci_exp = point - 1;
    // .NET "G": fixed-point when -5 < exponent < 15 (the double precision specifier).
    if !(-4..15).contains(&sci_exp) {
        out.push(digits.as_bytes()[0]);
        if digits.len() > 1 {
            out.push(b'.');
            out.extend_from_slice(&digits.as_bytes()[1..]);
        }
        out.push(b'E');
        out.push(if sci_exp < 0 { b'-' } else { b'+' });
        let e = sci_exp.unsigned_abs();
        if e < 10 {
            out.push(b'0');
        }
        out.extend_from_slice(e.to_string().as_bytes());
        return;
    }
    if point <= 0 {
        out.extend_from_slice(b"0.");
        out.extend(std::iter::repeat_n(b'0', point.unsigned_abs() as usize));
        out.extend_from_slice(digits.as_bytes());
    } else if point as usize >= digits.len() {
        out.extend_from_slice(digits.as_bytes());
        out.extend(std::iter::repeat_n(b'0', point as usize - digits.len()));
        out.extend_from_slice(b".0");
    } else {
        let (int_part, frac) = digits.split_at(point as usize);
        out.extend_from_slice(int_part.as_bytes());
        out.push(b'.');
        out.extend_from_slice(frac.as_bytes());
    }
}

/// Length of `n` written in the JS dialect, without writing it anywhere.
pub fn js_len(n: &Number) -> usize {
    if let Some(u) = n.as_u64() {
        itoa::Buffer::new().format(u).len()
    } else if let Some(i) = n.as_i64() {
        itoa::Buffer::new().format(i).len()
    } else {
        ryu_js::Buffer::new()
            .format_finite(n.as_f64().unwrap_or(0.0))
            .len()
    }
}
