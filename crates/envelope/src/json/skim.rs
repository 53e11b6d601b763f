//! Reading a JSON document for a byte budget: an array's items past the point where no cut
//! of at most `limit` bytes can keep them are skimmed — sized, never built.
//!
//! The point is the one [`Measured::bounded`](crate::shape::cut::Measured::bounded) finds: once the
//! smallest forms (level 0) of an array's first items add up to more than the limit, no
//! level that fits keeps those items, let alone the ones after them. Reading the 2.2 MB
//! payload of the shaping benchmark (cut to 8 KiB) this way builds 85 of its 10,000 items.
//!
//! # The result: a value and its tails, apart
//!
//! [`read`] returns a [`Skimmed`]: the `Value` serde_json would build, except that each
//! skimmed array holds only the items that were read, and beside it one [`Tail`] per
//! skimmed array: where the array is (a JSON Pointer) and what its skimmed items were (how
//! many, their compact JS-dialect size, the longest array and string in them). Nothing in
//! the value says that it was skimmed — no sentinel item, no special string — so the
//! value's strings are the document's and codecs that move the value around need not know
//! about skimming; only the code that cuts it asks for the tails:
//! - [`shape::bounded`](crate::shape::bounded) decodes the envelope from the value, checks
//!   that every tail lies in the payload the format moved out of the document untouched, and
//!   re-bases the pointers on the payload;
//! - a [`TailIndex`] finds each tail's array in a value once, and then answers "is this
//!   array skimmed, and what did it lose?" by the array's identity, without comparing or
//!   building pointers while walking (what [`Measured::skimmed`](crate::shape::cut::Measured::skimmed)
//!   needs);
//! - the ctxo compat truncation, which cuts one top-level member, compares pointers.
//!
//! A skimmed array looks like a shorter array to anyone who does not ask: a decoder that
//! compared it, or copied it outside the payload, would go unnoticed by the value itself.
//! `shape::bounded` rules these cases out explicitly (see its documentation).
//!
//! # The reader
//!
//! The reader is a strict JSON scanner of its own, one pass over the text, so that skimmed
//! items cost no more than a syntax check (serde_json cannot skip ahead and hand back its
//! position). It builds exactly the `Value` serde_json builds: escaped strings and numbers
//! other than plain integers are handed to serde_json itself. It accepts no more than
//! serde_json does: on anything it is unsure of — any syntax error, nesting deeper than
//! [`MAX_DEPTH`], a number or escape serde_json would refuse, a duplicate key inside a
//! skimmed item (where a sum of sizes would not be the size of the value serde_json builds,
//! in which the last duplicate wins), a duplicate key in an object holding a skimmed array
//! (whose tail could name the value the duplicate replaced) — it gives up, and the caller
//! reads the document whole, which also says what is wrong with it.
//!
//! A tail's pointer is built from the bottom up: a skimmed array's tail starts with the
//! empty pointer, and each container around it prefixes the member or index it was read
//! as, so reading costs nothing for the (many) values without skimmed arrays in them.

use std::borrow::Cow;
use std::collections::HashSet;
use std::marker::PhantomData;

use serde_json::{Map, Number, Value};

use super::Dialect;
use super::canonical::{key_written, number_written, string_written};
use super::keys::key_class;
use super::size::{escape_extra, escaped_len, plain_run, skeleton_size};
use crate::json::number::{js_len, js_len_f64};
use crate::json::pointer;

mod plain;

/// Containers nested deeper than this are left to the whole read (serde_json allows 127).
const MAX_DEPTH: usize = 100;

/// The items of an array that were skimmed, and where the array is.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tail {
    /// JSON Pointer (RFC 6901) of the array: in the document [`read`] returns; in the
    /// payload once [`shape::bounded`](crate::shape::bounded) re-based it. The array holds
    /// the items that were read; the skimmed ones followed them.
    pub pointer: String,
    /// How many items were skimmed.
    pub items: usize,
    /// Their compact JS-dialect sizes, summed (commas not included).
    pub size: usize,
    /// The longest array in them (items), their own count not included.
    pub max_array: usize,
    /// The longest string value in them (bytes).
    pub max_string: usize,
}

/// A document read for a budget.
#[derive(Debug)]
pub struct Skimmed {
    /// The document, each skimmed array holding only the items that were read.
    pub value: Value,
    /// One tail per skimmed array, pointers from the root of `value` (an array's tail comes
    /// after the tails of the arrays inside its items).
    pub tails: Vec<Tail>,
    /// Where each member of a root object is in the input, in document order: its key and
    /// the byte range of its value. A duplicate key is listed again (`value` holds the last
    /// one's value). Empty when the root is not an object.
    pub members: Vec<(String, std::ops::Range<usize>)>,
    /// For each of `members`, whether its value's text is what the writer writes in the
    /// dialect [`read_checking`] was given (see `json::canonical::is_written_as`: `true`
    /// only when certain); all `false` when [`read`] read it.
    pub written: Vec<bool>,
    /// The strings read as a prefix ([`read_for_cut`]), pointers from the root of `value`
    /// (a string's entry comes before the entries of the containers around it). Always
    /// empty from [`read`].
    pub strings: Vec<LongString>,
}

/// A string value longer than any cut of at most the limit keeps: the value holds only
/// its first [`kept_bytes`] bytes (at a UTF-8 boundary, escapes decoded), and this says what
/// the whole string is.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LongString {
    /// JSON Pointer of the string (as for [`Tail::pointer`]).
    pub pointer: String,
    /// The whole string's length in bytes, decoded.
    pub len: usize,
    /// Its compact JS-dialect size (quotes and escapes included).
    pub size: usize,
    /// Where its text between the quotes is in the input.
    pub span: std::ops::Range<usize>,
}

/// How much of a long string [`read_for_cut`] keeps for cuts of at most `limit` bytes:
/// a prefix no shorter than `limit + 5` bytes (so a cut keeping more of the string than
/// that is over the limit whichever way the string is read) and never shorter than 261
/// (so no digest, 71 bytes, is ever read as a prefix).
pub fn kept_bytes(limit: usize) -> usize {
    limit.max(256).saturating_add(8)
}

/// Reads `input` for cuts of at most `limit` bytes; `None` when it cannot be read this way
/// (see the module's documentation): read it whole, which also says what is wrong with it.
pub fn read(input: &[u8], limit: usize) -> Option<Skimmed> {
    read_checking(input, limit, None, None, false, &[])
}

/// [`read`], except that a string value longer than [`kept_bytes`]`(limit)` bytes is read
/// as that prefix and listed in [`Skimmed::strings`] with its whole length and size: a
/// huge string is scanned and sized, never built. The value then holds strings shorter than
/// the document's: only a cut that asks for them (`shape::bounded`) may read it.
pub fn read_for_cut(input: &[u8], limit: usize) -> Option<Skimmed> {
    let mut reader = Reader::new(input, limit);
    reader.long_strings = true;
    reader.finish()
}

/// [`read`], in the same pass checking whether each root member's value is spelled as the
/// writer writes it in `dialect` ([`Skimmed::written`]), and calling `report` with the
/// bytes read so far of the root member being read (from the start of its value), about
/// every [`REPORT_STEP`] bytes of a large array in it: what a thread storing that member
/// while the read goes on follows (`shape::follow`). With `long_strings`, long string
/// values are read as prefixes, as [`read_for_cut`] reads them (their spelling is checked
/// whole all the same).
pub(crate) fn read_checking(
    input: &[u8],
    limit: usize,
    dialect: Option<Dialect>,
    report: Option<&dyn Fn(std::ops::Range<usize>)>,
    long_strings: bool,
    sized_root: &'static [&'static str],
) -> Option<Skimmed> {
    let mut reader = Reader::new(input, limit);
    reader.dialect = dialect;
    reader.long_strings = long_strings;
    reader.sized_root = sized_root;
    if let Some(report) = report {
        reader.report = Some(report);
        reader.next_report = REPORT_STEP;
    }
    let value = reader.value()?;
    // Only whitespace may follow (a byte-order mark is not whitespace).
    if reader.peek().is_some() {
        return None;
    }
    Some(Skimmed {
        value,
        tails: reader.tails,
        members: reader.members,
        written: reader.written_members,
        strings: reader.strings,
    })
}

/// The tails of a value's skimmed arrays, each found in the value once: then looked up by
/// the array itself (its identity, not its contents), in a borrow of the value.
#[derive(Debug, Default)]
pub struct TailIndex<'a> {
    /// (address of the array's first item, its length, its tail), sorted. Skimmed arrays
    /// hold at least one item, so each has a heap buffer of its own.
    arrays: Vec<(usize, usize, &'a Tail)>,
    /// The addresses are those of `root`'s arrays: valid while it is borrowed.
    root: PhantomData<&'a Value>,
}

impl<'a> TailIndex<'a> {
    /// Finds each of `tails` in `root` by its pointer; `None` unless each names a
    /// non-empty array of `root`, a different one for each tail.
    pub fn new(root: &'a Value, tails: &'a [Tail]) -> Option<Self> {
        let mut arrays = Vec::with_capacity(tails.len());
        for tail in tails {
            let items = root.pointer(&tail.pointer)?.as_array()?;
            if items.is_empty() {
                return None;
            }
            arrays.push((items.as_ptr() as usize, items.len(), tail));
        }
        arrays.sort_unstable_by_key(|&(address, len, _)| (address, len));
        if arrays.windows(2).any(|w| w[0].0 == w[1].0) {
            return None;
        }
        Some(TailIndex {
            arrays,
            root: PhantomData,
        })
    }

    /// The tail of the array whose items are `items` (`None`: not a skimmed array of the
    /// value, or a part of one).
    #[inline]
    pub fn get(&self, items: &[Value]) -> Option<&'a Tail> {
        if self.arrays.is_empty() || items.is_empty() {
            return None;
        }
        let key = (items.as_ptr() as usize, items.len());
        self.arrays
            .binary_search_by_key(&key, |&(address, len, _)| (address, len))
            .ok()
            .map(|i| self.arrays[i].2)
    }

    /// How many skimmed arrays there are.
    pub fn len(&self) -> usize {
        self.arrays.len()
    }

    /// Whether nothing was skimmed.
    pub fn is_empty(&self) -> bool {
        self.arrays.is_empty()
    }
}

/// A value's compact JS-dialect size, and the longest array and string in it.
#[derive(Clone, Copy, Default)]
struct Sized {
    size: usize,
    max_array: usize,
    max_string: usize,
}

impl Sized {
    fn add(&mut self, item: Sized) {
        self.size += item.size;
        self.max_array = self.max_array.max(item.max_array);
        self.max_string = self.max_string.max(item.max_string);
    }
}

/// A string token: where its text between the quotes is, and whether it has escapes.
struct StringToken {
    start: usize,
    end: usize,
    escaped: bool,
    /// How many escapes its text has, when all are simple ones (`\"`, `\\`, `\b`, `\f`,
    /// `\n`, `\r`, `\t`: two bytes for one, written as they are by every writer); `None`
    /// when some are not (`\/`, `\u…`).
    simple_escapes: Option<usize>,
    /// Whether its text has non-ASCII characters.
    non_ascii: bool,
}

impl StringToken {
    /// The string's compact JS-dialect size (quotes included) and its decoded length, of its
    /// text `raw`; `None` when its escapes do not decode.
    fn sizes(&self, raw: &[u8]) -> Option<(usize, usize)> {
        match self.simple_escapes {
            // Nothing escaped (no control character, quote or backslash) or only simple
            // escapes: the writer copies the text as it is.
            Some(escapes) => Some((raw.len() + 2, raw.len() - escapes)),
            None => escaped_string_sizes(raw),
        }
    }
}

struct Reader<'a> {
    /// The input; UTF-8 is checked string by string (outside strings, JSON is ASCII).
    bytes: &'a [u8],
    at: usize,
    /// Containers open around the current position.
    depth: usize,
    limit: usize,
    tails: Vec<Tail>,
    /// Keys of the skimmed objects open around the current position (see `size`).
    keys: Vec<&'a [u8]>,
    /// The root object's members: key and where its value is (see [`Skimmed::members`]).
    members: Vec<(String, std::ops::Range<usize>)>,
    /// The dialect whose spelling each root member's value is checked against (`None`: not
    /// checked).
    dialect: Option<Dialect>,
    /// Whether the root member being read is spelled so far as `dialect` writes it ...
    written: bool,
    /// ... and what was found for each one read (see [`Skimmed::written`]).
    written_members: Vec<bool>,
    /// Where the value of the root member being read starts (`usize::MAX`: none).
    member_start: usize,
    /// Called with how far that member has been read (see [`read_reporting`]) ...
    report: Option<&'a dyn Fn(std::ops::Range<usize>)>,
    /// ... once the read reaches this position (`usize::MAX`: never).
    next_report: usize,
    /// Whether long string values are read as prefixes ([`read_for_cut`]) ...
    long_strings: bool,
    /// Root members whose values are sized, not built (`null` in their place): texts the
    /// caller reads from their spans ([`Skimmed::members`]).
    sized_root: &'static [&'static str],
    /// ... and those read so far (pointers built as the tails' are).
    strings: Vec<LongString>,
    /// Whether skimmed items are sized by the fast path when they can be (`plain`) ...
    plain: bool,
    /// ... and how often it could and could not.
    plain_hits: usize,
    plain_misses: usize,
}

/// How often [`read_reporting`] reports, in bytes read.
pub(crate) const REPORT_STEP: usize = 4 << 20;

impl<'a> Reader<'a> {
    fn new(bytes: &'a [u8], limit: usize) -> Self {
        Reader {
            bytes,
            at: 0,
            depth: 0,
            limit,
            tails: Vec::new(),
            keys: Vec::new(),
            members: Vec::new(),
            dialect: None,
            written: false,
            written_members: Vec::new(),
            member_start: usize::MAX,
            report: None,
            next_report: usize::MAX,
            long_strings: false,
            sized_root: &[],
            strings: Vec::new(),
            plain: true,
            plain_hits: 0,
            plain_misses: 0,
        }
    }

    /// Reads the whole input as one document (as `read_checking` does).
    fn finish(mut self) -> Option<Skimmed> {
        let value = self.value()?;
        // Only whitespace may follow (a byte-order mark is not whitespace).
        if self.peek().is_some() {
            return None;
        }
        Some(Skimmed {
            value,
            tails: self.tails,
            members: self.members,
            written: self.written_members,
            strings: self.strings,
        })
    }

    /// The next byte after whitespace (not consumed).
    #[inline(always)]
    fn peek(&mut self) -> Option<u8> {
        match *self.bytes.get(self.at)? {
            b' ' | b'\t' | b'\n' | b'\r' => self.skip_whitespace(),
            b => Some(b),
        }
    }

    /// [`peek`](Self::peek) past whitespace, which the writer never writes inside a value
    /// (root members are values at depth 1: their insides are deeper).
    #[cold]
    fn skip_whitespace(&mut self) -> Option<u8> {
        if self.depth >= 2 {
            self.written = false;
        }
        let bytes = self.bytes;
        while let Some(&b) = bytes.get(self.at) {
            if !matches!(b, b' ' | b'\t' | b'\n' | b'\r') {
                return Some(b);
            }
            self.at += 1;
        }
        None
    }

    /// Consumes `expected` (after whitespace).
    fn eat(&mut self, expected: u8) -> Option<()> {
        (self.peek()? == expected).then(|| self.at += 1)
    }

    /// Opens a container at `at`.
    fn enter(&mut self) -> Option<()> {
        self.depth += 1;
        self.at += 1;
        (self.depth <= MAX_DEPTH).then_some(())
    }

    /// After an item of a container that ends with `close`: `true` if another item follows.
    fn next_item(&mut self, close: u8) -> Option<bool> {
        match self.peek()? {
            b',' => {
                self.at += 1;
                Some(true)
            }
            b if b == close => {
                self.at += 1;
                self.depth -= 1;
                Some(false)
            }
            _ => None,
        }
    }

    /// Whether the container just entered, ending with `close`, is empty (then closed).
    fn empty(&mut self, close: u8) -> Option<bool> {
        if self.peek()? == close {
            self.at += 1;
            self.depth -= 1;
            return Some(true);
        }
        Some(false)
    }

    fn literal(&mut self, word: &str) -> Option<usize> {
        let end = self.at + word.len();
        (self.bytes.get(self.at..end)? == word.as_bytes()).then(|| {
            self.at = end;
            word.len()
        })
    }

    /// Builds the value at the current position, skimming what no cut keeps.
    fn value(&mut self) -> Option<Value> {
        match self.peek()? {
            b'{' => {
                self.enter()?;
                let mut map = Map::new();
                let first_tail = self.tails.len();
                let first_string = self.strings.len();
                let mut last_key = None;
                if !self.empty(b'}')? {
                    loop {
                        self.peek()?;
                        let token = self.string_token()?;
                        self.check_key(&token, &mut last_key);
                        let key = self.owned_string(&token)?;
                        self.eat(b':')?;
                        let before = self.tails.len();
                        let strings_before = self.strings.len();
                        self.peek()?;
                        let start = self.at;
                        if self.depth == 1 {
                            self.member_start = start;
                            self.written = self.dialect.is_some();
                        }
                        let value = match self.depth == 1 && self.sized_root.contains(&key.as_str())
                        {
                            true => {
                                self.size()?;
                                self.written = false;
                                Value::Null
                            }
                            false => self.value()?,
                        };
                        if self.depth == 1 {
                            self.member_start = usize::MAX;
                            self.root_member(&key, start..self.at);
                        }
                        if self.tails.len() > before || self.strings.len() > strings_before {
                            self.prefix_pointers(before, strings_before, &pointer::escape(&key));
                        }
                        // A duplicate key: the last value wins, at the first one's place.
                        // A tail (or long string) read so far in this object might belong
                        // to the value it replaces: left to the whole read.
                        if map.insert(key, value).is_some() {
                            // No writer writes a key twice.
                            self.written = false;
                            if self.tails.len() > first_tail || self.strings.len() > first_string {
                                return None;
                            }
                        }
                        if !self.next_item(b'}')? {
                            break;
                        }
                    }
                }
                Some(Value::Object(map))
            }
            b'[' => self.array(),
            b'"' => {
                let token = self.string_token()?;
                self.check_string(&token);
                if self.long_strings && token.end - token.start > kept_bytes(self.limit) {
                    return self.long_string(&token);
                }
                self.owned_string(&token).map(Value::String)
            }
            b't' => self.literal("true").map(|_| Value::Bool(true)),
            b'f' => self.literal("false").map(|_| Value::Bool(false)),
            b'n' => self.literal("null").map(|_| Value::Null),
            _ => {
                let token = self.number_token()?;
                self.check_number(&token);
                plain_integer(&token).or_else(|| serde_json::from_slice(token.text).ok())
            }
        }
    }

    fn array(&mut self) -> Option<Value> {
        self.enter()?;
        let mut items = Vec::new();
        if self.empty(b']')? {
            return Some(Value::Array(items));
        }
        // What `Measured::bounded` adds up: the brackets, then each item's level-0 size
        // and its comma.
        let mut smallest = 2usize;
        loop {
            let before = self.tails.len();
            let strings_before = self.strings.len();
            let item = self.value()?;
            if self.tails.len() > before || self.strings.len() > strings_before {
                let index = itoa::Buffer::new().format(items.len()).to_string();
                self.prefix_pointers(before, strings_before, &index);
            }
            smallest =
                smallest.saturating_add(skeleton_size(&item) + usize::from(!items.is_empty()));
            items.push(item);
            if !self.next_item(b']')? {
                return Some(Value::Array(items));
            }
            if smallest > self.limit {
                break;
            }
        }
        let mut tail = Tail::default();
        loop {
            let item = self.size_skimmed()?;
            tail.items += 1;
            tail.size += item.size;
            tail.max_array = tail.max_array.max(item.max_array);
            tail.max_string = tail.max_string.max(item.max_string);
            if !self.next_item(b']')? {
                break;
            }
            if self.at >= self.next_report {
                self.report_progress();
            }
        }
        // The array's own pointer is empty until the containers around it prefix theirs.
        self.tails.push(tail);
        Some(Value::Array(items))
    }

    /// Reports how far the root member being read has been read (see [`read_reporting`]).
    #[cold]
    fn report_progress(&mut self) {
        self.next_report = self.at.saturating_add(REPORT_STEP);
        if let Some(report) = self.report
            && self.member_start != usize::MAX
        {
            report(self.member_start..self.at);
        }
    }

    /// Records where a root member's value is.
    fn root_member(&mut self, key: &str, span: std::ops::Range<usize>) {
        self.members.push((key.to_string(), span));
        self.written_members.push(self.written);
    }

    /// The spelling check of a key (see `canonical::key_written`; repeats are found where
    /// the keys are gathered), `last` being the object's key before it.
    #[inline]
    fn check_key(&mut self, token: &StringToken, last: &mut Option<&'a [u8]>) {
        if let Some(dialect) = self.dialect {
            let raw = &self.bytes[token.start..token.end];
            let ok = key_written(raw, token.escaped, *last, dialect)
                && (!token.non_ascii || string_written(raw, dialect));
            self.written &= ok;
            *last = Some(raw);
        }
    }

    /// The spelling check of a string value: only one with escapes or non-ASCII text can be
    /// spelled otherwise than the writer writes it.
    #[inline]
    fn check_string(&mut self, token: &StringToken) {
        if let Some(dialect) = self.dialect
            && (token.escaped || token.non_ascii)
        {
            self.written &= string_written(&self.bytes[token.start..token.end], dialect);
        }
    }

    /// The spelling check of a number: a plain integer of at most 15 digits is written as
    /// it is by every writer, a short decimal by JS, Go and RFC 8785 (both as
    /// `canonical::number_written` finds them, told here from the token's parts), others
    /// are looked at closely.
    #[inline]
    fn check_number(&mut self, token: &NumberToken) {
        if let Some(dialect) = self.dialect {
            let spelled = is_written_as_spelled(token)
                && match token.frac {
                    None => token.int.len() <= 15,
                    Some(_) => matches!(dialect, Dialect::Js | Dialect::Go | Dialect::Jcs),
                };
            if !spelled && !number_written(token.text, dialect) {
                self.written = false;
            }
        }
    }

    /// Prefixes `/token` (escaped already) to the pointers of the tails from `tails` on and
    /// of the long strings from `strings` on: those of the value just read as member or item
    /// `token` of a container.
    #[cold]
    fn prefix_pointers(&mut self, tails: usize, strings: usize, token: &str) {
        let pointers = self.tails[tails..].iter_mut().map(|t| &mut t.pointer);
        for pointer in pointers.chain(self.strings[strings..].iter_mut().map(|s| &mut s.pointer)) {
            pointer.insert_str(0, token);
            pointer.insert(0, '/');
        }
    }

    /// A string value longer than [`kept_bytes`] (in its text, so maybe decoded): its
    /// prefix of that many bytes if it decodes to more, listed in `strings`; else the whole
    /// string. Only the prefix is decoded; the rest is sized (and checked) in place.
    fn long_string(&mut self, token: &StringToken) -> Option<Value> {
        let raw = &self.bytes[token.start..token.end];
        let (size, len) = token.sizes(raw)?;
        let keep = kept_bytes(self.limit);
        if len <= keep {
            return self.owned_string(token).map(Value::String);
        }
        let text = self.text_of(token)?;
        let text = match token.escaped {
            // `raw_end_for` cuts between escapes, at a character boundary.
            true => decode_string(text.get(..raw_end_for(raw, keep))?)?,
            false => text.get(..raw_end_for(raw, keep))?.to_owned(),
        };
        let text = crate::json::size::prefix(&text, keep).to_string();
        self.strings.push(LongString {
            pointer: String::new(),
            len,
            size,
            span: token.start..token.end,
        });
        Some(Value::String(text))
    }

    /// Sizes the value at the current position without building it.
    fn size(&mut self) -> Option<Sized> {
        let scalar = |size| Sized {
            size,
            ..Sized::default()
        };
        match self.peek()? {
            b'{' => {
                self.enter()?;
                let mut out = scalar(2);
                if self.empty(b'}')? {
                    return Some(out);
                }
                // The object's keys so far: on `keys` (a stack shared by the nested objects)
                // while few and unescaped, then in a set.
                let first = self.keys.len();
                let mut many: Option<HashSet<Cow<'a, [u8]>>> = None;
                // The classes of the keys on the stack: a key of a new class is a new key.
                let mut classes = 0u64;
                let mut last_key = None;
                loop {
                    self.peek()?;
                    let token = self.string_token()?;
                    self.check_key(&token, &mut last_key);
                    let raw = &self.bytes[token.start..token.end];
                    let mut key_size = raw.len() + 2;
                    let new = if many.is_none() && !token.escaped && self.keys.len() - first < 16 {
                        let class = key_class(raw);
                        let new = classes & class == 0 || !self.keys[first..].contains(&raw);
                        classes |= class;
                        self.keys.push(raw);
                        new
                    } else {
                        let set = many.get_or_insert_with(|| {
                            self.keys.drain(first..).map(Cow::Borrowed).collect()
                        });
                        if token.escaped {
                            let key = decode_string(self.text_of(&token)?)?;
                            key_size = escaped_len(&key);
                            set.insert(Cow::Owned(key.into_bytes()))
                        } else {
                            set.insert(Cow::Borrowed(raw))
                        }
                    };
                    if !new {
                        return None;
                    }
                    self.eat(b':')?;
                    out.size += key_size + 1;
                    out.add(self.size()?);
                    if !self.next_item(b'}')? {
                        self.keys.truncate(first);
                        return Some(out);
                    }
                    out.size += 1;
                }
            }
            b'[' => {
                self.enter()?;
                let mut out = scalar(2);
                if self.empty(b']')? {
                    return Some(out);
                }
                let mut len = 0usize;
                loop {
                    out.add(self.size()?);
                    len += 1;
                    if !self.next_item(b']')? {
                        break;
                    }
                    out.size += 1;
                }
                out.max_array = out.max_array.max(len);
                Some(out)
            }
            b'"' => {
                let token = self.string_token()?;
                self.check_string(&token);
                let (size, decoded) = token.sizes(&self.bytes[token.start..token.end])?;
                Some(Sized {
                    size,
                    max_array: 0,
                    max_string: decoded,
                })
            }
            b't' => self.literal("true").map(scalar),
            b'f' => self.literal("false").map(scalar),
            b'n' => self.literal("null").map(scalar),
            _ => {
                let token = self.number_token()?;
                self.check_number(&token);
                number_size(&token).map(scalar)
            }
        }
    }

    /// The string at the current position (a quote), checked as serde_json checks it
    /// (UTF-8 included).
    #[inline(always)]
    fn string_token(&mut self) -> Option<StringToken> {
        let bytes = self.bytes;
        if bytes.get(self.at) != Some(&b'"') {
            return None;
        }
        let start = self.at + 1;
        let mut at = start;
        let mut escaped = false;
        let mut simple_escapes = Some(0);
        // The string's bytes OR-ed together: a high bit means non-ASCII text to check.
        let mut high = 0u64;
        loop {
            let (stop, run) = plain_run(bytes, at)?;
            high |= run;
            at = stop;
            match bytes[at] {
                b'"' => break,
                b'\\' => {
                    escaped = true;
                    at += match *bytes.get(at + 1)? {
                        b'"' | b'\\' | b'b' | b'f' | b'n' | b'r' | b't' => {
                            simple_escapes = simple_escapes.map(|n| n + 1);
                            2
                        }
                        b'/' => {
                            simple_escapes = None;
                            2
                        }
                        b'u' if bytes.get(at + 2..at + 6)?.iter().all(u8::is_ascii_hexdigit) => {
                            simple_escapes = None;
                            6
                        }
                        _ => return None,
                    };
                }
                _ => return None, // a control character
            }
        }
        let non_ascii = high & 0x8080_8080_8080_8080 != 0;
        if non_ascii {
            std::str::from_utf8(&bytes[start..at]).ok()?;
        }
        self.at = at + 1;
        Some(StringToken {
            start,
            end: at,
            escaped,
            simple_escapes,
            non_ascii,
        })
    }

    /// The text of a string token (checked UTF-8 already).
    fn text_of(&self, token: &StringToken) -> Option<&'a str> {
        std::str::from_utf8(&self.bytes[token.start..token.end]).ok()
    }

    /// The string of a token, escapes decoded.
    fn owned_string(&self, token: &StringToken) -> Option<String> {
        let raw = self.text_of(token)?;
        if token.escaped {
            decode_string(raw)
        } else {
            Some(raw.to_owned())
        }
    }

    /// The number at the current position, checked against JSON's grammar:
    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`.
    fn number_token(&mut self) -> Option<NumberToken<'a>> {
        let bytes = self.bytes;
        let start = self.at;
        let digits = |from: usize| {
            let mut at = from;
            while bytes.get(at).is_some_and(u8::is_ascii_digit) {
                at += 1;
            }
            at
        };
        let int_start = start + usize::from(bytes.get(start) == Some(&b'-'));
        let mut at = match bytes.get(int_start)? {
            b'0' => int_start + 1,
            b'1'..=b'9' => digits(int_start + 1),
            _ => return None,
        };
        let int = &bytes[int_start..at];
        let mut frac = None;
        if bytes.get(at) == Some(&b'.') {
            let end = digits(at + 1);
            if end == at + 1 {
                return None;
            }
            frac = Some(&bytes[at + 1..end]);
            at = end;
        }
        let exponent = matches!(bytes.get(at), Some(b'e' | b'E'));
        if exponent {
            at += 1;
            if matches!(bytes.get(at), Some(b'+' | b'-')) {
                at += 1;
            }
            let end = digits(at);
            if end == at {
                return None;
            }
            at = end;
        }
        self.at = at;
        Some(NumberToken {
            text: &bytes[start..at],
            int,
            frac,
            exponent,
        })
    }
}

/// A number as it is spelled in the text (grammatical).
struct NumberToken<'a> {
    /// The whole token.
    text: &'a [u8],
    /// The digits before the point (no sign).
    int: &'a [u8],
    /// The digits after the point, if there is one.
    frac: Option<&'a [u8]>,
    /// Whether an exponent follows.
    exponent: bool,
}

impl NumberToken<'_> {
    /// An integer of at most 18 digits but -0: serde_json reads it as a `u64` when
    /// positive, an `i64` when negative (-0 is the float -0.0), and every writer spells it
    /// as it is.
    fn is_plain_integer(&self) -> bool {
        !self.exponent && self.frac.is_none() && self.int.len() <= 18 && self.text != b"-0"
    }
}

/// A string's text with escapes, decoded as serde_json decodes it (refusing lone
/// surrogates) into a buffer of the right size.
fn decode_string(raw: &str) -> Option<String> {
    crate::json::unescape::unescape(raw.as_bytes()).map(|(text, _)| text)
}

/// The JS-dialect size of the string whose text between the quotes is `raw` (with escapes,
/// checked by `string_token`), and the length of the string it decodes to — without
/// decoding it. `None` for a surrogate escape that is not a high one followed by a low one
/// (serde_json refuses lone surrogates; the whole read says so).
pub(crate) fn escaped_string_sizes(raw: &[u8]) -> Option<(usize, usize)> {
    let hex = |at: usize| {
        raw.get(at..at + 4)?.iter().try_fold(0, |code, &digit| {
            Some(code * 16 + char::from(digit).to_digit(16)?)
        })
    };
    let (mut size, mut decoded) = (2, 0);
    let mut at = 0;
    loop {
        // Up to the next escape, bytes are copied as they are (string_token let no byte the
        // writer escapes through).
        let run = memchr::memchr(b'\\', &raw[at..]).unwrap_or(raw.len() - at);
        size += run;
        decoded += run;
        at += run;
        if at == raw.len() {
            return Some((size, decoded));
        }
        let escape = *raw.get(at + 1)?;
        let (code, used) = match escape {
            b'u' => match hex(at + 2)? {
                high @ 0xD800..=0xDBFF => {
                    if raw.get(at + 6..at + 8)? != b"\\u" {
                        return None;
                    }
                    let low = hex(at + 8)?;
                    if !(0xDC00..=0xDFFF).contains(&low) {
                        return None;
                    }
                    (0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00), 12)
                }
                0xDC00..=0xDFFF => return None,
                code => (code, 6),
            },
            b'b' => (0x08, 2),
            b'f' => (0x0C, 2),
            b'n' => (0x0A, 2),
            b'r' => (0x0D, 2),
            b't' => (0x09, 2),
            // `"`, `\\`, `/`: the character itself.
            other => (u32::from(other), 2),
        };
        let character = char::from_u32(code)?;
        let utf8 = character.len_utf8();
        decoded += utf8;
        size += utf8;
        if let Ok(ascii) = u8::try_from(code) {
            size += escape_extra(ascii);
        }
        at += used;
    }
}

/// Decodes the text of a string literal whose raw text (between its quotes, escapes as
/// written, checked valid) is `raw`, `step` bytes at a time: each piece goes to `out` as
/// it is decoded, so a long text is never held whole. `undecodable` is the error for a
/// literal that does not decode after all.
pub(crate) fn decode_in_pieces<E>(
    raw: &[u8],
    step: usize,
    out: &mut impl FnMut(&str) -> Result<(), E>,
    undecodable: impl Fn() -> E,
) -> Result<(), E> {
    let mut at = 0;
    while at < raw.len() {
        // Cut between escapes and characters: each piece decodes on its own.
        let end = raw_end_for(&raw[at..], step) + at;
        let (piece, _) = super::unescape::unescape(&raw[at..end]).ok_or_else(&undecodable)?;
        out(&piece)?;
        at = end;
    }
    Ok(())
}

/// Where to cut the text `raw` of a string (escapes checked by `escaped_string_sizes`) so
/// that the part before decodes to at least `want` bytes (or is all of it): between
/// escapes, never inside a surrogate pair's two, at a character boundary.
pub(crate) fn raw_end_for(raw: &[u8], want: usize) -> usize {
    let mut decoded = 0;
    let mut at = 0;
    while decoded < want && at < raw.len() {
        if raw[at] == b'\\' {
            at += escape_len(raw, at);
            // An escape decodes to one character: at least one byte.
            decoded += 1;
            continue;
        }
        let run = memchr::memchr(b'\\', &raw[at..]).unwrap_or(raw.len() - at);
        let take = run.min(want - decoded);
        at += take;
        decoded += take;
        // Not inside a character: continuation bytes are 0b10xx_xxxx.
        while raw.get(at).is_some_and(|&b| b & 0xC0 == 0x80) {
            at += 1;
            decoded += 1;
        }
    }
    at.min(raw.len())
}

/// The length of the escape at `at` of a string's text: 12 for a surrogate pair's two
/// `\\u` escapes (one character), 6 for another `\\u`, else 2.
fn escape_len(raw: &[u8], at: usize) -> usize {
    let high = |code: &[u8]| {
        let code = std::str::from_utf8(code).ok();
        code.and_then(|c| u32::from_str_radix(c, 16).ok())
            .is_some_and(|c| (0xD800..=0xDBFF).contains(&c))
    };
    match raw.get(at + 1) {
        Some(b'u') if raw.get(at + 2..at + 6).is_some_and(high) => 12,
        Some(b'u') => 6,
        _ => 2,
    }
}

/// Whether the string whose text between the quotes is `raw` (checked JSON string text,
/// as a [`LongString::span`] of the input) decodes to `expected` — without decoding it
/// whole: runs without escapes are compared as they are, each escape decoded alone.
pub(crate) fn decodes_to(raw: &[u8], expected: &[u8]) -> bool {
    let (mut at, mut done) = (0, 0);
    while at < raw.len() {
        let run = memchr::memchr(b'\\', &raw[at..]).unwrap_or(raw.len() - at);
        if expected.get(done..done + run) != Some(&raw[at..at + run]) {
            return false;
        }
        (at, done) = (at + run, done + run);
        if at == raw.len() {
            break;
        }
        // A two-byte escape is one byte (a mirror of a document has `\"` every few bytes:
        // no allocation for those); a `\u` escape is decoded alone.
        let simple = match raw.get(at + 1) {
            Some(b'"') => Some(b'"'),
            Some(b'\\') => Some(b'\\'),
            Some(b'/') => Some(b'/'),
            Some(b'b') => Some(0x08),
            Some(b'f') => Some(0x0c),
            Some(b'n') => Some(b'\n'),
            Some(b'r') => Some(b'\r'),
            Some(b't') => Some(b'\t'),
            _ => None,
        };
        if let Some(byte) = simple {
            if expected.get(done) != Some(&byte) {
                return false;
            }
            (at, done) = (at + 2, done + 1);
            continue;
        }
        let end = (at + escape_len(raw, at)).min(raw.len());
        let Some((text, _)) = crate::json::unescape::unescape(&raw[at..end]) else {
            return false;
        };
        if expected.get(done..done + text.len()) != Some(text.as_bytes()) {
            return false;
        }
        (at, done) = (end, done + text.len());
    }
    done == expected.len()
}

/// The value serde_json reads from a plain integer token.
fn plain_integer(token: &NumberToken) -> Option<Value> {
    if !token.is_plain_integer() {
        return None;
    }
    // At most 18 digits: no overflow.
    let magnitude = token
        .int
        .iter()
        .fold(0u64, |n, digit| n * 10 + u64::from(digit - b'0'));
    Some(Value::Number(if token.text.starts_with(b"-") {
        Number::from(-(magnitude as i64))
    } else {
        Number::from(magnitude)
    }))
}

/// The JS-dialect length of a number token, as written from the value serde_json reads.
fn number_size(token: &NumberToken) -> Option<usize> {
    if is_written_as_spelled(token) {
        return Some(token.text.len());
    }
    if token.frac.is_some() || token.exponent {
        // serde_json reads it as a double, correctly rounded (`float_roundtrip`), as the
        // standard library does; out of range is an error there.
        let f: f64 = std::str::from_utf8(token.text).ok()?.parse().ok()?;
        return f.is_finite().then(|| js_len_f64(f));
    }
    match serde_json::from_slice(token.text).ok()? {
        Value::Number(n) => Some(js_len(&n)),
        _ => None,
    }
}

/// Whether the JS writer spells the number of this token exactly as it is: plain integers,
/// and decimals without exponent, without trailing zero, of at most 15 significant digits
/// (every such decimal is the shortest that reads back as its double) and at least 1e-6
/// (smaller ones are written with an exponent).
fn is_written_as_spelled(token: &NumberToken) -> bool {
    if token.exponent {
        return false;
    }
    let Some(frac) = token.frac else {
        return token.is_plain_integer();
    };
    if frac.last() == Some(&b'0') {
        return false;
    }
    if token.int == b"0" {
        let zeros = frac.iter().take_while(|&&b| b == b'0').count();
        zeros <= 5 && frac.len() - zeros <= 15
    } else {
        token.int.len() + frac.len() <= 15
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::size::js_size;
    use serde_json::json;

    fn size_of_number(text: &str) -> Option<usize> {
        number_size(&Reader::new(text.as_bytes(), 0).number_token()?)
    }

    fn skim(v: &Value, limit: usize) -> Skimmed {
        read(serde_json::to_string(v).unwrap().as_bytes(), limit).unwrap()
    }

    #[test]
    fn a_string_decodes_to_its_text_and_nothing_else() {
        let raw = r#"{\"a\":\"b\\c\/d\b\f\n\r\t\u00e9\ud83d\ude00 \u0041\"}"#;
        let (text, _) = crate::json::unescape::unescape(raw.as_bytes()).unwrap();
        assert!(decodes_to(raw.as_bytes(), text.as_bytes()));
        // One byte off anywhere, one byte more or less: not it.
        for at in 0..text.len() {
            let mut other = text.clone().into_bytes();
            other[at] ^= 1;
            assert!(!decodes_to(raw.as_bytes(), &other), "{at}");
        }
        assert!(!decodes_to(raw.as_bytes(), &text.as_bytes()[1..]));
        assert!(!decodes_to(raw.as_bytes(), format!("{text}x").as_bytes()));
    }

    #[test]
    fn skimmed_items_are_sized_as_the_writer_would_write_them() {
        let items: Vec<Value> = (0..50)
            .map(|i| json!({"i": i, "f": i as f64 / 3.0, "s": "é\n\"".repeat(i), "n": [null, true, false, -1]}))
            .collect();
        let doc = json!({"items": items});
        let skimmed = skim(&doc, 200);
        let kept = skimmed.value["items"].as_array().unwrap();
        let [tail] = &skimmed.tails[..] else {
            panic!("one array skimmed: {:?}", skimmed.tails)
        };
        assert_eq!(tail.pointer, "/items");
        assert_eq!(kept, &items[..kept.len()]);
        assert_eq!(tail.items + kept.len(), 50);
        let rest = &items[kept.len()..];
        assert_eq!(tail.size, rest.iter().map(js_size).sum::<usize>());
        assert_eq!(
            tail.max_string,
            rest.iter()
                .map(|v| v["s"].as_str().unwrap().len())
                .max()
                .unwrap()
        );
        assert_eq!(tail.max_array, 4);
    }

    #[test]
    fn numbers_are_sized_as_the_writer_writes_what_serde_json_reads() {
        let mut tokens: Vec<String> = [
            "0",
            "-0",
            "-0.0",
            "0.5",
            "1.0",
            "1e5",
            "1E+2",
            "-1e-7",
            "0.000001",
            "0.0000001",
            "123456789012345",
            "123456789012345678",
            "-123456789012345678",
            "-42",
            "1234567890123456789",
            "18446744073709551616",
            "0.1234567890123456",
            "1.5e300",
            "-9.75",
            "1e-400",
            "-1e-400",
            "4.9e-324",
            "2.2250738585072011e-308",
            "1.7976931348623157e308",
            "0.14285714285714285",
            "0.10000000000000001",
            "123.45600000000000000000001",
            "9007199254740993.0",
        ]
        .iter()
        .map(|t| t.to_string())
        .collect();
        // Decimals of every length and point position, from a fixed digit pattern.
        let digits = "98765432109876543210";
        for len in 1..=18 {
            for point in 0..len {
                let (int, frac) = digits[..len].split_at(point);
                let int = if int.is_empty() { "0" } else { int };
                tokens.push(format!("{int}.{frac}"));
                tokens.push(format!("-0.{}{frac}", "0".repeat(point % 8)));
            }
        }
        for token in tokens {
            let Value::Number(n) = serde_json::from_str::<Value>(&token).unwrap() else {
                unreachable!()
            };
            assert_eq!(size_of_number(&token), Some(js_len(&n)), "{token}");
            assert_eq!(
                Reader::new(token.as_bytes(), 0).value(),
                Some(Value::Number(n)),
                "{token}"
            );
        }
        assert_eq!(size_of_number("1e400"), None);
        assert_eq!(size_of_number("-1.7976931348623159e308"), None);
    }

    /// `escaped_string_sizes` of the text between the quotes of `quoted`, against decoding
    /// it with serde_json and measuring the result.
    fn check_escaped_sizes(raw: &str) {
        let decoded: Option<String> = serde_json::from_str(&format!("\"{raw}\"")).ok();
        let expected = decoded.map(|s| (escaped_len(&s), s.len()));
        assert_eq!(escaped_string_sizes(raw.as_bytes()), expected, "{raw}");
    }

    #[test]
    fn escaped_strings_are_sized_without_decoding_them() {
        for raw in [
            r#"\"\\\/\b\f\n\r\t"#,
            r"a\u0041b",
            r"\u0000\u001f\u0020\u007f\u0080\u07ff\u0800\uffff\u2028",
            r"\u0022\u005c\u002f\u0008\u000a",
            r"\ud83d\ude00 é😀",
            r"\uD83D\uDE00",
            r"\ud800",
            r"\udc00",
            r"\ud800x",
            r"\ud800\u0041",
            r"\ud800\ud800",
            r"\ud800\n",
        ] {
            check_escaped_sizes(raw);
        }
        // Every code point below 0x800 and a spread above it, escaped.
        for code in (0..0x800).chain((0x800..0x10000).step_by(97)) {
            check_escaped_sizes(&format!(r"x\u{code:04x}y\u{code:04X}"));
        }
        // Python's `ensure_ascii`: every non-ASCII character escaped, pairs for the astral.
        let text = "Grüße, 世界 😀 \"quoted\"\n\ttab \u{1} \u{10FFFF}";
        let ascii: String = text
            .chars()
            .flat_map(|c| {
                let mut units = [0u16; 2];
                match c {
                    '"' => vec![r#"\""#.to_string()],
                    '\n' => vec![r"\n".to_string()],
                    '\t' => vec![r"\t".to_string()],
                    c if c.is_ascii() && !c.is_ascii_control() => vec![c.to_string()],
                    c => c
                        .encode_utf16(&mut units)
                        .iter()
                        .map(|u| format!(r"\u{u:04x}"))
                        .collect(),
                }
            })
            .collect();
        check_escaped_sizes(&ascii);
        assert_eq!(
            escaped_string_sizes(ascii.as_bytes()).map(|(_, n)| n),
            Some(text.len())
        );
    }

    #[test]
    fn accepts_no_more_than_serde_json() {
        for text in [
            "[1,]",
            "[01]",
            "[1.]",
            "[.5]",
            "[1e]",
            "[-]",
            "[tru]",
            "[nul]",
            "{\"a\" 1}",
            "{\"a\":1,}",
            "[\"\\x\"]",
            "[\"\\u12\"]",
            "[\"\\ud800\"]",
            "[\"a\u{1}\"]",
            "[1] x",
            "",
            " ",
            "[",
            "{\"a\":",
            "[1e400]",
            "\u{feff}[]",
        ] {
            assert!(serde_json::from_str::<Value>(text).is_err(), "{text:?}");
            for limit in [0, 1000] {
                assert!(
                    read(text.as_bytes(), limit).is_none(),
                    "{text:?} at {limit}"
                );
            }
        }
        // Deep nesting is left to the whole read, skimmed or not.
        let deep = format!("[{}{}]", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert!(read(deep.as_bytes(), 0).is_none());
        assert!(read(deep.as_bytes(), 1 << 20).is_none());
    }

    #[test]
    fn invalid_utf8_is_refused_in_every_string() {
        let invalid: [&[u8]; 6] = [
            b"\xff",
            b"\xc3",
            b"\xe2\x82",
            b"\xc0\xaf",
            b"\xed\xa0\x80",
            b"\x80",
        ];
        for bad in invalid {
            // At every position of a string, across the eight-byte words; in a value and a
            // key, built (limit 1000) and skimmed (limit 3).
            for at in 0..18 {
                let text = |bytes: &[u8]| [&b"abcdefghijklmnopqr"[..at], bytes, b"xyz"].concat();
                let value = [b"[1, 2, \"".as_slice(), &text(bad), b"\"]"].concat();
                let key = [b"[1, 2, {\"".as_slice(), &text(bad), b"\": 0}]"].concat();
                let good = [b"[1, 2, \"".as_slice(), &text("é😀".as_bytes()), b"\"]"].concat();
                for limit in [3, 1000] {
                    assert!(read(&value, limit).is_none(), "{value:?} at {limit}");
                    assert!(read(&key, limit).is_none(), "{key:?} at {limit}");
                    let read_good = read(&good, limit).expect("valid UTF-8 is read");
                    let whole: Value = serde_json::from_slice(&good).unwrap();
                    let kept = read_good.value.as_array().unwrap();
                    let tail = read_good.tails.first();
                    assert!(tail.is_none_or(|t| t.pointer.is_empty()));
                    let sizes: usize =
                        kept.iter().map(js_size).sum::<usize>() + tail.map_or(0, |t| t.size);
                    let expected: usize = whole.as_array().unwrap().iter().map(js_size).sum();
                    assert_eq!(sizes, expected, "{good:?} at {limit}");
                }
            }
        }
        // Outside strings, non-ASCII is a syntax error.
        assert!(read("[1, 2, é]".as_bytes(), 3).is_none());
        assert!(read("[1, 2, 3] é".as_bytes(), 3).is_none());
    }

    /// The spelling check made while reading says of each root member what
    /// `canonical::is_written_as` says of its text, skimmed or not, in every dialect.
    #[test]
    fn members_are_checked_as_the_spelling_check_checks_them() {
        use crate::json::canonical::is_written_as;
        let values = [
            json!({"a": 1, "b": [true, false, null], "c": "x\"y\\z\n\u{1f}"}),
            json!({"rows": (0..60).map(|i| json!({"id": i, "f": i as f64 / 4.0, "s": "é\u{2028}"})).collect::<Vec<_>>()}),
            json!([
                1.5,
                0.1,
                1e21,
                100,
                -0.0,
                0,
                123456789012345678u64,
                0.000001,
                0.0000001
            ]),
            json!({"1": 1, "a": 2, "\u{85}": "\u{85}\u{2029}"}),
            json!({"b": {"y": 1, "x": [2, {"k": "v"}]}, "a": "é"}),
            json!(
                (0..80)
                    .map(|i| json!({"z": i, "a": [i, "t\u{7}"]}))
                    .collect::<Vec<_>>()
            ),
        ];
        let dialects = [Dialect::Js, Dialect::Go, Dialect::Newtonsoft, Dialect::Jcs];
        let mut texts: Vec<String> = Vec::new();
        for value in &values {
            for dialect in dialects {
                let text = String::from_utf8(crate::json::to_vec(value, dialect)).unwrap();
                texts.push(text.clone());
                // Spellings no writer writes: spaces, upper-case hex, escaped slash, a
                // trailing zero, a repeated key.
                texts.push(text.replace(':', ": "));
                texts.push(text.replace("\\u001f", "\\u001F"));
                texts.push(text.replace("\\n", "\\u000a").replace('/', "\\/"));
                texts.push(text.replace(".25", ".250"));
                texts.push(text.replacen("{\"id\":", "{\"id\":0,\"id\":", 1));
            }
            texts.push(serde_json::to_string_pretty(value).unwrap());
        }
        let mut agreed = 0;
        for text in &texts {
            for inner in [text.as_str(), r#"{"k":[1,2],"l":"\u00e9"}"#] {
                let doc = format!(r#"{{"m": {text}, "n":{inner} ,"o":"é"}}"#);
                for dialect in dialects {
                    for limit in [10, 100_000] {
                        let Some(read) =
                            read_checking(doc.as_bytes(), limit, Some(dialect), None, false, &[])
                        else {
                            continue;
                        };
                        assert_eq!(read.written.len(), read.members.len());
                        for ((key, span), written) in read.members.iter().zip(&read.written) {
                            let expected = is_written_as(&doc.as_bytes()[span.clone()], dialect);
                            assert_eq!(*written, expected, "{dialect:?} {key} of {doc}");
                            agreed += 1;
                        }
                    }
                }
            }
        }
        assert!(agreed > 1000, "{agreed}");
        // Without a dialect, nothing is checked.
        let read = read(br#"{"a":1}"#, 10).unwrap();
        assert_eq!(read.written, [false]);
    }

    #[test]
    fn a_document_that_fits_is_read_whole() {
        let doc = json!({"a": [1, 2, 3], "b": {"c": ["x", "y"]}});
        let skimmed = skim(&doc, 1000);
        assert_eq!(skimmed.value, doc);
        assert!(skimmed.tails.is_empty());
    }

    #[test]
    fn refuses_duplicates_it_cannot_size() {
        // A duplicate key in a kept item is serde_json's business (the last one wins) ...
        let kept = read(br#"[{"a": 1, "a": 2}]"#, 1000).unwrap();
        assert_eq!(kept.value, json!([{"a": 2}]));
        // ... in a skimmed one it would make the sizes wrong.
        assert!(read(br#"[1, 2, 3, {"a": 1, "a": 2}]"#, 3).is_none());
        // Many keys (past the inline comparisons), escaped keys: duplicates are caught.
        let keys: Vec<String> = (0..20).map(|i| format!("\"k{i}\": {i}")).collect();
        let many = format!("{{{}}}", keys.join(","));
        let with_dup = format!("{{{}, \"k3\": 0}}", keys.join(","));
        let ok = read(format!("[1, 2, {many}]").as_bytes(), 3).unwrap();
        let whole: Value = serde_json::from_str(&many).unwrap();
        assert_eq!(ok.tails[0].size, js_size(&whole));
        assert!(read(format!("[1, 2, {with_dup}]").as_bytes(), 3).is_none());
        assert!(read(br#"[1, 2, {"a": 1, "\u0061": 2}]"#, 3).is_none());
        assert!(read(br#"[1, 2, {"\u0061": 1, "b": 0, "a": 2}]"#, 3).is_none());
        // Keys of one class (same length, first and last byte) are compared, not confused.
        let same_class = read(br#"[1, 2, {"axb": 1, "ayb": 2, "azb": 3}]"#, 3).unwrap();
        assert_eq!(same_class.tails[0].size, 25);
        assert!(read(br#"[1, 2, {"axb": 1, "ayb": 2, "axb": 3}]"#, 3).is_none());
        assert!(read(br#"[1, 2, [{"b": {"a": 1, "a": 2}}]]"#, 3).is_none());
        assert!(read(b"[1, 2", 3).is_none());
        assert!(read(b"\xEF\xBB\xBF[]", 3).is_none());
    }

    #[test]
    fn tails_say_where_their_arrays_are() {
        let long: Vec<Value> = (0..20).map(|i| json!([i, i])).collect();
        let doc = json!({
            "a/b": {"c~d": [long.clone(), 1, long.clone()]},
            "x": [{"y": long.clone()}, long.clone(), long.clone(), long.clone(), long.clone(),
                  long.clone(), long.clone(), long.clone(), long.clone(), long.clone()],
            "s": "\u{FFFF}envelope:skimmed:0",
        });
        let skimmed = skim(&doc, 30);
        let pointers: Vec<&str> = skimmed.tails.iter().map(|t| t.pointer.as_str()).collect();
        // An array's tail comes after the tails inside its items.
        let mut expected = vec!["/a~1b/c~0d/0", "/a~1b/c~0d/2", "/x/0/y"];
        // `x`: at level 0, its first eight items are 31 bytes: the last two are skimmed.
        let items: Vec<String> = (1..8).map(|i| format!("/x/{i}")).collect();
        expected.extend(items.iter().map(String::as_str));
        expected.push("/x");
        assert_eq!(pointers, expected);
        // A string of the document is only a string, whatever it reads like.
        assert_eq!(skimmed.value["s"], doc["s"]);
        for tail in &skimmed.tails {
            let kept = skimmed
                .value
                .pointer(&tail.pointer)
                .unwrap()
                .as_array()
                .unwrap();
            let whole = doc.pointer(&tail.pointer).unwrap().as_array().unwrap();
            let inner = format!("{}/", tail.pointer);
            if !skimmed.tails.iter().any(|t| t.pointer.starts_with(&inner)) {
                assert_eq!(kept[..], whole[..kept.len()]);
            }
            assert_eq!(kept.len() + tail.items, whole.len(), "{}", tail.pointer);
            let rest = &whole[kept.len()..];
            assert_eq!(tail.size, rest.iter().map(js_size).sum::<usize>());
        }

        // Found by identity: the arrays themselves, not equal ones nor parts of them.
        let index = TailIndex::new(&skimmed.value, &skimmed.tails).unwrap();
        assert_eq!(index.len(), skimmed.tails.len());
        let found = skimmed.value.pointer("/x/1").unwrap().as_array().unwrap();
        assert_eq!(index.get(found).map(|t| t.pointer.as_str()), Some("/x/1"));
        assert!(index.get(&found.clone()).is_none());
        assert!(index.get(&found[..1]).is_none());
        assert!(TailIndex::default().get(found).is_none());
        // A pointer that names no array, or an array twice: not an index of this value.
        let misplaced = |pointer: &str| Tail {
            pointer: pointer.into(),
            ..Tail::default()
        };
        for tails in [
            vec![misplaced("/nothing")],
            vec![misplaced("/s")],
            vec![misplaced("/x/1"), misplaced("/x/01")],
            vec![misplaced("/x/1"), misplaced("/x/1")],
        ] {
            assert!(
                TailIndex::new(&skimmed.value, &tails).is_none(),
                "{tails:?}"
            );
        }
        let empty = json!({"e": []});
        assert!(TailIndex::new(&empty, &[misplaced("/e")]).is_none());

        // The root itself.
        let root = skim(&Value::Array(long.clone()), 30);
        assert_eq!(root.tails.len(), 1);
        assert_eq!(root.tails[0].pointer, "");
    }

    #[test]
    fn a_duplicate_key_over_a_skimmed_array_is_left_to_the_whole_read() {
        let long = format!("[{}]", vec!["1"; 40].join(","));
        // The first value had a skimmed array: its tail would name the second one.
        let replaced = format!(r#"{{"a": {long}, "a": [1]}}"#);
        assert!(read(replaced.as_bytes(), 20).is_none());
        let replaced_later = format!(r#"{{"a": {long}, "b": 1, "a": {long}}}"#);
        assert!(read(replaced_later.as_bytes(), 20).is_none());
        // Without a skimmed array, serde_json's rule: the last one wins.
        let ok = read(br#"{"a": [1], "a": [2]}"#, 20).unwrap();
        assert_eq!(ok.value, json!({"a": [2]}));
        assert!(ok.tails.is_empty());
    }
}
