//! `envelope_read` with the paging index: the pointer is walked in the
//! [index](super::index), and only the bytes of what the answer needs are read from the
//! store — the window of an array's items or a string's characters, or the one value the
//! pointer ends in. The answer is the one reading the whole artifact gives, word for word
//! (the same [`window`](super::window) and [`locate`](super::locate) functions make it).

use envelope_store::{Digest, Store};
use serde_json::Value;

use super::args::ReadArgs;
use super::index::{Index, Items, Node, Span, Text};
use super::{jq, locate, window};

/// Answers `args` from `index`, the index of the artifact `digest` (the caller checked the
/// artifact is there and this caller's).
pub(crate) fn read(
    args: &ReadArgs,
    digest: &Digest,
    index: &Index,
    store: &dyn Store,
    limit: usize,
) -> Result<Value, String> {
    let source = Source { digest, store };
    let steps = locate::steps(&args.pointer)?;
    let mut node = &index.root;
    // The long strings stepped into, outermost first: a node's spans are in the decoded
    // bytes of the last one.
    let mut texts: Vec<&Text> = Vec::new();
    let mut at = String::new();
    let mut done = 0;
    while done < steps.len() {
        let raw = steps[done];
        let token = locate::token(raw);
        node = match node {
            Node::Text(text) => match &text.inner {
                // The pointer goes on inside the JSON the string holds (the same step).
                Some(inner) => {
                    texts.push(text);
                    node = inner;
                    continue;
                }
                // Not indexed inside (JSON in JSON in the artifact, or no JSON): the string
                // is read, and the whole read's rules step into it or say why not.
                None => {
                    let value = Value::String(source.chars(&texts, text, 0, text.chars)?);
                    let value = locate::resolve_from(value, &args.pointer, done, &at)?;
                    return answer(value, args, limit);
                }
            },
            Node::Whole(span) => {
                let value = source.value(&texts, span.clone())?;
                let value = locate::resolve_from(value, &args.pointer, done, &at)?;
                return answer(value, args, limit);
            }
            Node::Object { members, .. } => match members.iter().find(|(key, _)| *key == token) {
                Some((_, member)) => member,
                None => {
                    let keys = members.iter().map(|(key, _)| key);
                    return Err(locate::no_member(&args.pointer, &at, &token, keys));
                }
            },
            Node::Array { items, big, span } => match locate::array_index(&token) {
                Some(i) if i < items.count => match big.get(&i) {
                    Some(item) => item,
                    None => {
                        let items = source.items(&texts, items, span, i..i + 1)?;
                        let item = items.into_iter().next().unwrap_or(Value::Null);
                        at.push('/');
                        at.push_str(raw);
                        let value = locate::resolve_from(item, &args.pointer, done + 1, &at)?;
                        return answer(value, args, limit);
                    }
                },
                Some(i) => return Err(locate::no_item(&args.pointer, &at, items.count, i)),
                None => return Err(locate::not_an_index(&args.pointer, &at, &token)),
            },
        };
        at.push('/');
        at.push_str(raw);
        done += 1;
    }
    if args.jq.is_some() {
        let value = source.whole(&texts, node)?;
        return answer(value, args, limit);
    }
    match node {
        Node::Array { items, span, .. } => array_window(&source, &texts, items, span, args, limit),
        Node::Text(text) => text_window(&source, &texts, text, args, limit),
        other => answer(source.whole(&texts, other)?, args, limit),
    }
}

/// The answer for the selected `value`, as the whole read makes it.
fn answer(value: Value, args: &ReadArgs, limit: usize) -> Result<Value, String> {
    let value = match &args.jq {
        Some(filter) => jq::run(filter, value).map_err(|e| e.to_string())?,
        None => value,
    };
    window::answer(value, args.offset, args.count, limit)
}

/// A window of a large array: its items from the offset are read a little more than can
/// fit at a time, more when all of them fit.
fn array_window(
    source: &Source<'_>,
    texts: &[&Text],
    items: &Items,
    span: &Span,
    args: &ReadArgs,
    limit: usize,
) -> Result<Value, String> {
    let total = items.count;
    let offset = args.offset.unwrap_or(0);
    let rest = window::past_end(offset, total)?;
    let wanted = args.count.map_or(rest, |c| c.min(rest));
    // Items as written take about what they take in the answer: twice the limit's worth is
    // nearly always enough. (Measured from the start of the offset's run: the starts of
    // small items are kept every few items.)
    let mut take = 1;
    if wanted > 0 {
        let (_, from) = items.run_of(offset);
        while take < wanted && items.end_before(offset + take, span) - from < 2 * limit as u64 {
            take += 1;
        }
    }
    loop {
        let read = source.items(texts, items, span, offset..offset + take.min(wanted))?;
        let (n, answer) = window::array_window_from(&read, offset, total, args.count, limit)?;
        if n < read.len() || read.len() >= wanted {
            return Ok(answer);
        }
        take = (take * 2).min(wanted);
    }
}

/// A window of a long string: its characters from the offset, as many as can fit.
fn text_window(
    source: &Source<'_>,
    texts: &[&Text],
    text: &Text,
    args: &ReadArgs,
    limit: usize,
) -> Result<Value, String> {
    let total = text.chars as usize;
    let offset = args.offset.unwrap_or(0);
    let rest = window::past_end(offset, total)?;
    let wanted = window::text_wanted(rest, args.count, limit);
    let tail = source.chars(texts, text, offset as u64, wanted as u64)?;
    window::text_window_from(&tail, offset, total, args.count, limit)
}

/// The artifact's bytes, read window by window.
struct Source<'a> {
    digest: &'a Digest,
    store: &'a dyn Store,
}

impl Source<'_> {
    /// The bytes at `span` of the text the innermost of `texts` holds (the artifact when
    /// there is none).
    fn bytes(&self, texts: &[&Text], span: Span) -> Result<Vec<u8>, String> {
        let Some((text, outer)) = texts.split_last() else {
            return self
                .store
                .get_range(self.digest, span)
                .map_err(|e| super::store_error(self.digest, e).1);
        };
        // From the last mark at or before the start to the first at or after the end.
        let first = text.marks.partition_point(|m| m.decoded <= span.start) - 1;
        let last = text.marks.partition_point(|m| m.decoded < span.end);
        let raw_end = text
            .marks
            .get(last)
            .map_or(text.raw.end - text.raw.start, |m| m.raw);
        let from = text.marks[first];
        let written = self.bytes(outer, text.raw.start + from.raw..text.raw.start + raw_end)?;
        let decoded = decode(&written)?;
        let start = (span.start - from.decoded) as usize;
        let end = (span.end - from.decoded) as usize;
        decoded
            .as_bytes()
            .get(start..end)
            .map(<[u8]>::to_vec)
            .ok_or_else(|| corrupted(self.digest))
    }

    /// The value at `span`.
    fn value(&self, texts: &[&Text], span: Span) -> Result<Value, String> {
        let bytes = self.bytes(texts, span)?;
        serde_json::from_slice(&bytes).map_err(|_| corrupted(self.digest))
    }

    /// The whole value of `node`.
    fn whole(&self, texts: &[&Text], node: &Node) -> Result<Value, String> {
        match node {
            Node::Text(text) => {
                let chars = self.chars(texts, text, 0, text.chars)?;
                Ok(Value::String(chars))
            }
            other => self.value(texts, other.span()),
        }
    }

    /// Items `range` of the array at `span` whose items are `items`: read from the start
    /// of the first one's run to the end of the run of the last.
    fn items(
        &self,
        texts: &[&Text],
        items: &Items,
        span: &Span,
        range: std::ops::Range<usize>,
    ) -> Result<Vec<Value>, String> {
        if range.is_empty() {
            return Ok(Vec::new());
        }
        let (first, from) = items.run_of(range.start);
        let end = items.end_before(range.end, span);
        let mut bytes = self.bytes(texts, from..end)?;
        // The comma and white space after the last item, when another follows it.
        while bytes.last().is_some_and(|b| b" \t\n\r,".contains(b)) {
            bytes.pop();
        }
        bytes.insert(0, b'[');
        bytes.push(b']');
        let mut read: Vec<Value> =
            serde_json::from_slice(&bytes).map_err(|_| corrupted(self.digest))?;
        read.drain(..range.start - first);
        read.truncate(range.len());
        Ok(read)
    }

    /// `count` characters of `text` from character `from` (fewer at its end).
    fn chars(&self, texts: &[&Text], text: &Text, from: u64, count: u64) -> Result<String, String> {
        let every = text.marks.get(1).map_or(u64::MAX, |m| m.chars);
        let first = text.marks[((from / every) as usize).min(text.marks.len() - 1)];
        let raw_end = text
            .marks
            .get((from + count).div_ceil(every) as usize)
            .map_or(text.raw.end - text.raw.start, |m| m.raw);
        let written = self.bytes(texts, text.raw.start + first.raw..text.raw.start + raw_end)?;
        let decoded = decode(&written)?;
        Ok(decoded
            .chars()
            .skip((from - first.chars) as usize)
            .take(count as usize)
            .collect())
    }
}

/// The characters of a piece of a string as written (between marks: no escape is cut).
fn decode(written: &[u8]) -> Result<String, String> {
    let mut quoted = Vec::with_capacity(written.len() + 2);
    quoted.push(b'"');
    quoted.extend_from_slice(written);
    quoted.push(b'"');
    serde_json::from_slice(&quoted).map_err(|e| format!("a stored string cannot be read: {e}"))
}

/// The error for bytes that are not where the index says (the artifact changed under it).
fn corrupted(digest: &Digest) -> String {
    format!(
        "{} is corrupted in the store: it is not the JSON result it was",
        super::artifact_uri(digest)
    )
}

#[cfg(test)]
mod tests {
    use envelope_store::FileStore;
    use proptest::prelude::*;
    use serde_json::json;

    use super::super::index::{Tuning, build};
    use super::*;

    /// JSON values with what real results hold: long and escaped strings (quotes, control
    /// characters, non-ASCII, emoji), keys with `/` and `~`, repeated keys never (a `Value`
    /// has none), strings holding JSON.
    fn values() -> impl Strategy<Value = Value> {
        // Arrays of up to 120 items, many of them tiny: their starts are kept a run at a
        // time (`thin_from` is small here).
        let text = prop_oneof![
            "[a-z ]{0,40}",
            "[\"\\\\\n\t\u{1}é😀a/~]{0,30}",
            "(line [0-9]{1,3}\n){0,20}",
        ];
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i32>().prop_map(|n| json!(n)),
            (-1e6f64..1e6).prop_map(|f| json!(f)),
            text.prop_map(Value::String),
        ];
        leaf.prop_recursive(5, 120, 12, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..12).prop_map(Value::Array),
                prop::collection::vec(0u8..10, 0..120).prop_map(|digits| Value::Array(
                    digits.into_iter().map(|d| json!(d)).collect()
                )),
                prop::collection::vec(("[a-z/~]{0,4}", inner.clone()), 0..8)
                    .prop_map(|members| Value::Object(members.into_iter().collect())),
                // A string holding JSON, compact or pretty (a text block with the payload).
                (inner, any::<bool>()).prop_map(|(v, pretty)| {
                    let v = match v {
                        v @ (Value::Array(_) | Value::Object(_)) => v,
                        other => json!({"rows": [other.clone(), other]}),
                    };
                    Value::String(match pretty {
                        true => serde_json::to_string_pretty(&v).unwrap(),
                        false => v.to_string(),
                    })
                }),
            ]
        })
    }

    /// Every pointer into `value`, stepping into strings that hold JSON as `locate` does.
    fn pointers(value: &Value, at: &str, out: &mut Vec<String>) {
        out.push(at.to_string());
        match value {
            Value::Object(map) => {
                for (key, member) in map {
                    let key = key.replace('~', "~0").replace('/', "~1");
                    pointers(member, &format!("{at}/{key}"), out);
                }
            }
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    pointers(item, &format!("{at}/{i}"), out);
                }
            }
            Value::String(text) => {
                if let Ok(inner @ (Value::Object(_) | Value::Array(_))) =
                    serde_json::from_str::<Value>(text)
                {
                    // The string itself was pushed; its inside starts one step further.
                    let mut inside = Vec::new();
                    pointers(&inner, at, &mut inside);
                    out.extend(inside.into_iter().skip(1));
                }
            }
            _ => {}
        }
    }

    fn store_of(bytes: &[u8]) -> (tempfile::TempDir, FileStore, Digest) {
        let dir = tempfile::tempdir().unwrap();
        let store = FileStore::new(dir.path());
        let digest = store.put(bytes, "application/json", &[]).unwrap().digest;
        (dir, store, digest)
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

        /// The paged read answers every read exactly as the whole read does: windows,
        /// values, jq, and every error's words.
        #[test]
        fn the_paged_read_answers_as_the_whole_read(
            doc in values(),
            pretty in any::<bool>(),
            big in 2u64..64,
            mark_every in 1u64..6,
            thin_from in 1usize..6,
            reads in prop::collection::vec(
                (any::<prop::sample::Index>(), 0u8..8, proptest::option::of(0usize..40),
                 proptest::option::of(0usize..30), 60usize..1500, 0u8..40),
                1..24),
        ) {
            let doc = json!({"content": [{"type": "text", "text": doc.to_string()}], "structuredContent": doc});
            let bytes = match pretty {
                true => serde_json::to_vec_pretty(&doc).unwrap(),
                false => serde_json::to_vec(&doc).unwrap(),
            };
            let (_dir, store, digest) = store_of(&bytes);
            let index = build(&bytes, Tuning { big, mark_every, thin_from }).unwrap();
            let mut all = Vec::new();
            pointers(&doc, "", &mut all);
            for (pick, mutation, offset, count, limit, jq) in reads {
                let mut pointer = pick.get(&all).clone();
                match mutation {
                    0 => pointer.push_str("/nope"),
                    1 => pointer.push_str("/99"),
                    2 => pointer.push_str("/01"),
                    3 => pointer.push_str("/-"),
                    _ => {}
                }
                let args = ReadArgs {
                    uri: super::super::artifact_uri(&digest),
                    pointer,
                    offset,
                    count,
                    jq: (jq == 0).then(|| ".".to_string()),
                };
                let paged = read(&args, &digest, &index, &store, limit);
                let whole = super::super::read_whole(&args, &digest, &store, limit);
                prop_assert_eq!(paged, whole, "{:?}", args);
            }
        }
    }

    #[test]
    fn a_window_of_a_long_text_reads_only_about_the_window() {
        let text: String = (0..200_000).map(|i| format!("line {i}\n")).collect();
        let doc = json!({"content": [{"type": "text", "text": text}]});
        let bytes = serde_json::to_vec(&doc).unwrap();
        let (_dir, store, digest) = store_of(&bytes);
        let index = build(&bytes, Tuning::DEFAULT).unwrap();
        let args = ReadArgs {
            uri: super::super::artifact_uri(&digest),
            pointer: "/content/0/text".into(),
            offset: Some(1_000_000),
            count: None,
            jq: None,
        };
        let counting = Counting {
            inner: &store,
            read: Default::default(),
        };
        let answer = read(&args, &digest, &index, &counting, 4096).unwrap();
        let whole = super::super::read_whole(&args, &digest, &store, 4096).unwrap();
        assert_eq!(answer, whole);
        let read_bytes = counting.read.load(std::sync::atomic::Ordering::Relaxed);
        assert!(
            read_bytes < 16 * 4096,
            "{read_bytes} bytes read for one window of a {} byte artifact",
            bytes.len()
        );
        assert_eq!(answer["structuredContent"]["offset"], 1_000_000);
    }

    #[test]
    fn a_stored_result_is_indexed_in_the_background_and_read_in_windows() {
        let rows: Vec<Value> = (0..40_000)
            .map(|i| json!({"id": i, "name": format!("row {i}")}))
            .collect();
        let doc = json!({"content": [{"type": "text", "text": "40000 rows"}], "structuredContent": {"rows": rows}});
        let bytes = serde_json::to_vec(&doc).unwrap();
        assert!(bytes.len() as u64 >= super::super::index::INDEX_FROM);
        let (_dir, store, digest) = store_of(&bytes);
        super::super::index::remember(&digest, &bytes);
        let started = std::time::Instant::now();
        while super::super::index::kept(&digest).is_none() {
            assert!(started.elapsed().as_secs() < 60, "the index was not built");
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let counting = Counting {
            inner: &store,
            read: Default::default(),
        };
        let args = json!({"uri": super::super::artifact_uri(&digest), "pointer": "/structuredContent/rows", "offset": 30_000});
        let answer = super::super::call_read(&args, &counting, 4096);
        assert_eq!(
            answer["structuredContent"]["items"][0],
            json!({"id": 30_000, "name": "row 30000"})
        );
        assert_eq!(answer, super::super::call_read_whole(&args, &store, 4096));
        let read_bytes = counting.read.load(std::sync::atomic::Ordering::Relaxed);
        assert!(
            read_bytes < 16 * 4096,
            "{read_bytes} of {} bytes read",
            bytes.len()
        );
    }

    /// A store that counts the bytes read through it.
    struct Counting<'a> {
        inner: &'a FileStore,
        read: std::sync::atomic::AtomicU64,
    }

    impl Store for Counting<'_> {
        fn put(
            &self,
            bytes: &[u8],
            kind: &str,
            tags: &[String],
        ) -> Result<envelope_store::Sidecar, envelope_store::StoreError> {
            self.inner.put(bytes, kind, tags)
        }
        fn get(&self, digest: &Digest) -> Result<Vec<u8>, envelope_store::StoreError> {
            let bytes = self.inner.get(digest)?;
            self.read
                .fetch_add(bytes.len() as u64, std::sync::atomic::Ordering::Relaxed);
            Ok(bytes)
        }
        fn get_range(
            &self,
            digest: &Digest,
            range: Span,
        ) -> Result<Vec<u8>, envelope_store::StoreError> {
            let bytes = self.inner.get_range(digest, range)?;
            self.read
                .fetch_add(bytes.len() as u64, std::sync::atomic::Ordering::Relaxed);
            Ok(bytes)
        }
        fn list(&self) -> Result<Vec<Digest>, envelope_store::StoreError> {
            self.inner.list()
        }
        fn sidecar(
            &self,
            digest: &Digest,
        ) -> Result<envelope_store::Sidecar, envelope_store::StoreError> {
            self.inner.sidecar(digest)
        }
        fn remove(&self, digest: &Digest) -> Result<(), envelope_store::StoreError> {
            self.inner.remove(digest)
        }
        fn gc_keeping(
            &self,
            limits: &envelope_store::GcLimits,
            keep: &dyn Fn(&Digest) -> bool,
        ) -> Result<envelope_store::GcReport, envelope_store::StoreError> {
            self.inner.gc_keeping(limits, keep)
        }
    }
}
