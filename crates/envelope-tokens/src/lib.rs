//! Token counts of text, equal to the counts of the models' own tokenizers.
//!
//! A model's context is measured in tokens; this crate counts them for OpenAI's `o200k_base`
//! (GPT-4o, GPT-4.1, GPT-5, o-series) and `cl100k_base` (GPT-4, GPT-3.5) encodings. The counts
//! equal npm `js-tiktoken`'s `encode(text, [], []).length` exactly (tests/reference.rs runs it
//! under Node on a corpus of every script, code, JSON, numbers, base64, emoji and long runs).
//!
//! Text that looks like a special token (`<|endoftext|>`) is counted as ordinary text: a count
//! cannot refuse its input, and the ordinary encoding is the larger count, so a budget counted
//! this way never comes out short (docs/tokens.md).
//!
//! The vocabularies are compiled into the binary; nothing is read or fetched at run time.
#![warn(missing_docs)]

mod split;

use std::fmt;
use std::sync::LazyLock;

use bpe_openai::byte_pair_encoding::BytePairEncoding;

use crate::split::Splitter;

/// A tokenizer whose counts this crate reproduces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Tokenizer {
    /// OpenAI's `o200k_base`: GPT-4o, GPT-4.1, GPT-5 and the o-series models.
    O200kBase,
    /// OpenAI's `cl100k_base`: GPT-4 and GPT-3.5-turbo.
    Cl100kBase,
}

/// The error of [`Tokenizer::by_name`]: no tokenizer has that name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownTokenizer {
    /// The name asked for.
    pub name: String,
}

impl fmt::Display for UnknownTokenizer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown tokenizer {:?}; known: ", self.name)?;
        for (i, tokenizer) in Tokenizer::ALL.iter().enumerate() {
            let separator = if i == 0 { "" } else { ", " };
            write!(f, "{separator}{}", tokenizer.name())?;
        }
        Ok(())
    }
}

impl std::error::Error for UnknownTokenizer {}

/// One encoding's parts, built once on first use and shared by every thread.
struct Encoding {
    bpe: &'static BytePairEncoding,
    splitter: Splitter,
}

static O200K_BASE: LazyLock<Encoding> = LazyLock::new(|| Encoding {
    bpe: &bpe_openai::o200k_base().bpe,
    splitter: Splitter::o200k_base(),
});

static CL100K_BASE: LazyLock<Encoding> = LazyLock::new(|| Encoding {
    bpe: &bpe_openai::cl100k_base().bpe,
    splitter: Splitter::cl100k_base(),
});

impl Tokenizer {
    /// Every tokenizer, in the order error messages list them.
    pub const ALL: &'static [Tokenizer] = &[Tokenizer::O200kBase, Tokenizer::Cl100kBase];

    /// The tokenizer of that name (`o200k_base`, `cl100k_base`), as tiktoken names them.
    pub fn by_name(name: &str) -> Result<Tokenizer, UnknownTokenizer> {
        Tokenizer::ALL
            .iter()
            .copied()
            .find(|tokenizer| tokenizer.name() == name)
            .ok_or_else(|| UnknownTokenizer {
                name: name.to_owned(),
            })
    }

    /// The tokenizer's name, as [`Tokenizer::by_name`] takes it.
    pub fn name(&self) -> &'static str {
        match self {
            Tokenizer::O200kBase => "o200k_base",
            Tokenizer::Cl100kBase => "cl100k_base",
        }
    }

    /// The number of tokens the model's tokenizer makes of `text`.
    ///
    /// The first call for a tokenizer loads its vocabulary; later calls build no token list:
    /// the text is split into pieces (as js-tiktoken splits it) and each piece's tokens are
    /// counted by bpe-openai's backtracking encoder, which takes two small buffers a piece
    /// (no allocation per token).
    pub fn count(&self, text: &str) -> usize {
        let encoding: &Encoding = match self {
            Tokenizer::O200kBase => &O200K_BASE,
            Tokenizer::Cl100kBase => &CL100K_BASE,
        };
        encoding
            .splitter
            .pieces(text)
            .map(|piece| encoding.bpe.count(piece.as_bytes()))
            .sum()
    }
}

impl fmt::Display for Tokenizer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_text_is_no_tokens() {
        for tokenizer in Tokenizer::ALL {
            assert_eq!(tokenizer.count(""), 0);
        }
    }

    #[test]
    fn threads_share_one_encoder_and_agree() {
        let text = "Token budgets hold in the unit the model pays for: 12345 токенов, 词元.";
        let alone = Tokenizer::O200kBase.count(text);
        let counts: Vec<usize> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..4)
                .map(|_| scope.spawn(|| Tokenizer::O200kBase.count(text)))
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("no panic"))
                .collect()
        });
        assert!(alone > 10);
        assert_eq!(counts, vec![alone; 4]);
    }
}
