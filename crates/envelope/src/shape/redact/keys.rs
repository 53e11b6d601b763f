//! Secret-like names: JSON keys, header names, `name=value` names in text.
//!
//! A name is split into lower-case words (at separators and lower-to-upper case changes,
//! `X-Api-Key` → `x api key`, `clientSecret` → `client secret`). It names a secret when its
//! *last* words do, after dropping trailing words that only say how the secret is written
//! (`value`, `b64`, a number): `auth_token` and `token_b64` are secrets, while `token_count`,
//! `max_tokens`, `auth_method` and `author` are not. A word never matches part of a word.

/// Words that are secrets when a name ends with them.
const SECRET_WORDS: [&str; 20] = [
    "password",
    "passwords",
    "passwd",
    "pwd",
    "pass",
    "pw",
    "passphrase",
    "passphrases",
    "secret",
    "secrets",
    "token",
    "auth",
    "authorization",
    "credential",
    "credentials",
    "cookie",
    "cookies",
    "apikey",
    "apikeys",
    "privatekey",
];

/// Secret words that also end other words' spellings in names glued together in lower case
/// (`identitytoken`, `dbpassword`, `clientsecret`): a last word ending with one is a secret.
const GLUED_WORDS: [&str; 5] = ["token", "password", "passwd", "passphrase", "secret"];

/// Short secret words that name other things too (`PWD` is the working directory, `pass`
/// a count of tests): a value under them that is a path, a number or a flag is kept.
const WEAK_WORDS: [&str; 3] = ["pwd", "pass", "pw"];

/// Words before a final `credentials` that make it a setting, not a secret
/// (`Access-Control-Allow-Credentials`, `withCredentials`).
const NOT_CREDENTIALS: [&str; 2] = ["allow", "with"];

/// Words before a final `key` that make it a secret key (`api_key`, `master_key`); a `key`
/// alone, a `sort_key` or a `public_key` is not one.
const KEY_QUALIFIERS: [&str; 21] = [
    "api",
    "private",
    "secret",
    "access",
    "master",
    "encryption",
    "decryption",
    "signing",
    "ssh",
    "ssl",
    "tls",
    "client",
    "session",
    "shared",
    "hmac",
    "aes",
    "gpg",
    "pgp",
    "account",
    "storage",
    "webhook",
];

/// Words before a final `keys` that make it a list of secret keys (`api_keys`); `ssh_keys`
/// and the like are lists of public keys as often as not.
const KEYS_QUALIFIERS: [&str; 8] = [
    "api",
    "private",
    "secret",
    "master",
    "encryption",
    "signing",
    "client",
    "access",
];

/// Words before a final `tokens` that make it a list of secrets: `tokens` alone, or
/// `max_tokens`, `input_tokens`, is a count.
const TOKENS_QUALIFIERS: [&str; 8] = [
    "access", "refresh", "auth", "api", "bearer", "session", "id", "oauth",
];

/// Trailing words that say how a secret is written, not what it is.
const ENCODING_WORDS: [&str; 13] = [
    "value",
    "val",
    "str",
    "string",
    "text",
    "raw",
    "plain",
    "b64",
    "base64",
    "hex",
    "hash",
    "hashed",
    "encrypted",
];

/// The words of a name: split at separators and lower-to-upper case changes, lower-cased.
pub(super) fn words(name: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut current = String::new();
    let mut previous_lower = false;
    for c in name.chars() {
        if !c.is_alphanumeric() {
            if !current.is_empty() {
                words.push(std::mem::take(&mut current));
            }
            previous_lower = false;
            continue;
        }
        if c.is_uppercase() && previous_lower && !current.is_empty() {
            words.push(std::mem::take(&mut current));
        }
        previous_lower = c.is_lowercase() || c.is_ascii_digit();
        current.extend(c.to_lowercase());
    }
    if !current.is_empty() {
        words.push(current);
    }
    words
}

/// Every word that makes a name a secret holds one of these (case aside): a name that holds
/// none is not a secret, told without splitting it into words.
pub(super) const STEMS: [&[u8]; 8] = [
    b"pass",
    b"pw",
    b"secret",
    b"token",
    b"auth",
    b"credential",
    b"cookie",
    b"key",
];

/// Whether an ASCII name holds none of [`STEMS`] (most keys and `name=` names of a payload).
pub(super) fn surely_plain(name: &str) -> bool {
    name.is_ascii() && !holds_stem(name.as_bytes())
}

/// Whether `name` holds one of [`STEMS`], case aside: each is compared only where its first
/// letter is.
pub(super) fn holds_stem(name: &[u8]) -> bool {
    (0..name.len()).any(|i| {
        let starting = STARTING[usize::from(name[i])];
        starting != 0
            && STEMS.iter().enumerate().any(|(s, stem)| {
                starting & (1 << s) != 0
                    && name
                        .get(i..i + stem.len())
                        .is_some_and(|w| w.eq_ignore_ascii_case(stem))
            })
    })
}

/// Whether a stem starts with `b` (case aside).
pub(super) const fn may_start_stem(b: u8) -> bool {
    STARTING[b as usize] != 0
}

/// For each byte, the stems (bit `i`: `STEMS[i]`) whose first letter it is, case aside.
static STARTING: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut s = 0;
    while s < STEMS.len() {
        let first = STEMS[s][0];
        table[first.to_ascii_lowercase() as usize] |= 1 << s;
        table[first.to_ascii_uppercase() as usize] |= 1 << s;
        s += 1;
    }
    table
};

/// The rule id (`key:password`, `key:api_key`) of a name that names a secret.
pub fn secret_key_rule(name: &str) -> Option<String> {
    if surely_plain(name) {
        return None;
    }
    if name.is_ascii() {
        // Most names read here are ASCII (`Author` in every line of a `git log`): their
        // words are slices of the name, compared without case, nothing allocated.
        return rule_of_words(ascii_words_rev(name.as_bytes()));
    }
    let words = words(name);
    rule_of_words(words.iter().rev().map(|w| w.as_bytes()))
}

/// The rule a name's words (given last first) make it a secret of, if any.
pub(super) fn rule_of_words<'w>(words_rev: impl Iterator<Item = &'w [u8]>) -> Option<String> {
    let is_one_of = |word: &[u8], list: &[&'static str]| {
        list.iter()
            .copied()
            .find(|w| w.as_bytes().eq_ignore_ascii_case(word))
    };
    let mut words_rev = words_rev.peekable();
    let mut last = words_rev.next()?;
    // Drop trailing numbers and encoding words (`token_2`, `password_b64`), keeping one.
    while words_rev.peek().is_some()
        && (last.iter().all(u8::is_ascii_digit) || is_one_of(last, &ENCODING_WORDS).is_some())
    {
        last = words_rev.next()?;
    }
    // `password2`: a number glued to the last word.
    let digits = last.iter().rev().take_while(|b| b.is_ascii_digit()).count();
    let last = &last[..last.len() - digits];
    if let Some(word) = is_one_of(last, &SECRET_WORDS) {
        // `pass` and `pw` only end a name (`db_pass`, `SMTP_PW`): alone they are as often
        // prose (`First pass: done`).
        if matches!(word, "pass" | "pw") && words_rev.peek().is_none() {
            return None;
        }
        if word.starts_with("credential")
            && words_rev
                .next()
                .is_some_and(|before| is_one_of(before, &NOT_CREDENTIALS).is_some())
        {
            return None;
        }
        return Some(format!("key:{word}"));
    }
    if let Some(word) = GLUED_WORDS.iter().find(|w| {
        last.len() > w.len() && last[last.len() - w.len()..].eq_ignore_ascii_case(w.as_bytes())
    }) {
        return Some(format!("key:{word}"));
    }
    if last.eq_ignore_ascii_case(b"key") {
        let qualifier = is_one_of(words_rev.next()?, &KEY_QUALIFIERS)?;
        return Some(format!("key:{qualifier}_key"));
    }
    if last.eq_ignore_ascii_case(b"keys") {
        let qualifier = is_one_of(words_rev.next()?, &KEYS_QUALIFIERS)?;
        return Some(format!("key:{qualifier}_key"));
    }
    if last.eq_ignore_ascii_case(b"tokens") {
        is_one_of(words_rev.next()?, &TOKENS_QUALIFIERS)?;
        return Some("key:token".to_string());
    }
    None
}

/// Whether the value under a secret name of rule `rule` (`key:pwd`), given as text, hides
/// nothing: empty, already masked, a flag (`true`, `false`, `null`), `fetch`'s modes under
/// `credentials` (`include`, `omit`, `same-origin`); under a weak word ([`WEAK_WORDS`]) also
/// a path (`PWD=/home/ann`) or a number.
pub(super) fn keeps_text_value(rule: &str, value: &str) -> bool {
    if value.is_empty() || value == super::MASK {
        return true;
    }
    // A bare value in text runs on over the brackets that close what holds the pair
    // (`{"password": false}`).
    let value = value.trim_end_matches(['}', ']', ')']);
    if value.is_empty()
        || ["true", "false", "null"]
            .iter()
            .any(|flag| value.eq_ignore_ascii_case(flag))
    {
        return true;
    }
    // `fetch`'s setting: `credentials: "include"`.
    if rule == "key:credentials"
        && ["include", "omit", "same-origin"]
            .iter()
            .any(|mode| value.eq_ignore_ascii_case(mode))
    {
        return true;
    }
    let weak = rule
        .strip_prefix("key:")
        .is_some_and(|word| WEAK_WORDS.contains(&word));
    weak && (is_path(value) || value.bytes().all(|b| b.is_ascii_digit()))
}

/// A file system path: absolute, from home, relative with `./` or `../`, or a Windows
/// drive's (`C:\`).
fn is_path(value: &str) -> bool {
    let bytes = value.as_bytes();
    value.starts_with(['/', '~'])
        || value.starts_with("./")
        || value.starts_with("../")
        || (bytes.len() > 2
            && bytes[0].is_ascii_alphabetic()
            && bytes[1] == b':'
            && matches!(bytes[2], b'\\' | b'/'))
}

/// The words of an ASCII name, last first, as [`words`] splits them (not lower-cased).
fn ascii_words_rev(name: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut end = name.len();
    std::iter::from_fn(move || {
        while end > 0 && !name[end - 1].is_ascii_alphanumeric() {
            end -= 1;
        }
        if end == 0 {
            return None;
        }
        let mut start = end - 1;
        while start > 0 {
            let (before, here) = (name[start - 1], name[start]);
            // A word starts after a separator, or at an upper-case letter after a
            // lower-case letter or a digit (`clientSecret`, `sha256Key`).
            let split = !before.is_ascii_alphanumeric()
                || (here.is_ascii_uppercase()
                    && (before.is_ascii_lowercase() || before.is_ascii_digit()));
            if split {
                break;
            }
            start -= 1;
        }
        let word = &name[start..end];
        end = start;
        Some(word)
    })
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::{STEMS, holds_stem};

    proptest! {
        #[test]
        fn stems_are_found_as_a_search_for_each_finds_them(name in "[a-zA-Z0-9_ .-]{0,12}(pass|Pw|secrEt|token|AUTH|credential|cookie|Key)?[a-zA-Z0-9_ .-]{0,12}") {
            let expected = STEMS.iter().any(|stem| {
                name.as_bytes().windows(stem.len()).any(|w| w.eq_ignore_ascii_case(stem))
            });
            prop_assert_eq!(holds_stem(name.as_bytes()), expected, "{:?}", name);
        }
    }
}
