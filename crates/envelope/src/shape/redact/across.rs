//! A private key split across adjacent text blocks of an MCP result's content: the PEM
//! header and the start of its body in one `{"type":"text","text":…}` block, the rest of
//! the body and its END line in the next (a tool that pages its output).
//!
//! Each block is redacted on its own: the first one's block is masked by
//! `text:private_key` (a block without its END line is masked to where its base64 stops),
//! but the next one starts with base64 and an END line, which no rule would mask. So the
//! blocks are looked at in order ([`KeysAcross`]): when a text block ends inside a key block
//! (its last private key header has no END line after it, and nothing but the body's
//! characters follows it), the start of the next text block is masked up to and including
//! its END line (or the whole block when it holds only lines of base64 and the key goes
//! on in the block after it), before that block is redacted as usual. Any other block
//! between the two breaks the chain.

use std::sync::LazyLock;

use regex::Regex;
use serde_json::Value;

use super::{MASK, Redaction};

static KEY_BEGIN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----").expect("valid pattern")
});

static KEY_END: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----").expect("valid pattern")
});

/// What `text:private_key` masks after a header without an END line.
static OPEN_BODY: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\A[A-Za-z0-9+/=\s:,\\-]*\z").expect("valid pattern"));

/// The rest of a key block at the start of a text: its base64 and its END line.
static TAIL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\A[A-Za-z0-9+/=\s]*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")
        .expect("valid pattern")
});

/// A text of base64 lines only (16 characters or more each): the middle of a key.
static MIDDLE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\A(?:[A-Za-z0-9+/=]{16,}\r?\n)*[A-Za-z0-9+/=]{16,}\r?\n?\z")
        .expect("valid pattern")
});

/// The text of a plain text block (`"type": "text"`).
pub(crate) fn text_of(block: &Value) -> Option<&str> {
    (block.get("type")?.as_str()? == "text")
        .then(|| block.get("text")?.as_str())
        .flatten()
}

/// Whether `text` ends inside a private key block (see the module's comment).
pub(crate) fn ends_in_open_key(text: &str) -> bool {
    let Some(begin) = KEY_BEGIN.find_iter(text).last() else {
        return false;
    };
    let rest = &text[begin.end()..];
    !KEY_END.is_match(rest) && OPEN_BODY.is_match(rest)
}

/// The text of a block that follows one ending inside a key block, with the rest of that
/// key masked (`None` when it does not start with it), and whether this text ends inside a
/// key block in turn.
pub(crate) fn continue_key(text: &str) -> (Option<String>, bool) {
    if let Some(tail) = TAIL.find(text) {
        let rest = &text[tail.end()..];
        return (Some(format!("{MASK}{rest}")), ends_in_open_key(rest));
    }
    if MIDDLE.is_match(text) {
        return (Some(MASK.to_string()), true);
    }
    (None, ends_in_open_key(text))
}

/// Where a run of adjacent text blocks stands: inside a key block or not, or not known
/// (after a long text read a piece at a time).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum KeysAcross {
    #[default]
    Closed,
    Open,
    Unknown,
}

impl KeysAcross {
    /// Looks at the next block (at `at`, before it is redacted): masks the rest of a key
    /// the block before left open, reporting it at `<at>/text`. `Err(())` when that cannot
    /// be known (the state is [`KeysAcross::Unknown`] and the block may be such a rest).
    pub(crate) fn block(
        &mut self,
        block: &mut Value,
        at: &str,
        report: &mut Vec<Redaction>,
    ) -> Result<(), ()> {
        let Some(text) = text_of(block) else {
            *self = KeysAcross::Closed;
            return Ok(());
        };
        let (masked, open) = match self {
            KeysAcross::Closed => (None, ends_in_open_key(text)),
            KeysAcross::Open => continue_key(text),
            KeysAcross::Unknown => match continue_key(text) {
                (Some(_), _) => return Err(()),
                (None, open) => (None, open),
            },
        };
        *self = match open {
            true => KeysAcross::Open,
            false => KeysAcross::Closed,
        };
        if let Some(masked) = masked {
            block["text"] = Value::String(masked);
            report.push(Redaction {
                rule: "text:private_key".into(),
                at: format!("{at}/text"),
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_key_split_over_two_blocks_is_masked_on_both_sides() {
        let mut blocks = [
            json!({"type": "text", "text": "key:\n-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAzq01\n"}),
            json!({"type": "text", "text": "T2zqPemBody1234+/abc=\nQ2zqMoreBody5678\n-----END RSA PRIVATE KEY-----\nafter"}),
            json!({"type": "text", "text": "Y2zqNotAKeyBody99999\n-----END RSA PRIVATE KEY-----"}),
        ];
        let mut state = KeysAcross::default();
        let mut report = Vec::new();
        for (i, block) in blocks.iter_mut().enumerate() {
            state
                .block(block, &format!("payload/{i}"), &mut report)
                .unwrap();
            super::super::redact_value(block, &format!("payload/{i}"), &mut report);
        }
        assert_eq!(blocks[0]["text"], "key:\n***");
        assert_eq!(blocks[1]["text"], "***\nafter");
        // The key was closed: the third block is left to the usual rules.
        assert_eq!(
            blocks[2]["text"],
            "Y2zqNotAKeyBody99999\n-----END RSA PRIVATE KEY-----"
        );
        assert_eq!(report.len(), 2, "{report:?}");
        assert_eq!(report[1].at, "payload/1/text");
    }

    #[test]
    fn a_key_over_three_blocks_and_prose_after_a_cut_key() {
        let (masked, open) = continue_key("QUJDREVGR0hJSktMTU5PUA==\nQUJDREVGR0hJSktMTU5PUA\n");
        assert_eq!((masked.as_deref(), open), (Some("***"), true));
        // Prose is not the rest of a key.
        assert_eq!(continue_key("the key above was cut"), (None, false));
        assert!(ends_in_open_key(
            "-----BEGIN PGP PRIVATE KEY BLOCK-----\nVersion: x\n\nlQOY\n"
        ));
        assert!(!ends_in_open_key(
            "-----BEGIN EC PRIVATE KEY-----\nMHc\n-----END EC PRIVATE KEY-----\n"
        ));
        assert!(!ends_in_open_key(
            "-----BEGIN EC PRIVATE KEY-----\nMHc\nthat's all."
        ));
    }
}
