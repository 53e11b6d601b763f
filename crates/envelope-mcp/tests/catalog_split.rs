//! The catalog reads a stored result with the pull reader (`catalog::chunks::split` over
//! its bytes): every result gives the kind, the summary and the chunks (pointer, offset,
//! unit, text) of the whole read (`catalog_split/whole.rs`: the result parsed into a
//! `Value` and walked, as the catalog read it before), compact or pretty, with mirrors of
//! `structuredContent` in its order, in another and pretty-printed, text blocks holding
//! JSON, resources, non-text blocks, and roots that are no `CallToolResult`.

#[path = "catalog_split/whole.rs"]
#[allow(dead_code)]
mod whole;

use envelope_mcp::catalog::chunks;
use proptest::prelude::*;
use serde_json::{Value, json};

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i32>().prop_map(Value::from),
        (-100i32..100).prop_map(|i| json!(i as f64 * 0.5)),
        "[a-c\\\\\"é \n~/]{0,12}".prop_map(Value::from),
    ]
}

fn value() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(6, 60, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            proptest::collection::vec(("[a-e/~]{1,2}", inner), 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn result() -> impl Strategy<Value = Value> {
    let block = prop_oneof![
        "[a-c \n{}\\[\\]]{0,30}".prop_map(|t| json!({"type": "text", "text": t})),
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

/// A result as the index holds it: kind, summary, and each chunk's pointer, offset, unit
/// and text.
type Indexed = (String, String, Vec<(String, usize, String, String)>);

fn read_all(bytes: &[u8]) -> Indexed {
    let split = chunks::split(bytes).unwrap();
    let mut out = Vec::new();
    let mut f = |c: chunks::Chunk<'_>| -> Result<(), ()> {
        out.push((
            c.pointer.to_string(),
            c.offset,
            c.unit.code().to_string(),
            c.text.to_string(),
        ));
        Ok(())
    };
    split.each_chunk(&mut f).unwrap();
    (split.kind.as_str().to_string(), split.summary.clone(), out)
}

fn whole_all(value: &Value) -> Indexed {
    let split = whole::split(value);
    let mut out = Vec::new();
    let mut f = |c: whole::Chunk<'_>| -> Result<(), ()> {
        out.push((
            c.pointer.to_string(),
            c.offset,
            c.unit.code().to_string(),
            c.text.to_string(),
        ));
        Ok(())
    };
    split.each_chunk(&mut f).unwrap();
    (split.kind.as_str().to_string(), split.summary.clone(), out)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(20000))]
    #[test]
    fn the_pull_readers_chunks_are_the_whole_reads(v in result(), pretty: bool) {
        let text = if pretty { serde_json::to_string_pretty(&v).unwrap() } else { v.to_string() };
        prop_assert_eq!(read_all(text.as_bytes()), whole_all(&v));
    }
}
