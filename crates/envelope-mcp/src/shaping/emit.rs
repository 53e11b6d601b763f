//! `emit`: the result written as another envelope format, so that `envelope detect` on the
//! result (or on its single text block) names that format and `envelope unwrap` gives the
//! payload back.
//!
//! The result is decoded as an MCP envelope and written by the library in the target
//! format, then checked as a `Pipeline` checks its output. A format whose document is a
//! `CallToolResult` itself (tool-envelope-v1) is the result; any other goes in a single
//! text block (with `isError` when the result was an error).
//!
//! **One cut.** A result whose document does not fit is stored and cut once, by the
//! library's budget ([`envelope::shape::fit_within`]) told what the client gets: the
//! client's limits, the bytes (and tokens) of the result around the text block as its
//! reserve, and that the document is the text of a JSON string there
//! ([`Carried::InString`]: each quote takes two bytes). The notice names the client's
//! limits. No attempt is made again: a token count is not quite additive, so the whole is
//! counted once more, and a result over it (never seen on the tests' inputs) is refused.
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
use envelope::model::{ArtifactRef, Cut, CutUnit, Payload};
use envelope::shape::{Budget, Carried, Notice, TokenLimit};
use envelope::validate::Profile;
use envelope::{DecodeOptions, EncodeOptions, FormatId};
use envelope_store::Store;
use serde_json::{Map, Value, json};

use super::limits::Limits;
use super::{CallContext, Fitted, ShapeError, Stored, link};
use crate::revision::Revision;

/// Tokens kept beside the count of the result around the document: BPE counts of a
/// concatenation are not exactly the sum of the parts' counts.
const SEAM_TOKENS: usize = 2;

/// `value` (the redacted result; `full` its compact JSON) written as `format` within
/// `limits` (bytes, tokens or both). `stored`: the full result, when it was stored already
/// (it is over the limits as it is); a document that does not fit whole stores it too. The
/// result, and what is stored.
pub(crate) fn emit(
    value: Value,
    full: &[u8],
    format: FormatId,
    stored: Option<Stored>,
    store: &dyn Store,
    call: &CallContext,
    limits: &Limits,
) -> Result<(Fitted, Option<Stored>), ShapeError> {
    let names = limits.names();
    let excerpt = link::excerpt(&value, limits.scale());
    let refuse = |reason: String, stored: Option<Stored>| {
        let stored = match stored {
            Some(s) => s,
            None => super::put(store, full, None)?,
        };
        let bytes = link::error_result(&reason, &excerpt, &stored, call.revision, limits)?;
        let fitted = Fitted {
            bytes,
            truncated: true,
        };
        Ok::<_, ShapeError>((fitted, Some(stored)))
    };
    let cannot = |detail: &dyn std::fmt::Display| {
        format!(
            "The result of tool {} ({} bytes) cannot be written as {} in {names}: {detail}",
            call.tool,
            full.len(),
            format.as_str()
        )
    };
    let mut env =
        match envelope::formats::decode_value(FormatId::Mcp, value, &DecodeOptions::default()) {
            Ok(env) => env,
            Err(e) => return refuse(cannot(&e), stored),
        };
    let result = Wrapper {
        in_block: format != FormatId::ToolEnvelopeV1,
        is_error: env.status == envelope::Status::Error,
        revision: call.revision,
    };
    let options = EncodeOptions::default();
    // Within the limits as MCP (nothing stored): written whole when that fits too.
    let stored = match stored {
        Some(stored) => stored,
        None => {
            let whole = envelope::encode(format, &env, &options)
                .map_err(|e| e.to_string())
                .and_then(|encoded| checked(encoded.bytes, format));
            match whole.map(|doc| result.around(doc, None)) {
                Ok(bytes) if limits.fits(&bytes) => {
                    let fitted = Fitted {
                        bytes,
                        truncated: false,
                    };
                    return Ok((fitted, None));
                }
                Ok(_) => super::put(store, full, None)?,
                Err(e) => return refuse(cannot(&e), None),
            }
        }
    };
    // The artifact the document's pointers are into: its payload. (An error result has
    // none; its document names the full result, as a document without cuts may.)
    let payload_uri = match env.payload {
        Payload::None => {
            env.artifact = Some(ArtifactRef {
                digest: stored.digest.to_string(),
            });
            None
        }
        _ => {
            let bytes = envelope::json::to_vec(&env.payload.json(), Dialect::Js);
            let payload = super::put_tagged(store, &bytes, None, "mcp-payload")?;
            env.artifact = Some(ArtifactRef {
                digest: payload.digest.to_string(),
            });
            Some(payload.uri())
        }
    };
    let link = (result.in_block && call.revision.supports_resource_link())
        .then(|| link::block(&stored, call.revision));
    let notice = ReadOn {
        uri: payload_uri.as_deref(),
    };
    let budget = result.budget(limits, link.as_ref(), &notice);
    let doc = match envelope::shape::fit_within(&env, format, budget, &options) {
        Ok(fitted) => {
            let cut = fitted.envelope.is_some();
            checked(fitted.encoded.bytes, format).map(|doc| (doc, cut))
        }
        Err(e) => Err(e.to_string()),
    };
    let (bytes, truncated) = match doc {
        Ok((doc, cut)) => (result.around(doc, link.as_ref()), cut),
        Err(e) => return refuse(cannot(&e), Some(stored)),
    };
    if !limits.fits(&bytes) {
        let reason = format!(
            "The result of tool {} ({} bytes) was written as {} to fit the limit of {names}, and with the result around it it is over.",
            call.tool,
            full.len(),
            format.as_str()
        );
        return refuse(reason, Some(stored));
    }
    Ok((Fitted { bytes, truncated }, Some(stored)))
}

/// `doc` when it passes the check a `Pipeline` makes of its output.
fn checked(doc: Vec<u8>, format: FormatId) -> Result<Vec<u8>, String> {
    envelope::validate::check_output(&doc, format, Profile::Spec).map_err(|e| e.to_string())?;
    Ok(doc)
}

/// The result a document is sent in.
struct Wrapper {
    /// Whether the document goes in a text block (else it is a `CallToolResult` itself).
    in_block: bool,
    is_error: bool,
    revision: Revision,
}

impl Wrapper {
    /// The result carrying `doc`: `doc` itself, or a single text block holding it (and
    /// the link, when there is one).
    fn around(&self, doc: Vec<u8>, link: Option<&Value>) -> Vec<u8> {
        if !self.in_block {
            return doc;
        }
        let text = String::from_utf8(doc).expect("the library writes UTF-8");
        let mut content = vec![json!({"type": "text", "text": text})];
        content.extend(link.cloned());
        let mut result = Map::new();
        result.insert("content".into(), Value::Array(content));
        if self.is_error {
            result.insert("isError".into(), Value::Bool(true));
        }
        if self.revision.has_result_type() {
            result.insert("resultType".into(), json!("complete"));
        }
        envelope::json::to_vec(&Value::Object(result), Dialect::Js)
    }

    /// The library's budget for the document: the client's `limits`, less what the
    /// result around it takes (its bytes exactly: the document's are its escaped text;
    /// its tokens and a margin), the document measured as sent.
    fn budget<'n>(
        &self,
        limits: &Limits,
        link: Option<&Value>,
        notice: &'n dyn Notice,
    ) -> Budget<'n> {
        // In a text block: the result around the document is reserved (its tokens with a
        // margin), and the document is measured escaped. As the result itself: nothing.
        let (reserve, carried) = match self.in_block {
            true => (Some(self.around(Vec::new(), link)), Carried::InString),
            false => (None, Carried::AsIs),
        };
        let tokens = limits.tokens.map(|t| TokenLimit {
            limit: t.limit,
            reserve: reserve
                .as_ref()
                .map_or(0, |around| t.count(around) + SEAM_TOKENS),
            tokenizer: t.tokenizer,
        });
        Budget {
            limit: limits.bytes,
            reserve: reserve.as_ref().map_or(0, Vec::len),
            notice: Some(notice),
            tokens,
            carried,
        }
    }
}

/// The library's notice, ending with the `envelope_read` call that reads on in the stored
/// payload `uri` (when there is one) from where the cut it names stopped.
struct ReadOn<'u> {
    uri: Option<&'u str>,
}

impl Notice for ReadOn<'_> {
    fn restate(&self, cuts: &[Cut], kept: &Payload, budget: &Budget<'_>) -> (Vec<Cut>, String) {
        let hint = envelope::shape::budget::hint(cuts, &budget.names());
        let call = self.uri.and_then(|uri| read_on(cuts, &kept.json(), uri));
        let notice = match call {
            Some(call) => format!("{hint} {call}"),
            None => hint,
        };
        (cuts.to_vec(), notice)
    }
}

/// `Read on: envelope_read {…}`: the call that reads on, in the stored payload `uri`, from
/// where the cut the library's hint names stopped (`kept`: the cut payload). `offset`
/// counts what `envelope_read` counts: the items kept of an array, the characters kept of a
/// string; none when nothing of the value was kept (it reads from the start).
fn read_on(cuts: &[Cut], kept: &Value, uri: &str) -> Option<String> {
    let named = envelope::shape::budget::named_cut(cuts)?;
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
