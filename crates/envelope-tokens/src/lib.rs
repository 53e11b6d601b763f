//! Token counts of text, equal to the counts of the models' own tokenizers.
//!
//! A model's context is measured in tokens; [`Tokenizer::by_name`] takes:
//! - `o200k_base` (GPT-4o, GPT-4.1, GPT-5, o-series) and `cl100k_base` (GPT-4, GPT-3.5): equal
//!   npm `js-tiktoken`'s `encode(text, [], []).length` (tests/reference.rs). Their vocabularies
//!   are compiled into the binary. Text that looks like a special token (`<|endoftext|>`) is
//!   counted as ordinary text: a count cannot refuse its input, and the ordinary encoding is
//!   the larger count, so a budget counted this way never comes out short.
//! - `file:PATH`: any Hugging Face `tokenizer.json`, counted by the `tokenizers` crate with no
//!   special tokens added; equal npm `@huggingface/tokenizers` (tests/tokenizer_json.rs).
//! - `llama3`: Llama 3's `tokenizer.json`, which is under Meta's licence and so not compiled
//!   in: scripts/install-tokenizers.sh installs it; equal npm `llama3-tokenizer-js`
//!   (tests/llama3.rs).
//! - `anthropic-estimate`: an upper estimate for Claude models, which have no published
//!   tokenizer; at least Anthropic's legacy tokenizer's count on every corpus text
//!   (tests/anthropic_estimate.rs). Not an exact count ([`Tokenizer::is_estimate`]).
//!
//! Every reference runs under Node on one corpus: prose in every script, code, JSON, numbers,
//! base64, emoji and long runs. Loading checks a file once; [`Tokenizer::count`] never fails.
//! Nothing is fetched at run time. docs/tokens.md has the details and the numbers.
#![warn(missing_docs)]

mod estimate;
mod llama3;
mod loaded;
mod split;

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock};

use bpe_openai::byte_pair_encoding::BytePairEncoding;

pub use crate::loaded::{Loaded, llama3_path};
use crate::split::Splitter;

/// A tokenizer whose counts this crate reproduces: cheap to clone (a loaded vocabulary is
/// shared), equal when the names are.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Tokenizer {
    /// OpenAI's `o200k_base`: GPT-4o, GPT-4.1, GPT-5 and the o-series models.
    O200kBase,
    /// OpenAI's `cl100k_base`: GPT-4 and GPT-3.5-turbo.
    Cl100kBase,
    /// `anthropic-estimate`: an upper estimate for Claude models, which have no published
    /// tokenizer. Not an exact count: checked to be at least the count of Anthropic's legacy
    /// tokenizer (npm `@anthropic-ai/tokenizer`) on every text of the reference corpus; a
    /// current model's real count can differ (docs/tokens.md).
    AnthropicEstimate,
    /// A Hugging Face `tokenizer.json` read from a file: `file:PATH`, or `llama3` (the file the
    /// project's script installs).
    Loaded(Arc<Loaded>),
}

/// The error of [`Tokenizer::by_name`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TokenizerError {
    /// No tokenizer has that name.
    Unknown {
        /// The name asked for.
        name: String,
    },
    /// The file of a `file:PATH` (or of `llama3`) cannot be read.
    Unreadable {
        /// The file.
        path: PathBuf,
        /// Why, as the system says it.
        reason: String,
    },
    /// The file reads but is not a usable Hugging Face `tokenizer.json`.
    NotATokenizer {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// `llama3` was asked for and its `tokenizer.json` is not installed.
    Llama3NotInstalled {
        /// Where it was looked for.
        path: PathBuf,
    },
}

impl fmt::Display for TokenizerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TokenizerError::Unknown { name } => {
                write!(f, "unknown tokenizer {name:?}; known: ")?;
                for name in Tokenizer::NAMES {
                    write!(f, "{name}, ")?;
                }
                f.write_str("file:PATH (a Hugging Face tokenizer.json)")
            }
            TokenizerError::Unreadable { path, reason } => {
                write!(f, "cannot read tokenizer file {}: {reason}", path.display())
            }
            TokenizerError::NotATokenizer { path, reason } => write!(
                f,
                "{} is not a usable Hugging Face tokenizer.json: {reason}",
                path.display()
            ),
            TokenizerError::Llama3NotInstalled { path } => write!(
                f,
                "the llama3 tokenizer is not installed: {} is missing (Llama 3's vocabulary is \
                 under Meta's licence and does not ship with envelope). Run \
                 scripts/install-tokenizers.sh from envelope's repository to install it there \
                 (it honours $ENVELOPE_TOKENIZERS), or give Llama 3's tokenizer.json as \
                 file:PATH",
                path.display()
            ),
        }
    }
}

impl std::error::Error for TokenizerError {}

/// The former name of [`TokenizerError`], when an unknown name was its only case.
pub type UnknownTokenizer = TokenizerError;

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
    /// The tokenizers compiled into the binary, in the order error messages list them.
    pub const ALL: &'static [Tokenizer] = &[
        Tokenizer::O200kBase,
        Tokenizer::Cl100kBase,
        Tokenizer::AnthropicEstimate,
    ];

    /// Every name [`Tokenizer::by_name`] takes besides `file:PATH`.
    pub const NAMES: &'static [&'static str] =
        &["o200k_base", "cl100k_base", "llama3", "anthropic-estimate"];

    /// The tokenizer of that name: `o200k_base`, `cl100k_base` (as tiktoken names them),
    /// `anthropic-estimate`, `llama3` (the `tokenizer.json` scripts/install-tokenizers.sh
    /// installs under `$ENVELOPE_TOKENIZERS`, by default `~/.cache/envelope/tokenizers`), or
    /// `file:PATH`, any Hugging Face `tokenizer.json`.
    ///
    /// A file is read, parsed and checked here (it must encode a probe text of every script),
    /// so that [`Tokenizer::count`] never fails. Parsing a vocabulary of megabytes is slow
    /// next to a count, so a file is parsed once per name while it is unchanged (later calls
    /// share it); still, resolve once and clone where you can.
    pub fn by_name(name: &str) -> Result<Tokenizer, TokenizerError> {
        match name {
            "o200k_base" => Ok(Tokenizer::O200kBase),
            "cl100k_base" => Ok(Tokenizer::Cl100kBase),
            "anthropic-estimate" => Ok(Tokenizer::AnthropicEstimate),
            "llama3" => loaded::llama3().map(Tokenizer::Loaded),
            _ => match name.strip_prefix("file:") {
                Some(path) if !path.is_empty() => {
                    loaded::cached(name, Path::new(path), Loaded::from_file).map(Tokenizer::Loaded)
                }
                _ => Err(TokenizerError::Unknown {
                    name: name.to_owned(),
                }),
            },
        }
    }

    /// The tokenizer's name, as [`Tokenizer::by_name`] takes it (`file:PATH` as it was given).
    pub fn name(&self) -> &str {
        match self {
            Tokenizer::O200kBase => "o200k_base",
            Tokenizer::Cl100kBase => "cl100k_base",
            Tokenizer::AnthropicEstimate => "anthropic-estimate",
            Tokenizer::Loaded(loaded) => loaded.name(),
        }
    }

    /// Whether [`Tokenizer::count`] is an estimate (`anthropic-estimate`) rather than the
    /// count of the model's own tokenizer, for reports to say so.
    pub fn is_estimate(&self) -> bool {
        matches!(self, Tokenizer::AnthropicEstimate)
    }

    /// The file a loaded tokenizer was read from (none for those compiled in).
    pub fn path(&self) -> Option<&Path> {
        match self {
            Tokenizer::Loaded(loaded) => Some(loaded.path()),
            _ => None,
        }
    }

    /// The number of tokens the model's tokenizer makes of `text`, never failing.
    ///
    /// `o200k_base`, `cl100k_base`: the first call loads the vocabulary; later calls build no
    /// token list: the text is split into pieces (as js-tiktoken splits it) and each piece's
    /// tokens are counted by bpe-openai's backtracking encoder, which takes two small buffers a
    /// piece (no allocation per token).
    ///
    /// A loaded `tokenizer.json`: the length of its encoding of `text` with no special tokens
    /// added (no BOS or EOS).
    pub fn count(&self, text: &str) -> usize {
        let encoding: &Encoding = match self {
            Tokenizer::O200kBase => &O200K_BASE,
            Tokenizer::Cl100kBase => &CL100K_BASE,
            Tokenizer::AnthropicEstimate => return estimate::anthropic(text),
            Tokenizer::Loaded(loaded) => return loaded.count(text),
        };
        encoding
            .splitter
            .pieces(text)
            .map(|piece| encoding.bpe.count(piece.as_bytes()))
            .sum()
    }
}

// Not `Hash`: a loaded tokenizer holds the `tokenizers` crate's word cache (interior
// mutability), so clippy's `mutable_key_type` would fire on every map keyed by it, although a
// hash by name would be sound. Key maps by `name()`.
impl PartialEq for Tokenizer {
    /// Equal when the names are: `llama3` and `file:PATH` of the same file are two tokenizers
    /// to a reader of a report, though they count alike.
    fn eq(&self, other: &Tokenizer) -> bool {
        self.name() == other.name()
    }
}

impl Eq for Tokenizer {}

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
