//! The four JSON dialects, rule by rule, and the JS and RFC 8785 writers against Node.

mod common;

use envelope::json::{Dialect, JsonWriter, from_str, to_string};
use serde_json::{Value, json};

fn js(text: &str) -> String {
    to_string(&from_str(text).unwrap(), Dialect::Js)
}
fn go(text: &str) -> String {
    to_string(&from_str(text).unwrap(), Dialect::Go)
}
fn newtonsoft(text: &str) -> String {
    to_string(&from_str(text).unwrap(), Dialect::Newtonsoft)
}
fn jcs(text: &str) -> String {
    to_string(&from_str(text).unwrap(), Dialect::Jcs)
}

#[test]
fn js_numbers_follow_number_to_string() {
    for (input, expected) in [
        ("1.0", "1"),
        ("1e21", "1e+21"),
        ("1e20", "100000000000000000000"),
        ("1e-7", "1e-7"),
        ("0.000001", "0.000001"),
        ("-0", "0"),
        ("-0.0", "0"),
        ("0.30000000000000004", "0.30000000000000004"),
        ("1.5e300", "1.5e+300"),
        ("123456789012", "123456789012"),
        ("-42", "-42"),
        ("2.5E3", "2500"),
    ] {
        assert_eq!(js(input), expected, "JS number {input}");
    }
    // 0.1 + 0.2 computed, not parsed.
    let sum = Value::from(0.1f64 + 0.2f64);
    assert_eq!(to_string(&sum, Dialect::Js), "0.30000000000000004");
}

#[test]
fn go_numbers_match_js_except_negative_zero() {
    for (input, expected) in [
        ("1.0", "1"),
        ("1e21", "1e+21"),
        ("1e-7", "1e-7"),
        ("0.000001", "0.000001"),
        ("-0.0", "-0"),
        ("100", "100"),
    ] {
        assert_eq!(go(input), expected, "Go number {input}");
    }
}

#[test]
fn newtonsoft_numbers_follow_dotnet_round_trip_format() {
    for (input, expected) in [
        ("1.0", "1.0"),
        ("1", "1"),
        ("100.0", "100.0"),
        ("1.5", "1.5"),
        ("1e14", "100000000000000.0"),
        ("1e15", "1E+15"),
        ("1.234e20", "1.234E+20"),
        ("0.0001", "0.0001"),
        ("0.00001", "1E-05"),
        ("1.5e-7", "1.5E-07"),
        ("-2.5", "-2.5"),
        ("1e300", "1E+300"),
        ("0.0", "0.0"),
    ] {
        assert_eq!(newtonsoft(input), expected, "Newtonsoft number {input}");
    }
}

#[test]
fn jcs_numbers_are_doubles() {
    assert_eq!(jcs("1.0"), "1");
    assert_eq!(jcs("1e21"), "1e+21");
    // Beyond 2^53 RFC 8785 serializes the double nearest to the integer.
    assert_eq!(jcs("18446744073709551615"), "18446744073709552000");
    // The other dialects keep every digit the user gave.
    assert_eq!(js("18446744073709551615"), "18446744073709551615");
    assert_eq!(go("-9223372036854775808"), "-9223372036854775808");
}

#[test]
fn js_key_order_puts_array_indices_first() {
    assert_eq!(
        js(r#"{"b":1,"2":2,"a":3,"10":4,"01":5,"4294967295":6,"4294967294":7,"0":8}"#),
        r#"{"0":8,"2":2,"10":4,"4294967294":7,"b":1,"a":3,"01":5,"4294967295":6}"#
    );
}

#[test]
fn go_sorts_map_keys_by_bytes_and_jcs_by_utf16() {
    let doc = r#"{"b":1,"a":2,"B":3,"é":4,"😀":5,"\uffff":6}"#;
    assert_eq!(go(doc), r#"{"B":3,"a":2,"b":1,"é":4,"￿":6,"😀":5}"#);
    // UTF-16: U+1F600 is a surrogate pair (0xD83D…) and sorts before U+FFFF.
    assert_eq!(jcs(doc), r#"{"B":3,"a":2,"b":1,"é":4,"😀":5,"￿":6}"#);
}

#[test]
fn newtonsoft_keeps_insertion_order() {
    assert_eq!(
        newtonsoft(r#"{"b":1,"2":2,"a":3}"#),
        r#"{"b":1,"2":2,"a":3}"#
    );
}

#[test]
fn string_escapes_per_dialect() {
    let s =
        Value::String("q\" b\\ /\u{8}\u{c}\n\r\t\u{1}\u{1f}\u{7f}\u{85}\u{2028}\u{2029}é😀".into());
    assert_eq!(
        to_string(&s, Dialect::Js),
        "\"q\\\" b\\\\ /\\b\\f\\n\\r\\t\\u0001\\u001f\u{7f}\u{85}\u{2028}\u{2029}é😀\""
    );
    assert_eq!(
        to_string(&s, Dialect::Go),
        "\"q\\\" b\\\\ /\\b\\f\\n\\r\\t\\u0001\\u001f\u{7f}\u{85}\\u2028\\u2029é😀\""
    );
    assert_eq!(
        to_string(&s, Dialect::Newtonsoft),
        "\"q\\\" b\\\\ /\\b\\f\\n\\r\\t\\u0001\\u001f\u{7f}\\u0085\\u2028\\u2029é😀\""
    );
    assert_eq!(to_string(&s, Dialect::Jcs), to_string(&s, Dialect::Js));
}

#[test]
fn byte_lengths_are_utf8_bytes() {
    // "€" is 3 UTF-8 bytes (1 UTF-16 unit); "😀" is 4 bytes (2 units).
    let v = json!({"k": "€😀"});
    assert_eq!(
        envelope::json::writer::byte_len(&v, Dialect::Js),
        r#"{"k":"€😀"}"#.len()
    );
    assert_eq!(envelope::json::writer::byte_len(&v, Dialect::Js), 15);
}

#[test]
fn newtonsoft_indented_layout() {
    let mut out = Vec::new();
    let mut w = JsonWriter::new(&mut out, Dialect::Newtonsoft).indented("  ");
    w.value(&from_str(r#"{"a":[1,{}],"b":{},"c":[]}"#).unwrap());
    assert_eq!(
        String::from_utf8(out).unwrap(),
        "{\n  \"a\": [\n    1,\n    {}\n  ],\n  \"b\": {},\n  \"c\": []\n}"
    );
}

/// Random documents through our JS writer and through Node's JSON.stringify, byte for byte;
/// the same for RFC 8785 against a key-sorting JSON.stringify.
#[test]
fn js_and_jcs_writers_match_node() {
    let mut g = common::Gen::new(0x5eed);
    let docs: Vec<Value> = (0..3000).map(|_| g.value(4)).collect();
    let input: String = docs.iter().map(|d| format!("{d}\n")).collect();
    let script = r#"
const canon = v => Array.isArray(v) ? v.map(canon)
  : (v !== null && typeof v === 'object')
    ? Object.keys(v).sort().reduce((o, k) => (o[k] = canon(v[k]), o), {}) : v;
const jcs = v => Array.isArray(v) ? '[' + v.map(jcs).join(',') + ']'
  : (v !== null && typeof v === 'object')
    ? '{' + Object.keys(v).sort().map(k => JSON.stringify(k) + ':' + jcs(v[k])).join(',') + '}'
    : JSON.stringify(v);
let out = [];
for (const line of require('fs').readFileSync(0, 'utf8').split('\n')) {
  if (!line) continue;
  const v = JSON.parse(line);
  out.push(JSON.stringify(v) + '\t' + jcs(v));
}
process.stdout.write(out.join('\n') + '\n');
"#;
    let node_out = common::node(script, &input);
    let lines: Vec<&str> = node_out.lines().collect();
    assert_eq!(lines.len(), docs.len());
    for (doc, line) in docs.iter().zip(lines) {
        let (node_js, node_jcs) = line.split_once('\t').unwrap();
        assert_eq!(
            to_string(doc, Dialect::Js),
            node_js,
            "JS dialect differs for {doc}"
        );
        assert_eq!(
            to_string(doc, Dialect::Jcs),
            node_jcs,
            "RFC 8785 differs for {doc}"
        );
    }
}
