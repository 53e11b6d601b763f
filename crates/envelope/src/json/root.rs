//! Reading a document's root object member by member with the [pull reader](super::reader):
//! each member built, or kept as its text, as the caller asks.

use serde_json::Value;

use super::parse::{checked_text, from_serde, from_slice, location_at, trailing};
use crate::error::{Error, JsonErrorKind};

/// What [`read_root`] builds of a root member: its value from its key and its text.
pub(crate) type MemberRead<'i, 'f> =
    dyn FnMut(&str, &'i [u8]) -> Result<Value, serde_json::Error> + 'f;

/// What [`from_slice`] gives, with each root member's value given by `member` from its
/// key and its text (checked already: serde_json reads it), in the member's place (of a
/// repeated key, the last value in the first one's place, as serde_json's map keeps
/// them): the document checked in one pass of the [pull reader](super::reader)
/// (serde_json's acceptance and errors) that builds only what `member` builds. A root that
/// is not an object reads as an empty value of its kind.
pub(crate) fn read_root<'i>(
    input: &'i [u8],
    member: &mut MemberRead<'i, '_>,
) -> Result<Value, Error> {
    use super::reader::{Event, Reader};
    checked_text(input)?;
    let mut reader = Reader::new(input);
    let mut root = serde_json::Map::new();
    // For an order of events the reader never gives (it reports every defect itself).
    let whole_error = || from_slice(input).err().unwrap_or_else(|| eof(input));
    // An error once the root value is read whole is about data after it.
    let failed = |e: serde_json::Error, done: bool| match done {
        true => trailing(&e, input),
        false => from_serde(&e, input),
    };
    let value = match reader.next().map_err(|e| failed(e, false))? {
        Some(Event::BeginObject) => loop {
            match reader.next().map_err(|e| failed(e, false))? {
                Some(Event::Key(key)) => {
                    let key = key.value().into_owned();
                    let span = reader.skip().map_err(|e| failed(e, false))?;
                    let Some(span) = span else {
                        return Err(whole_error());
                    };
                    let value = member(&key, &input[span]).map_err(|e| from_serde(&e, input))?;
                    root.insert(key, value);
                }
                Some(Event::EndObject) => break Value::Object(std::mem::take(&mut root)),
                _ => return Err(whole_error()),
            }
        },
        Some(Event::BeginArray) => {
            while reader.depth() > 0 {
                reader.next().map_err(|e| failed(e, false))?;
            }
            Value::Array(Vec::new())
        }
        Some(Event::String(_)) => Value::String(String::new()),
        Some(Event::Number(_)) => Value::from(0),
        Some(Event::Bool(b)) => Value::Bool(b),
        Some(Event::Null) => Value::Null,
        _ => return Err(whole_error()),
    };
    match reader.next().map_err(|e| failed(e, true))? {
        None => Ok(value),
        Some(_) => Err(whole_error()),
    }
}

/// Whether `text` (JSON) may have a member `key` somewhere: its root is an object and the key
/// is written as it is somewhere (a key written with escapes is not looked for: a caller
/// reads such a document built, as before).
pub(crate) fn may_hold_key(text: &[u8], key: &str) -> bool {
    let starts_object = text
        .iter()
        .find(|b| !b.is_ascii_whitespace())
        .is_some_and(|b| *b == b'{');
    starts_object && memchr::memmem::find(text, format!("\"{key}\"").as_bytes()).is_some()
}

/// The value of `text`, a JSON value read already (serde_json reads it), but the member
/// `key` of its root object is not built: its place holds `null`, and the text of its value
/// (the last of a repeated key, the one serde_json's map keeps) is given beside it. Not an
/// object, or no such member: built whole.
pub(crate) fn checked_without<'i>(
    text: &'i [u8],
    key: &str,
) -> Result<(Value, Option<&'i [u8]>), serde_json::Error> {
    use super::reader::{Event, Reader};
    if !may_hold_key(text, key) {
        return Ok((serde_json::from_slice(text)?, None));
    }
    let mut reader = Reader::new(text);
    reader.next()?;
    let mut object = serde_json::Map::new();
    let mut kept = None;
    while let Some(Event::Key(name)) = reader.next()? {
        let name = name.value().into_owned();
        let Some(span) = reader.skip()? else {
            // Never: a key is followed by its value.
            return serde_json::from_slice(text).map(|value| (value, None));
        };
        let value = match name == key {
            true => {
                kept = Some(&text[span]);
                Value::Null
            }
            false => serde_json::from_slice(&text[span])?,
        };
        object.insert(name, value);
    }
    Ok((Value::Object(object), kept))
}

/// The error for input that ends inside the document.
fn eof(input: &[u8]) -> Error {
    Error::Json {
        kind: JsonErrorKind::Eof,
        message: "the input ends inside the document".into(),
        location: location_at(input, input.len()),
    }
}
