//! Envelopes through the library's shaping pipeline ([`envelope::shape::Pipeline`]): a
//! payload over the inline threshold goes to the store, what still does not fit the limit is
//! cut (with `meta.budget` saying what), secrets are masked when asked. The worker's shaper
//! (`ops worker --limit`), `envelope call --limit` and `envelope serve`'s HTTP view all shape
//! an operations envelope this one way.

use std::sync::Arc;

use envelope::FormatId;
use envelope::shape::{Pipeline, Shaped};
use envelope::tokens::Tokenizer;
use envelope_store::{Store, StoreSink};
use serde_json::Value;

use crate::error::{CallError, codes};
use crate::protocol::Shaper;

/// How envelopes are shaped.
#[derive(Clone, Default)]
pub struct EnvelopeShaping {
    /// The most bytes of the shaped envelope (compact JSON); `None`: no cut.
    pub limit: Option<usize>,
    /// Payloads larger than this go to the store (when there is one); `None`: the
    /// pipeline's default.
    pub inline_threshold: Option<usize>,
    /// Where offloaded payloads go; `None`: nothing is offloaded, only cut.
    pub store: Option<Arc<dyn Store>>,
    /// Mask secrets.
    pub redact: bool,
    /// The most tokens of the shaped envelope, and the tokenizer that counts them; `None`:
    /// no token limit. With [`limit`](EnvelopeShaping::limit) too, both hold.
    pub tokens: Option<(usize, Tokenizer)>,
    /// Tokens of the token limit kept for what the caller adds after the envelope (its
    /// newline).
    pub reserve_tokens: usize,
}

impl std::fmt::Debug for EnvelopeShaping {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EnvelopeShaping")
            .field("limit", &self.limit)
            .field("inline_threshold", &self.inline_threshold)
            .field("store", &self.store.is_some())
            .field("redact", &self.redact)
            .field("tokens", &self.tokens)
            .finish()
    }
}

impl EnvelopeShaping {
    /// Whether shaping changes anything at all (a limit or redaction).
    pub fn is_active(&self) -> bool {
        self.limit.is_some() || self.tokens.is_some() || self.redact
    }

    /// One operations envelope (its compact JSON) shaped.
    ///
    /// ```
    /// use envelope_ops::shaping::EnvelopeShaping;
    ///
    /// let envelope = br#"{"data":{"password":"hunter2"},"meta":{"source":"local"}}"#;
    /// let shaping = EnvelopeShaping { redact: true, ..Default::default() };
    /// let shaped = shaping.shape(envelope).unwrap();
    /// assert!(!String::from_utf8(shaped.bytes).unwrap().contains("hunter2"));
    /// ```
    ///
    /// # Errors
    ///
    /// The pipeline's: the limit too small for the envelope's own fields, a store that
    /// cannot be written, input that is not an operations envelope.
    pub fn shape(&self, envelope: &[u8]) -> Result<Shaped, envelope::Error> {
        let mut sink = self.store.as_deref().map(StoreSink::new);
        let mut pipeline = Pipeline::new(envelope)
            .input_format(FormatId::Operations)
            .redact(self.redact)
            .limit(self.limit);
        if let Some(inline) = self.inline_threshold {
            pipeline = pipeline.inline_threshold(inline);
        }
        if let Some(sink) = &mut sink {
            pipeline = pipeline.store(sink);
        }
        if let Some((limit, tokenizer)) = &self.tokens {
            pipeline = pipeline
                .limit_tokens(*limit, tokenizer)
                .reserve_tokens(self.reserve_tokens);
        }
        pipeline.run()
    }

    /// [`EnvelopeShaping::shape`] of a value, as a value; a failure is an EXECUTION_ERROR
    /// naming the cause.
    ///
    /// # Errors
    ///
    /// As [`EnvelopeShaping::shape`].
    pub fn shape_value(&self, envelope: &Value) -> Result<Value, CallError> {
        let bytes = serde_json::to_vec(envelope).expect("a JSON value serialises");
        let shaped = self.shape(&bytes).map_err(|e| {
            CallError::new(
                codes::EXECUTION_ERROR,
                format!("the envelope could not be shaped: {e}"),
            )
        })?;
        serde_json::from_slice(&shaped.bytes).map_err(|e| {
            CallError::new(
                codes::EXECUTION_ERROR,
                format!("the shaped envelope is not JSON: {e}"),
            )
        })
    }

    /// This shaping as a worker's [`Shaper`]; `None` when it changes nothing.
    pub fn into_shaper(self) -> Option<Shaper> {
        if !self.is_active() {
            return None;
        }
        Some(Arc::new(move |envelope: Value| self.shape_value(&envelope)))
    }
}
