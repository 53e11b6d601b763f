//! The one path to a client: every message `envelope proxy` or `envelope serve` sends a
//! client (results, errors, notifications, the server's own requests, batches) is an
//! [`Outbound`] send, and [`Outbound`] masks secrets in it first. The session modules never
//! hold the client's raw channel, so no channel can forget to redact.
//!
//! The only frames that skip the mask are `tools/call` answers that shaping produced
//! ([`Ready::shaped`]): shaping has already redacted them with the tool's own settings
//! (`redact = false` and `pass_through` in the policy are honoured there), with the same
//! rules.
//!
//! What a message's redaction does ([`redact_message`]):
//! - `jsonrpc`, `id` and `method` at the top of a message are never changed (answers must
//!   match their requests). A protocol field named like a secret (`progressToken`) is not
//!   masked for its name, only for the secrets the free-text rules find in it.
//! - Every other string, at any depth, goes through the free-text rules, documents in
//!   strings (JSON, base64 of text) included; every key too (a masked key stays unique).
//! - A value under a secret name keeps its JSON type, as in a payload (docs/redaction.md):
//!   a string becomes `"***"`, a number `0` (`"api_key": 123` → `0`), an array keeps its
//!   length with its strings and numbers masked. An object under a secret name is not
//!   masked whole, since protocol messages use such names for structure
//!   (`inputSchema.properties.password` is a schema): it is redacted member by member, and
//!   its literal values (`default`, `const`, `enum`, `examples`, `example`: a schema's
//!   sample of the secret) are masked.
//! - A message without a secret leaves byte for byte as it came.
//!
//! No frame larger than [`MAX_CLIENT_MESSAGE`] leaves (the TypeScript SDK's stdio client
//! drops its connection on a message over 10 MiB): an answer over it becomes a JSON-RPC
//! error that says so, anything else is dropped and logged. What may be big says so
//! itself first: a `resources/read` of a large artifact answers with its first window.

use serde_json::{Map, Value};
use tokio::sync::mpsc;

use envelope::shape::redact::secret_key_rule;
use envelope::shape::redact::{MASK, Redaction, masked_keys, redact_json_text, redact_value};

use crate::message::{self, Kind, Message, code};
use crate::stats::log;
use crate::transport::Frame;

/// The largest message sent to a client: 8 MiB, below the 10 MiB the TypeScript SDK's stdio
/// client accepts.
pub const MAX_CLIENT_MESSAGE: usize = 8 << 20;

/// Members of a JSON-RPC message routing depends on: never redacted.
const ROUTING: [&str; 3] = ["jsonrpc", "id", "method"];

/// Protocol fields whose names look like secrets but carry none: a masked progress token
/// would detach a client's progress notifications from its request.
const PROTOCOL_FIELDS: [&str; 1] = ["progressToken"];

/// Members of a JSON Schema that hold literal values of the property they describe.
const SCHEMA_LITERALS: [&str; 5] = ["default", "const", "enum", "examples", "example"];

/// A frame that may leave for the client: masked, or shaped by the tool's own settings.
#[derive(Debug)]
pub struct Ready(Frame);

impl Ready {
    /// A `tools/call` answer as shaping wrote it: shaping redacted it already, with the
    /// tool's own settings (which may turn redaction off for it).
    pub fn shaped(frame: Frame) -> Ready {
        Ready(frame)
    }

    /// A frame taken from a channel that only [`Outbound`] senders write to.
    pub(crate) fn received(frame: Frame) -> Ready {
        Ready(frame)
    }

    /// A batch's answers as one array (`None` when there are none).
    pub fn batch(answers: impl IntoIterator<Item = Ready>) -> Option<Ready> {
        let mut array = Vec::new();
        for answer in answers {
            array.push(if array.is_empty() { b'[' } else { b',' });
            array.extend_from_slice(&answer.0);
        }
        if array.is_empty() {
            return None;
        }
        array.push(b']');
        Some(Ready(array))
    }

    /// The bytes.
    pub fn into_frame(self) -> Frame {
        self.0
    }
}

/// A sender of frames to one client (or to a batch's collector), masking secrets in each.
#[derive(Clone, Debug)]
pub struct Outbound {
    tx: mpsc::Sender<Frame>,
    redact: bool,
}

impl Outbound {
    /// Frames sent here go to `tx`; `redact` false (`--no-redact`) sends them unmasked.
    pub fn new(tx: mpsc::Sender<Frame>, redact: bool) -> Outbound {
        Outbound { tx, redact }
    }

    /// Another sender to `tx`, with the same redaction setting.
    pub fn to(&self, tx: mpsc::Sender<Frame>) -> Outbound {
        Outbound {
            tx,
            redact: self.redact,
        }
    }

    /// Whether frames are masked.
    pub fn redacts(&self) -> bool {
        self.redact
    }

    /// `frame` as it may leave: with its secrets masked (unless redaction is off). A frame
    /// that cannot be read as JSON is replaced by an error, never passed on unread.
    pub fn ready(&self, frame: Frame) -> Ready {
        if !self.redact {
            return Ready(frame);
        }
        match redact_message(&frame) {
            Ok(None) => Ready(frame),
            Ok(Some((masked, _))) => Ready(masked),
            Err(e) => Ready(message::error_response(
                b"null",
                code::INTERNAL_ERROR,
                &format!("the message could not be checked for secrets: {e}"),
            )),
        }
    }

    /// Masks and sends; `false` when the client is gone.
    pub async fn send(&self, frame: Frame) -> bool {
        let ready = self.ready(frame);
        self.send_ready(ready).await
    }

    /// Sends a frame that is ready; `false` when the client is gone. A frame over
    /// [`MAX_CLIENT_MESSAGE`] does not leave: an answer is replaced by an error saying so,
    /// anything else is dropped and logged.
    pub async fn send_ready(&self, ready: Ready) -> bool {
        let frame = match within_bound(ready.0) {
            Some(frame) => frame,
            None => return !self.tx.is_closed(),
        };
        self.tx.send(frame).await.is_ok()
    }

    /// Whether the receiving side is gone.
    pub fn is_closed(&self) -> bool {
        self.tx.is_closed()
    }
}

/// `frame` when it is within [`MAX_CLIENT_MESSAGE`]; for an answer over it, an error
/// answer saying so; for anything else over it, `None`.
fn within_bound(frame: Frame) -> Option<Frame> {
    if frame.len() <= MAX_CLIENT_MESSAGE {
        return Some(frame);
    }
    let message = Message::parse(&frame).ok();
    if message.as_ref().is_some_and(|m| m.kind == Kind::Batch) {
        return batch_over_bound(&frame);
    }
    let answer = message
        .as_ref()
        .filter(|m| matches!(m.kind, Kind::Response | Kind::ErrorResponse));
    let method = message.as_ref().and_then(|m| m.method.clone());
    log::warn(
        "client.message_too_large",
        &[
            ("bytes", frame.len().into()),
            ("max", MAX_CLIENT_MESSAGE.into()),
            ("method", method.unwrap_or_default().into()),
        ],
    );
    let raw_id = answer?.id_bytes(&frame)?;
    let text = format!(
        "the answer is {} bytes, over the {} bytes a message to the client may have: ask for less (a page, a window, a filter), or lower the tool's limit",
        frame.len(),
        MAX_CLIENT_MESSAGE
    );
    Some(message::error_response(raw_id, code::INTERNAL_ERROR, &text))
}

/// A batch of answers over the bound: each answer becomes the error saying so (an array
/// of errors is small), so that no request of the batch is left unanswered.
fn batch_over_bound(frame: &[u8]) -> Option<Frame> {
    let elements: Vec<&serde_json::value::RawValue> = serde_json::from_slice(frame).ok()?;
    let text = format!(
        "the batch's answers are {} bytes together, over the {} bytes a message to the client may have: send fewer requests at a time",
        frame.len(),
        MAX_CLIENT_MESSAGE
    );
    let errors: Vec<Ready> = elements
        .into_iter()
        .filter_map(|element| {
            let element = element.get().as_bytes();
            let raw_id = Message::parse(element).ok()?.id_bytes(element)?.to_vec();
            Some(Ready(message::error_response(
                &raw_id,
                code::INTERNAL_ERROR,
                &text,
            )))
        })
        .collect();
    Ready::batch(errors).map(Ready::into_frame)
}

/// The frame with its secrets masked and what was masked, or `None` when it holds none
/// (the frame leaves as it is). A batch is redacted message by message.
///
/// # Errors
///
/// When the frame is not JSON (the caller must not pass it on).
pub fn redact_message(frame: &[u8]) -> Result<Option<(Frame, Vec<Redaction>)>, serde_json::Error> {
    // One pass over the text finds nothing in nearly every message: nothing is built.
    if let Some(clean) = redact_json_text(frame, "message")
        && clean.report.is_empty()
    {
        return Ok(None);
    }
    let mut value: Value = serde_json::from_slice(frame)?;
    let mut report = Vec::new();
    match &mut value {
        Value::Array(messages) => {
            for (i, message) in messages.iter_mut().enumerate() {
                redact_one(message, &format!("{i}"), &mut report);
            }
        }
        message => redact_one(message, "", &mut report),
    }
    if report.is_empty() {
        return Ok(None);
    }
    let bytes = serde_json::to_vec(&value)?;
    Ok(Some((bytes, report)))
}

/// Masks secrets in a protocol document that is not a message (an OpenAPI document, a
/// tool list) by the rules of a message's members; returns what was masked.
pub fn redact_document(document: &mut Value) -> Vec<Redaction> {
    let mut report = Vec::new();
    redact_structure(document, "", &mut report, false);
    report
}

/// One message: every member but the routing ones.
fn redact_one(message: &mut Value, at: &str, report: &mut Vec<Redaction>) {
    match message {
        Value::Object(members) => {
            let keys: Vec<String> = members.keys().cloned().collect();
            for key in keys {
                if ROUTING.contains(&key.as_str()) {
                    continue;
                }
                let here = format!("{at}/{key}");
                if let Some(value) = members.get_mut(&key) {
                    redact_member(&key, value, &here, report, false);
                }
            }
            rename_secret_keys(members, at, report);
        }
        other => redact_structure(other, at, report, false),
    }
}

/// A value of a protocol message.
fn redact_structure(value: &mut Value, at: &str, report: &mut Vec<Redaction>, literals: bool) {
    match value {
        Value::String(_) => redact_value(value, at, report),
        Value::Array(items) => {
            for (i, item) in items.iter_mut().enumerate() {
                redact_structure(item, &format!("{at}/{i}"), report, false);
            }
        }
        Value::Object(members) => {
            for (key, value) in members.iter_mut() {
                let here = format!("{at}/{key}");
                let literal = literals && SCHEMA_LITERALS.contains(&key.as_str());
                redact_member(key, value, &here, report, literal);
            }
            rename_secret_keys(members, at, report);
        }
        Value::Number(_) | Value::Bool(_) | Value::Null => {}
    }
}

/// The value of member `key`; `literal`: it holds literal values of a secret.
fn redact_member(
    key: &str,
    value: &mut Value,
    at: &str,
    report: &mut Vec<Redaction>,
    literal: bool,
) {
    if PROTOCOL_FIELDS.contains(&key) {
        return redact_structure(value, at, report, false);
    }
    if literal {
        return mask_scalars(value, at, "key:schema_literal", report);
    }
    match secret_key_rule(key) {
        Some(rule) if is_secret_scalar(value) => {
            mask_scalar(value);
            report.push(Redaction {
                rule,
                at: at.to_string(),
            });
        }
        // Structure under a secret name: member by member, its literals masked.
        Some(_) if value.is_object() => redact_structure(value, at, report, true),
        // A list of secrets keeps its length (a declared array stays an array).
        Some(rule) if value.is_array() => mask_scalars(value, at, &rule, report),
        _ => redact_structure(value, at, report, false),
    }
}

/// Whether a scalar under a secret name is worth masking (`null`, `""`, the mask, `0` and
/// booleans, a flag such as `"auth": true`, are not).
fn is_secret_scalar(value: &Value) -> bool {
    match value {
        Value::String(s) => !s.is_empty() && s != MASK,
        Value::Number(n) => n.as_f64() != Some(0.0),
        _ => false,
    }
}

/// A secret scalar masked in its own type: a string becomes the mask, a number `0`.
fn mask_scalar(value: &mut Value) {
    *value = match value {
        Value::Number(_) => Value::from(0),
        _ => Value::String(MASK.into()),
    };
}

/// Every string and number in `value` masked in its own type.
fn mask_scalars(value: &mut Value, at: &str, rule: &str, report: &mut Vec<Redaction>) {
    match value {
        Value::Array(items) => {
            for (i, item) in items.iter_mut().enumerate() {
                mask_scalars(item, &format!("{at}/{i}"), rule, report);
            }
        }
        Value::Object(members) => {
            for (key, item) in members.iter_mut() {
                mask_scalars(item, &format!("{at}/{key}"), rule, report);
            }
            // A key may hold a secret too.
            rename_secret_keys(members, at, report);
        }
        scalar if is_secret_scalar(scalar) => {
            mask_scalar(scalar);
            report.push(Redaction {
                rule: rule.to_string(),
                at: at.to_string(),
            });
        }
        _ => {}
    }
}

/// Keys holding a secret are masked as [`redact_value`] masks them (unique among their
/// siblings); members keep their order.
fn rename_secret_keys(members: &mut Map<String, Value>, at: &str, report: &mut Vec<Redaction>) {
    let renames = masked_keys(members.keys().map(String::as_str));
    if renames.iter().all(Option::is_none) {
        return;
    }
    let old = std::mem::take(members);
    for ((key, value), renamed) in old.into_iter().zip(renames) {
        let key = match renamed {
            None => key,
            Some((masked, rules)) => {
                for rule in rules {
                    report.push(Redaction {
                        rule,
                        at: format!("{at}/{masked}"),
                    });
                }
                masked
            }
        };
        members.insert(key, value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn redacted(message: Value) -> Value {
        let frame = serde_json::to_vec(&message).unwrap();
        match redact_message(&frame).unwrap() {
            Some((bytes, report)) => {
                assert!(!report.is_empty());
                serde_json::from_slice(&bytes).unwrap()
            }
            None => message,
        }
    }

    const GHP: &str = "ghp_0123456789abcdefghijABCDEFGHIJ012345";

    #[test]
    fn a_clean_message_leaves_byte_for_byte() {
        let frame = br#"{"jsonrpc":"2.0", "id":7,"result":{"tools":[{"name":"a","inputSchema":{"type":"object"}}]}}"#;
        assert!(redact_message(frame).unwrap().is_none());
    }

    #[test]
    fn routing_members_and_progress_tokens_are_kept() {
        let message = json!({"jsonrpc":"2.0","id":"Bearer abcdef123456","method":"notifications/progress",
            "params":{"progressToken":"tok-123456789","progress":1,"message":format!("using {GHP}")}});
        let out = redacted(message);
        assert_eq!(out["id"], "Bearer abcdef123456");
        assert_eq!(out["params"]["progressToken"], "tok-123456789");
        assert_eq!(out["params"]["message"], "using ***");
    }

    #[test]
    fn a_schema_property_named_like_a_secret_keeps_its_schema_and_loses_its_default() {
        let message = json!({"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"login",
            "description": format!("token {GHP}"),
            "inputSchema":{"type":"object","properties":{"password":{"type":"string","default":"hunter2","enum":["a1","b2"]},
                "api_key":{"type":"integer","examples":[1234, 0]}}}}]}});
        let out = redacted(message);
        let tool = &out["result"]["tools"][0];
        assert_eq!(tool["description"], "token ***");
        let password = &tool["inputSchema"]["properties"]["password"];
        assert_eq!(password["type"], "string");
        assert_eq!(password["default"], "***");
        assert_eq!(password["enum"], json!(["***", "***"]));
        // A literal keeps its type: the schema still describes its own examples.
        let key = &tool["inputSchema"]["properties"]["api_key"];
        assert_eq!(key, &json!({"type": "integer", "examples": [0, 0]}));
    }

    #[test]
    fn scalars_under_secret_names_keys_and_errors_are_masked() {
        let message = json!({"jsonrpc":"2.0","id":2,"error":{"code":-1,"message":"failed: Authorization: Bearer abcDEF123456xyz",
            "data":{"api_key":"k-1","count":3,"auth":true, GHP: 1, "nested":[{"password":"p"}],
                "client_secret": 1234, "secret": 0, "api_keys": ["t-1", 2, null, {"x": "y", GHP: 3}]}}});
        let out = redacted(message);
        let data = &out["error"]["data"];
        assert_eq!(out["error"]["message"], "failed: Authorization: Bearer ***");
        assert_eq!(data["api_key"], "***");
        assert_eq!(data["count"], 3);
        assert_eq!(data["auth"], true);
        assert_eq!(data["***"], 1);
        assert_eq!(data["nested"][0]["password"], "***");
        // Types are kept: a number becomes 0 (a 0 has nothing to hide), a list keeps its length.
        assert_eq!(data["client_secret"], 0);
        assert_eq!(data["secret"], 0);
        assert_eq!(
            data["api_keys"],
            json!(["***", 0, null, {"x": "***", "***": 0}])
        );
        assert!(!serde_json::to_string(&out).unwrap().contains(GHP));
    }

    #[test]
    fn a_document_is_masked_by_the_rules_of_a_message() {
        let mut document = json!({"paths": {"/ops/login": {"post": {"description": format!("uses {GHP}"),
            "requestBody": {"content": {"application/json": {"schema": {"properties": {"api_key": {"type": "string", "example": "k-123"}}}}}}}}}});
        let report = redact_document(&mut document);
        assert_eq!(report.len(), 2);
        let post = &document["paths"]["/ops/login"]["post"];
        assert_eq!(post["description"], "uses ***");
        let key =
            &post["requestBody"]["content"]["application/json"]["schema"]["properties"]["api_key"];
        assert_eq!(key, &json!({"type": "string", "example": "***"}));
    }

    #[test]
    fn a_batch_is_redacted_message_by_message() {
        let batch = json!([{"jsonrpc":"2.0","id":1,"result":{"text":GHP}},{"jsonrpc":"2.0","method":"x","params":{"token":"abc"}}]);
        let out = redacted(batch);
        assert_eq!(out[0]["result"]["text"], "***");
        assert_eq!(out[1]["params"]["token"], "***");
    }

    #[tokio::test]
    async fn no_frame_over_the_bound_leaves() {
        let (tx, mut rx) = mpsc::channel(4);
        let out = Outbound::new(tx, false);
        let big = "x".repeat(MAX_CLIENT_MESSAGE);
        let answer = json!({"jsonrpc":"2.0","id":"big-1","result":{"text":big}});
        assert!(out.send(answer.to_string().into_bytes()).await);
        let sent: Value = serde_json::from_slice(&rx.recv().await.unwrap()).unwrap();
        assert_eq!(sent["id"], "big-1");
        assert!(
            sent["error"]["message"]
                .as_str()
                .unwrap()
                .contains("over the")
        );
        let note = json!({"jsonrpc":"2.0","method":"notifications/message","params":{"data":big}});
        assert!(out.send(note.to_string().into_bytes()).await);
        let small = json!({"jsonrpc":"2.0","id":2,"result":{}});
        assert!(out.send(small.to_string().into_bytes()).await);
        // The notification was dropped: the next frame is the small answer.
        let sent: Value = serde_json::from_slice(&rx.recv().await.unwrap()).unwrap();
        assert_eq!(sent["id"], 2);
        // A batch over the bound: every answer of it becomes the error.
        let half = "y".repeat(MAX_CLIENT_MESSAGE / 2);
        let batch = Ready::batch([
            Ready(
                json!({"jsonrpc":"2.0","id":1,"result":{"t":half}})
                    .to_string()
                    .into_bytes(),
            ),
            Ready(
                json!({"jsonrpc":"2.0","id":2,"result":{"t":half}})
                    .to_string()
                    .into_bytes(),
            ),
        ])
        .unwrap();
        assert!(out.send_ready(batch).await);
        let sent: Value = serde_json::from_slice(&rx.recv().await.unwrap()).unwrap();
        assert_eq!(sent[0]["id"], 1);
        assert_eq!(sent[1]["id"], 2);
        assert!(
            sent[1]["error"]["message"]
                .as_str()
                .unwrap()
                .contains("together")
        );
    }

    mod generated {
        use super::*;
        use proptest::prelude::*;

        const PLANTED: [&str; 5] = [
            "ghp_0123456789abcdefghijABCDEFGHIJ012345",
            "AKIAABCDEFGHIJKLMNOP",
            "Bearer abcDEF123456xyz987",
            "sk_live_abcdefghij0123456789",
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJl",
        ];

        /// A string: plain words, or a planted secret between words.
        fn text() -> impl Strategy<Value = String> {
            prop_oneof![
                "[a-z ]{0,12}",
                (0..PLANTED.len(), "[a-z]{0,6}", "[a-z]{0,6}")
                    .prop_map(|(i, a, b)| format!("{a} {} {b}", PLANTED[i])),
            ]
        }

        /// Any JSON value, secrets in its strings and keys.
        fn value() -> impl Strategy<Value = Value> {
            let leaf = prop_oneof![
                Just(Value::Null),
                any::<bool>().prop_map(Value::Bool),
                any::<i32>().prop_map(|n| json!(n)),
                text().prop_map(Value::String),
            ];
            leaf.prop_recursive(5, 64, 6, |inner| {
                prop_oneof![
                    prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                    prop::collection::vec(
                        (
                            prop_oneof![
                                text(),
                                Just("password".to_string()),
                                Just("properties".to_string())
                            ],
                            inner
                        ),
                        0..6
                    )
                    .prop_map(|members| Value::Object(members.into_iter().collect())),
                ]
            })
        }

        fn message() -> impl Strategy<Value = Value> {
            (0..4u8, value(), "[a-z/]{1,20}").prop_map(|(kind, payload, method)| match kind {
                0 => json!({"jsonrpc": "2.0", "id": 1, "result": payload}),
                1 => json!({"jsonrpc": "2.0", "id": "x", "error": {"code": -1, "message": "m", "data": payload}}),
                2 => json!({"jsonrpc": "2.0", "method": method, "params": payload}),
                _ => json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": payload}),
            })
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(256))]

            /// Whatever the message: no planted secret leaves, the routing members are the
            /// same, the output is JSON, and a second pass changes nothing.
            #[test]
            fn no_planted_secret_leaves_and_routing_is_kept(message in message()) {
                let frame = serde_json::to_vec(&message).unwrap();
                let out = match redact_message(&frame).unwrap() {
                    Some((bytes, _)) => bytes,
                    None => frame.clone(),
                };
                let text = String::from_utf8(out.clone()).unwrap();
                for planted in PLANTED {
                    prop_assert!(!text.contains(planted), "{} in {}", planted, text);
                }
                let parsed: Value = serde_json::from_slice(&out).unwrap();
                for member in ROUTING {
                    prop_assert_eq!(parsed.get(member), message.get(member));
                }
                prop_assert!(redact_message(&out).unwrap().is_none(), "not idempotent: {}", text);
            }
        }
    }

    #[test]
    fn a_frame_that_is_not_json_is_refused() {
        assert!(redact_message(b"{\"id\":1,").is_err());
    }
}
