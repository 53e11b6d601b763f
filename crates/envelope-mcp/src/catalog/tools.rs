//! The `envelope_search` and `envelope_list` tools: their `tools/list` entries and their
//! answers, each a `CallToolResult` within the proxy's byte limit (the text block is the
//! compact JSON mirror of `structuredContent`). Bad arguments are `isError` results saying
//! what is wrong, never a panic.

use std::collections::HashMap;

use envelope_store::{Digest, Store, StoreError};
use serde_json::{Map, Value, json};

use super::chunks::{Unit, cut_chars};
use super::query::Terms;
use super::{Catalog, Hit, Listed, Ranked};
use crate::drill::{self, URI_PREFIX};

/// The name of the search tool.
pub const SEARCH_TOOL: &str = "envelope_search";

/// The name of the list tool.
pub const LIST_TOOL: &str = "envelope_list";

/// Hits per search unless `limit` says otherwise, and the most it may say.
const SEARCH_DEFAULT: usize = 10;
const SEARCH_MAX: usize = 50;

/// Entries per list unless `limit` says otherwise, and the most it may say.
const LIST_DEFAULT: usize = 20;
const LIST_MAX: usize = 100;

/// The longest query taken, in characters.
const QUERY_MAX: usize = 1000;

/// Characters shown of a matching chunk, and of each line of context.
const LINE_CHARS: usize = 240;
const CONTEXT_CHARS: usize = 120;

/// Characters shown of a hit when a full one does not fit the limit.
const SHORT_LINE_CHARS: usize = 60;

/// The `envelope_search` entry for `tools/list`.
pub fn search_tool() -> Value {
    json!({
        "name": SEARCH_TOOL,
        "title": "Search stored tool results",
        "description": "Full-text search (BM25-ranked) over the full results this session stored \
    when they were cut to fit the size limit. Each hit is the matching line (or record) with the \
    lines around it, the artifact `uri`, and the `pointer` and `offset` to pass to envelope_read \
    to read on from that very place (offset counts characters in a text, items in an array). \
    Plain words must all match (when none match together, any may); \"quoted words\" are a \
    phrase; a trailing * matches a prefix. When a query matches very many lines, the best of \
    the newest 5,000 are shown and `ranked` says so. Examples: \
    {\"query\": \"connection refused\"} searches every stored result; \
    {\"query\": \"\\\"disk full\\\" error\", \"uri\": \"envelope://artifact/sha256/<hex>\", \"limit\": 5} searches one; \
    then {\"uri\": <hit.uri>, \"pointer\": <hit.pointer>, \"offset\": <hit.offset>} with envelope_read reads from the hit on.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "query": {
                    "type": "string",
                    "minLength": 1,
                    "description": "Words to find (all of them), \"a phrase\", or prefix*."
                },
                "uri": {
                    "type": "string",
                    "description": "Search only this stored result: envelope://artifact/sha256/<64 hex>."
                },
                "limit": {
                    "type": "integer", "minimum": 1, "maximum": SEARCH_MAX,
                    "description": "At most this many hits (default 10; fewer when they do not fit the size limit)."
                }
            },
            "required": ["query"],
            "additionalProperties": false
        },
        "outputSchema": {
            "type": "object",
            "properties": {
                "query": {"type": "string"},
                "matched": {"enum": ["all", "any"], "description": "all: every word matched; any: no line had them all."},
                "hits": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "uri": {"type": "string"},
                            "pointer": {"type": "string"},
                            "offset": {"type": "integer", "minimum": 0},
                            "text": {"type": "string", "description": "The matching line or record."},
                            "before": {"type": "string"},
                            "after": {"type": "string"}
                        },
                        "required": ["uri", "pointer", "offset", "text"]
                    }
                },
                "more": {"type": "boolean", "description": "More hits were found than are shown (raise limit, or narrow the query)."},
                "ranked": {"type": "string", "description": "Present when more lines matched than one search ranks: the hits are the best of the newest matching lines, and it says how many were ranked of how many matched (more words, a phrase or a uri narrow the search)."}
            },
            "required": ["query", "matched", "hits", "more"],
            "additionalProperties": false
        },
        "annotations": {"readOnlyHint": true, "idempotentHint": true, "openWorldHint": false}
    })
}

/// The `envelope_list` entry for `tools/list`.
pub fn list_tool() -> Value {
    json!({
        "name": LIST_TOOL,
        "title": "List stored tool results",
        "description": "The full results this session stored when they were cut to fit the size \
    limit, newest first: the tool, a digest of its arguments, when, size in bytes, kind \
    (text, records or json), a one-line summary and the `uri` to pass to envelope_read or \
    envelope_search. Examples: {} lists the newest 20; {\"limit\": 5}; \
    {\"offset\": 20} reads on (the previous answer's next_offset).",
        "inputSchema": {
            "type": "object",
            "properties": {
                "limit": {"type": "integer", "minimum": 1, "maximum": LIST_MAX,
                          "description": "At most this many (default 20)."},
                "offset": {"type": "integer", "minimum": 0,
                           "description": "Skip this many of the newest (the previous answer's next_offset)."}
            },
            "additionalProperties": false
        },
        "outputSchema": {
            "type": "object",
            "properties": {
                "results": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "uri": {"type": "string"},
                            "tool": {"type": "string"},
                            "arguments_digest": {"type": ["string", "null"]},
                            "time": {"type": "string"},
                            "size": {"type": "integer", "minimum": 0},
                            "kind": {"enum": ["text", "records", "json"]},
                            "summary": {"type": "string"}
                        },
                        "required": ["uri", "tool", "time", "size", "kind", "summary"]
                    }
                },
                "offset": {"type": "integer", "minimum": 0},
                "next_offset": {"type": ["integer", "null"], "minimum": 0},
                "total": {"type": "integer", "minimum": 0}
            },
            "required": ["results", "offset", "next_offset", "total"],
            "additionalProperties": false
        },
        "annotations": {"readOnlyHint": true, "idempotentHint": true, "openWorldHint": false}
    })
}

/// The caller a search or list answers: the catalog, the caller's store (to leave out what
/// it no longer holds) and the caller's identity.
pub struct Caller<'a> {
    /// The process's catalog.
    pub catalog: &'a Catalog,
    /// The store as the caller sees it.
    pub store: &'a dyn Store,
    /// The caller's identity (`None`: everything).
    pub owner: Option<&'a str>,
}

/// Answers `envelope_search` with `arguments`; the result's compact JSON is at most `limit`
/// bytes (for a `limit` of 256 or more). Blocks (SQLite, store reads).
pub fn call_search(arguments: &Value, caller: &Caller<'_>, limit: usize) -> Value {
    search(arguments, caller, limit).unwrap_or_else(|message| error_result(&message, limit))
}

/// Answers a call of `envelope_search` (`search`) or `envelope_list` with `arguments` for
/// `owner`'s results in `store`, on a blocking thread (SQLite, and the store asked which
/// results are still there): what the proxy and `serve` run for a call of either tool.
pub async fn answer_blocking(
    catalog: std::sync::Arc<Catalog>,
    store: std::sync::Arc<dyn Store>,
    owner: Option<String>,
    search: bool,
    arguments: Value,
    settings: crate::shaping::ToolSettings,
) -> Value {
    tokio::task::spawn_blocking(move || {
        let caller = Caller {
            catalog: &catalog,
            store: store.as_ref(),
            owner: owner.as_deref(),
        };
        // Within the tool's limits: bytes, and tokens when it has a token limit.
        crate::shaping::answer_within(&settings, |limit| match search {
            true => call_search(&arguments, &caller, limit),
            false => call_list(&arguments, &caller, limit),
        })
    })
    .await
    .unwrap_or_else(|e| {
        json!({"content": [{"type": "text", "text": format!("the catalog failed: {e}")}], "isError": true})
    })
}

/// Answers `envelope_list` with `arguments`, as [`call_search`].
pub fn call_list(arguments: &Value, caller: &Caller<'_>, limit: usize) -> Value {
    list(arguments, caller, limit).unwrap_or_else(|message| error_result(&message, limit))
}

fn search(arguments: &Value, caller: &Caller<'_>, limit: usize) -> Result<Value, String> {
    let args = object(arguments, SEARCH_TOOL, &["query", "uri", "limit"])?;
    let query =
        match args.get("query") {
            Some(Value::String(q)) if !q.trim().is_empty() => q,
            Some(Value::String(_)) | None => return Err(
                "`query` is missing: give the words to find, e.g. {\"query\": \"timeout error\"}"
                    .into(),
            ),
            Some(_) => return Err("`query` must be a string of words".into()),
        };
    if query.chars().count() > QUERY_MAX {
        return Err(format!(
            "`query` is over {QUERY_MAX} characters: give a few words"
        ));
    }
    let terms = Terms::parse(query).ok_or_else(|| {
        format!(
            "`query` {} has no word to search for (letters or digits)",
            Value::from(cut_chars(query, 60))
        )
    })?;
    let count = count(args, "limit", SEARCH_DEFAULT, SEARCH_MAX)?;
    let only = match args.get("uri") {
        None => None,
        Some(Value::String(uri)) => {
            let digest = drill::parse_artifact_uri(uri).ok_or_else(|| {
                format!(
                    "{} is not an artifact URI: expected {URI_PREFIX}<64 hex digits>",
                    envelope_store::echoed(uri)
                )
            })?;
            if let Err(e) = caller.store.sidecar(&digest) {
                return Err(missing(uri, &e));
            }
            Some(digest)
        }
        Some(_) => return Err("`uri` must be a string".into()),
    };
    // One more than asked: whether there are more.
    let found = caller
        .catalog
        .search(caller.owner, &terms, only.as_ref(), count + 1)
        .map_err(|e| format!("the search failed: {e}"))?;
    let mut present = Presence::new(caller);
    let hits: Vec<&Hit> = found
        .hits
        .iter()
        .filter(|h| present.holds(&h.digest))
        .collect();
    let mut more = hits.len() > count;
    let mut shown: Vec<Value> = Vec::new();
    let ranked = found.ranked.map(|r| ranked_sentence(&r));
    let build = |shown: &[Value], more: bool| {
        let mut answer =
            json!({"query": query, "matched": found.matched, "hits": shown, "more": more});
        if let Some(ranked) = &ranked {
            answer["ranked"] = Value::from(ranked.as_str());
        }
        mirrored(answer)
    };
    for hit in hits.into_iter().take(count) {
        shown.push(hit_value(hit, LINE_CHARS, CONTEXT_CHARS));
        if size(&build(&shown, more)) > limit {
            shown.pop();
            more = true;
            // A small limit: the first hit at least, shortened, rather than none.
            if shown.is_empty() {
                shown.push(hit_value(hit, SHORT_LINE_CHARS, 0));
                if size(&build(&shown, more)) > limit {
                    shown.pop();
                }
            }
            break;
        }
    }
    let result = build(&shown, more);
    match size(&result) <= limit {
        true => Ok(result),
        false => Err(format!(
            "the query is too long to answer within {limit} bytes"
        )),
    }
}

/// What `ranked` says of a search that ranked a part of its matches.
fn ranked_sentence(ranked: &Ranked) -> String {
    let of = match ranked.more_than {
        true => format!("more than {}", thousands(ranked.matching)),
        false => thousands(ranked.matching),
    };
    format!(
        "the newest {} of {of} matching lines (the hits are the best of these by BM25; more words, a phrase or a uri narrow the search)",
        thousands(ranked.ranked)
    )
}

/// `183211` as `183,211`.
pub(super) fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A hit as the answer shows it: the matching part of the chunk (markers taken out), the
/// lines around it when it is a line of a text.
fn hit_value(hit: &Hit, line_chars: usize, context_chars: usize) -> Value {
    let mut value = json!({
        "uri": format!("{URI_PREFIX}{}", hit.digest.trim_start_matches("sha256:")),
        "pointer": hit.pointer,
        "offset": hit.offset,
        "text": around_match(&hit.marked, line_chars),
    });
    if hit.unit == Unit::Char && context_chars > 0 {
        for (name, line) in [("before", &hit.before), ("after", &hit.after)] {
            if let Some(line) = line {
                value[name] = Value::from(cut_chars(line, context_chars));
            }
        }
    }
    value
}

/// At most `max` characters of `marked` around its first match, the markers removed.
fn around_match(marked: &str, max: usize) -> String {
    let at = marked
        .find('\u{1}')
        .map_or(0, |b| marked[..b].chars().count());
    let plain: String = marked
        .chars()
        .filter(|c| !matches!(c, '\u{1}' | '\u{2}'))
        .collect();
    let total = plain.chars().count();
    if total <= max {
        return plain;
    }
    // A third of the room before the match.
    let start = at.saturating_sub(max / 3).min(total - max);
    let window: String = plain.chars().skip(start).take(max).collect();
    let head = if start > 0 { "…" } else { "" };
    let tail = if start + max < total { "…" } else { "" };
    format!("{head}{window}{tail}")
}

fn list(arguments: &Value, caller: &Caller<'_>, limit: usize) -> Result<Value, String> {
    let args = object(arguments, LIST_TOOL, &["limit", "offset"])?;
    let count = count(args, "limit", LIST_DEFAULT, LIST_MAX)?;
    let offset = match args.get("offset") {
        None => 0,
        Some(v) => v
            .as_u64()
            .ok_or("`offset` must be a whole number, 0 or more")? as usize,
    };
    let (entries, total) = caller
        .catalog
        .list(caller.owner, count, offset)
        .map_err(|e| format!("the list failed: {e}"))?;
    let mut present = Presence::new(caller);
    let build = |shown: &[Value], next: Option<usize>| {
        mirrored(json!({"results": shown, "offset": offset, "next_offset": next, "total": total}))
    };
    let mut shown = Vec::new();
    let mut consumed = 0;
    let mut cut = false;
    for entry in &entries {
        if !present.holds(&entry.digest) {
            consumed += 1;
            continue;
        }
        shown.push(entry_value(entry));
        if size(&build(&shown, Some(offset + consumed + 1))) > limit {
            shown.pop();
            cut = true;
            break;
        }
        consumed += 1;
    }
    let next = (cut || offset + consumed < total).then_some(offset + consumed);
    Ok(build(&shown, next))
}

fn entry_value(entry: &Listed) -> Value {
    json!({
        "uri": format!("{URI_PREFIX}{}", entry.digest.trim_start_matches("sha256:")),
        "tool": entry.tool,
        "arguments_digest": entry.arguments_digest,
        "time": entry.time,
        "size": entry.size,
        "kind": entry.kind,
        "summary": entry.summary,
    })
}

/// Whether the caller's store still holds each result (a gc may have evicted it): results
/// it does not hold are left out of the answer and forgotten by the catalog.
struct Presence<'a> {
    caller: &'a Caller<'a>,
    known: HashMap<String, bool>,
}

impl<'a> Presence<'a> {
    fn new(caller: &'a Caller<'a>) -> Self {
        Presence {
            caller,
            known: HashMap::new(),
        }
    }

    fn holds(&mut self, digest: &str) -> bool {
        if let Some(known) = self.known.get(digest) {
            return *known;
        }
        let holds = match digest.parse::<Digest>() {
            Ok(d) => !matches!(
                self.caller.store.sidecar(&d),
                Err(StoreError::NotFound(_)) | Err(StoreError::BadSidecar { .. })
            ),
            Err(_) => false,
        };
        if !holds {
            self.caller.catalog.forget(digest, self.caller.owner);
        }
        self.known.insert(digest.to_string(), holds);
        holds
    }
}

/// The arguments as an object with only `allowed` members.
fn object<'v>(
    arguments: &'v Value,
    tool: &str,
    allowed: &[&str],
) -> Result<&'v Map<String, Value>, String> {
    static EMPTY: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();
    let args = match arguments {
        Value::Null => EMPTY.get_or_init(Map::new),
        Value::Object(args) => args,
        _ => return Err(format!("the arguments of {tool} must be an object")),
    };
    if let Some(unknown) = args.keys().find(|k| !allowed.contains(&k.as_str())) {
        return Err(format!(
            "{tool} has no argument {}: it takes {}",
            Value::from(cut_chars(unknown, 40)),
            allowed.join(", ")
        ));
    }
    Ok(args)
}

/// A `limit` argument: `default` when absent, 1 to `max`.
fn count(
    args: &Map<String, Value>,
    name: &str,
    default: usize,
    max: usize,
) -> Result<usize, String> {
    match args.get(name) {
        None => Ok(default),
        Some(v) => match v.as_u64() {
            Some(n) if n >= 1 && n <= max as u64 => Ok(n as usize),
            _ => Err(format!("`{name}` must be a whole number from 1 to {max}")),
        },
    }
}

/// The message for a result the caller's store does not hold.
fn missing(uri: &str, error: &StoreError) -> String {
    match error {
        StoreError::NotFound(_) => format!(
            "{} is not in the store (it was never stored here, or was removed)",
            envelope_store::echoed(uri)
        ),
        other => format!("{} cannot be read: {other}", envelope_store::echoed(uri)),
    }
}

/// A result with `structured` as `structuredContent` and its compact JSON as the text.
fn mirrored(structured: Value) -> Value {
    json!({
        "content": [{"type": "text", "text": structured.to_string()}],
        "structuredContent": structured,
    })
}

fn size(value: &Value) -> usize {
    serde_json::to_vec(value).map_or(usize::MAX, |b| b.len())
}

/// An `isError` result with `message`, cut to fit `limit` where it can.
fn error_result(message: &str, limit: usize) -> Value {
    let build = |text: &str| json!({"content": [{"type": "text", "text": text}], "isError": true});
    let mut keep = message.chars().count();
    let mut answer = build(message);
    while keep > 0 && size(&answer) > limit {
        keep = keep.saturating_sub((size(&answer) - limit).max(1) + 3);
        answer = build(&format!(
            "{}...",
            message.chars().take(keep).collect::<String>()
        ));
    }
    answer
}
