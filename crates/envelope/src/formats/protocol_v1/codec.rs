//! `protocol-v1`: `{version,status,command,data,meta,error}` written by Go `encoding/json`:
//! struct fields in declaration order, map keys (`data`, `error.details`) sorted, one
//! compact line with `\n` after it.

use std::borrow::Cow;

use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::formats::{
    EncodeOptions, Field, FormatId, LossReport, payload_json, report_unheld, timestamp_text,
};
use crate::json::{Dialect, JsonWriter, pointer};
use crate::model::error::EnvelopeError;
use crate::model::{ArtifactRef, Envelope, Payload, Status, Timestamp};

const FORMAT: &str = "protocol-v1";

/// The command written when the envelope names none (`command` is required, and this
/// matches the `namespace/verb` pattern of the published schema).
pub const UNKNOWN_COMMAND: &str = "unknown/unknown";

/// `meta` fields of the shipped Go type, in declaration (= output) order.
pub(crate) const META_FIELDS: [&str; 19] = [
    "ts",
    "duration_ms",
    "source",
    "runner",
    "seq",
    "final",
    "cas_digest",
    "memory",
    "job_id",
    "skill_version",
    "workspace",
    "cache_key",
    "partial",
    "profiles",
    "agent_id",
    "mailbox_id",
    "correlation_id",
    "parent_job_id",
    "quota_remaining",
];
/// `meta.memory` fields of the Go type, in output order.
pub(crate) const MEMORY_FIELDS: [&str; 3] = ["name", "type", "workspace"];
/// `meta.quota_remaining` fields of the Go type, in output order.
pub(crate) const QUOTA_FIELDS: [&str; 3] = ["cpu_ms", "memory_mb", "network_mb"];

/// Decodes a parsed protocol-v1 envelope.
pub(crate) fn decode(mut value: Value) -> Result<Envelope> {
    // `data` moves into the envelope instead of being copied.
    let data = value
        .as_object_mut()
        .and_then(|m| m.get_mut("data"))
        .map(std::mem::take);
    let root = value
        .as_object()
        .ok_or_else(|| Error::wrong_type(FORMAT, "", "an envelope object"))?;
    let mut env = Envelope::default();
    match root.get("status").and_then(Value::as_str) {
        Some("ok") => env.status = Status::Ok,
        Some("error") => env.status = Status::Error,
        Some("progress") => env.status = Status::Progress,
        _ => {
            if let Some(s) = root.get("status") {
                env.push_extension("/status".into(), s.clone());
            }
        }
    }
    match root.get("version") {
        Some(v) if v.as_u64() == Some(1) && v.is_u64() => {}
        other => {
            let found = other.map_or("none".to_string(), Value::to_string);
            return Err(Error::UnsupportedVersion {
                format: FORMAT,
                message: format!("version must be 1, found {found}"),
                location: crate::error::Location::pointer("/version"),
            });
        }
    }
    env.command = crate::formats::opt_str(FORMAT, root, "command", "")?;
    // Go writes a nil `data` as null: null and absent both mean "no payload".
    env.payload = match data {
        None | Some(Value::Null) => Payload::None,
        Some(d) => Payload::Json(d),
    };
    match root.get("meta") {
        None | Some(Value::Null) => {}
        Some(Value::Object(meta)) => read_meta(&mut env, meta)?,
        Some(_) => return Err(Error::wrong_type(FORMAT, "/meta", "an object")),
    }
    match root.get("error") {
        None => {}
        Some(Value::Null) => env.layout.null_error = true,
        Some(Value::Object(error)) => read_error(&mut env, error)?,
        Some(_) => return Err(Error::wrong_type(FORMAT, "/error", "an object")),
    }
    for (key, v) in root {
        if !matches!(
            key.as_str(),
            "version" | "status" | "command" | "data" | "meta" | "error"
        ) {
            env.push_extension(pointer::join("", key), v.clone());
        }
    }
    Ok(env)
}

fn read_meta(env: &mut Envelope, meta: &Map<String, Value>) -> Result<()> {
    env.timestamp = crate::formats::opt_str(FORMAT, meta, "ts", "/meta")?.map(Timestamp::Text);
    for (key, v) in meta {
        match (key.as_str(), v) {
            ("ts", _) => {}
            ("duration_ms", Value::Number(n)) => env.duration_ms = Some(n.clone()),
            ("workspace", Value::String(s)) => env.workspace = Some(s.clone()),
            ("cas_digest", Value::String(s)) => {
                env.artifact = Some(ArtifactRef { digest: s.clone() })
            }
            _ => env.push_extension(pointer::join("/meta", key), v.clone()),
        }
    }
    Ok(())
}

fn read_error(env: &mut Envelope, error: &Map<String, Value>) -> Result<()> {
    let code = crate::formats::opt_str(FORMAT, error, "code", "/error")?;
    let message = crate::formats::opt_str(FORMAT, error, "message", "/error")?;
    let details = error.get("details").filter(|d| !d.is_null()).cloned();
    for (key, v) in error {
        if !matches!(key.as_str(), "code" | "message" | "details") {
            env.push_extension(pointer::join("/error", key), v.clone());
        }
    }
    if code.as_deref().is_some_and(|c| !c.is_empty())
        || message.as_deref().is_some_and(|m| !m.is_empty())
        || details.is_some()
        || env.status == Status::Error
    {
        let code_text = code.unwrap_or_default();
        let mut e = EnvelopeError::from_code(&code_text, message.unwrap_or_default());
        if code_text.is_empty() {
            e.code = None;
        }
        e.details = details;
        env.error = Some(e);
    }
    Ok(())
}

/// Go's `omitempty`: false, 0, "", null and empty arrays and objects are left out.
fn is_empty(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
    }
}

/// Writes a Go struct-like object: `fields` in order (omitted when empty), then the rest.
fn write_struct(w: &mut JsonWriter<'_>, obj: &Map<String, Value>, fields: &[&str]) {
    w.begin_object();
    for &f in fields {
        if let Some(v) = obj.get(f).filter(|v| !is_empty(v)) {
            w.field(f, v);
        }
    }
    for (k, v) in obj {
        if !fields.contains(&k.as_str()) {
            w.field(k, v);
        }
    }
    w.end_object();
}

/// Encodes `env` as protocol-v1 (Go dialect, one line ending in `\n`), adding to `losses`
/// what it cannot hold.
pub(crate) fn encode(
    env: &Envelope,
    options: &EncodeOptions,
    losses: &mut LossReport,
) -> Result<Vec<u8>> {
    report_unheld(
        env,
        FormatId::ProtocolV1,
        &[
            Field::Command,
            Field::Timestamp,
            Field::DurationMs,
            Field::Workspace,
            Field::Artifact,
            Field::ErrorCategory,
            Field::ErrorCode,
            Field::ErrorDetails,
            Field::ErrorRecoverable,
        ],
        losses,
    );
    let own = env.extensions_of(FormatId::ProtocolV1);
    let ext = |p: &str| own.iter().find(|e| e.pointer == p).map(|e| &e.value);

    let mut meta = Map::new();
    let ts = match (&env.timestamp, env.origin) {
        (None, Some(FormatId::ProtocolV1)) => String::new(),
        (Some(Timestamp::Text(t)), _) => t.clone(),
        _ => timestamp_text(env, options, false),
    };
    meta.insert("ts".into(), Value::String(ts));
    if let Some(d) = &env.duration_ms {
        meta.insert("duration_ms".into(), Value::Number(d.clone()));
    }
    if let Some(ws) = &env.workspace {
        meta.insert("workspace".into(), Value::String(ws.clone()));
    }
    for e in own {
        if let Some(key) = e.pointer.strip_prefix("/meta/") {
            meta.insert(pointer::unescape(key), e.value.clone());
        }
    }
    // A cut envelope: `meta.partial`, our marker under `meta.budget`, and `data.hint`.
    let truncation = crate::formats::truncation(env);
    if let Some(budget) = truncation {
        meta.insert("partial".into(), Value::Bool(true));
        meta.insert(
            "budget".into(),
            crate::formats::budget_marker_value(budget, Dialect::Go),
        );
    }

    let mut out = Vec::new();
    let mut w = JsonWriter::new(&mut out, Dialect::Go);
    w.begin_object();
    w.field("version", &Value::from(1));
    match ext("/status") {
        Some(s) => w.field("status", s),
        None => w.field("status", &Value::String(env.status.as_str().into())),
    }
    w.key("command");
    // The protocol requires a non-blank command of the form <group>/<name>: without one in
    // the source, the tool name when it has that form, else a placeholder that says so (the
    // loss report says it was invented, and keeps a tool name that is not a command).
    let tool_command = env.tool.as_deref().filter(|t| is_command(t));
    let command = env.command.as_deref().or(tool_command);
    if command.is_none() {
        losses.push(
            "command",
            format!("the source has no <group>/<name> command: wrote {UNKNOWN_COMMAND:?}"),
        );
    }
    w.string(command.unwrap_or(UNKNOWN_COMMAND));
    if env.command.is_none() && tool_command.is_some() {
        losses.items.retain(|l| l.field != "tool");
    }
    let data = match &env.payload {
        Payload::None => match env.error.as_ref().and_then(|e| e.hint.as_ref()) {
            Some(hint) => {
                losses.items.retain(|l| l.field != "error.hint");
                Cow::Owned(serde_json::json!({ "hint": hint }))
            }
            None => Cow::Owned(Value::Null),
        },
        _ => payload_json(env, FormatId::ProtocolV1, losses),
    };
    let data = match (truncation.and_then(|b| b.hint.as_ref()), data) {
        (Some(hint), Cow::Borrowed(Value::Object(map))) if !map.contains_key("hint") => {
            let mut map = map.clone();
            map.insert("hint".into(), Value::String(hint.clone()));
            Cow::Owned(Value::Object(map))
        }
        (Some(hint), Cow::Owned(Value::Object(mut map))) if !map.contains_key("hint") => {
            map.insert("hint".into(), Value::String(hint.clone()));
            Cow::Owned(Value::Object(map))
        }
        (_, data) => data,
    };
    let data = with_artifact(env, data, &mut meta, losses);
    w.field("data", &data);
    w.key("meta");
    w.begin_object();
    for &f in &META_FIELDS {
        let Some(v) = meta.get(f) else { continue };
        // `ts` is never omitted; `seq` 0 is kept on progress events, where it is the
        // first sequence number (the Go reference would drop it and break its own stream).
        let keep = f == "ts" || (f == "seq" && env.status == Status::Progress && v.is_number());
        if !keep && is_empty(v) {
            continue;
        }
        match (f, v) {
            ("memory", Value::Object(m)) => {
                w.key(f);
                write_struct(&mut w, m, &MEMORY_FIELDS);
            }
            ("quota_remaining", Value::Object(q)) => {
                w.key(f);
                write_struct(&mut w, q, &QUOTA_FIELDS);
            }
            _ => w.field(f, v),
        }
    }
    for (k, v) in &meta {
        if !META_FIELDS.contains(&k.as_str()) {
            w.field(k, v);
        }
    }
    w.end_object();
    w.key("error");
    match &env.error {
        None if env.layout.null_error => w.null(),
        None => {
            w.begin_object();
            write_error_extensions(&mut w, own, &[], losses);
            w.end_object();
        }
        Some(error) => {
            w.begin_object();
            let code = if env.status == Status::Error {
                error.code_or_default()
            } else {
                error.code.as_deref().unwrap_or("")
            };
            let mut written = Vec::new();
            if !code.is_empty() {
                w.key("code");
                w.string(code);
                written.push("code");
            }
            if !error.message.is_empty() {
                w.key("message");
                w.string(&error.message);
                written.push("message");
            }
            if let Some(d) = error.details.as_ref().filter(|d| !is_empty(d)) {
                w.field("details", d);
                written.push("details");
            }
            write_error_extensions(&mut w, own, &written, losses);
            w.end_object();
        }
    }
    // An extension never writes a member of the envelope a second time (only an envelope
    // built in code has such extensions: the decoder keeps the members typed).
    for e in own {
        if let Some(key) = pointer::child(&e.pointer, "")
            && key != "status"
        {
            if ROOT_MEMBERS.contains(&key.as_str()) {
                losses.push(
                    e.pointer.clone(),
                    format!("protocol-v1 writes {key:?} itself: the extension is dropped"),
                );
                continue;
            }
            w.field(&key, &e.value);
        }
    }
    w.end_object();
    out.push(b'\n');
    Ok(out)
}

/// Whether `command` has the `<group>/<name>` form the spec profile requires
/// (`^[a-z0-9][a-z0-9-]*/[a-z0-9][a-z0-9-]*$`).
///
/// ```
/// use envelope::formats::protocol_v1::is_command;
/// assert!(is_command("fs/ls"));
/// assert!(!is_command("unknown"));
/// assert!(!is_command("search.index_files"));
/// ```
pub fn is_command(command: &str) -> bool {
    let segment = |s: &str| {
        s.bytes().next().is_some_and(|b| b != b'-')
            && s.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    };
    command
        .split_once('/')
        .is_some_and(|(group, name)| segment(group) && segment(name))
}

/// Sets `meta.cas_digest` for the envelope's artifact. The protocol requires `data.artifact`
/// beside it (equal to it): offload writes it there; where the data lacks it (an error
/// envelope's `null`, a payload cut or replaced after the offload) it is added to an object
/// or a `null` data; other data cannot hold it, and the artifact is reported lost.
fn with_artifact<'d>(
    env: &Envelope,
    data: Cow<'d, Value>,
    meta: &mut Map<String, Value>,
    losses: &mut LossReport,
) -> Cow<'d, Value> {
    let Some(artifact) = &env.artifact else {
        return data;
    };
    let digest = Value::String(artifact.digest.clone());
    let data = match data.as_ref() {
        Value::Object(map) if map.get("artifact") == Some(&digest) => data,
        Value::Object(map) if !map.contains_key("artifact") => {
            let mut map = map.clone();
            map.insert("artifact".into(), digest.clone());
            Cow::Owned(Value::Object(map))
        }
        Value::Null => Cow::Owned(serde_json::json!({ "artifact": digest })),
        _ => {
            losses.push(
                "artifact",
                "data cannot carry data.artifact, which protocol-v1 requires beside meta.cas_digest",
            );
            return data;
        }
    };
    meta.insert("cas_digest".into(), digest);
    data
}

/// The members of the envelope object, written from the typed fields.
const ROOT_MEMBERS: [&str; 6] = ["version", "status", "command", "data", "meta", "error"];

/// Writes the `/error/…` extensions but those whose key the error already has (`written`),
/// which are reported as lost.
fn write_error_extensions(
    w: &mut JsonWriter<'_>,
    own: &[crate::model::Extension],
    written: &[&str],
    losses: &mut LossReport,
) {
    for e in own {
        if let Some(key) = e.pointer.strip_prefix("/error/") {
            let key = pointer::unescape(key);
            if written.contains(&key.as_str()) {
                losses.push(
                    e.pointer.clone(),
                    format!("protocol-v1 writes error {key:?} itself: the extension is dropped"),
                );
                continue;
            }
            w.field(&key, &e.value);
        }
    }
}
