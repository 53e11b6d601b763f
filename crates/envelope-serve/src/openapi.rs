//! The OpenAPI 3.1 document of the HTTP view (`GET /openapi.json`): one path per operation,
//! `POST /ops/{id}`, whose `operationId` is the operation's id.
//!
//! - The request body is the operation's input (its input schema, as is); an empty body is
//!   the input `{}`, so the body is `required` only when `{}` is not a valid input.
//! - The 200 response is the operations envelope (`{data, meta}`; `data` is `anyOf` the
//!   output schema and `Offloaded`, the summary that stands for a payload over the limit,
//!   with the artifact's digest; a subscription's is `text/event-stream`); errors are
//!   `{code, message, details}` under the statuses of [`crate::http::status_for`].
//! - Extensions: `x-envelope-type` (query, mutation, subscription) and `x-envelope-input:
//!   "body"` (the input is the whole body, not parameters). `from_openapi` reads both, so the
//!   document reads back into the same types and input schemas; with `keepIds` on the
//!   source, into the same ids.
//! - Input and output schemas live under `components/schemas` (`<tool name>.input`,
//!   `<tool name>.output`), their local `$ref`s (`#/$defs/x`) rewritten to point there, so
//!   that they still resolve inside this document.

use envelope_ops::{Identity, OperationSpec, OperationType, Registry};
use serde_json::{Map, Value, json};

use crate::tool_name;

/// The document of `registry`; `secured` adds the bearer scheme and the 401 answers.
///
/// ```
/// use envelope_ops::{handler_fn, HandlerError, OperationSpec, OperationType, Registry};
/// use serde_json::json;
///
/// let mut registry = Registry::new();
/// registry.register(OperationSpec::new("git", "log", OperationType::Query),
///     handler_fn(|_, _| async { Ok::<_, HandlerError>(json!([])) })).unwrap();
/// let doc = envelope_serve::openapi::document(&registry, false);
/// let post = &doc["paths"]["/ops/git.log"]["post"];
/// assert_eq!(post["operationId"], "git.log");
/// assert_eq!(post["x-envelope-type"], "query");
/// ```
pub fn document(registry: &Registry, secured: bool) -> Value {
    document_of(registry, secured, |_| true)
}

/// [`document`] with only the operations `identity` may call (its access check passes).
pub fn document_for(registry: &Registry, secured: bool, identity: &Identity) -> Value {
    document_of(registry, secured, |spec| {
        envelope_ops::access::check(&spec.access_control, Some(identity)).is_ok()
    })
}

fn document_of(
    registry: &Registry,
    secured: bool,
    include: impl Fn(&OperationSpec) -> bool,
) -> Value {
    let mut paths = Map::new();
    let mut schemas = Map::new();
    schemas.insert("CallError".into(), call_error_schema());
    schemas.insert("Offloaded".into(), offloaded_schema());
    for spec in registry.specs().filter(|spec| include(spec)) {
        let name = tool_name(&spec.id());
        let input_key = format!("{name}.input");
        let output_key = format!("{name}.output");
        schemas.insert(input_key.clone(), relocated(&spec.input_schema, &input_key));
        schemas.insert(
            output_key.clone(),
            relocated(&spec.output_schema, &output_key),
        );
        let path = format!("/ops/{}", encode_path_segment(&spec.id()));
        paths.insert(
            path,
            json!({"post": operation(spec, &input_key, &output_key, secured)}),
        );
    }
    let mut components = json!({
        "schemas": schemas,
        "responses": {"Error": {
            "description": "the call failed: its code, message and details",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/CallError"}}}
        }}
    });
    let mut document = json!({
        "openapi": "3.1.0",
        "info": {
            "title": "envelope serve",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "The operations of an envelope registry. Each answers with an operations envelope ({data, meta}), shaped to the server's byte limit: a payload over it is in the store (meta.artifact names it; GET /artifacts/sha256/{hex} gives it back)."
        },
        // Relative: the server that serves the document serves the operations.
        "servers": [{"url": "/"}],
        "paths": paths,
    });
    if secured {
        components["securitySchemes"] = json!({"bearer": {"type": "http", "scheme": "bearer"}});
        document["security"] = json!([{"bearer": []}]);
    }
    document["components"] = components;
    document
}

fn operation(spec: &OperationSpec, input_key: &str, output_key: &str, secured: bool) -> Value {
    // `data` is the output, or the summary of an output that was offloaded to the store.
    let envelope = json!({
        "type": "object",
        "properties": {
            "data": {"anyOf": [
                {"$ref": format!("#/components/schemas/{output_key}")},
                {"$ref": "#/components/schemas/Offloaded"}
            ]},
            "meta": {"type": "object"}
        },
        "required": ["data", "meta"]
    });
    let success = match spec.kind {
        // Each event, as SSE tools read it: `data` the envelope's JSON text, `event`
        // absent (a message) or `error` (then `data` is a CallError, and the stream ends).
        OperationType::Subscription => json!({
            "description": "one server-sent event per envelope (data: the envelope as JSON); an error is an `error` event and the last",
            "content": {"text/event-stream": {"schema": {
                "type": "object",
                "properties": {
                    "data": {"type": "string", "contentMediaType": "application/json"},
                    "event": {"type": "string", "enum": ["message", "error"]}
                },
                "required": ["data"]
            }}}
        }),
        _ => json!({
            "description": "the operations envelope",
            "content": {"application/json": {"schema": envelope}}
        }),
    };
    let error = json!({"$ref": "#/components/responses/Error"});
    let mut responses = json!({
        "200": success,
        "400": error,
        "403": error,
        "404": error,
        // An upstream's (an OpenAPI source's) own 4xx, passed on with its status.
        "4XX": error,
        "500": error,
        "502": error,
        "504": error,
    });
    if secured {
        responses["401"] = error.clone();
    }
    let mut operation = json!({
        "operationId": spec.id(),
        "tags": [spec.namespace],
        "x-envelope-type": spec.kind.as_str(),
        "x-envelope-input": "body",
        // An empty body is the input `{}`: the body is required when `{}` is not an input.
        "requestBody": {
            "required": !accepts_empty_object(&spec.input_schema),
            "description": "the operation's input (none: {})",
            "content": {"application/json": {"schema": {"$ref": format!("#/components/schemas/{input_key}")}}}
        },
        "responses": responses,
    });
    if let Some(title) = &spec.title {
        operation["summary"] = title.clone().into();
    }
    if !spec.description.is_empty() {
        operation["description"] = spec.description.clone().into();
    }
    operation
}

/// Whether `{}` is a valid input (a schema that does not compile accepts nothing here: the
/// registry refused it already).
fn accepts_empty_object(schema: &Value) -> bool {
    jsonschema::validator_for(schema).is_ok_and(|v| v.is_valid(&json!({})))
}

/// The `data` of an envelope whose payload went to the store: a summary (size, kind,
/// record count, preview) and the artifact's digest (`GET /artifacts/sha256/{hex}`).
fn offloaded_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "summary": {"type": "object"},
            "artifact": {"type": "string", "pattern": "^sha256:[0-9a-f]{64}$"}
        },
        "required": ["summary", "artifact"]
    })
}

fn call_error_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "code": {"type": "string"},
            "message": {"type": "string"},
            "details": {}
        },
        "required": ["code", "message"]
    })
}

/// `schema` placed at `#/components/schemas/<key>`: every local `$ref` inside it (`#` or
/// `#/...`, relative to the schema itself) rewritten to start there.
fn relocated(schema: &Value, key: &str) -> Value {
    let base = format!("#/components/schemas/{}", escape_pointer(key));
    let mut schema = schema.clone();
    rewrite_refs(&mut schema, &base);
    schema
}

fn rewrite_refs(value: &mut Value, base: &str) {
    match value {
        Value::Object(map) => {
            for (key, member) in map.iter_mut() {
                match member {
                    Value::String(reference) if key == "$ref" && reference.starts_with('#') => {
                        *reference = format!("{base}{}", &reference[1..]);
                    }
                    _ => rewrite_refs(member, base),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|item| rewrite_refs(item, base)),
        _ => {}
    }
}

/// A JSON Pointer token (`~` → `~0`, `/` → `~1`).
fn escape_pointer(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// An id as one path segment: unreserved characters as they are, the rest `%XX`.
pub fn encode_path_segment(id: &str) -> String {
    let mut out = String::with_capacity(id.len());
    for byte in id.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                out.push(byte as char)
            }
            _ => out.push_str(&format!("%{byte:02X}")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_refs_follow_the_schema_into_components() {
        let schema = json!({
            "$defs": {"a": {"type": "string"}},
            "properties": {"x": {"$ref": "#/$defs/a"}, "self": {"$ref": "#"}, "far": {"$ref": "https://e.x/s"}}
        });
        let moved = relocated(&schema, "git_log.input");
        assert_eq!(
            moved["properties"]["x"]["$ref"],
            "#/components/schemas/git_log.input/$defs/a"
        );
        assert_eq!(
            moved["properties"]["self"]["$ref"],
            "#/components/schemas/git_log.input"
        );
        assert_eq!(moved["properties"]["far"]["$ref"], "https://e.x/s");
    }

    #[test]
    fn ids_are_one_segment() {
        assert_eq!(encode_path_segment("git.log"), "git.log");
        assert_eq!(
            encode_path_segment("pets.find/by tag"),
            "pets.find%2Fby%20tag"
        );
        assert_eq!(encode_path_segment("café"), "caf%C3%A9");
    }
}
