//! What both Streamable HTTP sides need: a quick look at a frame (kind, id, progress token)
//! without building the whole message, JSON-RPC error frames, and Server-Sent Events in both
//! directions.

use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::Value;

use super::Frame;

/// The header that names an MCP session.
pub const SESSION_HEADER: &str = "mcp-session-id";
/// The header that names the negotiated protocol revision on every request after `initialize`.
pub const VERSION_HEADER: &str = "mcp-protocol-version";

/// What one JSON-RPC message is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `method` and `id`: answered by a response with the same id.
    Request,
    /// `method`, no `id`.
    Notification,
    /// `result` or `error`, with the id of the request it answers.
    Response,
}

/// The few members of a frame the transports route by.
#[derive(Debug, Clone)]
pub struct Peek {
    /// Request, notification or response.
    pub kind: Kind,
    /// The id (`None` for notifications, and for error responses with `"id": null`).
    pub id: Option<Value>,
    /// The method of a request or notification.
    pub method: Option<String>,
    /// A request's `params._meta.progressToken`, or a progress notification's
    /// `params.progressToken`: what ties progress to the request it reports on.
    pub progress_token: Option<Value>,
    /// A cancellation's `params.requestId`: the request it gives up on.
    pub cancelled: Option<Value>,
}

#[derive(Deserialize)]
struct RawPeek {
    id: Option<Value>,
    method: Option<String>,
    // Only presence matters: IgnoredAny skips a large result without building it.
    result: Option<IgnoredAny>,
    error: Option<IgnoredAny>,
    params: Option<RawParams>,
}

#[derive(Deserialize)]
struct RawParams {
    #[serde(rename = "progressToken")]
    progress_token: Option<Value>,
    #[serde(rename = "_meta")]
    meta: Option<RawMeta>,
    #[serde(rename = "requestId")]
    request_id: Option<Value>,
}

#[derive(Deserialize)]
struct RawMeta {
    #[serde(rename = "progressToken")]
    progress_token: Option<Value>,
}

/// Why a frame is not a JSON-RPC message the transports can route.
#[derive(Debug, thiserror::Error)]
pub enum PeekError {
    /// Not JSON, or not a JSON object.
    #[error("not a JSON-RPC message: {0}")]
    Json(#[from] serde_json::Error),
    /// An object with neither `method` nor `result`/`error`.
    #[error("not a JSON-RPC message: neither `method` nor `result`/`error`")]
    Shape,
}

/// Reads the routing members of one frame.
///
/// # Errors
///
/// When the frame is not a JSON object shaped like a request, notification or response.
pub fn peek(frame: &[u8]) -> Result<Peek, PeekError> {
    let raw: RawPeek = serde_json::from_slice(frame)?;
    let kind = match (&raw.method, &raw.id) {
        (Some(_), Some(_)) => Kind::Request,
        (Some(_), None) => Kind::Notification,
        (None, _) if raw.result.is_some() || raw.error.is_some() => Kind::Response,
        (None, _) => return Err(PeekError::Shape),
    };
    let (progress_token, request_id) = match raw.params {
        Some(params) => (
            params
                .progress_token
                .or_else(|| params.meta.and_then(|meta| meta.progress_token)),
            params.request_id,
        ),
        None => (None, None),
    };
    let cancelled = request_id.filter(|_| raw.method.as_deref() == Some("notifications/cancelled"));
    Ok(Peek {
        kind,
        id: raw.id,
        method: raw.method,
        progress_token,
        cancelled,
    })
}

/// A map key for a JSON-RPC id (or progress token): its compact JSON, so the integer `1`
/// and the string `"1"` stay distinct.
pub fn id_key(id: &Value) -> String {
    id.to_string()
}

/// A JSON-RPC error response to the request `id`.
pub fn error_frame(id: &Value, code: i64, message: &str) -> Frame {
    serde_json::to_vec(&serde_json::json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": code, "message": message},
    }))
    .expect("a JSON value always serializes")
}

/// JSON-RPC: internal error (what the transports answer when the HTTP side fails).
pub const INTERNAL_ERROR: i64 = -32603;
/// JSON-RPC: invalid request.
pub const INVALID_REQUEST: i64 = -32600;
/// JSON-RPC: parse error.
pub const PARSE_ERROR: i64 = -32700;

/// One frame as a Server-Sent Event (`event: message`). A frame with line ends in it (pretty
/// JSON from some peer) becomes several `data:` lines, which the reader joins back with `\n`.
pub fn sse_event(frame: &[u8]) -> Vec<u8> {
    let mut event = Vec::with_capacity(frame.len() + 24);
    event.extend_from_slice(b"event: message\n");
    for line in frame.split(|&b| b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        event.extend_from_slice(b"data: ");
        event.extend_from_slice(line);
        event.push(b'\n');
    }
    event.push(b'\n');
    event
}

/// Reads a Server-Sent Events stream fed in arbitrary chunks and yields the data of each
/// `message` event (the default type). Comments, `id:` and `retry:` lines, events of other
/// types and events without data (the priming events of resumable servers) are skipped.
#[derive(Debug, Default)]
pub struct SseReader {
    line: Vec<u8>,
    data: Vec<u8>,
    has_data: bool,
    event_type: Vec<u8>,
}

impl SseReader {
    /// Feeds one chunk; returns the messages it completed, in order.
    pub fn feed(&mut self, chunk: &[u8]) -> Vec<Frame> {
        let mut done = Vec::new();
        for &byte in chunk {
            if byte == b'\n' {
                let mut line = std::mem::take(&mut self.line);
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                if let Some(frame) = self.line_done(&line) {
                    done.push(frame);
                }
            } else {
                self.line.push(byte);
            }
        }
        done
    }

    fn line_done(&mut self, line: &[u8]) -> Option<Frame> {
        if line.is_empty() {
            let is_message = self.event_type.is_empty() || self.event_type == b"message";
            let frame = std::mem::take(&mut self.data);
            let had_data = std::mem::replace(&mut self.has_data, false);
            self.event_type.clear();
            return (is_message && had_data && !frame.is_empty()).then_some(frame);
        }
        let (field, value) = match line.iter().position(|&b| b == b':') {
            Some(0) => return None, // a comment
            Some(at) => {
                let value = &line[at + 1..];
                (&line[..at], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &b""[..]),
        };
        match field {
            b"data" => {
                if self.has_data {
                    self.data.push(b'\n');
                }
                self.data.extend_from_slice(value);
                self.has_data = true;
            }
            b"event" => self.event_type = value.to_vec(),
            _ => {}
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peek_tells_kinds_apart() {
        let request = peek(br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x","_meta":{"progressToken":"p1"}}}"#).unwrap();
        assert_eq!(request.kind, Kind::Request);
        assert_eq!(request.id, Some(Value::from(7)));
        assert_eq!(request.method.as_deref(), Some("tools/call"));
        assert_eq!(request.progress_token, Some(Value::from("p1")));

        let progress = peek(br#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":3,"progress":1}}"#).unwrap();
        assert_eq!(progress.kind, Kind::Notification);
        assert_eq!(progress.progress_token, Some(Value::from(3)));
        assert_eq!(progress.cancelled, None);

        let cancel = peek(
            br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"r9"}}"#,
        )
        .unwrap();
        assert_eq!(cancel.cancelled, Some(Value::from("r9")));

        let response = peek(br#"{"jsonrpc":"2.0","id":"a","result":{"big":[1,2,3]}}"#).unwrap();
        assert_eq!(response.kind, Kind::Response);
        assert_eq!(response.id, Some(Value::from("a")));

        let error =
            peek(br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}"#).unwrap();
        assert_eq!(error.kind, Kind::Response);
        assert_eq!(error.id, None);
    }

    #[test]
    fn peek_refuses_what_is_not_a_message() {
        assert!(matches!(peek(b"not json"), Err(PeekError::Json(_))));
        assert!(matches!(peek(b"[1,2]"), Err(PeekError::Json(_))));
        assert!(matches!(peek(br#"{"id":1}"#), Err(PeekError::Shape)));
    }

    #[test]
    fn ids_of_different_types_are_different_keys() {
        assert_ne!(id_key(&Value::from(1)), id_key(&Value::from("1")));
    }

    #[test]
    fn sse_round_trip_in_odd_chunks() {
        let frames: [&[u8]; 3] = [
            br#"{"a":1}"#,
            b"{\n  \"pretty\": true\r\n}",
            br#"{"b":"x:y"}"#,
        ];
        let mut stream = b": a comment\nid: 1\ndata:\n\n".to_vec(); // a priming event: skipped
        stream.extend_from_slice(b"event: other\ndata: {\"skip\":1}\n\n");
        for frame in frames {
            stream.extend_from_slice(&sse_event(frame));
        }
        for chunk_size in [1, 3, 7, stream.len()] {
            let mut reader = SseReader::default();
            let got: Vec<Frame> = stream
                .chunks(chunk_size)
                .flat_map(|chunk| reader.feed(chunk))
                .collect();
            assert_eq!(got.len(), 3, "chunk size {chunk_size}");
            assert_eq!(got[0], frames[0]);
            assert_eq!(got[1], b"{\n  \"pretty\": true\n}");
            assert_eq!(got[2], frames[2]);
        }
    }
}
