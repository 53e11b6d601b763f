//! Stages that shape an envelope's output: secrets redaction and the hard byte budget.

pub mod budget;
pub mod cut;
pub mod redact;

pub use budget::{Fitted, fit};
