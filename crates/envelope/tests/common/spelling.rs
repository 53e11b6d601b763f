//! JSON written the ways other writers write it: numbers in any spelling (`1.0`, `1e0`,
//! `0.250`), Python's spacing, `\u` escapes for every character past ASCII, members in
//! reverse order. The value read back is the same; the text is not the JS writer's.

use serde_json::Value;

use super::Gen;

/// How a generated document spells what it holds.
#[derive(Clone, Copy, Debug)]
pub struct Spelling {
    /// Python's `json.dumps`: `", "` and `": "` between tokens.
    pub spaced: bool,
    /// Python's `ensure_ascii`: every character past ASCII as `\u` escapes.
    pub ascii: bool,
    /// Members in reverse order.
    pub reversed: bool,
    /// The seed of each number's spelling.
    pub seed: u64,
}

impl Spelling {
    pub fn new(g: &mut Gen) -> Self {
        Spelling {
            spaced: g.below(2) == 0,
            ascii: g.below(2) == 0,
            reversed: g.below(4) == 0,
            seed: g.next(),
        }
    }
}

/// `value` as JSON text in `spelling`.
pub fn spell(value: &Value, spelling: Spelling) -> String {
    let mut out = String::new();
    let mut g = Gen::new(spelling.seed);
    write(value, spelling, &mut g, &mut out);
    out
}

fn write(value: &Value, spelling: Spelling, g: &mut Gen, out: &mut String) {
    let (comma, colon) = if spelling.spaced {
        (", ", ": ")
    } else {
        (",", ":")
    };
    match value {
        Value::Number(n) => out.push_str(&number(n, g)),
        Value::String(s) => out.push_str(&string(s, spelling.ascii)),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(comma);
                }
                write(item, spelling, g, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut members: Vec<_> = map.iter().collect();
            if spelling.reversed {
                members.reverse();
            }
            out.push('{');
            for (i, (key, item)) in members.into_iter().enumerate() {
                if i > 0 {
                    out.push_str(comma);
                }
                out.push_str(&string(key, spelling.ascii));
                out.push_str(colon);
                write(item, spelling, g, out);
            }
            out.push('}');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// One of the spellings of the number `n`'s value: as JS, Python, Go or a person writes it.
fn number(n: &serde_json::Number, g: &mut Gen) -> String {
    let plain = n.to_string();
    if n.is_u64() && !n.is_i64() {
        return plain;
    }
    if let Some(i) = n.as_i64() {
        // Only integers a double holds exactly are respelled as doubles.
        if i.unsigned_abs() <= 1 << 53 {
            return match g.below(5) {
                0 => format!("{i}.0"),
                1 => format!("{i}e0"),
                2 => format!("{i}.000E+0"),
                _ => plain,
            };
        }
        return plain;
    }
    let Some(f) = n.as_f64() else { return plain };
    match g.below(4) {
        // Rust writes the shortest text that reads back as the same double, in an exponent.
        0 => format!("{f:e}"),
        1 if !plain.contains(['e', 'E']) && plain.contains('.') => format!("{plain}00"),
        2 if f.fract() == 0.0 && f.abs() < 1e15 => format!("{f:.1}"),
        _ => plain,
    }
}

fn string(s: &str, ascii: bool) -> String {
    let json = serde_json::to_string(s).unwrap();
    match ascii {
        true => ascii_escaped(&json),
        false => json,
    }
}

/// JSON text with every character past ASCII written as `\u` escapes (UTF-16 units), as
/// Python's `json.dumps` (`ensure_ascii`) writes it: the same value.
pub fn ascii_escaped(json: &str) -> String {
    json.chars()
        .map(|c| match c.is_ascii() {
            true => c.to_string(),
            false => c
                .encode_utf16(&mut [0; 2])
                .iter()
                .map(|u| format!("\\u{u:04x}"))
                .collect(),
        })
        .collect()
}
