//! Numbers are numbers: `1`, `1.0` and `1e0` are one value wherever two values are compared
//! (the MCP mirror check first), so any document `validate` accepts, `shape` and `convert`
//! accept — with numbers in any spelling, keys in any order, compact or indented, `\u`
//! escapes or not.

mod common;

use common::Gen;
use envelope::convert::Document;
use envelope::shape::Pipeline;
use envelope::validate::{Options, Profile, validate_document};
use envelope::{EncodeOptions, Envelope, FormatId, encode};
use serde_json::{Value, json};

/// How a generated document spells what it holds.
#[derive(Clone, Copy, Debug)]
struct Spelling {
    /// Python's `json.dumps`: `", "` and `": "` between tokens.
    spaced: bool,
    /// Python's `ensure_ascii`: every character past ASCII as `\u` escapes.
    ascii: bool,
    /// Members in reverse order.
    reversed: bool,
    /// The seed of each number's spelling.
    seed: u64,
}

impl Spelling {
    fn new(g: &mut Gen) -> Self {
        Spelling {
            spaced: g.below(2) == 0,
            ascii: g.below(2) == 0,
            reversed: g.below(4) == 0,
            seed: g.next(),
        }
    }
}

/// `value` as JSON text in `spelling`.
fn spell(value: &Value, spelling: Spelling) -> String {
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
    if !ascii {
        return json;
    }
    let mut out = String::new();
    for c in json.chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        }
    }
    out
}

/// An MCP result as the Python SDK writes it: `structuredContent` and its text mirror (or a
/// summary beside it), each spelled its own way.
fn mcp_result(g: &mut Gen) -> Value {
    let mut structured = serde_json::Map::new();
    for _ in 0..g.below(5) {
        structured.insert(g.key(), g.value(3));
    }
    let structured = Value::Object(structured);
    let mirror = spell(&structured, Spelling::new(g));
    let content = match g.below(3) {
        0 => json!([{"type": "text", "text": mirror}]),
        1 => json!([{"type": "text", "text": "summary"}, {"type": "text", "text": mirror}]),
        _ => json!([{"type": "text", "text": g.string()}]),
    };
    let mut result = json!({"content": content, "structuredContent": structured});
    if g.below(4) == 0 {
        result["isError"] = json!(false);
    }
    result
}

/// A document of any format, its envelope generated, written by the format's encoder.
fn encoded(g: &mut Gen) -> Value {
    let format = FormatId::ALL[g.below(FormatId::ALL.len() as u64) as usize];
    let mut payload = serde_json::Map::new();
    for _ in 0..g.below(5) {
        payload.insert(g.key(), g.value(3));
    }
    let env = Envelope {
        tool: Some("search".into()),
        ..Envelope::ok(Value::Object(payload))
    };
    let options = EncodeOptions {
        now: Some("2026-07-04T00:00:00Z".into()),
        ..EncodeOptions::default()
    };
    let bytes = encode(format, &env, &options).unwrap().bytes;
    serde_json::from_slice(&bytes).unwrap()
}

/// Every reading `shape`, `convert` and `unwrap` make of `doc` accepts it, when `validate`
/// does; `Some(format)` when it was valid.
fn check(doc: &[u8]) -> Option<FormatId> {
    let report = validate_document(doc, &Options::new(None, Profile::Spec));
    if !report.is_valid() {
        return None;
    }
    let text = String::from_utf8_lossy(doc);
    Pipeline::new(doc)
        .run()
        .unwrap_or_else(|e| panic!("shape refused a valid document: {e}\n{text}"));
    Pipeline::new(doc)
        .limit(1 << 20)
        .run()
        .unwrap_or_else(|e| panic!("shape --limit refused a valid document: {e}\n{text}"));
    let document = Document::new(doc);
    for to in FormatId::ALL {
        document
            .convert(to, &EncodeOptions::default())
            .unwrap_or_else(|e| panic!("convert --to {to} refused a valid document: {e}\n{text}"));
    }
    document
        .unwrap()
        .unwrap_or_else(|e| panic!("unwrap refused a valid document: {e}\n{text}"));
    report.format
}

#[test]
fn the_python_sdks_mirror_of_a_float_is_a_mirror() {
    let doc = br#"{"content":[{"type":"text","text":"{\"score\":1.0}"}],"structuredContent":{"score":1.0}}"#;
    assert_eq!(check(doc), Some(FormatId::Mcp));
    let doc = br#"{"content":[{"type":"text","text":"{\"score\": 1e0, \"n\": 0.250}"}],"structuredContent":{"n":0.25,"score":1}}"#;
    assert_eq!(check(doc), Some(FormatId::Mcp));
    // A mirror that says another number is still refused.
    let doc = br#"{"content":[{"type":"text","text":"{\"score\":1.5}"}],"structuredContent":{"score":1}}"#;
    let report = validate_document(doc, &Options::new(None, Profile::Spec));
    assert!(
        report.findings.iter().any(|f| f.rule == "mcp.mirror"),
        "{:?}",
        report.findings
    );
}

#[test]
fn any_document_validate_accepts_shape_and_convert_accept() {
    let mut g = Gen::new(0x006e_756d_6265_7273);
    let mut valid = std::collections::BTreeMap::<&str, usize>::new();
    for _ in 0..1500 {
        let value = if g.below(2) == 0 {
            mcp_result(&mut g)
        } else {
            encoded(&mut g)
        };
        let doc = spell(&value, Spelling::new(&mut g));
        if let Some(format) = check(doc.as_bytes()) {
            *valid.entry(format.as_str()).or_default() += 1;
        }
    }
    // The property is about valid documents: most generated ones must be, in every format.
    assert_eq!(valid.len(), FormatId::ALL.len(), "{valid:?}");
    assert!(valid["mcp"] >= 500, "{valid:?}");
}
