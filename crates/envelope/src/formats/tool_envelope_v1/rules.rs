//! tool-envelope-v1 rules: the two blocks, the prefix version against `meta.version`,
//! strict base64, the inner `{payload, meta}`, error payloads and their block 0.

use serde_json::{Map, Value};

use crate::formats::findings::Findings;
use crate::formats::tool_envelope_v1::{render_error, split_prefix};
use crate::formats::{DecodeOptions, FormatId};

/// Where the envelope block is.
const BLOCK: &str = "/content/1/text";

/// The tool-envelope-v1 rules on a parsed result (the envelope block decoded too).
pub(crate) fn check(value: &Value, f: &mut Findings) {
    check_with(value, None, f);
}

/// [`check`] on a result read with its payload abridged (see
/// `validate::abridged`): `block` is the whole text of block 1 when `value` holds a prefix
/// of it, and the `{payload, meta}` in the block is read with its `payload` walked, not
/// built. The findings are [`check`]'s for a result that is not an error and has no
/// `structuredContent` (the only rules that read the payload); the abridged validation
/// reads the others whole.
pub(crate) fn check_abridged(value: &Value, block: Option<&str>, f: &mut Findings) {
    check_with(value, Some(block), f);
}

/// [`check`]; `abridged`: [`check_abridged`]'s block (`Some(None)`: the value's own).
fn check_with(value: &Value, abridged: Option<Option<&str>>, f: &mut Findings) {
    let Some(result) = value.as_object() else {
        f.report(
            "tev1.shape",
            "",
            "a tool-envelope-v1 result is a JSON object",
        );
        return;
    };
    let blocks = result.get("content").and_then(Value::as_array);
    let text_of = |i: usize| {
        blocks
            .and_then(|b| b.get(i))
            .and_then(|b| b.get("text"))
            .and_then(Value::as_str)
    };
    let whole_block = abridged.flatten().or_else(|| text_of(1));
    let (Some(summary), Some(block)) = (text_of(0), whole_block) else {
        f.report(
            "tev1.shape",
            "/content",
            "content must hold two text blocks: the summary, then the envelope",
        );
        return;
    };
    if blocks.is_some_and(|b| b.len() > 2) {
        f.report("tev1.shape", "/content", "more than two blocks");
    }
    let Some((digits, b64)) = split_prefix(block) else {
        f.report(
            "tev1.prefix",
            BLOCK,
            "block 1 does not start with __ENVELOPE_V<n>__:",
        );
        return;
    };
    let prefix_version = digits.trim_start_matches('0').parse::<u64>().unwrap_or(0);
    if prefix_version != 1 {
        f.report(
            "tev1.prefix",
            BLOCK,
            format!("envelope version {prefix_version} is not supported (only 1)"),
        );
    }
    let prefix_len = block.len() - b64.len();
    let bytes = match crate::base64::decode_strict(b64.as_bytes()) {
        Ok(bytes) => bytes,
        Err(e) => {
            f.report(
                "tev1.base64",
                BLOCK,
                format!(
                    "at byte {}: {} (the reference's Node reader would skip it)",
                    prefix_len + e.offset,
                    e.message
                ),
            );
            crate::base64::decode_lenient(b64.as_bytes())
        }
    };
    let inner: Value = match std::str::from_utf8(&bytes)
        .map_err(|e| (e.to_string(), false))
        .and_then(|t| {
            read_inner(t, abridged.is_some()).map_err(|e| {
                let too_deep = crate::json::parse::is_nesting_limit(t.as_bytes(), &e);
                (e.to_string(), too_deep)
            })
        }) {
        Ok(v) => v,
        // The one depth limit holds inside the block too (the block is read as a document).
        Err((_, true)) => {
            f.report(
                "json.depth",
                format!("{BLOCK}#"),
                crate::json::parse::depth_message(),
            );
            return;
        }
        Err((e, false)) => {
            f.report(
                "tev1.json",
                format!("{BLOCK}#"),
                format!("the decoded block is not JSON: {e}"),
            );
            return;
        }
    };
    let is_error = result.get("isError") == Some(&Value::Bool(true));
    if result
        .get("isError")
        .is_some_and(|v| v != &Value::Bool(true))
    {
        f.report(
            "tev1.is-error",
            "/isError",
            "success results carry no isError key; error results carry true",
        );
    }
    check_inner(&inner, prefix_version, is_error, f);
    if let Some(dual) = result.get("structuredContent")
        && dual != &inner
    {
        f.report(
            "tev1.dual-emit",
            "/structuredContent",
            "differs from the {payload, meta} of the envelope block",
        );
    }
    if is_error
        && inner.get("payload").is_some_and(Value::is_object)
        && let Ok(env) =
            crate::formats::decode_value(FormatId::ToolEnvelopeV1, value.clone(), &lenient())
        && let Some(error) = &env.error
    {
        let expected = render_error(error);
        if summary != expected {
            f.report(
                "tev1.block0",
                "/content/0/text",
                format!("an error's block 0 must be rendered from its payload: {expected:?}"),
            );
        }
    }
}

/// The `{payload, meta}` document of the block; `abridged`: its `payload` (of a root
/// object) walked and read as a placeholder of its type, as `validate::abridged` reads a
/// payload (the errors are a `Value`'s, at the same places).
fn read_inner(text: &str, abridged: bool) -> Result<Value, serde_json::Error> {
    if !abridged {
        return serde_json::from_str(text);
    }
    let mut de = serde_json::Deserializer::from_str(text);
    let inner = serde::de::DeserializeSeed::deserialize(crate::formats::abridge::Inner, &mut de)?;
    de.end()?;
    Ok(inner)
}

fn lenient() -> DecodeOptions {
    DecodeOptions { lenient: true }
}

fn check_inner(inner: &Value, prefix_version: u64, is_error: bool, f: &mut Findings) {
    let at = |p: &str| format!("{BLOCK}#{p}");
    let Some(inner) = inner.as_object() else {
        f.report(
            "tev1.json",
            at(""),
            "the envelope must be an object {payload, meta}",
        );
        return;
    };
    if !inner.contains_key("payload") {
        f.report("tev1.meta", at("/payload"), "missing");
    }
    let Some(meta) = inner.get("meta").and_then(Value::as_object) else {
        f.report("tev1.meta", at("/meta"), "missing or not an object");
        return;
    };
    for key in ["tool", "ts"] {
        match meta.get(key) {
            Some(Value::String(_)) => {}
            Some(_) => f.report("tev1.meta", at(&format!("/meta/{key}")), "must be a string"),
            None => f.report("tev1.meta", at(&format!("/meta/{key}")), "missing"),
        }
    }
    if let Some(ts) = meta.get("ts").and_then(Value::as_str)
        && crate::time::parse_rfc3339(ts).is_none()
    {
        f.report(
            "tev1.ts",
            at("/meta/ts"),
            format!("{ts:?} is not an ISO-8601 timestamp"),
        );
    }
    match meta.get("version").and_then(Value::as_u64) {
        Some(v) if v != prefix_version => f.report(
            "tev1.version-mismatch",
            at("/meta/version"),
            format!("meta.version is {v} but the prefix says V{prefix_version}"),
        ),
        Some(_) => {}
        None => f.report("tev1.meta", at("/meta/version"), "must be an integer"),
    }
    if let Some(deprecations) = meta.get("deprecations") {
        check_deprecations(deprecations, &at("/meta/deprecations"), f);
    }
    if is_error {
        if meta.get("tool").and_then(Value::as_str) != Some("mcp") {
            f.report(
                "tev1.error-payload",
                at("/meta/tool"),
                "error results have meta.tool \"mcp\"",
            );
        }
        check_error_payload(inner.get("payload"), &at("/payload"), f);
    }
}

fn check_deprecations(v: &Value, at: &str, f: &mut Findings) {
    let Some(items) = v.as_array() else {
        f.report("tev1.meta", at, "must be an array");
        return;
    };
    for (i, item) in items.iter().enumerate() {
        let Some(item) = item.as_object() else {
            f.report("tev1.meta", format!("{at}/{i}"), "must be an object");
            continue;
        };
        for (key, required) in [
            ("field", true),
            ("since", true),
            ("removeInVersion", true),
            ("replacement", false),
            ("note", false),
        ] {
            match item.get(key) {
                Some(Value::String(_)) => {}
                None if !required => {}
                _ => f.report("tev1.meta", format!("{at}/{i}/{key}"), "must be a string"),
            }
        }
    }
}

/// `McpErrorPayload`: category, code, message, details?, recoverable, suggestedAction?,
/// nextTool?.
fn check_error_payload(payload: Option<&Value>, at: &str, f: &mut Findings) {
    let Some(payload) = payload.and_then(Value::as_object) else {
        f.report("tev1.error-payload", at, "an error payload is an object");
        return;
    };
    let kind =
        |p: &Map<String, Value>, key: &str| p.get(key).map(|v| (v.is_string(), v.is_boolean()));
    for (key, required, wants_bool) in [
        ("category", true, false),
        ("code", true, false),
        ("message", true, false),
        ("recoverable", true, true),
        ("suggestedAction", false, false),
        ("nextTool", false, false),
    ] {
        match kind(payload, key) {
            Some((is_string, is_bool)) if (wants_bool && is_bool) || (!wants_bool && is_string) => {
            }
            None if !required => {}
            None => f.report("tev1.error-payload", format!("{at}/{key}"), "missing"),
            Some(_) => f.report(
                "tev1.error-payload",
                format!("{at}/{key}"),
                if wants_bool {
                    "must be a boolean"
                } else {
                    "must be a string"
                },
            ),
        }
    }
}
