//! Stages that shape an envelope's output, in this order: secrets redaction, offload of
//! large payloads to a store, the hard byte budget.

pub mod bounded;
pub mod budget;
pub mod cut;
pub mod offload;
pub mod redact;

pub use budget::{Fitted, fit};
