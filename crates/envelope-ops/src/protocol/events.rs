//! The five events of the call protocol, with the field names of the wire contract
//! (`specs/operations.md`, "Call protocol"): the body of each is exactly its fields, its
//! name travels beside it (a NATS header, an enum tag in process).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::context::Identity;
use crate::error::CallError;

/// `call.requested`: run `operationId` on `input`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallRequested {
    /// Unique across processes ([`super::ids::next_request_id`]).
    pub request_id: String,
    /// The operation, `namespace.name`.
    pub operation_id: String,
    /// Its input.
    pub input: Value,
    /// The request on whose behalf this one is made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_request_id: Option<String>,
    /// When the caller stops waiting, in Unix milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline: Option<u64>,
    /// For a subscription: the most milliseconds between two of its events.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_timeout: Option<u64>,
    /// The caller.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identity: Option<Identity>,
    /// Free metadata for the handler.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
}

/// `call.responded`: one envelope (a subscription responds many times).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallResponded {
    /// The request answered.
    pub request_id: String,
    /// Always an operations envelope (`{data, meta}`).
    pub output: Value,
}

/// `call.completed` (a subscription ended; for a plain call: no response will come) and
/// `call.aborted` (the caller gave up) carry only the request id.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RequestRef {
    /// The request.
    pub request_id: String,
}

/// `call.error`: the request failed; `{requestId, code, message, details?}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallFailed {
    /// The request that failed.
    pub request_id: String,
    /// The error's code (`codes`, or one the operation declares).
    pub code: String,
    /// What went wrong, for people.
    pub message: String,
    /// Machine-readable particulars.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
}

impl CallFailed {
    /// The event of `error` for `request_id`.
    pub fn new(request_id: &str, error: CallError) -> Self {
        CallFailed {
            request_id: request_id.to_owned(),
            code: error.code,
            message: error.message,
            details: error.details,
        }
    }

    /// The CallError it carries.
    pub fn into_error(self) -> CallError {
        CallError {
            code: self.code,
            message: self.message,
            details: self.details,
        }
    }
}

/// One event of the protocol.
#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    /// `call.requested`.
    Requested(CallRequested),
    /// `call.responded`.
    Responded(CallResponded),
    /// `call.completed`.
    Completed(RequestRef),
    /// `call.aborted`.
    Aborted(RequestRef),
    /// `call.error`.
    Error(CallFailed),
}

/// Why a body could not be read as an event.
#[derive(Debug, thiserror::Error)]
pub enum EventError {
    /// The name is none of the five.
    #[error(
        "unknown event {0:?} (expected call.requested, call.responded, call.completed, call.aborted or call.error)"
    )]
    UnknownName(String),
    /// The body is not that event's fields.
    #[error("the body of {name} is not valid: {source}")]
    Body {
        /// The event's name.
        name: &'static str,
        /// What serde said.
        source: serde_json::Error,
    },
    /// `call.responded` with an output that is not an envelope.
    #[error("call.responded carries an output that is not an operations envelope ({{data, meta}})")]
    NotAnEnvelope,
}

impl Event {
    /// Its name on the wire: `call.requested`, `call.responded`, …
    pub fn name(&self) -> &'static str {
        match self {
            Event::Requested(_) => "call.requested",
            Event::Responded(_) => "call.responded",
            Event::Completed(_) => "call.completed",
            Event::Aborted(_) => "call.aborted",
            Event::Error(_) => "call.error",
        }
    }

    /// The request it is about.
    pub fn request_id(&self) -> &str {
        match self {
            Event::Requested(e) => &e.request_id,
            Event::Responded(e) => &e.request_id,
            Event::Completed(e) | Event::Aborted(e) => &e.request_id,
            Event::Error(e) => &e.request_id,
        }
    }

    /// Its body: exactly its fields, as compact JSON.
    pub fn body(&self) -> Vec<u8> {
        let body = match self {
            Event::Requested(e) => serde_json::to_vec(e),
            Event::Responded(e) => serde_json::to_vec(e),
            Event::Completed(e) | Event::Aborted(e) => serde_json::to_vec(e),
            Event::Error(e) => serde_json::to_vec(e),
        };
        body.expect("events serialise")
    }

    /// The event named `name` with `body`. A `call.responded` whose output is not an
    /// envelope is refused (the protocol's rule: respond carries envelopes only).
    ///
    /// ```
    /// use envelope_ops::protocol::Event;
    ///
    /// let e = Event::from_parts("call.aborted", br#"{"requestId":"r1"}"#).unwrap();
    /// assert_eq!((e.name(), e.request_id()), ("call.aborted", "r1"));
    /// assert_eq!(e.body(), br#"{"requestId":"r1"}"#);
    /// assert!(Event::from_parts("call.responded", br#"{"requestId":"r1","output":3}"#).is_err());
    /// ```
    pub fn from_parts(name: &str, body: &[u8]) -> Result<Event, EventError> {
        fn read<'a, T: Deserialize<'a>>(
            name: &'static str,
            body: &'a [u8],
        ) -> Result<T, EventError> {
            serde_json::from_slice(body).map_err(|source| EventError::Body { name, source })
        }
        Ok(match name {
            "call.requested" => Event::Requested(read("call.requested", body)?),
            "call.responded" => {
                let responded: CallResponded = read("call.responded", body)?;
                if !crate::wrap::is_envelope(&responded.output) {
                    return Err(EventError::NotAnEnvelope);
                }
                Event::Responded(responded)
            }
            "call.completed" => Event::Completed(read("call.completed", body)?),
            "call.aborted" => Event::Aborted(read("call.aborted", body)?),
            "call.error" => Event::Error(read("call.error", body)?),
            other => return Err(EventError::UnknownName(other.to_owned())),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Each event against its literal wire form, both ways.
    #[test]
    fn the_wire_forms_are_exactly_the_fields() {
        let cases = [
            (
                "call.requested",
                json!({"requestId": "r1", "operationId": "git.log", "input": {"n": 3},
                       "parentRequestId": "r0", "deadline": 1700000000000u64, "idleTimeout": 500,
                       "identity": {"id": "ada", "scopes": ["repo:read"]}, "metadata": {"trace": "t"}}),
            ),
            (
                "call.requested",
                json!({"requestId": "r2", "operationId": "a.b", "input": null}),
            ),
            (
                "call.responded",
                json!({"requestId": "r1", "output": {"data": 1, "meta": {"source": "local", "operationId": "a.b", "timestamp": 1}}}),
            ),
            ("call.completed", json!({"requestId": "r1"})),
            ("call.aborted", json!({"requestId": "r1"})),
            (
                "call.error",
                json!({"requestId": "r1", "code": "TIMEOUT", "message": "late", "details": {"deadline": 5}}),
            ),
            (
                "call.error",
                json!({"requestId": "r1", "code": "X", "message": "m"}),
            ),
        ];
        for (name, wire) in cases {
            let body = serde_json::to_vec(&wire).unwrap();
            let event = Event::from_parts(name, &body).unwrap();
            assert_eq!(event.name(), name);
            assert_eq!(event.request_id(), wire["requestId"]);
            let back: Value = serde_json::from_slice(&event.body()).unwrap();
            assert_eq!(back, wire, "{name}");
        }
    }

    #[test]
    fn bad_bodies_are_refused_with_the_reason() {
        let e = Event::from_parts("call.finished", b"{}").unwrap_err();
        assert!(e.to_string().contains("call.finished"), "{e}");
        let e = Event::from_parts("call.requested", br#"{"requestId":"r"}"#).unwrap_err();
        assert!(e.to_string().contains("operationId"), "{e}");
        let e = Event::from_parts("call.error", b"not json").unwrap_err();
        assert!(e.to_string().starts_with("the body of call.error"), "{e}");
        let e = Event::from_parts(
            "call.responded",
            br#"{"requestId":"r","output":{"data":1}}"#,
        )
        .unwrap_err();
        assert!(matches!(e, EventError::NotAnEnvelope));
    }
}
