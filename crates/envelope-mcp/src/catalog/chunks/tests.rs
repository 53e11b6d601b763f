//! The catalog's reading of stored results: the pull reader's against the whole read.

use proptest::prelude::*;
use serde_json::json;

use super::*;

/// The JSON a text holds, when it is an object or an array.
fn json_of(text: &str) -> Option<Value> {
    let start = text.trim_start().as_bytes().first()?;
    if *start != b'{' && *start != b'[' {
        return None;
    }
    serde_json::from_str(text).ok()
}

impl Shape {
    fn of_value(value: &Value) -> Shape {
        let keys_of = |value: &Value| -> Vec<String> {
            value.as_object().map_or(Vec::new(), |members| {
                members.keys().take(SUMMARY_KEYS).cloned().collect()
            })
        };
        let records = |name: Option<&str>, items: &Vec<Value>| Shape::Records {
            name: name.map(str::to_string),
            count: items.len(),
            fields: items.first().map_or(Vec::new(), keys_of),
        };
        match value {
            Value::Array(items) => records(None, items),
            Value::Object(members) => members
                .iter()
                .find_map(|(name, v)| v.as_array().map(|items| records(Some(name), items)))
                .unwrap_or_else(|| Shape::Object {
                    keys: keys_of(value),
                }),
            _ => Shape::Other,
        }
    }
}

proptest::proptest! {
    /// The pull reader's description of a JSON text is its parse's, compact or pretty,
    /// and a text that is not all JSON has none.
    #[test]
    fn a_json_text_is_described_as_its_parse(value in value(), pretty: bool, tail: bool) {
        let mut text = match pretty {
            true => serde_json::to_string_pretty(&value).unwrap(),
            false => value.to_string(),
        };
        if tail {
            text.push_str(" x");
        }
        let expected = json_of(&text).map(|parsed| Shape::of_value(&parsed));
        proptest::prop_assert_eq!(Shape::of_text(text.as_bytes()), expected);
    }
}

#[test]
fn a_large_json_text_is_summarized_as_records_without_being_parsed() {
    let rows: Vec<Value> = (0..3)
        .map(|i| json!({"id": i, "name": "n", "id2": [i]}))
        .collect();
    let text = json!({"total": 3, "rows": rows, "more": {"a": [1]}}).to_string();
    let result = json!({"content": [{"type": "text", "text": text}]});
    let bytes = result.to_string();
    let split = split(bytes.as_bytes()).unwrap();
    assert_eq!(split.kind, Kind::Records);
    assert_eq!(split.summary, "3 records in rows, fields: id, name, id2");
}

/// Every chunk of `split`, owned: (pointer, offset, unit, text).
fn all(split: &Split<'_>) -> Vec<(String, usize, Unit, String)> {
    let mut out = Vec::new();
    let mut keep = |c: Chunk<'_>| -> Result<(), ()> {
        out.push((c.pointer.to_string(), c.offset, c.unit, c.text.to_string()));
        Ok(())
    };
    split.each_chunk(&mut keep).unwrap();
    out
}

#[test]
fn text_lines_at_character_offsets() {
    let result = json!({"content": [{"type": "text", "text": "héllo\n\nwörld two\r\nlast"}]});
    let bytes = result.to_string();
    let split = split(bytes.as_bytes()).unwrap();
    let chunks = all(&split);
    let got: Vec<(usize, &str)> = chunks.iter().map(|c| (c.1, c.3.as_str())).collect();
    assert_eq!(got, vec![(0, "héllo"), (7, "wörld two"), (18, "last")]);
    assert!(chunks.iter().all(|c| c.0 == "/content/0/text"));
    assert_eq!(split.kind, Kind::Text);
    assert_eq!(split.summary, "4 lines: héllo");
}

/// The summary's first line, read in pieces and kept only in part, is what the whole text's
/// `str::lines` gives once cut to the summary's length: long lines, white space after the
/// part kept, a line of only white space first, escapes at its start.
#[test]
fn the_first_line_is_summarized_as_the_whole_text_would_be() {
    let spaces = " ".repeat(FIRST_LINE_BYTES + 100);
    let wide = "é".repeat(FIRST_LINE_BYTES);
    for text in [
        format!("a{spaces}b\nnext"),
        format!("a{spaces}\nnext"),
        format!("a{spaces}"),
        format!("{spaces}\n\t  {wide}x\n"),
        format!("\t\r\n \u{a0}first {wide}"),
        format!("  \n\n{spaces}\n"),
        "\"quoted\"\r\n".to_string(),
    ] {
        let result = json!({"content": [{"type": "text", "text": text}]});
        let bytes = result.to_string();
        let (_, summary, _) = read_all(bytes.as_bytes());
        let (_, expected, _) = whole_read(&result);
        assert_eq!(summary, expected, "{text:?}");
    }
}

#[test]
fn long_lines_are_cut_into_pieces_at_their_offsets() {
    let line = "é".repeat(MAX_CHUNK_CHARS * 2 + 5);
    let result = json!({"content": [{"type": "text", "text": format!("a\n{line}")}]});
    let bytes = result.to_string();
    let offsets: Vec<usize> = all(&split(bytes.as_bytes()).unwrap())
        .iter()
        .map(|c| c.1)
        .collect();
    assert_eq!(
        offsets,
        vec![0, 2, 2 + MAX_CHUNK_CHARS, 2 + 2 * MAX_CHUNK_CHARS]
    );
}

#[test]
fn records_are_items_and_the_mirror_is_not_indexed_twice() {
    let structured = json!({"rows": [{"id": 1, "name": "ada"}, {"id": 2, "name": "bob"}], "n": 2});
    let result = json!({
        "content": [{"type": "text", "text": structured.to_string()}],
        "structuredContent": structured,
    });
    let bytes = result.to_string();
    let split = split(bytes.as_bytes()).unwrap();
    let chunks = all(&split);
    let got: Vec<(&str, usize, Unit)> = chunks.iter().map(|c| (c.0.as_str(), c.1, c.2)).collect();
    assert_eq!(
        got,
        vec![
            ("/structuredContent/rows", 0, Unit::Item),
            ("/structuredContent/rows", 1, Unit::Item),
            ("/structuredContent", 0, Unit::Item),
        ]
    );
    assert_eq!(split.kind, Kind::Records);
    assert_eq!(split.summary, "2 records in rows, fields: id, name");
}

#[test]
fn a_string_repeating_a_text_block_is_indexed_once() {
    let file = "alpha\nbeta";
    let result = json!({
        "content": [{"type": "text", "text": file}],
        "structuredContent": {"content": file, "path/x": "gamma"},
    });
    let bytes = result.to_string();
    let split = split(bytes.as_bytes()).unwrap();
    let chunks = all(&split);
    let got: Vec<(&str, &str)> = chunks
        .iter()
        .map(|c| (c.0.as_str(), c.3.as_str()))
        .collect();
    assert_eq!(
        got,
        vec![
            ("/content/0/text", "alpha"),
            ("/content/0/text", "beta"),
            ("/structuredContent/path~1x", "gamma"),
        ]
    );
    assert_eq!(split.kind, Kind::Text);
    assert_eq!(split.summary, "2 lines: alpha");
}

// The whole read, the oracle of the pull reader's: the result parsed into a `Value` and
// walked, as the catalog read it before (the lines, pieces and summary are the module's).

/// A result as the index holds it: kind, summary, and each chunk's pointer, offset, unit
/// and text.
type Indexed = (Kind, String, Vec<(String, usize, Unit, String)>);

fn read_all(bytes: &[u8]) -> Indexed {
    let split = split(bytes).unwrap();
    (split.kind, split.summary.clone(), all(&split))
}

fn whole_read(result: &Value) -> Indexed {
    let structured = result.get("structuredContent");
    let mut texts: Vec<(String, &str)> = Vec::new();
    let mut first_json: Option<Shape> = None;
    for (i, block) in result
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let (pointer, text) = match block.get("type").and_then(Value::as_str) {
            Some("text") => (format!("/content/{i}/text"), block.get("text")),
            Some("resource") => (
                format!("/content/{i}/resource/text"),
                block.get("resource").and_then(|r| r.get("text")),
            ),
            _ => continue,
        };
        let Some(text) = text.and_then(Value::as_str) else {
            continue;
        };
        if structured.is_some_and(|s| json_of(text).is_some_and(|parsed| parsed == *s)) {
            continue;
        }
        if first_json.is_none() {
            first_json = json_of(text).map(|parsed| Shape::of_value(&parsed));
        }
        texts.push((pointer, text));
    }
    let text_values: Vec<&str> = texts.iter().map(|(_, text)| *text).collect();
    let wrapper = structured
        .and_then(Value::as_object)
        .is_some_and(|members| !texts.is_empty() && members.values().all(Value::is_string));
    let described = match structured.filter(|_| !wrapper) {
        Some(structured) => Some(Shape::of_value(structured)),
        None => first_json,
    };
    let kind = match &described {
        Some(Shape::Records { .. }) => Kind::Records,
        Some(_) => Kind::Json,
        None if result.get("content").is_none() => Kind::Json,
        None => Kind::Text,
    };
    let mut chunks = Vec::new();
    let mut keep = |c: Chunk<'_>| -> Result<(), ()> {
        chunks.push((c.pointer.to_string(), c.offset, c.unit, c.text.to_string()));
        Ok(())
    };
    for (pointer, text) in &texts {
        lines(text, pointer, &mut keep).unwrap();
    }
    let walked = match structured {
        Some(structured) => Some((structured, "/structuredContent")),
        None if result.get("content").is_none() => Some((result, "")),
        None => None,
    };
    if let Some((value, pointer)) = walked {
        walk_value(value, pointer, &text_values, 0, &mut keep);
    }
    let lines = TextLines {
        count: text_values.iter().map(|t| t.lines().count()).sum(),
        first: text_values
            .iter()
            .flat_map(|t| t.lines())
            .map(str::trim)
            .find(|l| !l.is_empty())
            .unwrap_or("")
            .to_string(),
    };
    (kind, summary(described.as_ref(), lines), chunks)
}

fn walk_value(
    value: &Value,
    pointer: &str,
    texts: &[&str],
    depth: usize,
    each: &mut dyn FnMut(Chunk<'_>) -> Result<(), ()>,
) {
    match value {
        Value::Array(items) => {
            for (index, item) in items.iter().enumerate() {
                let text = match item {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                pieces(&text, Place::Item(index), pointer, each).unwrap();
            }
        }
        Value::String(text) if !texts.contains(&text.as_str()) => {
            lines(text, pointer, each).unwrap();
        }
        Value::String(_) => {}
        Value::Object(members) => {
            let mut scalars = Vec::new();
            for (name, member) in members {
                match member {
                    Value::Array(_) | Value::String(_) | Value::Object(_) if depth < MAX_DEPTH => {
                        let inner = format!("{pointer}/{}", escape_token(name));
                        walk_value(member, &inner, texts, depth + 1, each);
                    }
                    other => scalars.push(format!("{name}: {other}")),
                }
            }
            if !scalars.is_empty() {
                pieces(&scalars.join(", "), Place::Item(0), pointer, each).unwrap();
            }
        }
        scalar => each(Chunk {
            pointer,
            offset: 0,
            unit: Unit::Item,
            text: &scalar.to_string(),
        })
        .unwrap(),
    }
}

/// JSON leaves: numbers integral and not, strings with escapes and pointer characters.
fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i32>().prop_map(Value::from),
        (-100i32..100).prop_map(|i| json!(i as f64 * 0.5)),
        "[a-c\\\\\"é \n~/]{0,12}".prop_map(Value::from),
    ]
}

/// JSON values of every kind, records among them.
fn value() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(6, 60, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            proptest::collection::vec(("[a-e/~]{1,2}", inner), 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Stored results: `CallToolResult`s with text blocks (plain, holding JSON, pretty JSON,
/// not strings), resources and images, with or without `structuredContent` and its mirrors;
/// and roots that are no `CallToolResult`.
fn result() -> impl Strategy<Value = Value> {
    let block = prop_oneof![
        "[a-c \n\r\t{}\\[\\]]{0,30}".prop_map(|t| json!({"type": "text", "text": t})),
        value().prop_map(|v| json!({"type": "text", "text": v.to_string()})),
        value().prop_map(
            |v| json!({"type": "text", "text": serde_json::to_string_pretty(&v).unwrap()})
        ),
        "[a-c \n]{0,30}"
            .prop_map(|t| json!({"type": "resource", "resource": {"uri": "x", "text": t}})),
        Just(json!({"type": "image", "data": "AAAA"})),
        value().prop_map(|v| json!({"type": "text", "text": v})),
    ];
    (
        proptest::collection::vec(block, 0..4),
        proptest::option::of(value()),
        0..4u8,
        any::<bool>(),
    )
        .prop_map(|(blocks, structured, mode, mirror)| {
            let mut blocks = blocks;
            if mirror && let Some(s) = &structured {
                blocks.push(json!({"type": "text", "text": s.to_string()}));
                if let Value::Object(m) = s {
                    let rev: serde_json::Map<String, Value> = m.clone().into_iter().rev().collect();
                    blocks.push(json!({"type": "text", "text": Value::Object(rev).to_string()}));
                    blocks.push(
                        json!({"type": "text", "text": serde_json::to_string_pretty(s).unwrap()}),
                    );
                }
            }
            match mode {
                0 => structured.unwrap_or(Value::Null),
                1 => json!({"content": blocks}),
                _ => match structured {
                    Some(s) => json!({"content": blocks, "structuredContent": s}),
                    None => json!({"content": blocks}),
                },
            }
        })
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(5000))]
    /// The pull reader's kind, summary and chunks are the whole read's, compact or pretty,
    /// with mirrors of `structuredContent` in its order, in another and pretty-printed,
    /// text blocks holding JSON, resources, non-text blocks, and roots that are no
    /// `CallToolResult`.
    #[test]
    fn the_pull_readers_chunks_are_the_whole_reads(v in result(), pretty: bool) {
        let text = match pretty {
            true => serde_json::to_string_pretty(&v).unwrap(),
            false => v.to_string(),
        };
        proptest::prop_assert_eq!(read_all(text.as_bytes()), whole_read(&v));
    }
}
