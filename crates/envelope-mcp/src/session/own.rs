//! Answers the proxy writes itself (`envelope_read`, artifact reads, the resource lists when
//! the upstream has no resources), with `resultType` where the request's revision has it.

use serde_json::{Value, json};

use super::pending::Request;
use crate::drill;
use crate::message;
use crate::outbound::Outbound;
use crate::revision::Revision;

/// Where the answer to a request goes: the client, or the collector of its batch (each
/// masks secrets in what it is sent).
pub type Reply = Outbound;

/// A request the proxy answers itself.
pub struct Own {
    /// The request's id, as the client wrote it.
    pub raw_id: Vec<u8>,
    /// Where the answer goes.
    pub reply: Reply,
    /// Whether results carry `resultType: "complete"` (the request's revision has it).
    pub result_type: bool,
}

impl Own {
    /// For a tracked request, with the session's revision when the request names none.
    pub fn of(request: &Request, session_revision: &Option<String>) -> Own {
        let revision = request.revision.as_ref().or(session_revision.as_ref());
        Own {
            raw_id: request.raw_id.clone(),
            reply: request.reply.clone(),
            result_type: revision
                .is_some_and(|r| Revision::from_protocol_version(r).has_result_type()),
        }
    }

    /// Answers with `result`.
    pub async fn answer(self, mut result: Value) {
        if self.result_type
            && let Some(object) = result.as_object_mut()
        {
            object
                .entry("resultType")
                .or_insert_with(|| json!("complete"));
        }
        let answer = message::response(&self.raw_id, result.to_string().as_bytes());
        let _ = self.reply.send(answer).await;
    }

    /// Answers with a JSON-RPC error.
    pub async fn error(self, code: i64, text: &str) {
        let _ = self
            .reply
            .send(message::error_response(&self.raw_id, code, text))
            .await;
    }
}

/// The proxy's own answer to a resource list: no resources; the artifact template.
pub fn own_resource_list(method: &str) -> Value {
    if method == "resources/templates/list" {
        json!({"resourceTemplates": [drill::resource_template()]})
    } else {
        json!({"resources": []})
    }
}
