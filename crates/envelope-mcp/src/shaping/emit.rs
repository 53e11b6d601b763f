//! `emit`: the result written as another envelope format, so that `envelope detect` on the
//! result (or on its single text block) names that format and `envelope unwrap` gives the
//! payload back.
//!
//! The result is decoded as an MCP envelope and written by the library's [`Pipeline`] in the
//! target format, cut to fit. A format whose document is a `CallToolResult` itself
//! (tool-envelope-v1) is the result; any other goes in a single text block (with
//! `isError` when the result was an error). When the full result was stored, the document's
//! artifact reference names it (`sha256:<hex>`, read by
//! [`parse_artifact_uri`](crate::drill::parse_artifact_uri)), and a `resource_link` block
//! follows the text block where the revision has them.

use envelope::json::Dialect;
use envelope::model::ArtifactRef;
use envelope::shape::Pipeline;
use envelope::{DecodeOptions, FormatId};
use envelope_store::Store;
use serde_json::{Map, Value, json};

use super::{CallContext, Fitted, ShapeError, Stored, link};
use crate::revision::Revision;

/// Attempts at an inner limit before giving up (each shrinks it by what the last
/// overshot: the text block escapes the document's quotes).
const MAX_ATTEMPTS: usize = 8;

/// `value` (the redacted result; `full` its compact JSON) written as `format` in at most
/// `limit` bytes.
pub(crate) fn emit(
    value: Value,
    full: &[u8],
    format: FormatId,
    stored: Option<&Stored>,
    store: &dyn Store,
    call: &CallContext,
    limit: usize,
) -> Result<Fitted, ShapeError> {
    let excerpt = link::excerpt(&value, limit);
    let refuse = |reason: String| -> Result<Fitted, ShapeError> {
        let stored = match stored {
            Some(s) => s.clone(),
            None => super::put(store, full, None)?,
        };
        let bytes = link::error_result(&reason, &excerpt, &stored, call.revision, limit)?;
        Ok(Fitted {
            bytes,
            truncated: true,
        })
    };
    let mut env =
        match envelope::formats::decode_value(FormatId::Mcp, value, &DecodeOptions::default()) {
            Ok(env) => env,
            Err(e) => {
                return refuse(format!(
                    "The result of tool {} cannot be written as {}: {e}",
                    call.tool,
                    format.as_str()
                ));
            }
        };
    let is_error = env.status == envelope::Status::Error;
    if let Some(stored) = stored {
        env.artifact = Some(ArtifactRef {
            digest: stored.digest.to_string(),
        });
    }
    let link = stored
        .filter(|_| call.revision.supports_resource_link())
        .map(|s| link::block(s, call.revision));
    let mut inner = limit;
    for _ in 0..MAX_ATTEMPTS {
        let shaped = Pipeline::from_envelope(env.clone(), format)
            .limit(inner)
            .run();
        let doc = match shaped {
            Ok(shaped) => shaped.bytes,
            Err(e) => {
                return refuse(format!(
                    "The result of tool {} ({} bytes) cannot be written as {} in {limit} bytes: {e}",
                    call.tool,
                    full.len(),
                    format.as_str()
                ));
            }
        };
        let bytes = wrap(doc, link.as_ref(), is_error, call.revision)?;
        if bytes.len() <= limit {
            return Ok(Fitted {
                bytes,
                truncated: stored.is_some(),
            });
        }
        // Shrink in proportion to the overshoot (escaping grows the document evenly).
        let scaled = (inner as u128 * limit as u128 / bytes.len() as u128) as usize;
        inner = scaled
            .min(inner.saturating_sub(bytes.len() - limit))
            .min(inner - 1);
        if inner == 0 {
            break;
        }
    }
    refuse(format!(
        "The result of tool {} ({} bytes) cannot be written as {} in {limit} bytes.",
        call.tool,
        full.len(),
        format.as_str()
    ))
}

/// The result carrying `doc`: `doc` itself when it is a `CallToolResult`, else a single text
/// block holding it (and the link, when there is one).
fn wrap(
    doc: Vec<u8>,
    link: Option<&Value>,
    is_error: bool,
    revision: Revision,
) -> Result<Vec<u8>, ShapeError> {
    let parsed: Value = serde_json::from_slice(&doc)?;
    if parsed.get("content").is_some_and(Value::is_array) {
        return Ok(doc);
    }
    let text = String::from_utf8(doc).expect("the library writes UTF-8");
    let mut content = vec![json!({"type": "text", "text": text})];
    content.extend(link.cloned());
    let mut result = Map::new();
    result.insert("content".into(), Value::Array(content));
    if is_error {
        result.insert("isError".into(), Value::Bool(true));
    }
    if revision.has_result_type() {
        result.insert("resultType".into(), json!("complete"));
    }
    Ok(envelope::json::to_vec(&Value::Object(result), Dialect::Js))
}
