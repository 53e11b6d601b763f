//! Stages that shape an envelope's output: the hard byte budget.

pub mod budget;
pub mod cut;

pub use budget::{Fitted, fit};
