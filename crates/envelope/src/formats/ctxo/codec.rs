//! `ctxo`: the payload object with a trailing `_meta` that reports a byte-budget truncation.
//!
//! Compat mode reproduces the reference exactly, defects included (formats.md lists them):
//! the limit ignores `_meta`, only one top-level array is cut, never below one item.
//! The cut is found from element byte offsets of one serialization, not by re-serializing
//! per probe, and the output is spliced from those same bytes.

use serde_json::{Map, Value, json};

use crate::error::{Error, Result};
use crate::formats::{EncodeOptions, Field, FormatId, LossReport, payload_json, report_unheld};
use crate::json::size::{escaped_len, js_size};
use crate::json::skim::Tail;
use crate::json::writer::ordered_entries;
use crate::json::{Dialect, JsonWriter, pointer};
use crate::model::error::{Category, EnvelopeError};
use crate::model::{BudgetReport, Envelope, Payload, Status, Transport};

const FORMAT: &str = "ctxo";
/// The limit when `CTXO_RESPONSE_LIMIT` is unset or not a positive number.
pub const DEFAULT_LIMIT: usize = 8192;
/// The reserved key.
pub const META: &str = "_meta";

/// The truncatable top-level keys of the shipped code and their drill-in hints (verbatim).
pub const TRUNCATABLE: [(&str, &str); 13] = [
    (
        "impactedSymbols",
        "Use search_symbols to find specific impacted symbols, or get_blast_radius with a confidence filter.",
    ),
    (
        "importers",
        "Use find_importers with edgeKinds filter or maxDepth to narrow results.",
    ),
    (
        "deadSymbols",
        "Use search_symbols with kind filter to find specific dead symbols.",
    ),
    (
        "unusedExports",
        "Use find_importers to check specific symbols.",
    ),
    (
        "results",
        "Use search_symbols or get_ranked_context with a narrower query.",
    ),
    (
        "rankings",
        "Use get_symbol_importance with kind or filePattern filter to narrow results.",
    ),
    (
        "context",
        "Use get_context_for_task with a smaller tokenBudget.",
    ),
    (
        "hierarchies",
        "Use get_class_hierarchy with a specific symbolId.",
    ),
    (
        "scaffolding",
        "Review the scaffolding markers directly in the listed files.",
    ),
    (
        "deadFiles",
        "Use find_dead_code with includeTests to adjust scope.",
    ),
    (
        "files",
        "Use get_changed_symbols with a narrower since ref or smaller maxFiles.",
    ),
    (
        "clusters",
        "Use get_architectural_overlay with mode=communities and layer filter for a focused view.",
    ),
    (
        "clustersAffected",
        "Use get_blast_radius on individual changed symbols for per-cluster impact.",
    ),
];

/// The keys that make an object a ctxo `_meta`.
pub const META_KEYS: [&str; 4] = ["totalItems", "returnedItems", "truncated", "totalBytes"];

/// Whether `v` is a ctxo `_meta` object (it has at least one of its keys).
pub fn is_ctxo_meta(v: &Value) -> bool {
    v.as_object()
        .is_some_and(|m| META_KEYS.iter().any(|k| m.contains_key(*k)))
}

/// The hint of a truncatable key.
pub fn hint_for(key: &str) -> Option<&'static str> {
    TRUNCATABLE.iter().find(|(k, _)| *k == key).map(|(_, h)| *h)
}

/// `CTXO_RESPONSE_LIMIT` read like JS `parseInt(v, 10)`; not a number > 0 → 8192.
pub fn parse_limit(value: Option<&str>) -> usize {
    let Some(text) = value else {
        return DEFAULT_LIMIT;
    };
    // ECMAScript StrWhiteSpaceChar: Unicode White_Space without U+0085, plus U+FEFF.
    let text =
        text.trim_start_matches(|c: char| (c.is_whitespace() && c != '\u{85}') || c == '\u{FEFF}');
    let (negative, digits) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let digits: &str = &digits[..digits.bytes().take_while(u8::is_ascii_digit).count()];
    if negative || digits.trim_start_matches('0').is_empty() {
        return DEFAULT_LIMIT;
    }
    digits.parse::<usize>().unwrap_or(usize::MAX)
}

fn read_u64(meta: &Map<String, Value>, key: &str) -> Result<u64> {
    match meta.get(key) {
        None => Ok(0),
        Some(v) => v
            .as_u64()
            .or_else(|| {
                v.as_f64()
                    .filter(|f| f.fract() == 0.0 && *f >= 0.0)
                    .map(|f| f as u64)
            })
            .ok_or_else(|| {
                Error::wrong_type(FORMAT, &format!("/_meta/{key}"), "a non-negative integer")
            }),
    }
}

/// Decodes a ctxo document, or an MCP result whose last text block holds one.
pub fn decode(value: Value) -> Result<Envelope> {
    let mut env = Envelope::default();
    let doc = match transport_document(&value)? {
        Some((doc, leading_blocks, outer_keys)) => {
            env.layout.transport = Some(Transport {
                leading_blocks,
                outer_keys,
            });
            doc
        }
        None => value,
    };
    let Value::Object(obj) = doc else {
        return Err(Error::wrong_type(FORMAT, "", "a JSON object"));
    };

    if obj.get("error") == Some(&Value::Bool(true))
        && obj.get("message").is_some_and(Value::is_string)
    {
        env.status = Status::Error;
        env.error = Some(EnvelopeError::new(
            Category::Internal,
            obj["message"].as_str().unwrap_or_default(),
        ));
        for (key, v) in obj {
            if key != "error" && key != "message" {
                env.push_extension(pointer::join("", &key), v);
            }
        }
        return Ok(env);
    }

    // The document is consumed: payload members move, not copy.
    let len = obj.len();
    let mut payload = Map::with_capacity(len);
    let mut meta = None;
    for (i, (key, v)) in obj.into_iter().enumerate() {
        if key == META {
            meta = Some(v);
            if i + 1 != len {
                env.layout.reserved_key_index = Some(i);
            }
        } else {
            payload.insert(key, v);
        }
    }
    env.payload = Payload::Json(Value::Object(payload));
    match meta {
        None => env.layout.without_meta = true,
        Some(meta) => read_meta(&mut env, &meta)?,
    }
    Ok(env)
}

type Carried = (Value, Vec<Value>, Vec<(String, Value)>);

/// If `value` is an MCP result, the JSON document of its last text block, the blocks before
/// it and the result's other keys.
fn transport_document(value: &Value) -> Result<Option<Carried>> {
    let Some(content) = value.get("content").and_then(Value::as_array) else {
        return Ok(None);
    };
    // A document with a ctxo `_meta` of its own is the document, even when its payload has
    // a `content` array (found by fuzzing: such a payload was read as an MCP result).
    if value.get(META).is_some_and(is_ctxo_meta) {
        return Ok(None);
    }
    let last_text = content
        .iter()
        .rposition(|b| b.get("type").and_then(Value::as_str) == Some("text"))
        .ok_or_else(|| {
            Error::not_envelope(FORMAT, "/content", "no text block holds a ctxo document")
        })?;
    let at = format!("/content/{last_text}/text");
    let text = content[last_text]
        .get("text")
        .and_then(Value::as_str)
        .ok_or_else(|| Error::wrong_type(FORMAT, &at, "a string"))?;
    let doc = crate::json::from_str(text).map_err(|e| match e {
        Error::Json {
            kind,
            message,
            mut location,
        } => {
            location.pointer = Some(format!("{at}#"));
            Error::Json {
                kind,
                message,
                location,
            }
        }
        other => other,
    })?;
    let leading = content
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != last_text)
        .map(|(_, b)| b.clone())
        .collect();
    let outer = value
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(k, _)| *k != "content")
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    Ok(Some((doc, leading, outer)))
}

fn read_meta(env: &mut Envelope, meta: &Value) -> Result<()> {
    let obj = meta
        .as_object()
        .ok_or_else(|| Error::wrong_type(FORMAT, "/_meta", "an object"))?;
    let mut budget = BudgetReport {
        total_items: read_u64(obj, "totalItems")?,
        returned_items: read_u64(obj, "returnedItems")?,
        truncated: match obj.get("truncated") {
            None => false,
            Some(Value::Bool(b)) => *b,
            Some(_) => return Err(Error::wrong_type(FORMAT, "/_meta/truncated", "a boolean")),
        },
        total_bytes: read_u64(obj, "totalBytes")?,
        ..BudgetReport::default()
    };
    budget.hint = crate::formats::opt_str(FORMAT, obj, "hint", "/_meta")?;
    for (key, v) in obj {
        match key.as_str() {
            "totalItems" | "returnedItems" | "truncated" | "totalBytes" | "hint" => {}
            "workspace" if v.get("root").is_some_and(Value::is_string) => {
                env.workspace = v["root"].as_str().map(str::to_string);
                for (wkey, wv) in v.as_object().into_iter().flatten() {
                    if wkey != "root" {
                        env.push_extension(pointer::join("/_meta/workspace", wkey), wv.clone());
                    }
                }
            }
            _ => env.push_extension(pointer::join("/_meta", key), v.clone()),
        }
    }
    // Keys the reference always writes: remember which were absent so we do not add them.
    for key in META_KEYS {
        if !obj.contains_key(key) {
            env.layout.absent_keys.push(key);
        }
    }
    env.budget = Some(budget);
    Ok(())
}

/// The keys of `_meta` that `write_meta` writes from the typed fields of `env` and
/// `budget`. An extension under `/_meta` with one of these names (an earlier shaping's
/// `cuts`, `moreCuts` or `artifact`, read back as extensions) is not written again.
fn typed_meta_keys(env: &Envelope, budget: &BudgetReport) -> Vec<&'static str> {
    let same_origin = env.origin == Some(FormatId::Ctxo);
    let mut keys: Vec<&str> = META_KEYS
        .into_iter()
        .filter(|key| !(same_origin && env.layout.absent_keys.contains(key)))
        .collect();
    if budget.hint.is_some() {
        keys.push("hint");
    }
    if budget.tokens.is_some() {
        keys.extend(["tokenLimit", "tokenizer"]);
    }
    if !budget.cuts.is_empty() || !budget.truncated {
        // `moreCuts` goes with `cuts`: an older count would contradict the new list. A
        // `_meta` that says the payload is whole lists no cuts either: an earlier shaping's
        // `cuts` read back (the payload they describe is now in the artifact an offload
        // wrote) would contradict `truncated: false` (rule `ctxo.truncated-flag`), so it is
        // dropped and reported.
        keys.extend(["cuts", "moreCuts"]);
    }
    if env.artifact.is_some() {
        keys.push("artifact");
    }
    if env.workspace.is_some() {
        keys.push("workspace");
    }
    keys
}

/// The extensions under `/_meta` that `write_meta` leaves out because the typed fields
/// write their key (to be reported as lost).
fn shadowed_meta_extensions<'a>(
    env: &'a Envelope,
    budget: &BudgetReport,
) -> impl Iterator<Item = &'a crate::model::Extension> {
    let typed = typed_meta_keys(env, budget);
    env.extensions_of(FormatId::Ctxo).iter().filter(move |ext| {
        if let Some(key) = ext.pointer.strip_prefix("/_meta/workspace/") {
            return env.workspace.is_some() && pointer::unescape(key) == "root";
        }
        ext.pointer
            .strip_prefix("/_meta/")
            .is_some_and(|key| typed.contains(&pointer::unescape(key).as_str()))
    })
}

/// Writes the `_meta` object for a budget report.
fn write_meta(w: &mut JsonWriter<'_>, env: &Envelope, budget: &BudgetReport) {
    let own = env.extensions_of(FormatId::Ctxo);
    let typed = typed_meta_keys(env, budget);
    w.begin_object();
    for (key, value) in [
        ("totalItems", json!(budget.total_items)),
        ("returnedItems", json!(budget.returned_items)),
        ("truncated", json!(budget.truncated)),
        ("totalBytes", json!(budget.total_bytes)),
    ] {
        if typed.contains(&key) {
            w.field(key, &value);
        }
    }
    crate::formats::write_token_limit(w, budget);
    if let Some(hint) = &budget.hint {
        w.key("hint");
        w.string(hint);
    }
    // What a hard budget cut (the reference's own truncation has no cut list).
    crate::formats::write_cuts(w, &budget.cuts);
    if let Some(artifact) = &env.artifact {
        w.key("artifact");
        w.string(&artifact.digest);
    }
    if let Some(root) = &env.workspace {
        w.key("workspace");
        w.begin_object();
        w.key("root");
        w.string(root);
        for ext in own {
            if let Some(key) = ext.pointer.strip_prefix("/_meta/workspace/")
                && pointer::unescape(key) != "root"
            {
                w.field(&pointer::unescape(key), &ext.value);
            }
        }
        w.end_object();
    }
    for ext in own {
        if let Some(key) = ext.pointer.strip_prefix("/_meta/")
            && !key.starts_with("workspace/")
            && !typed.contains(&pointer::unescape(key).as_str())
        {
            w.field(&pointer::unescape(key), &ext.value);
        }
    }
    w.end_object();
}

fn meta_bytes(env: &Envelope, budget: &BudgetReport) -> Vec<u8> {
    let mut out = Vec::with_capacity(128);
    write_meta(&mut JsonWriter::new(&mut out, Dialect::Js), env, budget);
    out
}

/// The reference's truncation applied to `payload` under `limit`: the output document
/// bytes and the report written into its `_meta`.
pub fn compat_truncate(
    env: &Envelope,
    payload: &Map<String, Value>,
    limit: usize,
) -> (Vec<u8>, BudgetReport) {
    compat_truncate_skimmed(env, payload, limit, &[]).expect("nothing skimmed: always written")
}

/// [`compat_truncate`] of a payload read by [`skim`](crate::json::skim) for `limit`, whose
/// skimmed arrays are `tails` (pointers in `payload`); `None` unless the only skimmed array
/// is the one the truncation cuts (any other would be written whole, and its skimmed items
/// were never read).
fn compat_truncate_skimmed(
    env: &Envelope,
    payload: &Map<String, Value>,
    limit: usize,
    tails: &[Tail],
) -> Option<(Vec<u8>, BudgetReport)> {
    if tails.len() > 1 {
        return None;
    }
    // The skimmed array, if any, when it is the member `key`.
    let tail_of = |key: &str| {
        tails
            .first()
            .filter(|tail| tail.pointer == pointer::join("", key))
    };
    // The largest truncatable top-level array; ties go to the first key in payload order.
    let mut winner: Option<(&str, &[Value], Option<&Tail>, usize)> = None;
    for (key, v) in ordered_entries(payload, Dialect::Js) {
        if let (Some(_), Some(items)) = (hint_for(key), v.as_array()) {
            let tail = tail_of(key);
            let n = items.len() + tail.map_or(0, |t| t.items);
            if winner.is_none_or(|(.., most)| n > most) {
                winner = Some((key.as_str(), items, tail, n));
            }
        }
    }
    let cut_tail = winner.and_then(|(_, _, tail, _)| tail);
    if tails.len() != usize::from(cut_tail.is_some()) {
        return None;
    }

    let has_own_meta = payload.contains_key(META);
    let mut budget = BudgetReport {
        total_items: winner.map_or(0, |(.., n)| n as u64),
        returned_items: winner.map_or(0, |(.., n)| n as u64),
        truncated: false,
        total_bytes: 0,
        tokens: None,
        hint: None,
        cuts: Vec::new(),
    };
    // Nothing cut: one serialization, whose length is totalBytes.
    let whole = |budget: &mut BudgetReport| {
        let body = write_body(payload, None, 0);
        budget.total_bytes = body.len() as u64;
        splice(env, payload, body, None, budget, has_own_meta)
    };
    let Some((winner_key, items, tail, n)) = winner.filter(|&(.., n)| n > 1) else {
        return Some((whole(&mut budget), budget));
    };
    let tail = tail.cloned().unwrap_or_default();

    // One measuring pass (nothing written): the payload's size and each winner item's.
    let item_sizes: Vec<usize> = items.iter().map(js_size).collect();
    let mut total_bytes = 2 + payload.len().saturating_sub(1);
    for (key, v) in payload {
        total_bytes += escaped_len(key) + 1;
        total_bytes += if key == winner_key {
            2 + (n - 1) + item_sizes.iter().sum::<usize>() + tail.size
        } else {
            js_size(v)
        };
    }
    if total_bytes <= limit {
        return Some((whole(&mut budget), budget));
    }
    budget.total_bytes = total_bytes as u64;
    budget.truncated = true;
    budget.hint = hint_for(winner_key).map(str::to_string);

    // Output size with k items kept: the payload minus items k.. (each with its comma),
    // plus `,"_meta":{…}`. It grows with k, so a binary search finds the largest fit.
    let own_meta_len = if has_own_meta {
        js_size(&payload[META])
    } else {
        0
    };
    // removed[k]: the bytes of items k.. and their commas, for the items that were read
    // (the ones after them, if skimmed, made every k past these too large already).
    let read = items.len();
    let mut removed = vec![0; read + 1];
    removed[read] = tail.size + tail.items;
    for k in (1..read).rev() {
        removed[k] = removed[k + 1] + 1 + item_sizes[k];
    }
    let size_with = |k: usize| -> usize {
        let mut report = budget.clone();
        report.returned_items = k as u64;
        let meta_len = meta_bytes(env, &report).len();
        let meta_member = if has_own_meta {
            meta_len as isize - own_meta_len as isize
        } else {
            (META.len() + 4 + meta_len) as isize
        };
        ((total_bytes - removed[k]) as isize + meta_member) as usize
    };
    let (mut lo, mut hi, mut best) = (1, (n - 1).min(read), 1);
    while lo <= hi {
        let mid = lo + (hi - lo) / 2;
        if size_with(mid) <= limit {
            best = mid;
            lo = mid + 1;
        } else {
            hi = mid - 1;
        }
    }
    budget.returned_items = best as u64;

    // Only what is kept gets written.
    let body = write_body(payload, Some(winner_key), best);
    let out = splice(env, payload, body, Some(winner_key), &budget, has_own_meta);
    Some((out, budget))
}

/// The payload object in the JS dialect, the `winner` array cut to its first `kept` items.
fn write_body(payload: &Map<String, Value>, winner: Option<&str>, kept: usize) -> Vec<u8> {
    let mut bytes = Vec::new();
    let mut w = JsonWriter::new(&mut bytes, Dialect::Js);
    w.begin_object();
    for (key, v) in ordered_entries(payload, Dialect::Js) {
        w.key(key);
        match v {
            Value::Array(items) if winner == Some(key.as_str()) => {
                w.begin_array();
                for item in &items[..kept] {
                    w.value(item);
                }
                w.end_array();
            }
            _ => w.value(v),
        }
    }
    w.end_object();
    bytes
}

/// The output document from the payload `body`: `_meta` added as its last member.
fn splice(
    env: &Envelope,
    payload: &Map<String, Value>,
    mut body: Vec<u8>,
    winner: Option<&str>,
    budget: &BudgetReport,
    has_own_meta: bool,
) -> Vec<u8> {
    if has_own_meta || env.layout.reserved_key_index.is_some() {
        // The reserved key keeps its position: rebuild through the writer (rare path).
        let mut doc = payload.clone();
        if let Some(key) = winner
            && let Some(Value::Array(items)) = doc.get_mut(key)
        {
            items.truncate(budget.returned_items as usize);
        }
        return write_document(env, &doc, budget);
    }
    body.pop(); // the closing brace
    if !payload.is_empty() {
        body.push(b',');
    }
    body.extend_from_slice(b"\"_meta\":");
    body.extend_from_slice(&meta_bytes(env, budget));
    body.push(b'}');
    body
}

/// Writes payload + `_meta` (at the remembered position, else last) through the writer.
/// A `_meta` key already in the payload keeps its position and gets the report as value.
fn write_document(env: &Envelope, payload: &Map<String, Value>, budget: &BudgetReport) -> Vec<u8> {
    let has_own_meta = payload.contains_key(META);
    let position = env.layout.reserved_key_index.filter(|_| !has_own_meta);
    let mut out = Vec::new();
    let mut w = JsonWriter::new(&mut out, Dialect::Js);
    w.begin_object();
    let mut meta_written = false;
    for (i, (k, v)) in ordered_entries(payload, Dialect::Js)
        .into_iter()
        .enumerate()
    {
        if position == Some(i) {
            w.key(META);
            write_meta(&mut w, env, budget);
            meta_written = true;
        }
        w.key(k);
        if k == META {
            write_meta(&mut w, env, budget);
            meta_written = true;
        } else {
            w.value(v);
        }
    }
    if !meta_written {
        w.key(META);
        write_meta(&mut w, env, budget);
    }
    w.end_object();
    out
}

/// Encodes `env` as a ctxo document: the payload and its `_meta` (the reference's
/// truncation at `options.ctxo_limit` when the envelope has no budget report of its own),
/// or the ctxo error shape; what ctxo cannot hold goes to `losses`.
pub fn encode(env: &Envelope, options: &EncodeOptions, losses: &mut LossReport) -> Result<Vec<u8>> {
    Ok(encode_skimmed(env, options, losses, &[])?.expect("nothing skimmed: always written"))
}

/// [`encode`] of an envelope whose payload [`skim`](crate::json::skim) read for the
/// compat limit, its skimmed arrays being `tails` (pointers in the payload): `None` when
/// the output would need items that were skimmed.
pub(crate) fn encode_skimmed(
    env: &Envelope,
    options: &EncodeOptions,
    losses: &mut LossReport,
    tails: &[Tail],
) -> Result<Option<Vec<u8>>> {
    let mut held = vec![Field::Budget, Field::Workspace];
    let doc = if let (Status::Error, Some(error)) = (env.status, &env.error) {
        held.push(Field::ErrorCategory);
        report_unheld(env, FormatId::Ctxo, &held, losses);
        let mut map = Map::new();
        map.insert("error".into(), Value::Bool(true));
        map.insert("message".into(), json!(error.message));
        for ext in env.extensions_of(FormatId::Ctxo) {
            if let Some(key) = pointer::child(&ext.pointer, "") {
                if map.contains_key(&key) {
                    losses.push(
                        ext.pointer.clone(),
                        format!("ctxo writes {key:?} itself in an error: the extension is dropped"),
                    );
                    continue;
                }
                map.insert(key, ext.value.clone());
            }
        }
        crate::json::to_vec(&Value::Object(map), Dialect::Js)
    } else {
        if env.budget.is_some() || !env.layout.without_meta {
            // `_meta` is written, and holds the artifact reference.
            held.push(Field::Artifact);
        }
        report_unheld(env, FormatId::Ctxo, &held, losses);
        let json = payload_json(env, FormatId::Ctxo, losses);
        let wrapped;
        let payload = match json.as_ref() {
            Value::Object(map) => map,
            other => {
                losses.push(
                    "payload",
                    "ctxo needs an object payload: wrapped under \"result\"",
                );
                if !tails.is_empty() {
                    // The tails' pointers name places in the payload, not in the wrapper.
                    return Ok(None);
                }
                wrapped = Map::from_iter([("result".to_string(), other.clone())]);
                &wrapped
            }
        };
        if (env.budget.is_some() || !env.layout.without_meta) && payload.contains_key(META) {
            // The reference writes `{...payload, _meta}`: the report takes the key's place.
            losses.push(
                "payload/_meta",
                "the payload's own \"_meta\" is replaced by ctxo's budget report, as the reference replaces it",
            );
        }
        if !tails.is_empty() && (env.budget.is_some() || env.layout.without_meta) {
            // The payload would be written whole, skimmed items and all.
            return Ok(None);
        }
        let limit = options.ctxo_limit.unwrap_or(DEFAULT_LIMIT);
        // A reference `_meta` read from the input (no cuts of ours) describes the payload
        // offload has since replaced with `{summary, artifact}`: the new payload gets its
        // own (issue 12 item 4: a `_meta` that disagrees with its payload is invalid).
        let stale = |b: &BudgetReport| b.cuts.is_empty() && env.artifact.is_some();
        let (doc, written) = match env.budget.as_ref().filter(|b| !stale(b)) {
            Some(budget) => (write_document(env, payload, budget), Some(budget.clone())),
            None if env.layout.without_meta => {
                let mut out = Vec::new();
                JsonWriter::new(&mut out, Dialect::Js).object(payload);
                (out, None)
            }
            None => match compat_truncate_skimmed(env, payload, limit, tails) {
                Some((doc, budget)) => {
                    if budget.truncated {
                        losses.push(
                            "payload",
                            format!(
                                "ctxo's own truncation at its limit of {limit} bytes kept {} of {} items of the largest array (as the reference does)",
                                budget.returned_items, budget.total_items
                            ),
                        );
                    }
                    (doc, Some(budget))
                }
                None => return Ok(None),
            },
        };
        if let Some(budget) = &written {
            for ext in shadowed_meta_extensions(env, budget) {
                losses.push(
                    ext.pointer.clone(),
                    "ctxo writes this `_meta` key from the envelope itself (an earlier shaping's marker is replaced): the extension is dropped",
                );
            }
        }
        doc
    };
    Ok(Some(match &env.layout.transport {
        None => doc,
        Some(t) => transport(t, doc),
    }))
}

/// The MCP result carrying the document as its last text block.
fn transport(t: &Transport, doc: Vec<u8>) -> Vec<u8> {
    let text = String::from_utf8(doc).expect("writer emits UTF-8");
    let mut out = Vec::new();
    let mut w = JsonWriter::new(&mut out, Dialect::Js);
    w.begin_object();
    w.key("content");
    w.begin_array();
    for block in &t.leading_blocks {
        w.value(block);
    }
    crate::formats::mcp::write_text_block(&mut w, &text);
    w.end_array();
    for (key, value) in &t.outer_keys {
        w.field(key, value);
    }
    w.end_object();
    out
}
