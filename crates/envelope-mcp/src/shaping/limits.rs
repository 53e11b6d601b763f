//! What a shaped result must fit: a byte limit, a token limit, or both (issue 30).
//!
//! A token limit is checked on the whole `result` as the client receives it (its compact
//! JSON text), counted by the tool's tokenizer. Every fitting loop of the shaping (the
//! library's cut, the two-channel cut, `emit`, the error result) compares a *cost* with a
//! *room* ([`Limits::cost`], [`Limits::room`]): the cost is the output's size in bytes, or,
//! when it is further over, its token count scaled so that the token limit is the room.
//! An output fits exactly when its cost is at most the room; the loops shrink by the
//! overshoot as they did with bytes, so a token limit rides on the same searches.

use envelope::shape::{Budget, Carried, TokenLimit};
use envelope::tokens::Tokenizer;
use std::sync::{Mutex, PoisonError};

/// `tokenizer` for as long as the process runs, shared: a limit holds a `&'static` one, so
/// limits stay `Copy` (a tokenizer loaded from a file is an `Arc`). The same tokenizer (by
/// name) asked for again is the one already kept, so reading a policy again keeps no more.
pub fn shared(tokenizer: Tokenizer) -> &'static Tokenizer {
    static SHARED: Mutex<Vec<&'static Tokenizer>> = Mutex::new(Vec::new());
    let mut shared = SHARED.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(kept) = shared.iter().find(|kept| ***kept == tokenizer) {
        return kept;
    }
    let kept: &'static Tokenizer = Box::leak(Box::new(tokenizer));
    shared.push(kept);
    kept
}

/// A limit in tokens: at most `limit` tokens as `tokenizer` counts the result's JSON text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TokenBudget {
    /// The most tokens (> 0).
    pub limit: usize,
    /// The tokenizer that counts them (`o200k_base` unless said otherwise).
    pub tokenizer: &'static Tokenizer,
}

impl TokenBudget {
    /// `limit` tokens counted by `o200k_base`.
    pub fn o200k(limit: usize) -> Self {
        TokenBudget {
            limit,
            tokenizer: shared(Tokenizer::O200kBase),
        }
    }

    /// The tokens of `bytes` (UTF-8 JSON text).
    pub fn count(&self, bytes: &[u8]) -> usize {
        self.tokenizer.count(&String::from_utf8_lossy(bytes))
    }
}

/// The byte limit of a tool that has a token limit and no byte limit.
pub const NO_BYTE_LIMIT: usize = Budget::NO_BYTE_LIMIT;

/// No token of the tokenizers we know covers this many bytes (o200k_base's longest has
/// 128): text longer than `n` times this is surely over `n` tokens, so it is not counted.
const BYTES_PER_TOKEN_AT_MOST: usize = 256;

/// Bytes a token holds on average in JSON and prose: what sizes a first attempt (and a
/// notice) under a token limit. The count then decides.
const BYTES_PER_TOKEN_ESTIMATE: usize = envelope::shape::budget::BYTES_PER_TOKEN_ESTIMATE;

/// A tool's limits: `bytes` ([`NO_BYTE_LIMIT`] when only tokens are limited) and
/// `tokens`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Limits {
    pub(crate) bytes: usize,
    pub(crate) tokens: Option<TokenBudget>,
}

impl Limits {
    pub(crate) fn new(bytes: usize, tokens: Option<TokenBudget>) -> Self {
        Limits { bytes, tokens }
    }

    /// The limits less what a caller appends: `bytes` and `tokens` of them.
    pub(crate) fn less(&self, bytes: usize, tokens: usize) -> Limits {
        Limits {
            bytes: match self.bytes {
                NO_BYTE_LIMIT => NO_BYTE_LIMIT,
                limit => limit.saturating_sub(bytes),
            },
            tokens: self.tokens.map(|t| TokenBudget {
                limit: t.limit.saturating_sub(tokens),
                ..t
            }),
        }
    }

    /// The byte limit, `None` when there is none.
    pub(crate) fn byte_limit(&self) -> Option<usize> {
        (self.bytes != NO_BYTE_LIMIT).then_some(self.bytes)
    }

    /// The most bytes that surely fit without counting (a token is at least one byte).
    pub(crate) fn surely_fits(&self) -> usize {
        match self.tokens {
            Some(t) => self.bytes.min(t.limit),
            None => self.bytes,
        }
    }

    /// Whether `bytes` (the JSON text sent) fit both limits. Counts the tokens only when
    /// the size does not decide.
    pub(crate) fn fits(&self, bytes: &[u8]) -> bool {
        bytes.len() <= self.bytes && self.tokens_fit(bytes)
    }

    /// Whether `bytes` fit the token limit (true without one).
    pub(crate) fn tokens_fit(&self, bytes: &[u8]) -> bool {
        let Some(t) = self.tokens else {
            return true;
        };
        if bytes.len() <= t.limit {
            return true;
        }
        if bytes.len() > t.limit.saturating_mul(BYTES_PER_TOKEN_AT_MOST) {
            return false;
        }
        t.count(bytes) <= t.limit
    }

    /// The room the fitting loops aim for, in bytes: the byte limit, or the bytes the
    /// token limit holds on average when that is less.
    pub(crate) fn room(&self) -> usize {
        self.scale()
    }

    /// The limit in bytes as a notice is sized by it: the byte limit, or an estimate of the
    /// bytes the tokens hold when that is less.
    pub(crate) fn scale(&self) -> usize {
        match self.tokens {
            Some(t) => self
                .bytes
                .min(t.limit.saturating_mul(BYTES_PER_TOKEN_ESTIMATE)),
            None => self.bytes,
        }
    }

    /// How far `bytes` are from fitting, in units of the [room](Limits::room): the size
    /// scaled so that the byte limit is the room, or the token count scaled so that the
    /// token limit is the room, whichever is larger (rounded up). `bytes` fit exactly when
    /// this is at most the room.
    pub(crate) fn cost(&self, bytes: &[u8]) -> usize {
        let room = self.room();
        let Some(t) = self.tokens else {
            return bytes.len();
        };
        let scaled = |n: usize, limit: usize| -> usize {
            match limit {
                0 if n > 0 => usize::MAX,
                0 => 0,
                limit => usize::try_from((n as u128 * room as u128).div_ceil(limit as u128))
                    .unwrap_or(usize::MAX),
            }
        };
        let by_bytes = match self.bytes {
            NO_BYTE_LIMIT => 0,
            limit => scaled(bytes.len(), limit),
        };
        by_bytes.max(scaled(t.count(bytes), t.limit))
    }

    /// The limits as a notice names them: `16384 bytes`, `4000 tokens (o200k_base)`, or
    /// both joined by `and` (the library's [`Budget::names`]).
    pub(crate) fn names(&self) -> String {
        Budget {
            limit: self.bytes,
            reserve: 0,
            notice: None,
            tokens: self.tokens.map(|t| TokenLimit {
                limit: t.limit,
                reserve: 0,
                tokenizer: t.tokenizer,
            }),
            carried: Carried::AsIs,
        }
        .names()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cost_is_within_the_room_exactly_when_both_limits_hold() {
        let text = br#"{"content":[{"type":"text","text":"0123456789 the quick brown fox"}]}"#;
        let o200k = TokenBudget::o200k(1);
        let tokens = o200k.count(text);
        for bytes in [NO_BYTE_LIMIT, text.len() - 1, text.len(), text.len() + 10] {
            for limit in [tokens - 1, tokens, tokens + 1, tokens * 4] {
                let limits = Limits::new(bytes, Some(TokenBudget::o200k(limit)));
                let fits = text.len() <= bytes && tokens <= limit;
                assert_eq!(limits.fits(text), fits, "{bytes} {limit}");
                assert_eq!(limits.cost(text) <= limits.room(), fits, "{bytes} {limit}");
            }
        }
        let bytes_only = Limits::new(text.len(), None);
        assert_eq!(bytes_only.cost(text), text.len());
        assert!(bytes_only.fits(text));
    }

    #[test]
    fn names_say_the_limits_given() {
        assert_eq!(Limits::new(16384, None).names(), "16384 bytes");
        let tokens = Some(TokenBudget::o200k(4000));
        assert_eq!(
            Limits::new(NO_BYTE_LIMIT, tokens).names(),
            "4000 tokens (o200k_base)"
        );
        assert_eq!(
            Limits::new(8192, tokens).names(),
            "8192 bytes and 4000 tokens (o200k_base)"
        );
        assert_eq!(Limits::new(NO_BYTE_LIMIT, tokens).scale(), 16000);
        assert_eq!(
            Limits::new(8192, tokens).less(100, 10).names(),
            "8092 bytes and 3990 tokens (o200k_base)"
        );
    }
}
