//! protocol-v1: `{version, status, command, data, meta, error}`, closed objects except
//! `data` (free) and `error.details` (free). Borrowed, so the stream validator can
//! deserialize a line without copying its strings.

use std::borrow::Cow;

use schemars::JsonSchema;
use serde::Deserialize;
use serde::de::IgnoredAny;

/// A protocol-v1 envelope (one JSON document, or one line of an NDJSON stream).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "protocol-v1 envelope")]
pub struct Envelope<'a> {
    /// Protocol version: always 1.
    #[schemars(range(min = 1, max = 1))]
    pub version: i64,
    pub status: Status,
    /// `<group>/<name>`, e.g. `fs/ls`.
    #[serde(borrow)]
    pub command: Cow<'a, str>,
    /// The result: any JSON value; `{summary, artifact}` when the result was offloaded.
    #[serde(default, borrow)]
    #[schemars(with = "Option<serde_json::Value>")]
    pub data: Option<Data<'a>>,
    #[serde(borrow)]
    pub meta: Meta<'a>,
    /// `{}` or null on ok envelopes; code and message on error envelopes.
    #[serde(default, borrow)]
    pub error: Option<ErrorInfo<'a>>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Ok,
    Error,
    /// Only inside NDJSON progress streams.
    Progress,
}

/// The parts of `data` the rules read (the schema says `data` is any JSON value).
#[derive(Debug, Deserialize)]
pub struct Data<'a> {
    /// Progress percentage, 0-100.
    #[serde(default)]
    pub pct: Option<f64>,
    #[serde(default, borrow)]
    pub artifact: Option<Cow<'a, str>>,
    #[serde(default)]
    pub summary: Option<IgnoredAny>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Meta<'a> {
    /// RFC 3339, UTC, written with `Z`.
    #[serde(borrow)]
    pub ts: Cow<'a, str>,
    #[serde(default)]
    #[schemars(range(min = 0))]
    pub duration_ms: Option<i64>,
    #[serde(default, borrow)]
    pub source: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    pub runner: Option<Cow<'a, str>>,
    /// Progress sequence number: 0, 1, 2, … within a stream.
    #[serde(default)]
    #[schemars(range(min = 0))]
    pub seq: Option<i64>,
    /// Marks the last progress event.
    #[serde(default, rename = "final")]
    pub is_final: Option<bool>,
    /// `sha256:<64 hex>`, equal to `data.artifact`.
    #[serde(default, borrow)]
    #[schemars(regex(pattern = r"^sha256:[0-9a-f]{64}$"))]
    pub cas_digest: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    pub memory: Option<Memory<'a>>,
    #[serde(default, borrow)]
    pub job_id: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    pub skill_version: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    pub workspace: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    pub cache_key: Option<Cow<'a, str>>,
    #[serde(default)]
    pub partial: Option<bool>,
    #[serde(default, borrow)]
    pub profiles: Option<Vec<Cow<'a, str>>>,
    #[serde(default, borrow)]
    pub agent_id: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    pub mailbox_id: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    pub correlation_id: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    pub parent_job_id: Option<Cow<'a, str>>,
    #[serde(default)]
    pub quota_remaining: Option<Quota>,
    /// Defined by the seed document (the shipped Go type forgot it).
    #[serde(default, borrow)]
    pub trace_id: Option<Cow<'a, str>>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Memory<'a> {
    #[serde(default, borrow)]
    pub name: Option<Cow<'a, str>>,
    #[serde(default, borrow, rename = "type")]
    pub kind: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    pub workspace: Option<Cow<'a, str>>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Quota {
    #[serde(default)]
    pub cpu_ms: Option<i64>,
    #[serde(default)]
    pub memory_mb: Option<i64>,
    #[serde(default)]
    pub network_mb: Option<i64>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ErrorInfo<'a> {
    /// From the error catalogue, e.g. `EARG`.
    #[serde(default, borrow)]
    pub code: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    pub message: Option<Cow<'a, str>>,
    /// Free-form; retry transparency uses `attempts`, `backoff`, `retry_after`.
    #[serde(default)]
    #[schemars(with = "Option<serde_json::Value>")]
    pub details: Option<IgnoredAny>,
}
