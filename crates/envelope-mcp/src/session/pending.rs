//! The requests in flight from the client to the upstream: what each asked (to shape its
//! answer), and when it times out.

use std::collections::{BTreeSet, HashMap};
use std::time::Instant;

/// One request the upstream has not answered yet.
#[derive(Debug, Clone)]
pub struct Request {
    /// The id as the client wrote it (raw JSON), for answering it ourselves.
    pub raw_id: Vec<u8>,
    /// The method.
    pub method: String,
    /// For `tools/call`: the tool's name.
    pub tool: Option<String>,
    /// For `tools/call` when there is a catalog: the call's `arguments` as sent (their digest
    /// goes in the catalog when the result is stored).
    pub arguments: Option<Vec<u8>>,
    /// The revision the request's `_meta` names (2026-07-28 has no `initialize`).
    pub revision: Option<String>,
    /// When the client's request arrived (the latency `/metrics` reports).
    pub started: Instant,
    /// When the proxy answers for the upstream, if it has not answered by then.
    pub deadline: Option<Instant>,
    /// Sent by the proxy itself (the `initialize` replayed after a restart): its answer is
    /// not the client's.
    pub internal: bool,
    /// Where the answer goes: the client, or the collector of the batch the request came
    /// in (`session::batch`).
    pub reply: crate::outbound::Outbound,
}

/// The requests in flight, by id key ([`id_key`](crate::message::id_key)).
#[derive(Debug, Default)]
pub struct Pending {
    requests: HashMap<String, Request>,
    /// Deadlines in order, to find the next one without a scan.
    deadlines: BTreeSet<(Instant, String)>,
}

impl Pending {
    /// Records a request; a second request with the id of one in flight replaces it (the
    /// client broke the uniqueness rule; the first answer goes to the second request).
    pub fn insert(&mut self, key: String, request: Request) {
        self.remove(&key);
        if let Some(deadline) = request.deadline {
            self.deadlines.insert((deadline, key.clone()));
        }
        self.requests.insert(key, request);
    }

    /// Takes the request with id `key` out, if it is in flight.
    pub fn remove(&mut self, key: &str) -> Option<Request> {
        let request = self.requests.remove(key)?;
        if let Some(deadline) = request.deadline {
            self.deadlines.remove(&(deadline, key.to_string()));
        }
        Some(request)
    }

    /// The earliest deadline.
    pub fn next_deadline(&self) -> Option<Instant> {
        self.deadlines.first().map(|(at, _)| *at)
    }

    /// Takes out every request whose deadline is at or before `now`.
    pub fn expired(&mut self, now: Instant) -> Vec<(String, Request)> {
        let mut out = Vec::new();
        while let Some((at, key)) = self.deadlines.first().cloned() {
            if at > now {
                break;
            }
            if let Some(request) = self.remove(&key) {
                out.push((key, request));
            }
        }
        out
    }

    /// Takes out every request.
    pub fn drain(&mut self) -> Vec<(String, Request)> {
        self.deadlines.clear();
        self.requests.drain().collect()
    }

    /// How many requests are in flight.
    pub fn len(&self) -> usize {
        self.requests.len()
    }

    /// Whether nothing is in flight.
    pub fn is_empty(&self) -> bool {
        self.requests.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn request(deadline: Option<Instant>) -> Request {
        Request {
            arguments: None,
            started: Instant::now(),
            raw_id: b"1".to_vec(),
            method: "tools/call".into(),
            tool: Some("echo".into()),
            revision: None,
            deadline,
            internal: false,
            reply: crate::outbound::Outbound::new(tokio::sync::mpsc::channel(1).0, true),
        }
    }

    #[test]
    fn deadlines_expire_in_order_and_answered_ones_do_not() {
        let now = Instant::now();
        let mut pending = Pending::default();
        pending.insert("1".into(), request(Some(now + Duration::from_secs(2))));
        pending.insert("2".into(), request(Some(now + Duration::from_secs(1))));
        pending.insert("3".into(), request(None));
        pending.insert("4".into(), request(Some(now + Duration::from_secs(1))));
        assert_eq!(pending.next_deadline(), Some(now + Duration::from_secs(1)));
        assert!(pending.remove("4").is_some());
        let expired = pending.expired(now + Duration::from_secs(1));
        let keys: Vec<&str> = expired.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["2"]);
        assert_eq!(pending.len(), 2);
        assert_eq!(pending.next_deadline(), Some(now + Duration::from_secs(2)));
        assert!(pending.remove("2").is_none());
        assert_eq!(pending.drain().len(), 2);
        assert!(pending.is_empty() && pending.next_deadline().is_none());
    }

    #[test]
    fn a_reused_id_replaces_the_old_deadline() {
        let now = Instant::now();
        let mut pending = Pending::default();
        pending.insert("1".into(), request(Some(now)));
        pending.insert("1".into(), request(None));
        assert!(pending.expired(now).is_empty());
        assert_eq!(pending.len(), 1);
    }
}
