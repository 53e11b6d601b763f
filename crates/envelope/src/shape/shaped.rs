//! What a shaping run gives: the output and what was done to make it (the results of
//! [`Pipeline`](super::Pipeline) and of the paths it chooses).

use super::offload::Offloaded;
use super::redact::Redaction;
use crate::formats::FormatId;
use crate::model::LossReport;

/// The result of a [`Pipeline`](super::Pipeline) run.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Shaped {
    /// The encoded output: one document in [`format`](Shaped::format), exactly as its
    /// encoder writes it.
    pub bytes: Vec<u8>,
    /// The format of `bytes`: the [output format](super::Pipeline::output_format), else the input's.
    pub format: FormatId,
    /// What the output format could not hold of the (shaped) envelope.
    pub losses: LossReport,
    /// What redaction masked (rule and place, never the secret), in document order; empty
    /// without [`Pipeline::redact`](super::Pipeline::redact).
    pub redactions: Vec<Redaction>,
    /// Every artifact written to the store during the run, in order.
    pub artifacts: Vec<Artifact>,
    /// What the capture check and the offload did with the payload:
    /// [`Offloaded::TooLarge`] over the capture limit (with or without a store),
    /// [`Offloaded::Stored`] when offloaded, else [`Offloaded::Inline`].
    pub offloaded: Offloaded,
    /// Whether the input was read for the limit: array items no cut can keep were sized,
    /// never built. The bytes are the same either way.
    pub skimmed: bool,
}

/// An artifact a [`Pipeline`](super::Pipeline) run wrote through its [`ArtifactSink`](super::ArtifactSink).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Artifact {
    /// The reference the sink returned (`sha256:<hex>` for a content-addressed store).
    pub digest: String,
    /// The length of the stored bytes.
    pub size_bytes: usize,
    /// The media type the bytes were stored with (`application/json`, `text/plain`, …).
    pub kind: String,
}
