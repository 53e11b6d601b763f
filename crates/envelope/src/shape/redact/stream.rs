//! Redaction of JSON text in one pass over its bytes, without building the document.
//!
//! [`redact_json_text`] gives the compact JS-dialect bytes of what [`redact_value`]
//! (then [`json::to_vec`](crate::json::to_vec)) gives for the parsed text, and the same
//! report, at a fraction of the memory: only strings that hold a secret (or are written with
//! escapes the JS dialect does not use) are decoded and written again; everything else is
//! copied, and when nothing changes at all (compact input, no secret) nothing is copied.
//!
//! It gives up (`None`) on what it cannot write the same way in one pass, and the caller
//! redacts the parsed value instead:
//! - text serde_json would refuse (any syntax error, a lone surrogate, nesting deeper than
//!   [`MAX_DEPTH`]): the whole parse says what is wrong;
//! - an object with a duplicate key (the value keeps one member), with array-index keys out
//!   of the order `JSON.stringify` writes them in, or with a key that holds a secret (masked
//!   keys are made unique among all their siblings, later ones included).
//!
//! The same pass, without writing, tells whether a document held in a string has anything
//! to redact ([`is_clean_document`]): redaction then leaves the string alone without
//! building the document, which for the text mirror of a large `structuredContent` is most
//! of the work.
//!
//! [`redact_value`]: super::redact_value

use std::borrow::Cow;
use std::collections::HashSet;

use super::Redaction;
use super::escaped::{self, Escapes};
use super::keys::{keeps_text_value, secret_key_rule};
use super::pieces::mask_literal;
use super::value::{MAX_EMBEDDED, is_zero, redact_string, rename_keys};
use crate::json::pointer;
use crate::json::unescape::unescape_into;
use crate::json::writer::{Dialect, array_index, write_escaped, write_escaped_chars};

/// Containers nested deeper than this are left to the parse (serde_json allows 127).
const MAX_DEPTH: usize = 100;

/// Objects with more keys than this check duplicates with a hash set, fewer by comparing.
const LINEAR_KEYS: usize = 16;

/// What [`redact_json_text`] wrote.
#[derive(Debug)]
pub struct RedactedText {
    /// The compact JSON of the redacted document; `None` when that is the input itself
    /// (compact already, nothing masked).
    pub bytes: Option<Vec<u8>>,
    /// What was masked, as [`redact_value`](super::redact_value) reports it.
    pub report: Vec<Redaction>,
}

/// The compact JS-dialect JSON of `input` redacted as [`redact_value`](super::redact_value)
/// redacts its parsed value (`at` names the document in the report), in one pass over the
/// text: only strings holding a secret (or written with escapes the JS dialect does not
/// use) are decoded and written again, and nothing is copied when nothing changes.
///
/// `None` when this pass cannot tell: text serde_json refuses (it says why), nesting deeper
/// than 100, and objects with a duplicate key, with array-index keys out of the order
/// `JSON.stringify` writes them in, or with a key that holds a secret (masked keys are made
/// unique among all their siblings). Parse and redact the value then.
///
/// ```
/// use envelope::shape::redact::redact_json_text;
///
/// let text = br#"{ "user": "ann", "password": "hunter2", "note": "Bearer abc123XYZ" }"#;
/// let redacted = redact_json_text(text, "result").unwrap();
/// assert_eq!(
///     redacted.bytes.unwrap(),
///     br#"{"user":"ann","password":"***","note":"Bearer ***"}"#
/// );
/// assert_eq!(redacted.report.len(), 2);
///
/// // Compact and clean: nothing is written.
/// assert!(redact_json_text(br#"{"a":[1,"b"]}"#, "result").unwrap().bytes.is_none());
/// ```
pub fn redact_json_text(input: &[u8], at: &str) -> Option<RedactedText> {
    redact_json_text_in(input, at, 0)
}

/// [`redact_json_text`] of a document held in a string `depth` documents deep (as the
/// value's redaction redacts a JSON document it finds in a string, at `<place>#`).
pub(crate) fn redact_json_text_in(input: &[u8], at: &str, depth: usize) -> Option<RedactedText> {
    let mut pass = Pass::new(input, Mode::Write { redact: true }, depth);
    pass.document().ok()?;
    let report = std::mem::take(&mut pass.report)
        .into_iter()
        .map(|r| Redaction {
            rule: r.rule,
            at: format!("{at}{}", r.at),
        })
        .collect();
    Some(RedactedText {
        bytes: pass.finish(),
        report,
    })
}

/// The compact JS-dialect JSON of `input` (what [`json::to_vec`](crate::json::to_vec) writes
/// for its parsed value): `Some(None)` when the input is that already, `None` when this pass
/// cannot tell (as for [`redact_json_text`]; keys holding secrets are no reason here).
///
/// ```
/// use envelope::shape::redact::compact_json_text;
///
/// assert_eq!(compact_json_text(b"[1.0, \"\\/\"]").unwrap().unwrap(), b"[1,\"/\"]");
/// assert_eq!(compact_json_text(b"[1,2]").unwrap(), None);
/// ```
pub fn compact_json_text(input: &[u8]) -> Option<Option<Vec<u8>>> {
    let mut pass = Pass::new(input, Mode::Write { redact: false }, 0);
    pass.document().ok()?;
    Some(pass.finish())
}

/// Whether redacting the document `text` (held in a string `depth` documents deep) would
/// change nothing: `Some(true)` surely, `Some(false)` when it may, `None` when `text` is not
/// JSON this pass reads or holds a string it would have to decode whole to tell (over
/// [`DETECT_WHOLE_UP_TO`] bytes).
pub(crate) fn is_clean_document(text: &str, depth: usize) -> Option<bool> {
    let mut pass = Pass::new(text.as_bytes(), Mode::Detect, depth);
    match pass.document() {
        Ok(()) => Some(true),
        Err(Stop::Found) => Some(false),
        Err(Stop::Unsure) => None,
    }
}

/// The longest string [`is_clean_document`] decodes and redacts to tell whether it holds a
/// secret (its escaped text did not tell it clean); a longer one makes it unsure.
const DETECT_WHOLE_UP_TO: usize = 1 << 20;

/// A string literal longer than this is measured before it is decoded (see
/// `Pass::decode`).
const LONG_LITERAL: usize = 64 << 10;

/// Why the pass stopped early.
enum Stop {
    /// The text is not what this pass writes the same way as the value path.
    Unsure,
    /// Detecting: there is something to redact.
    Found,
}

type Step = Result<(), Stop>;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Write the compact (and, with `redact`, redacted) text.
    Write { redact: bool },
    /// Only tell whether anything would be redacted.
    Detect,
}

/// A string literal's text between its quotes (valid UTF-8, no raw control character), not
/// decoded.
struct Literal<'a> {
    text: &'a str,
    escapes: Escapes,
}

/// A place in the document, for the report.
enum Segment<'a> {
    Key(Cow<'a, str>),
    Index(usize),
}

struct Pass<'a> {
    input: &'a [u8],
    /// The next byte to read.
    at: usize,
    mode: Mode,
    /// The output, once it differs from the input; `input[..copied]` is in it.
    out: Option<Vec<u8>>,
    copied: usize,
    /// Inside a value under a secret key: the rule its leaves are masked by (the nearest
    /// secret key's).
    mask: Option<String>,
    /// How many leaves were masked so far (a member under a secret key is reported when
    /// any of its leaves was).
    masked: usize,
    depth: usize,
    /// How many documents deep (a document in a string in …) this text is.
    embedded: usize,
    path: Vec<Segment<'a>>,
    report: Vec<Redaction>,
}

impl<'a> Pass<'a> {
    fn new(input: &'a [u8], mode: Mode, embedded: usize) -> Self {
        Pass {
            input,
            at: 0,
            mode,
            out: None,
            copied: 0,
            mask: None,
            masked: 0,
            depth: 0,
            embedded,
            path: Vec::new(),
            report: Vec::new(),
        }
    }

    fn redacting(&self) -> bool {
        self.mode != Mode::Write { redact: false }
    }

    fn writing(&self) -> bool {
        matches!(self.mode, Mode::Write { .. })
    }

    /// The whole input: one value, whitespace around it.
    fn document(&mut self) -> Step {
        self.whitespace();
        self.value()?;
        self.whitespace();
        match self.at == self.input.len() {
            true => Ok(()),
            false => Err(Stop::Unsure),
        }
    }

    /// The output: `None` when it is the input.
    fn finish(mut self) -> Option<Vec<u8>> {
        let mut out = self.out.take()?;
        out.extend_from_slice(&self.input[self.copied..]);
        Some(out)
    }

    /// Puts `with` in place of `input[start..end]` in the output.
    fn replace(&mut self, start: usize, end: usize, with: &[u8]) {
        self.replace_with(start, end, with.len(), |out| out.extend_from_slice(with));
    }

    /// Puts what `write` writes (`len` bytes) in place of `input[start..end]` in the
    /// output. The output is made the input's size with that change: one long string
    /// rewritten (a text of `\u` escapes, half its size once written) does not take the
    /// whole input's size again.
    fn replace_with(
        &mut self,
        start: usize,
        end: usize,
        len: usize,
        write: impl FnOnce(&mut Vec<u8>),
    ) {
        if !self.writing() {
            return;
        }
        let input = self.input;
        let out = self
            .out
            .get_or_insert_with(|| Vec::with_capacity(input.len() - (end - start) + len));
        out.extend_from_slice(&input[self.copied..start]);
        write(out);
        self.copied = end;
    }

    fn peek(&self) -> Option<u8> {
        self.input.get(self.at).copied()
    }

    fn expect(&mut self, byte: u8) -> Step {
        match self.peek() == Some(byte) {
            true => {
                self.at += 1;
                Ok(())
            }
            false => Err(Stop::Unsure),
        }
    }

    /// Skips whitespace, leaving it out of the output.
    fn whitespace(&mut self) {
        let start = self.at;
        while matches!(self.peek(), Some(b' ' | b'\n' | b'\r' | b'\t')) {
            self.at += 1;
        }
        if self.at > start {
            self.replace(start, self.at, b"");
        }
    }

    fn value(&mut self) -> Step {
        match self.peek().ok_or(Stop::Unsure)? {
            b'{' => self.object(),
            b'[' => self.array(),
            b'"' => self.string_value(),
            b't' => self.literal(b"true"),
            b'f' => self.literal(b"false"),
            b'n' => self.literal(b"null"),
            b'-' | b'0'..=b'9' => self.number(),
            _ => Err(Stop::Unsure),
        }
    }

    fn literal(&mut self, word: &[u8]) -> Step {
        match self.input[self.at..].starts_with(word) {
            true => {
                self.at += word.len();
                Ok(())
            }
            false => Err(Stop::Unsure),
        }
    }

    fn enter(&mut self) -> Step {
        self.depth += 1;
        match self.depth > MAX_DEPTH {
            true => Err(Stop::Unsure),
            false => Ok(()),
        }
    }

    fn array(&mut self) -> Step {
        self.enter()?;
        self.at += 1;
        self.whitespace();
        if self.peek() == Some(b']') {
            self.at += 1;
            self.depth -= 1;
            return Ok(());
        }
        self.path.push(Segment::Index(0));
        for index in 0.. {
            if let Some(Segment::Index(i)) = self.path.last_mut() {
                *i = index;
            }
            self.whitespace();
            self.value()?;
            self.whitespace();
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b']') => {
                    self.at += 1;
                    break;
                }
                _ => return Err(Stop::Unsure),
            }
        }
        self.path.pop();
        self.depth -= 1;
        Ok(())
    }

    fn object(&mut self) -> Step {
        self.enter()?;
        self.at += 1;
        self.whitespace();
        if self.peek() == Some(b'}') {
            self.at += 1;
            self.depth -= 1;
            return Ok(());
        }
        let mut keys = Keys::default();
        loop {
            self.whitespace();
            if self.peek() != Some(b'"') {
                return Err(Stop::Unsure);
            }
            let start = self.at;
            let (key, canonical) = self.string()?;
            if !canonical {
                self.rewrite_string(start, &key);
            }
            if self.redacting()
                && !escaped::surely_clean(&key, Escapes::None, 0)
                && rename_keys(std::iter::once(key.as_ref()))[0].is_some()
            {
                // A key holding a secret: its masked text must be unique among all its
                // siblings, which are not read yet.
                return Err(match self.mode {
                    Mode::Detect => Stop::Found,
                    Mode::Write { .. } => Stop::Unsure,
                });
            }
            if self.writing() {
                keys.add(key.clone())?;
            }
            self.whitespace();
            self.expect(b':')?;
            self.whitespace();
            let rule = match self.redacting() {
                true => secret_key_rule(&key),
                false => None,
            };
            self.path.push(Segment::Key(key));
            match rule {
                Some(rule) if self.mask.is_none() => self.secret_member(rule)?,
                // Inside a masked value: its leaves are masked by this key's rule, and the
                // member outside reports them.
                Some(rule) => {
                    let outer = self.mask.replace(rule);
                    let step = self.value();
                    self.mask = outer;
                    step?;
                }
                None => self.value()?,
            }
            self.path.pop();
            self.whitespace();
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b'}') => {
                    self.at += 1;
                    break;
                }
                _ => return Err(Stop::Unsure),
            }
        }
        self.depth -= 1;
        Ok(())
    }

    /// The value of a member whose key names a secret: its leaves masked, its type and
    /// shape kept ([`redact_value`](super::redact_value) masks it so), and the member
    /// reported (before what was found inside it) when any leaf was masked.
    fn secret_member(&mut self, rule: String) -> Step {
        let (masked, reported) = (self.masked, self.report.len());
        self.mask = Some(rule);
        let step = self.value();
        let rule = self.mask.take().expect("set above");
        step?;
        if self.masked > masked {
            let at = self.pointer();
            self.report.insert(reported, Redaction { rule, at });
        }
        Ok(())
    }

    /// A leaf under a secret key that hides something (a string [`keeps_text_value`] does
    /// not keep, a number but zero): written as `with` (`"***"`, `0`).
    fn mask_leaf(&mut self, start: usize, with: &[u8]) -> Step {
        if self.mode == Mode::Detect {
            return Err(Stop::Found);
        }
        self.replace(start, self.at, with);
        self.masked += 1;
        Ok(())
    }

    /// A string value: redacted as [`redact_value`](super::redact_value) redacts strings.
    fn string_value(&mut self) -> Step {
        let start = self.at;
        let literal = self.string_literal()?;
        if let Some(rule) = &self.mask {
            let (text, _) = Self::decode(&literal)?;
            if !keeps_text_value(rule, &text) {
                return self.mask_leaf(start, b"\"***\"");
            }
            // Kept (a path under `pwd`): redacted as any string.
        }
        // Written as the JS dialect writes it (simple escapes at most) and surely clean, as
        // its escaped text tells: left as it is, never decoded (a long text block).
        if literal.escapes != Escapes::Other
            && (!self.redacting()
                || escaped::surely_clean(literal.text, literal.escapes, self.embedded))
        {
            return Ok(());
        }
        // Only telling: a long text is not decoded and redacted to tell (its callers redact
        // it a piece at a time, or whole).
        if self.mode == Mode::Detect && literal.text.len() > DETECT_WHOLE_UP_TO {
            return Err(Stop::Unsure);
        }
        // A long text to redact is masked a piece at a time as it is written: never decoded
        // whole beside its masked copy (unless it may be a document held in a string). The
        // pieces are cut after newlines: a text without any is redacted whole.
        if literal.text.len() > LONG_LITERAL
            && memchr::memmem::find(literal.text.as_bytes(), br"\n").is_some()
            && self.redacting()
            && self.writing()
            && self.embedded < MAX_EMBEDDED
            && let Some(rules) = self.masked_in_pieces(start, &literal)?
        {
            let here = self.pointer();
            self.report.extend(rules.into_iter().map(|rule| Redaction {
                rule: rule.to_string(),
                at: here.clone(),
            }));
            return Ok(());
        }
        let (text, canonical) = Self::decode(&literal)?;
        let mut found = Vec::new();
        let masked = match self.redacting() {
            true => redact_string(&text, "", &mut found, self.embedded),
            false => None,
        };
        let Some(masked) = masked else {
            if !canonical {
                self.rewrite_string(start, &text);
            }
            return Ok(());
        };
        if self.mode == Mode::Detect {
            return Err(Stop::Found);
        }
        let here = self.pointer();
        self.report.extend(found.into_iter().map(|r| Redaction {
            rule: r.rule,
            at: format!("{here}{}", r.at),
        }));
        self.rewrite_string(start, &masked);
        Ok(())
    }

    /// Writes the string literal at `input[start..self.at]` (`literal`) redacted as plain
    /// text ([`redact_string`] of a text that is no document), a piece at a time
    /// ([`mask_literal`]), and gives the rules that fired; `None` when the text may be a document
    /// (nothing is written then: the caller redacts it whole).
    fn masked_in_pieces(
        &mut self,
        start: usize,
        literal: &Literal<'a>,
    ) -> Result<Option<Vec<&'static str>>, Stop> {
        let input = self.input;
        let raw = literal.text.as_bytes();
        // The output is made the input's size with the text as the JS writer writes it
        // (masks are about the size of what they hide): a text of `\u` escapes, half its
        // size once written, does not take the input's size again.
        let written_size = crate::json::skim::escaped_string_sizes(raw).map_or(raw.len(), |s| s.0);
        let size = input.len() - raw.len() + written_size + (written_size >> 6);
        let had_output = self.out.is_some();
        let out = self.out.get_or_insert_with(|| Vec::with_capacity(size));
        let written_to = out.len();
        out.extend_from_slice(&input[self.copied..start]);
        out.push(b'"');
        let mut write = |masked: &str| -> Result<(), Stop> {
            write_escaped_chars(out, masked, Dialect::Js);
            Ok(())
        };
        let rules = mask_literal(raw, LONG_LITERAL, &mut write, || Stop::Unsure)?;
        // A text written as it was (nothing masked, spelled as the JS writer spells it) is
        // left where it is, as the whole redaction leaves it.
        let text_from = written_to + (start - self.copied) + 1;
        let unchanged = rules.is_some() && out[text_from..] == *raw;
        let Some(rules) = rules.filter(|_| !unchanged) else {
            match had_output {
                true => out.truncate(written_to),
                false => self.out = None,
            }
            // Nothing written (the text may be a document: the caller redacts it whole), or
            // nothing to write.
            return Ok(unchanged.then(Vec::new));
        };
        out.push(b'"');
        self.copied = self.at;
        Ok(Some(rules))
    }

    /// The JSON Pointer of the current place (relative to the document).
    fn pointer(&self) -> String {
        let mut at = String::new();
        for segment in &self.path {
            at = match segment {
                Segment::Key(k) => pointer::join(&at, k),
                Segment::Index(i) => format!("{at}/{i}"),
            };
        }
        at
    }

    /// Reads a string literal (at its opening quote): its text, and whether it is written
    /// as the JS dialect writes it.
    fn string(&mut self) -> Result<(Cow<'a, str>, bool), Stop> {
        let literal = self.string_literal()?;
        Self::decode(&literal)
    }

    /// Finds the string literal at its opening quote and steps over it, without decoding
    /// it.
    fn string_literal(&mut self) -> Result<Literal<'a>, Stop> {
        let input = self.input;
        let from = self.at + 1;
        // The closing quote is the first one after an even run of backslashes (quotes are
        // rare in text, escapes are not: `\n` in every line of a log).
        let mut end = from;
        loop {
            end += memchr::memchr(b'"', &input[end..]).ok_or(Stop::Unsure)?;
            if input[end - 1] != b'\\' {
                break;
            }
            let backslashes = input[from..end]
                .iter()
                .rev()
                .take_while(|&&b| b == b'\\')
                .count();
            if backslashes % 2 == 0 {
                break;
            }
            end += 1;
        }
        let raw = &input[from..end];
        self.at = end + 1;
        let escapes = escaped::escapes(raw).ok_or(Stop::Unsure)?;
        let text = std::str::from_utf8(raw).map_err(|_| Stop::Unsure)?;
        Ok(Literal { text, escapes })
    }

    /// The text of a string literal, and whether it is written as the JS dialect writes
    /// it.
    fn decode(literal: &Literal<'a>) -> Result<(Cow<'a, str>, bool), Stop> {
        match literal.escapes {
            Escapes::None => Ok((Cow::Borrowed(literal.text), true)),
            _ => {
                let raw = literal.text.as_bytes();
                // A long text decodes into a buffer of its decoded size, counted first.
                let capacity = match raw.len() > LONG_LITERAL {
                    true => {
                        crate::json::skim::escaped_string_sizes(raw).map_or(raw.len(), |(_, n)| n)
                    }
                    false => raw.len(),
                };
                let (text, canonical) = unescape_into(raw, capacity).ok_or(Stop::Unsure)?;
                Ok((Cow::Owned(text), canonical))
            }
        }
    }

    /// Writes `text` in place of the string literal at `input[start..self.at]`.
    fn rewrite_string(&mut self, start: usize, text: &str) {
        if !self.writing() {
            return;
        }
        let len = crate::json::size::escaped_len(text);
        self.replace_with(start, self.at, len, |out| {
            write_escaped(out, text, Dialect::Js);
        });
    }

    /// A number: plain integers are written as they are; any other is read by serde_json
    /// and written as the JS dialect writes it (`1.0` → `1`, `1E2` → `100`).
    fn number(&mut self) -> Step {
        let start = self.at;
        let input = self.input;
        let digits = |at: &mut usize| {
            let from = *at;
            while input.get(*at).is_some_and(u8::is_ascii_digit) {
                *at += 1;
            }
            *at > from
        };
        let mut at = self.at;
        if input[at] == b'-' {
            at += 1;
        }
        let int_start = at;
        if !digits(&mut at) || (input[int_start] == b'0' && at - int_start > 1) {
            return Err(Stop::Unsure);
        }
        let mut plain = at - start <= 15 && &input[start..at] != b"-0";
        if input.get(at) == Some(&b'.') {
            at += 1;
            plain = false;
            if !digits(&mut at) {
                return Err(Stop::Unsure);
            }
        }
        if matches!(input.get(at), Some(b'e' | b'E')) {
            at += 1;
            plain = false;
            if matches!(input.get(at), Some(b'+' | b'-')) {
                at += 1;
            }
            if !digits(&mut at) {
                return Err(Stop::Unsure);
            }
        }
        self.at = at;
        if self.mask.is_some() {
            let value: serde_json::Value =
                serde_json::from_slice(&input[start..at]).map_err(|_| Stop::Unsure)?;
            if !value.as_number().is_some_and(is_zero) {
                return self.mask_leaf(start, b"0");
            }
        }
        if plain || !self.writing() {
            return Ok(());
        }
        let value: serde_json::Value =
            serde_json::from_slice(&input[start..at]).map_err(|_| Stop::Unsure)?;
        let written = crate::json::to_vec(&value, Dialect::Js);
        if written != input[start..at] {
            self.replace(start, at, &written);
        }
        Ok(())
    }
}

/// The keys of one object read so far, to refuse duplicates and array-index keys out of
/// `JSON.stringify` order (array indices first, ascending).
#[derive(Default)]
struct Keys<'k> {
    seen: Vec<Cow<'k, str>>,
    set: Option<HashSet<Cow<'k, str>>>,
    /// The last array-index key, and whether a key that is not one came before it.
    last_index: Option<u32>,
    named: bool,
}

impl<'k> Keys<'k> {
    fn add(&mut self, key: Cow<'k, str>) -> Step {
        match array_index(&key) {
            Some(i) if self.named || self.last_index.is_some_and(|last| last >= i) => {
                return Err(Stop::Unsure);
            }
            Some(i) => self.last_index = Some(i),
            None => self.named = true,
        }
        let fresh = match &mut self.set {
            Some(set) => set.insert(key),
            None if self.seen.len() < LINEAR_KEYS => {
                let fresh = !self.seen.contains(&key);
                self.seen.push(key);
                fresh
            }
            None => {
                let mut set: HashSet<_> = std::mem::take(&mut self.seen).into_iter().collect();
                let fresh = set.insert(key);
                self.set = Some(set);
                fresh
            }
        };
        match fresh {
            true => Ok(()),
            false => Err(Stop::Unsure),
        }
    }
}
