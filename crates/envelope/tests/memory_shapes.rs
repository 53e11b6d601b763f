//! Memory by construction, not by case: every command the library serves (shape with each
//! stage, convert to every format, unwrap, detect) on every shape of large document the
//! issue's table names and their neighbours (numbers in Python's spelling, keys in any
//! order, a summary beside `structuredContent`, indented mirrors, several text blocks,
//! error results, a large `_meta`, tool-envelope-v1 results, heavy `\u` escapes, payloads
//! that are not objects, a document of no format) holds at most the input once more plus a
//! small constant on the heap, counted by a counting allocator.
//!
//! `MEMORY_SHAPES_REPORT=1` prints the table of every measurement instead of stopping at
//! the first over the bound; `MEMORY_SHAPES_ONLY=text` measures only the documents whose
//! name holds `text` (a check of one shape while working on it).

mod common;
#[path = "common/heap.rs"]
mod heap;

use envelope::FormatId;
use envelope::convert::Document;
use envelope::model::ArtifactRef;
use envelope::shape::{ArtifactSink, ArtifactWriter, Pipeline, SinkError};
use serde_json::{Value, json};

/// The size of each generated document: 2 MB, or `MEMORY_SHAPES_MB` (the numbers of
/// docs/benchmarks.md were taken at 8).
fn size() -> usize {
    let mb = std::env::var("MEMORY_SHAPES_MB").ok();
    mb.and_then(|mb| mb.parse().ok()).unwrap_or(2) << 20
}

/// What a command may hold above the input: once the input (an output as large as it, or
/// a payload's rewritten copy) plus this (a megabyte's pieces and buffers, at least).
fn slack(size: usize) -> usize {
    (size * 3 / 8).max(1 << 20)
}

/// A store that hashes nothing and keeps nothing: what a file store holds in memory while
/// it writes (a piece at a time).
struct Discard;

impl ArtifactSink for Discard {
    fn put(&mut self, _bytes: &[u8], _kind: &str) -> Result<ArtifactRef, SinkError> {
        Ok(digest())
    }

    fn begin(&mut self) -> Option<Box<dyn ArtifactWriter + '_>> {
        Some(Box::new(Discard))
    }
}

impl ArtifactWriter for Discard {
    fn write(&mut self, _bytes: &[u8]) -> Result<(), SinkError> {
        Ok(())
    }

    fn finish(self: Box<Self>, _kind: &str) -> Result<ArtifactRef, SinkError> {
        Ok(digest())
    }
}

fn digest() -> ArtifactRef {
    ArtifactRef {
        digest: format!("sha256:{}", "0".repeat(64)),
    }
}

/// Records of about `size` bytes of JSON, as `f(i)` makes each.
fn records(size: usize, f: impl Fn(usize) -> Value) -> Vec<Value> {
    let mut out = Vec::new();
    let mut total = 0;
    while total < size {
        let record = f(out.len());
        total += record.to_string().len() + 1;
        out.push(record);
    }
    out
}

fn row(i: usize) -> Value {
    json!({"id": i, "name": format!("row {i}"), "path": format!("src/module_{}/file_{i}.rs", i % 97),
           "score": (i % 1000) as f64 + 0.25, "tags": ["a", "b"]})
}

/// A `git log` of about `size` bytes, a secret every `secret_every` entries (0: none).
fn git_log(size: usize, secret_every: usize) -> String {
    let mut text = String::with_capacity(size + 256);
    let mut i = 0;
    while text.len() < size {
        text.push_str(&format!(
            "commit {i:040x}\nAuthor: Dev <dev{i}@example.com>\n\n    Change number {i}\n\n"
        ));
        if secret_every > 0 && i % secret_every == 0 {
            text.push_str("    GITHUB_TOKEN=ghp_0123456789abcdefghijABCDEFGHIJ012345\n");
        }
        i += 1;
    }
    text
}

/// `value` as Python's `json.dumps` writes it: `", "` and `": "`, floats with a `.0`.
fn python(value: &Value) -> String {
    let mut out = String::new();
    write_python(value, &mut out);
    out
}

fn write_python(value: &Value, out: &mut String) {
    match value {
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_python(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (k, v)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&serde_json::to_string(k).unwrap());
                out.push_str(": ");
                write_python(v, out);
            }
            out.push('}');
        }
        Value::Number(n) if n.is_f64() => {
            let f = n.as_f64().unwrap();
            match f.fract() == 0.0 {
                true => out.push_str(&format!("{f:.1}")),
                false => out.push_str(&n.to_string()),
            }
        }
        Value::Number(n) if n.as_u64().is_some_and(|u| u % 3 == 0) => {
            out.push_str(&format!("{}.0", n))
        }
        other => out.push_str(&other.to_string()),
    }
}

/// Every keys' order reversed (no writer's order).
fn reversed(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let members: Vec<String> = map
                .iter()
                .rev()
                .map(|(k, v)| format!("{}:{}", serde_json::to_string(k).unwrap(), reversed(v)))
                .collect();
            format!("{{{}}}", members.join(","))
        }
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(reversed).collect();
            format!("[{}]", items.join(","))
        }
        other => other.to_string(),
    }
}

/// The documents: name and bytes.
fn documents(size: usize) -> Vec<(&'static str, Vec<u8>)> {
    let rows = Value::Array(records(size, row));
    let half = Value::Array(records(size / 2, row));
    let js = |v: &Value| serde_json::to_string(v).unwrap();
    let payload = json!({"rows": rows});
    let go_payload = String::from_utf8(envelope::json::to_vec(
        &payload,
        envelope::json::Dialect::Go,
    ))
    .unwrap();
    let structured = json!({"rows": half});
    let mirror = js(&Value::String(js(&structured)));
    let py_structured = python(&structured);
    let log = git_log(size, 0);
    let secret_log = git_log(size, 1000);
    let escaped: String = (0..size / 8)
        .map(|i| char::from_u32(0x4e00 + (i % 2000) as u32).unwrap())
        .collect();
    let escaped_payload = {
        let mut s = String::from("{\"text\":\"");
        for c in escaped.chars() {
            s.push_str(&format!("\\u{:04x}", c as u32));
        }
        s.push_str("\"}");
        s
    };
    let block = |inner: &str| {
        format!(
            "__ENVELOPE_V1__:{}",
            envelope::base64::encode(inner.as_bytes())
        )
    };
    let tev1_inner = format!(
        r#"{{"payload":{},"meta":{{"tool":"rows.list","ts":"2026-01-01T00:00:00.000Z","version":1}}}}"#,
        js(&structured)
    );
    let docs: Vec<(&'static str, String)> = vec![
        ("protocol-v1, Go order", format!(r#"{{"version":1,"status":"ok","command":"a.b","data":{go_payload},"meta":{{"ts":"2026-01-01T00:00:00Z"}},"error":{{}}}}"#)),
        ("protocol-v1, keys reversed", format!(r#"{{"version":1,"status":"ok","command":"a.b","data":{},"meta":{{"ts":"2026-01-01T00:00:00Z"}},"error":{{}}}}"#, reversed(&payload))),
        ("protocol-v1, indented", serde_json::to_string_pretty(&json!({"version":1,"status":"ok","command":"a.b","data":payload,"meta":{"ts":"2026-01-01T00:00:00Z"},"error":{}})).unwrap()),
        ("operations, as Python writes it", format!(r#"{{"data": {}, "meta": {{"source": "local"}}}}"#, python(&payload))),
        ("operations, array payload", format!(r#"{{"data":{},"meta":{{"source":"local"}}}}"#, js(&rows))),
        ("operations, string payload", format!(r#"{{"data":{},"meta":{{"source":"local"}}}}"#, js(&Value::String(log.clone())))),
        ("operations, string payload with secrets", format!(r#"{{"data":{},"meta":{{"source":"local"}}}}"#, js(&Value::String(secret_log.clone())))),
        ("operations, \\u escapes", format!(r#"{{"data":{escaped_payload},"meta":{{"source":"local"}}}}"#)),
        ("mcp, structuredContent and its mirror", format!(r#"{{"content":[{{"type":"text","text":{mirror}}}],"structuredContent":{}}}"#, js(&structured))),
        ("mcp, Python-spelled structuredContent and mirror", format!(r#"{{"content": [{{"type": "text", "text": {}}}], "structuredContent": {py_structured}}}"#, js(&Value::String(py_structured.clone())))),
        ("mcp, structuredContent beside a summary", format!(r#"{{"content":[{{"type":"text","text":"Found the rows."}}],"structuredContent":{}}}"#, js(&payload))),
        ("mcp, indented mirror", format!(r#"{{"content":[{{"type":"text","text":{}}}],"structuredContent":{}}}"#, js(&Value::String(serde_json::to_string_pretty(&structured).unwrap())), js(&structured))),
        ("mcp, one long text", format!(r#"{{"content":[{{"type":"text","text":{}}}]}}"#, js(&Value::String(log.clone())))),
        ("mcp, long text with secrets", format!(r#"{{"content":[{{"type":"text","text":{}}}]}}"#, js(&Value::String(secret_log.clone())))),
        ("mcp, two text blocks", format!(r#"{{"content":[{{"type":"text","text":{}}},{{"type":"text","text":{}}}]}}"#, js(&Value::String(secret_log[..size / 2].to_string())), js(&Value::String(log[..size / 2].to_string())))),
        ("mcp, error of a long text", format!(r#"{{"content":[{{"type":"text","text":{}}}],"isError":true}}"#, js(&Value::String(log.clone())))),
        ("protocol-v1, error of a long text", format!(r#"{{"version":1,"status":"error","command":"a.b","data":null,"meta":{{"ts":"2026-01-01T00:00:00Z"}},"error":{{"code":"ERUNTIME","message":{}}}}}"#, js(&Value::String(log.clone())))),
        ("ctxo, error of a long text", format!(r#"{{"error":true,"message":{}}}"#, js(&Value::String(secret_log.clone())))),
        ("mcp, large _meta", format!(r#"{{"content":[{{"type":"text","text":"ok"}}],"_meta":{{"trace":{}}}}}"#, js(&rows))),
        ("mcp, structuredContent beside a large _meta", format!(r#"{{"content":[{{"type":"text","text":"Rows."}}],"structuredContent":{},"_meta":{{"trace":{}}}}}"#, js(&structured), js(&half))),
        ("operations, large meta._meta", format!(r#"{{"data":{{"ok":true}},"meta":{{"source":"mcp","isError":false,"content":[{{"type":"text","text":"{{\"ok\":true}}"}}],"structuredContent":{{"ok":true}},"_meta":{{"trace":{}}}}}}}"#, js(&rows))),
        ("tool-envelope-v1 result", format!(r#"{{"content":[{{"type":"text","text":"Rows."}},{{"type":"text","text":"{}"}}]}}"#, block(&tev1_inner))),
        ("tool-envelope-v1 dual emit", format!(r#"{{"content":[{{"type":"text","text":"Rows."}},{{"type":"text","text":"{}"}}],"structuredContent":{tev1_inner}}}"#, block(&tev1_inner))),
        ("ctxo", format!(r#"{{"results":{},"_meta":{{"totalItems":1,"returnedItems":1,"truncated":false}}}}"#, js(&rows))),
        ("tool-result-envelope", format!(r#"{{"__envelope":{{"status":"ok","payloadPath":"result"}},"result":{}}}"#, js(&payload))),
        ("no envelope", js(&payload)),
    ];
    docs.into_iter().map(|(n, d)| (n, d.into_bytes())).collect()
}

/// The peak heap above the input of `run`, and its outcome (`Ok`/`Err`).
fn measure(run: impl FnOnce() -> Result<(), String>) -> (usize, Result<(), String>) {
    let before = heap::start();
    let outcome = run();
    (heap::peak_since(before), outcome)
}

type Command<'a> = (&'a str, Box<dyn Fn(&[u8]) -> Result<(), String> + 'a>);

fn commands<'a>() -> Vec<Command<'a>> {
    let shape = |limit: Option<usize>, redact: bool, store: bool| {
        move |input: &[u8]| {
            let mut sink = Discard;
            let mut pipeline = Pipeline::new(input).limit(limit).redact(redact);
            if store {
                pipeline = pipeline.store(&mut sink);
            }
            let (output, _) = pipeline.run_spliced().map_err(|e| e.to_string())?;
            output
                .write_to(&mut std::io::sink())
                .map_err(|e| e.to_string())
        }
    };
    let mut commands: Vec<Command<'a>> = vec![
        ("shape", Box::new(shape(None, false, false))),
        (
            "shape --limit 65536",
            Box::new(shape(Some(65536), false, false)),
        ),
        ("shape --store", Box::new(shape(None, false, true))),
        (
            "shape --store --limit 16384",
            Box::new(shape(Some(16384), false, true)),
        ),
        ("shape --redact", Box::new(shape(None, true, false))),
        (
            "shape --redact --limit 65536",
            Box::new(shape(Some(65536), true, false)),
        ),
        ("shape --redact --store", Box::new(shape(None, true, true))),
        (
            "unwrap",
            Box::new(|input: &[u8]| {
                let document = Document::new(input);
                let written = document.unwrap().map_err(|e| e.to_string())?;
                written
                    .write_to(&mut std::io::sink())
                    .map_err(|e| e.to_string())
            }),
        ),
        (
            "detect",
            Box::new(|input: &[u8]| {
                envelope::detect(input)
                    .map(|_| ())
                    .map_err(|e| e.to_string())
            }),
        ),
    ];
    for to in FormatId::ALL {
        let name: &'a str = Box::leak(format!("convert --to {to:?}").into_boxed_str());
        commands.push((
            name,
            Box::new(move |input: &[u8]| {
                let document = Document::new(input);
                let written = document
                    .convert(to, &Default::default())
                    .map_err(|e| e.to_string())?;
                written
                    .write_to(&mut std::io::sink())
                    .map_err(|e| e.to_string())
            }),
        ));
    }
    commands
}

/// The pairs of document and command known to hold more at 2 MB: each holds a few
/// megabytes whatever the size (redaction's buffers and held pieces, a cut's tree for its
/// 64 KiB limit), and is within the bound at 8 MB (the test of that has no exceptions). A
/// pair over the bound that is not listed fails the test; `*` stands for every command.
const KNOWN_OVER: &[(&str, &str)] = &[
    // A cut holds about 41 bytes per byte of its limit (the skimmed tree of what it may
    // keep, the cut of it, the encoding): 2.7 MB for 64 KiB.
    ("protocol-v1, Go order", "shape --limit 65536"),
    ("protocol-v1, Go order", "shape --redact --limit 65536"),
    ("protocol-v1, keys reversed", "shape --limit 65536"),
    ("protocol-v1, keys reversed", "shape --redact --limit 65536"),
    ("protocol-v1, indented", "shape --redact --limit 65536"),
    (
        "operations, as Python writes it",
        "shape --redact --limit 65536",
    ),
    ("tool-envelope-v1 result", "shape --limit 65536"),
    ("tool-envelope-v1 result", "shape --redact --limit 65536"),
    ("ctxo", "shape --redact --limit 65536"),
    (
        "mcp, structuredContent beside a large _meta",
        "shape --limit 65536",
    ),
    (
        "mcp, structuredContent beside a large _meta",
        "shape --redact --limit 65536",
    ),
    // Redaction of a long text a piece at a time: the pieces gathered and their masked
    // copies (about 1 MB).
    ("operations, string payload with secrets", "shape --redact"),
    (
        "operations, string payload with secrets",
        "shape --redact --limit 65536",
    ),
    (
        "operations, string payload with secrets",
        "shape --redact --store",
    ),
];

fn known_over(document: &str, command: &str) -> bool {
    KNOWN_OVER
        .iter()
        .any(|(d, c)| *d == document && (*c == "*" || *c == command))
}

#[test]
fn every_command_on_every_shape_holds_at_most_the_input_once_more() {
    check_every_pair(size(), &known_over);
}

/// At 8 MB no pair is over the bound, none excepted: what `KNOWN_OVER` lists at 2 MB costs
/// a few megabytes whatever the size (buffers, pieces, a cut's tree for its limit), never a
/// share of the input.
#[test]
fn at_8_mb_every_command_on_every_shape_is_within_the_bound() {
    if std::env::var_os("MEMORY_SHAPES_MB").is_some() {
        return; // The size asked for is measured by the test above.
    }
    check_every_pair(8 << 20, &|_, _| false);
}

/// Measures every command on every document of `size` bytes; fails naming each pair over
/// the bound that `excepted` does not name.
fn check_every_pair(size: usize, excepted: &dyn Fn(&str, &str) -> bool) {
    let _serial = heap::serial();
    // What a process builds once, at the first use (the redaction rules' compiled regexes
    // and their caches: about 3 MB), is not the input's cost: built before measuring.
    for (_, doc) in documents(64 << 10) {
        for (_, run) in commands() {
            let _ = run(&doc);
        }
    }
    let report = std::env::var_os("MEMORY_SHAPES_REPORT").is_some();
    let mut over = Vec::new();
    let only = std::env::var("MEMORY_SHAPES_ONLY").unwrap_or_default();
    for (name, doc) in documents(size) {
        if !name.contains(&only) {
            continue;
        }
        for (command, run) in commands() {
            let (peak, outcome) = measure(|| run(&doc));
            let ratio = peak as f64 / doc.len() as f64;
            let within = peak <= doc.len() + slack(size);
            if report {
                let outcome = match &outcome {
                    Ok(()) => "ok".to_string(),
                    Err(e) => e.chars().take(60).collect(),
                };
                let mark = if within { "" } else { "OVER " };
                println!("{name:52} {command:34} {ratio:6.2}x {mark}{outcome}");
            }
            if !within && !excepted(name, command) {
                over.push(format!(
                    "{name}: {command}: {ratio:.2}x the input ({peak} bytes)"
                ));
            }
        }
    }
    assert!(over.is_empty(), "over the bound:\n{}", over.join("\n"));
}
