//! The pull reader against serde_json: on generated documents and on their mutations
//! (truncated, bytes replaced, inserted, nested past the limit), `json::reader::Reader`
//! accepts exactly what `serde_json::from_slice::<Value>` accepts, its events build the
//! very `Value` serde_json builds (byte for byte once written), a skipped value's span reads
//! back to the value, and a refusal is serde_json's own error (message, line, column).

mod common;

use common::Gen;
use envelope::json::reader::{Event, Piece, Reader};
use serde_json::{Map, Value};

/// The value the events of `reader` describe, skipping (and reading back the span of) a
/// value now and then.
fn build(reader: &mut Reader<'_>, input: &[u8], g: &mut Gen) -> Result<Value, serde_json::Error> {
    let first = reader.next()?.expect("a document has a value");
    let value = build_from(first, reader, input, g)?;
    assert_eq!(reader.next()?, None, "nothing after the root value");
    Ok(value)
}

fn build_from(
    event: Event<'_>,
    reader: &mut Reader<'_>,
    input: &[u8],
    g: &mut Gen,
) -> Result<Value, serde_json::Error> {
    Ok(match event {
        Event::Null => Value::Null,
        Event::Bool(b) => Value::Bool(b),
        Event::Number(text) => Value::Number(serde_json::from_str(text).expect("a number")),
        Event::String(s) => {
            // Read in pieces, and whole: the same characters.
            let mut pieced = String::new();
            for piece in s.pieces() {
                match piece {
                    Piece::Text(t) => pieced.push_str(t),
                    Piece::Char(c) => pieced.push(c),
                }
            }
            assert_eq!(pieced, s.value());
            assert_eq!(s.has_escapes(), s.raw().contains('\\'));
            Value::String(pieced)
        }
        Event::BeginArray => {
            let mut items = Vec::new();
            loop {
                if g.below(5) == 0 {
                    match skipped(reader, input)? {
                        Some(value) => items.push(value),
                        None => break,
                    }
                    continue;
                }
                match reader.next()?.expect("inside an array") {
                    Event::EndArray => break,
                    event => items.push(build_from(event, reader, input, g)?),
                }
            }
            Value::Array(items)
        }
        Event::BeginObject => {
            let mut map = Map::new();
            loop {
                let key = match reader.next()?.expect("inside an object") {
                    Event::EndObject => break,
                    Event::Key(key) => key.value().into_owned(),
                    other => panic!("a key or the end, not {other:?}"),
                };
                let value = if g.below(5) == 0 {
                    skipped(reader, input)?.expect("a member's value")
                } else {
                    let event = reader.next()?.expect("a member's value");
                    build_from(event, reader, input, g)?
                };
                map.insert(key, value);
            }
            Value::Object(map)
        }
        other => panic!("a value, not {other:?}"),
    })
}

/// The next item skipped and its span read back; `None` at the array's end (then read).
fn skipped(reader: &mut Reader<'_>, input: &[u8]) -> Result<Option<Value>, serde_json::Error> {
    let Some(span) = reader.skip()? else {
        return Ok(None);
    };
    let text = &input[span];
    assert!(!text.is_empty());
    assert!(!text[0].is_ascii_whitespace() && !text.last().unwrap().is_ascii_whitespace());
    Ok(Some(
        serde_json::from_slice(text).expect("a skipped span is a value"),
    ))
}

/// Reads `input` both ways and asserts they agree.
fn agree(input: &[u8], seed: u64) -> bool {
    let expected = serde_json::from_slice::<Value>(input);
    let mut reader = Reader::new(input);
    let got = build(&mut reader, input, &mut Gen::new(seed));
    let shown = String::from_utf8_lossy(input);
    match (expected, got) {
        (Ok(want), Ok(got)) => {
            assert_eq!(
                serde_json::to_string(&got).unwrap(),
                serde_json::to_string(&want).unwrap(),
                "{shown}"
            );
            true
        }
        (Err(want), Err(got)) => {
            assert_eq!(got.to_string(), want.to_string(), "{shown}");
            assert_eq!((got.line(), got.column()), (want.line(), want.column()));
            false
        }
        (Ok(_), Err(e)) => panic!("the reader refused what serde_json reads: {e}\n{shown}"),
        (Err(e), Ok(_)) => panic!("the reader read what serde_json refuses ({e})\n{shown}"),
    }
}

/// A document written with random white space between its tokens.
fn spaced(value: &Value, g: &mut Gen) -> Vec<u8> {
    let compact = serde_json::to_vec(value).unwrap();
    if g.below(2) == 0 {
        return compact;
    }
    let mut out = Vec::new();
    let mut in_string = false;
    let mut escaped = false;
    for &b in &compact {
        out.push(b);
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        if b == b'"' {
            in_string = true;
        } else if matches!(b, b'{' | b'[' | b',' | b':') && g.below(3) == 0 {
            out.extend_from_slice([&b" "[..], b"\n  ", b"\t", b"\r\n"][g.below(4) as usize]);
        }
    }
    out
}

/// Bytes that make JSON text change meaning.
const INTERESTING: &[u8] = b"\"\\{}[],:0-e.u+E9 \n\x00\x1f\x7f\xff\xc3\xa9tfn/";

fn mutated(mut doc: Vec<u8>, g: &mut Gen) -> Vec<u8> {
    for _ in 0..1 + g.below(2) {
        if doc.is_empty() {
            break;
        }
        let at = g.below(doc.len() as u64) as usize;
        let byte = INTERESTING[g.below(INTERESTING.len() as u64) as usize];
        match g.below(4) {
            0 => doc.truncate(at),
            1 => doc[at] = byte,
            2 => doc.insert(at, byte),
            _ => {
                doc.remove(at);
            }
        }
    }
    doc
}

#[test]
fn generated_documents_and_their_mutations() {
    let mut g = Gen::new(0x0000_7265_6164_6572);
    let (mut read, mut refused) = (0, 0);
    for i in 0..20_000u64 {
        let value = g.value(4);
        let mut doc = spaced(&value, &mut g);
        if i % 2 == 1 {
            doc = mutated(doc, &mut g);
        }
        if agree(&doc, i) {
            read += 1;
        } else {
            refused += 1;
        }
    }
    // Both sides of the property are exercised.
    assert!(
        read > 10_000 && refused > 3_000,
        "{read} read, {refused} refused"
    );
}

#[test]
fn the_hard_cases_of_the_grammar() {
    let cases: &[&[u8]] = &[
        b"",
        b"   ",
        b"0",
        b"-0",
        b"-",
        b"01",
        b"-01",
        b"1.",
        b"1.e5",
        b".5",
        b"1e",
        b"1e+",
        b"1E-7",
        b"1e400",
        b"-1e400",
        b"1e-400",
        b"0e99999999999999999999",
        b"1e99999999999999999999",
        b"18446744073709551615",
        b"18446744073709551616",
        b"-9223372036854775808",
        b"-9223372036854775809",
        b"123456789012345678901234567890",
        b"tru",
        b"truex",
        b"nul",
        b"[1,]",
        b"[,1]",
        b"{\"a\":1,}",
        b"{\"a\" 1}",
        b"{1:1}",
        b"{\"a\":1}}",
        b"[1] [2]",
        b"\"\\ud800\"",
        b"\"\\udc00\"",
        b"\"\\ud800\\u0041\"",
        b"\"\\ud800\\n\"",
        b"\"\\ud83d\\ude00\"",
        b"\"\\u00e9\\u2028\"",
        b"\"\\x\"",
        b"\"\\u12\"",
        b"\"\\u12g4\"",
        b"\"a\x01b\"",
        b"\"\xff\"",
        b"\"\xc3\"",
        b"\"\xed\xa0\x80\"",
        b"\xef\xbb\xbf{}",
        b"{\"a\":1,\"a\":2}",
        b"\"unterminated",
        b"[\"a\",",
        b"{\"a\"",
        b"{\"a\":",
        b"\n\n  [1,\n  2,\n  x]",
    ];
    for (i, case) in cases.iter().enumerate() {
        agree(case, i as u64);
    }
}

#[test]
fn nesting_to_the_limit_and_past_it() {
    for depth in [126, 127, 128, 129, 400] {
        for (open, close) in [("[", "]"), ("{\"a\":", "}")] {
            let doc = format!("{}1{}", open.repeat(depth), close.repeat(depth));
            assert_eq!(agree(doc.as_bytes(), depth as u64), depth <= 127, "{depth}");
        }
    }
}

#[test]
fn skip_gives_the_value_as_written() {
    let doc = br#"{ "a" : [1, {"b": "c\n"}] , "d": -0.50e1 }"#;
    let mut reader = Reader::new(doc);
    assert_eq!(reader.next().unwrap(), Some(Event::BeginObject));
    assert!(matches!(reader.next().unwrap(), Some(Event::Key(k)) if k.raw() == "a"));
    let span = reader.skip().unwrap().unwrap();
    assert_eq!(&doc[span], br#"[1, {"b": "c\n"}]"#);
    assert!(matches!(reader.next().unwrap(), Some(Event::Key(k)) if k.raw() == "d"));
    let span = reader.skip().unwrap().unwrap();
    assert_eq!(&doc[span], b"-0.50e1");
    // No value comes next: the object's end (a misuse, said as an error; nothing read).
    assert!(reader.skip().is_err());
    assert_eq!(reader.next().unwrap(), Some(Event::EndObject));
    // At an array's end, skip reads the end.
    let mut reader = Reader::new(b"[ ]");
    assert_eq!(reader.next().unwrap(), Some(Event::BeginArray));
    assert_eq!(reader.skip().unwrap(), None);
    assert_eq!(reader.next().unwrap(), None);
}
