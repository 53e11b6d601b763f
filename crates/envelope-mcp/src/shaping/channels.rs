//! The cut of a result whose two channels say the same thing in two forms: text blocks that
//! are not the JSON mirror of `structuredContent` (server-filesystem's `read_text_file`
//! sends the file as plain text *and* as `{"content": "<the file>"}`; `directory_tree`, a
//! JSON text and that text again as a string).
//!
//! The library's cut reads such a result as a JSON payload with a presentation and, once
//! cut, writes the text channel as the JSON of the cut `structuredContent`: one long line
//! of escaped text, the file's bytes escaped twice. Here each channel keeps the form the
//! server gave it instead:
//!
//! - a text block stays the same text, cut at a line boundary where one is near (within
//!   the last quarter of what fits): plain text stays plain text, JSON text stays JSON text
//!   (a prefix of it, never re-spelled);
//! - `structuredContent` is cut by the library's fair cut (arrays keep a prefix, strings are
//!   cut, keys stay), so it still validates against most schemas (checked by the caller).
//!
//! How the room is shared between the two is the tool's [`Channels`] setting.
//!
//! Every pointer the notice and the `_meta` budget marker name is a pointer into the whole
//! stored result (`/content/0/text`, `/structuredContent/…`), the one `envelope_read`
//! takes, and the notice ends with the `envelope_read` call that reads on from where the
//! largest cut stopped.

use envelope::json::size::js_size;
use envelope::model::{Cut, CutUnit};
use envelope::shape::cut::Measured;
use std::collections::BTreeMap;

use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use super::limits::Limits;
use super::notice::Notices;
use super::{CallContext, Channels};

/// The `_meta` key of the library's budget marker.
const BUDGET_KEY: &str = envelope::formats::mcp::BUDGET_META_KEY;

/// The parts of a result the channel cut applies to.
pub(crate) struct Parts {
    /// The result's members in order, `content` and `structuredContent` included.
    members: Map<String, Value>,
}

/// `full` (compact JSON as the JS writer writes it) when its channels differ in form: a
/// `structuredContent`, text blocks only (at least one), none of them the mirror of
/// `structuredContent`, not an error. `None`: the library's cut applies (a mirror, no
/// `structuredContent`, other blocks).
pub(crate) fn parts(full: &[u8]) -> Option<Parts> {
    if full.first() != Some(&b'{') {
        return None;
    }
    // The JS writer writes a key as these bytes (it escapes no letter): a result without
    // them anywhere has no `structuredContent`, and is not read here (a 50 MB text result
    // took 25-35 ms to read so).
    memchr::memmem::find(full, br#""structuredContent":"#)?;
    // Told on the text first, nothing built: a mirror (the common case, and the one whose
    // large results the library reads skimmed) never builds the result here.
    let raw: BTreeMap<String, &RawValue> = serde_json::from_slice(full).ok()?;
    let sc = raw.get("structuredContent")?.get();
    if raw.get("isError").map(|v| v.get()) == Some("true") {
        return None;
    }
    let blocks: Vec<RawBlock<'_>> = serde_json::from_str(raw.get("content")?.get()).ok()?;
    if blocks.is_empty() {
        return None;
    }
    for block in &blocks {
        let text = match (block.kind.as_deref(), block.text) {
            (Some("text"), Some(text)) => text.get(),
            _ => return None,
        };
        if is_mirror(text, sc) {
            return None;
        }
    }
    let members: Map<String, Value> = serde_json::from_slice(full).ok()?;
    members
        .get("content")
        .and_then(Value::as_array)
        .is_some_and(|b| {
            b.iter()
                .all(|b| b.get("text").is_some_and(Value::is_string))
        })
        .then_some(Parts { members })
}

/// A content block as written: its `type` and its `text` (unread), other members skipped.
#[derive(serde::Deserialize)]
struct RawBlock<'a> {
    #[serde(rename = "type", borrow)]
    kind: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow)]
    text: Option<&'a RawValue>,
}

/// Whether the JSON string literal `literal` holds exactly the text `json` (the compact
/// JSON of `structuredContent` as stored): compared escape by escape, nothing decoded.
fn is_mirror(literal: &str, json: &str) -> bool {
    let Some(inner) = literal.strip_prefix('"').and_then(|l| l.strip_suffix('"')) else {
        return false;
    };
    let mut at = inner.as_bytes();
    let mut buf: [u8; 6];
    for &b in json.as_bytes() {
        let escaped: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0x08 => b"\\b",
            0x0c => b"\\f",
            b if b < 0x20 => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                buf = [
                    b'\\',
                    b'u',
                    b'0',
                    b'0',
                    HEX[usize::from(b >> 4)],
                    HEX[usize::from(b & 15)],
                ];
                &buf
            }
            _ => std::slice::from_ref(&b),
        };
        match at.strip_prefix(escaped) {
            Some(rest) => at = rest,
            None => return false,
        }
    }
    at.is_empty()
}

/// The result cut to fit `inner` (the limits with the link's bytes and tokens already set
/// aside; the caller appends the link). `named`: the limits as the notice names them and
/// the bytes it is sized by. `None` when no form fits.
pub(crate) fn cut(
    parts: &Parts,
    notices: &Notices<'_>,
    call: &CallContext,
    channels: Channels,
    inner: &Limits,
    named: (&str, usize),
) -> Option<Value> {
    let shaper = Shaper::new(parts, notices, call, channels, named)?;
    if inner.tokens.is_some() {
        return fit_tokens(&shaper, inner);
    }
    // The fixed parts (the other members, the notice, the marker) are guessed first, then
    // measured: the room shrinks by what an attempt overshot, or grows once into what it
    // left.
    let budget = inner.room();
    let mut room = budget.saturating_sub(700);
    let mut best: Option<Value> = None;
    for _ in 0..12 {
        let Some(out) = shaper.attempt(room) else {
            return best;
        };
        let size = js_size(&out);
        if size > budget {
            if best.is_some() {
                return best;
            }
            room = room.saturating_sub(size - budget + 8);
            continue;
        }
        let slack = budget - size;
        best = Some(out);
        if slack <= 64 || room >= budget {
            return best;
        }
        room += slack - 16;
    }
    best
}

/// [`cut`] under a token limit: sizes are costs (`Limits::cost`: the token count in bytes of
/// the room, or the bytes), and what an attempt overshot or left is turned into bytes of
/// the channels by the attempt's own bytes per cost (CJK text and digits take more tokens a
/// byte than the estimate the room is sized by). The room moves between the largest that
/// fitted and the smallest that did not, until the output is within 2% of the room.
fn fit_tokens(shaper: &Shaper<'_>, inner: &Limits) -> Option<Value> {
    let budget = inner.room();
    let mut room = budget.saturating_sub(700);
    let mut best: Option<Value> = None;
    let (mut fits, mut fails) = (0usize, usize::MAX);
    for _ in 0..12 {
        let Some(out) = shaper.attempt(room) else {
            return best;
        };
        let bytes = envelope::json::to_vec(&out, envelope::json::Dialect::Js);
        let cost = inner.cost(&bytes).max(1);
        // Bytes of output a unit of cost stands for, in this attempt.
        let in_bytes = |units: usize| (units as u128 * bytes.len() as u128 / cost as u128) as usize;
        let next = if cost > budget {
            fails = fails.min(room);
            room.saturating_sub(in_bytes(cost - budget) + 8)
        } else {
            let slack = budget - cost;
            fits = fits.max(room);
            best = Some(out);
            if slack <= budget / 50 {
                return best;
            }
            room + in_bytes(slack).saturating_sub(16)
        };
        // Never back to a room known to fail or to fit: halfway between them instead.
        room = match next {
            n if n >= fails || (n <= fits && best.is_some()) => {
                fits + fails.saturating_sub(fits) / 2
            }
            n => n,
        };
        if best.is_some() && fails.saturating_sub(fits) <= 16 {
            return best;
        }
    }
    best
}

/// The text blocks' share of the room (percent) by default when `structuredContent` holds
/// a text block's very text as one of its members (`{"content": "<the text>"}`): the model
/// reads the text channel, and a program reading `structuredContent` reads on with
/// `envelope_read` as well.
pub(crate) const DUPLICATE_TEXT_SHARE: usize = 67;

/// Whether a member of `structuredContent` (an object) is the very text of a text block.
fn duplicates(blocks: &[Value], sc: &Value) -> bool {
    let Some(members) = sc.as_object() else {
        return false;
    };
    members.values().filter_map(Value::as_str).any(|s| {
        blocks
            .iter()
            .any(|b| b.get("text").and_then(Value::as_str) == Some(s))
    })
}

struct Shaper<'a> {
    parts: &'a Parts,
    blocks: &'a [Value],
    sc: &'a Value,
    measured: Measured,
    text_share: usize,
    pointer_only: bool,
    total_bytes: usize,
    /// The limits as the notice names them (`16384 bytes`, `4000 tokens (o200k_base)`).
    names: &'a str,
    /// The bytes the notice is sized by.
    scale: usize,
    notices: &'a Notices<'a>,
}

impl<'a> Shaper<'a> {
    fn new(
        parts: &'a Parts,
        notices: &'a Notices<'a>,
        call: &CallContext,
        channels: Channels,
        (names, scale): (&'a str, usize),
    ) -> Option<Self> {
        let blocks = parts.members.get("content")?.as_array()?;
        let sc = parts.members.get("structuredContent")?;
        let text_size: usize = blocks.iter().map(js_size).sum();
        let sc_size = js_size(sc);
        let text_share = match channels {
            Channels::Both {
                text_share: Some(p),
            } => usize::from(p.min(100)),
            _ if duplicates(blocks, sc) => DUPLICATE_TEXT_SHARE,
            _ => (text_size * 100 / (text_size + sc_size).max(1)).clamp(1, 99),
        };
        Some(Shaper {
            parts,
            blocks,
            sc,
            measured: Measured::new(sc),
            text_share,
            // A pointer instead of the text needs a schema for the structured channel to
            // mean anything.
            pointer_only: matches!(channels, Channels::Pointer) && call.output_schema.is_some(),
            total_bytes: js_size(&Value::Object(parts.members.clone())),
            names,
            scale,
            notices,
        })
    }

    /// The result with the two channels sharing `room` bytes.
    fn attempt(&self, room: usize) -> Option<Value> {
        let (text_room, sc_room) = match self.pointer_only {
            true => (0, room.saturating_sub(160)),
            false => {
                let t = room * self.text_share / 100;
                (t, room - t)
            }
        };
        let mut cuts: Vec<Cut> = Vec::new();
        // (pointer, offset) of each cut, in the order the model reads them.
        let mut read_on: Vec<(String, usize)> = Vec::new();
        let mut out_blocks = Vec::new();
        if self.pointer_only {
            out_blocks.push(json!({"type": "text", "text": format!(
                "The result is in structuredContent ({} bytes of JSON before any cut): this text channel carries this line instead of a second copy.",
                js_size(self.sc)
            )}));
            for (i, block) in self.blocks.iter().enumerate() {
                let total = block["text"].as_str().map_or(0, str::len);
                cuts.push(Cut {
                    pointer: format!("/content/{i}/text"),
                    kept: 0,
                    total: total as u64,
                    unit: CutUnit::Bytes,
                });
            }
        } else {
            let mut left = text_room;
            for (i, block) in self.blocks.iter().enumerate() {
                let whole = js_size(block) + 1;
                if whole <= left {
                    left -= whole;
                    out_blocks.push(block.clone());
                    continue;
                }
                let text = block["text"].as_str().unwrap_or("");
                let mut b = block.clone();
                b["text"] = Value::String(String::new());
                let bare = js_size(&b) + 1;
                let kept = cut_text(text, left.saturating_sub(bare));
                left = left.saturating_sub(bare + escaped_len(kept));
                cuts.push(Cut {
                    pointer: format!("/content/{i}/text"),
                    kept: kept.len() as u64,
                    total: text.len() as u64,
                    unit: CutUnit::Bytes,
                });
                read_on.push((format!("/content/{i}/text"), kept.chars().count()));
                b["text"] = Value::String(kept.to_string());
                out_blocks.push(b);
            }
        }
        let level = self.measured.level_for(self.sc, sc_room)?;
        let mut sc_cuts = Vec::new();
        let cut_sc = self
            .measured
            .cut(self.sc, level, "/structuredContent", &mut sc_cuts);
        for c in &sc_cuts {
            let offset = match c.unit {
                CutUnit::Items => c.kept as usize,
                _ => cut_sc
                    .pointer(c.pointer.strip_prefix("/structuredContent").unwrap_or(""))
                    .and_then(Value::as_str)
                    .map_or(c.kept as usize, |s| s.chars().count()),
            };
            read_on.push((c.pointer.clone(), offset));
        }
        cuts.extend(sc_cuts);
        // The hint names the cut the notice reads on from (the text channel's first).
        let named = cuts
            .iter()
            .find(|c| Some(&c.pointer) == read_on.first().map(|r| &r.0))
            .or(cuts.first());
        let hint = match named {
            Some(c) => format!(
                "Output truncated to fit {}: {} kept {} of {} {}{}. Narrow the request or page through the rest.",
                self.names,
                c.pointer,
                c.kept,
                c.total,
                c.unit.as_str(),
                match cuts.len() {
                    1 => String::new(),
                    n => format!(" ({n} cuts in all)"),
                }
            ),
            None => String::new(),
        };
        let read_on = read_on.first().map(|(p, o)| (p.as_str(), *o as u64));
        let notice = self.notices.compose(&hint, read_on, self.scale);
        let mut out = Map::new();
        for (key, value) in &self.parts.members {
            let value = match key.as_str() {
                "content" => {
                    let mut content = vec![json!({"type": "text", "text": notice})];
                    content.extend(out_blocks.iter().cloned());
                    Value::Array(content)
                }
                "structuredContent" => cut_sc.clone(),
                _ => value.clone(),
            };
            out.insert(key.clone(), value);
        }
        if !cuts.is_empty() {
            let marker = json!({
                "truncated": true,
                "totalBytes": self.total_bytes,
                "cuts": cuts.iter().map(|c| json!({
                    "pointer": c.pointer, "kept": c.kept, "total": c.total, "unit": c.unit.as_str(),
                })).collect::<Vec<_>>(),
                // The notice's copy: the hint and the call that reads on.
                "hint": notice,
            });
            let meta = out
                .entry("_meta")
                .or_insert_with(|| Value::Object(Map::new()));
            match meta.as_object_mut() {
                Some(meta) => {
                    meta.insert(BUDGET_KEY.into(), marker);
                }
                None => *meta = json!({ BUDGET_KEY: marker }),
            }
        }
        Some(Value::Object(out))
    }
}

/// The longest prefix of `text` whose escaped form (a JSON string's content) takes at most
/// `max` bytes, ending after a newline when one is within its last quarter.
fn cut_text(text: &str, max: usize) -> &str {
    let mut used = 0;
    let mut end = 0;
    for (i, c) in text.char_indices() {
        let cost = cost(c);
        if used + cost > max {
            break;
        }
        used += cost;
        end = i + c.len_utf8();
    }
    let kept = &text[..end];
    if end == text.len() {
        return kept;
    }
    match kept.rfind('\n') {
        Some(nl) if nl + 1 >= end - end / 4 => &kept[..nl + 1],
        _ => kept,
    }
}

/// Bytes character `c` takes inside a JSON string as the JS writer writes it.
fn cost(c: char) -> usize {
    match c {
        '"' | '\\' | '\n' | '\r' | '\t' | '\u{8}' | '\u{c}' => 2,
        c if (c as u32) < 0x20 => 6,
        c => c.len_utf8(),
    }
}

/// Length of `s` written as a JSON string, quotes included.
fn escaped_len(s: &str) -> usize {
    2 + s.chars().map(cost).sum::<usize>()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stored(result: &Value) -> Vec<u8> {
        envelope::json::to_vec(result, envelope::json::Dialect::Js)
    }

    #[test]
    fn a_mirror_is_told_on_the_text_and_goes_the_librarys_way() {
        let sc = json!({"s": "a \"q\" \\ / é 😀 \n\t\r\u{8}\u{c}\u{1}\u{1f}", "n": [1.5, 2]});
        let mirror = envelope::json::to_string(&sc, envelope::json::Dialect::Js);
        let result =
            json!({"content": [{"type": "text", "text": mirror}], "structuredContent": sc});
        assert!(parts(&stored(&result)).is_none());
        let summary = json!({"content": [{"type": "text", "text": "2 rows"}, {"type": "text", "text": mirror}], "structuredContent": sc});
        assert!(parts(&stored(&summary)).is_none());
        // The same text without its last character is not a mirror.
        let other = json!({"content": [{"type": "text", "text": &mirror[..mirror.len() - 1]}], "structuredContent": sc});
        assert!(parts(&stored(&other)).is_some());
    }

    #[test]
    fn only_text_blocks_with_structured_content_and_no_error_are_cut_by_channel() {
        let file = "line\n".repeat(10);
        let read = json!({"content": [{"type": "text", "text": file}], "structuredContent": {"content": file}});
        assert!(parts(&stored(&read)).is_some());
        let mut error = read.clone();
        error["isError"] = json!(true);
        assert!(parts(&stored(&error)).is_none());
        let image = json!({"content": [{"type": "text", "text": file}, {"type": "image", "data": "QUJD", "mimeType": "image/png"}], "structuredContent": {"content": file}});
        assert!(parts(&stored(&image)).is_none());
        let plain = json!({"content": [{"type": "text", "text": file}]});
        assert!(parts(&stored(&plain)).is_none());
    }

    #[test]
    fn text_is_cut_at_a_line_boundary_near_the_end_and_within_its_escaped_size() {
        let text = "abc\n".repeat(100);
        let kept = cut_text(&text, 41);
        assert!(kept.ends_with('\n'));
        assert!(escaped_len(kept) - 2 <= 41);
        // No line boundary in the last quarter: cut where the room ends.
        let long = format!("ab\n{}", "x".repeat(100));
        assert_eq!(cut_text(&long, 50).len(), 49);
    }
}
