//! JSON-RPC batches (the 2025-03-26 revision only), relayed apart.
//!
//! A client's batch is split into its messages ([`split`]); each goes upstream as a single
//! message and is tracked like one (timeout, crash error, shaping, redaction). Their answers
//! go to the batch's [`collector`] instead of the client; once every request of the batch
//! is answered, the collector sends the answers to the client as one array. An upstream that
//! supports batches also takes single messages; one that never learned them (most, since
//! only one revision had them) still works.

use std::future::Future;

use serde_json::value::RawValue;
use tokio::sync::mpsc;

use crate::message::{self, code};
use crate::outbound::{Outbound, Ready};
use crate::transport::Frame;

/// The most messages a batch may hold; a larger one is answered with one error (JSON-RPC
/// -32600) instead of being relayed, so that one frame cannot hold the relay for long.
pub const MAX_BATCH: usize = 1024;

/// Why a whole batch is answered with one error instead of being relayed.
#[derive(Debug, PartialEq, Eq)]
pub enum BatchError {
    /// The array is empty: JSON-RPC answers a single Invalid Request.
    Empty,
    /// Not a JSON array of values (already checked by the caller; kept for safety).
    NotAnArray(String),
    /// More than [`MAX_BATCH`] messages.
    TooLarge(usize),
}

impl BatchError {
    /// The single error response the client gets for the batch.
    pub fn answer(&self) -> Frame {
        let text = match self {
            BatchError::Empty => "an empty batch is not a request".to_string(),
            BatchError::NotAnArray(e) => format!("the batch is not a JSON array: {e}"),
            BatchError::TooLarge(n) => format!(
                "a batch of {n} messages is over the limit of {MAX_BATCH}: send fewer at a time"
            ),
        };
        message::error_response(b"null", code::INVALID_REQUEST, &text)
    }
}

/// The batch's messages, each as its own frame (the exact bytes the client wrote).
///
/// # Errors
///
/// When the array is empty, not an array, or over [`MAX_BATCH`] messages.
pub fn split(frame: &[u8]) -> Result<Vec<Frame>, BatchError> {
    let elements: Vec<&RawValue> =
        serde_json::from_slice(frame).map_err(|e| BatchError::NotAnArray(e.to_string()))?;
    if elements.is_empty() {
        return Err(BatchError::Empty);
    }
    if elements.len() > MAX_BATCH {
        return Err(BatchError::TooLarge(elements.len()));
    }
    Ok(elements
        .into_iter()
        .map(|raw| raw.get().as_bytes().to_vec())
        .collect())
}

/// A sender for the answers of one batch, and the task that gathers them: when the last
/// sender is dropped (every request answered, timed out, failed or cancelled), the answers
/// gathered go to `to_client` as one array; none (a batch of notifications) sends nothing.
/// Each answer is masked as it is sent to the collector, so the array is sent as it is.
pub fn collector(to_client: Outbound) -> (Outbound, impl Future<Output = ()>) {
    let (reply, mut answers) = mpsc::channel::<Frame>(64);
    let reply = to_client.to(reply);
    let gather = async move {
        // Each answer was masked as it was sent here.
        let mut batch = Vec::new();
        while let Some(answer) = answers.recv().await {
            batch.push(Ready::received(answer));
        }
        if let Some(array) = Ready::batch(batch) {
            let _ = to_client.send_ready(array).await;
        }
    };
    (reply, gather)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_keeps_each_message_as_written() {
        let parts =
            split(br#"[ {"id":1,"method":"a"} ,{"method":"n", "params" : {"x":[1]}}, 5]"#).unwrap();
        let parts: Vec<&str> = parts
            .iter()
            .map(|p| std::str::from_utf8(p).unwrap())
            .collect();
        assert_eq!(
            parts,
            [
                r#"{"id":1,"method":"a"}"#,
                r#"{"method":"n", "params" : {"x":[1]}}"#,
                "5"
            ]
        );
        assert_eq!(split(b" [ ] "), Err(BatchError::Empty));
        assert!(matches!(split(b"[1,"), Err(BatchError::NotAnArray(_))));
        let answer: serde_json::Value =
            serde_json::from_slice(&BatchError::Empty.answer()).unwrap();
        assert_eq!(answer["error"]["code"], -32600);
    }

    #[tokio::test]
    async fn answers_go_out_as_one_array_once_every_sender_is_gone() {
        let (to_client, mut client) = mpsc::channel(4);
        let (reply, gather) = collector(Outbound::new(to_client, true));
        let gathering = tokio::spawn(gather);
        let second = reply.clone();
        assert!(reply.send(b"{\"id\":2}".to_vec()).await);
        drop(reply);
        assert!(client.try_recv().is_err(), "one sender is left");
        assert!(second.send(b"{\"id\":1}".to_vec()).await);
        drop(second);
        gathering.await.unwrap();
        assert_eq!(client.recv().await.unwrap(), b"[{\"id\":2},{\"id\":1}]");
        // Nothing to answer: nothing sent.
        let (to_client, mut client) = mpsc::channel(4);
        let (reply, gather) = collector(Outbound::new(to_client, true));
        drop(reply);
        gather.await;
        assert!(client.recv().await.is_none());
    }
}
