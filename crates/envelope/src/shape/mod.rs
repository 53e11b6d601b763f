//! Stages that shape an envelope's output, in this order: secrets redaction, the capture
//! limit, offload of large payloads to a store, the hard byte budget.
//!
//! [`Pipeline`] runs them: it is the one way to shape a document or an envelope, and what
//! the `envelope shape` command, the demo and the proxy call. The stages stay available for
//! benchmarks and tests; callers should not wire them by hand.

mod blocks_redacted;
pub(crate) mod bounded;
pub mod budget;
pub mod cut;
mod envelope_block;
pub(crate) mod error_text;
mod follow;
pub mod kept;
pub(crate) mod meta_apart;
pub mod offload;
pub(crate) mod passthrough;
mod payload_redacted;
pub mod pipeline;
pub mod redact;
mod shaped;
mod spliced;
mod text_offload;
mod text_redacted;
pub(crate) mod text_result;

pub use crate::error::SinkError;
pub use budget::{Budget, Carried, Fitted, Notice, TokenLimit, fit, fit_within};
pub use offload::{ArtifactSink, ArtifactWriter, OffloadOptions, Offloaded};
pub use pipeline::Pipeline;
pub use redact::Redaction;
pub use shaped::{Artifact, Shaped};
pub use spliced::Spliced;
