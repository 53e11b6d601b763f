//! `emit`: the result written as another envelope format, so that `envelope detect` on the
//! result (or on its single text block) names that format and `envelope unwrap` gives the
//! payload back.
//!
//! The result is decoded as an MCP envelope and written by the library in the target
//! format, cut to fit ([`envelope::shape::fit`], then the output check a `Pipeline` makes). A
//! format whose document is a `CallToolResult` itself (tool-envelope-v1) is the result; any
//! other goes in a single text block (with `isError` when the result was an error).
//!
//! **Pointers.** Each format's budget marker (ctxo `_meta`, protocol-v1 `meta.budget`,
//! operations `meta.budget`, tool-result-envelope `__envelope.budget`, tool-envelope-v1
//! `meta.budget`) names its cuts by pointers into the *payload*, as the formats define
//! them. So when the full result is stored, the payload is stored too, as its own artifact
//! (compact JSON: a text payload as a JSON string), and the document's artifact reference
//! (`sha256:<hex>`, read by [`parse_artifact_uri`](crate::drill::parse_artifact_uri)) names
//! it: every pointer the document names resolves, as written, in the artifact it names.
//! The hint (and tool-envelope-v1's notice, which quotes it) names the proxy's limit and
//! ends with the `envelope_read` call that reads on from where the cut it names stopped. A
//! `resource_link` block naming the full stored result follows the text block where the
//! revision has them.

use envelope::json::Dialect;
use envelope::model::{ArtifactRef, Cut, CutUnit};
use envelope::validate::Profile;
use envelope::{DecodeOptions, EncodeOptions, Envelope, FormatId};
use envelope_store::Store;
use serde_json::{Map, Value, json};

use super::limits::Limits;
use super::{CallContext, Fitted, ShapeError, Stored, link};
use crate::revision::Revision;

/// Attempts at an inner limit before giving up (each shrinks it by what the last
/// overshot: the text block escapes the document's quotes).
const MAX_ATTEMPTS: usize = 8;

/// `value` (the redacted result; `full` its compact JSON) written as `format` within
/// `limits` (bytes, tokens or both: the library cuts to an inner byte limit, shrunk until
/// the whole result's cost fits).
pub(crate) fn emit(
    value: Value,
    full: &[u8],
    format: FormatId,
    stored: Option<&Stored>,
    store: &dyn Store,
    call: &CallContext,
    limits: &Limits,
) -> Result<Fitted, ShapeError> {
    let names = limits.names();
    let excerpt = link::excerpt(&value, limits.scale());
    let refuse = |reason: String| -> Result<Fitted, ShapeError> {
        let stored = match stored {
            Some(s) => s.clone(),
            None => super::put(store, full, None)?,
        };
        let bytes = link::error_result(&reason, &excerpt, &stored, call.revision, limits)?;
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
    // The artifact the document's pointers are into: its payload. (An error result has
    // none; its document names the full result, as a document without cuts may.)
    let payload_uri = match stored {
        Some(_) if !matches!(env.payload, envelope::Payload::None) => {
            let bytes = envelope::json::to_vec(&env.payload.json(), Dialect::Js);
            let payload = super::put_tagged(store, &bytes, None, "mcp-payload")?;
            env.artifact = Some(ArtifactRef {
                digest: payload.digest.to_string(),
            });
            Some(payload.uri())
        }
        Some(full) => {
            env.artifact = Some(ArtifactRef {
                digest: full.digest.to_string(),
            });
            None
        }
        None => None,
    };
    let link = stored
        .filter(|_| call.revision.supports_resource_link())
        .map(|s| link::block(s, call.revision));
    // Sizes are costs in bytes of the room (`Limits::cost`): bytes, or tokens scaled.
    let room = limits.room();
    // A result within the limits (nothing stored) is written whole where it can be: under a
    // token limit alone, the room (an estimate) could be less than it takes.
    let mut inner = match stored {
        Some(_) => room,
        None => limits
            .bytes
            .min(full.len().saturating_mul(2).saturating_add(4096)),
    };
    for _ in 0..MAX_ATTEMPTS {
        let doc = match write(&env, format, inner, &names, payload_uri.as_deref()) {
            Ok(doc) => doc,
            Err(e) => {
                return refuse(format!(
                    "The result of tool {} ({} bytes) cannot be written as {} in {names}: {e}",
                    call.tool,
                    full.len(),
                    format.as_str()
                ));
            }
        };
        let bytes = wrap(doc, link.as_ref(), is_error, call.revision)?;
        let cost = limits.cost(&bytes);
        if cost <= room {
            return Ok(Fitted {
                bytes,
                truncated: stored.is_some(),
            });
        }
        // Shrink in proportion to the overshoot (escaping grows the document evenly).
        let scaled = (inner.min(bytes.len()) as u128 * room as u128 / cost as u128) as usize;
        inner = scaled.min(inner.saturating_sub(cost - room)).min(inner - 1);
        if inner == 0 {
            break;
        }
    }
    refuse(format!(
        "The result of tool {} ({} bytes) cannot be written as {} in {names}.",
        call.tool,
        full.len(),
        format.as_str()
    ))
}

/// `env` written as `format` in at most `inner` bytes, checked as a `Pipeline` checks its
/// output. When it is cut and the payload is stored at `payload_uri`, the hint names
/// `names` (the limits the client knows, not `inner`) and ends with the call that reads on.
fn write(
    env: &Envelope,
    format: FormatId,
    inner: usize,
    names: &str,
    payload_uri: Option<&str>,
) -> envelope::Result<Vec<u8>> {
    let options = EncodeOptions::default();
    let fitted = envelope::shape::fit(env, format, inner, &options)?;
    let bytes = match (fitted.envelope, payload_uri) {
        (Some(mut cut), Some(uri)) => {
            let kept = cut.payload.json().into_owned();
            if let Some(budget) = cut.budget.as_mut()
                && let Some(hint) = &budget.hint
            {
                let hint = hint.replacen(
                    &format!("to fit {inner} bytes"),
                    &format!("to fit {names}"),
                    1,
                );
                budget.hint = Some(match read_on(&budget.cuts, &kept, uri) {
                    Some(call) => format!("{hint} {call}"),
                    None => hint,
                });
            }
            envelope::encode(format, &cut, &options)?.bytes
        }
        (_, _) => fitted.encoded.bytes,
    };
    envelope::validate::check_output(&bytes, format, Profile::Spec)?;
    Ok(bytes)
}

/// `Read on: envelope_read {…}`: the call that reads on, in the stored payload `uri`, from
/// where the cut the library's hint names stopped (`kept`: the cut payload). `offset`
/// counts what `envelope_read` counts: the items kept of an array, the characters kept of a
/// string; none when nothing of the value was kept (it reads from the start).
fn read_on(cuts: &[Cut], kept: &Value, uri: &str) -> Option<String> {
    // The cut `envelope::shape::budget::hint` names.
    let named = cuts.iter().max_by_key(|c| {
        (
            c.pointer.is_empty(),
            c.unit == CutUnit::Items,
            c.total - c.kept,
        )
    })?;
    let offset = match named.unit {
        CutUnit::Items => Some(named.kept),
        _ => kept
            .pointer(&named.pointer)
            .and_then(Value::as_str)
            .map(|s| s.chars().count() as u64),
    };
    let mut call = json!({"uri": uri, "pointer": named.pointer});
    if let Some(offset) = offset.filter(|_| named.kept > 0) {
        call["offset"] = json!(offset);
    }
    Some(format!("Read on: envelope_read {call}"))
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
