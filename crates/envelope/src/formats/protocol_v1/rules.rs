//! protocol-v1 rules: the shipped validator's ten checks and the JSON types its Go decoder
//! enforces (compat), unknown fields (strict), the seed document's MUSTs (spec); and
//! [`go_view`], the document as Go's `json.Unmarshal` fills the shipped types (compat).

use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

use crate::formats::abridge::{Placeholder, is_payload_member};
use crate::formats::findings::{Context, Findings, Profile};
use crate::formats::protocol_v1::wire;
use crate::formats::protocol_v1::{MEMORY_FIELDS, META_FIELDS, QUOTA_FIELDS};
use crate::json::pointer;
use crate::model::error::CATALOG;
use crate::model::is_digest;

const TOP_FIELDS: [&str; 6] = ["version", "status", "command", "data", "meta", "error"];
const ERROR_FIELDS: [&str; 3] = ["code", "message", "details"];
/// Defined by the seed document, forgotten by the shipped Go type (`trace_id`), and this
/// tool's budget marker (`budget`: what a hard byte budget cut, written beside
/// `meta.partial`; docs/formats.md). Go skips both, so compat knows neither.
const SPEC_META_FIELDS: [&str; 2] = ["trace_id", "budget"];

/// The JSON type a field of the Go struct decodes from (`null` always decodes: zero value).
#[derive(Clone, Copy)]
enum Kind {
    String,
    /// A Go integer: an integer literal that fits 64 bits (`1.0` fails).
    Integer,
    Bool,
    Object,
    StringArray,
}

impl Kind {
    fn accepts(self, v: &Value) -> bool {
        match (self, v) {
            (_, Value::Null) => true,
            (Kind::String, Value::String(_)) => true,
            // Go's int and int64: an integer literal within 64 signed bits.
            (Kind::Integer, Value::Number(n)) => n.is_i64(),
            (Kind::Bool, Value::Bool(_)) => true,
            (Kind::Object, Value::Object(_)) => true,
            (Kind::StringArray, Value::Array(items)) => {
                items.iter().all(|i| i.is_string() || i.is_null())
            }
            _ => false,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Kind::String => "a string",
            Kind::Integer => "an integer",
            Kind::Bool => "a boolean",
            Kind::Object => "an object",
            Kind::StringArray => "an array of strings",
        }
    }
}

fn meta_kind(field: &str) -> Kind {
    match field {
        "duration_ms" | "seq" => Kind::Integer,
        "final" | "partial" => Kind::Bool,
        "memory" | "quota_remaining" | "budget" => Kind::Object,
        "profiles" => Kind::StringArray,
        _ => Kind::String,
    }
}

/// Checks the type of `obj[key]`; `true` when it is absent or has the right type.
fn typed(f: &mut Findings, obj: &Map<String, Value>, at: &str, key: &str, kind: Kind) -> bool {
    match obj.get(key) {
        Some(v) if !kind.accepts(v) => {
            f.report(
                "pv1.type",
                pointer::join(at, key),
                format!("must be {} (or null)", kind.name()),
            );
            false
        }
        _ => true,
    }
}

/// A string field's value; `""` when absent, null or of another type.
fn text<'v>(obj: Option<&'v Map<String, Value>>, key: &str) -> &'v str {
    obj.and_then(|o| o.get(key))
        .and_then(Value::as_str)
        .unwrap_or("")
}

fn blank(s: &str) -> bool {
    s.trim().is_empty()
}

/// The protocol-v1 rules on a parsed envelope; `context` says whether `progress` is
/// allowed.
pub(crate) fn check(value: &Value, f: &mut Findings, context: Context) {
    let Some(env) = value.as_object() else {
        f.report(
            "pv1.not-object",
            "",
            "a protocol-v1 envelope is a JSON object",
        );
        return;
    };
    // Go's decoder fills a field from a key in any case: compat reads the same way.
    if f.profile() == Profile::Compat && needs_go_folding(env) {
        check_shape(&go_folded(env), f, context);
    } else {
        check_shape(env, f, context);
    }
}

/// The objects of the Go types and the fields they know.
fn known_fields(at: &str) -> Option<&'static [&'static str]> {
    match at {
        "" => Some(&TOP_FIELDS),
        "meta" => Some(&META_FIELDS),
        "memory" => Some(&MEMORY_FIELDS),
        "quota_remaining" => Some(&QUOTA_FIELDS),
        "error" => Some(&ERROR_FIELDS[..2]),
        _ => None,
    }
}

/// Whether some key of a Go-typed object names a field in another case.
fn needs_go_folding(env: &Map<String, Value>) -> bool {
    fn differs(obj: &Map<String, Value>, at: &str) -> bool {
        let Some(known) = known_fields(at) else {
            return false;
        };
        obj.iter().any(
            |(k, v)| match known.iter().find(|f| f.eq_ignore_ascii_case(k)) {
                Some(field) if *field != k => true,
                Some(field) => v.as_object().is_some_and(|o| differs(o, field)),
                None => false,
            },
        )
    }
    differs(env, "")
}

/// `env` with keys renamed to the Go field they fill (exact or any case; a later key wins,
/// as in Go), in the objects Go decodes into types.
fn go_folded(env: &Map<String, Value>) -> Map<String, Value> {
    fn fold(obj: &Map<String, Value>, known: &[&str]) -> Map<String, Value> {
        let mut out = Map::with_capacity(obj.len());
        for (k, v) in obj {
            let name = known
                .iter()
                .find(|f| f.eq_ignore_ascii_case(k))
                .map_or(k.as_str(), |f| f);
            let v = match (known_fields(name), v) {
                (Some(inner), Value::Object(o)) if !name.is_empty() => {
                    Value::Object(fold(o, inner))
                }
                _ => v.clone(),
            };
            out.insert(name.to_string(), v);
        }
        out
    }
    fold(env, &TOP_FIELDS)
}

/// The rules, on an envelope whose keys name the Go fields.
fn check_shape(env: &Map<String, Value>, f: &mut Findings, context: Context) {
    check_types(env, f);
    check_unknown(env, f);

    let meta = env.get("meta").and_then(Value::as_object);
    let error = env.get("error").and_then(Value::as_object);
    let data = env.get("data").and_then(Value::as_object);

    match env.get("version") {
        Some(v) if v.as_i64() == Some(1) => {}
        Some(v) if !Kind::Integer.accepts(v) => {} // reported as pv1.type
        Some(v) => f.report("pv1.version", "/version", format!("must be 1, found {v}")),
        None => f.report("pv1.version", "/version", "missing (read as 0); must be 1"),
    }

    let command = text(Some(env), "command");
    if blank(command) {
        f.report("pv1.command", "/command", "missing or blank");
    } else if !is_command(command) {
        f.report(
            "pv1.command-pattern",
            "/command",
            format!("{command:?} is not <group>/<name> in lower-case letters, digits and -"),
        );
    }

    let status = text(Some(env), "status");
    let progress_allowed = context == Context::StreamLine;
    match status {
        "ok" | "error" => {}
        "progress" if progress_allowed => {}
        "progress" => f.report(
            "pv1.status",
            "/status",
            "progress is only valid inside an NDJSON stream",
        ),
        other => f.report(
            "pv1.status",
            "/status",
            format!("must be ok or error, found {other:?}"),
        ),
    }

    let code = text(error, "code");
    let message = text(error, "message");
    if status == "ok" {
        if !code.is_empty() || !message.is_empty() {
            f.report(
                "pv1.ok-with-error",
                "/error",
                "an ok envelope must not carry an error code or message",
            );
        }
        match env.get("error") {
            None | Some(Value::Null) => {}
            Some(Value::Object(o)) if o.is_empty() => {}
            Some(_) => f.report(
                "pv1.ok-error-object",
                "/error",
                "an ok envelope's error must be {} or null",
            ),
        }
    }
    if status == "error" {
        if code.is_empty() {
            f.report(
                "pv1.error-incomplete",
                "/error/code",
                "an error envelope needs error.code",
            );
        } else if !CATALOG.contains(&code) {
            f.report(
                "pv1.error-code",
                "/error/code",
                format!(
                    "{code:?} is not in the error catalogue ({})",
                    CATALOG.join(", ")
                ),
            );
        }
        if blank(message) {
            f.report(
                "pv1.error-incomplete",
                "/error/message",
                "an error envelope needs a non-blank error.message",
            );
        }
        check_status_code(data, f);
    }

    check_ts(text(meta, "ts"), f);
    check_duration(meta, f);
    check_artifact(data, meta, f);

    match text(meta, "source") {
        "cache" if blank(text(meta, "cache_key")) => f.report(
            "pv1.cache-key",
            "/meta/cache_key",
            "meta.source is cache: meta.cache_key must be non-blank",
        ),
        "memory" => {
            let memory = meta
                .and_then(|m| m.get("memory"))
                .and_then(Value::as_object);
            for key in ["name", "type"] {
                if blank(text(memory, key)) {
                    f.report(
                        "pv1.memory",
                        format!("/meta/memory/{key}"),
                        format!("meta.source is memory: meta.memory.{key} must be non-blank"),
                    );
                }
            }
        }
        _ => {}
    }

    if let Some(preview) = data
        .and_then(|d| d.get("summary"))
        .and_then(|s| s.get("preview"))
    {
        let size = crate::json::size::js_size(preview);
        if size >= 1024 {
            f.report(
                "pv1.preview-size",
                "/data/summary/preview",
                format!("{size} bytes; a preview must stay under 1 KB (1024 bytes)"),
            );
        }
    }
}

/// Whether [`check`] surely finds nothing in a stream line that deserialized into the
/// closed wire type (so every known field has its type and there is no unknown one).
/// Conservative: `false` sends the line the general way, which may still find nothing;
/// `true` must never hide a finding.
pub(crate) fn surely_clean(env: &wire::Envelope<'_>, profile: Profile) -> bool {
    let meta = &env.meta;
    let error_empty = env
        .error
        .as_ref()
        .is_none_or(|e| e.code.is_none() && e.message.is_none() && e.details.is_none());
    let data_plain = env
        .data
        .as_ref()
        .is_none_or(|d| d.artifact.is_none() && !d.summary);
    env.version == 1
        && !blank(&env.command)
        && (profile < Profile::Spec || is_command(&env.command))
        && matches!(env.status, wire::Status::Ok | wire::Status::Progress)
        && error_empty
        && data_plain
        && is_utc_timestamp(meta.ts.trim())
        && meta.duration_ms.is_none_or(|d| d >= 0)
        && meta.seq.is_none_or(|s| s >= 0)
        && meta.cas_digest.is_none()
        && !matches!(meta.source.as_deref(), Some("cache" | "memory"))
}

/// A field of the shipped Go types: its JSON type (`None`: `data`, Go's `any`), and whether
/// `null` resets it (pointers, slices, `any`) or leaves it as it was (strings, numbers,
/// booleans, struct values).
#[derive(Clone, Copy)]
struct GoField {
    name: &'static str,
    kind: Option<Kind>,
    nullable: bool,
}

/// The field of the Go object at `at` (see [`known_fields`]) that key `key` fills: the one
/// of that name in any (ASCII) case, as Go's decoder matches names.
fn go_field(at: &str, key: &str) -> Option<GoField> {
    let name = *known_fields(at)?
        .iter()
        .find(|f| f.eq_ignore_ascii_case(key))?;
    let (kind, nullable) = match (at, name) {
        ("", "version") => (Some(Kind::Integer), false),
        ("", "data") => (None, true),
        ("", "meta" | "error") => (Some(Kind::Object), false),
        ("", _) => (Some(Kind::String), false),
        ("meta", "seq" | "final" | "memory" | "quota_remaining" | "profiles") => {
            (Some(meta_kind(name)), true)
        }
        ("meta", _) => (Some(meta_kind(name)), false),
        ("quota_remaining", _) => (Some(Kind::Integer), false),
        _ => (Some(Kind::String), false), // memory and error fields
    };
    Some(GoField {
        name,
        kind,
        nullable,
    })
}

/// The protocol-v1 document in `text` (known to be JSON) as Go's `json.Unmarshal` fills the
/// shipped types, for the compat rules: keys in any case fill their field; a repeated key is
/// read again on top of what the earlier one filled — a struct (`meta`, `error`,
/// `meta.memory`, `meta.quota_remaining`) is merged field by field, `null` resets a pointer,
/// slice or `data` but leaves any other field as it was, anything else replaces. An
/// occurrence of the wrong JSON type that does not stay in the result (Go reports it and
/// goes on) is reported here as `pv1.type`; one that stays is left for the rules. Objects Go
/// does not type (`data`, unknown fields) keep the last value of a key, as Go's maps do.
/// `None` when the root is not an object. `abridged`: the root's payload members are read
/// as placeholders, as [`validate::abridged`](crate::validate) reads them (the rules read
/// nothing else of them).
pub(crate) fn go_view(text: &str, f: &mut Findings, abridged: bool) -> Option<Value> {
    let mut de = serde_json::Deserializer::from_str(text);
    let root = GoValue {
        field: GoField {
            name: "",
            kind: Some(Kind::Object),
            nullable: false,
        },
        at: String::new(),
        existing: None,
        f,
        abridge_members: abridged,
        placeholder: false,
    };
    match root.deserialize(&mut de) {
        Ok(view @ Value::Object(_)) => Some(view),
        _ => None,
    }
}

/// One occurrence of a Go-typed value at JSON Pointer `at`, read on top of `existing` (what
/// earlier occurrences of its key left).
struct GoValue<'f> {
    field: GoField,
    at: String,
    existing: Option<Value>,
    f: &'f mut Findings,
    /// Read this object's payload members as placeholders (the root, when abridged).
    abridge_members: bool,
    /// Read this occurrence as a placeholder.
    placeholder: bool,
}

impl GoValue<'_> {
    fn wrong(&self, v: &Value) -> bool {
        !v.is_null() && self.field.kind.is_some_and(|k| !k.accepts(v))
    }

    fn type_error(&mut self) {
        let kind = self.field.kind.map_or("any value", Kind::name);
        self.f.report(
            "pv1.type",
            self.at.clone(),
            format!(
                "must be {kind} (or null): Go's decoder reads every occurrence of a repeated key"
            ),
        );
    }

    /// The field's value after this occurrence, `v`, is read (not an object merged).
    fn resolve(mut self, v: Value) -> Value {
        let Some(old) = self.existing.take() else {
            return v;
        };
        if v.is_null() {
            if !self.field.nullable {
                return old;
            }
            if self.wrong(&old) {
                self.type_error();
            }
            return Value::Null;
        }
        if self.wrong(&v) {
            if old.is_null() {
                return v;
            }
            self.type_error();
            return old;
        }
        if self.wrong(&old) {
            self.type_error();
        }
        v
    }
}

impl<'de> DeserializeSeed<'de> for GoValue<'_> {
    type Value = Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        if self.placeholder {
            let v = Placeholder::default().deserialize(d)?;
            return Ok(self.resolve(v));
        }
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for GoValue<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<Value, A::Error> {
        // A Go struct: this object's keys are read on top of the earlier occurrence's.
        let is_struct = self.field.kind.is_some() && known_fields(self.field.name).is_some();
        if !is_struct {
            let mut obj = Map::new();
            while let Some(key) = map.next_key::<String>()? {
                obj.insert(key, map.next_value()?);
            }
            return Ok(self.resolve(Value::Object(obj)));
        }
        let mut obj = match self.existing.take() {
            Some(Value::Object(o)) => o,
            None | Some(Value::Null) => Map::new(),
            Some(other) => {
                self.existing = Some(other);
                self.type_error();
                Map::new()
            }
        };
        while let Some(key) = map.next_key::<String>()? {
            let abridged = self.abridge_members && is_payload_member(&key);
            match go_field(self.field.name, &key) {
                Some(field) => {
                    let existing = obj.remove(field.name);
                    let value = map.next_value_seed(GoValue {
                        field,
                        at: pointer::join(&self.at, field.name),
                        existing,
                        f: self.f,
                        abridge_members: false,
                        placeholder: abridged,
                    })?;
                    obj.insert(field.name.to_string(), value);
                }
                None if abridged => {
                    let value = map.next_value_seed(Placeholder::default())?;
                    obj.insert(key, value);
                }
                None => {
                    obj.insert(key, map.next_value()?);
                }
            }
        }
        Ok(Value::Object(obj))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<Value>()? {
            items.push(item);
        }
        Ok(self.resolve(Value::Array(items)))
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(self.resolve(Value::Bool(v)))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(self.resolve(Value::Number(v.into())))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(self.resolve(Value::Number(v.into())))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(self.resolve(Number::from_f64(v).map_or(Value::Null, Value::Number)))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(self.resolve(Value::String(v.to_string())))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(self.resolve(Value::String(v)))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(self.resolve(Value::Null))
    }
}

/// The JSON types the shipped Go decoder accepts for the fields it knows.
fn check_types(env: &Map<String, Value>, f: &mut Findings) {
    typed(f, env, "", "version", Kind::Integer);
    typed(f, env, "", "status", Kind::String);
    typed(f, env, "", "command", Kind::String);
    if typed(f, env, "", "meta", Kind::Object)
        && let Some(meta) = env.get("meta").and_then(Value::as_object)
    {
        // The fields the seed document adds are not in the Go type: Go skips them whatever
        // their type, so they are typed from strict on.
        let spec_fields: &[&str] = if f.profile() > Profile::Compat {
            &SPEC_META_FIELDS
        } else {
            &[]
        };
        for field in META_FIELDS.iter().chain(spec_fields) {
            typed(f, meta, "/meta", field, meta_kind(field));
        }
        if let Some(memory) = meta.get("memory").and_then(Value::as_object) {
            for field in MEMORY_FIELDS {
                typed(f, memory, "/meta/memory", field, Kind::String);
            }
        }
        if let Some(quota) = meta.get("quota_remaining").and_then(Value::as_object) {
            for field in QUOTA_FIELDS {
                typed(f, quota, "/meta/quota_remaining", field, Kind::Integer);
            }
        }
    }
    if typed(f, env, "", "error", Kind::Object)
        && let Some(error) = env.get("error").and_then(Value::as_object)
    {
        typed(f, error, "/error", "code", Kind::String);
        typed(f, error, "/error", "message", Kind::String);
    }
}

/// Fields the protocol does not define (strict). `data` is free-form.
fn check_unknown(env: &Map<String, Value>, f: &mut Findings) {
    if !f.checks("pv1.unknown-field") {
        return;
    }
    let mut unknown = |at: &str, obj: &Map<String, Value>, known: &[&str]| {
        for key in obj.keys() {
            if !known.contains(&key.as_str()) {
                f.report(
                    "pv1.unknown-field",
                    pointer::join(at, key),
                    format!("{key:?} is not a field of protocol-v1"),
                );
            }
        }
    };
    unknown("", env, &TOP_FIELDS);
    if let Some(meta) = env.get("meta").and_then(Value::as_object) {
        let known: Vec<&str> = META_FIELDS
            .iter()
            .chain(&SPEC_META_FIELDS)
            .copied()
            .collect();
        unknown("/meta", meta, &known);
        if let Some(memory) = meta.get("memory").and_then(Value::as_object) {
            unknown("/meta/memory", memory, &MEMORY_FIELDS);
        }
        if let Some(quota) = meta.get("quota_remaining").and_then(Value::as_object) {
            unknown("/meta/quota_remaining", quota, &QUOTA_FIELDS);
        }
    }
    if let Some(error) = env.get("error").and_then(Value::as_object) {
        unknown("/error", error, &ERROR_FIELDS);
    }
}

/// `meta.ts`: non-blank RFC 3339 in UTC written with `Z`, as Go's `time.RFC3339` reads it
/// after trimming spaces (`+00:00` is rejected, a fraction is allowed).
fn check_ts(ts: &str, f: &mut Findings) {
    let ts = ts.trim();
    if ts.is_empty() {
        f.report("pv1.ts", "/meta/ts", "meta.ts is required");
        return;
    }
    if !is_utc_timestamp(ts) {
        f.report(
            "pv1.ts",
            "/meta/ts",
            format!("{ts:?} is not an RFC 3339 UTC timestamp ending in Z"),
        );
    }
}

/// `^[a-z0-9][a-z0-9-]*/[a-z0-9][a-z0-9-]*$`: `<group>/<name>`.
fn is_command(command: &str) -> bool {
    let part = |p: &str| {
        let b = p.as_bytes();
        !b.is_empty()
            && b[0] != b'-'
            && b.iter()
                .all(|&c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'-')
    };
    command
        .split_once('/')
        .is_some_and(|(group, name)| part(group) && part(name))
}

/// `YYYY-MM-DDTHH:MM:SS[.fraction]Z` with real dates and times, as Go's `time.Parse` with
/// `time.RFC3339` accepts it in UTC: upper-case `T` and `Z`, a fraction of any length after
/// `.` or `,`, no leap second.
pub(crate) fn is_utc_timestamp(ts: &str) -> bool {
    let b = ts.as_bytes();
    if b.len() < 20 || b[b.len() - 1] != b'Z' {
        return false;
    }
    let num = |from: usize, to: usize| {
        b[from..to].iter().try_fold(0u32, |n, &c| {
            c.is_ascii_digit().then(|| n * 10 + u32::from(c - b'0'))
        })
    };
    let separators =
        b[4] == b'-' && b[7] == b'-' && b[10] == b'T' && b[13] == b':' && b[16] == b':';
    let (Some(year), Some(month), Some(day), Some(hour), Some(minute), Some(second)) = (
        num(0, 4),
        num(5, 7),
        num(8, 10),
        num(11, 13),
        num(14, 16),
        num(17, 19),
    ) else {
        return false;
    };
    let fraction = &b[19..b.len() - 1];
    let fraction_ok = fraction.is_empty()
        || (fraction.len() > 1
            && matches!(fraction[0], b'.' | b',')
            && fraction[1..].iter().all(u8::is_ascii_digit));
    let days = match month {
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    separators
        && fraction_ok
        && (1..=12).contains(&month)
        && (1..=days).contains(&day)
        && hour < 24
        && minute < 60
        && second < 60
}

fn check_duration(meta: Option<&Map<String, Value>>, f: &mut Findings) {
    let Some(d) = meta.and_then(|m| m.get("duration_ms")) else {
        return;
    };
    // A non-integer is a type finding already; spec also wants it non-negative.
    if d.as_i64().is_some_and(|d| d < 0) {
        f.report(
            "pv1.duration",
            "/meta/duration_ms",
            format!("{d} is negative"),
        );
    }
}

fn check_artifact(
    data: Option<&Map<String, Value>>,
    meta: Option<&Map<String, Value>>,
    f: &mut Findings,
) {
    let artifact = text(data, "artifact");
    let cas = text(meta, "cas_digest");
    if !artifact.is_empty() {
        if !artifact.starts_with("sha256:") {
            f.report(
                "pv1.artifact",
                "/data/artifact",
                format!("{artifact:?} does not start with sha256:"),
            );
        } else if !is_digest(artifact) {
            f.report(
                "pv1.digest",
                "/data/artifact",
                "must be sha256: followed by 64 lower-case hex digits",
            );
        }
        if !cas.is_empty() && cas != artifact {
            f.report(
                "pv1.artifact",
                "/data/artifact",
                "data.artifact differs from meta.cas_digest",
            );
        }
    } else if !cas.is_empty() {
        f.report(
            "pv1.cas-digest-without-artifact",
            "/meta/cas_digest",
            "meta.cas_digest is set but data.artifact is not",
        );
    }
    if !cas.is_empty() && !is_digest(cas) {
        f.report(
            "pv1.digest",
            "/meta/cas_digest",
            "must be sha256: followed by 64 lower-case hex digits",
        );
    }
}

/// An error envelope's `data.summary.status_code` (number or numeric string) is 400–599.
fn check_status_code(data: Option<&Map<String, Value>>, f: &mut Findings) {
    let Some(code) = data
        .and_then(|d| d.get("summary"))
        .and_then(|s| s.get("status_code"))
    else {
        return;
    };
    let number = match code {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse::<f64>().ok(),
        _ => None,
    };
    if let Some(n) = number
        && !(400.0..=599.0).contains(&n)
    {
        f.report(
            "pv1.status-code",
            "/data/summary/status_code",
            format!("{code} is not an HTTP error status (400-599)"),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::is_utc_timestamp;

    #[test]
    fn utc_timestamps_as_go_reads_them() {
        for ok in [
            "2026-05-12T12:34:56Z",
            "2024-02-29T23:59:59.999999999999Z",
            "2026-05-12T12:34:56,5Z",
            "0001-01-01T00:00:00Z",
        ] {
            assert!(is_utc_timestamp(ok), "{ok}");
        }
        for bad in [
            "2026-05-12T12:34:56+00:00",
            "2026-05-12t12:34:56Z",
            "2026-05-12T12:34:56z",
            "2023-02-29T00:00:00Z",
            "2026-04-31T00:00:00Z",
            "2026-05-12T24:00:00Z",
            "2026-05-12T23:59:60Z",
            "2026-05-12T12:34:56.Z",
            "2026-5-12T12:34:56Z",
            "2026-05-12 12:34:56Z",
            "2026-05-12T12:34:56ZZ",
            "",
        ] {
            assert!(!is_utc_timestamp(bad), "{bad}");
        }
    }
}
