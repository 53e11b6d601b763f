//! Free-text redaction of a long text read a piece at a time (an MCP result's one text
//! block on its way to the store): the text [`redact_text`] writes for the whole text, and
//! the rules it reports, without ever holding the text whole.
//!
//! The text is cut only after a newline, and only where no rule's match can run across the
//! cut. The rules that look around a secret (`text:aws_secret_key`, `text:twilio`) look on
//! its line only, and no free-text rule matches a newline but two: the private key block (`[\s\S]*?` up
//! to its END line, or its base64 and white space) and the escaped-JSON value of a pair
//! (`\"…\"`, which may hold a newline but never a `"`). So a cut is taken when every
//! `-----BEGIN ` before it has a private key END line after it (still before the cut), and
//! the last `"` before it, once the shape rules have masked what they match (a cookie's
//! value may hold a quote), does not open an escaped value (`\"` right after a pair's `=`
//! or `:`). The rules' `\b` sees the newline on either side of a cut as it sees the start or
//! end of a text: neither is a word character. Each piece is then redacted by
//! [`redact_text`] on its own, and the rules that fired are given in the order
//! [`redact_text`] gives them for the whole.
//!
//! A text that may be a document held in a string (JSON, base64: see
//! [`redact_string`](super::value::redact_string)) is not for this: [`Pieces::push`] says
//! so before anything is written, and the caller redacts it whole.

use std::sync::LazyLock;

use regex::Regex;

use super::text::{SHAPE_RULES, find_decoded, mask_shapes, redact_text};
use super::value::base64_body;
use crate::json::skim::decode_in_pieces;

/// How many bytes of text are gathered before a cut is looked for. The text gathered, its
/// masked copies and the growth of the buffer take a few times this (1 MiB made a 8 MB
/// string payload's redaction cost 1.44x the input; 256 KiB, 1.12x).
pub(crate) const CUT_AFTER: usize = 256 << 10;

/// The END line of a private key block (`text:private_key`'s first alternative).
static KEY_END: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----").expect("valid pattern")
});

/// What [`Pieces::push`] found.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Redacted so far; go on.
    Going,
    /// The text may be a document (JSON or base64): it must be redacted whole. Nothing
    /// was written.
    Whole,
}

/// A long text's redaction, fed the text a piece at a time ([`push`](Pieces::push)), its
/// masked text handed out a piece at a time.
pub(crate) struct Pieces {
    /// Text read and not yet redacted: it starts right after a cut (or at the start).
    carry: String,
    /// Whether the text is known to be plain text (not a document).
    plain: bool,
    /// The carry's length from which a cut is looked for again (it grows when none was
    /// found, so a long stretch without one is not searched over and over).
    look_from: usize,
    /// How many bytes are gathered before a cut is looked for.
    cut_after: usize,
    /// The rules that fired, each once.
    fired: Vec<&'static str>,
}

impl Pieces {
    pub(crate) fn new() -> Self {
        Self::cutting_after(CUT_AFTER)
    }

    /// A text known to be read as plain text whatever it starts with (a JSON document in a
    /// string that redaction found nothing in: the free-text rules then run over its text).
    pub(crate) fn plain() -> Self {
        Pieces {
            plain: true,
            ..Self::new()
        }
    }

    /// Gathers `cut_after` bytes before looking for a cut (tests use small pieces).
    pub(crate) fn cutting_after(cut_after: usize) -> Self {
        Pieces {
            carry: String::new(),
            plain: false,
            look_from: cut_after,
            cut_after,
            fired: Vec::new(),
        }
    }

    /// Adds the next piece of the text; the masked text of every part that can be redacted
    /// on its own by now goes to `out`.
    pub(crate) fn push<E>(
        &mut self,
        piece: &str,
        out: &mut impl FnMut(&str) -> Result<(), E>,
    ) -> Result<Verdict, E> {
        self.carry.push_str(piece);
        if self.carry.len() < self.look_from {
            return Ok(Verdict::Going);
        }
        if !self.plain {
            match is_plain_text(&self.carry, false) {
                Some(true) => self.plain = true,
                Some(false) => return Ok(Verdict::Whole),
                // Too little known yet: decided later.
                None => {
                    self.look_from = 2 * self.carry.len();
                    return Ok(Verdict::Going);
                }
            }
        }
        // A cut after the last newline, if no rule's match can run across it: the private
        // key blocks are judged on the text, the escaped values after the shape rules
        // masked what they match (a cookie's value may hold the quote that closes one).
        let cut = memchr::memrchr(b'\n', self.carry.as_bytes()).map(|newline| newline + 1);
        let Some(cut) = cut.filter(|&cut| !key_block_open(&self.carry[..cut])) else {
            self.look_from = 2 * self.carry.len();
            return Ok(Verdict::Going);
        };
        let masked = match mask_shapes(&self.carry[..cut], &find_decoded) {
            Some(shapes) if opens_escaped_value(shapes.text.as_bytes()) => {
                self.look_from = 2 * self.carry.len();
                return Ok(Verdict::Going);
            }
            Some(shapes) => shapes.mask_pairs(&find_decoded),
            None => None,
        };
        match masked {
            Some((text, rules)) => {
                record(&mut self.fired, rules);
                out(&text)?;
            }
            None => out(&self.carry[..cut])?,
        }
        self.carry.drain(..cut);
        self.look_from = self.carry.len() + self.cut_after;
        Ok(Verdict::Going)
    }

    /// Redacts what is left; returns the rules that fired over the whole text in
    /// [`redact_text`]'s order (empty: nothing was masked), or [`Verdict::Whole`].
    pub(crate) fn finish<E>(
        mut self,
        out: &mut impl FnMut(&str) -> Result<(), E>,
    ) -> Result<Result<Vec<&'static str>, Verdict>, E> {
        if !self.plain && is_plain_text(&self.carry, true) == Some(false) {
            return Ok(Err(Verdict::Whole));
        }
        match redact_text(&self.carry) {
            Some((masked, rules)) => {
                record(&mut self.fired, rules);
                out(&masked)?;
            }
            None if self.carry.is_empty() => {}
            None => out(&self.carry)?,
        }
        let rank = |id: &str| {
            SHAPE_RULES
                .iter()
                .position(|rule| rule.id == id)
                .unwrap_or(SHAPE_RULES.len())
        };
        self.fired.sort_by_key(|id| rank(id));
        Ok(Ok(self.fired))
    }
}

/// Masks the text of a string literal whose raw text (between its quotes, escapes as
/// written, checked valid) is `raw`, decoded `step` bytes at a time: its masked text goes to
/// `out` a piece at a time. Gives the rules that fired (empty: nothing masked), or `None`
/// when the text may be a document (nothing was written to `out` then: the caller redacts
/// it whole); `undecodable` is the error for a literal that does not decode after all.
pub(crate) fn mask_literal<E>(
    raw: &[u8],
    step: usize,
    out: &mut impl FnMut(&str) -> Result<(), E>,
    undecodable: impl Fn() -> E,
) -> Result<Option<Vec<&'static str>>, E> {
    mask_literal_with(raw, Pieces::new(), step, out, undecodable)
}

/// [`mask_literal`] with `pieces` (one that takes the text for plain text whatever it
/// starts with, [`Pieces::plain`], never gives `None`).
pub(crate) fn mask_literal_with<E>(
    raw: &[u8],
    mut pieces: Pieces,
    step: usize,
    out: &mut impl FnMut(&str) -> Result<(), E>,
    undecodable: impl Fn() -> E,
) -> Result<Option<Vec<&'static str>>, E> {
    /// Why the decoding stopped early.
    enum Stop<E> {
        MayBeADocument,
        Failed(E),
    }
    let mut push = |piece: &str| match pieces.push(piece, out) {
        Ok(Verdict::Whole) => Err(Stop::MayBeADocument),
        Ok(_) => Ok(()),
        Err(e) => Err(Stop::Failed(e)),
    };
    match decode_in_pieces(raw, step, &mut push, || Stop::Failed(undecodable())) {
        Ok(()) => Ok(pieces.finish(out)?.ok()),
        Err(Stop::MayBeADocument) => Ok(None),
        Err(Stop::Failed(e)) => Err(e),
    }
}

/// Adds the rules that fired to `fired`, each once.
fn record(fired: &mut Vec<&'static str>, rules: Vec<&'static str>) {
    for rule in rules {
        if !fired.contains(&rule) {
            fired.push(rule);
        }
    }
}

/// Whether a text starting with `start` (all of it when `whole`) is plain text, neither a
/// JSON document nor base64 ([`redact_string`](super::value::redact_string) tries those
/// first); `None` while that is not known yet. Base64 is judged on the first 64 bytes and
/// more: a prefix (before a `:` or `,`) is at most that long, so a byte outside the base64
/// alphabets after it makes the whole no base64 either; a start that is all base64 is
/// taken for base64.
fn is_plain_text(start: &str, whole: bool) -> Option<bool> {
    let known = whole || start.len() >= 64;
    match start.trim_start().chars().next() {
        Some('{' | '[') => Some(false),
        None if !whole => None,
        _ if !known => None,
        _ => Some(base64_body(start).is_none()),
    }
}

/// Whether a private key block begun in `text` may run on past its end: a `-----BEGIN `
/// after which no private key END line follows.
fn key_block_open(text: &str) -> bool {
    memchr::memmem::rfind(text.as_bytes(), b"-----BEGIN ")
        .is_some_and(|begin| !KEY_END.is_match(&text[begin..]))
}

/// Whether the last `"` of `text` opens a pair's escaped value (`token:\"…`), which may
/// run on past the end of `text`.
fn opens_escaped_value(text: &[u8]) -> bool {
    let Some(quote) = memchr::memrchr(b'"', text) else {
        return false;
    };
    if quote == 0 || text[quote - 1] != b'\\' {
        return false;
    }
    // Any number of backslashes: JSON escaped again and again.
    let before = text[..quote - 1]
        .iter()
        .rev()
        .skip_while(|&&b| b == b'\\')
        .find(|&&b| b != b' ' && b != b'\t');
    matches!(before, Some(b'=' | b':'))
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::super::oracle::random_text;
    use super::{Pieces, Verdict, redact_text};

    /// The text given to `Pieces` in pieces of the given sizes (cycled), cutting after
    /// `cut_after` bytes: the masked text and the rules, or `Whole`.
    fn by_pieces(
        text: &str,
        sizes: &[usize],
        cut_after: usize,
    ) -> Result<(String, Vec<&'static str>), Verdict> {
        let mut pieces = Pieces::cutting_after(cut_after);
        let mut masked = String::new();
        let mut out = |s: &str| -> Result<(), ()> {
            masked.push_str(s);
            Ok(())
        };
        let mut at = 0;
        for &size in sizes.iter().cycle() {
            if at >= text.len() {
                break;
            }
            let mut end = (at + size.max(1)).min(text.len());
            while !text.is_char_boundary(end) {
                end += 1;
            }
            if pieces.push(&text[at..end], &mut out).unwrap() == Verdict::Whole {
                return Err(Verdict::Whole);
            }
            at = end;
        }
        let rules = pieces.finish(&mut out).unwrap()?;
        Ok((masked, rules))
    }

    /// A plain log line first (so the text is plain), then random lines.
    fn long_text() -> impl Strategy<Value = String> {
        prop::collection::vec(random_text(), 1..24).prop_map(|lines| {
            let mut text = "log of the run, line by line, as the tool wrote it\n".repeat(2);
            text.push_str(&lines.join("\n"));
            text
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4096))]

        /// Redacted a piece at a time, the text is what it is redacted whole, with the
        /// same rules.
        #[test]
        fn pieces_mask_what_the_whole_text_masks(
            text in long_text(),
            sizes in prop::collection::vec(1usize..200, 1..6),
            cut_after in 1usize..300,
        ) {
            let whole = redact_text(&text)
                .unwrap_or_else(|| (text.clone(), Vec::new()));
            let pieces = by_pieces(&text, &sizes, cut_after);
            prop_assert_eq!(pieces, Ok(whole), "{:?}", text);
        }
    }

    #[test]
    fn a_key_block_across_many_pieces_is_masked_whole() {
        let mut text = "start of the log, plain text and nothing else here yet\n".repeat(3);
        text.push_str("-----BEGIN RSA PRIVATE KEY-----\n");
        for _ in 0..50 {
            text.push_str("MIIEowIBAAKCAQEAx0123456789abcdefABCDEF\n");
        }
        text.push_str("-----END RSA PRIVATE KEY-----\nafter the key\n");
        let (masked, rules) = by_pieces(&text, &[7, 40], 16).unwrap();
        assert_eq!(Some((masked.clone(), rules.clone())), redact_text(&text));
        assert!(!masked.contains("MIIE"), "{masked}");
        assert_eq!(rules, ["text:private_key"]);
        // Without its END line, the block runs on as far as its base64 does.
        let cut = text.replace("-----END RSA PRIVATE KEY-----\n", "");
        assert_eq!(by_pieces(&cut, &[7, 40], 16).ok(), redact_text(&cut));
    }

    #[test]
    fn an_escaped_value_over_a_newline_is_masked_whole() {
        let mut text = "start of the log, plain text and nothing else here yet\n".repeat(3);
        text.push_str("event {\\\"token\\\": \\\"first line\nsecond line\\\"} done\n");
        let (masked, _) = by_pieces(&text, &[5], 8).unwrap();
        assert_eq!(Some(masked.clone()), redact_text(&text).map(|(m, _)| m));
        assert!(!masked.contains("second line"), "{masked}");
    }

    #[test]
    fn documents_and_base64_are_left_to_the_whole_path() {
        let json = format!("  {{\"rows\": [{}]}}", "1,".repeat(100) + "1");
        assert_eq!(by_pieces(&json, &[10], 16), Err(Verdict::Whole));
        let list = format!("[{}]", "2,".repeat(100) + "2");
        assert_eq!(by_pieces(&list, &[10], 16), Err(Verdict::Whole));
        let base64 = "cGFzc3dvcmQ9aHVudGVyMg==".repeat(20);
        assert_eq!(by_pieces(&base64, &[10], 16), Err(Verdict::Whole));
        // Plain text, however short its pieces.
        let plain = "a plain line of a log that goes on and on, a little longer\n".repeat(5);
        assert_eq!(by_pieces(&plain, &[3], 4), Ok((plain.clone(), Vec::new())));
    }
}
