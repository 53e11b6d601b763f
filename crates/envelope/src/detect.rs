//! Which format a document is in, and why we think so.
//!
//! Each format states its own evidence ([`Format::detect`](crate::formats::Format::detect));
//! detection takes the most specific ([`Rank`](crate::formats::Rank)).

use serde_json::{Map, Value};

use crate::error::{Error, JsonErrorKind, Location, Result};
use crate::formats::{self, FormatId};

/// A detected format and the evidence for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Detection {
    /// The format.
    pub format: FormatId,
    /// What was seen, in words.
    pub reason: String,
}

/// Detects the format of raw input (JSON, or a bare tool-envelope-v1 block).
///
/// ```
/// let found = envelope::detect(br#"{"data":1,"meta":{"source":"local"}}"#).unwrap();
/// assert_eq!(found.format.as_str(), "operations");
/// assert!(envelope::detect(b"[]").is_err());
/// ```
pub fn detect(input: &[u8]) -> Result<Detection> {
    if let Some((format, evidence)) = formats::identify_text(input) {
        return Ok(Detection {
            format: format.id(),
            reason: evidence.reason,
        });
    }
    // Only the members detection reads are built (each whole), so detection answers as
    // for the whole document, in the size of those members.
    let value = formats::detection::members(input)?;
    detect_value(&value)
}

/// Detects the format of a parsed document.
pub fn detect_value(value: &Value) -> Result<Detection> {
    match formats::identify(value) {
        Some((format, evidence)) => Ok(Detection {
            format: format.id(),
            reason: evidence.reason,
        }),
        None => Err(formats::undetected(value)),
    }
}

/// Inputs this large or larger are checked by [`refuse_early`] before they are read whole.
pub(crate) const REFUSE_EARLY_FROM: usize = formats::detection::REFUSE_FROM;

/// `Err`: `input` is valid JSON that no format can be — its root is not an object, or no
/// member of its root is one detection reads — said after one pass that builds nothing
/// ([`json::reader`](crate::json::reader)), with the error detection of the whole document
/// gives. `Ok`: read on (the pass stops at the first root member detection reads; a
/// document that is not valid JSON is left to the whole read, which says where). Inputs
/// under [`REFUSE_EARLY_FROM`] are not looked at: reading them whole costs little.
///
/// A 68 MB object that is no envelope was refused after 15 s and 1.1 GB (debug build),
/// built whole; this refuses it in one pass over its bytes.
pub(crate) fn refuse_early(input: &[u8]) -> Result<()> {
    use crate::json::reader::{Event, Reader};
    if input.len() < REFUSE_EARLY_FROM {
        return Ok(());
    }
    let mut reader = Reader::new(input);
    let Ok(Some(first)) = reader.next() else {
        return Ok(());
    };
    let kind = match first {
        Event::BeginObject => None,
        Event::BeginArray => Some(Value::Array(Vec::new())),
        Event::String(_) => Some(Value::String(String::new())),
        Event::Number(_) => Some(Value::from(0)),
        Event::Bool(b) => Some(Value::Bool(b)),
        Event::Null => Some(Value::Null),
        _ => return Ok(()),
    };
    if kind.is_some() {
        // Skip the rest of the root value, then nothing but white space may follow.
        while reader.depth() > 0 {
            if reader.next().is_err() {
                return Ok(());
            }
        }
    } else {
        loop {
            match reader.next() {
                Ok(Some(Event::Key(key))) => {
                    if formats::DETECTION_KEYS.contains(&key.value().as_ref()) {
                        return Ok(());
                    }
                    if !matches!(reader.skip(), Ok(Some(_))) {
                        return Ok(());
                    }
                }
                Ok(Some(Event::EndObject)) => break,
                _ => return Ok(()),
            }
        }
    }
    if !matches!(reader.next(), Ok(None)) {
        return Ok(());
    }
    Err(formats::undetected(
        &kind.unwrap_or_else(|| Value::Object(Map::new())),
    ))
}

/// A document this large or smaller is detected exactly as [`detect`] detects its bytes;
/// of a larger one, [`Detector`] keeps only what detection reads (16 MiB).
pub const DETECT_WINDOW: usize = 16 << 20;

/// Of a root member larger than this, a [`Detector`] keeps the beginning only (256 KiB).
const MEMBER_CAP: usize = 256 << 10;

/// Keys longer than this name no member detection reads.
const KEY_CAP: usize = 64;

/// Detects the format of a document fed in pieces (a file, standard input), in bounded
/// memory whatever its size.
///
/// A document of at most [`DETECT_WINDOW`] bytes is held and detected exactly as
/// [`detect`] does. Past the window, nothing more is held than the root members detection
/// reads (`content`, `meta`, `_meta`, `__envelope`, …), each up to 256 KiB (the beginning of a
/// larger one, read with its end cut off), and reading stops where the root object closes.
/// The rest of the document is scanned for its structure only (strings, brackets), not
/// validated: `envelope validate` does that.
///
/// Why not only the top of the document: ctxo writes `_meta` after its payload and
/// operations writes `meta` after `data`, so the members that name them come last.
///
/// ```
/// use envelope::detect::Detector;
///
/// let mut detector = Detector::with_window(16);
/// let doc = br#"{"data":[1,2,3,4,5,6,7,8,9,10],"meta":{"source":"local"}}"#;
/// for piece in doc.chunks(7) {
///     if !detector.feed(piece)? {
///         break;
///     }
/// }
/// assert_eq!(detector.finish()?.format.as_str(), "operations");
/// # Ok::<(), envelope::Error>(())
/// ```
#[derive(Debug)]
pub struct Detector {
    window: usize,
    /// The first bytes, while the document still fits the window.
    held: Vec<u8>,
    /// Whether the document outgrew the window (`held` is then dropped).
    over: bool,
    /// The evidence of a text form (not JSON) in the window's bytes.
    text: Option<Detection>,
    scan: RootScan,
}

impl Default for Detector {
    fn default() -> Self {
        Detector::with_window(DETECT_WINDOW)
    }
}

impl Detector {
    /// A detector with the default window ([`DETECT_WINDOW`]).
    pub fn new() -> Self {
        Detector::default()
    }

    /// A detector that holds documents of at most `window` bytes whole.
    pub fn with_window(window: usize) -> Self {
        Detector {
            window,
            held: Vec::new(),
            over: false,
            text: None,
            scan: RootScan::default(),
        }
    }

    /// Reads the next piece of the document. `Ok(false)`: detection needs no more (the
    /// root object closed past the window); `Ok(true)`: feed on, or [`finish`](Detector::finish)
    /// at the end of the input.
    ///
    /// # Errors
    ///
    /// [`Error::Json`] when the structure is broken past the window
    /// (a closing bracket that closes nothing, nesting deeper than 127 levels).
    pub fn feed(&mut self, piece: &[u8]) -> Result<bool> {
        if !self.over {
            if self.held.len() + piece.len() <= self.window {
                let needed = self.held.len() + piece.len();
                if needed > self.held.capacity() {
                    // A document fed whole costs its size (the whole window, 16 MiB, was
                    // once reserved for any input); one fed in pieces, the window at its
                    // second piece: one allocation, not a doubling that holds two copies.
                    let grown = match self.held.capacity() {
                        0 => needed,
                        _ => self.window,
                    };
                    self.held.reserve_exact(grown - self.held.len());
                }
                self.held.extend_from_slice(piece);
            } else {
                self.over = true;
                // The window's bytes are scanned now, and no longer held.
                let held = std::mem::take(&mut self.held);
                if let Some((format, evidence)) = formats::identify_text(&held) {
                    self.text = Some(Detection {
                        format: format.id(),
                        reason: evidence.reason,
                    });
                    return Ok(false);
                }
                self.scan.feed(&held)?;
            }
        }
        if self.over {
            self.scan.feed(piece)?;
            return Ok(!self.scan.closed);
        }
        Ok(true)
    }

    /// The format of what was fed.
    ///
    /// # Errors
    ///
    /// Those of [`detect`] for a document within the window; past it,
    /// [`Error::Undetected`] when the members kept carry no
    /// format's evidence (or the root is not an object), and
    /// [`Error::Json`] when the input ends inside the root object.
    pub fn finish(self) -> Result<Detection> {
        if !self.over {
            return detect(&self.held);
        }
        if let Some(text) = self.text {
            return Ok(text);
        }
        let skeleton = self.scan.skeleton()?;
        let mut detection = detect_value(&skeleton)?;
        detection.reason = format!(
            "{} (from the root members detection reads; the document is over {} bytes)",
            detection.reason, self.window
        );
        Ok(detection)
    }
}

/// The reading of a document's root object for the members detection reads: brackets and
/// strings are followed, root members captured up to [`MEMBER_CAP`].
#[derive(Debug, Default)]
struct RootScan {
    /// Bytes scanned before the current piece.
    offset: usize,
    /// The offset of the byte being read (error locations).
    at: usize,
    /// The open containers, innermost last (`{` or `[`).
    stack: Vec<u8>,
    in_string: bool,
    escaped: bool,
    /// The root's first byte, once seen.
    root: Option<u8>,
    /// Whether the root object closed.
    closed: bool,
    /// At depth 1: what the next token is.
    at_root: RootState,
    key: Vec<u8>,
    /// The member being read, when its key is one detection reads.
    value: Option<Vec<u8>>,
    /// Whether `value` was cut at the cap.
    value_cut: bool,
    /// The members read: key, text (whole or cut), cut.
    members: Vec<(String, Vec<u8>, bool)>,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum RootState {
    #[default]
    Key,
    InKey,
    Colon,
    Value,
}

impl RootScan {
    fn feed(&mut self, piece: &[u8]) -> Result<()> {
        let mut i = 0;
        while i < piece.len() && !self.closed {
            let b = piece[i];
            if self.in_string {
                // Jump to the next quote or backslash.
                let run = if self.escaped {
                    self.escaped = false;
                    1
                } else {
                    match memchr::memchr2(b'"', b'\\', &piece[i..]) {
                        None => piece.len() - i,
                        Some(0) => {
                            if b == b'\\' {
                                self.escaped = true;
                            } else {
                                self.in_string = false;
                            }
                            1
                        }
                        Some(n) => n,
                    }
                };
                self.take(&piece[i..i + run]);
                if !self.in_string && self.at_root == RootState::InKey {
                    self.at_root = RootState::Colon;
                }
                i += run;
                continue;
            }
            self.at = self.offset + i;
            self.byte(b)?;
            i += 1;
        }
        self.offset += i;
        Ok(())
    }

    /// Captures string bytes for the key or the value being read.
    fn take(&mut self, bytes: &[u8]) {
        if self.at_root == RootState::InKey {
            if self.key.len() <= KEY_CAP {
                self.key.extend_from_slice(bytes);
            }
        } else {
            self.keep(bytes);
        }
    }

    fn keep(&mut self, bytes: &[u8]) {
        if let Some(value) = &mut self.value {
            let room = MEMBER_CAP - value.len();
            value.extend_from_slice(&bytes[..bytes.len().min(room)]);
            self.value_cut |= bytes.len() > room;
        }
    }

    /// One byte outside strings.
    fn byte(&mut self, b: u8) -> Result<()> {
        if self.root.is_none() {
            if b.is_ascii_whitespace() {
                return Ok(());
            }
            self.root = Some(b);
            if b != b'{' {
                // Not an object: nothing to capture, detection says so.
                self.closed = true;
                return Ok(());
            }
            self.stack.push(b'{');
            return Ok(());
        }
        let depth = self.stack.len();
        if depth == 1 {
            match (self.at_root, b) {
                (_, b' ' | b'\t' | b'\n' | b'\r') if self.at_root != RootState::Value => {
                    return Ok(());
                }
                (RootState::Key, b'"') => {
                    self.key.clear();
                    self.key.push(b'"');
                    self.at_root = RootState::InKey;
                    self.in_string = true;
                    return Ok(());
                }
                (RootState::Colon, b':') => {
                    self.at_root = RootState::Value;
                    self.value = self.detection_key().map(|_| Vec::new());
                    self.value_cut = false;
                    return Ok(());
                }
                (RootState::Value, b',' | b'}') => {
                    self.end_member();
                    self.at_root = RootState::Key;
                    if b == b'}' {
                        self.stack.pop();
                        self.closed = true;
                    }
                    return Ok(());
                }
                (RootState::Key, b'}') => {
                    self.stack.pop();
                    self.closed = true;
                    return Ok(());
                }
                (RootState::Value, _) => {}
                _ => return Err(self.syntax("expected a member of the root object")),
            }
        }
        match b {
            b'"' => self.in_string = true,
            b'{' | b'[' => {
                if depth > crate::json::parse::MAX_NESTING {
                    // The nesting limit, worded and identified as every command's.
                    return Err(Error::Json {
                        kind: JsonErrorKind::Depth,
                        message: crate::json::parse::depth_message(),
                        location: Location {
                            offset: Some(self.at),
                            ..Location::default()
                        },
                    });
                }
                self.stack.push(b);
            }
            b'}' | b']' => {
                let open = if b == b'}' { b'{' } else { b'[' };
                if self.stack.last() != Some(&open) {
                    return Err(self.syntax("a closing bracket that closes nothing"));
                }
                self.stack.pop();
            }
            _ => {}
        }
        self.keep(&[b]);
        Ok(())
    }

    /// The key being read, decoded, when detection reads it.
    fn detection_key(&self) -> Option<String> {
        // The key's text, quotes included (a key longer than the cap lost its closing one).
        let key: String = serde_json::from_slice(&self.key).ok()?;
        crate::formats::DETECTION_KEYS
            .contains(&key.as_str())
            .then_some(key)
    }

    fn end_member(&mut self) {
        if let (Some(key), Some(mut value)) = (self.detection_key(), self.value.take()) {
            while value.last().is_some_and(u8::is_ascii_whitespace) {
                value.pop();
            }
            // serde_json keeps the last of duplicate keys, in the first one's place.
            match self.members.iter_mut().find(|(k, _, _)| *k == key) {
                Some(member) => *member = (key, value, self.value_cut),
                None => self.members.push((key, value, self.value_cut)),
            }
        }
    }

    fn syntax(&self, message: &str) -> Error {
        Error::Json {
            kind: JsonErrorKind::Syntax,
            message: message.into(),
            location: Location {
                offset: Some(self.at),
                ..Location::default()
            },
        }
    }

    /// The root object with the members kept.
    fn skeleton(self) -> Result<Value> {
        let kind = match self.root {
            Some(b'{') => None,
            Some(b'[') => Some("array"),
            Some(b'"') => Some("string"),
            Some(b't' | b'f') => Some("boolean"),
            Some(b'n') => Some("null"),
            Some(_) => Some("number"),
            None => Some("nothing"),
        };
        if let Some(kind) = kind {
            return Err(Error::Undetected(format!(
                "a JSON {kind} at the root; every envelope format is an object"
            )));
        }
        if !self.closed {
            return Err(Error::Json {
                kind: JsonErrorKind::Eof,
                message: "the input ends inside the root object".into(),
                location: Location {
                    offset: Some(self.offset),
                    ..Location::default()
                },
            });
        }
        let mut root = Map::new();
        for (key, text, cut) in self.members {
            let value = match cut {
                false => crate::json::from_slice(&text).map_err(|e| in_member(e, &key))?,
                true => crate::json::prefix::parse_prefix(&text).unwrap_or(Value::Null),
            };
            root.insert(key, value);
        }
        Ok(Value::Object(root))
    }
}

/// A member's JSON error, located by the member's pointer.
fn in_member(mut e: Error, key: &str) -> Error {
    if let Error::Json { location, .. } = &mut e {
        *location = Location::pointer(crate::json::pointer::join("", key));
    }
    e
}
