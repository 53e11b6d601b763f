//! Where the free-text rules may match a text, found without running them.
//!
//! Every match of a shape rule holds one of its literal anchors (`eyJ` for a JWT, `bearer`
//! for a bearer token, …), and every `name=value` pair has its separator (`=` or `:`) right
//! after its name, give or take spaces, a quote and a backslash. So a text is looked at for
//! a few rare things only, each with a SIMD search where the CPU has one:
//! - the anchors of the case-sensitive rules (`eyJ`, `AKIA`, `ghp_`, `-----BEGIN `, …) in
//!   their exact case, with one multi-literal search (aho-corasick; Teddy on x86-64);
//! - `b` and `B`, where `bearer` and `basic` (case-insensitive rules) may start;
//! - the separators, where a pair's name ends: the run of name characters before each is
//!   a candidate when it holds a stem of a secret word (`pass`, `token`, `key`, …), and
//!   makes the `cookie` rule (which needs a separator too) a candidate when it holds
//!   `cookie`;
//! - `ſ` and the Kelvin sign, which the regex crate folds to `s` and `k`: either makes every
//!   case-insensitive rule a candidate.
//!
//! Text holding none of these (most text, a `git log`, a file listing) is left alone after
//! that look. The same look works on the escaped text of a JSON string literal whose
//! escapes are all simple (`\n`, `\"`, `\\`, …): no anchor holds an escaped character, so
//! each is in that text as it is, and the separators' names are read around the escapes
//! ([`Spelling::Escaped`]).

use std::ops::Range;
use std::sync::LazyLock;

use aho_corasick::{AhoCorasick, Input, MatchKind};

use super::keys::{holds_stem, may_start_stem};
use super::pairs::is_name_byte;

/// The literals of the case-sensitive shape rules, by rule index (`text::SHAPE_RULES`
/// order; the case-insensitive rules 2, 3 and 11 have none here). A literal may be an
/// anchor of several rules, or start another one: every rule with an anchor where one is
/// found is a candidate ([`shape_rules_at`]).
pub(super) const SHAPE_ANCHORS: [&[&str]; 33] = [
    &["-----BEGIN "],
    &["eyJ"],
    &[],
    &[],
    &["AKIA", "ASIA"],
    &["AKIA", "ASIA"],
    &["ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"],
    &["xox", "xapp-"],
    &["k_live_", "k_test_", "whsec_"],
    &["sk-"],
    &["AIza"],
    &[],
    &["://"],
    &["curl"],
    &["hf_"],
    &[
        "glpat-", "gldt-", "glptt-", "glrt-", "glcbt-", "gloas-", "glsoat-", "glft-", "glimt-",
    ],
    &["SG."],
    &["hooks.slack.com/"],
    &["discord.com/api/", "discordapp.com/api/"],
    &[":AA"],
    &["ya29.", "GOCSPX-"],
    &["hvs.", "hvb.", "hvr."],
    &["AGE-SECRET-KEY-1"],
    &["shpat_", "shpss_", "shpca_", "shppa_"],
    &["dop_v1_", "doo_v1_", "dor_v1_"],
    &["gsk_"],
    &["lin_api_", "lin_oauth_"],
    &["SK", "AC"],
    &["key-"],
    &["npm_"],
    &["pypi-AgEIcHlwaS5vcmc", "pypi-AgENdGVzdC5weXBpLm9yZw"],
    &["sig="],
    // `text::BASE64_WORDS` in base64, in each alignment to the 3-byte groups (the
    // characters every byte of the word and nothing else decides), in both alphabets.
    &[
        "0b2tlb",
        "0tLS0tQkVHSU4g",
        "9LRV",
        "9rZX",
        "BBU1NXT1JE",
        "BS0lB",
        "BSSVZBVEUgS0VZ",
        "Bhc3N3Z",
        "Bhc3N3b3Jk",
        "CZWFyZX",
        "FLSU",
        "FwaUtle",
        "JlYXJlc",
        "LS0tLS1CRUdJTi",
        "NFQ1JFV",
        "NlY3Jld",
        "QQVNTV09SR",
        "QUklWQVRFIEtFW",
        "QUtJQ",
        "QYXNzd29yZ",
        "QmVhcmVy",
        "RPS0VO",
        "Rva2Vu",
        "TRUNSRV",
        "TZWNyZX",
        "U0VDUkVU",
        "U2VjcmV0",
        "UEFTU1dPUk",
        "UFJJVkFURSBLRV",
        "UGFzc3dvcm",
        "UT0tFT",
        "Ub2tlb",
        "VE9LRU",
        "VG9rZW",
        "X0tFW",
        "X2tle",
        "YXBpS2V5",
        "Z2hwX",
        "c2VjcmV0",
        "cGFzc3dk",
        "cGFzc3dvcm",
        "dG9rZW",
        "docF",
        "fS0VZ",
        "fa2V5",
        "hcGlLZX",
        "naHBf",
        "tLS0tLUJFR0lOI",
        "wYXNzd2",
        "wYXNzd29yZ",
        "zZWNyZX",
    ],
];

/// The case-insensitive shape rules: `bearer`, `basic` (their first four letters in every
/// case are searched for with the literals, the rest is checked where they are), `cookie`
/// (found in the names before separators).
pub(super) const BEARER: usize = 2;
pub(super) const BASIC: usize = 3;
pub(super) const COOKIE: usize = 11;

/// Characters outside ASCII that Unicode case folding maps to an ASCII letter of a
/// case-insensitive rule's anchor: `ſ` (long s) to `s`, `K` (Kelvin sign) to `k`.
const FOLDED: [&str; 2] = ["\u{17F}", "\u{212A}"];

/// The case-insensitive words and their rules.
const WORDS: [(&str, usize); 2] = [("bearer", BEARER), ("basic", BASIC)];

struct Literals {
    /// Searchers of at most [`PACKED`] literals each.
    searchers: Vec<AhoCorasick>,
}

/// The most literals one searcher is given: aho-corasick's packed (Teddy) prefilter, what
/// makes a search run at several gigabytes a second, takes at most 64 patterns; with more, a
/// search steps its automaton byte by byte (4x slower over a 10 MB log with the 130
/// literals of the vendor token rules: two packed searches cost less than that one).
const PACKED: usize = 64;

static LITERALS: LazyLock<Literals> = LazyLock::new(|| {
    let mut patterns: Vec<String> = Vec::new();
    for literals in SHAPE_ANCHORS {
        for literal in literals {
            if !patterns.iter().any(|p| p == literal) {
                patterns.push(literal.to_string());
            }
        }
    }
    for (word, _) in WORDS {
        // Four letters: rarer than three in text, and still few patterns (16 per word).
        let start = &word.as_bytes()[..4];
        for cases in 0..16 {
            let variant = start
                .iter()
                .enumerate()
                .map(|(i, &b)| match cases >> i & 1 {
                    1 => char::from(b.to_ascii_uppercase()),
                    _ => char::from(b),
                })
                .collect();
            patterns.push(variant);
        }
    }
    // Leftmost-first searches use aho-corasick's packed (Teddy) prefilter; overlapping ones
    // do not, so overlaps are found by searching again from one byte after each match.
    // Longest first: a packed search compares as many leading bytes as its shortest
    // literal has (at most four), so the few short literals (`SK`, `eyJ`, `://`) get a
    // searcher of their own and do not make the others stop at every second byte.
    patterns.sort_by_key(|p| std::cmp::Reverse(p.len()));
    let searchers = patterns
        .chunks(PACKED)
        .map(|chunk| {
            AhoCorasick::builder()
                .match_kind(MatchKind::LeftmostFirst)
                .build(chunk)
                .expect("valid anchors")
        })
        .collect();
    Literals { searchers }
});

/// How a text is spelled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Spelling {
    /// The text itself.
    Decoded,
    /// The bytes between the quotes of a JSON string literal whose escapes are all simple
    /// ones (`\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`: no `\/`, no `\u`).
    Escaped,
}

/// What a text may hold.
#[derive(Debug, Default)]
pub(super) struct Found {
    /// Bit `i`: shape rule `i` may match.
    pub(super) shape_rules: u64,
    /// The names before separators that hold a stem of a secret word, in order (a
    /// `name=value` pair with a secret name may be there): each a run of name characters,
    /// by its byte range.
    pub(super) names: Vec<Range<usize>>,
}

impl Found {
    /// No rule can match.
    pub(super) fn is_empty(&self) -> bool {
        self.shape_rules == 0 && self.names.is_empty()
    }

    /// Whether shape rule `rule` may match.
    pub(super) fn may_match(&self, rule: usize) -> bool {
        self.shape_rules & (1 << rule) != 0
    }

    /// Where each of [`names`](Found::names) starts.
    pub(super) fn name_starts(&self) -> Vec<usize> {
        self.names.iter().map(|name| name.start).collect()
    }
}

/// What `text` (spelled as `spelling` says) may hold: the shape rules whose anchors are in
/// it, and the names of its possible pairs.
pub(super) fn find(text: &[u8], spelling: Spelling) -> Found {
    let mut names = Vec::new();
    let shape_rules = scan(text, spelling, |name| {
        names.push(name);
        true
    });
    Found {
        shape_rules: shape_rules.unwrap_or_default(),
        names,
    }
}

/// The shape rules (as bits) whose anchors are in `text`, each name of a possible pair
/// given to `on_name` in order (see [`Found::names`]) — without keeping them: a long log
/// has a name before every `Author:`. `None` as soon as `on_name` says `false`.
pub(super) fn scan(
    text: &[u8],
    spelling: Spelling,
    mut on_name: impl FnMut(Range<usize>) -> bool,
) -> Option<u64> {
    let mut shape_rules = 0;
    if text.len() < SHORT {
        // Short text (most keys and values of a payload): a look at each byte costs less
        // than setting up the searches.
        for at in 0..text.len() {
            shape_rules |= shape_rules_at(text, at);
        }
    } else {
        for searcher in &LITERALS.searchers {
            let mut at = 0;
            while let Some(hit) = searcher.find(Input::new(text).span(at..text.len())) {
                // Every rule with an anchor here (a literal may be several rules' anchor,
                // or start another one, and a search reports one of them).
                shape_rules |= shape_rules_at(text, hit.start());
                at = hit.start() + 1;
            }
        }
    }
    for separator in memchr::memchr2_iter(b'=', b':', text) {
        let Some(name) = name_before(text, separator, spelling) else {
            continue;
        };
        let run = &text[name.clone()];
        // Most names hold no letter a stem starts with (`00` of a time), or no stem.
        if !run
            .iter()
            .any(|&b| BYTES[usize::from(b)] & MAY_START_STEM != 0)
            || !holds_stem(run)
        {
            continue;
        }
        if run.windows(6).any(|w| w.eq_ignore_ascii_case(b"cookie")) {
            shape_rules |= 1 << COOKIE;
        }
        if !on_name(name) {
            return None;
        }
    }
    if !text.is_ascii()
        && FOLDED
            .iter()
            .any(|folded| memchr::memmem::find(text, folded.as_bytes()).is_some())
    {
        shape_rules |= (1 << BEARER) | (1 << BASIC) | (1 << COOKIE);
    }
    Some(shape_rules)
}

/// What a byte may be, for the names before separators (one look-up per byte).
static BYTES: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        if is_name_byte(b as u8) {
            table[b] |= NAME;
        }
        if may_start_stem(b as u8) {
            table[b] |= MAY_START_STEM;
        }
        b += 1;
    }
    table
};
/// A byte of a pair's name.
const NAME: u8 = 1;
/// A byte a stem of a secret word may start with.
const MAY_START_STEM: u8 = 2;

/// Texts shorter than this are looked at byte by byte for the shape rules' anchors.
const SHORT: usize = 64;

/// The shape rules (as bits) whose anchor starts at `text[at]`, the case-insensitive
/// `bearer` and `basic` included.
fn shape_rules_at(text: &[u8], at: usize) -> u64 {
    let rest = &text[at..];
    let mut rules = 0;
    if matches!(rest[0], b'b' | b'B') {
        rules = case_insensitive_rules_at(text, at);
    }
    // Rules with an anchor starting with these two bytes (one look-up; most pairs start
    // none), then those rules' anchors, one set bit at a time.
    let Some(&second) = rest.get(1) else {
        return rules;
    };
    let mut candidates = FIRST_TWO[usize::from(rest[0]) << 8 | usize::from(second)];
    while candidates != 0 {
        let rule = candidates.trailing_zeros() as usize;
        candidates &= candidates - 1;
        if SHAPE_ANCHORS[rule]
            .iter()
            .any(|l| rest.starts_with(l.as_bytes()))
        {
            rules |= 1 << rule;
        }
    }
    rules
}

/// For each pair of bytes (the first times 256 plus the second), the rules (as bits) with a
/// case-sensitive anchor starting with it. (One table of both bytes: the base64 words'
/// anchors start with most letters and have most letters second, so two tables of one byte
/// each said "maybe" at most letter pairs.)
static FIRST_TWO: LazyLock<Vec<u64>> = LazyLock::new(|| {
    let mut table = vec![0u64; 1 << 16];
    for (rule, literals) in SHAPE_ANCHORS.iter().enumerate() {
        for literal in *literals {
            let bytes = literal.as_bytes();
            table[usize::from(bytes[0]) << 8 | usize::from(bytes[1])] |= 1 << rule;
        }
    }
    table
});

/// `bearer` or `basic` (without case) at `text[at]`, as a shape rule bit.
fn case_insensitive_rules_at(text: &[u8], at: usize) -> u64 {
    let rest = &text[at..];
    WORDS
        .iter()
        .filter(|(word, _)| starts_with_ignoring_case(rest, word.as_bytes()))
        .fold(0, |rules, (_, rule)| rules | 1 << rule)
}

fn starts_with_ignoring_case(text: &[u8], word: &[u8]) -> bool {
    text.get(..word.len())
        .is_some_and(|start| start.eq_ignore_ascii_case(word))
}

/// The run of name characters whose pair the separator at `separator` would end: the
/// name of `PAIR_PATTERN` (`[A-Za-z0-9_.-]`, from a letter or `_` on) right before
/// `\\?["']?[ \t]*` and the separator. `None` when there is no such run.
///
/// A name always runs to the end of its run (none of the characters after it is a name
/// character), so walking back from the separator over those characters finds the only
/// name that separator can end.
fn name_before(text: &[u8], separator: usize, spelling: Spelling) -> Option<Range<usize>> {
    // Most separators follow their name directly (`Author:`, `00:00`); in escaped text,
    // unless that byte might be an escape's letter (`\t=`).
    let direct = separator > 0
        && is_name_byte(text[separator - 1])
        && (spelling == Spelling::Decoded || separator < 2 || text[separator - 2] != b'\\');
    let mut end = separator;
    if !direct {
        end = end_of_name_before(text, separator, spelling);
    }
    let mut start = end;
    while start > 0 && BYTES[usize::from(text[start - 1])] & NAME != 0 {
        start -= 1;
    }
    // `\nAuthor:`: the `n` belongs to the escape, not to the name.
    if spelling == Spelling::Escaped
        && start < end
        && start > 0
        && text[start - 1] == b'\\'
        && is_escape_letter(text, start)
    {
        start += 1;
    }
    (start < end).then_some(start..end)
}

/// Where a name would end before `separator`: before the `\\?["']?[ \t]*` between them.
fn end_of_name_before(text: &[u8], separator: usize, spelling: Spelling) -> usize {
    let mut end = separator;
    loop {
        let blank = spelled_before(text, end, b' ', spelling)
            .or_else(|| spelled_before(text, end, b'\t', spelling));
        match blank {
            Some(start) => end = start,
            None => break,
        }
    }
    if let Some(start) = spelled_before(text, end, b'"', spelling)
        .or_else(|| spelled_before(text, end, b'\'', spelling))
    {
        end = start;
    }
    // Any number of backslashes: JSON escaped again and again (`\\\"password\\\":`).
    while let Some(start) = spelled_before(text, end, b'\\', spelling) {
        end = start;
    }
    end
}

/// Where the character `c` (space, tab, `"`, `'` or `\`) starts when it is spelled right
/// before `end`: as itself, or, in escaped text, as its escape.
fn spelled_before(text: &[u8], end: usize, c: u8, spelling: Spelling) -> Option<usize> {
    let letter = match (spelling, c) {
        (Spelling::Decoded, _) | (Spelling::Escaped, b' ' | b'\'') => {
            return (end > 0 && text[end - 1] == c).then(|| end - 1);
        }
        (Spelling::Escaped, b'\t') => b't',
        (Spelling::Escaped, other) => other,
    };
    (end >= 2 && text[end - 1] == letter && is_escape_letter(text, end - 1)).then(|| end - 2)
}

/// Whether `text[at]` is the letter of an escape (the `n` of `\n`): an odd run of
/// backslashes ends right before it.
fn is_escape_letter(text: &[u8], at: usize) -> bool {
    let backslashes = text[..at].iter().rev().take_while(|&&b| b == b'\\').count();
    backslashes % 2 == 1
}

#[cfg(test)]
pub(super) mod tests {
    //! The anchor scan this one replaced (one case-insensitive automaton over every anchor
    //! and every stem of the secret words), kept as the oracle of a differential test
    //! (`text::tests`): both must mask the same.

    use std::sync::LazyLock;

    use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};

    use proptest::prelude::*;

    use super::super::keys::STEMS;
    use super::super::oracle::random_text;
    use super::{BASIC, BEARER, COOKIE, FOLDED, Found, SHAPE_ANCHORS, SHORT, Spelling, find};

    /// Every rule's anchors: the case-insensitive rules' words at their index.
    fn all_anchors() -> Vec<Vec<&'static str>> {
        let mut all: Vec<Vec<&'static str>> = SHAPE_ANCHORS
            .iter()
            .map(|literals| literals.to_vec())
            .collect();
        all[BEARER].push("bearer");
        all[BASIC].push("basic");
        all[COOKIE].push("cookie");
        all
    }

    enum Anchor {
        Shape(usize),
        Folded,
        Stem,
    }

    static AUTOMATON: LazyLock<(AhoCorasick, Vec<Anchor>)> = LazyLock::new(|| {
        let mut patterns: Vec<&[u8]> = Vec::new();
        let mut anchors = Vec::new();
        for (rule, literals) in all_anchors().into_iter().enumerate() {
            for literal in literals {
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
        (searcher, anchors)
    });

    /// The old scan: every anchor, without case, and every stem (as a name of one byte
    /// range starting at the stem: the pair step reads the whole run from there).
    pub(in super::super) fn find_by_automaton(text: &str) -> Found {
        let (searcher, anchors) = &*AUTOMATON;
        let mut found = Found::default();
        let mut stems = Vec::new();
        for hit in searcher.find_overlapping_iter(text) {
            match anchors[hit.pattern().as_usize()] {
                Anchor::Shape(rule) => found.shape_rules |= 1 << rule,
                Anchor::Folded => found.shape_rules |= (1 << BEARER) | (1 << BASIC) | (1 << COOKIE),
                Anchor::Stem => stems.push(hit.start()),
            }
        }
        stems.sort_unstable();
        found.names = stems.into_iter().map(|s| s..s + 1).collect();
        found
    }

    #[test]
    fn names_are_read_around_escapes() {
        let names = |text: &str, spelling| -> Vec<String> {
            let found = find(text.as_bytes(), spelling);
            found
                .names
                .iter()
                .map(|r| text[r.clone()].to_string())
                .collect()
        };
        // Decoded: the characters themselves.
        assert_eq!(names("x\npassword \t= a", Spelling::Decoded), ["password"]);
        assert_eq!(names("my_token\\\" : x", Spelling::Decoded), ["my_token"]);
        // Escaped: `\n` before the name, `\t` and `\"` after it, an escaped backslash.
        assert_eq!(
            names(r#"x\npassword \t= a"#, Spelling::Escaped),
            ["password"]
        );
        assert_eq!(
            names(r#"\"api_key\":\"k\""#, Spelling::Escaped),
            ["api_key"]
        );
        assert_eq!(names(r#"token\\\" : x"#, Spelling::Escaped), ["token"]);
        // `\\n` is a backslash and an `n`: the `n` starts the name.
        assert_eq!(names(r#"\\npass=x"#, Spelling::Escaped), ["npass"]);
        // Plain names and runs with no stem are not listed.
        assert!(names("Date: 00:00:00 author x", Spelling::Decoded).is_empty());
        assert!(names("password x", Spelling::Decoded).is_empty());
    }

    #[test]
    fn every_anchor_is_found_in_short_text_too() {
        for (rule, literals) in SHAPE_ANCHORS.iter().enumerate() {
            for literal in *literals {
                let short = format!("x {literal} y");
                assert!(
                    find(short.as_bytes(), Spelling::Decoded).may_match(rule),
                    "{literal}"
                );
                let long = format!("{short}{}", " ".repeat(SHORT));
                assert!(
                    find(long.as_bytes(), Spelling::Decoded).may_match(rule),
                    "{literal}"
                );
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2048))]

        /// Short text is looked at byte by byte, long text with the searches: the same
        /// candidates either way (`#` starts no anchor, name or separator).
        #[test]
        fn short_and_long_text_have_the_same_candidates(text in random_text()) {
            let end = (0..SHORT).rev().find(|&i| text.is_char_boundary(i)).unwrap_or(0);
            let text = text.get(..end).unwrap_or(&text);
            let long = format!("{text}{}", "#".repeat(SHORT));
            let (short, long) = (find(text.as_bytes(), Spelling::Decoded), find(long.as_bytes(), Spelling::Decoded));
            prop_assert_eq!(short.shape_rules, long.shape_rules, "{:?}", text);
            prop_assert_eq!(short.names, long.names, "{:?}", text);
        }
    }

    #[test]
    fn shape_anchors_are_found_overlapping() {
        // `sk-` ends where `-----BEGIN ` starts: both rules are candidates.
        let found = find(b"sk-----BEGIN RSA", Spelling::Decoded);
        assert!(found.may_match(0) && found.may_match(9));
        let found = find(
            "Bearer x; BASIC y; Set-Cookie: z".as_bytes(),
            Spelling::Decoded,
        );
        assert!(found.may_match(BEARER) && found.may_match(BASIC) && found.may_match(COOKIE));
        // Folded letters make every case-insensitive rule a candidate.
        let found = find("baſic".as_bytes(), Spelling::Decoded);
        assert!(found.may_match(BASIC));
        assert!(find(b"because cool bar", Spelling::Decoded).is_empty());
    }
}
