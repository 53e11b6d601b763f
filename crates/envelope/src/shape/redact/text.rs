//! Secrets in free text: tokens of known shapes, private key blocks and `name=value` pairs
//! whose name is secret-like ([`secret_key_rule`](super::keys::secret_key_rule)).
//!
//! Each secret is replaced in place by [`MASK`], keeping what names it (`password=***`,
//! `Bearer ***`), so the text still reads. Text that is already masked is left alone, so a
//! second pass finds nothing.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::{Captures, Regex};

use super::MASK;
use super::anchors::{self, Found, Spelling};
use super::pairs::redact_pairs;

/// A secret recognised by its shape.
pub(super) struct ShapeRule {
    pub(super) id: &'static str,
    pub(super) regex: Regex,
    /// Capture group kept before the mask (`Bearer ` in `Bearer ***`), if any.
    pub(super) keep: Option<usize>,
    /// A further test of the match (a bearer "token" must look like one), if any.
    pub(super) accept: Option<fn(&Captures<'_>) -> bool>,
}

/// The shape rules, in the order they run. `anchors` finds where each may match, by the
/// same index.
pub(super) static SHAPE_RULES: LazyLock<Vec<ShapeRule>> = LazyLock::new(|| {
    let rule = |id, pattern: &str, keep, accept| ShapeRule {
        id,
        regex: Regex::new(pattern).expect("valid redaction pattern"),
        keep,
        accept,
    };
    vec![
        // A block cut before its END line is masked up to where its base64 (and header
        // lines) stop.
        rule(
            "text:private_key",
            r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----(?:[\s\S]*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----|[A-Za-z0-9+/=\s:,\\-]*)",
            None,
            None,
        ),
        rule(
            "text:jwt",
            r"\beyJ[A-Za-z0-9_-]+\.eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*",
            None,
            None,
        ),
        rule(
            "text:bearer",
            r"(?i)(\bbearer[ \t]+)([A-Za-z0-9\-._~+/]+=*)",
            Some(1),
            Some(looks_random),
        ),
        rule(
            "text:basic_auth",
            r"(?i)(\bbasic[ \t]+)([A-Za-z0-9+/]{4,}={0,2})",
            Some(1),
            Some(is_basic_credential),
        ),
        rule(
            "text:aws_access_key",
            r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",
            None,
            None,
        ),
        rule(
            "text:github_token",
            r"\b(?:gh[pousr]_[A-Za-z0-9]{36,255}\b|github_pat_[A-Za-z0-9_]{22,255})",
            None,
            None,
        ),
        rule(
            "text:slack_token",
            r"\b(?:xox[abposr]|xapp)-[A-Za-z0-9-]{10,}",
            None,
            None,
        ),
        rule(
            "text:stripe_key",
            r"\b[rs]k_(?:live|test)_[A-Za-z0-9]{10,}",
            None,
            None,
        ),
        rule(
            "text:openai_key",
            r"\bsk-(?:proj-|ant-)?[A-Za-z0-9_-]{20,}",
            None,
            None,
        ),
        rule(
            "text:google_api_key",
            r"\bAIza[0-9A-Za-z_-]{35}",
            None,
            None,
        ),
        // A cookie header's value is a list of name=value pairs: all of the line goes.
        rule(
            "text:cookie",
            r#"(?im)(\b(?:set-)?cookies?\\?["']?[ \t]*[:=][ \t]*)([^\r\n]+)"#,
            Some(1),
            None,
        ),
    ]
});

/// A bearer token has a digit or both cases (`bearer of this letter` is prose).
fn looks_random(caps: &Captures<'_>) -> bool {
    let token = caps.get(2).map_or("", |m| m.as_str());
    token.len() >= 8
        && (token.bytes().any(|b| b.is_ascii_digit())
            || (token.bytes().any(|b| b.is_ascii_uppercase())
                && token.bytes().any(|b| b.is_ascii_lowercase())))
}

/// Basic credentials are base64 of `user:password`.
fn is_basic_credential(caps: &Captures<'_>) -> bool {
    let token = caps.get(2).map_or("", |m| m.as_str());
    crate::base64::decode_strict(token.as_bytes())
        .ok()
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .is_some_and(|text| text.contains(':'))
}

/// `text` with every free-text secret masked, and the ids of the rules that matched (in
/// rule order, each once).
pub fn redact_text(text: &str) -> Option<(String, Vec<&'static str>)> {
    redact_text_finding(text, find_decoded)
}

/// [`redact_text`] with `find` telling where the rules may match.
fn redact_text_finding(
    text: &str,
    find: impl Fn(&str) -> Found,
) -> Option<(String, Vec<&'static str>)> {
    mask_shapes(text, &find)?.mask_pairs(&find)
}

/// A text after the first of the free-text rules' two stages, the shape rules: the pairs
/// are next ([`ShapesMasked::mask_pairs`]).
pub(super) struct ShapesMasked<'t> {
    /// The text with the shape rules' matches masked.
    pub(super) text: Cow<'t, str>,
    /// The shape rules that fired, in rule order.
    fired: Vec<&'static str>,
    /// Where the rules may match the text as given.
    found: Found,
}

/// The first stage of [`redact_text`]: the text with the shape rules' matches masked;
/// `None` when no rule of either stage may match it.
pub(super) fn mask_shapes<'t>(
    text: &'t str,
    find: &impl Fn(&str) -> Found,
) -> Option<ShapesMasked<'t>> {
    // No rule matches fewer than 10 bytes without `=` or `:` (the shortest JWT has 10):
    // most keys and values of a payload are that short.
    if text.len() < 10 && !text.contains(['=', ':']) {
        return None;
    }
    // One pass over the text finds the rules' anchors; most text has none.
    let found = find(text);
    if found.is_empty() {
        return None;
    }
    let mut current = Cow::Borrowed(text);
    let mut fired = Vec::new();
    // The rules that match the text as given run, in order, each on what the ones before
    // it left (a rule with no anchor in the text cannot match it).
    let candidates: Vec<&ShapeRule> = SHAPE_RULES
        .iter()
        .enumerate()
        .filter(|&(i, rule)| found.may_match(i) && rule.regex.is_match(text))
        .map(|(_, rule)| rule)
        .collect();
    for rule in candidates {
        if let Some(replaced) = apply_shape_rule(rule, &current) {
            fired.push(rule.id);
            current = Cow::Owned(replaced);
        }
    }
    Some(ShapesMasked {
        text: current,
        fired,
        found,
    })
}

impl ShapesMasked<'_> {
    /// The second stage of [`redact_text`]: the secret pairs masked too; the text and the
    /// rules that fired, or `None` when none did.
    pub(super) fn mask_pairs(
        self,
        find: &impl Fn(&str) -> Found,
    ) -> Option<(String, Vec<&'static str>)> {
        let ShapesMasked {
            text: mut current,
            mut fired,
            found,
        } = self;
        let stems = match &current {
            Cow::Borrowed(_) => found.name_starts(),
            // The masks moved the text: find the names again.
            Cow::Owned(masked) => find(masked).name_starts(),
        };
        if let Some(masked) = redact_pairs(&current, &stems) {
            fired.push("text:secret_pair");
            current = Cow::Owned(masked);
        }
        (!fired.is_empty()).then(|| (current.into_owned(), fired))
    }
}

/// How [`redact_text`] finds where the rules may match a decoded text.
pub(super) fn find_decoded(text: &str) -> Found {
    anchors::find(text.as_bytes(), Spelling::Decoded)
}

/// `text` with the matches of one shape rule masked; `None` when none was a secret.
fn apply_shape_rule(rule: &ShapeRule, text: &str) -> Option<String> {
    let mut hit = false;
    let replaced = rule.regex.replace_all(text, |caps: &Captures<'_>| {
        let whole = caps.get(0).map_or("", |m| m.as_str());
        let kept = rule
            .keep
            .and_then(|i| caps.get(i))
            .map_or("", |m| m.as_str());
        // Already masked, or not a secret after all: leave it.
        if &whole[kept.len()..] == MASK || rule.accept.is_some_and(|accept| !accept(caps)) {
            return whole.to_string();
        }
        hit = true;
        format!("{kept}{MASK}")
    });
    hit.then(|| replaced.into_owned())
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::super::anchors::tests::find_by_automaton;
    use super::super::oracle::random_text;
    use super::{redact_text, redact_text_finding};

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4096))]

        /// The scan for rare bytes and separators masks what the automaton over every anchor
        /// and stem (the scan before it) masks.
        #[test]
        fn the_separator_scan_masks_what_the_stem_automaton_masks(text in random_text()) {
            prop_assert_eq!(
                redact_text(&text),
                redact_text_finding(&text, find_by_automaton),
                "{:?}", text
            );
        }
    }
}
