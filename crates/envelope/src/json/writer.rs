//! A JSON writer with one output dialect per reference implementation.
//!
//! serde_json writes `1.0` as `1.0` and escapes strings its own way; the references
//! (JavaScript `JSON.stringify`, Go `encoding/json`, Newtonsoft.Json, RFC 8785) do not.
//! Byte-exact output needs each of their rules, so every codec writes through this type.
//!
//! Two ways to write an object:
//! - [`JsonWriter::value`] writes a `serde_json::Value`; object keys are ordered by the
//!   dialect's rule for *maps* (JS: integer-like keys first; Go: sorted by bytes; RFC 8785:
//!   sorted by UTF-16 units; Newtonsoft: insertion order).
//! - [`JsonWriter::begin_object`] / [`JsonWriter::key`] / [`JsonWriter::end_object`] write a
//!   *struct*: keys exactly in the order the codec gives them (Go struct fields, say).
//!
//! The same value in two dialects: JavaScript puts array-index keys first and writes `-0`
//! as `0`; Go sorts map keys by their bytes, keeps `-0` and escapes U+2028 (`JSON.stringify`
//! copies it raw).
//!
//! ```
//! use envelope::json::{Dialect, to_string};
//! use serde_json::json;
//!
//! let value = json!({"b": -0.0, "a": "x\u{2028}y", "10": 1.0, "2": null});
//! assert_eq!(
//!     to_string(&value, Dialect::Js),
//!     "{\"2\":null,\"10\":1,\"b\":0,\"a\":\"x\u{2028}y\"}"
//! );
//! assert_eq!(
//!     to_string(&value, Dialect::Go),
//!     r#"{"10":1,"2":null,"a":"x\u2028y","b":-0}"#
//! );
//! ```

use serde_json::{Map, Number, Value};

use super::number;

pub use super::Dialect;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Container {
    /// An object or array with nothing written in it yet.
    Empty,
    /// An object or array with at least one member written.
    Filled,
}

/// The room [`JsonWriter::raw`] leaves after a value it writes.
const RAW_SLACK: usize = 4096;

/// Writes JSON text in one [`Dialect`] into a byte buffer.
///
/// Values are written one call at a time: [`value`](Self::value) writes a whole
/// `serde_json::Value` (map keys in the dialect's order), the other methods write one
/// token of a document whose shape the caller gives (struct fields in their declaration
/// order). Commas, colons and indentation are the writer's business; nesting is the
/// caller's: every `begin_*` needs its `end_*`, and inside an object every value needs a
/// [`key`](Self::key) before it. The writer does not check this.
///
/// ```
/// use envelope::json::{Dialect, JsonWriter};
/// use serde_json::json;
///
/// // A Go struct: fields in declaration order; the map inside it sorted.
/// let mut out = Vec::new();
/// let mut w = JsonWriter::new(&mut out, Dialect::Go);
/// w.begin_object();
/// w.key("status");
/// w.string("ok");
/// w.field("data", &json!({"z": 1, "a": "\u{2028}"}));
/// w.end_object();
/// assert_eq!(out, br#"{"status":"ok","data":{"a":"\u2028","z":1}}"#);
///
/// // Newtonsoft, indented: insertion order, `1.0` stays a double.
/// let mut out = Vec::new();
/// JsonWriter::new(&mut out, Dialect::Newtonsoft)
///     .indented("  ")
///     .value(&json!({"z": 1.0, "a": []}));
/// assert_eq!(out, b"{\n  \"z\": 1.0,\n  \"a\": []\n}");
/// ```
pub struct JsonWriter<'a> {
    out: &'a mut Vec<u8>,
    dialect: Dialect,
    /// `Some(unit)` for indented output (Newtonsoft `Formatting.Indented` uses two spaces).
    indent: Option<&'static str>,
    stack: Vec<Container>,
    /// Set after a key was written: the next value follows the colon, not a comma.
    after_key: bool,
}

impl<'a> JsonWriter<'a> {
    /// A writer that appends compact JSON in `dialect` to `out`.
    pub fn new(out: &'a mut Vec<u8>, dialect: Dialect) -> Self {
        JsonWriter {
            out,
            dialect,
            indent: None,
            stack: Vec::new(),
            after_key: false,
        }
    }

    /// Indented output in the Newtonsoft style (`"key": value`, one member per line, each
    /// level indented by `unit`; empty containers stay `[]` and `{}`).
    pub fn indented(mut self, unit: &'static str) -> Self {
        self.indent = Some(unit);
        self
    }

    /// The dialect this writer writes.
    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// Length of the output buffer so far, bytes it held before the writer was made
    /// included: the offset of what is written next (for cutting later).
    pub fn len(&self) -> usize {
        self.out.len()
    }

    /// Whether the output buffer is empty.
    pub fn is_empty(&self) -> bool {
        self.out.is_empty()
    }

    fn newline(&mut self) {
        if let Some(unit) = self.indent {
            self.out.push(b'\n');
            for _ in 0..self.stack.len() {
                self.out.extend_from_slice(unit.as_bytes());
            }
        }
    }

    /// Separator and indentation before a member of the innermost container.
    fn before_value(&mut self) {
        if self.after_key {
            self.after_key = false;
            return;
        }
        if let Some(top) = self.stack.last_mut() {
            if *top == Container::Filled {
                self.out.push(b',');
            }
            *top = Container::Filled;
            self.newline();
        }
    }

    /// Starts an object (`{`).
    pub fn begin_object(&mut self) {
        self.before_value();
        self.out.push(b'{');
        self.stack.push(Container::Empty);
    }

    /// Ends the innermost object (`}`).
    pub fn end_object(&mut self) {
        self.close(b'}');
    }

    /// Starts an array (`[`).
    pub fn begin_array(&mut self) {
        self.before_value();
        self.out.push(b'[');
        self.stack.push(Container::Empty);
    }

    /// Ends the innermost array (`]`).
    pub fn end_array(&mut self) {
        self.close(b']');
    }

    fn close(&mut self, byte: u8) {
        let filled = self.stack.pop() == Some(Container::Filled);
        if filled {
            self.newline();
        }
        self.out.push(byte);
    }

    /// Writes an object key; the next call writes its value.
    pub fn key(&mut self, key: &str) {
        self.before_value();
        self.write_string_raw(key);
        self.out.push(b':');
        if self.indent.is_some() {
            self.out.push(b' ');
        }
        self.after_key = true;
    }

    /// Writes `"key": value` as one struct field.
    pub fn field(&mut self, key: &str, value: &Value) {
        self.key(key);
        self.value(value);
    }

    /// Writes a string, escaped by the dialect's rules.
    pub fn string(&mut self, s: &str) {
        self.before_value();
        self.write_string_raw(s);
    }

    /// Writes `true` or `false`.
    pub fn bool(&mut self, b: bool) {
        self.before_value();
        self.out
            .extend_from_slice(if b { b"true" } else { b"false" });
    }

    /// Writes `null`.
    pub fn null(&mut self) {
        self.before_value();
        self.out.extend_from_slice(b"null");
    }

    /// Writes a number as the dialect formats it: `1.0` is `1` in JS, Go and RFC 8785 and
    /// `1.0` in Newtonsoft; `-0` is `0` in JS and RFC 8785; integers keep all their digits
    /// except beyond 2^53 in RFC 8785, which rounds them to a double.
    pub fn number(&mut self, n: &Number) {
        self.before_value();
        number::write(self.out, n, self.dialect);
    }

    /// Writes an unsigned integer.
    pub fn u64(&mut self, n: u64) {
        self.number(&Number::from(n));
    }

    /// Writes pre-serialized JSON text as one value (the caller vouches for it).
    pub(crate) fn raw(&mut self, json: &[u8]) {
        self.before_value();
        // With room for what usually follows (closing brackets, a few members): a buffer
        // grown to the size of a large value would otherwise be doubled for its last bytes.
        self.out.reserve(json.len() + RAW_SLACK);
        self.out.extend_from_slice(json);
    }

    /// Writes any value, ordering object keys by the dialect's map rule.
    pub fn value(&mut self, v: &Value) {
        match v {
            Value::Null => self.null(),
            Value::Bool(b) => self.bool(*b),
            Value::Number(n) => self.number(n),
            Value::String(s) => self.string(s),
            Value::Array(items) => {
                self.begin_array();
                for item in items {
                    self.value(item);
                }
                self.end_array();
            }
            Value::Object(map) => self.object(map),
        }
    }

    /// Writes an object's members, keys ordered by the dialect's map rule.
    pub fn object(&mut self, map: &Map<String, Value>) {
        self.begin_object();
        match self.dialect {
            Dialect::Newtonsoft => {
                for (k, v) in map {
                    self.field(k, v);
                }
            }
            Dialect::Js => {
                if map.keys().any(|k| array_index(k).is_some()) {
                    for (k, v) in js_key_order(map) {
                        self.field(k, v);
                    }
                } else {
                    for (k, v) in map {
                        self.field(k, v);
                    }
                }
            }
            Dialect::Go | Dialect::Jcs => {
                for (k, v) in ordered_entries(map, self.dialect) {
                    self.field(k, v);
                }
            }
        }
        self.end_object();
    }

    fn write_string_raw(&mut self, s: &str) {
        write_escaped(self.out, s, self.dialect);
    }
}

/// The ECMAScript array-index value of a key ("0", "42"; no leading zeros; < 2^32 - 1).
pub(crate) fn array_index(key: &str) -> Option<u32> {
    let bytes = key.as_bytes();
    if bytes.is_empty() || bytes.len() > 10 || !bytes.iter().all(u8::is_ascii_digit) {
        return None;
    }
    if bytes.len() > 1 && bytes[0] == b'0' {
        return None;
    }
    let n: u64 = key.parse().ok()?;
    (n < u64::from(u32::MAX)).then_some(n as u32)
}

/// The entries of `map` in the order `dialect` writes a map's keys.
pub(crate) fn ordered_entries(
    map: &Map<String, Value>,
    dialect: Dialect,
) -> Vec<(&String, &Value)> {
    let mut entries: Vec<_> = match dialect {
        Dialect::Js => return js_key_order(map),
        Dialect::Newtonsoft => return map.iter().collect(),
        Dialect::Go | Dialect::Jcs => map.iter().collect(),
    };
    if dialect == Dialect::Go {
        entries.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    } else {
        entries.sort_unstable_by(|a, b| a.0.encode_utf16().cmp(b.0.encode_utf16()));
    }
    entries
}

/// `JSON.stringify` key order: array-index keys ascending, then the rest in insertion order.
fn js_key_order(map: &Map<String, Value>) -> Vec<(&String, &Value)> {
    let mut indexed: Vec<(u32, &String, &Value)> = Vec::new();
    let mut named = Vec::new();
    for (k, v) in map {
        match array_index(k) {
            Some(i) => indexed.push((i, k, v)),
            None => named.push((k, v)),
        }
    }
    indexed.sort_unstable_by_key(|e| e.0);
    indexed
        .into_iter()
        .map(|(_, k, v)| (k, v))
        .chain(named)
        .collect()
}

/// What each byte needs: 0 = copied raw, `u` = `\u00xx`, a letter = its short escape,
/// `?` = the lead byte of a character some dialects escape (U+0085, U+2028, U+2029).
const fn escapes(multibyte: &[u8]) -> [u8; 256] {
    let mut table = [0u8; 256];
    let mut i = 0;
    while i < 0x20 {
        table[i] = b'u';
        i += 1;
    }
    table[0x08] = b'b';
    table[0x09] = b't';
    table[0x0a] = b'n';
    table[0x0c] = b'f';
    table[0x0d] = b'r';
    table[b'"' as usize] = b'"';
    table[b'\\' as usize] = b'\\';
    let mut j = 0;
    while j < multibyte.len() {
        table[multibyte[j] as usize] = b'?';
        j += 1;
    }
    table
}
/// JS and RFC 8785: only `"`, `\` and control characters.
pub(crate) static JS_ESCAPES: [u8; 256] = escapes(&[]);
/// Go: also U+2028 and U+2029 (lead byte 0xE2).
static GO_ESCAPES: [u8; 256] = escapes(&[0xE2]);
/// Newtonsoft: also U+0085 (lead byte 0xC2), U+2028 and U+2029.
static NEWTONSOFT_ESCAPES: [u8; 256] = escapes(&[0xC2, 0xE2]);

/// The escape of the character at `bytes[i]`, whose lead byte is marked `?`, if the dialect
/// escapes that character.
fn multibyte_escape(bytes: &[u8], i: usize, dialect: Dialect) -> Option<&'static [u8]> {
    match (bytes[i], bytes.get(i + 1), bytes.get(i + 2)) {
        (0xE2, Some(0x80), Some(0xA8)) => Some(b"\\u2028"),
        (0xE2, Some(0x80), Some(0xA9)) => Some(b"\\u2029"),
        (0xC2, Some(0x85), _) if dialect == Dialect::Newtonsoft => Some(b"\\u0085"),
        _ => None,
    }
}

/// Writes `s` as a JSON string literal, escaped by the dialect's rules.
pub(crate) fn write_escaped(out: &mut Vec<u8>, s: &str, dialect: Dialect) {
    out.reserve(s.len() + 2);
    out.push(b'"');
    write_escaped_chars(out, s, dialect);
    out.push(b'"');
}

/// The characters of `s` as `dialect` writes them in a string, without the quotes: a
/// string written a piece at a time is its pieces written so, one after the other.
pub(crate) fn write_escaped_chars(out: &mut Vec<u8>, s: &str, dialect: Dialect) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let table = match dialect {
        Dialect::Js | Dialect::Jcs => &JS_ESCAPES,
        Dialect::Go => &GO_ESCAPES,
        Dialect::Newtonsoft => &NEWTONSOFT_ESCAPES,
    };
    let bytes = s.as_bytes();
    out.reserve(bytes.len());
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        let escape = table[bytes[i] as usize];
        if escape == 0 {
            i += 1;
            continue;
        }
        if escape == b'?' {
            let Some(text) = multibyte_escape(bytes, i, dialect) else {
                i += 1;
                continue;
            };
            out.extend_from_slice(&bytes[start..i]);
            out.extend_from_slice(text);
            // U+0085 is two bytes in UTF-8, U+2028 and U+2029 three.
            i += if bytes[i] == 0xC2 { 2 } else { 3 };
            start = i;
            continue;
        }
        out.extend_from_slice(&bytes[start..i]);
        if escape == b'u' {
            out.extend_from_slice(&[
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[(bytes[i] >> 4) as usize],
                HEX[(bytes[i] & 0xF) as usize],
            ]);
        } else {
            out.extend_from_slice(&[b'\\', escape]);
        }
        i += 1;
        start = i;
    }
    out.extend_from_slice(&bytes[start..]);
}

/// Serializes a value compactly (no whitespace) in `dialect`: the bytes that dialect's
/// reference writes for it. See the [module docs](self) for an example.
pub fn to_vec(v: &Value, dialect: Dialect) -> Vec<u8> {
    let mut out = Vec::new();
    JsonWriter::new(&mut out, dialect).value(v);
    out
}

/// Serializes a value compactly in `dialect` as a `String` (the bytes of [`to_vec`]).
pub fn to_string(v: &Value, dialect: Dialect) -> String {
    // The writer only ever emits UTF-8: it copies `str` slices and ASCII escapes.
    String::from_utf8(to_vec(v, dialect)).expect("writer emits UTF-8")
}

/// The UTF-8 byte length of the compact serialization of `v` in `dialect`. It writes the
/// value to measure it; for the JS dialect,
/// [`size::js_size`](crate::json::size::js_size) measures without writing.
pub fn byte_len(v: &Value, dialect: Dialect) -> usize {
    to_vec(v, dialect).len()
}
