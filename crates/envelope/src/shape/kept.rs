//! What a shaped output kept of its payload, read back from the decoded envelope: the
//! payload without what the budget stage wrote beside it (the MCP text notice, the hint
//! protocol-v1 adds to `data`), or nothing when the cut left the whole payload out.
//!
//! Decoders read a budget marker as any other member (an extension, MCP's result `_meta`),
//! so the notice a cut wrote into the content would otherwise be read as payload: an MCP
//! result whose payload was left out decodes to the notice as its text.

use serde_json::Value;

use crate::formats::mcp::BUDGET_META_KEY;
use crate::model::{Envelope, Payload, Source};

/// The budget marker a shaped output carries (the fields `kept_payload` needs).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Marker {
    /// The drill-in hint, also written as the notice.
    pub hint: Option<String>,
    /// Whether the payload was left out whole (a cut at the root keeping nothing).
    pub left_out: bool,
}

/// What a shaped output kept of its payload.
#[derive(Debug, PartialEq)]
pub enum Kept {
    /// The output was not cut: the payload as decoded.
    Whole(Value),
    /// The output was cut: the part of the payload it kept.
    Part(Value),
    /// The cut left the payload out.
    LeftOut,
}

/// The budget marker of a decoded output, if it was cut: our marker under an MCP result's
/// `_meta`, a `budget` member of the format's metadata (protocol-v1, operations,
/// tool-envelope-v1, tool-result-envelope), or ctxo's `_meta` (`truncated` with `cuts`).
pub fn marker(env: &Envelope) -> Option<Marker> {
    let from_value = |v: &Value| {
        let cuts = v.get("cuts").and_then(Value::as_array)?;
        (v.get("truncated") == Some(&Value::Bool(true))).then(|| Marker {
            hint: v.get("hint").and_then(Value::as_str).map(str::to_string),
            left_out: cuts.iter().any(is_root_left_out),
        })
    };
    if let Some(Source::Mcp {
        result_meta: Some(meta),
    }) = &env.source
        && let Ok(Some(value)) = meta.member(BUDGET_META_KEY)
        && let Some(marker) = from_value(&value)
    {
        return Some(marker);
    }
    for ext in &env.extensions {
        if ext.pointer.rsplit('/').next() == Some("budget")
            && let Some(marker) = from_value(&ext.value)
        {
            return Some(marker);
        }
    }
    // ctxo: the report is typed, its cuts an extension.
    let budget = env.budget.as_ref().filter(|b| b.truncated)?;
    let cuts = env
        .extensions
        .iter()
        .find(|e| e.pointer == "/_meta/cuts")?
        .value
        .as_array()?;
    Some(Marker {
        hint: budget.hint.clone(),
        left_out: cuts.iter().any(is_root_left_out),
    })
}

/// `{"pointer":"","kept":0,…}`: the whole payload cut to nothing.
fn is_root_left_out(cut: &Value) -> bool {
    cut.get("pointer").and_then(Value::as_str) == Some("")
        && cut.get("kept").and_then(Value::as_u64) == Some(0)
}

/// What the decoded output `env` kept of its payload.
pub fn kept_payload(env: &Envelope) -> Kept {
    let Some(marker) = marker(env) else {
        return Kept::Whole(env.payload.to_json());
    };
    if marker.left_out {
        return Kept::LeftOut;
    }
    let Some(hint) = marker.hint.as_deref() else {
        return Kept::Part(env.payload.to_json());
    };
    Kept::Part(match &env.payload {
        // MCP: the notice is the first content block.
        Payload::Blocks(blocks) if blocks.first().and_then(plain_text) == Some(hint) => {
            match &blocks[1..] {
                // One plain text block is a text payload, as the MCP decoder reads it.
                [only] if plain_text(only).is_some() => {
                    Value::String(plain_text(only).unwrap_or_default().to_string())
                }
                rest => Value::Array(rest.to_vec()),
            }
        }
        // protocol-v1 adds the hint to a `data` object that had none.
        Payload::Json(Value::Object(map))
            if map.get("hint").and_then(Value::as_str) == Some(hint) =>
        {
            let mut map = map.clone();
            map.remove("hint");
            Value::Object(map)
        }
        other => other.to_json(),
    })
}

/// The text of a plain MCP text block (`type` and `text`, nothing else).
fn plain_text(block: &Value) -> Option<&str> {
    let obj = block.as_object()?;
    (obj.len() == 2 && obj.get("type")?.as_str()? == "text")
        .then(|| obj.get("text")?.as_str())
        .flatten()
}
