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

use super::Dialect;

/// The largest integer every double represents exactly.
const MAX_SAFE_INTEGER: u64 = 1 << 53;

/// Appends `n` to `out` as `dialect` writes it (integers with all their digits, except
/// beyond 2^53 in RFC 8785).
pub(crate) fn write(out: &mut Vec<u8>, n: &Number, dialect: Dialect) {
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
pub(crate) fn write_f64(out: &mut Vec<u8>, f: f64, dialect: Dialect) {
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
pub(crate) fn js_len(n: &Number) -> usize {
    if let Some(u) = n.as_u64() {
        decimal_digits(u)
    } else if let Some(i) = n.as_i64() {
        1 + decimal_digits(i.unsigned_abs())
    } else {
        js_len_f64(n.as_f64().unwrap_or(0.0))
    }
}

/// Length of the finite double `f` written in the JS dialect.
pub(crate) fn js_len_f64(f: f64) -> usize {
    short_decimal_len(f).unwrap_or_else(|| ryu_js::Buffer::new().format_finite(f).len())
}

fn decimal_digits(u: u64) -> usize {
    u.checked_ilog10().map_or(1, |log| log as usize + 1)
}

/// The powers of ten up to 10^15 (every one exact as a double).
const POW10: [f64; 16] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
];

/// The JS length of `f` when its shortest decimal has at most 15 significant digits and is
/// written without an exponent (1e-6 ≤ |f| < 1e15): most doubles in tool results (0.87,
/// 12.5), measured without formatting them (`ryu_js` otherwise; sizing a payload formats
/// every float in it).
///
/// That decimal is `m / 10^d` for the fewest decimals `d`, `m = round(|f| × 10^d)`:
/// - a decimal of at most 15 significant digits reads back as `f` exactly when the
///   correctly rounded quotient of the exact doubles `m` and `10^d` is `f`, and at most one
///   such decimal is near `f` (15 digits are finer than no two doubles), so the first `d`
///   that reads back finds the shortest decimal, the one `ryu_js` writes;
/// - `|f| × 10^d` is within 0.2 of that `m` (`m ≤ 10^15`, doubles carry 2^-52), so
///   rounding finds it;
/// - a decimal that reads back with `d` decimals also does with more (trailing zeros), so
///   when the most decimals that keep 15 digits do not read back, none do: doubles that
///   need 16 or 17 digits cost one test.
fn short_decimal_len(f: f64) -> Option<usize> {
    let magnitude = f.abs();
    if !(1e-6..1e15).contains(&magnitude) {
        return None;
    }
    // Digits before the point: the integer part's, or the 0 of 0.x.
    let int_digits = decimal_digits(magnitude as u64);
    let max_decimals = if magnitude >= 1.0 {
        15 - int_digits
    } else {
        15
    };
    let reads_back = |decimals: usize| {
        let scale = POW10[decimals];
        // Rounded by adding a half and truncating (`round` is a libm call): the product is
        // below 10^15 < 2^50, where adding a half is exact.
        let m = (magnitude * scale + 0.5) as u64;
        m as f64 / scale == magnitude
    };
    if !reads_back(max_decimals) {
        return None;
    }
    let decimals = (0..=max_decimals).find(|&d| reads_back(d))?;
    let point_and_decimals = if decimals > 0 { 1 + decimals } else { 0 };
    Some(usize::from(f < 0.0) + int_digits + point_and_decimals)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn written_len(n: &Number) -> usize {
        let mut out = Vec::new();
        write(&mut out, n, Dialect::Js);
        out.len()
    }

    fn check(f: f64) {
        if let Some(n) = Number::from_f64(f) {
            assert_eq!(js_len(&n), written_len(&n), "{f:e} ({:#x})", f.to_bits());
        }
    }

    #[test]
    fn js_len_is_the_written_length_at_the_edges() {
        for f in [
            0.0,
            -0.0,
            1e-6,
            1e-7,
            9.99999e-7,
            1e15,
            999999999999999.0,
            1e15 - 0.5,
            1e21,
            1e-5,
            0.1,
            0.3,
            0.1 + 0.2,
            1.0 / 3.0,
            2.0 / 3.0,
            9.5,
            10.0,
            100.0,
            5e-324,
            1.7976931348623157e308,
            123456789012345.6,
            12345678901234.56,
            0.123456789012345,
            0.1234567890123456,
            4503599627370495.5,
            9007199254740993.0,
            0.000001234567890123,
        ] {
            check(f);
            check(-f);
        }
        for u in [0, 9, 10, 99, 100, u64::MAX] {
            assert_eq!(js_len(&Number::from(u)), written_len(&Number::from(u)));
        }
        for i in [-1, -9, -10, i64::MIN] {
            assert_eq!(js_len(&Number::from(i)), written_len(&Number::from(i)));
        }
        // Decimals of every digit count and point position, and their neighbouring doubles.
        let digits = "98765432109876543210";
        for len in 1..=18 {
            for point in 0..=len {
                for zeros in 0..8 {
                    let (int, frac) = digits[..len].split_at(point);
                    let text = format!(
                        "{}.{}{frac}0",
                        if int.is_empty() { "0" } else { int },
                        "0".repeat(zeros)
                    );
                    let f: f64 = text.parse().unwrap();
                    check(f);
                    check(f64::from_bits(f.to_bits() + 1));
                    check(f64::from_bits(f.to_bits() - 1));
                }
            }
        }
    }

    proptest! {
        #[test]
        fn js_len_is_the_written_length_of_any_double(bits in any::<u64>()) {
            check(f64::from_bits(bits));
        }

        #[test]
        fn js_len_is_the_written_length_of_short_decimals(m in 0u64..1_000_000_000_000_000, d in 0usize..22) {
            check(m as f64 / 10f64.powi(d as i32));
        }

        #[test]
        fn js_len_is_the_written_length_of_integers(u in any::<u64>(), i in any::<i64>()) {
            prop_assert_eq!(js_len(&Number::from(u)), written_len(&Number::from(u)));
            prop_assert_eq!(js_len(&Number::from(i)), written_len(&Number::from(i)));
        }
    }
}
