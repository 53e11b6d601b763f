//! The pull reader against serde_json on arbitrary bytes: `json::reader::Reader` accepts
//! exactly what `serde_json::from_slice::<Value>` accepts, its events build the same value
//! (byte for byte once written, numbers as written read back by serde_json), a skipped
//! value's span reads back to the value, and a refusal is serde_json's error (message and
//! location). A panic or a difference is a crash.
#![no_main]

use envelope::json::reader::{Event, Reader};
use libfuzzer_sys::fuzz_target;
use serde_json::{Map, Value};

/// The value from `event` on; arrays' and objects' values after a key whose text starts
/// with `s` are skipped and read back from their span.
fn build(event: Event<'_>, reader: &mut Reader<'_>, input: &[u8]) -> Result<Value, serde_json::Error> {
    Ok(match event {
        Event::Null => Value::Null,
        Event::Bool(b) => Value::Bool(b),
        Event::Number(text) => Value::Number(serde_json::from_str(text).expect("a number")),
        Event::String(s) => Value::String(s.value().into_owned()),
        Event::BeginArray => {
            let mut items = Vec::new();
            loop {
                match reader.next()?.expect("inside an array") {
                    Event::EndArray => break,
                    event => items.push(build(event, reader, input)?),
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
                let value = if key.starts_with('s') {
                    let span = reader.skip()?.expect("a member's value");
                    serde_json::from_slice(&input[span]).expect("a skipped span is a value")
                } else {
                    let event = reader.next()?.expect("a member's value");
                    build(event, reader, input)?
                };
                map.insert(key, value);
            }
            Value::Object(map)
        }
        other => panic!("a value, not {other:?}"),
    })
}

fn read(input: &[u8]) -> Result<Value, serde_json::Error> {
    let mut reader = Reader::new(input);
    let first = reader.next()?.expect("a document has a value");
    let value = build(first, &mut reader, input)?;
    assert_eq!(reader.next()?, None);
    Ok(value)
}

fuzz_target!(|data: &[u8]| {
    match (serde_json::from_slice::<Value>(data), read(data)) {
        (Ok(want), Ok(got)) => assert_eq!(
            serde_json::to_string(&got).unwrap(),
            serde_json::to_string(&want).unwrap()
        ),
        (Err(want), Err(got)) => assert_eq!(got.to_string(), want.to_string()),
        (Ok(_), Err(e)) => panic!("the reader refused what serde_json reads: {e}"),
        (Err(e), Ok(_)) => panic!("the reader read what serde_json refuses: {e}"),
    }
});
