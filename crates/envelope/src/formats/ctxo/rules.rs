//! ctxo rules: `_meta` says what happened to the payload, and must agree with it.

use std::collections::HashMap;

use serde_json::{Map, Value};

use crate::formats::ctxo::hint_for;
use crate::formats::findings::Findings;

/// The ctxo rules on a parsed payload.
pub(crate) fn check(value: &Value, f: &mut Findings) {
    check_counted(value, None, f);
}

/// [`check`] on a payload whose root arrays may be abridged: `items` has the number of
/// items of those (see [`validate::abridged`](crate::validate)).
pub(crate) fn check_counted(
    value: &Value,
    items: Option<&HashMap<String, usize>>,
    f: &mut Findings,
) {
    let Some(doc) = value.as_object() else {
        f.report("ctxo.not-object", "", "a ctxo payload is a JSON object");
        return;
    };
    let Some(meta) = doc.get("_meta") else {
        // The reference's error and graceful-miss results carry no `_meta`: they are whole
        // documents of their own, not payloads that could have been cut.
        if is_error_result(doc) || is_graceful_miss(doc) {
            return;
        }
        f.report(
            "ctxo.meta-missing",
            "/_meta",
            "no _meta: nothing says whether the payload is whole",
        );
        return;
    };
    let Some(meta) = meta.as_object() else {
        f.report("ctxo.meta-type", "/_meta", "must be an object");
        return;
    };
    let total = count(meta, "totalItems", f);
    let returned = count(meta, "returnedItems", f);
    count(meta, "totalBytes", f);
    let truncated = match meta.get("truncated") {
        Some(Value::Bool(b)) => Some(*b),
        Some(_) => {
            f.report("ctxo.meta-type", "/_meta/truncated", "must be a boolean");
            None
        }
        None => {
            f.report("ctxo.meta-type", "/_meta/truncated", "missing");
            None
        }
    };
    let hint = match meta.get("hint") {
        None => None,
        Some(Value::String(h)) => Some(h.as_str()),
        Some(_) => {
            f.report("ctxo.meta-type", "/_meta/hint", "must be a string");
            None
        }
    };
    if let Some(w) = meta.get("workspace")
        && !w.is_object()
    {
        f.report("ctxo.meta-type", "/_meta/workspace", "must be an object");
    }

    // A hard byte budget (ours) lists what it cut in `_meta.cuts`: arrays at any depth and
    // under any key, and strings. Then `truncated` says that something was cut, and the
    // counts describe the largest cut array (0 of 0 when only strings were cut), which
    // need not be a top-level array of the reference's list.
    let hard_budget = meta.contains_key("cuts") || meta.contains_key("moreCuts");
    if hard_budget {
        if truncated == Some(false) {
            f.report(
                "ctxo.truncated-flag",
                "/_meta/truncated",
                "is false, but _meta.cuts lists what was cut",
            );
        }
        if let (Some(total), Some(returned)) = (total, returned)
            && returned > total
        {
            f.report(
                "ctxo.returned-gt-total",
                "/_meta/returnedItems",
                format!("{returned} returned of {total} in all"),
            );
        }
    } else if let (Some(total), Some(returned)) = (total, returned) {
        if returned > total {
            f.report(
                "ctxo.returned-gt-total",
                "/_meta/returnedItems",
                format!("{returned} returned of {total} in all"),
            );
        }
        if let Some(truncated) = truncated
            && truncated != (returned < total)
        {
            f.report(
                "ctxo.truncated-flag",
                "/_meta/truncated",
                format!("is {truncated}, but {returned} of {total} items were returned"),
            );
        }
        // The array the counts describe: cut to returnedItems, or whole at totalItems.
        let expected = if truncated == Some(true) {
            returned
        } else {
            total
        };
        let arrays = truncatable_arrays(doc, items);
        if (truncated == Some(true) || total > 0)
            && !arrays.iter().any(|&(_, len)| len as u64 == expected)
        {
            let found: Vec<String> = arrays.iter().map(|(k, n)| format!("{k} has {n}")).collect();
            f.report(
                "ctxo.array-length",
                "/_meta/returnedItems",
                format!(
                    "no truncatable array has {expected} items ({})",
                    if found.is_empty() {
                        "there is none".into()
                    } else {
                        found.join(", ")
                    }
                ),
            );
        }
    }
    if truncated == Some(true) && hint.is_none_or(|h| h.trim().is_empty()) {
        f.report(
            "ctxo.hint",
            "/_meta/hint",
            "a truncated payload must say how to get the rest",
        );
    }
}

/// The reference's error result: `{"error": true, "message": "…"}`.
fn is_error_result(doc: &Map<String, Value>) -> bool {
    doc.get("error") == Some(&Value::Bool(true)) && doc.get("message").is_some_and(Value::is_string)
}

/// The reference's graceful miss: `{"found": false, "hint": "…"}`.
fn is_graceful_miss(doc: &Map<String, Value>) -> bool {
    doc.get("found") == Some(&Value::Bool(false))
}

/// A non-negative integer count of `_meta`.
fn count(meta: &Map<String, Value>, key: &str, f: &mut Findings) -> Option<u64> {
    let at = format!("/_meta/{key}");
    match meta.get(key) {
        Some(v) => {
            let n = v.as_u64();
            if n.is_none() {
                f.report("ctxo.meta-type", at, "must be a non-negative integer");
            }
            n
        }
        None => {
            f.report("ctxo.meta-type", at, "missing");
            None
        }
    }
}

/// Top-level arrays under keys the reference may truncate, with their lengths (from
/// `items` for an abridged array).
fn truncatable_arrays<'d>(
    doc: &'d Map<String, Value>,
    items: Option<&HashMap<String, usize>>,
) -> Vec<(&'d str, usize)> {
    let len = |k: &str, a: &Vec<Value>| items.and_then(|i| i.get(k).copied()).unwrap_or(a.len());
    doc.iter()
        .filter(|(k, _)| hint_for(k).is_some())
        .filter_map(|(k, v)| v.as_array().map(|a| (k.as_str(), len(k, a))))
        .collect()
}
