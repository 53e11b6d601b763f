//! The call protocol (`specs/operations.md`, "Call protocol"): five events, a caller's
//! pending-request map ([`Caller`]: call with a deadline, subscribe with an idle timeout,
//! abort), and a call handler ([`Worker`]) that runs the registry and alone publishes the
//! answers. Transports move the events: [`in_process`] within a process, and NATS
//! ([`nats_caller`], [`serve_nats`]) between processes and machines.
//!
//! ```text
//! Caller ──call.requested──► Worker ──execute/subscribe──► Registry
//!        ◄──call.responded── (per envelope) ── call.completed (subscriptions) ── call.error
//!        ──call.aborted────► (deadline, idle timeout, dropped) → the handler is stopped
//! ```

mod caller;
mod events;
mod ids;
mod memory;
mod nats;
mod worker;

pub use caller::{CallOptions, Caller, Outbound, WeakCaller};
pub use events::{CallFailed, CallRequested, CallResponded, Event, EventError, RequestRef};
pub use ids::next_request_id;
pub use memory::in_process;
pub use nats::{
    CONNECT_TIMEOUT, DEFAULT_PREFIX, EVENT_HEADER, NatsError, connect, nats_caller, serve_nats,
    serve_nats_shaped,
};
pub use worker::{Shaper, Worker};
