//! MCP `CallToolResult` rules: block shapes (per revision when one is given), the
//! structured channel against an output schema, and the text mirror agreeing with it.

use serde_json::{Map, Value};

use crate::formats::findings::{Findings, MCP_REVISIONS, Options};

/// The first revision that has a block type or feature.
fn since(feature: &str) -> &'static str {
    match feature {
        "audio" => "2025-03-26",
        "resource_link" | "_meta" | "structuredContent" => "2025-06-18",
        "non-object structuredContent" | "resultType" => "2026-07-28",
        _ => MCP_REVISIONS[0],
    }
}

/// Reports `feature` at `at` if it is newer than `revision`.
fn gate(feature: &str, at: &str, revision: Option<&str>, f: &mut Findings) {
    if let Some(revision) = revision
        && since(feature) > revision
    {
        f.report(
            "mcp.revision",
            at,
            format!(
                "{feature} exists from MCP {}; this result claims {revision}",
                since(feature)
            ),
        );
    }
}

/// The MCP rules on a parsed `CallToolResult`.
pub(crate) fn check(value: &Value, options: &Options, f: &mut Findings) {
    let revision = options.mcp_revision.as_deref();
    let Some(result) = value.as_object() else {
        f.report("mcp.shape", "", "a CallToolResult is a JSON object");
        return;
    };
    match result.get("content").and_then(Value::as_array) {
        Some(blocks) => check_blocks(blocks, "/content", revision, f),
        None => f.report(
            "mcp.shape",
            "/content",
            "required: an array of content blocks",
        ),
    }
    if let Some(e) = result.get("isError")
        && !e.is_boolean()
    {
        f.report("mcp.shape", "/isError", "must be a boolean");
    }
    if let Some(m) = result.get("_meta")
        && !m.is_object()
    {
        f.report("mcp.shape", "/_meta", "must be an object");
    }
    if let Some(t) = result.get("resultType") {
        gate("resultType", "/resultType", revision, f);
        if !t.is_string() {
            f.report("mcp.shape", "/resultType", "must be a string");
        }
    }
    let Some(structured) = result.get("structuredContent") else {
        return;
    };
    gate("structuredContent", "/structuredContent", revision, f);
    if !structured.is_object() {
        gate(
            "non-object structuredContent",
            "/structuredContent",
            revision,
            f,
        );
    }
    if let Some(schema) = &options.output_schema {
        crate::formats::findings::output_schema(
            "mcp.output-schema",
            schema,
            structured,
            "/structuredContent",
            f,
        );
    }
    check_mirror(result, structured, f);
}

/// Whether a block of `content` has a `text` that may be JSON (one `mcp.mirror` reads).
pub(crate) fn has_json_text_block(root: &Value) -> bool {
    let blocks = root.get("content").and_then(Value::as_array);
    blocks.into_iter().flatten().any(|block| {
        block
            .get("text")
            .and_then(Value::as_str)
            .is_some_and(|t| t.trim_start().starts_with(['{', '[']))
    })
}

/// A text block holding a JSON object or array claims to mirror `structuredContent`.
fn check_mirror(result: &Map<String, Value>, structured: &Value, f: &mut Findings) {
    let Some(blocks) = result.get("content").and_then(Value::as_array) else {
        return;
    };
    for (i, block) in blocks.iter().enumerate() {
        if block.get("type").and_then(Value::as_str) != Some("text") {
            continue;
        }
        let Some(text) = block.get("text").and_then(Value::as_str) else {
            continue;
        };
        let trimmed = text.trim_start();
        if !(trimmed.starts_with('{') || trimmed.starts_with('[')) {
            continue;
        }
        if let Ok(mirror) = serde_json::from_str::<Value>(text)
            && !crate::json::equal::same(&mirror, structured)
        {
            f.report(
                "mcp.mirror",
                format!("/content/{i}/text"),
                "this JSON text block says something else than structuredContent",
            );
        }
    }
}

/// Block shapes: required fields and their types per block type; unknown types pass.
pub(crate) fn check_blocks(blocks: &[Value], at: &str, revision: Option<&str>, f: &mut Findings) {
    for (i, block) in blocks.iter().enumerate() {
        let here = format!("{at}/{i}");
        let Some(block) = block.as_object() else {
            f.report("mcp.block", here, "a content block is an object");
            continue;
        };
        let Some(kind) = block.get("type").and_then(Value::as_str) else {
            f.report(
                "mcp.block",
                format!("{here}/type"),
                "a content block needs a string type",
            );
            continue;
        };
        let need = |key: &str, f: &mut Findings| {
            if !block.get(key).is_some_and(Value::is_string) {
                f.report(
                    "mcp.block",
                    format!("{here}/{key}"),
                    format!("a {kind} block needs a string {key}"),
                );
            }
        };
        match kind {
            "text" => need("text", f),
            "image" | "audio" => {
                need("data", f);
                need("mimeType", f);
                if let Some(data) = block.get("data").and_then(Value::as_str)
                    && let Err(e) = crate::base64::decode_strict(data.as_bytes())
                {
                    f.report(
                        "mcp.block",
                        format!("{here}/data"),
                        format!("not base64 at byte {}: {}", e.offset, e.message),
                    );
                }
            }
            "resource" => check_resource(block.get("resource"), &format!("{here}/resource"), f),
            "resource_link" => {
                need("uri", f);
                need("name", f);
                if let Some(size) = block.get("size")
                    && size.as_u64().is_none()
                {
                    f.report(
                        "mcp.block",
                        format!("{here}/size"),
                        "size is a byte count (an integer >= 0)",
                    );
                }
            }
            _ => {} // unknown types pass through untouched
        }
        gate(kind, &format!("{here}/type"), revision, f);
        if block.contains_key("_meta") {
            gate("_meta", &format!("{here}/_meta"), revision, f);
        }
        if let Some(a) = block.get("annotations") {
            check_annotations(a, &format!("{here}/annotations"), f);
        }
    }
}

fn check_resource(resource: Option<&Value>, at: &str, f: &mut Findings) {
    let Some(resource) = resource.and_then(Value::as_object) else {
        f.report("mcp.block", at, "a resource block needs a resource object");
        return;
    };
    if !resource.get("uri").is_some_and(Value::is_string) {
        f.report(
            "mcp.block",
            format!("{at}/uri"),
            "a resource needs a string uri",
        );
    }
    let text = resource.get("text").is_some_and(Value::is_string);
    let blob = resource.get("blob").is_some_and(Value::is_string);
    if text == blob {
        f.report(
            "mcp.block",
            at,
            "a resource has exactly one of text and blob (strings)",
        );
    }
}

fn check_annotations(a: &Value, at: &str, f: &mut Findings) {
    let Some(a) = a.as_object() else {
        f.report("mcp.block", at, "annotations is an object");
        return;
    };
    if let Some(audience) = a.get("audience") {
        let ok = audience.as_array().is_some_and(|roles| {
            roles
                .iter()
                .all(|r| matches!(r.as_str(), Some("user" | "assistant")))
        });
        if !ok {
            f.report(
                "mcp.block",
                format!("{at}/audience"),
                "an array of \"user\" and \"assistant\"",
            );
        }
    }
    if let Some(p) = a.get("priority")
        && !p.as_f64().is_some_and(|p| (0.0..=1.0).contains(&p))
    {
        f.report("mcp.block", format!("{at}/priority"), "a number within 0-1");
    }
    if let Some(t) = a.get("lastModified")
        && t.as_str()
            .is_none_or(|t| crate::time::parse_rfc3339(t).is_none())
    {
        f.report(
            "mcp.block",
            format!("{at}/lastModified"),
            "an ISO 8601 timestamp",
        );
    }
}
