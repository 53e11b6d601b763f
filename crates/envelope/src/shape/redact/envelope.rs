//! Every part of an [`Envelope`] that carries bytes of the input: the payload, the summary
//! and presentation, each metadata field, the error, the source, the budget report the
//! input carried, the extensions (their pointers hold keys too) and the layout (the MCP
//! result's key order, the payload's key, a ctxo document's MCP transport).

use serde_json::{Map, Value};

use super::Redaction;
use super::across::KeysAcross;
use super::keys::secret_key_rule;
use super::pointers::PointerRenames;
use super::value::{Renamed, mask_member, redact_string, redact_value, rename_keys};
use crate::json::pointer;
use crate::model::{
    Category, Envelope, EnvelopeError, Extension, JsonText, Layout, Payload, Source, Timestamp,
};

/// What replaces a masked segment of a protocol-v1 command: `<group>/<name>` allows only
/// lower-case letters, digits and `-`, so the mask `***` cannot stand there.
pub const COMMAND_MASK: &str = "redacted";

/// Redacts every part of an envelope that can carry text; returns what was masked (rule
/// and place, never the secret), in field order.
pub fn redact_envelope(env: &mut Envelope) -> Vec<Redaction> {
    redact_envelope_apart(env, Apart::default())
}

/// Parts of an envelope redacted apart (long texts, a piece at a time or from the input's
/// text): what was masked in each, which takes its place in the report, the part itself
/// left as it is.
#[derive(Debug, Default)]
pub(crate) struct Apart {
    /// The error's message.
    pub message: Option<Vec<Redaction>>,
    /// The texts of presentation blocks, by block index (each a plain text block).
    pub presentation_texts: Vec<(usize, Vec<Redaction>)>,
}

/// [`redact_envelope`] of an envelope some parts of which were redacted apart.
pub(crate) fn redact_envelope_apart(env: &mut Envelope, apart: Apart) -> Vec<Redaction> {
    let Apart {
        message,
        presentation_texts,
    } = apart;
    let mut report = Vec::new();
    // Destructured so that a field added to the model cannot be forgotten here.
    let Envelope {
        status: _,
        payload,
        summary,
        presentation,
        tool,
        command,
        timestamp,
        duration_ms: _,
        workspace,
        source,
        provider,
        model,
        tool_call_id,
        content_type: _,
        budget,
        artifact,
        error,
        origin: _,
        extensions,
        layout,
    } = env;
    redact_payload(payload, &mut report);
    redact_opt(summary, "summary", &mut report);
    if let Some(blocks) = presentation {
        for (i, block) in blocks.iter_mut().enumerate() {
            match presentation_texts.iter().find(|(at, _)| *at == i) {
                // A plain text block: its type is no secret, its text was redacted apart.
                Some((_, masked)) => report.extend(masked.iter().cloned()),
                None => redact_value(block, &format!("presentation/{i}"), &mut report),
            }
        }
    }
    redact_opt(tool, "tool", &mut report);
    if let Some(command) = command {
        redact_command(command, &mut report);
    }
    if let Some(Timestamp::Text(t)) = timestamp {
        redact_in_place(t, "timestamp", &mut report);
    }
    redact_opt(workspace, "workspace", &mut report);
    match source {
        Some(Source::Local { operation_id }) => {
            redact_opt(operation_id, "source.operationId", &mut report);
        }
        Some(Source::Http {
            headers,
            content_type,
            ..
        }) => {
            redact_map(headers, "source.headers", &mut report);
            redact_opt(content_type, "source.contentType", &mut report);
        }
        Some(Source::Mcp {
            result_meta: Some(m),
        }) => redact_json_text_of(m, "source._meta", &mut report),
        _ => {}
    }
    redact_opt(provider, "provider", &mut report);
    redact_opt(model, "model", &mut report);
    redact_opt(tool_call_id, "toolCallId", &mut report);
    if let Some(budget) = budget {
        redact_opt(&mut budget.hint, "budget.hint", &mut report);
        for (i, cut) in budget.cuts.iter_mut().enumerate() {
            let renames = PointerRenames::new(
                std::iter::once(cut.pointer.as_str()),
                &[],
                &format!("budget.cuts/{i}"),
                &mut report,
            );
            cut.pointer = renames.apply(&cut.pointer);
        }
    }
    if let Some(artifact) = artifact {
        redact_in_place(&mut artifact.digest, "artifact", &mut report);
    }
    if let Some(e) = error {
        redact_error_fields(e, message, &mut report);
    }
    redact_extensions(extensions, layout, &mut report);
    redact_transport(layout, &mut report);
    report
}

fn redact_error_fields(
    e: &mut EnvelopeError,
    message_report: Option<Vec<Redaction>>,
    report: &mut Vec<Redaction>,
) {
    let EnvelopeError {
        category,
        code,
        message,
        details,
        recoverable: _,
        suggested_action,
        next_tool,
        hint,
    } = e;
    if let Category::Other(c) = category {
        redact_in_place(c, "error.category", report);
    }
    redact_opt(code, "error.code", report);
    match message_report {
        Some(masked) => report.extend(masked),
        None => redact_in_place(message, "error.message", report),
    }
    if let Some(d) = details {
        redact_value(d, "error.details", report);
    }
    redact_opt(suggested_action, "error.suggested_action", report);
    redact_opt(next_tool, "error.next_tool", report);
    redact_opt(hint, "error.hint", report);
}

fn redact_payload(payload: &mut Payload, report: &mut Vec<Redaction>) {
    match payload {
        Payload::Json(v) => redact_value(v, "payload", report),
        Payload::Text(s) => redact_in_place(s, "payload", report),
        Payload::Blocks(blocks) => redact_blocks(blocks, "payload", report),
        // Bytes that are text (a log, a config) are redacted as text.
        Payload::Bytes { data, .. } => {
            if let Ok(text) = std::str::from_utf8(data)
                && let Some(masked) = redact_string(text, "payload", report, 0)
            {
                *data = masked.into_bytes();
            }
        }
        _ => {}
    }
}

/// Each block, in order; a private key split across adjacent text blocks is masked on
/// both sides ([`KeysAcross`]).
fn redact_blocks(blocks: &mut [Value], at: &str, report: &mut Vec<Redaction>) {
    let mut keys = KeysAcross::default();
    for (i, b) in blocks.iter_mut().enumerate() {
        let here = format!("{at}/{i}");
        if keys.block(b, &here, report).is_err() {
            unreachable!("a whole text is never unknown");
        }
        redact_value(b, &here, report);
    }
}

fn redact_in_place(s: &mut String, at: &str, report: &mut Vec<Redaction>) {
    if let Some(masked) = redact_string(s, at, report, 0) {
        *s = masked;
    }
}

fn redact_opt(s: &mut Option<String>, at: &str, report: &mut Vec<Redaction>) {
    if let Some(s) = s {
        redact_in_place(s, at, report);
    }
}

fn redact_map(map: &mut Map<String, Value>, at: &str, report: &mut Vec<Redaction>) {
    let mut v = Value::Object(std::mem::take(map));
    redact_value(&mut v, at, report);
    if let Value::Object(m) = v {
        *map = m;
    }
}

/// A command holding a secret stays `<group>/<name>`: each part that does not survive the
/// masking becomes [`COMMAND_MASK`] (`slack/xoxb-…` → `slack/redacted`). A command without
/// a `/` (not a protocol-v1 command anyway) is masked as text.
fn redact_command(command: &mut String, report: &mut Vec<Redaction>) {
    let Some(masked) = redact_string(command, "command", report, 0) else {
        return;
    };
    *command = match command.split_once('/') {
        Some((group, name)) => {
            // A part is kept only when it holds no secret and the masked text still has it.
            let keep =
                |part: &str| super::text::redact_text(part).is_none() && masked.contains(part);
            let part = |p: &str| {
                if keep(p) {
                    p.to_string()
                } else {
                    COMMAND_MASK.to_string()
                }
            };
            format!("{}/{}", part(group), part(name))
        }
        None => masked,
    };
}

/// Extensions: their pointers (keys of the input) and values; the MCP result's key order
/// and the payload's key follow the renamed keys.
fn redact_extensions(
    extensions: &mut [Extension],
    layout: &mut Layout,
    report: &mut Vec<Redaction>,
) {
    let root_keys = layout.key_order.clone().unwrap_or_default();
    let renames = PointerRenames::new(
        extensions.iter().map(|e| e.pointer.as_str()),
        &root_keys,
        "extensions",
        report,
    );
    for ext in extensions.iter_mut() {
        ext.pointer = renames.apply(&ext.pointer);
        let at = format!("extensions{}", ext.pointer);
        // An unknown field named like a secret is masked (its type and shape kept), as in
        // a payload.
        let name = ext.pointer.rsplit(['/', '#']).next().unwrap_or("");
        match secret_key_rule(&pointer::unescape(name)) {
            Some(rule) => mask_member(rule, &mut ext.value, &at, report, 0),
            None => redact_value(&mut ext.value, &at, report),
        }
    }
    if let Some(order) = &mut layout.key_order {
        for key in order.iter_mut() {
            if let Some(new) = renames.root_key(key) {
                *key = new.to_string();
            }
        }
    }
    if let Some(key) = &mut layout.payload_key
        && let Some(new) = renames.root_key(key)
    {
        let old = std::mem::replace(key, new.to_string());
        // tool-result-envelope names the payload's key in `payloadPath` too.
        for ext in extensions.iter_mut() {
            if ext.pointer == "/__envelope/payloadPath" && ext.value.as_str() == Some(&old) {
                ext.value = Value::String(new.to_string());
            }
        }
    }
}

/// A ctxo document's MCP transport: the blocks before it and the result's other members.
fn redact_transport(layout: &mut Layout, report: &mut Vec<Redaction>) {
    let Some(t) = &mut layout.transport else {
        return;
    };
    redact_blocks(&mut t.leading_blocks, "transport/content", report);
    let renames = rename_keys(t.outer_keys.iter().map(|(k, _)| k.as_str()));
    for ((key, value), rename) in t.outer_keys.iter_mut().zip(renames) {
        if let Some(Renamed { key: new, rules }) = rename {
            *key = new;
            let at = pointer::join("transport", key);
            report.extend(rules.into_iter().map(|rule| Redaction {
                rule,
                at: at.clone(),
            }));
        }
        // The result's members as one object, so a secret-like key masks its value.
        let mut one = Map::new();
        one.insert(std::mem::take(key), std::mem::take(value));
        let mut v = Value::Object(one);
        redact_value(&mut v, "transport", report);
        if let Value::Object(one) = v
            && let Some((k, v)) = one.into_iter().next()
        {
            *key = k;
            *value = v;
        }
    }
}

/// Redacts a value kept as text (an MCP result's `_meta`) as [`redact_value`] redacts it
/// built: in one pass over the text, or built when that pass cannot tell (a key holding a
/// secret, nesting deeper than it reads).
fn redact_json_text_of(text: &mut JsonText, at: &str, report: &mut Vec<Redaction>) {
    match super::redact_json_text(text.as_str().as_bytes(), at) {
        Some(redacted) => {
            if let Some(bytes) = redacted.bytes {
                *text = JsonText::from_js(bytes);
            }
            report.extend(redacted.report);
        }
        None => match text.to_value() {
            Ok(mut value) => {
                redact_value(&mut value, at, report);
                *text = JsonText::from_value(&value);
            }
            // A text that reads as no value (nested past the depth limit, as a tree built
            // by a caller may be) cannot be searched: fail closed, nothing of it is kept.
            Err(_) => {
                *text = JsonText::from_js(b"{}".to_vec());
                report.push(Redaction {
                    rule: "unreadable".into(),
                    at: at.to_string(),
                });
            }
        },
    }
}
