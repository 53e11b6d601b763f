//! `json::rewrite` against the whole path: for generated JSON texts — numbers in every
//! spelling, strings with and without escapes, keys in any order, array-index keys,
//! duplicate keys, white space anywhere — rewriting the text in each of the four dialects
//! gives the bytes of writing serde_json's value of it, and a text serde_json refuses is
//! refused with serde_json's error.

mod common;

use common::Gen;
use envelope::json::Dialect;
use envelope::json::rewrite::rewrite;

const DIALECTS: [Dialect; 4] = [Dialect::Js, Dialect::Go, Dialect::Newtonsoft, Dialect::Jcs];

fn space(g: &mut Gen) -> &'static str {
    ["", "", "", " ", "\n  ", "\t"][g.below(6) as usize]
}

fn number(g: &mut Gen) -> String {
    let n = g.below(2000) as i64 - 1000;
    match g.below(12) {
        0 => format!("{n}.0"),
        1 => format!("{n}e0"),
        2 => format!("{}.{:03}", n, g.below(1000)),
        3 => format!("{n}.250E-2"),
        4 => "-0".into(),
        5 => "-0.0".into(),
        6 => "18446744073709551615".into(),
        7 => "123456789012345678901234".into(),
        8 => "9007199254740993".into(),
        9 => format!("{}e{}", g.below(9) + 1, g.below(40)),
        10 => "1.7976931348623157e308".into(),
        _ => n.to_string(),
    }
}

fn string(g: &mut Gen) -> String {
    const PIECES: [&str; 16] = [
        "a",
        "Z",
        " ",
        "\\n",
        "\\\"",
        "\\\\",
        "\\/",
        "\\u00e9",
        "é",
        "\\u2028",
        "\u{2028}",
        "\u{85}",
        "\\ud83d\\ude00",
        "😀",
        "\\u0001",
        "\\t",
    ];
    let body: String = (0..g.below(6))
        .map(|_| PIECES[g.below(PIECES.len() as u64) as usize])
        .collect();
    format!("\"{body}\"")
}

fn key(g: &mut Gen) -> String {
    const KEYS: [&str; 10] = [
        "a",
        "b",
        "B",
        "0",
        "1",
        "10",
        "01",
        "é",
        "\\u0062",
        "4294967295",
    ];
    format!("\"{}\"", KEYS[g.below(KEYS.len() as u64) as usize])
}

/// A JSON text of depth at most `depth`.
fn text(g: &mut Gen, depth: u32) -> String {
    let kind = if depth == 0 { g.below(4) } else { g.below(6) };
    match kind {
        0 => ["null", "true", "false"][g.below(3) as usize].to_string(),
        1 => number(g),
        2 | 3 => string(g),
        4 => {
            let items: Vec<String> = (0..g.below(4))
                .map(|_| format!("{}{}{}", space(g), text(g, depth - 1), space(g)))
                .collect();
            format!("[{}]", items.join(","))
        }
        _ => {
            let members: Vec<String> = (0..g.below(5))
                .map(|_| {
                    format!(
                        "{}{}{}:{}{}",
                        space(g),
                        key(g),
                        space(g),
                        text(g, depth - 1),
                        space(g)
                    )
                })
                .collect();
            format!("{{{}}}", members.join(","))
        }
    }
}

fn whole(text: &[u8], dialect: Dialect) -> Result<Vec<u8>, String> {
    serde_json::from_slice::<serde_json::Value>(text)
        .map(|value| envelope::json::to_vec(&value, dialect))
        .map_err(|e| e.to_string())
}

fn rewritten(text: &[u8], dialect: Dialect) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    rewrite(text, dialect, &mut out)
        .map(|()| out)
        .map_err(|e| e.to_string())
}

#[test]
fn generated_texts_in_every_dialect() {
    let mut g = Gen::new(0x0072_6577_7269_7465);
    let mut reordered = 0;
    for _ in 0..6000 {
        let root = loop {
            let root = text(&mut g, 4);
            if root.starts_with(['{', '[']) {
                break root;
            }
        };
        let doc = format!("{}{root}{}", space(&mut g), space(&mut g));
        for dialect in DIALECTS {
            let want = whole(doc.as_bytes(), dialect);
            assert_eq!(
                rewritten(doc.as_bytes(), dialect),
                want,
                "{dialect:?} {doc}"
            );
        }
        if doc.contains("\"1\"") && doc.contains("\"a\"") {
            reordered += 1;
        }
    }
    // Objects that must be reordered (an array-index key beside another) are among them.
    assert!(reordered > 300, "{reordered}");
}

#[test]
fn refusals_are_serde_jsons() {
    for doc in ["", "{", "[1,]", "{\"a\" 1}", "1e400", "\"\\ud800\"", "[] x"] {
        for dialect in DIALECTS {
            let error = rewritten(doc.as_bytes(), dialect).unwrap_err();
            assert_eq!(Err(error), whole(doc.as_bytes(), dialect), "{doc}");
        }
    }
}
