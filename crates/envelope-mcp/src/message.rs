//! One frame read as JSON-RPC, without rewriting it.
//!
//! [`Message::parse`] reads the top-level members the relay routes on (`id`, `method`,
//! `params`, `result`, `error`) as byte ranges of the frame: nothing below the top level is
//! built into a value, so a response of hundreds of MB costs one scan and no copy. The
//! relay changes a frame only by [`splice`]: new bytes in place of one member's value, every
//! other byte kept.

use std::borrow::Cow;
use std::ops::Range;

use serde::Deserialize;
use serde_json::value::RawValue;

/// What a JSON-RPC frame is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `method` and `id`: an answer is expected.
    Request,
    /// `method` without `id`.
    Notification,
    /// `result` and `id`.
    Response,
    /// `error` (with an `id`, `null` when the request could not be read).
    ErrorResponse,
    /// A JSON array of messages (the 2025-03-26 revision only); the relay splits it.
    Batch,
}

/// Why a frame is not a JSON-RPC message.
#[derive(Debug, thiserror::Error)]
pub enum MessageError {
    /// Not JSON at all, or JSON with a syntax error.
    #[error("not JSON: {0}")]
    NotJson(String),
    /// JSON, but neither an object nor an array.
    #[error("not a JSON-RPC message: the frame is JSON but not an object or an array")]
    NotAMessage,
    /// An object, but with no `method`, `result` or `error`.
    #[error("not a JSON-RPC message: no method, result or error member")]
    NoKind,
}

/// A frame read as JSON-RPC: its kind and where its top-level members are.
///
/// Ranges index the frame the message was parsed from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    /// What the frame is.
    pub kind: Kind,
    /// The `id` member's value, as raw JSON (absent for notifications and batches).
    pub id: Option<Range<usize>>,
    /// The `method`, unescaped.
    pub method: Option<String>,
    /// The `params` member's value.
    pub params: Option<Range<usize>>,
    /// The `result` member's value.
    pub result: Option<Range<usize>>,
    /// The `error` member's value.
    pub error: Option<Range<usize>>,
}

/// The top-level members, borrowed from the frame: `RawValue` only finds where a value ends.
/// Unknown members are skipped without being built (`IgnoredAny`).
#[derive(Deserialize)]
struct Members<'a> {
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    method: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    params: Option<&'a RawValue>,
    #[serde(borrow, default)]
    result: Option<&'a RawValue>,
    #[serde(borrow, default)]
    error: Option<&'a RawValue>,
}

impl Message {
    /// Reads `frame` as one JSON-RPC message (or a batch).
    ///
    /// # Errors
    ///
    /// When the frame is not JSON, or not a JSON-RPC message.
    pub fn parse(frame: &[u8]) -> Result<Message, MessageError> {
        let first = frame.iter().find(|b| !b.is_ascii_whitespace());
        match first {
            Some(b'[') => {
                serde_json::from_slice::<serde::de::IgnoredAny>(frame)
                    .map_err(|e| MessageError::NotJson(e.to_string()))?;
                Ok(Message {
                    kind: Kind::Batch,
                    id: None,
                    method: None,
                    params: None,
                    result: None,
                    error: None,
                })
            }
            Some(b'{') => Self::parse_object(frame),
            Some(_) => match serde_json::from_slice::<serde::de::IgnoredAny>(frame) {
                Ok(_) => Err(MessageError::NotAMessage),
                Err(e) => Err(MessageError::NotJson(e.to_string())),
            },
            None => Err(MessageError::NotJson("empty frame".into())),
        }
    }

    fn parse_object(frame: &[u8]) -> Result<Message, MessageError> {
        let members: Members<'_> =
            serde_json::from_slice(frame).map_err(|e| MessageError::NotJson(e.to_string()))?;
        let range = |raw: Option<&RawValue>| raw.map(|raw| range_in(frame, raw.get().as_bytes()));
        // `"id": null` on a request is not an id a response can be matched to; keep it raw
        // all the same, the peer decides.
        let kind = match (
            &members.method,
            &members.id,
            &members.result,
            &members.error,
        ) {
            (Some(_), Some(_), _, _) => Kind::Request,
            (Some(_), None, _, _) => Kind::Notification,
            (None, _, _, Some(_)) => Kind::ErrorResponse,
            (None, _, Some(_), None) => Kind::Response,
            _ => return Err(MessageError::NoKind),
        };
        Ok(Message {
            kind,
            id: range(members.id),
            method: members.method.map(Cow::into_owned),
            params: range(members.params),
            result: range(members.result),
            error: range(members.error),
        })
    }

    /// The raw JSON of the `id`, or `None`.
    pub fn id_bytes<'f>(&self, frame: &'f [u8]) -> Option<&'f [u8]> {
        self.id.clone().map(|r| &frame[r])
    }
}

/// Where `part` (a sub-slice of `whole`) lies in `whole`.
fn range_in(whole: &[u8], part: &[u8]) -> Range<usize> {
    let start = part.as_ptr() as usize - whole.as_ptr() as usize;
    start..start + part.len()
}

/// A key for matching a response to its request: the id's compact JSON, so `1`, ` 1` and
/// `"\u0031"` vs `"1"` written differently by two peers still match. `None` for a malformed id.
pub fn id_key(raw_id: &[u8]) -> Option<String> {
    let value: serde_json::Value = serde_json::from_slice(raw_id).ok()?;
    match value {
        serde_json::Value::String(_) | serde_json::Value::Number(_) => Some(value.to_string()),
        _ => None,
    }
}

/// `frame` with the bytes in `range` replaced by `new`: every other byte kept.
pub fn splice(frame: &[u8], range: Range<usize>, new: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(frame.len() - range.len() + new.len());
    out.extend_from_slice(&frame[..range.start]);
    out.extend_from_slice(new);
    out.extend_from_slice(&frame[range.end..]);
    out
}

/// A JSON-RPC error response with the raw `id` (use `null` when there is none).
pub fn error_response(raw_id: &[u8], code: i64, message: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(64 + message.len());
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    out.extend_from_slice(raw_id);
    out.extend_from_slice(br#","error":{"code":"#);
    out.extend_from_slice(code.to_string().as_bytes());
    out.extend_from_slice(br#","message":"#);
    out.extend_from_slice(serde_json::Value::from(message).to_string().as_bytes());
    out.extend_from_slice(b"}}");
    out
}

/// A JSON-RPC response with the raw `id` and the raw `result`.
pub fn response(raw_id: &[u8], result: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(32 + raw_id.len() + result.len());
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    out.extend_from_slice(raw_id);
    out.extend_from_slice(br#","result":"#);
    out.extend_from_slice(result);
    out.push(b'}');
    out
}

/// JSON-RPC error codes the proxy answers with.
pub mod code {
    /// The frame is not JSON.
    pub const PARSE_ERROR: i64 = -32700;
    /// The frame is JSON but not a request (an empty batch, a batch element that is not a
    /// message).
    pub const INVALID_REQUEST: i64 = -32600;
    /// The method is not known.
    pub const METHOD_NOT_FOUND: i64 = -32601;
    /// The parameters are not what the method takes.
    pub const INVALID_PARAMS: i64 = -32602;
    /// The proxy failed on its own side.
    pub const INTERNAL_ERROR: i64 = -32603;
    /// The upstream is gone (exited, crashed, unreachable): the request was not answered.
    pub const UPSTREAM_GONE: i64 = -32000;
    /// The upstream did not answer within `--timeout`.
    pub const UPSTREAM_TIMEOUT: i64 = -32001;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn member<'f>(frame: &'f [u8], range: &Option<Range<usize>>) -> &'f str {
        std::str::from_utf8(&frame[range.clone().unwrap()]).unwrap()
    }

    #[test]
    fn kinds() {
        let cases: [(&[u8], Kind); 5] = [
            (
                br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
                Kind::Request,
            ),
            (
                br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
                Kind::Notification,
            ),
            (br#"{"jsonrpc":"2.0","id":"a","result":{}}"#, Kind::Response),
            (
                br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}"#,
                Kind::ErrorResponse,
            ),
            (
                br#" [{"jsonrpc":"2.0","id":1,"method":"ping"}]"#,
                Kind::Batch,
            ),
        ];
        for (frame, kind) in cases {
            assert_eq!(
                Message::parse(frame).unwrap().kind,
                kind,
                "{}",
                String::from_utf8_lossy(frame)
            );
        }
    }

    #[test]
    fn ranges_point_at_the_raw_members() {
        let frame = br#"{"result" : {"content":[{"type":"text","text":"a\"}"}]} ,"id": "x\u0041","jsonrpc":"2.0","extra":{"deep":[1,2]}}"#;
        let message = Message::parse(frame).unwrap();
        assert_eq!(message.kind, Kind::Response);
        assert_eq!(
            member(frame, &message.result),
            r#"{"content":[{"type":"text","text":"a\"}"}]}"#
        );
        assert_eq!(member(frame, &message.id), r#""x\u0041""#);
        assert_eq!(id_key(message.id_bytes(frame).unwrap()).unwrap(), r#""xA""#);
    }

    #[test]
    fn escaped_method_is_unescaped() {
        let frame = br#"{"jsonrpc":"2.0","id":7,"method":"tools\/call","params":{"name":"echo"}}"#;
        let message = Message::parse(frame).unwrap();
        assert_eq!(message.method.as_deref(), Some("tools/call"));
        assert_eq!(member(frame, &message.params), r#"{"name":"echo"}"#);
    }

    #[test]
    fn splice_keeps_every_other_byte() {
        let frame = br#"{ "id" :1, "result":{"big":"xxxxxxxx"}, "zz_unknown":[true] }"#;
        let message = Message::parse(frame).unwrap();
        let out = splice(frame, message.result.unwrap(), br#"{"small":1}"#);
        assert_eq!(
            out,
            br#"{ "id" :1, "result":{"small":1}, "zz_unknown":[true] }"#.to_vec()
        );
    }

    #[test]
    fn bad_frames_are_errors_not_panics() {
        for frame in [
            &b""[..],
            b"   ",
            b"hello world",
            b"{\"id\":1,",
            b"[1,2",
            b"42",
            b"\"text\"",
            b"{\"id\":1}",
            b"{\"id\":1,\"method\":5}",
            b"\xff\xfe",
        ] {
            assert!(
                Message::parse(frame).is_err(),
                "{}",
                String::from_utf8_lossy(frame)
            );
        }
    }

    #[test]
    fn ids_match_across_spellings() {
        assert_eq!(id_key(b"1"), id_key(b" 1 "));
        assert_ne!(id_key(b"1"), id_key(b"\"1\""));
        assert_eq!(id_key(b"null"), None);
        assert_eq!(id_key(b"{}"), None);
    }

    #[test]
    fn built_responses_parse_back() {
        let frame = error_response(b"\"q\"", code::UPSTREAM_GONE, "upstream \"x\" exited");
        let message = Message::parse(&frame).unwrap();
        assert_eq!(message.kind, Kind::ErrorResponse);
        let error: serde_json::Value =
            serde_json::from_slice(&frame[message.error.unwrap()]).unwrap();
        assert_eq!(error["code"], -32000);
        assert_eq!(error["message"], "upstream \"x\" exited");
        let frame = response(b"3", br#"{"tools":[]}"#);
        assert_eq!(Message::parse(&frame).unwrap().kind, Kind::Response);
    }
}
