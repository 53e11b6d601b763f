//! The pre-tokenizer: the text cut into the pieces that byte-pair encoding then works on
//! separately, exactly as js-tiktoken cuts it.
//!
//! js-tiktoken runs each encoding's `pat_str` as a JavaScript regular expression (flags `ug`).
//! Two of its parts mean something else to a Rust regex engine, so the patterns below spell
//! them out instead of copying tiktoken's Rust patterns:
//! - JavaScript's `\s` is a fixed list (it has U+FEFF and lacks U+0085, unlike Unicode's
//!   White_Space): [`JS_SPACE`] lists it.
//! - The contractions are written case by case (`'s|'S|'t|...`); `(?i:'s)` in Rust would also
//!   take `'ſ` (U+017F, which folds to `s`).
//!
//! The one look-ahead, `\s+(?!\S)`, has no place in a finite automaton. As in bpe-openai it is
//! three patterns tried in order: `\s+$` (a run that ends the text, taken whole), `\s+\s` with
//! its last character given back (a run before a non-space keeps its last space for the next
//! piece), then `\s+` (a single space before a non-space). Matching is anchored at the end of
//! the previous piece and leftmost-first, the same priority as the JavaScript alternation.

use regex_automata::meta::Regex;
use regex_automata::{Anchored, Input};

/// JavaScript's `\s` (ECMAScript WhiteSpace and LineTerminator), as the inside of a class.
const JS_SPACE: &str = r"\t\n\x0B\x0C\r \x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}\x{FEFF}";

/// js-tiktoken's contraction suffixes, case by case as its `pat_str` has them.
const CONTRACTIONS: &str =
    "'s|'S|'t|'T|'re|'rE|'Re|'RE|'ve|'vE|'Ve|'VE|'m|'M|'ll|'lL|'Ll|'LL|'d|'D";

/// A compiled pre-tokenizer of one encoding.
pub(crate) struct Splitter {
    regex: Regex,
    /// Which of the patterns (by index) gives its last character back: the look-ahead one.
    gives_back: [bool; 3],
}

impl Splitter {
    /// js-tiktoken's o200k_base `pat_str`.
    pub(crate) fn o200k_base() -> Splitter {
        let upper = r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]";
        let lower = r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]";
        let main = [
            format!(r"[^\r\n\p{{L}}\p{{N}}]?{upper}*{lower}+({CONTRACTIONS})?"),
            format!(r"[^\r\n\p{{L}}\p{{N}}]?{upper}+{lower}*({CONTRACTIONS})?"),
            r"\p{N}{1,3}".to_owned(),
            format!(r" ?[^{JS_SPACE}\p{{L}}\p{{N}}]+[\r\n/]*"),
            format!(r"[{JS_SPACE}]*[\r\n]+"),
            format!(r"[{JS_SPACE}]+$"),
        ]
        .join("|");
        Splitter::new(&main)
    }

    /// js-tiktoken's cl100k_base `pat_str`.
    pub(crate) fn cl100k_base() -> Splitter {
        let main = [
            format!("({CONTRACTIONS})"),
            r"[^\r\n\p{L}\p{N}]?\p{L}+".to_owned(),
            r"\p{N}{1,3}".to_owned(),
            format!(r" ?[^{JS_SPACE}\p{{L}}\p{{N}}]+[\r\n]*"),
            format!(r"[{JS_SPACE}]*[\r\n]+"),
            format!(r"[{JS_SPACE}]+$"),
        ]
        .join("|");
        Splitter::new(&main)
    }

    fn new(main: &str) -> Splitter {
        let look_ahead = format!("[{JS_SPACE}]+[{JS_SPACE}]");
        let single = format!("[{JS_SPACE}]+");
        // The patterns are constants of this file: a failure here is a bug that every test
        // shows, never something an input can cause.
        let regex = Regex::new_many(&[main, look_ahead.as_str(), single.as_str()])
            .expect("the pre-tokenizer patterns compile");
        Splitter {
            regex,
            gives_back: [false, true, false],
        }
    }

    /// The pieces of `text`, in order; together they are the whole text.
    pub(crate) fn pieces<'t>(&'t self, text: &'t str) -> Pieces<'t> {
        Pieces {
            splitter: self,
            text,
            at: 0,
        }
    }
}

/// The iterator of [`Splitter::pieces`].
pub(crate) struct Pieces<'t> {
    splitter: &'t Splitter,
    text: &'t str,
    at: usize,
}

impl<'t> Iterator for Pieces<'t> {
    type Item = &'t str;

    fn next(&mut self) -> Option<&'t str> {
        let rest = &self.text[self.at..];
        let first = rest.chars().next()?;
        let input = Input::new(rest).anchored(Anchored::Yes);
        let mut end = match self.splitter.regex.find(input) {
            Some(found) => {
                let mut end = found.end();
                if self.splitter.gives_back[found.pattern().as_usize()] {
                    // The look-ahead pattern matched at least two characters: give the last back.
                    let last = rest[..end].chars().next_back().map_or(0, char::len_utf8);
                    end -= last;
                }
                end
            }
            // Every character starts some pattern (letters, digits, spaces, and everything
            // else through ` ?[^\s\p{L}\p{N}]+`), so this does not happen; should a Unicode
            // table ever leave a gap, the character is a piece of its own rather than a panic
            // or a text cut short.
            None => 0,
        };
        if end == 0 {
            end = first.len_utf8();
        }
        self.at += end;
        Some(&rest[..end])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pieces(splitter: &Splitter, text: &str) -> Vec<String> {
        splitter.pieces(text).map(str::to_owned).collect()
    }

    #[test]
    fn a_space_run_keeps_its_last_space_for_the_next_word() {
        let o200k = Splitter::o200k_base();
        assert_eq!(pieces(&o200k, "a   b"), ["a", "  ", " b"]);
        assert_eq!(pieces(&o200k, "a \tb"), ["a", " ", "\tb"]);
        // At the end of the text the run is taken whole.
        assert_eq!(pieces(&o200k, "a   "), ["a", "   "]);
    }

    #[test]
    fn javascript_spaces_not_unicode_ones() {
        let cl100k = Splitter::cl100k_base();
        // U+FEFF is a space to JavaScript: it stays apart from the word after it (with one
        // space of a run, as any space would).
        assert_eq!(
            pieces(&cl100k, "x\u{FEFF}\u{FEFF}y"),
            ["x", "\u{FEFF}", "\u{FEFF}y"]
        );
        // U+0085 is not: it is punctuation, a piece with the newline after it.
        assert_eq!(pieces(&cl100k, "x\u{85}\ny"), ["x", "\u{85}\n", "y"]);
    }

    #[test]
    fn contractions_are_case_by_case() {
        let cl100k = Splitter::cl100k_base();
        assert_eq!(pieces(&cl100k, "it's IT'S"), ["it", "'s", " IT", "'S"]);
        // The long s does not fold to a contraction: `'ſt` is one piece, not `'ſ` and `t`.
        assert_eq!(pieces(&cl100k, "it'ſt"), ["it", "'ſt"]);
    }

    #[test]
    fn pieces_cover_the_text() {
        let o200k = Splitter::o200k_base();
        let text = "Grüße, мир! 你好 😀👩‍👩‍👧 12345.678\r\n\t  {\"k\": [1,2]}";
        assert_eq!(pieces(&o200k, text).concat(), text);
    }
}
