//! tool-result-envelope rules: the `__envelope` object's fields, read as the reference
//! reads them (property names in any case), and the payload it points at.

use serde_json::{Map, Value};

use crate::formats::findings::Findings;
use crate::formats::tool_result_envelope::parse_content_type;
use crate::model::ContentType;

/// The tool-result-envelope rules on a parsed document.
pub(crate) fn check(value: &Value, f: &mut Findings) {
    let Some(root) = value.as_object() else {
        f.report(
            "tre.not-object",
            "",
            "a tool-result-envelope document is a JSON object",
        );
        return;
    };
    let Some(meta) = root.get("__envelope").and_then(Value::as_object) else {
        f.report("tre.meta-missing", "/__envelope", "no __envelope object");
        return;
    };
    let field = |name: &str| {
        meta.iter()
            .find(|(k, _)| k.as_str() == name)
            .or_else(|| meta.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)))
            .map(|(k, v)| (format!("/__envelope/{k}"), v))
    };
    for name in [
        "tool",
        "provider",
        "model",
        "toolCallId",
        "schemaRef",
        "payloadPath",
        "createdUtc",
    ] {
        if let Some((at, v)) = field(name)
            && !(v.is_string() || v.is_null())
        {
            f.report("tre.type", at, "must be a string or null");
        }
    }
    for name in ["compat", "tags"] {
        if let Some((at, v)) = field(name)
            && !(v.is_null() || v.as_array().is_some_and(|a| a.iter().all(Value::is_string)))
        {
            f.report("tre.type", at, "must be an array of strings or null");
        }
    }
    match field("version") {
        Some((_, Value::String(v))) if v == "1" => {}
        Some((at, v)) => f.report("tre.version", at, format!("must be \"1\", found {v}")),
        None => f.report("tre.version", "/__envelope/version", "missing"),
    }
    if let Some((at, v)) = field("contentType")
        && matches!(parse_content_type(v), None | Some(ContentType::Other(_)))
    {
        f.report(
            "tre.content-type",
            at,
            format!("{v} is not 0-5 or one of Unknown, Text, List, Object, Image, Binary"),
        );
    }
    if let Some((at, Value::String(created))) = field("createdUtc") {
        let utc = created.ends_with('Z') && crate::time::parse_rfc3339(created).is_some();
        if !utc {
            f.report(
                "tre.created",
                at,
                format!("{created:?} is not yyyy-MM-ddTHH:mm:ss[.f]Z"),
            );
        }
    }
    check_payload_path(root, field("payloadPath").map(|(_, v)| v), f);
}

/// The payload key (`payloadPath`, default `result`) must be a key of the root.
fn check_payload_path(root: &Map<String, Value>, path: Option<&Value>, f: &mut Findings) {
    let path = match path {
        Some(Value::String(p)) => p.as_str(),
        Some(Value::Null) | None => "result",
        Some(_) => return, // a type finding already
    };
    if !root.contains_key(path) {
        f.report(
            "tre.payload-path",
            "/__envelope/payloadPath",
            format!("the root has no key {path:?}: readers fall back to the compat keys, else the whole root"),
        );
    }
}
