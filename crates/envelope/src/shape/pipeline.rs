//! The one way to shape: input and options in, shaped bytes and reports out.
//!
//! [`Pipeline`] decodes the input (unless it is an envelope already), then runs the stages in
//! their fixed order — [redact](super::redact) → [capture check](super::offload::capture) →
//! [offload](super::offload) → [budget](super::budget) — and encodes the result. It chooses
//! how to read the input itself: with a limit and neither redaction, a store nor a capture
//! limit, it reads the document for that limit, building only the part of the payload a
//! cut can keep ([`Shaped::skimmed`] says so); otherwise it reads it whole, or passes the
//! payload through as the bytes it has in the input. Every read gives the same bytes; which
//! one runs is the pipeline's business, never its caller's (the readers are private).

use std::borrow::Cow;

use super::bounded::Decoded;
use super::budget::{Budget, Carried, Notice, TokenLimit};
use super::offload::{ArtifactSink, ArtifactWriter, OffloadOptions, Offloaded, capture, offload};
use super::redact::{redact_envelope, redact_error};
use super::shaped::{Artifact, Shaped};
use super::spliced::Spliced;
use super::{error_text, passthrough, payload_redacted, text_offload, text_redacted};
use crate::error::{Result, SinkError};
use crate::formats::{self, DecodeOptions, EncodeOptions, FormatId};
use crate::model::{ArtifactRef, Envelope};
use crate::validate::Profile;
use envelope_tokens::Tokenizer;

/// A shaping run, configured step by step and started by [`Pipeline::run`].
///
/// Start from bytes ([`Pipeline::new`], the format detected or given with
/// [`input_format`](Pipeline::input_format)) or from an envelope built in code
/// ([`Pipeline::from_envelope`]). Without further options it re-encodes the input in its own
/// format; each option switches on one stage:
///
/// | option | stage |
/// |---|---|
/// | [`redact(true)`](Pipeline::redact) | mask secrets, before anything else sees them |
/// | [`max_capture(n)`](Pipeline::max_capture) | a payload serialized larger than `n` bytes makes the envelope an `EOUTPUT_TOO_LARGE` error, with or without a store or a limit |
/// | [`store(sink)`](Pipeline::store) | payloads over the [inline threshold](Pipeline::inline_threshold) go to the sink |
/// | [`limit(n)`](Pipeline::limit) | the whole output is at most `n` bytes, or the run fails with [`Error::BudgetTooSmall`](crate::Error::BudgetTooSmall) |
/// | [`output_format(f)`](Pipeline::output_format) | write `f` instead of the input's format |
///
/// The stages run in this order, whichever are switched on:
///
/// 1. **redact** first, so no later stage (and no store) ever sees a secret, and every size
///    below is the size of what is written;
/// 2. **capture check**: the payload, serialized as the store would hold it
///    ([`artifact_bytes`](super::offload::artifact_bytes), in the output format's dialect),
///    is refused when larger than the capture limit (exactly the limit is kept). It comes
///    before the offload, so a refused payload is never stored and the inline threshold
///    plays no part, and before the budget, so a limit never turns a refused payload into
///    a cut one: the same input and capture limit give the error envelope whether or not
///    there is a store or a limit;
/// 3. **offload** of a payload over the inline threshold (only with a store);
/// 4. **budget** last, fitting whatever the stages before left (the payload, the artifact
///    summary, or the error envelope) into the limit.
///
/// Shaping a document without a store:
///
/// ```rust
/// use envelope::FormatId;
/// use envelope::shape::{Offloaded, Pipeline};
///
/// let rows: Vec<_> = (0..500).map(|i| serde_json::json!({"id": i, "name": format!("row {i}")})).collect();
/// let doc = serde_json::json!({
///     "data": {"rows": rows, "settings": {"api_token": "ghp_0123456789abcdefghijABCDEFGHIJ012345"}},
///     "meta": {"source": "local"},
/// });
/// let input = doc.to_string();
///
/// let shaped = Pipeline::new(input.as_bytes())
///     .input_format(FormatId::Operations)
///     .output_format(FormatId::Mcp)
///     .redact(true)
///     .limit(2048)
///     .run()?;
///
/// assert_eq!(shaped.format, FormatId::Mcp);
/// assert!(shaped.bytes.len() <= 2048);
/// assert!(!String::from_utf8_lossy(&shaped.bytes).contains("ghp_"));
/// assert_eq!(shaped.redactions.len(), 1);
/// assert_eq!(shaped.redactions[0].at, "payload/settings/api_token"); // where, never the secret
/// assert!(!shaped.skimmed); // redaction reads the whole input
/// assert_eq!(shaped.offloaded, Offloaded::Inline);
/// assert!(shaped.artifacts.is_empty());
///
/// // Without redaction or a store, a limit reads only what a cut can keep of the input.
/// let quick = Pipeline::new(input.as_bytes()).limit(2048).run()?;
/// assert!(quick.skimmed);
/// assert_eq!(quick.format, FormatId::Operations); // detected, and written back
/// assert!(quick.bytes.len() <= 2048);
/// # Ok::<(), envelope::Error>(())
/// ```
///
/// With a store (here a sink written for the example; `envelope_store::StoreSink` adapts
/// the file and S3 stores), a large payload is stored and replaced by a summary and its
/// reference:
///
/// ```rust
/// use std::collections::HashMap;
///
/// use envelope::model::ArtifactRef;
/// use envelope::shape::{ArtifactSink, Offloaded, Pipeline, SinkError};
/// use envelope::{EncodeOptions, Envelope, FormatId};
///
/// /// Artifacts in memory, named by a made-up digest (a real store hashes the bytes).
/// #[derive(Default)]
/// struct Memory(HashMap<String, Vec<u8>>);
///
/// impl ArtifactSink for Memory {
///     fn put(&mut self, bytes: &[u8], _kind: &str) -> Result<ArtifactRef, SinkError> {
///         let digest = format!("sha256:{:064x}", self.0.len());
///         self.0.insert(digest.clone(), bytes.to_vec());
///         Ok(ArtifactRef { digest })
///     }
/// }
///
/// let rows: Vec<_> = (0..2000).map(|i| serde_json::json!({"id": i, "path": format!("src/file_{i}.rs")})).collect();
/// let env = Envelope::ok(serde_json::json!({"matches": rows}));
///
/// let mut memory = Memory::default();
/// let shaped = Pipeline::from_envelope(env, FormatId::Mcp)
///     .store(&mut memory)
///     .limit(4096)
///     .encode_options(EncodeOptions {
///         now: Some("2026-07-04T00:00:00Z".into()),
///         ..EncodeOptions::default()
///     })
///     .run()?;
///
/// let Offloaded::Stored { digest, size_bytes } = &shaped.offloaded else {
///     panic!("not offloaded");
/// };
/// assert_eq!(shaped.artifacts.len(), 1);
/// assert_eq!(&shaped.artifacts[0].digest, digest);
/// assert_eq!(shaped.artifacts[0].kind, "application/json");
/// assert_eq!(memory.0[digest].len(), *size_bytes);
/// // The output names the artifact (MCP: a resource_link block) and fits the limit.
/// assert!(String::from_utf8_lossy(&shaped.bytes).contains(digest.as_str()));
/// assert!(shaped.bytes.len() <= 4096);
/// # Ok::<(), envelope::Error>(())
/// ```
#[must_use = "a pipeline does nothing until it is run"]
pub struct Pipeline<'a> {
    input: Input<'a>,
    output_format: Option<FormatId>,
    limit: Option<usize>,
    /// Bytes of the limit the caller appends after the output.
    reserve: usize,
    /// The token limit and its tokenizer.
    tokens: Option<(usize, &'a Tokenizer)>,
    /// Tokens of the token limit the caller appends after the output.
    reserve_tokens: usize,
    notice: Option<&'a dyn Notice>,
    redact: bool,
    store: Option<&'a mut dyn ArtifactSink>,
    offload: OffloadOptions,
    encode: EncodeOptions,
}

/// What a pipeline shapes.
enum Input<'a> {
    /// A document, in `from` or the detected format.
    Bytes {
        bytes: Cow<'a, [u8]>,
        from: Option<FormatId>,
        decode: DecodeOptions,
    },
    /// An envelope built in code, and the format it defaults to.
    Envelope {
        env: Box<Envelope>,
        format: FormatId,
    },
}

impl<'a> Pipeline<'a> {
    /// A pipeline over a document's bytes, in the format detected from them (see
    /// [`input_format`](Pipeline::input_format)); default output: the same format.
    pub fn new(input: &'a [u8]) -> Self {
        Pipeline::with_input(Input::Bytes {
            bytes: Cow::Borrowed(input),
            from: None,
            decode: DecodeOptions::default(),
        })
    }

    /// A pipeline over a document read from `reader` to its end (a file, standard input,
    /// a socket), as [`new`](Pipeline::new) over those bytes.
    ///
    /// ```
    /// use envelope::shape::Pipeline;
    ///
    /// let document = include_bytes!("../../../../examples/protocol-v1.json");
    /// let shaped = Pipeline::from_reader(std::io::Cursor::new(document))?.run()?;
    /// assert_eq!(shaped.bytes, document); // nothing to shape: the same bytes
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// The reader's error.
    pub fn from_reader(mut reader: impl std::io::Read) -> std::io::Result<Self> {
        let mut bytes = Vec::new();
        reader.read_to_end(&mut bytes)?;
        Ok(Pipeline::with_input(Input::Bytes {
            bytes: Cow::Owned(bytes),
            from: None,
            decode: DecodeOptions::default(),
        }))
    }

    /// A pipeline over an envelope built in code (an operation's result, a relayed
    /// response already decoded). `format` is the output format unless
    /// [`output_format`](Pipeline::output_format) names another. It is always shaped whole.
    pub fn from_envelope(env: Envelope, format: FormatId) -> Self {
        Pipeline::with_input(Input::Envelope {
            env: Box::new(env),
            format,
        })
    }

    fn with_input(input: Input<'a>) -> Self {
        Pipeline {
            input,
            output_format: None,
            limit: None,
            reserve: 0,
            tokens: None,
            reserve_tokens: 0,
            notice: None,
            redact: false,
            store: None,
            offload: OffloadOptions::default(),
            encode: EncodeOptions::default(),
        }
    }

    /// Reads the input as `format` instead of detecting it (`None`: detect). No effect on a
    /// pipeline [from an envelope](Pipeline::from_envelope).
    pub fn input_format(mut self, format: impl Into<Option<FormatId>>) -> Self {
        if let Input::Bytes { from, .. } = &mut self.input {
            *from = format.into();
        }
        self
    }

    /// How strictly to read the input (default: strictly). No effect on a pipeline
    /// [from an envelope](Pipeline::from_envelope).
    pub fn decode_options(mut self, options: DecodeOptions) -> Self {
        if let Input::Bytes { decode, .. } = &mut self.input {
            *decode = options;
        }
        self
    }

    /// Writes `format` (`None`: the input's own format, the default).
    pub fn output_format(mut self, format: impl Into<Option<FormatId>>) -> Self {
        self.output_format = format.into();
        self
    }

    /// The most bytes the whole output may have (`None`: no limit, the default). Arrays at
    /// any depth keep a prefix, long strings are cut at UTF-8 boundaries, and the output
    /// says what was cut (see [`fit`](super::fit)).
    pub fn limit(mut self, limit: impl Into<Option<usize>>) -> Self {
        self.limit = limit.into();
        self
    }

    /// Leaves `bytes` of the [limit](Pipeline::limit) to the caller, who appends them after
    /// the output (the proxy's link to the stored result): the output takes at most the
    /// limit less `bytes`, and its notice names the limit (default: 0).
    pub fn reserve(mut self, bytes: usize) -> Self {
        self.reserve = bytes;
        self
    }

    /// The most tokens the whole output may have, as `tokenizer` counts its text (`None`:
    /// no token limit, the default). With a [byte limit](Pipeline::limit) too, both hold.
    /// The output is cut as for a byte limit; what decides is the count of the encoded
    /// output, so the limit holds whatever the format writes around the payload.
    ///
    /// ```
    /// use envelope::shape::Pipeline;
    /// use envelope::tokens::Tokenizer;
    ///
    /// let rows: Vec<String> = (0..2000).map(|i| format!("row {i}: some text")).collect();
    /// let input = serde_json::json!({"content": [], "structuredContent": {"rows": rows}});
    /// let input = serde_json::to_vec(&input)?;
    /// let o200k = Tokenizer::by_name("o200k_base")?;
    /// let shaped = Pipeline::new(&input).limit_tokens(500, &o200k).run()?;
    /// let text = String::from_utf8(shaped.bytes)?;
    /// assert!(o200k.count(&text) <= 500);
    /// assert!(text.contains("Output truncated to fit 500 tokens (o200k_base)"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn limit_tokens(
        mut self,
        limit: impl Into<Option<usize>>,
        tokenizer: &'a Tokenizer,
    ) -> Self {
        self.tokens = limit.into().map(|limit| (limit, tokenizer));
        self
    }

    /// Leaves `tokens` of the [token limit](Pipeline::limit_tokens) to the caller, as
    /// [`reserve`](Pipeline::reserve) leaves bytes (default: 0).
    pub fn reserve_tokens(mut self, tokens: usize) -> Self {
        self.reserve_tokens = tokens;
        self
    }

    /// Words what a cut says with `notice` instead of the library's notice: the output is
    /// fitted with the restated cuts and notice, in one run (see [`Notice`]).
    pub fn notice(mut self, notice: &'a dyn Notice) -> Self {
        self.notice = Some(notice);
        self
    }

    /// The budget of a run with a limit (of bytes, tokens or both).
    fn budget(&self) -> Option<Budget<'a>> {
        if self.limit.is_none() && self.tokens.is_none() {
            return None;
        }
        Some(Budget {
            limit: self.limit.unwrap_or(Budget::NO_BYTE_LIMIT),
            reserve: self.reserve,
            notice: self.notice,
            tokens: self.tokens.map(|(limit, tokenizer)| TokenLimit {
                limit,
                reserve: self.reserve_tokens,
                tokenizer,
            }),
            carried: Carried::AsIs,
        })
    }

    /// Masks secrets (values under secret-like keys, tokens and keys in any text) before
    /// any other stage sees them (default: off).
    pub fn redact(mut self, redact: bool) -> Self {
        self.redact = redact;
        self
    }

    /// Offloads a payload over the [inline threshold](Pipeline::inline_threshold) to `sink`
    /// (default: no store, nothing is offloaded). The [capture limit](Pipeline::max_capture)
    /// applies with or without one.
    pub fn store(mut self, sink: &'a mut dyn ArtifactSink) -> Self {
        self.store = Some(sink);
        self
    }

    /// With a store: payloads serialized larger than this many bytes are offloaded
    /// (exactly this many stay inline). It does not bound the
    /// [capture limit](Pipeline::max_capture), which is checked first. Default
    /// [`DEFAULT_INLINE_THRESHOLD`](super::offload::DEFAULT_INLINE_THRESHOLD), 32 KiB.
    pub fn inline_threshold(mut self, bytes: usize) -> Self {
        self.offload.inline_threshold = bytes;
        self
    }

    /// Payloads serialized larger than this many bytes (as the store would hold them, in the
    /// output format's dialect) become an `EOUTPUT_TOO_LARGE` error envelope (`None`: no
    /// limit, the default). Exactly this many bytes are kept. It applies on every path:
    /// with or without a [store](Pipeline::store) (a refused payload is never stored),
    /// below or above the [inline threshold](Pipeline::inline_threshold), with or without a
    /// [limit](Pipeline::limit) (the limit then fits the error envelope). With a capture
    /// limit the input is read whole, since the check sizes the whole payload.
    ///
    /// ```rust
    /// use envelope::shape::{Offloaded, Pipeline};
    /// use envelope::{Envelope, FormatId, Status};
    ///
    /// let env = Envelope::ok(serde_json::json!({"rows": [1, 2, 3]})); // 16 bytes
    /// let shaped = Pipeline::from_envelope(env.clone(), FormatId::ProtocolV1)
    ///     .max_capture(15)
    ///     .run()?;
    /// assert_eq!(shaped.offloaded, Offloaded::TooLarge { size_bytes: 16 });
    /// assert!(String::from_utf8_lossy(&shaped.bytes).contains("EOUTPUT_TOO_LARGE"));
    ///
    /// let kept = Pipeline::from_envelope(env, FormatId::ProtocolV1).max_capture(16).run()?;
    /// assert_eq!(kept.offloaded, Offloaded::Inline);
    /// # Ok::<(), envelope::Error>(())
    /// ```
    pub fn max_capture(mut self, bytes: impl Into<Option<usize>>) -> Self {
        self.offload.max_capture = bytes.into();
        self
    }

    /// How to write the output: the timestamp to use where the format needs one
    /// (`now`), ctxo's compat limit, tool-envelope-v1's dual emit, indentation.
    pub fn encode_options(mut self, options: EncodeOptions) -> Self {
        self.encode = options;
        self
    }

    /// Runs the pipeline: decode, redact, check the capture limit, offload, fit the limit (or
    /// encode whole).
    ///
    /// # Errors
    ///
    /// The decoding errors of [`decode`](crate::decode) and [`detect`](fn@crate::detect) for an
    /// input that is not an envelope; [`Error::Store`](crate::Error::Store) when the store
    /// fails (nothing is written then); [`Error::BudgetTooSmall`](crate::Error::BudgetTooSmall)
    /// when not even the smallest envelope of the output format fits the limit; the
    /// encoder's errors; [`Error::InvalidOutput`](crate::Error::InvalidOutput) (or
    /// `json.depth`) when the output would not read back as a valid envelope of its format
    /// (see [`check_output_of`](crate::validate::check_output_of)).
    pub fn run(self) -> Result<Shaped> {
        self.refuse_early()?;
        if let Some((output, mut shaped)) = self.spliced_without_stages()? {
            shaped.bytes = output.to_vec();
            return Ok(shaped);
        }
        if let Some((output, mut shaped)) = self.spliced_error_text()? {
            shaped.bytes = output.to_vec();
            return Ok(shaped);
        }
        if let Some((output, mut shaped)) = self.converted_from_parts()? {
            shaped.bytes = output.into_vec();
            return Ok(shaped);
        }
        let (output, mut shaped) = self.run_whole()?;
        shaped.bytes = output.into_vec();
        Ok(shaped)
    }

    /// [`run`](Pipeline::run), its output as a [`Spliced`] document that may borrow parts
    /// of the input (a long text that passes through, written when the output is): what a
    /// caller that writes the output somewhere (`envelope shape`) runs, so that a large
    /// output is never held whole beside the input. The [`Shaped`] facts come with it; its
    /// `bytes` are empty (the output is the splice's).
    ///
    /// # Errors
    ///
    /// As [`run`](Pipeline::run).
    pub fn run_spliced(self) -> Result<(Spliced<'a>, Shaped)> {
        self.refuse_early()?;
        if let Some(done) = self.spliced_without_stages()? {
            return Ok(done);
        }
        if let Some(done) = self.spliced_error_text()? {
            return Ok(done);
        }
        if let Some(done) = self.converted_from_parts()? {
            return Ok(done);
        }
        self.run_whole()
    }

    /// A large input of no format is refused before anything reads it whole
    /// ([`detect::refuse_early`](crate::detect::refuse_early)).
    fn refuse_early(&self) -> Result<()> {
        match &self.input {
            Input::Bytes {
                bytes, from: None, ..
            } => crate::detect::refuse_early(bytes),
            _ => Ok(()),
        }
    }

    /// A run with no stage but redaction (no limit, store or capture limit) is a
    /// conversion: the payload passes through as the bytes it has in the input, or
    /// rewritten as the output's writer writes it
    /// ([`spliced_in`](super::passthrough::spliced_in)), or masked from its text
    /// ([`payload_redacted::spliced`]); never built. `Ok(None)` for any other run or input.
    fn spliced_without_stages(&self) -> Result<Option<(Spliced<'a>, Shaped)>> {
        let Some((input, run)) = self.splice_run() else {
            return Ok(None);
        };
        if !self.only_redaction() {
            return Ok(None);
        }
        // A result of one long text: the text spliced in (masked a piece at a time).
        if let Some(done) = error_text::shape_text_payload(input, &run)? {
            return Ok(Some(done));
        }
        let (from, decode) = (run.from, run.decode);
        if self.redact {
            // Redaction alone: the payload masked from its text, spliced in.
            let spliced =
                payload_redacted::spliced(input, from, decode, self.output_format, &self.encode)?;
            return Ok(
                spliced.map(|(format, output, redactions)| converted(format, output, redactions))
            );
        }
        let spliced =
            passthrough::spliced_in(input, None, from, self.output_format, decode, &self.encode)?;
        Ok(spliced.map(|(format, output)| converted(format, output, Vec::new())))
    }

    /// A run without stages is a conversion: `envelope convert`'s
    /// ([`Document::convert`](crate::convert::Document::convert)), which also reads a
    /// tool-envelope-v1 result's envelope block and rewrites a payload spelled otherwise
    /// than the writer spells it (its scratch outlives a splice of ours, so its output is
    /// taken as bytes when it borrows from it). Tried after the splices of [`spliced_without_stages`] and
    /// [`spliced_error_text`](Self::spliced_error_text), which borrow the input instead.
    /// Read whole, the conversion is the whole path's (decode, encode, check: no stage
    /// runs), and its bytes are taken as they are. `Ok(None)` for a run with a stage, or
    /// when the conversion fails: the whole path then gives the same error.
    ///
    /// [`spliced_without_stages`]: Self::spliced_without_stages
    fn converted_from_parts(&self) -> Result<Option<(Spliced<'a>, Shaped)>> {
        let Some((input, run)) = self.splice_run() else {
            return Ok(None);
        };
        if self.redact || !self.only_redaction() {
            return Ok(None);
        }
        let to = match self.output_format.or(run.from) {
            Some(to) => to,
            None => match crate::detect::detect(input) {
                Ok(found) => found.format,
                Err(_) => return Ok(None),
            },
        };
        // ctxo's own conversion reads its `results` whole for the reference's truncation:
        // no cheaper than the whole path, and its output would be copied besides.
        if to == FormatId::Ctxo {
            return Ok(None);
        }
        let document = crate::convert::Document::new(input)
            .format(run.from)
            .decode_options(run.decode.clone());
        let Ok(mut written) = document.convert(to, &self.encode) else {
            return Ok(None);
        };
        let losses = std::mem::take(&mut written.losses);
        let mut output = written.into_owned();
        output.losses = losses;
        Ok(Some(converted(to, output, Vec::new())))
    }

    /// Whether no stage runs but, perhaps, redaction: no limit, store or capture limit.
    fn only_redaction(&self) -> bool {
        self.budget().is_none() && self.store.is_none() && self.offload.max_capture.is_none()
    }

    /// The input, when it is borrowed bytes (what a splicing run reads), and this run's
    /// options as the splicing runs take them.
    fn splice_run(&self) -> Option<(&'a [u8], error_text::Run<'_>)> {
        let Input::Bytes {
            bytes: Cow::Borrowed(input),
            from,
            decode,
        } = &self.input
        else {
            return None;
        };
        let run = error_text::Run {
            from: *from,
            decode,
            output_format: self.output_format,
            budget: self.budget(),
            redact: self.redact,
            encode: &self.encode,
        };
        Some((input, run))
    }

    /// The run on an MCP error result of one long text block, its text spliced into the
    /// output ([`error_text`]); `Ok(None)` for any other input.
    fn spliced_error_text(&self) -> Result<Option<(Spliced<'a>, Shaped)>> {
        match self.splice_run() {
            Some((input, run)) => error_text::shape(input, &run),
            None => Ok(None),
        }
    }

    /// [`run_spliced`](Pipeline::run_spliced) on the envelope read whole (or for a cut).
    fn run_whole(self) -> Result<(Spliced<'a>, Shaped)> {
        let budget = self.budget();
        let Pipeline {
            input,
            output_format,
            redact,
            store,
            offload: offload_options,
            encode,
            ..
        } = self;
        // What the output may take.
        let limit = budget.map(|b| b.room());
        let mut store = store;
        let mut artifacts = Vec::new();
        // What the capture check and offload did, when the input's payload was offloaded as
        // the bytes it has there.
        let mut passed_offload = None;
        // What was masked, when the input was redacted as it was offloaded.
        let mut passed_redactions = None;
        // Whether the envelope offloaded on the way had content blocks the offload left out.
        let mut passed_presentation = false;
        // What the output is checked against: the input's own validity (None: built in code).
        let source: Option<Cow<'a, [u8]>>;
        let (format, mut env) = match input {
            Input::Envelope { env, format } => {
                source = None;
                (format, *env)
            }
            Input::Bytes {
                bytes,
                from,
                decode,
            } => {
                // An MCP result whose payload is one long text: the text is stored from
                // the input's bytes, a piece at a time, never decoded whole (with
                // redaction, redacted a piece at a time).
                let text = match store.as_deref_mut() {
                    Some(sink) => {
                        let mut sink = Recorder {
                            sink,
                            artifacts: &mut artifacts,
                        };
                        text_offload::offload(
                            &bytes,
                            from,
                            &decode,
                            redact,
                            &offload_options,
                            &mut sink,
                        )?
                    }
                    None => None,
                };
                // A payload that is a root member: without redaction, passed through
                // unchanged and stored as the bytes it has in the input, never built; with
                // it, redacted from its text and stored as the masked text.
                let passed = match store.as_deref_mut() {
                    _ if text.is_some() => text,
                    Some(sink) => {
                        let mut sink = Recorder {
                            sink,
                            artifacts: &mut artifacts,
                        };
                        let offload = match redact {
                            false => passthrough::offload,
                            true => payload_redacted::offload,
                        };
                        offload(
                            &bytes,
                            from,
                            &decode,
                            output_format,
                            &offload_options,
                            &mut sink,
                        )?
                    }
                    _ => None,
                };
                if let Some(passed) = passed {
                    passed_presentation = passed.had_presentation;
                    passed_offload = Some(passed.offloaded);
                    passed_redactions = passed.redactions;
                    source = Some(bytes);
                    (passed.format, passed.env)
                } else {
                    // Only the budget cuts the payload: then read no more of it than the
                    // cut can keep. Offload stores the whole payload, the capture check
                    // sizes it, and the redaction report names every secret of the input,
                    // so they need it whole.
                    // (A long text result with nothing to redact is read as it is.)
                    let whole = || {
                        store.is_some()
                            || offload_options.max_capture.is_some()
                            || (redact
                                && !text_offload::nothing_to_redact_in_text_result(
                                    &bytes, from, &decode,
                                ))
                    };
                    let decoded = match limit {
                        Some(limit) if !whole() => {
                            passthrough::decode_bounded(&bytes, from, &decode, limit)?
                        }
                        // A long text result to redact for a limit: redacted a piece at a
                        // time and read for the limit, as a clean one is.
                        Some(limit)
                            if redact
                                && store.is_none()
                                && offload_options.max_capture.is_none()
                                && let Some((skimmed, done)) =
                                    text_redacted::for_limit(&bytes, from, &decode, limit)? =>
                        {
                            passed_redactions = Some(done);
                            Decoded::Skimmed(skimmed)
                        }
                        // A payload member to redact for a limit: redacted from its text,
                        // then read for the limit.
                        Some(limit)
                            if redact
                                && store.is_none()
                                && offload_options.max_capture.is_none()
                                && let Some((decoded, done)) = payload_redacted::for_limit(
                                    &bytes,
                                    from,
                                    &decode,
                                    output_format,
                                    limit,
                                )? =>
                        {
                            passed_redactions = Some(done);
                            decoded
                        }
                        // A long text result to redact: redacted a piece at a time, never
                        // decoded whole beside its masked copy.
                        _ if redact
                            && let Some((env, done)) =
                                text_redacted::redacted(&bytes, from, &decode)? =>
                        {
                            passed_redactions = Some(done);
                            Decoded::Whole(FormatId::Mcp, env)
                        }
                        _ => {
                            // An error can quote the input: with redaction on, it is masked too.
                            let (format, env) = formats::decode_any(&bytes, from, &decode)
                                .map_err(|e| if redact { redact_error(e) } else { e })?;
                            Decoded::Whole(format, env)
                        }
                    };
                    match decoded {
                        Decoded::Whole(format, env) => {
                            source = Some(bytes);
                            (format, env)
                        }
                        Decoded::Skimmed(skimmed) => {
                            let format = output_format.unwrap_or(skimmed.format());
                            let budget = budget.expect("skimmed for a limit");
                            let encoded = skimmed.fit_within(format, budget, &encode)?.encoded;
                            crate::validate::check_output_of(&encoded.bytes, format, &bytes)?;
                            let shaped = Shaped {
                                bytes: Vec::new(),
                                format,
                                losses: encoded.losses,
                                redactions: passed_redactions.unwrap_or_default(),
                                artifacts: Vec::new(),
                                offloaded: Offloaded::Inline,
                                skimmed: true,
                            };
                            return Ok((Spliced::whole(encoded.bytes), shaped));
                        }
                    }
                }
            }
        };
        let format = output_format.unwrap_or(format);
        // Redaction comes first: nothing below ever sees a secret.
        let redactions = match passed_redactions {
            Some(done) => done,
            None if redact => redact_envelope(&mut env),
            None => Vec::new(),
        };
        // The capture check, then the offload: with a store, `offload` runs both on one
        // serialization of the payload.
        let had_presentation = passed_presentation || env.presentation.is_some();
        let offloaded = match (passed_offload, store) {
            (Some(offloaded), _) => offloaded,
            (None, Some(sink)) => {
                let mut sink = Recorder {
                    sink,
                    artifacts: &mut artifacts,
                };
                offload(&mut env, format, &offload_options, &mut sink)?
            }
            (None, None) => capture(&mut env, format, offload_options.max_capture),
        };
        // Whatever is written must read back as a valid envelope of its format.
        let check = |output: &[u8]| match &source {
            Some(input) => crate::validate::check_output_of(output, format, input),
            None => crate::validate::check_output(output, format, Profile::Spec),
        };
        let mut output = match budget {
            // `env` is not needed after the cut but for its presentation.
            Some(budget) => {
                let encoded =
                    super::budget::fit_taking_text(&mut env, format, budget, &encode)?.encoded;
                check(&encoded.bytes)?;
                let mut output = Spliced::whole(encoded.bytes);
                output.losses = encoded.losses;
                output
            }
            // A large result `_meta` is written from its text, not copied into the output.
            None => super::meta_apart::encode(format, &mut env, &encode, &check)?,
        };
        let mut losses = std::mem::take(&mut output.losses);
        if had_presentation && env.presentation.is_none() {
            // The content blocks are not stored with the payload (nor kept in an error).
            losses.items.insert(
                0,
                formats::Loss {
                    field: "presentation".into(),
                    reason: "the content blocks are not stored with the payload: left out when it was offloaded or refused by the capture limit".into(),
                },
            );
        }
        let shaped = Shaped {
            bytes: Vec::new(),
            format,
            losses,
            redactions,
            artifacts,
            offloaded,
            skimmed: false,
        };
        Ok((output, shaped))
    }
}

impl std::fmt::Debug for Pipeline<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut d = f.debug_struct("Pipeline");
        match &self.input {
            Input::Bytes {
                bytes,
                from,
                decode,
            } => d
                .field("input_len", &bytes.len())
                .field("input_format", from)
                .field("decode", decode),
            Input::Envelope { format, .. } => d.field("envelope_format", format),
        };
        d.field("output_format", &self.output_format)
            .field("limit", &self.limit)
            .field("tokens", &self.tokens.map(|(n, t)| (n, t.name())))
            .field("reserve", &self.reserve)
            .field("notice", &self.notice.is_some())
            .field("redact", &self.redact)
            .field("store", &self.store.is_some())
            .field("offload", &self.offload)
            .field("encode", &self.encode)
            .finish()
    }
}

/// The facts of a conversion written as `output` (in `format`, its losses taken out of the
/// splice): nothing stored, nothing cut.
fn converted(
    format: FormatId,
    mut output: Spliced<'_>,
    redactions: Vec<super::redact::Redaction>,
) -> (Spliced<'_>, Shaped) {
    let shaped = Shaped {
        bytes: Vec::new(),
        format,
        losses: std::mem::take(&mut output.losses),
        redactions,
        artifacts: Vec::new(),
        offloaded: Offloaded::Inline,
        skimmed: false,
    };
    (output, shaped)
}

/// A sink that lists what it stored.
struct Recorder<'s, 'a> {
    sink: &'s mut dyn ArtifactSink,
    artifacts: &'a mut Vec<Artifact>,
}

impl ArtifactSink for Recorder<'_, '_> {
    fn put(&mut self, bytes: &[u8], kind: &str) -> std::result::Result<ArtifactRef, SinkError> {
        let artifact = self.sink.put(bytes, kind)?;
        self.artifacts.push(Artifact {
            digest: artifact.digest.clone(),
            size_bytes: bytes.len(),
            kind: kind.to_string(),
        });
        Ok(artifact)
    }

    fn begin(&mut self) -> Option<Box<dyn ArtifactWriter + '_>> {
        let writer = self.sink.begin()?;
        Some(Box::new(RecordingWriter {
            writer,
            artifacts: self.artifacts,
            size: 0,
        }))
    }
}

/// A [`Recorder`]'s artifact written a piece at a time: recorded once finished.
struct RecordingWriter<'w, 'a> {
    writer: Box<dyn ArtifactWriter + 'w>,
    artifacts: &'a mut Vec<Artifact>,
    size: usize,
}

impl ArtifactWriter for RecordingWriter<'_, '_> {
    fn write(&mut self, bytes: &[u8]) -> std::result::Result<(), SinkError> {
        self.size += bytes.len();
        self.writer.write(bytes)
    }

    fn finish(self: Box<Self>, kind: &str) -> std::result::Result<ArtifactRef, SinkError> {
        let artifact = self.writer.finish(kind)?;
        self.artifacts.push(Artifact {
            digest: artifact.digest.clone(),
            size_bytes: self.size,
            kind: kind.to_string(),
        });
        Ok(artifact)
    }
}
