//! Request ids unique across processes and machines: 128 random bits (the OS's generator),
//! as 32 hex digits. Callers on many machines share one NATS subject space, so a counter or
//! a process id alone would collide.

/// A fresh request id.
///
/// ```
/// let (a, b) = (envelope_ops::protocol::next_request_id(), envelope_ops::protocol::next_request_id());
/// assert_eq!(a.len(), 32);
/// assert_ne!(a, b);
/// ```
pub fn next_request_id() -> String {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).expect("the OS random generator is available");
    let mut id = String::with_capacity(32);
    for b in bytes {
        id.push_str(&format!("{b:02x}"));
    }
    id
}
