//! `envelope`: one canonical model and byte-exact codecs for the response envelopes that
//! wrap AI tool results.
//!
//! ```text
//! bytes ──detect──► decode(format) ──► Envelope ──► encode(format) ──► bytes
//! ```
//!
//! The core is synchronous and does no I/O: callers hand it bytes.

#![warn(missing_docs)]

pub mod base64;
pub mod convert;
pub mod detect;
pub mod error;
pub mod formats;
pub mod json;
pub mod model;
pub mod shape;
pub mod time;
pub mod validate;

/// Token counts by the models' own tokenizers (crate `envelope-tokens`): what a
/// [token limit](shape::Pipeline::limit_tokens) counts with.
pub use envelope_tokens as tokens;

pub use detect::{Detection, detect, detect_value};
pub use error::{Error, Result};
pub use formats::{DecodeOptions, EncodeOptions, Encoded, decode, encode};
pub use model::{Category, EnvelopeError};
pub use model::{Envelope, Payload, Source, Status, Timestamp};
pub use model::{FormatId, Loss, LossReport};
