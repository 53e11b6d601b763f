//! Equality of JSON values as JSON means it: a number is its value, however it is written.
//!
//! `serde_json::Value`'s `==` tells `1` (read as an integer) from `1.0` and `1e0` (read as
//! doubles), so a text mirror written by Python (`{"score":1.0}`) would differ from the same
//! `structuredContent` once a JavaScript writer spelled it `{"score":1}`. Every comparison of
//! two documents' values goes through [`same`] instead.

use serde_json::{Number, Value};

/// Whether `a` and `b` are the same JSON value: numbers compared by their value (see
/// [`same_number`]), objects by their members whatever their order, arrays item by item,
/// strings by their characters.
pub fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => same_number(x, y),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(key, x)| y.get(key).is_some_and(|y| same(x, y)))
        }
        _ => a == b,
    }
}

/// Whether two numbers have the same value (`-0` and `0` are the same number).
///
/// Two integers are compared exactly. A number written with a fraction or an exponent is a
/// double, and beside a double an integer is the double every JavaScript reader makes of it
/// (the nearest): the JS writer spells the double 6.251931812601809e16 `62519318126018090`,
/// which is not the double's exact value, and must still mirror it.
pub fn same_number(x: &Number, y: &Number) -> bool {
    match (integer(x), integer(y)) {
        (Some(x), Some(y)) => x == y,
        (Some(n), None) => y.as_f64() == Some(n as f64),
        (None, Some(n)) => x.as_f64() == Some(n as f64),
        (None, None) => x.as_f64() == y.as_f64(),
    }
}

/// The number as an integer, when serde_json read it as one.
fn integer(n: &Number) -> Option<i128> {
    n.as_i64()
        .map(i128::from)
        .or_else(|| n.as_u64().map(i128::from))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Value {
        serde_json::from_str(text).unwrap()
    }

    #[test]
    fn a_number_is_its_value_however_written() {
        for (a, b) in [
            ("1", "1.0"),
            ("1", "1e0"),
            ("100", "1E2"),
            ("0.25", "0.250"),
            ("-0", "0"),
            ("-0.0", "0"),
            ("18446744073709551615", "18446744073709551615"),
            ("9007199254740992", "9007199254740992.0"),
            // As JS reads them: both are the double 2^53, and both 2^64.
            ("9007199254740993", "9007199254740992.0"),
            ("18446744073709551615", "1.8446744073709552e19"),
            ("62519318126018090", "6.251931812601809e16"),
            ("[1,{\"a\":2.0}]", "[1.0,{\"a\":2}]"),
            ("{\"a\":1,\"b\":2}", "{\"b\":2.0,\"a\":1e0}"),
        ] {
            assert!(same(&read(a), &read(b)), "{a} and {b} are the same value");
        }
    }

    #[test]
    fn different_values_stay_different() {
        for (a, b) in [
            ("1", "1.5"),
            ("1", "\"1\""),
            ("9007199254740993", "9007199254740992"),
            ("-1", "18446744073709551615"),
            ("[1,2]", "[2,1]"),
            ("[1]", "[1,1]"),
            ("{\"a\":1}", "{\"a\":1,\"b\":1}"),
            ("{\"a\":1}", "{\"b\":1}"),
            ("null", "false"),
        ] {
            assert!(!same(&read(a), &read(b)), "{a} and {b} differ");
        }
    }
}
