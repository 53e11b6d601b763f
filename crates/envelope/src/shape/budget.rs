//! The hard byte budget: the whole encoded envelope, in its target format, is at most
//! `limit` bytes — payload, metadata and markers included — or there is no output at all.
//!
//! The payload is measured once ([`Measured`]); each attempt cuts it to a payload budget,
//! encodes the (small) result and checks the real size; the payload budget shrinks by what
//! the attempt overshot until it fits. Encoding is what decides, so format overheads (base64,
//! the MCP text mirror, markers that grow with the cuts) are always accounted for.

use std::borrow::Cow;

use serde_json::Value;

use super::cut::Measured;
use crate::error::{Error, Result};
use crate::formats::{self, EncodeOptions, Encoded, FormatId};
use crate::model::{BudgetReport, Cut, CutUnit, Envelope, Payload};

/// An envelope fitted to a budget.
#[derive(Debug)]
pub struct Fitted {
    /// The output: at most the limit in bytes, and what the format lost of it.
    pub encoded: Encoded,
    /// The envelope that was encoded (payload cut, budget report set), when anything was cut.
    pub envelope: Option<Envelope>,
}

/// At most this many attempts before falling back to the minimal envelope.
const MAX_ATTEMPTS: usize = 64;

/// Encodes `env` as `format` in at most `limit` bytes.
///
/// Fails with [`Error::BudgetTooSmall`] only when not even a minimal envelope (no payload, a
/// marker saying so) fits; it never returns more than `limit` bytes.
pub fn fit(
    env: &Envelope,
    format: FormatId,
    limit: usize,
    options: &EncodeOptions,
) -> Result<Fitted> {
    let payload = payload_value(&env.payload);
    let measured = Measured::bounded(&payload, limit);
    fit_measured(env, &payload, &measured, format, limit, options)
}

/// [`fit`] with the payload measured for `limit` already.
pub(crate) fn fit_measured(
    env: &Envelope,
    payload: &Value,
    measured: &Measured,
    format: FormatId,
    limit: usize,
    options: &EncodeOptions,
) -> Result<Fitted> {
    // Every format writes the payload at least once, so its compact JS size is a lower bound
    // of the output (up to number spellings: Newtonsoft writes 1e15 as 1E+15): the full
    // encoding is only tried when it might fit.
    if measured.size() <= limit {
        let full = formats::encode(format, env, options)?;
        if full.bytes.len() <= limit {
            return Ok(Fitted {
                encoded: full,
                envelope: None,
            });
        }
    }
    let total_bytes = measured.size() as u64;

    let mut budget = measured.size().min(limit);
    // (payload size, encoded size) of the last attempt: with two points the overhead and
    // the expansion of the format (base64, the MCP mirror) are estimated as a line.
    let mut previous: Option<(usize, usize)> = None;
    for _ in 0..MAX_ATTEMPTS {
        let Some(level) = measured.level_for(payload, budget) else {
            break;
        };
        let mut cuts = Vec::new();
        let cut = measured.cut(payload, level, "", &mut cuts);
        let candidate = cut_envelope(env, cut, cuts, total_bytes, limit);
        let encoded = formats::encode(format, &candidate, options)?;
        if encoded.bytes.len() <= limit {
            return Ok(Fitted {
                encoded,
                envelope: Some(candidate),
            });
        }
        let size = measured.size_at(payload, level);
        if size == 0 || level == 0 {
            break;
        }
        budget = next_budget(previous, (size, encoded.bytes.len()), limit);
        previous = Some((size, encoded.bytes.len()));
    }
    minimal(env, format, limit, options, total_bytes)
}

/// The next payload budget after an attempt of `size` payload bytes gave `encoded` bytes
/// (more than `limit`); always smaller than `size`.
fn next_budget(
    previous: Option<(usize, usize)>,
    (size, encoded): (usize, usize),
    limit: usize,
) -> usize {
    let proportional = size * limit / encoded;
    let estimate = match previous {
        // The slope between two attempts is the format's expansion of payload bytes.
        Some((s0, e0)) if s0 > size && e0 > encoded => {
            let slope = (e0 - encoded) as f64 / (s0 - size) as f64;
            let shrink = ((encoded - limit) as f64 / slope).ceil() as usize;
            size.saturating_sub(shrink)
        }
        _ => proportional,
    };
    estimate.min(size - 1)
}

/// The payload as the JSON value that gets cut (text as a string, blocks as an array),
/// borrowed when it is JSON already.
pub(crate) fn payload_value(payload: &Payload) -> Cow<'_, Value> {
    match payload {
        // Bytes cannot be cut meaningfully: they are kept whole or dropped.
        Payload::Bytes { .. } | Payload::None => Cow::Owned(Value::Null),
        other => other.json(),
    }
}

/// `env` with the cut payload and a budget report that says what was cut.
fn cut_envelope(
    env: &Envelope,
    cut: Value,
    cuts: Vec<Cut>,
    total_bytes: u64,
    limit: usize,
) -> Envelope {
    let mut out = env.clone_without_payload();
    out.payload = match (&env.payload, cut) {
        (Payload::Text(_), Value::String(s)) => Payload::Text(s),
        (Payload::Blocks(_), Value::Array(blocks)) => Payload::Blocks(blocks),
        (Payload::Bytes { .. } | Payload::None, _) => Payload::None,
        (_, cut) => Payload::Json(cut),
    };
    // Content rendered from the old payload would contradict the cut one: the presentation
    // stays empty and is rendered from the cut payload.
    out.budget = Some(report(cuts, total_bytes, limit));
    out
}

fn report(cuts: Vec<Cut>, total_bytes: u64, limit: usize) -> BudgetReport {
    // ctxo's item counts describe the largest array cut.
    let largest = cuts
        .iter()
        .filter(|c| c.unit == CutUnit::Items)
        .max_by_key(|c| c.total)
        .cloned();
    BudgetReport {
        total_items: largest.as_ref().map_or(0, |c| c.total),
        returned_items: largest.as_ref().map_or(0, |c| c.kept),
        truncated: true,
        total_bytes,
        hint: Some(hint(&cuts, limit)),
        cuts,
    }
}

/// A drill-in hint naming the largest cut (array cuts before string cuts).
pub fn hint(cuts: &[Cut], limit: usize) -> String {
    let largest = cuts.iter().max_by_key(|c| {
        (
            c.pointer.is_empty(),
            c.unit == CutUnit::Items,
            c.total - c.kept,
        )
    });
    match largest {
        Some(c) if c.pointer.is_empty() => format!(
            "Output truncated to fit {limit} bytes: the payload was left out. Ask for less."
        ),
        Some(c) => {
            let more = match cuts.len() {
                1 => String::new(),
                n => format!(" ({n} cuts in all)"),
            };
            format!(
                "Output truncated to fit {limit} bytes: {} kept {} of {} {}{more}. Narrow the request or page through the rest.",
                c.pointer,
                c.kept,
                c.total,
                c.unit.as_str()
            )
        }
        None => format!("Output truncated to fit {limit} bytes."),
    }
}

/// No payload, a report that says so; then without summary and presentation. Else an error.
fn minimal(
    env: &Envelope,
    format: FormatId,
    limit: usize,
    options: &EncodeOptions,
    total_bytes: u64,
) -> Result<Fitted> {
    let whole = vec![Cut {
        pointer: String::new(),
        kept: 0,
        total: total_bytes,
        unit: CutUnit::Bytes,
    }];
    let mut candidate = cut_envelope(env, Value::Null, whole, total_bytes, limit);
    candidate.payload = Payload::None;
    let mut smallest = usize::MAX;
    for strip in 0..3 {
        match strip {
            1 => candidate.summary = None,
            2 => {
                candidate.extensions.clear();
                if let Some(b) = &mut candidate.budget {
                    b.hint = None;
                }
            }
            _ => {}
        }
        let encoded = formats::encode(format, &candidate, options)?;
        if encoded.bytes.len() <= limit {
            return Ok(Fitted {
                encoded,
                envelope: Some(candidate),
            });
        }
        smallest = smallest.min(encoded.bytes.len());
    }
    Err(Error::BudgetTooSmall {
        format: format.as_str(),
        limit,
        minimum: smallest,
    })
}
