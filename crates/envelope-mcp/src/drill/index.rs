//! The paging index of a stored result: where its large values, their items and members,
//! and every few thousand characters of its long strings start.
//!
//! With it, `envelope_read` answers a window of a 100 MB artifact by reading about the
//! window's bytes ([`Store::get_range`](envelope_store::Store::get_range)), not the artifact:
//! the index is built once, when the proxy stores the result ([`remember`],
//! [`remember_held`]), or at the first read of an artifact stored before
//! ([`for_artifact`]), and kept in memory for the process
//! ([`CACHE_BYTES`], least recently used first out).
//!
//! A value shorter than [`Tuning::big`] is a [`Node::Whole`]: read whole when asked for. A
//! longer one is indexed inside: an object by its members, an array by where each item
//! starts, a string by where every [`Tuning::mark_every`]-th character starts (in its text as
//! written and as decoded) and, when it holds a JSON document (a text block with the
//! payload as JSON), by that document's own index, in the string's decoded bytes.
//!
//! The index is built with the library's pull reader over the verified bytes, so it accepts
//! exactly what `serde_json` accepts; [`paged`](super::paged) answers with it the same as
//! reading the whole artifact would (a differential test holds the two to it).

use std::collections::{BTreeMap, HashMap};
use std::ops::Range;
use std::sync::{Arc, Mutex};

use envelope::json::reader::{Event, Piece, Reader, Str};
use envelope_store::{Digest, Store};

use crate::held::Held;

/// Where a value is, in bytes of the text it is read from (the artifact, or the decoded text
/// of the string that holds it).
pub(crate) type Span = Range<u64>;

/// How finely to index.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Tuning {
    /// A value whose text is at least this many bytes is indexed inside.
    pub(crate) big: u64,
    /// A long string's characters are marked every this many.
    pub(crate) mark_every: u64,
    /// An array keeps every item's start until it has this many (see [`Items`]).
    pub(crate) thin_from: usize,
}

impl Tuning {
    /// What the proxy uses: a window reads at most about 64 KiB beyond what it answers.
    pub(crate) const DEFAULT: Tuning = Tuning {
        big: 64 * 1024,
        mark_every: 4096,
        thin_from: 512,
    };
}

/// An artifact shorter than this is read whole: parsing it costs less than a millisecond or
/// two, and an index of it would only take memory.
pub(crate) const INDEX_FROM: u64 = 1 << 20;

/// The memory the process keeps indexes in (an index of 100 MB of small records is about
/// 8 MB: 8 bytes per item).
pub(crate) const CACHE_BYTES: usize = 128 << 20;

/// An object with more members than this is not indexed inside (read whole when needed).
const MAX_MEMBERS: usize = 10_000;

/// The index of one artifact.
#[derive(Debug)]
pub(crate) struct Index {
    /// The artifact's length in bytes.
    pub(crate) len: u64,
    /// Its root value.
    pub(crate) root: Node,
}

/// A value of the document, as much as the index knows of it.
#[derive(Debug)]
pub(crate) enum Node {
    /// A value read whole when it is needed.
    Whole(Span),
    /// A large object: its members in document order (a repeated key once, with its last
    /// value at its first place, as `serde_json` keeps it).
    Object {
        span: Span,
        members: Vec<(String, Node)>,
    },
    /// A large array: where its items start, and the index of each large item.
    Array {
        span: Span,
        items: Items,
        big: BTreeMap<usize, Node>,
    },
    /// A long string.
    Text(Box<Text>),
}

/// A long string: where its characters are.
#[derive(Debug)]
pub(crate) struct Text {
    /// Its text between the quotes, as written.
    pub(crate) raw: Span,
    /// How many characters (Unicode scalar values) it holds.
    pub(crate) chars: u64,
    /// `marks[k]` is where character `k * mark_every` starts; `marks[0]` is the start.
    pub(crate) marks: Vec<Mark>,
    /// The index of the JSON array or object the string holds, over its decoded bytes.
    pub(crate) inner: Option<Node>,
}

/// Where the items of a large array start: every `every`-th item's start. `every` is 1
/// unless the items are small: it doubles while the array is read whenever the starts would
/// take more than a sixteenth of the bytes read, so an array of small numbers costs at most
/// about 6% of itself, not 8 bytes an item (4x `[0,0,...]`), and a window reads at most
/// `every - 1` items more than it answers.
#[derive(Debug)]
pub(crate) struct Items {
    /// How many items the array has.
    pub(crate) count: usize,
    /// `starts[k]` is where item `k * every` starts.
    starts: Vec<u64>,
    every: usize,
    /// Starts kept before any is thinned out ([`Tuning::thin_from`]).
    thin_from: usize,
}

impl Items {
    fn new(thin_from: usize) -> Self {
        Items {
            count: 0,
            starts: Vec::new(),
            every: 1,
            thin_from,
        }
    }

    /// The next item starts at `start`; `read`: the array's bytes read so far.
    fn push(&mut self, start: u64, read: u64) {
        if self.count.is_multiple_of(self.every) {
            self.starts.push(start);
        }
        self.count += 1;
        if self.starts.len() >= self.thin_from && self.starts.len() as u64 * 8 * 16 > read {
            let mut k = 0;
            self.starts.retain(|_| {
                k += 1;
                k % 2 == 1
            });
            self.every *= 2;
        }
    }

    /// The first item of the run that holds item `i`, and where it starts.
    pub(crate) fn run_of(&self, i: usize) -> (usize, u64) {
        let k = i / self.every;
        (k * self.every, self.starts[k])
    }

    /// Where the items before item `i` end at the latest: the start of the first run at or
    /// after it, or the array's `]` (`span`: the array's).
    pub(crate) fn end_before(&self, i: usize, span: &Span) -> u64 {
        self.starts
            .get(i.div_ceil(self.every))
            .copied()
            .unwrap_or(span.end - 1)
    }

    fn shifted(self, by: u64) -> Items {
        Items {
            starts: self.starts.into_iter().map(|s| s + by).collect(),
            ..self
        }
    }

    fn weight(&self) -> usize {
        self.starts.len() * 8
    }
}

/// Where one character of a long string starts, relative to the string's start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Mark {
    /// How many characters come before it.
    pub(crate) chars: u64,
    /// Its offset in the decoded text (UTF-8 bytes).
    pub(crate) decoded: u64,
    /// Its offset in the text as written (escapes as written).
    pub(crate) raw: u64,
}

impl Node {
    /// Where the value is written.
    pub(crate) fn span(&self) -> Span {
        match self {
            Node::Whole(span) | Node::Object { span, .. } | Node::Array { span, .. } => {
                span.clone()
            }
            Node::Text(text) => text.raw.start - 1..text.raw.end + 1,
        }
    }

    /// About how many bytes of memory the node takes.
    fn weight(&self) -> usize {
        let own = std::mem::size_of::<Node>();
        own + match self {
            Node::Whole(_) => 0,
            Node::Object { members, .. } => members
                .iter()
                .map(|(key, node)| key.len() + std::mem::size_of::<String>() + node.weight())
                .sum(),
            Node::Array { items, big, .. } => {
                items.weight() + big.values().map(|n| n.weight() + 16).sum::<usize>()
            }
            Node::Text(text) => {
                std::mem::size_of::<Text>()
                    + text.marks.len() * std::mem::size_of::<Mark>()
                    + text.inner.as_ref().map_or(0, Node::weight)
            }
        }
    }
}

/// Builds the index of a document (`bytes`: the artifact).
///
/// # Errors
///
/// `serde_json`'s error when `bytes` is not a JSON document.
pub(crate) fn build(bytes: &[u8], tuning: Tuning) -> Result<Index, serde_json::Error> {
    let root = document(bytes, tuning, true)?;
    Ok(Index {
        len: bytes.len() as u64,
        root,
    })
}

/// The node of the document `bytes` (white space around its value allowed), offsets from
/// the start of `bytes`; `inner`: whether a long string holding JSON is indexed inside.
fn document(bytes: &[u8], tuning: Tuning, inner: bool) -> Result<Node, serde_json::Error> {
    let mut reader = Reader::new(bytes);
    let first = reader.next()?.ok_or_else(|| defect("an empty document"))?;
    let node = value(&mut reader, bytes, first, tuning, inner)?;
    match reader.next()? {
        None => Ok(node),
        Some(_) => Err(defect("text after the document")),
    }
}

/// The node of the value whose first event `first` the reader just gave.
fn value(
    reader: &mut Reader<'_>,
    bytes: &[u8],
    first: Event<'_>,
    tuning: Tuning,
    inner: bool,
) -> Result<Node, serde_json::Error> {
    match first {
        Event::BeginObject => object(reader, bytes, tuning, inner),
        Event::BeginArray => array(reader, bytes, tuning, inner),
        Event::String(text) => {
            let start = offset_in(bytes, text.raw()) - 1;
            let span = start..reader.offset() as u64;
            match span.end - span.start >= tuning.big {
                true => Ok(Node::Text(Box::new(long_text(bytes, text, tuning, inner)))),
                false => Ok(Node::Whole(span)),
            }
        }
        Event::Number(number) => {
            let end = reader.offset() as u64;
            Ok(Node::Whole(end - number.len() as u64..end))
        }
        Event::Bool(b) => {
            let end = reader.offset() as u64;
            Ok(Node::Whole(end - if b { 4 } else { 5 }..end))
        }
        Event::Null => {
            let end = reader.offset() as u64;
            Ok(Node::Whole(end - 4..end))
        }
        Event::Key(_) | Event::EndObject | Event::EndArray => {
            Err(defect("no value where one starts"))
        }
    }
}

/// An object whose `{` was just read: members are passed over by their spans, and only a
/// large one is read again, for its own index.
fn object(
    reader: &mut Reader<'_>,
    bytes: &[u8],
    tuning: Tuning,
    inner: bool,
) -> Result<Node, serde_json::Error> {
    let start = reader.offset() as u64 - 1;
    let mut members: Vec<(String, Node)> = Vec::new();
    let mut places: HashMap<String, usize> = HashMap::new();
    let mut too_many = false;
    loop {
        let key = match reader.next()? {
            Some(Event::EndObject) => break,
            Some(Event::Key(key)) => key.value().into_owned(),
            _ => return Err(defect("no key where one starts")),
        };
        let span = reader
            .skip()?
            .ok_or_else(|| defect("a key without a value"))?;
        if too_many {
            continue;
        }
        let node = child(bytes, span, tuning, inner)?;
        match places.get(&key) {
            Some(&at) => members[at].1 = node,
            None => {
                places.insert(key.clone(), members.len());
                members.push((key, node));
            }
        }
        if members.len() > MAX_MEMBERS {
            too_many = true;
            members = Vec::new();
            places = HashMap::new();
        }
    }
    let span = start..reader.offset() as u64;
    match too_many || span.end - span.start < tuning.big {
        true => Ok(Node::Whole(span)),
        false => Ok(Node::Object { span, members }),
    }
}

/// An array whose `[` was just read.
fn array(
    reader: &mut Reader<'_>,
    bytes: &[u8],
    tuning: Tuning,
    inner: bool,
) -> Result<Node, serde_json::Error> {
    let start = reader.offset() as u64 - 1;
    let mut items = Items::new(tuning.thin_from);
    let mut big = BTreeMap::new();
    while let Some(span) = reader.skip()? {
        if (span.end - span.start) as u64 >= tuning.big {
            big.insert(items.count, child(bytes, span.clone(), tuning, inner)?);
        }
        items.push(span.start as u64, span.end as u64 - start);
    }
    let span = start..reader.offset() as u64;
    match span.end - span.start < tuning.big {
        true => Ok(Node::Whole(span)),
        false => {
            items.starts.shrink_to_fit();
            Ok(Node::Array { span, items, big })
        }
    }
}

/// The node of the value at `span` of `bytes` (a span the reader gave: exactly the value).
fn child(
    bytes: &[u8],
    span: Range<usize>,
    tuning: Tuning,
    inner: bool,
) -> Result<Node, serde_json::Error> {
    let at = span.start as u64;
    if (span.end - span.start) as u64 >= tuning.big {
        let node = document(&bytes[span], tuning, inner)?;
        Ok(shifted(node, at))
    } else {
        Ok(Node::Whole(at..span.end as u64))
    }
}

/// `node`, read from a text that starts `by` bytes into this one.
fn shifted(node: Node, by: u64) -> Node {
    let shift = |span: Span| span.start + by..span.end + by;
    match node {
        Node::Whole(span) => Node::Whole(shift(span)),
        Node::Object { span, members } => Node::Object {
            span: shift(span),
            members: members
                .into_iter()
                .map(|(key, node)| (key, shifted(node, by)))
                .collect(),
        },
        Node::Array { span, items, big } => Node::Array {
            span: shift(span),
            items: items.shifted(by),
            big: big.into_iter().map(|(i, n)| (i, shifted(n, by))).collect(),
        },
        // Marks are relative to the string, and an inner index to its decoded text.
        Node::Text(mut text) => {
            text.raw = shift(text.raw);
            Node::Text(text)
        }
    }
}

/// A long string: its marks, and the index of the JSON it holds.
fn long_text(bytes: &[u8], text: Str<'_>, tuning: Tuning, inner: bool) -> Text {
    let raw = text.raw();
    let start = offset_in(bytes, raw);
    let mut marks = vec![Mark {
        chars: 0,
        decoded: 0,
        raw: 0,
    }];
    let (mut chars, mut decoded, mut at) = (0u64, 0u64, 0u64);
    let mut next_mark = tuning.mark_every;
    for piece in text.pieces() {
        match piece {
            Piece::Text(run) => {
                for (i, byte) in run.bytes().enumerate() {
                    // A character starts at every byte that is not a continuation byte.
                    if byte & 0xC0 != 0x80 {
                        if chars == next_mark {
                            marks.push(Mark {
                                chars,
                                decoded: decoded + i as u64,
                                raw: at + i as u64,
                            });
                            next_mark += tuning.mark_every;
                        }
                        chars += 1;
                    }
                }
                decoded += run.len() as u64;
                at += run.len() as u64;
            }
            Piece::Char(c) => {
                if chars == next_mark {
                    marks.push(Mark {
                        chars,
                        decoded,
                        raw: at,
                    });
                    next_mark += tuning.mark_every;
                }
                chars += 1;
                decoded += c.len_utf8() as u64;
                // `\n` is 2 bytes, `\u00e9` 6, a surrogate pair 12.
                at += match raw.as_bytes()[at as usize + 1] {
                    b'u' if c as u32 > 0xFFFF => 12,
                    b'u' => 6,
                    _ => 2,
                };
            }
        }
    }
    let inner = match inner {
        true => inner_document(&text, tuning),
        false => None,
    };
    Text {
        raw: start..start + raw.len() as u64,
        chars,
        marks,
        inner,
    }
}

/// The index of the JSON array or object a string holds, if it holds one.
fn inner_document(text: &Str<'_>, tuning: Tuning) -> Option<Node> {
    let json_space = |c: char| matches!(c, ' ' | '\t' | '\n' | '\r');
    let first = text.pieces().find_map(|piece| match piece {
        Piece::Text(run) => run.chars().find(|c| !json_space(*c)),
        Piece::Char(c) => (!json_space(c)).then_some(c),
    });
    if !matches!(first, Some('{' | '[')) {
        return None;
    }
    document(text.value().as_bytes(), tuning, false).ok()
}

/// Where `part` (a slice of `bytes`) starts in `bytes`.
fn offset_in(bytes: &[u8], part: &str) -> u64 {
    (part.as_ptr() as usize - bytes.as_ptr() as usize) as u64
}

/// An error for what the reader never gives (it checks the grammar): said, not a panic.
fn defect(what: &str) -> serde_json::Error {
    serde::de::Error::custom(format!("the paging index met {what}"))
}

/// The indexes this process keeps, by artifact.
struct Cache {
    entries: HashMap<Digest, (Arc<Index>, usize, u64)>,
    bytes: usize,
    clock: u64,
}

static CACHE: Mutex<Option<Cache>> = Mutex::new(None);

/// Keeps `index` of `digest`, making room by dropping the least recently used ones.
fn keep(digest: Digest, index: Arc<Index>) {
    let weight = index.root.weight();
    if weight > CACHE_BYTES {
        return;
    }
    let mut guard = CACHE.lock().unwrap_or_else(|e| e.into_inner());
    let cache = guard.get_or_insert_with(|| Cache {
        entries: HashMap::new(),
        bytes: 0,
        clock: 0,
    });
    cache.clock += 1;
    if let Some((_, old, _)) = cache.entries.insert(digest, (index, weight, cache.clock)) {
        cache.bytes -= old;
    }
    cache.bytes += weight;
    while cache.bytes > CACHE_BYTES {
        let Some(oldest) = cache
            .entries
            .iter()
            .min_by_key(|(_, (_, _, used))| *used)
            .map(|(d, _)| *d)
        else {
            break;
        };
        if let Some((_, weight, _)) = cache.entries.remove(&oldest) {
            cache.bytes -= weight;
        }
    }
}

/// The kept index of `digest`, now most recently used.
pub(crate) fn kept(digest: &Digest) -> Option<Arc<Index>> {
    let mut guard = CACHE.lock().unwrap_or_else(|e| e.into_inner());
    let cache = guard.as_mut()?;
    cache.clock += 1;
    let clock = cache.clock;
    let (index, _, used) = cache.entries.get_mut(digest)?;
    *used = clock;
    Some(index.clone())
}

/// The largest result indexed from a copy when it is stored ([`remember`]); a larger one
/// is indexed from bytes handed over ([`remember_held`]), or at its first read.
const COPY_AT_MOST: usize = 8 << 20;

/// Indexes built in the background at most at once; a result stored while they run is
/// indexed at its first read instead.
const BACKGROUND_BUILDS: usize = 2;

static BUILDING: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Indexes a result the proxy just stored as `digest` (`bytes`: what was stored), when it is
/// large enough to need it, on a thread of its own: the answer to the call does not wait
/// for it (a read that comes first builds the index itself). A document the index cannot
/// read is left to the whole read. The thread takes a copy of the bytes up to
/// [`COPY_AT_MOST`]: a larger result would add its size to the proxy's peak memory (a
/// 200 MB result held twice); it is indexed when its bytes are handed over
/// ([`remember_held`]), or at its first read.
pub(crate) fn remember(digest: &Digest, bytes: &[u8]) {
    if bytes.len() <= COPY_AT_MOST && needs_index(digest, bytes.len()) {
        build_beside(*digest, Held::new(bytes.to_vec(), 0..bytes.len()));
    }
}

/// [`remember`] of a result stored as the bytes `held`, handed over by a caller done with
/// them (the relay's frame of the upstream's answer, or the redacted copy shaping made):
/// the thread keeps them until the index is built and then lets them go, so the result is
/// indexed when stored whatever its size, with no copy.
pub(crate) fn remember_held(digest: &Digest, held: Arc<Held>) {
    let len = held.bytes().len();
    // Up to the copy's size, `remember` indexed it when it was stored.
    if len > COPY_AT_MOST && needs_index(digest, len) {
        build_beside(*digest, held);
    }
}

/// Whether a stored result of `len` bytes is worth indexing and not indexed yet.
fn needs_index(digest: &Digest, len: usize) -> bool {
    len as u64 >= INDEX_FROM && kept(digest).is_none()
}

/// Builds the index of `held` on a thread of its own (at most [`BACKGROUND_BUILDS`]
/// at once: else the first read builds it).
fn build_beside(digest: Digest, held: Arc<Held>) {
    use std::sync::atomic::Ordering;
    if BUILDING.fetch_add(1, Ordering::AcqRel) >= BACKGROUND_BUILDS {
        BUILDING.fetch_sub(1, Ordering::AcqRel);
        return;
    }
    let spawned = std::thread::Builder::new()
        .name("envelope-index".into())
        .spawn(move || {
            if let Ok(index) = build(held.bytes(), Tuning::DEFAULT) {
                keep(digest, Arc::new(index));
            }
            drop(held);
            BUILDING.fetch_sub(1, Ordering::AcqRel);
        });
    if spawned.is_err() {
        BUILDING.fetch_sub(1, Ordering::AcqRel);
    }
}

/// The index of an artifact of `size` bytes in `store`: the kept one, or built now from its
/// verified bytes. `None` when the artifact is small (read it whole) or its bytes cannot be
/// indexed (the whole read says why).
pub(crate) fn for_artifact(digest: &Digest, size: u64, store: &dyn Store) -> Option<Arc<Index>> {
    if size < INDEX_FROM {
        return None;
    }
    if let Some(index) = kept(digest).filter(|index| index.len == size) {
        return Some(index);
    }
    let bytes = store.get(digest).ok()?;
    let index = Arc::new(build(&bytes, Tuning::DEFAULT).ok()?);
    keep(*digest, index.clone());
    Some(index)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TINY: Tuning = Tuning {
        big: 8,
        mark_every: 3,
        thin_from: 512,
    };

    #[test]
    fn large_values_are_indexed_inside_and_small_ones_are_spans() {
        let doc = br#" {"a": [1, 22, {"b": "long enough string"}], "n": 1, "a": [3]} "#;
        let index = build(doc, TINY).unwrap();
        let Node::Object { members, span } = &index.root else {
            panic!("{:?}", index.root)
        };
        assert_eq!(
            &doc[span.start as usize..span.end as usize],
            &doc[1..doc.len() - 1]
        );
        // The repeated key "a": its last value, at its first place.
        assert_eq!(
            members.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>(),
            ["a", "n"]
        );
        let Node::Whole(last) = &members[0].1 else {
            panic!()
        };
        assert_eq!(&doc[last.start as usize..last.end as usize], b"[3]");
    }

    #[test]
    fn arrays_know_where_each_item_starts() {
        let doc = br#"[1, "two", {"three": 3}, [4,4,4,4,4]]"#;
        let index = build(doc, TINY).unwrap();
        let Node::Array { items, big, .. } = &index.root else {
            panic!()
        };
        let at = |i: usize| {
            let (first, start) = items.run_of(i);
            assert_eq!(first, i, "small arrays keep every item's start");
            doc[start as usize]
        };
        assert_eq!([at(0), at(1), at(2), at(3)], [b'1', b'"', b'{', b'[']);
        assert_eq!(items.count, 4);
        assert_eq!(big.keys().copied().collect::<Vec<_>>(), [2, 3]);
    }

    /// An array of tiny items keeps a start every few items: its index is a small share of
    /// it, and every run still starts where an item starts.
    #[test]
    fn tiny_items_are_indexed_a_run_at_a_time() {
        let n = 1_000_000;
        let doc = format!("[{}0]", "0,".repeat(n - 1));
        let index = build(doc.as_bytes(), Tuning::DEFAULT).unwrap();
        let Node::Array { items, span, .. } = &index.root else {
            panic!()
        };
        assert_eq!(items.count, n);
        let weight = index.root.weight();
        assert!(
            weight * 10 < doc.len(),
            "{weight} bytes of index for {} bytes",
            doc.len()
        );
        for i in [0, 1, 63, 64, 65, 500_001, n - 1] {
            let (first, start) = items.run_of(i);
            assert!(
                first <= i && i - first < 256,
                "item {i} in a run from {first}"
            );
            // Item k of `0,0,...` starts at 1 + 2k.
            assert_eq!(start, 1 + 2 * first as u64);
            let end = items.end_before(i + 1, span);
            assert!(end > 1 + 2 * i as u64 && end < span.end);
        }
    }

    #[test]
    fn long_strings_are_marked_in_written_and_decoded_bytes() {
        // "é" as an escape (6 bytes written, 2 decoded), a newline (2, 1), an emoji pair (12, 4).
        let doc = br#"{"t": "ab\u00e9\ncd\ud83d\ude00efg"}"#;
        let index = build(doc, TINY).unwrap();
        let Node::Object { members, .. } = &index.root else {
            panic!()
        };
        let Node::Text(text) = &members[0].1 else {
            panic!("{:?}", members[0].1)
        };
        assert_eq!(text.chars, 10);
        let raw = &doc[text.raw.start as usize..text.raw.end as usize];
        assert_eq!(raw, br#"ab\u00e9\ncd\ud83d\ude00efg"#);
        let decoded = "ab\u{e9}\ncd\u{1F600}efg";
        for mark in &text.marks {
            let from_raw: String =
                serde_json::from_slice(&[b"\"", &raw[mark.raw as usize..], b"\""].concat())
                    .unwrap();
            assert_eq!(from_raw, decoded[mark.decoded as usize..]);
            assert_eq!(
                decoded[..mark.decoded as usize].chars().count() as u64,
                mark.chars
            );
        }
        assert_eq!(text.marks.len(), 4);
    }

    #[test]
    fn json_text_is_indexed_in_its_decoded_bytes() {
        let doc = br#"{"content":[{"type":"text","text":"{\"rows\":[10,11,12,13]}"}]}"#;
        let index = build(doc, TINY).unwrap();
        let Node::Object { members, .. } = &index.root else {
            panic!()
        };
        let Node::Array { big, .. } = &members[0].1 else {
            panic!()
        };
        let Node::Object { members, .. } = &big[&0] else {
            panic!()
        };
        let Node::Text(text) = &members[1].1 else {
            panic!()
        };
        let Some(Node::Object { members, .. }) = &text.inner else {
            panic!("{:?}", text.inner)
        };
        let Node::Array { span, .. } = &members[0].1 else {
            panic!()
        };
        let decoded = r#"{"rows":[10,11,12,13]}"#;
        assert_eq!(
            &decoded[span.start as usize..span.end as usize],
            "[10,11,12,13]"
        );
    }

    #[test]
    fn what_is_not_json_is_refused_as_serde_json_refuses_it() {
        for bad in [&b""[..], b"{", b"[1,]", b"{} x", b"\"\\x\""] {
            let ours = build(bad, TINY).unwrap_err().to_string();
            let theirs = serde_json::from_slice::<serde_json::Value>(bad)
                .unwrap_err()
                .to_string();
            assert_eq!(ours, theirs, "{:?}", String::from_utf8_lossy(bad));
        }
    }
}
