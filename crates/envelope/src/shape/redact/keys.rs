//! Secret-like names: JSON keys, header names, `name=value` names in text.
//!
//! A name is split into lower-case words (at separators and lower-to-upper case changes,
//! `X-Api-Key` → `x api key`, `clientSecret` → `client secret`). It names a secret when its
//! *last* words do, after dropping trailing words that only say how the secret is written
//! (`value`, `b64`, a number): `auth_token` and `token_b64` are secrets, while `token_count`,
//! `max_tokens`, `auth_method` and `author` are not. A word never matches part of a word.

/// Words that are secrets when a name ends with them.
const SECRET_WORDS: [&str; 15] = [
    "password",
    "passwd",
    "pwd",
    "passphrase",
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
    "privatekey",
];

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

/// Trailing words that say how a secret is written, not what it is.
const ENCODING_WORDS: [&str; 10] = [
    "value", "val", "str", "string", "text", "raw", "plain", "b64", "base64", "hex",
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
const STEMS: [&[u8]; 8] = [
    b"pass",
    b"pwd",
    b"secret",
    b"token",
    b"auth",
    b"credential",
    b"cookie",
    b"key",
];

/// Whether an ASCII name holds none of [`STEMS`] (most keys and `name=` names of a payload).
fn surely_plain(name: &str) -> bool {
    let bytes = name.as_bytes();
    name.is_ascii()
        && !STEMS.iter().any(|stem| {
            bytes
                .windows(stem.len())
                .any(|w| w.eq_ignore_ascii_case(stem))
        })
}

/// The rule id (`key:password`, `key:api_key`) of a name that names a secret.
pub fn secret_key_rule(name: &str) -> Option<String> {
    if surely_plain(name) {
        return None;
    }
    let words = words(name);
    let mut end = words.len();
    // Drop trailing numbers and encoding words: `token_2`, `password_b64`.
    while end > 1 {
        let last = words[end - 1].as_str();
        if last.bytes().all(|b| b.is_ascii_digit()) || ENCODING_WORDS.contains(&last) {
            end -= 1;
        } else {
            break;
        }
    }
    let words = &words[..end];
    // `password2`: a number glued to the last word.
    let last = words.last()?.trim_end_matches(|c: char| c.is_ascii_digit());
    if SECRET_WORDS.contains(&last) {
        return Some(format!("key:{last}"));
    }
    if last == "key" {
        let qualifier = words.len().checked_sub(2).map(|i| words[i].as_str())?;
        if KEY_QUALIFIERS.contains(&qualifier) {
            return Some(format!("key:{qualifier}_key"));
        }
    }
    None
}
