//! `anthropic-estimate`: an upper estimate of a Claude model's count, not an exact one.
//!
//! Anthropic publishes no tokenizer for its current models (only a token-counting API, which a
//! budget cannot call for every cut). Its one published tokenizer, npm `@anthropic-ai/tokenizer`
//! 0.0.4 (Claude 2 era, "legacy"), is what the estimate is checked against: on the corpus of
//! tests/reference.rs the estimate is at least the legacy count on every text
//! (tests/anthropic_estimate.rs; docs/tokens.md has the numbers).
//!
//! The estimate is the smaller of two upper bounds, both of the text's NFKC form (which the
//! legacy tokenizer counts):
//! - the UTF-8 bytes: the legacy tokenizer is a byte-level BPE, so no text makes more tokens
//!   than bytes (short texts, odd mixes of scripts and punctuation);
//! - ⌈1.4 × cl100k_base + 0.25 × the non-ASCII bytes⌉: the legacy vocabulary is, like
//!   cl100k_base, mostly English and code (in total the two count the corpus within 2%), and it
//!   has fewer tokens for other scripts, which the term in non-ASCII bytes pays for (Thai,
//!   Devanagari, Arabic cost it up to 4.3× what o200k_base counts). The smallest coefficients
//!   that hold on the corpus are 1.3 and 0.2, with no room on some texts; these leave at least
//!   7% above the legacy count on every corpus text of 10 tokens or more where this bound is
//!   the smaller one.

use unicode_normalization::{IsNormalized, UnicodeNormalization, is_nfkc_quick};

use crate::Tokenizer;

/// The estimate of `text`'s tokens (see the module's comment).
pub(crate) fn anthropic(text: &str) -> usize {
    // The legacy tokenizer counts the text's NFKC form, which a few characters expand (U+FDFA
    // is 3 bytes and 33 in NFKC, 15 legacy tokens): both bounds are taken of that form. The
    // quick check answers for almost all text without building it.
    if is_nfkc_quick(text.chars()) != IsNormalized::Yes {
        let normalized: String = text.nfkc().collect();
        if normalized != text {
            return bounds(&normalized);
        }
    }
    bounds(text)
}

fn bounds(text: &str) -> usize {
    let bytes = text.len();
    let non_ascii = text.bytes().filter(|b| !b.is_ascii()).count();
    let cl100k = Tokenizer::Cl100kBase.count(text);
    // ⌈(140 × cl100k + 25 × non_ascii) / 100⌉ in integers. No overflow: both are at most the
    // text's length, far below usize::MAX / 165.
    let linear = (140 * cl100k + 25 * non_ascii).div_ceil(100);
    bytes.min(linear)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_smaller_bound_is_taken() {
        assert_eq!(anthropic(""), 0);
        // English: 1.4 × cl100k_base is far below the bytes.
        let english = "The quick brown fox jumps over the lazy dog.";
        let cl100k = Tokenizer::Cl100kBase.count(english);
        assert_eq!(anthropic(english), (140 * cl100k).div_ceil(100));
        assert!(anthropic(english) < english.len());
        // A short mix of scripts: the bytes are the smaller bound.
        assert_eq!(anthropic("\u{85}é"), 4);
        // Counted in NFKC, as the legacy tokenizer counts: U+FDFA is 33 bytes there.
        assert!(anthropic("\u{FDFA}") >= 15, "{}", anthropic("\u{FDFA}"));
    }
}
