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
    /// The capture groups masked (each that took part in the match; `0`: all of it). What
    /// the match holds around them stays (`Bearer ` in `Bearer ***`, `postgres://u:` and
    /// `@h` in `postgres://u:***@h`).
    pub(super) mask: &'static [usize],
    /// A further test of the match (a bearer "token" must look like one), if any.
    pub(super) accept: Option<fn(&Captures<'_>) -> bool>,
}

/// The whole match is the secret.
const WHOLE: &[usize] = &[0];
/// The second group is the secret (the first names it: `Bearer `).
const SECOND: &[usize] = &[2];

/// The shape rules, in the order they run. `anchors` finds where each may match, by the
/// same index (`anchors::SHAPE_ANCHORS`).
pub(super) static SHAPE_RULES: LazyLock<Vec<ShapeRule>> = LazyLock::new(|| {
    let rule = |id, pattern: &str, mask, accept| ShapeRule {
        id,
        regex: Regex::new(pattern).expect("valid redaction pattern"),
        mask,
        accept,
    };
    vec![
        // A block cut before its END line is masked up to where its base64 (and header
        // lines) stop. PGP's armour says `PRIVATE KEY BLOCK`.
        rule(
            "text:private_key",
            r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----(?:[\s\S]*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|[A-Za-z0-9+/=\s:,\\-]*)",
            WHOLE,
            None,
        ),
        rule(
            "text:jwt",
            r"\beyJ[A-Za-z0-9_-]+\.eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*",
            WHOLE,
            None,
        ),
        rule(
            "text:bearer",
            r"(?i)(\bbearer[ \t]+)([A-Za-z0-9\-._~+/]+=*)",
            SECOND,
            Some(looks_random),
        ),
        rule(
            "text:basic_auth",
            r"(?i)(\bbasic[ \t]+)([A-Za-z0-9+/]{4,}={0,2})",
            SECOND,
            Some(is_basic_credential),
        ),
        // An unlabelled secret access key (40 characters of base64) on the line of an
        // access key id, within 200 characters either side; the id is the next rule's.
        // Never across a line (long texts are redacted a piece of lines at a time).
        rule(
            "text:aws_secret_key",
            concat!(
                r"(?mR)\b(?:AKIA|ASIA)[0-9A-Z]{16}\b[^\r\n]{0,200}?(?:^|[^A-Za-z0-9/+\r\n])([A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+=\r\n]|$)",
                r"|(?:^|[^A-Za-z0-9/+\r\n])([A-Za-z0-9/+]{40})[^A-Za-z0-9/+=\r\n][^\r\n]{0,200}?\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",
            ),
            &[1, 2],
            Some(secret_is_mixed_case),
        ),
        rule(
            "text:aws_access_key",
            // `_` counts as an edge too (`\b` does not see one between `_` and a letter):
            // a key inside an identifier (`deploy_AKIA…_prod`, a tool name made of a text)
            // is still a key. The `_` goes with the mask.
            r"(?:\b|_)(?:AKIA|ASIA)[0-9A-Z]{16}(?:\b|_)",
            WHOLE,
            None,
        ),
        rule(
            "text:github_token",
            r"(?:\b|_)(?:gh[pousr]_[A-Za-z0-9]{36,255}(?:\b|_)|github_pat_[A-Za-z0-9_]{22,255})",
            WHOLE,
            None,
        ),
        rule(
            "text:slack_token",
            r"\b(?:xox[abposr]|xapp)-[A-Za-z0-9-]{10,}",
            WHOLE,
            None,
        ),
        rule(
            "text:stripe_key",
            r"(?:\b|_)(?:[rs]k_(?:live|test)_[A-Za-z0-9]{10,}|whsec_[A-Za-z0-9+/=]{24,})",
            WHOLE,
            None,
        ),
        // OpenAI, Anthropic (`sk-ant-`): random characters, so digits and both cases (a
        // slug such as `sk-circle-bounce-delay` is no key).
        rule(
            "text:openai_key",
            r"\bsk-(?:proj-|ant-)?[A-Za-z0-9_-]{20,}",
            WHOLE,
            Some(whole_is_random),
        ),
        rule(
            "text:google_api_key",
            r"\bAIza[0-9A-Za-z_-]{35}",
            WHOLE,
            None,
        ),
        // A cookie header's value is a list of name=value pairs: all of the line goes.
        rule(
            "text:cookie",
            r#"(?im)(\b(?:set-)?cookies?\\?["']?[ \t]*[:=][ \t]*)([^\r\n]+)"#,
            SECOND,
            None,
        ),
        // The password of a URL of any scheme (`postgres://u:***@h`).
        rule(
            "text:url_password",
            r#"(\b[A-Za-z][A-Za-z0-9+.-]*://[^\s:/?#@"'<>]*:)([^\s/?#@"'<>]+)@"#,
            SECOND,
            None,
        ),
        // `curl -u user:password` (or `--user`): the password.
        rule(
            "text:curl_user",
            r#"(\bcurl\b[^\r\n]*?[ \t](?:-u|--user)(?:[ \t]+|=)['"]?[^\s:'"]*:)([^\s'"]+)"#,
            SECOND,
            None,
        ),
        rule(
            "text:huggingface_token",
            r"\bhf_[A-Za-z0-9]{34,}",
            WHOLE,
            Some(whole_is_mixed_case),
        ),
        rule(
            "text:gitlab_token",
            r"\bgl(?:pat|dt|ptt|rt|cbt|oas|soat|ft|imt)-[0-9A-Za-z_-]{20,}",
            WHOLE,
            None,
        ),
        rule(
            "text:sendgrid_key",
            r"\bSG\.[0-9A-Za-z_-]{16,}\.[0-9A-Za-z_-]{30,}",
            WHOLE,
            None,
        ),
        rule(
            "text:slack_webhook",
            r"(\bhooks\.slack\.com/(?:services|workflows|triggers)/)([A-Za-z0-9/_+-]{16,})",
            SECOND,
            None,
        ),
        rule(
            "text:discord_webhook",
            r"(\bdiscord(?:app)?\.com/api/(?:v[0-9]+/)?webhooks/)([0-9]+/[A-Za-z0-9_-]+)",
            SECOND,
            None,
        ),
        // A bot's id, `:`, then 35 characters from `AA` (also after `/bot` in an API URL).
        rule(
            "text:telegram_bot_token",
            r"(?:\bbot|\b)([0-9]{8,10}:AA[A-Za-z0-9_-]{33,})",
            &[1],
            None,
        ),
        rule(
            "text:google_oauth",
            r"\b(?:ya29\.[0-9A-Za-z_-]{20,}|GOCSPX-[0-9A-Za-z_-]{24,})",
            WHOLE,
            None,
        ),
        rule(
            "text:vault_token",
            r"\bhv[sbr]\.[0-9A-Za-z_-]{24,}",
            WHOLE,
            None,
        ),
        rule(
            "text:age_secret_key",
            r"\bAGE-SECRET-KEY-1[0-9A-Z]{50,}",
            WHOLE,
            None,
        ),
        rule(
            "text:shopify_token",
            r"\bshp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}",
            WHOLE,
            None,
        ),
        rule(
            "text:digitalocean_token",
            r"\bdo[opr]_v1_[a-f0-9]{64}",
            WHOLE,
            None,
        ),
        rule("text:groq_key", r"\bgsk_[A-Za-z0-9]{40,}", WHOLE, None),
        rule(
            "text:linear_key",
            r"\blin_(?:api|oauth)_[A-Za-z0-9]{40,}",
            WHOLE,
            None,
        ),
        // An API key sid (`SK…`), and an auth token (32 hex) on the line of an account sid
        // (`AC…`, not a secret by itself, so kept).
        rule(
            "text:twilio",
            concat!(
                r"\b(SK[0-9a-f]{32})\b",
                r"|\bAC[0-9a-f]{32}\b[^\r\n]{0,200}?\b([0-9a-f]{32})\b",
                r"|\b([0-9a-f]{32})\b[^\r\n]{0,200}?\bAC[0-9a-f]{32}\b",
            ),
            &[1, 2, 3],
            Some(secret_is_hex),
        ),
        rule("text:mailgun_key", r"\bkey-[0-9a-f]{32}\b", WHOLE, None),
        rule("text:npm_token", r"\bnpm_[A-Za-z0-9]{36}\b", WHOLE, None),
        rule(
            "text:pypi_token",
            r"\bpypi-(?:AgEIcHlwaS5vcmc|AgENdGVzdC5weXBpLm9yZw)[A-Za-z0-9_-]{40,}",
            WHOLE,
            None,
        ),
        // A shared access signature (Azure) in a URL or a connection string.
        rule(
            "text:azure_sas",
            r"(\bsig=)([A-Za-z0-9%+/=_-]{16,})",
            SECOND,
            None,
        ),
        // A run of base64 inside a line (`client-key-data: LS0t…` of a kubeconfig) whose
        // text holds a secret, found by the base64 of words secrets hold (`base64_words`).
        rule(
            "text:base64_secret",
            r"[A-Za-z0-9+/_-]{40,}={0,2}",
            WHOLE,
            Some(base64_holds_secret),
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

/// Random text of letters and digits: both cases and a digit.
fn is_random(token: &str) -> bool {
    token.bytes().any(|b| b.is_ascii_digit()) && is_mixed_case(token)
}

fn is_mixed_case(token: &str) -> bool {
    token.bytes().any(|b| b.is_ascii_uppercase()) && token.bytes().any(|b| b.is_ascii_lowercase())
}

fn whole_is_random(caps: &Captures<'_>) -> bool {
    is_random(caps.get(0).map_or("", |m| m.as_str()))
}

fn whole_is_mixed_case(caps: &Captures<'_>) -> bool {
    is_mixed_case(caps.get(0).map_or("", |m| m.as_str()))
}

/// The secret of a rule with one of several groups: both cases (a git commit id is not).
fn secret_is_mixed_case(caps: &Captures<'_>) -> bool {
    caps.iter()
        .skip(1)
        .flatten()
        .any(|m| is_mixed_case(m.as_str()))
}

/// The secret of a rule with one of several groups: hex with letters and digits.
fn secret_is_hex(caps: &Captures<'_>) -> bool {
    caps.iter().skip(1).flatten().any(|m| {
        let hex = m.as_str().trim_start_matches("SK");
        hex.bytes().any(|b| b.is_ascii_digit()) && hex.bytes().any(|b| b.is_ascii_lowercase())
    })
}

/// Basic credentials are base64 of `user:password`.
fn is_basic_credential(caps: &Captures<'_>) -> bool {
    let token = caps.get(2).map_or("", |m| m.as_str());
    crate::base64::decode_strict(token.as_bytes())
        .ok()
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .is_some_and(|text| text.contains(':'))
}

/// The words whose base64 (`anchors::SHAPE_ANCHORS`, in each of the three alignments) is
/// the anchor of `text:base64_secret`: a run of base64 is masked only when its text holds
/// one of them, in this case, and a free-text rule masks something in that text.
pub(super) const BASE64_WORDS: [&str; 18] = [
    "-----BEGIN ",
    "PRIVATE KEY",
    "password",
    "PASSWORD",
    "Password",
    "passwd",
    "secret",
    "SECRET",
    "Secret",
    "token",
    "TOKEN",
    "Token",
    "Bearer",
    "AKIA",
    "ghp_",
    "_key",
    "_KEY",
    "apiKey",
];

/// Whether a run of base64 decodes to text that holds a secret (see [`BASE64_WORDS`]).
fn base64_holds_secret(caps: &Captures<'_>) -> bool {
    use base64::Engine as _;
    use base64::alphabet::{STANDARD, URL_SAFE};
    use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
    let config = GeneralPurposeConfig::new()
        .with_decode_allow_trailing_bits(true)
        .with_decode_padding_mode(DecodePaddingMode::RequireNone);
    let run = caps.get(0).map_or("", |m| m.as_str()).trim_end_matches('=');
    // A last character alone holds no whole byte.
    let run = match run.len() % 4 {
        1 => &run[..run.len() - 1],
        _ => run,
    };
    let alphabet = match run.bytes().any(|b| b == b'-' || b == b'_') {
        true => &URL_SAFE,
        false => &STANDARD,
    };
    let Ok(bytes) = GeneralPurpose::new(alphabet, config).decode(run) else {
        return false;
    };
    let text = String::from_utf8_lossy(&bytes);
    BASE64_WORDS.iter().any(|word| text.contains(word)) && redact_text(&text).is_some()
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
    // Every rule runs, in order, each on what the ones before it left; a rule with no
    // anchor in the text cannot match it, nor what is left of it (a mask holds no anchor,
    // though it may let a rule match where it did not: `\b` before a mask's end). So
    // whether a rule runs depends on its own anchors only, and a long text redacted a piece
    // at a time runs the rules a piece of it needs.
    let candidates = SHAPE_RULES
        .iter()
        .enumerate()
        .filter(|&(i, _)| found.may_match(i))
        .map(|(_, rule)| rule);
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
    let replaced =
        rule.regex
            .replace_all(text, |caps: &Captures<'_>| match masked_match(rule, caps) {
                Some(masked) => {
                    hit = true;
                    masked
                }
                None => caps.get(0).map_or("", |m| m.as_str()).to_string(),
            });
    hit.then(|| replaced.into_owned())
}

/// A match of a shape rule with its secret groups masked; `None` when there is nothing to
/// mask (already masked, or not a secret after all).
pub(super) fn masked_match(rule: &ShapeRule, caps: &Captures<'_>) -> Option<String> {
    let whole = caps.get(0)?;
    let mut groups: Vec<regex::Match<'_>> = rule.mask.iter().filter_map(|&i| caps.get(i)).collect();
    groups.sort_by_key(|m| m.start());
    if groups.iter().all(|m| m.as_str() == MASK) || rule.accept.is_some_and(|accept| !accept(caps))
    {
        return None;
    }
    let (text, base) = (whole.as_str(), whole.start());
    let mut out = String::new();
    let mut copied = 0;
    for m in groups {
        out.push_str(&text[copied..m.start() - base]);
        out.push_str(MASK);
        copied = m.end() - base;
    }
    out.push_str(&text[copied..]);
    Some(out)
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
