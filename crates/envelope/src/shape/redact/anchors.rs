//! The literal anchors of the free-text rules, found in one pass over a text.
//!
//! Every match of a shape rule holds one of its anchors (`eyJ` for a JWT, `bearer` for a
//! bearer token, …), and every secret name holds one of the stems of the secret words
//! (`pass`, `token`, `key`, …). One automaton finds them all, without case: a text holding
//! none (most text) is read once and left alone, and the rules' regular expressions run
//! only where an anchor is.

use std::sync::LazyLock;

use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};

use super::keys::STEMS;

/// What an anchor points at.
#[derive(Clone, Copy)]
enum Anchor {
    /// A literal every match of one shape rule (by its index) holds.
    Shape(usize),
    /// A character that a case-insensitive rule's letter folds to outside ASCII (`ſ` is an
    /// `s`, `K` a `k` to the regex crate): every case-insensitive rule may match.
    Folded,
    /// A stem of the secret words: a `name=value` pair may be here.
    Stem,
}

/// The shape rules' anchors, by rule index (`text::SHAPE_RULES` order). Found without
/// case, which only ever finds more.
const SHAPE_ANCHORS: [&[&str]; 11] = [
    &["-----BEGIN "],
    &["eyJ"],
    &["bearer"],
    &["basic"],
    &["AKIA", "ASIA"],
    &["ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"],
    &["xox", "xapp-"],
    &["k_live_", "k_test_"],
    &["sk-"],
    &["AIza"],
    &["cookie"],
];

/// The shape rules (by index) that are case-insensitive, so that [`Anchor::Folded`] finds.
const CASE_INSENSITIVE_RULES: [usize; 3] = [2, 3, 10];

/// Characters outside ASCII that Unicode case folding maps to an ASCII letter of a
/// case-insensitive rule's anchor: `ſ` (long s) to `s`, `K` (Kelvin sign) to `k`.
const FOLDED: [&str; 2] = ["\u{17F}", "\u{212A}"];

struct Automaton {
    searcher: AhoCorasick,
    /// What each pattern of the searcher is, by pattern id.
    anchors: Vec<Anchor>,
}

static AUTOMATON: LazyLock<Automaton> = LazyLock::new(|| {
    let mut patterns: Vec<&[u8]> = Vec::new();
    let mut anchors = Vec::new();
    for (rule, literals) in SHAPE_ANCHORS.iter().enumerate() {
        for literal in *literals {
            patterns.push(literal.as_bytes());
            anchors.push(Anchor::Shape(rule));
        }
    }
    for folded in FOLDED {
        patterns.push(folded.as_bytes());
        anchors.push(Anchor::Folded);
    }
    for stem in STEMS {
        patterns.push(stem);
        anchors.push(Anchor::Stem);
    }
    let searcher = AhoCorasick::builder()
        .ascii_case_insensitive(true)
        .match_kind(MatchKind::Standard)
        .kind(Some(AhoCorasickKind::DFA))
        .build(&patterns)
        .expect("valid anchors");
    Automaton { searcher, anchors }
});

/// The anchors found in one text.
#[derive(Default)]
pub(super) struct Found {
    /// Bit `i`: shape rule `i` may match.
    pub(super) shape_rules: u32,
    /// Where a stem of a secret word starts, in order (a `name=value` pair may be there).
    pub(super) stems: Vec<usize>,
}

impl Found {
    /// No rule can match.
    pub(super) fn is_empty(&self) -> bool {
        self.shape_rules == 0 && self.stems.is_empty()
    }

    /// Whether shape rule `rule` may match.
    pub(super) fn may_match(&self, rule: usize) -> bool {
        self.shape_rules & (1 << rule) != 0
    }
}

/// Every anchor in `text`, overlapping ones too (a stem inside a longer anchor counts).
pub(super) fn find(text: &str) -> Found {
    let automaton = &*AUTOMATON;
    let mut found = Found::default();
    let input = aho_corasick::Input::new(text);
    for hit in automaton.searcher.find_overlapping_iter(input) {
        match automaton.anchors[hit.pattern().as_usize()] {
            Anchor::Shape(rule) => found.shape_rules |= 1 << rule,
            Anchor::Folded => {
                for rule in CASE_INSENSITIVE_RULES {
                    found.shape_rules |= 1 << rule;
                }
            }
            Anchor::Stem => found.stems.push(hit.start()),
        }
    }
    // Overlapping hits come by where they end; a shorter stem inside a longer one may
    // start later and end earlier.
    found.stems.sort_unstable();
    found
}

/// Where the stems of secret words start in `text`, in order.
pub(super) fn stems(text: &str) -> Vec<usize> {
    find(text).stems
}
