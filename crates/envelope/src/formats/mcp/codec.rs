//! `mcp`: a native MCP `CallToolResult` (`content`, `structuredContent`, `isError`, `_meta`).
//!
//! A JSON object payload becomes `structuredContent` plus a text block holding its compact
//! JSON (the mirror clients without structured output read); a summary, if any, is a text
//! block before it. Content that is more than that (images, links, other text) is kept as
//! the envelope's presentation, so unknown blocks and fields survive untouched.

use base64::Engine as _;
use std::borrow::Cow;

use serde_json::{Value, json};

use crate::error::{Error, Result};
use crate::formats::{EncodeOptions, Field, FormatId, LossReport, report_unheld};
use crate::json::{Dialect, JsonWriter, pointer};
use crate::model::error::{Category, EnvelopeError};
use crate::model::{Envelope, JsonText, Payload, Source, Status};

const FORMAT: &str = "mcp";

/// The text blocks of an MCP `content` array (`type` "text" with a string `text`), with
/// their indices.
pub(crate) fn text_blocks(content: &[Value]) -> impl DoubleEndedIterator<Item = (usize, &str)> {
    content.iter().enumerate().filter_map(|(i, block)| {
        (block.get("type").and_then(Value::as_str) == Some("text"))
            .then(|| block.get("text").and_then(Value::as_str).map(|t| (i, t)))
            .flatten()
    })
}

/// The text of the text blocks, joined by newlines.
pub(crate) fn text_of_blocks(blocks: &[Value]) -> String {
    blocks
        .iter()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
        .filter_map(|b| b.get("text").and_then(Value::as_str))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Writes a `{"type":"text","text":…}` block.
pub(crate) fn write_text_block(w: &mut JsonWriter<'_>, text: &str) {
    w.begin_object();
    w.key("type");
    w.string("text");
    w.key("text");
    w.string(text);
    w.end_object();
}

/// A `{"type":"text","text":…}` block.
pub(crate) fn text_block(text: impl Into<String>) -> Value {
    json!({"type": "text", "text": text.into()})
}

/// A plain text block (no annotations or `_meta`) and its text.
fn plain_text(block: &Value) -> Option<&str> {
    let obj = block.as_object()?;
    (obj.len() == 2 && obj.get("type")?.as_str()? == "text")
        .then(|| obj.get("text")?.as_str())
        .flatten()
}

/// The text of the one plain text block of `content`, moved out (a large result's text is
/// not copied).
fn into_text(content: Vec<Value>) -> String {
    match content.into_iter().next() {
        Some(Value::Object(mut block)) => match block.remove("text") {
            Some(Value::String(text)) => text,
            _ => String::new(),
        },
        _ => String::new(),
    }
}

/// Decodes a parsed `CallToolResult`.
pub(crate) fn decode(value: Value) -> Result<Envelope> {
    decode_parts(value, None)
}

/// Decodes a `CallToolResult` whose `_meta` may have been read as text
/// ([`meta_text`](crate::formats::meta_text)): `meta`, `null` in its place in the root;
/// `None`: the root holds `_meta` if it has one.
pub(crate) fn decode_parts(mut value: Value, meta: Option<JsonText>) -> Result<Envelope> {
    // The large parts move into the envelope instead of being copied.
    let root = value
        .as_object_mut()
        .ok_or_else(|| Error::wrong_type(FORMAT, "", "a CallToolResult object"))?;
    let result_meta = meta.or_else(|| {
        let value = root.get_mut("_meta").map(std::mem::take)?;
        Some(JsonText::from_value(&value))
    });
    let structured = root.get_mut("structuredContent").map(std::mem::take);
    let content = match root.get_mut("content").map(std::mem::take) {
        None => return Err(Error::missing(FORMAT, "/content")),
        Some(Value::Array(blocks)) => blocks,
        Some(_) => {
            return Err(Error::wrong_type(
                FORMAT,
                "/content",
                "an array of content blocks",
            ));
        }
    };
    let root = &*root;
    for (i, block) in content.iter().enumerate() {
        if !block.get("type").is_some_and(Value::is_string) {
            return Err(Error::wrong_type(
                FORMAT,
                &format!("/content/{i}"),
                "a content block with a string \"type\"",
            ));
        }
    }
    let is_error = match root.get("isError") {
        None => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err(Error::wrong_type(FORMAT, "/isError", "a boolean")),
    };

    let mut env = Envelope {
        source: Some(Source::Mcp { result_meta }),
        ..Envelope::default()
    };
    if is_error {
        env.status = Status::Error;
        env.error = Some(EnvelopeError::new(
            Category::Execution,
            text_of_blocks(&content),
        ));
    }
    match structured {
        Some(sc) => {
            let mirror = crate::json::to_string(&sc, Dialect::Js);
            let texts: Vec<Option<&str>> = content.iter().map(plain_text).collect();
            match texts.as_slice() {
                [Some(m)] if *m == mirror => {}
                [Some(s), Some(m)] if *m == mirror => env.summary = Some((*s).to_string()),
                _ => env.presentation = Some(content),
            }
            env.payload = Payload::Json(sc);
        }
        None if is_error => {
            if !matches!(content.as_slice(), [only] if plain_text(only).is_some()) {
                env.presentation = Some(content);
            }
        }
        None => {
            env.payload = match content.as_slice() {
                [only] if plain_text(only).is_some() => Payload::Text(into_text(content)),
                _ => Payload::Blocks(content),
            };
        }
    }
    for (key, v) in root {
        match key.as_str() {
            "content" | "structuredContent" | "_meta" => {}
            "isError" if is_error => {}
            _ => env.push_extension(pointer::join("", key), v.clone()),
        }
    }
    env.layout.key_order = Some(root.keys().cloned().collect());
    Ok(env)
}

/// The content blocks that render an envelope's payload (and summary) for a client.
pub(crate) fn content_for(env: &Envelope, losses: &mut LossReport) -> Vec<Value> {
    let mut blocks = Vec::new();
    // An error result's text is its message: a summary beside it would change the message.
    match (&env.error, env.status) {
        (Some(error), Status::Error) => {
            if env.summary.as_ref().is_some_and(|s| *s != error.message) {
                losses.push("summary", "an MCP error result carries only the error text");
            }
            blocks.push(text_block(error.message.clone()));
        }
        _ => {
            if let Some(summary) = &env.summary {
                blocks.push(text_block(summary.clone()));
            }
        }
    }
    match &env.payload {
        Payload::None => {}
        Payload::Json(v) => blocks.push(text_block(crate::json::to_string(v, Dialect::Js))),
        Payload::Text(s) => blocks.push(text_block(s.clone())),
        Payload::Blocks(b) => blocks.extend(b.iter().cloned()),
        Payload::Bytes { data, media_type } => {
            let b64 = base64::engine::general_purpose::STANDARD.encode(data);
            let kind = media_type.split('/').next().unwrap_or("");
            blocks.push(match kind {
                "image" | "audio" => json!({"type": kind, "data": b64, "mimeType": media_type}),
                _ => {
                    losses.push("payload", "bytes that are not image or audio are written as an embedded resource");
                    json!({"type": "resource", "resource": {"uri": "envelope:payload", "mimeType": media_type, "blob": b64}})
                }
            });
        }
    }
    blocks
}

/// A `resource_link` block naming the envelope's artifact (`uri` is the digest), with the
/// kind and size of the offloaded payload when its summary says them.
pub(crate) fn artifact_link(env: &Envelope) -> Option<Value> {
    let artifact = env.artifact.as_ref()?;
    let summary = match &env.payload {
        Payload::Json(v) => v.get("summary"),
        _ => None,
    };
    let mut link = json!({
        "type": "resource_link",
        "uri": artifact.digest,
        "name": format!("artifact {}", artifact.digest.trim_start_matches("sha256:").get(..12).unwrap_or("")),
    });
    if let Some(kind) = summary.and_then(|s| s.get("kind")).and_then(Value::as_str) {
        link["mimeType"] = json!(kind);
    }
    if let Some(size) = summary
        .and_then(|s| s.get("size_bytes"))
        .and_then(Value::as_u64)
    {
        link["size"] = json!(size);
    }
    Some(link)
}

/// The `_meta` key under which a cut result carries our budget marker
/// (`{"truncated":true,"totalBytes":…,"cuts":[…],"hint":…}`): reverse-DNS, outside the
/// prefixes MCP reserves.
pub const BUDGET_META_KEY: &str = "dev.envelope/budget";

/// A member of the result object, borrowed from the envelope.
enum Member<'a> {
    Json(&'a Value),
    Blocks(&'a [Value]),
    /// Pre-serialized JSON.
    Raw(&'a [u8]),
    /// `[summary?, mirror]` text blocks.
    Mirror {
        summary: Option<&'a str>,
        json: &'a str,
    },
}

/// Encodes `env` as a `CallToolResult` (JS dialect), adding to `losses` what it cannot hold.
pub(crate) fn encode(
    env: &Envelope,
    _options: &EncodeOptions,
    losses: &mut LossReport,
) -> Result<Vec<u8>> {
    let mut held = vec![Field::Summary, Field::Presentation];
    if env.presentation.is_none() {
        // Rendered content links the artifact.
        held.push(Field::Artifact);
    }
    if matches!(env.source, Some(Source::Mcp { .. })) {
        held.push(Field::Source);
    }
    let is_error = env.status == Status::Error;
    if is_error {
        held.push(Field::ErrorCategory);
    }
    report_unheld(env, FormatId::Mcp, &held, losses);

    // Members are collected by reference and written in place: the payload is never copied.
    // An object payload is serialized once: those bytes are both the text mirror and
    // `structuredContent` (the same JS-dialect JSON).
    let mirror = match (&env.presentation, &env.payload, is_error) {
        (None, Payload::Json(v @ Value::Object(_)), false) => {
            Some(crate::json::to_vec(v, Dialect::Js))
        }
        _ => None,
    };
    let rendered;
    let content = match (&env.presentation, &mirror) {
        (Some(blocks), _) => Member::Blocks(blocks),
        (None, Some(mirror)) => Member::Mirror {
            summary: env.summary.as_deref(),
            json: std::str::from_utf8(mirror).expect("writer emits UTF-8"),
        },
        (None, None) => {
            rendered = content_for(env, losses);
            Member::Blocks(&rendered)
        }
    };
    let mut members: Vec<(Cow<'_, str>, Member<'_>)> = vec![("content".into(), content)];
    if let Payload::Json(v) = &env.payload {
        if let Some(bytes) = &mirror {
            members.push(("structuredContent".into(), Member::Raw(bytes)));
        } else if v.is_object() {
            members.push(("structuredContent".into(), Member::Json(v)));
        } else {
            losses.push(
                "payload",
                "structuredContent must be an object: the payload is carried as text only",
            );
        }
    }
    if is_error {
        members.push(("isError".into(), Member::Json(&Value::Bool(true))));
    }
    let result_meta = match &env.source {
        Some(Source::Mcp { result_meta }) => result_meta.as_ref(),
        _ => None,
    };
    // A cut result carries our marker under our own `_meta` key (replacing the marker of
    // an earlier cut the result still carried).
    let marked_meta = crate::formats::truncation(env).map(|budget| {
        // A kept `_meta` fits the limit (a larger one is left out of a cut): built.
        let mut map = match result_meta.map(JsonText::to_value) {
            Some(Ok(Value::Object(m))) => m,
            _ => serde_json::Map::new(),
        };
        let replaced = map.insert(
            BUDGET_META_KEY.into(),
            crate::formats::budget_marker_value(budget, Dialect::Js),
        );
        if replaced.is_some() {
            losses.push(
                pointer::join("/_meta", BUDGET_META_KEY),
                "the budget marker of an earlier cut, replaced by this one",
            );
        }
        JsonText::from_value(&Value::Object(map))
    });
    if let Some(m) = marked_meta.as_ref().or(result_meta) {
        members.push(("_meta".into(), Member::Raw(m.as_str().as_bytes())));
    }
    // An extension never writes a key a second time: the member written from the typed
    // fields wins (an `isError: false` kept from an ok result, say, once the result is an
    // error), and the extension is reported as lost.
    for ext in env.extensions_of(FormatId::Mcp) {
        if let Some(key) = pointer::child(&ext.pointer, "") {
            if members.iter().any(|(k, _)| *k == key) {
                losses.push(
                    ext.pointer.clone(),
                    format!("mcp writes {key:?} itself: the extension is dropped"),
                );
                continue;
            }
            members.push((key.into(), Member::Json(&ext.value)));
        }
    }
    if let (Some(FormatId::Mcp), Some(order)) = (env.origin, &env.layout.key_order) {
        members.sort_by_key(|(k, _)| order.iter().position(|o| o == k).unwrap_or(usize::MAX));
    }
    let mut out = Vec::new();
    let mut w = JsonWriter::new(&mut out, Dialect::Js);
    w.begin_object();
    // A cut result also says so in a text notice before the content; an offloaded one links
    // its artifact after it.
    let notice = crate::formats::truncation(env).and_then(|b| b.hint.as_deref());
    let link = env
        .presentation
        .is_none()
        .then(|| artifact_link(env))
        .flatten();
    for (k, member) in &members {
        w.key(k);
        match member {
            Member::Json(v) => w.value(v),
            Member::Blocks(blocks) => {
                w.begin_array();
                if let Some(notice) = notice {
                    write_text_block(&mut w, notice);
                }
                for block in blocks.iter().chain(&link) {
                    w.value(block);
                }
                w.end_array();
            }
            Member::Mirror { summary, json } => {
                w.begin_array();
                for text in notice.iter().chain(summary).chain([json]) {
                    write_text_block(&mut w, text);
                }
                if let Some(link) = &link {
                    w.value(link);
                }
                w.end_array();
            }
            Member::Raw(bytes) => w.raw(bytes),
        }
    }
    w.end_object();
    Ok(out)
}
