//! operations rules: `{data, meta}` with `meta.source` in the closed set and the fields of
//! each source's meta; with an output schema, `data` against it.

use serde_json::{Map, Value};

use crate::formats::findings::{Findings, Options};
use crate::formats::mcp::rules as mcp;

/// The operations rules on a parsed envelope.
pub(crate) fn check(value: &Value, options: &Options, f: &mut Findings) {
    let Some(env) = value.as_object() else {
        f.report("ops.shape", "", "an operations envelope is a JSON object");
        return;
    };
    if !env.contains_key("data") {
        f.report(
            "ops.shape",
            "/data",
            "missing (isResponseEnvelope needs data and meta)",
        );
    }
    let Some(meta) = env.get("meta").and_then(Value::as_object) else {
        f.report("ops.shape", "/meta", "missing or not an object");
        return;
    };
    match meta.get("source").and_then(Value::as_str) {
        Some("local") => {
            string(meta, "operationId", f);
            if meta.get("timestamp").is_none_or(|t| t.as_u64().is_none()) {
                f.report(
                    "ops.meta",
                    "/meta/timestamp",
                    "must be Unix epoch milliseconds (an integer >= 0)",
                );
            }
        }
        Some("http") => {
            match meta.get("statusCode").and_then(Value::as_u64) {
                Some(100..=599) => {}
                _ => f.report(
                    "ops.meta",
                    "/meta/statusCode",
                    "must be an HTTP status (100-599)",
                ),
            }
            match meta.get("headers").and_then(Value::as_object) {
                Some(headers) => {
                    for (name, v) in headers {
                        if !v.is_string() {
                            f.report(
                                "ops.meta",
                                crate::json::pointer::join("/meta/headers", name),
                                "header values are strings (repeated values joined with \", \")",
                            );
                        }
                    }
                }
                None => f.report("ops.meta", "/meta/headers", "must be an object of strings"),
            }
            string(meta, "contentType", f);
        }
        Some("mcp") => {
            if !meta.get("isError").is_some_and(Value::is_boolean) {
                f.report("ops.meta", "/meta/isError", "must be a boolean");
            }
            match meta.get("content").and_then(Value::as_array) {
                Some(blocks) => mcp::check_blocks(blocks, "/meta/content", None, f),
                None => f.report(
                    "ops.meta",
                    "/meta/content",
                    "must be an array of content blocks",
                ),
            }
            if let Some(sc) = meta.get("structuredContent") {
                if !sc.is_object() {
                    f.report("ops.meta", "/meta/structuredContent", "must be an object");
                } else if env.get("data") != Some(sc) {
                    f.report(
                        "ops.mcp-data",
                        "/data",
                        "structuredContent is present, so data must be it (the primary output)",
                    );
                }
            }
            if let Some(m) = meta.get("_meta")
                && !m.is_object()
            {
                f.report("ops.meta", "/meta/_meta", "must be an object");
            }
        }
        Some(other) => f.report(
            "ops.source",
            "/meta/source",
            format!("{other:?} is not local, http or mcp"),
        ),
        None => f.report(
            "ops.source",
            "/meta/source",
            "missing (must be local, http or mcp)",
        ),
    }
    if let (Some(schema), Some(data)) = (&options.output_schema, env.get("data")) {
        crate::formats::findings::output_schema("ops.output-schema", schema, data, "/data", f);
    }
}

fn string(meta: &Map<String, Value>, key: &str, f: &mut Findings) {
    if !meta.get(key).is_some_and(Value::is_string) {
        f.report("ops.meta", format!("/meta/{key}"), "must be a string");
    }
}
