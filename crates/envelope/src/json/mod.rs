//! JSON reading and the dialect-aware writer.

pub mod keys;
pub mod number;
pub mod parse;
pub mod pointer;
pub mod size;
pub mod skim;
pub mod writer;

pub use parse::{from_slice, from_str};
pub use writer::{Dialect, JsonWriter, to_string, to_vec};
