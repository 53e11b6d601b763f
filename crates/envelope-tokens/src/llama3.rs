//! `llama3`: Llama 3's tokenizer.json counted as npm llama3-tokenizer-js counts it.
//!
//! The file's own pre-tokenizer is tiktoken's cl100k pattern written for a Rust (Oniguruma,
//! fancy-regex) engine, where `\s` is Unicode's White_Space (U+0085 in, U+FEFF out) and
//! `(?i:'s)` also takes `'ſ`. llama3-tokenizer-js runs the same pattern as a JavaScript regex,
//! which reads both the other way, as js-tiktoken does for cl100k_base; on text holding U+0085
//! or U+FEFF next to a contraction the two differ by a token (9 texts of the 2,046 of
//! tests/llama3.rs). `llama3` promises llama3-tokenizer-js's counts, so its pieces come from our
//! JavaScript-exact cl100k splitter (src/split.rs: the contraction set is the same), and only
//! the file's vocabulary and merges (its BPE model) are used. `file:PATH` on the same file runs
//! the file's whole pipeline instead and counts as @huggingface/tokenizers does.
//!
//! Special-token names in the text (`<|eot_id|>`, `<|begin_of_text|>`, ...) count as one token
//! each, as both llama3-tokenizer-js and the Hugging Face tokenizers count them: that is what a
//! model served from this tokenizer reads. Which names are special is llama3-tokenizer-js's
//! list, Llama 3.1's (`<|eom_id|>`, `<|python_tag|>`, `<|finetune_right_pad_id|>`,
//! `<|reserved_special_token_0|>` to `_247|>`), not the installed file's, which is Llama 3.0's
//! (no `eom_id` or `python_tag`; reserved tokens up to 250): only the count matters here, and
//! for that the ids do not.

use std::collections::HashSet;

use tokenizers::Model;
use tokenizers::models::ModelWrapper;

use crate::split::Splitter;

/// What `llama3` needs besides the file's BPE model.
pub(crate) struct JsPieces {
    splitter: Splitter,
    /// The special-token names, each one token wherever it appears.
    specials: HashSet<String>,
    /// GPT-2's byte-to-character table, which byte-level BPE vocabularies are written in.
    byte_chars: [char; 256],
}

impl JsPieces {
    pub(crate) fn new() -> JsPieces {
        JsPieces {
            splitter: Splitter::cl100k_base(),
            specials: specials(),
            byte_chars: byte_chars(),
        }
    }

    /// The tokens of `text`: each special-token name is one, and the text between them is cut
    /// into JavaScript's cl100k pieces, each encoded by the file's BPE model.
    pub(crate) fn count(&self, model: &ModelWrapper, text: &str) -> usize {
        let mut total = 0;
        let mut plain_from = 0;
        let mut at = 0;
        // Special names are found as llama3-tokenizer-js finds them: leftmost, and `<|` to the
        // first `|>` after it (no special name holds a `|>`).
        while let Some(start) = text[at..].find("<|").map(|i| at + i) {
            let Some(end) = text[start + 2..].find("|>").map(|i| start + 2 + i + 2) else {
                break;
            };
            if self.specials.contains(&text[start..end]) {
                total += self.count_plain(model, &text[plain_from..start]) + 1;
                plain_from = end;
                at = end;
            } else {
                at = start + 1;
            }
        }
        total + self.count_plain(model, &text[plain_from..])
    }

    fn count_plain(&self, model: &ModelWrapper, text: &str) -> usize {
        let mut mapped = String::new();
        self.splitter
            .pieces(text)
            .map(|piece| {
                mapped.clear();
                mapped.extend(piece.bytes().map(|b| self.byte_chars[usize::from(b)]));
                // The model knows every byte (a byte-level vocabulary), so this does not fail;
                // should it, a token a byte is more than BPE makes of any piece.
                model
                    .tokenize(&mapped)
                    .map_or(piece.len(), |tokens| tokens.len())
            })
            .sum()
    }
}

/// llama3-tokenizer-js 1.2.0's special tokens (its `specialTokenRegex`).
fn specials() -> HashSet<String> {
    let named = [
        "begin_of_text",
        "end_of_text",
        "start_header_id",
        "end_header_id",
        "eot_id",
        "eom_id",
        "python_tag",
        "finetune_right_pad_id",
    ];
    let reserved = (0..=247).map(|i| format!("reserved_special_token_{i}"));
    named
        .into_iter()
        .map(str::to_owned)
        .chain(reserved)
        .map(|name| format!("<|{name}|>"))
        .collect()
}

/// GPT-2's table (openai/gpt-2 encoder.py `bytes_to_unicode`): printable bytes stand for
/// themselves, the others for U+0100 onwards in order.
fn byte_chars() -> [char; 256] {
    let printable = |b: u8| matches!(b, b'!'..=b'~' | 0xA1..=0xAC | 0xAE..=0xFF);
    let mut table = ['\0'; 256];
    let mut next = 256u32;
    for b in 0..=255u8 {
        table[usize::from(b)] = if printable(b) {
            char::from(b)
        } else {
            next += 1;
            char::from_u32(next - 1).expect("U+0100..U+0143 are characters")
        };
    }
    table
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_byte_table_is_gpt2s() {
        let table = byte_chars();
        assert_eq!(table[usize::from(b'a')], 'a');
        assert_eq!(table[usize::from(b' ')], 'Ġ'); // U+0120
        assert_eq!(table[usize::from(b'\n')], 'Ċ'); // U+010A
        assert_eq!(table[0], 'Ā'); // U+0100
        assert_eq!(table[0xAD], 'Ń'); // U+0143, the last
        let distinct: HashSet<char> = table.iter().copied().collect();
        assert_eq!(distinct.len(), 256);
    }

    #[test]
    fn the_special_names_are_llama_3_1s() {
        let specials = specials();
        assert_eq!(specials.len(), 8 + 248);
        assert!(specials.contains("<|eom_id|>"));
        assert!(specials.contains("<|reserved_special_token_247|>"));
        assert!(!specials.contains("<|reserved_special_token_248|>"));
    }
}
