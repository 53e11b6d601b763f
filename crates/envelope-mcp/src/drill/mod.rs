//! Drill-in: the full result one read away. Artifact URIs, `resources/read` on them, and the
//! `envelope_read` tool.
//!
//! When [`shaping`](crate::shaping) cuts a result, the full (redacted) `CallToolResult` is
//! stored as compact JSON and named by [`artifact_uri`] (and, for a tool whose results are
//! emitted as another envelope format, its payload too: the artifact the document names). A client reads it back whole with
//! `resources/read` ([`read_resource`]), or a model reads a part of it with the
//! `envelope_read` tool ([`read_tool`], [`call_read`]): a JSON Pointer (`locate`), then a
//! jq filter ([`jq`]), then a window of an array or a string that fits the limit
//! (`window`). docs/proxy.md ("Drill-in") is the user's description.
//!
//! Nothing here panics on bad input: every problem is an `isError` result or a [`DrillError`].
//! The functions block (store reads, a jq filter up to [`jq::TIME_LIMIT`]): call them from
//! a blocking context (`tokio::task::spawn_blocking`).

pub(crate) mod args;
pub(crate) mod index;
pub mod jq;
mod jq_filter;
pub mod jq_worker;
pub(crate) mod locate;
mod paged;
pub(crate) mod window;

use envelope_store::{Digest, Store, StoreError};
use serde_json::{Value, json};

use args::ReadArgs;

/// The name of the proxy's own tool.
pub const TOOL_NAME: &str = "envelope_read";

/// The media type of every stored result.
pub const MEDIA_TYPE: &str = "application/json";

/// JSON-RPC error code for a resource that does not exist (MCP).
pub const RESOURCE_NOT_FOUND: i64 = -32002;

/// JSON-RPC error code for an internal error: here, an artifact that cannot be read intact.
pub const INTERNAL_ERROR: i64 = -32603;

/// The scheme and authority of every artifact URI: `envelope://artifact/sha256/<hex>`.
pub const URI_PREFIX: &str = "envelope://artifact/sha256/";

/// The URI of a stored result: `envelope://artifact/sha256/<64 hex digits>`.
pub fn artifact_uri(digest: &Digest) -> String {
    format!("{URI_PREFIX}{}", digest.hex())
}

/// The digest an artifact URI names; also accepts the bare `sha256:<hex>` form the library's
/// MCP writer puts in a `resource_link`. `None` for anything else.
pub fn parse_artifact_uri(uri: &str) -> Option<Digest> {
    let hex = uri
        .strip_prefix(URI_PREFIX)
        .or_else(|| uri.strip_prefix("sha256:"))?;
    format!("sha256:{hex}").parse().ok()
}

/// A `resources/read` that cannot be answered: the JSON-RPC error to send.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{message} (JSON-RPC {code})")]
pub struct DrillError {
    /// [`RESOURCE_NOT_FOUND`] or [`INTERNAL_ERROR`].
    pub code: i64,
    /// What went wrong, for the client.
    pub message: String,
    /// The URI that was asked for.
    pub uri: String,
}

impl DrillError {
    /// The JSON-RPC `error` object: `{code, message, data: {uri}}`.
    pub fn to_error_object(&self) -> Value {
        json!({"code": self.code, "message": self.message, "data": {"uri": self.uri}})
    }
}

/// The `resourceTemplates` entry for artifact URIs (`resources/templates/list`).
pub fn resource_template() -> Value {
    json!({
        "uriTemplate": format!("{URI_PREFIX}{{digest}}"),
        "name": "envelope-artifact",
        "title": "Full tool result stored by envelope",
        "description": "The full (redacted) CallToolResult of a tools/call whose answer was cut \
                        to the size limit (or, for a tool whose results are written as another \
                        envelope format, the payload its document names); digest is the \
                        SHA-256 hex of the stored JSON.",
        "mimeType": MEDIA_TYPE,
    })
}

/// `resources/read` of an artifact URI: `{contents: [{uri, mimeType, text}]}` with the stored
/// result's JSON, verified against the digest.
///
/// # Errors
///
/// [`RESOURCE_NOT_FOUND`] for a URI that is not an artifact URI or an artifact the store does
/// not hold; [`INTERNAL_ERROR`] for one that is corrupted (its bytes do not hash to its
/// digest, or are not JSON) or cannot be read.
///
/// An artifact too big for one message to a client
/// ([`MAX_CLIENT_MESSAGE`](crate::outbound::MAX_CLIENT_MESSAGE)) answers with its first
/// window (`_meta["dev.envelope/window"]`: offset, bytes, total) and a second text that says
/// how to read on with `envelope_read`.
pub fn read_resource(uri: &str, store: &dyn Store) -> Result<Value, DrillError> {
    // What the client gave is echoed cut (a URI of 100 KB is not sent back whole).
    let error = |code, message: String| DrillError {
        code,
        message,
        uri: if parse_artifact_uri(uri).is_some() {
            uri.to_string()
        } else {
            envelope_store::echoed(uri)
        },
    };
    let Some(digest) = parse_artifact_uri(uri) else {
        return Err(error(
            RESOURCE_NOT_FOUND,
            format!(
                "resource not found: {} is not an artifact URI ({URI_PREFIX}<64 hex digits>)",
                envelope_store::echoed(uri)
            ),
        ));
    };
    let code = |(not_found, message)| {
        let code = if not_found {
            RESOURCE_NOT_FOUND
        } else {
            INTERNAL_ERROR
        };
        error(code, message)
    };
    let text = fetch(&digest, store).map_err(code)?;
    serde_json::from_str::<serde::de::IgnoredAny>(&text).map_err(|_| code(not_json(uri)))?;
    let budget = crate::outbound::MAX_CLIENT_MESSAGE - RESOURCE_OVERHEAD;
    let window = escaped_prefix(&text, budget);
    if window == text.len() {
        return Ok(json!({"contents": [{"uri": uri, "mimeType": MEDIA_TYPE, "text": text}]}));
    }
    // Too big for one message to the client: the first window, and how to read on.
    let how = format!(
        "This artifact is {} bytes; the text above is its first {window} bytes, cut to fit one message. Read it in parts with the {TOOL_NAME} tool: {{\"uri\": \"{uri}\", \"pointer\": \"\"}} shows its outline; a pointer, offset and limit page through any part, and jq selects.",
        text.len()
    );
    Ok(json!({"contents": [
        {"uri": uri, "mimeType": "text/plain", "text": &text[..window],
         "_meta": {"dev.envelope/window": {"offset": 0, "bytes": window, "total": text.len()}}},
        {"uri": uri, "mimeType": "text/plain", "text": how},
    ]}))
}

/// Room left in a message for what surrounds an artifact's text.
const RESOURCE_OVERHEAD: usize = 4096;

/// The length of the longest prefix of `text` (at a character boundary) whose JSON string
/// escape fits in `budget` bytes: all of `text` when it fits.
fn escaped_prefix(text: &str, budget: usize) -> usize {
    let mut used = 0;
    for (at, c) in text.char_indices() {
        used += match c {
            '"' | '\\' | '\n' | '\r' | '\t' | '\u{8}' | '\u{c}' => 2,
            c if (c as u32) < 0x20 => 6,
            c => c.len_utf8(),
        };
        if used > budget {
            return at;
        }
    }
    text.len()
}

/// The stored result's text, verified against the digest and UTF-8 (callers check that it is
/// JSON: `read` by parsing it, [`read_resource`] by scanning it). The error says whether the
/// artifact is simply not there (`true`) or cannot be used.
fn fetch(digest: &Digest, store: &dyn Store) -> Result<String, (bool, String)> {
    let bytes = store.get(digest).map_err(|e| store_error(digest, e))?;
    String::from_utf8(bytes).map_err(|_| not_json(&artifact_uri(digest)))
}

/// What a store's error reading `digest` says to a client, and whether the artifact is
/// simply not there (`true`) or cannot be used.
fn store_error(digest: &Digest, error: StoreError) -> (bool, String) {
    let uri = artifact_uri(digest);
    match error {
        StoreError::NotFound(_) => (
            true,
            format!(
                "resource not found: {uri} is not in the store (it was never stored here, or was removed)"
            ),
        ),
        StoreError::Corrupted { .. } => (
            false,
            format!("{uri} is corrupted in the store: its bytes no longer match its digest"),
        ),
        other => (false, format!("{uri} cannot be read: {other}")),
    }
}

/// The error for an artifact that is intact but not a JSON result.
fn not_json(uri: &str) -> (bool, String) {
    (
        false,
        format!("{uri} is corrupted in the store: it is not a JSON result"),
    )
}

/// The `envelope_read` entry for `tools/list`: its description tells a model how to page
/// and query; `outputSchema` describes every non-error answer.
pub fn read_tool() -> Value {
    json!({
        "name": TOOL_NAME,
        "title": "Read a stored tool result",
        "description": "Read part of a full tool result that was cut to fit the size limit. \
    A cut result says so and gives a URI like envelope://artifact/sha256/<hex>; pass it as `uri`. \
    `pointer` (JSON Pointer) selects a part of the stored CallToolResult: \
    /structuredContent/... for structured results, /content/0/text for the first text block \
    (an artifact an envelope document names holds its payload: pointers are the document's own); \
    a pointer continues into a text block that holds JSON, e.g. /content/0/text/items/3. \
    `jq` runs a jq filter on the selected part (e.g. `.items[] | select(.size > 100) | .name`; \
    several outputs come back as an array). \
    The answer is {items|text|value, offset, next_offset, total}: an array comes back as a \
    window of `items`, a string as a window of `text` (counted in characters), anything else as \
    `value`. Each answer fits the size limit; when next_offset is not null, call again with \
    `offset` set to it to read on. `limit` caps the window (items or characters). \
    Examples (the URI from the cut result): \
    {\"uri\": \"envelope://artifact/sha256/<hex>\", \"pointer\": \"/content/0/text\", \"offset\": 8000} reads a text on from character 8000; \
    {\"uri\": \"envelope://artifact/sha256/<hex>\", \"pointer\": \"/structuredContent/rows\", \"offset\": 100, \"limit\": 50} reads rows 100 to 149; \
    {\"uri\": \"envelope://artifact/sha256/<hex>\", \"pointer\": \"/structuredContent/rows\", \"jq\": \"group_by(.kind) | map({kind: .[0].kind, count: length})\"} counts rows by kind.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "uri": {
                    "type": "string",
                    "description": "The artifact URI from a cut result: envelope://artifact/sha256/<64 hex>."
                },
                "pointer": {
                    "type": "string",
                    "description": "JSON Pointer into the stored CallToolResult (default: all of it), e.g. /structuredContent/items or /content/0/text/rows."
                },
                "offset": {
                    "type": "integer",
                    "minimum": 0,
                    "description": "First item (array) or character (string) of the window; the previous answer's next_offset."
                },
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "description": "At most this many items or characters (fewer when they do not fit)."
                },
                "jq": {
                    "type": "string",
                    "description": "A jq filter applied to the selected value before the window."
                }
            },
            "required": ["uri"],
            "additionalProperties": false
        },
        "outputSchema": {
            "type": "object",
            "properties": {
                "items": {"type": "array", "description": "The window of an array."},
                "text": {"type": "string", "description": "The window of a string."},
                "value": {"description": "The selected value, whole (not an array or string)."},
                "offset": {"type": "integer", "minimum": 0},
                "next_offset": {"type": ["integer", "null"], "minimum": 0},
                "total": {"type": "integer", "minimum": 0}
            },
            "required": ["offset", "next_offset", "total"],
            "additionalProperties": false
        },
        "annotations": {"readOnlyHint": true, "idempotentHint": true, "openWorldHint": false}
    })
}

/// Answers a `tools/call` of `envelope_read` with `arguments`: a `CallToolResult` whose
/// compact JSON is at most `limit` bytes (for any `limit` of 64 or more). Every problem (bad
/// arguments, a missing or corrupted artifact, a bad pointer or filter) is an `isError: true`
/// result saying what is wrong, never a panic.
pub fn call_read(arguments: &Value, store: &dyn Store, limit: usize) -> Value {
    read(arguments, store, limit).unwrap_or_else(|message| error_result(&message, limit))
}

/// [`call_read`] without the paging index: the artifact is read and parsed whole for every
/// call. The answers are the same (the index is tested against this); benchmarks time the
/// two side by side.
pub fn call_read_whole(arguments: &Value, store: &dyn Store, limit: usize) -> Value {
    let whole = || {
        let args = ReadArgs::parse(arguments)?;
        let digest = digest_of(&args.uri)?;
        read_whole(&args, &digest, store, limit)
    };
    whole().unwrap_or_else(|message| error_result(&message, limit))
}

/// The digest an `envelope_read` call's `uri` names, or what is wrong with it.
fn digest_of(uri: &str) -> Result<Digest, String> {
    parse_artifact_uri(uri).ok_or_else(|| {
        format!(
            "{} is not an artifact URI: expected {URI_PREFIX}<64 hex digits>, as given by a cut result",
            envelope_store::echoed(uri)
        )
    })
}

fn read(arguments: &Value, store: &dyn Store, limit: usize) -> Result<Value, String> {
    let args = ReadArgs::parse(arguments)?;
    let digest = digest_of(&args.uri)?;
    // A large artifact is read through its paging index: only what the answer needs. The
    // sidecar read is the view's access check too (another caller's artifact is "not
    // found" below, as the whole read says it).
    if let Ok(sidecar) = store.sidecar(&digest)
        && let Some(index) = index::for_artifact(&digest, sidecar.size_bytes, store)
    {
        return paged::read(&args, &digest, &index, store, limit);
    }
    read_whole(&args, &digest, store, limit)
}

/// `envelope_read` by reading the artifact whole (a small one, or one the index cannot
/// read).
fn read_whole(
    args: &ReadArgs,
    digest: &Digest,
    store: &dyn Store,
    limit: usize,
) -> Result<Value, String> {
    let text = fetch(digest, store).map_err(|(_, message)| message)?;
    let stored: Value = serde_json::from_str(&text).map_err(|_| not_json(&args.uri).1)?;
    // Free the text (as big as the artifact) before the value is cut and copied.
    drop(text);
    let selected = locate::resolve(stored, &args.pointer)?;
    let selected = match &args.jq {
        Some(filter) => jq::run(filter, selected).map_err(|e| e.to_string())?,
        None => selected,
    };
    window::answer(selected, args.offset, args.count, limit)
}

/// An `isError` result with `message`, cut (with `...`) to fit `limit` where it can.
fn error_result(message: &str, limit: usize) -> Value {
    let build = |text: &str| json!({"content": [{"type": "text", "text": text}], "isError": true});
    let mut answer = build(message);
    let mut keep = message.chars().count();
    while keep > 0 && window::json_size(&answer) > limit {
        let over = window::json_size(&answer) - limit;
        keep = keep.saturating_sub(over.max(1) + 3);
        let cut: String = message.chars().take(keep).collect();
        answer = build(&format!("{cut}..."));
    }
    answer
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The calls the tool's description shows work as written on a result of that shape.
    #[test]
    fn the_examples_of_the_description_work_as_written() {
        const KINDS: [&str; 3] = ["file", "dir", "link"];
        let dir = tempfile::tempdir().unwrap();
        let store = envelope_store::FileStore::new(dir.path());
        let rows: Vec<Value> = (0..300)
            .map(|i| json!({"id": i, "kind": KINDS[i % 3]}))
            .collect();
        let text: String = (0..2000).map(|i| format!("line {i}\n")).collect();
        let result = json!({"content": [{"type": "text", "text": text}], "structuredContent": {"rows": rows}});
        let digest = store
            .put(result.to_string().as_bytes(), MEDIA_TYPE, &[])
            .unwrap()
            .digest;
        let description = read_tool()["description"].as_str().unwrap().to_string();
        // Each example is a JSON object starting `{"uri"`, after "Examples".
        let mut examples: Vec<Value> = Vec::new();
        let mut rest = description.split("Examples").nth(1).unwrap();
        while let Some(start) = rest.find("{\"uri\"") {
            let mut stream =
                serde_json::Deserializer::from_str(&rest[start..]).into_iter::<Value>();
            examples.push(stream.next().unwrap().unwrap());
            rest = &rest[start + stream.byte_offset()..];
        }
        assert_eq!(examples.len(), 3, "{description}");
        let mut answers = Vec::new();
        for mut example in examples {
            example["uri"] = json!(artifact_uri(&digest));
            let answer = call_read(&example, &store, 16384);
            assert!(answer.get("isError").is_none(), "{example}: {answer}");
            answers.push(answer["structuredContent"].clone());
        }
        assert_eq!(answers[0]["offset"], 8000);
        assert!(
            answers[0]["text"]
                .as_str()
                .unwrap()
                .starts_with(&text[8000..8010])
        );
        assert_eq!(answers[1]["items"], json!(rows[100..150]));
        assert_eq!(
            answers[2]["items"],
            json!([{"kind": "dir", "count": 100}, {"kind": "file", "count": 100}, {"kind": "link", "count": 100}])
        );
    }

    #[test]
    fn uri_round_trip() {
        let digest = Digest::of(b"result");
        let uri = artifact_uri(&digest);
        assert_eq!(uri, format!("envelope://artifact/sha256/{}", digest.hex()));
        assert_eq!(parse_artifact_uri(&uri), Some(digest));
        assert_eq!(parse_artifact_uri(&digest.to_string()), Some(digest));
        assert_eq!(parse_artifact_uri("envelope://artifact/sha256/00"), None);
        assert_eq!(parse_artifact_uri("file:///etc/passwd"), None);
    }
}
