//! protocol-v1: `{version, status, command, data, meta, error}`, closed objects except
//! `data` (free) and `error.details` (free). Borrowed, so the stream validator can
//! deserialize a line without copying its strings.

use std::borrow::Cow;

use std::fmt;
use std::marker::PhantomData;

use schemars::JsonSchema;
use serde::Deserialize;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

use crate::json::keys::{Key, KeySet};

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
    #[serde(default)]
    pub error: Option<ErrorInfo>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Ok,
    Error,
    /// Only inside NDJSON progress streams.
    Progress,
}

/// The parts of `data` the rules read (the schema says `data` is any JSON value). Reading
/// it fails on a duplicate key at any depth, like the derived readers of the other types:
/// a document that reads has no duplicate key anywhere.
#[derive(Debug, Default)]
pub struct Data<'a> {
    /// Progress percentage, 0-100.
    pub pct: Option<f64>,
    pub artifact: Option<Cow<'a, str>>,
    /// Whether there is a `summary`.
    pub summary: bool,
}

impl<'de: 'a, 'a> Deserialize<'de> for Data<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(DataVisitor(PhantomData))
    }
}

struct DataVisitor<'a>(PhantomData<&'a ()>);

impl<'de: 'a, 'a> Visitor<'de> for DataVisitor<'a> {
    type Value = Data<'a>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Data<'a>, A::Error> {
        let mut data = Data::default();
        let mut seen = KeySet::default();
        while let Some(key) = map.next_key_seed(Key)? {
            if !seen.insert(key.clone()) {
                return Err(de::Error::custom(format_args!(
                    "duplicate key {key:?} in data"
                )));
            }
            match key.as_ref() {
                "pct" => data.pct = map.next_value()?,
                "artifact" => {
                    data.artifact = map.next_value::<Option<Borrowed<'a>>>()?.map(|b| b.0)
                }
                "summary" => {
                    map.next_value::<NoDuplicateKeys>()?;
                    data.summary = true;
                }
                _ => {
                    map.next_value::<NoDuplicateKeys>()?;
                }
            }
        }
        Ok(data)
    }
}

/// Any JSON value, read without building it; fails on a duplicate key at any depth.
#[derive(Debug)]
pub struct NoDuplicateKeys;

impl<'de> Deserialize<'de> for NoDuplicateKeys {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(NoDuplicateKeys)
    }
}

impl<'de> Visitor<'de> for NoDuplicateKeys {
    type Value = NoDuplicateKeys;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self, A::Error> {
        let mut seen = KeySet::default();
        while let Some(key) = map.next_key_seed(Key)? {
            if !seen.insert(key.clone()) {
                return Err(de::Error::custom(format_args!("duplicate key {key:?}")));
            }
            map.next_value::<NoDuplicateKeys>()?;
        }
        Ok(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self, A::Error> {
        while seq.next_element::<NoDuplicateKeys>()?.is_some() {}
        Ok(self)
    }

    fn visit_bool<E>(self, _: bool) -> Result<Self, E> {
        Ok(self)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Self, E> {
        Ok(self)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Self, E> {
        Ok(self)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Self, E> {
        Ok(self)
    }
    fn visit_str<E>(self, _: &str) -> Result<Self, E> {
        Ok(self)
    }
    fn visit_unit<E>(self) -> Result<Self, E> {
        Ok(self)
    }
}

/// A string whose value no rule of the fast path reads: its type is checked, its text is
/// not kept (the wire types stay small, and small types are fast to read).
#[derive(Debug)]
pub struct AnyString;

impl<'de> Deserialize<'de> for AnyString {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_str(AnyStringVisitor)
    }
}

struct AnyStringVisitor;

impl Visitor<'_> for AnyStringVisitor {
    type Value = AnyString;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string")
    }
    fn visit_str<E>(self, _: &str) -> Result<AnyString, E> {
        Ok(AnyString)
    }
}

impl JsonSchema for AnyString {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> Cow<'static, str> {
        "String".into()
    }
    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        String::json_schema(generator)
    }
}

/// A string, borrowed from the input when it has no escapes.
struct Borrowed<'a>(Cow<'a, str>);

impl<'de: 'a, 'a> Deserialize<'de> for Borrowed<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Borrowed(Key.deserialize(d)?))
    }
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
    #[serde(default)]
    pub runner: Option<AnyString>,
    /// Progress sequence number: 0, 1, 2, … within a stream.
    #[serde(default)]
    #[schemars(range(min = 0))]
    pub seq: Option<i64>,
    /// Marks the last progress event.
    #[serde(default, rename = "final")]
    pub is_final: Option<bool>,
    /// `sha256:<64 hex>`, equal to `data.artifact`.
    #[serde(default)]
    #[schemars(regex(pattern = crate::model::DIGEST_PATTERN))]
    pub cas_digest: Option<AnyString>,
    #[serde(default)]
    pub memory: Option<Memory>,
    #[serde(default)]
    pub job_id: Option<AnyString>,
    #[serde(default)]
    pub skill_version: Option<AnyString>,
    #[serde(default)]
    pub workspace: Option<AnyString>,
    #[serde(default)]
    pub cache_key: Option<AnyString>,
    #[serde(default)]
    pub partial: Option<bool>,
    #[serde(default)]
    pub profiles: Option<Vec<AnyString>>,
    #[serde(default)]
    pub agent_id: Option<AnyString>,
    #[serde(default)]
    pub mailbox_id: Option<AnyString>,
    #[serde(default)]
    pub correlation_id: Option<AnyString>,
    #[serde(default)]
    pub parent_job_id: Option<AnyString>,
    #[serde(default)]
    pub quota_remaining: Option<Quota>,
    /// Defined by the seed document (the shipped Go type forgot it).
    #[serde(default)]
    pub trace_id: Option<AnyString>,
    /// This tool's budget marker (what a hard byte budget cut): `truncated`, `totalBytes`,
    /// `tokenLimit`, `tokenizer`, `cuts`, `moreCuts`, `hint`.
    #[serde(default)]
    pub budget: Option<BudgetMarker>,
}

/// `meta.budget`, written by a hard byte budget.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct BudgetMarker {
    pub truncated: bool,
    #[schemars(range(min = 0))]
    pub total_bytes: u64,
    /// The token limit the cut fitted, and the tokenizer that counted (issue 30).
    #[serde(default)]
    #[schemars(range(min = 0))]
    pub token_limit: Option<u64>,
    #[serde(default)]
    pub tokenizer: Option<AnyString>,
    #[serde(default)]
    pub cuts: Option<Vec<BudgetCut>>,
    #[serde(default)]
    #[schemars(range(min = 0))]
    pub more_cuts: Option<u64>,
    #[serde(default)]
    pub hint: Option<AnyString>,
}

/// One cut of a [`BudgetMarker`].
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BudgetCut {
    pub pointer: AnyString,
    #[schemars(range(min = 0))]
    pub kept: u64,
    #[schemars(range(min = 0))]
    pub total: u64,
    pub unit: AnyString,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Memory {
    #[serde(default)]
    pub name: Option<AnyString>,
    #[serde(default, rename = "type")]
    pub kind: Option<AnyString>,
    #[serde(default)]
    pub workspace: Option<AnyString>,
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
pub struct ErrorInfo {
    /// From the error catalogue, e.g. `EARG`.
    #[serde(default)]
    pub code: Option<AnyString>,
    #[serde(default)]
    pub message: Option<AnyString>,
    /// Free-form; retry transparency uses `attempts`, `backoff`, `retry_after`.
    #[serde(default)]
    #[schemars(with = "Option<serde_json::Value>")]
    pub details: Option<NoDuplicateKeys>,
}
