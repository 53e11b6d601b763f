//! Conversion between formats through the canonical model: decode as one format, encode as
//! another, and say what the target could not hold.

use std::io::Write;

use crate::error::{Error, Result};
use crate::formats::{self, DecodeOptions, EncodeOptions, Encoded, FormatId};
use crate::json::Dialect;
use crate::model::{Envelope, LossReport, Payload, Status};
use crate::shape::Spliced;
use crate::shape::bounded::{self, Decoded};
use crate::shape::kept::{Kept, kept_payload, marker};
use crate::shape::passthrough::{self, Scratch};

/// Decodes `input` (as `from`, or the detected format when `from` is `None`) and encodes it
/// as `to`. The result holds the bytes and the loss report: every field the source carried
/// that `to` has no place for (canonical fields by name, fields only the source format
/// knows by their JSON Pointer in the source document).
///
/// Converting to ctxo reads no more of a large payload than ctxo's byte limit needs; the
/// bytes are the same as decoding the whole document and encoding it.
///
/// # Errors
///
/// Whatever [`decode`](crate::decode) or [`encode`](crate::encode) return: invalid JSON
/// (with its location), a document no format recognises
/// ([`Error::Undetected`]), or one that is not a valid envelope of
/// its format; [`Error::InvalidOutput`] when the output would
/// not be read back as a valid `to` envelope (see
/// [`check_output_of`](crate::validate::check_output_of)): nothing is returned then.
///
/// ```
/// use envelope::convert::convert;
/// use envelope::{DecodeOptions, EncodeOptions, FormatId};
///
/// let input = include_str!("../../../examples/protocol-v1.json");
/// let out = convert(
///     input.as_bytes(),
///     None, // detected: protocol-v1
///     FormatId::Mcp,
///     &DecodeOptions::default(),
///     &EncodeOptions::default(),
/// )
/// .unwrap();
///
/// let result: serde_json::Value = serde_json::from_slice(&out.bytes).unwrap();
/// assert_eq!(result["structuredContent"]["message"], "Hello from inline envelope");
///
/// // MCP has no place for the command, the time or the workspace, nor for protocol-v1's
/// // own meta fields: each is reported, by name or by its pointer in the source.
/// let lost: Vec<&str> = out.losses.items.iter().map(|l| l.field.as_str()).collect();
/// assert!(lost.contains(&"command"));
/// assert!(lost.contains(&"timestamp"));
/// assert!(lost.contains(&"/meta/runner"));
/// let runner = out.losses.items.iter().find(|l| l.field == "/meta/runner").unwrap();
/// assert_eq!(runner.reason, "protocol-v1 field with no place in mcp");
/// ```
pub fn convert(
    input: &[u8],
    from: Option<FormatId>,
    to: FormatId,
    decode_options: &DecodeOptions,
    encode_options: &EncodeOptions,
) -> Result<Encoded> {
    let mut output = converted(input, from, to, decode_options, encode_options)?;
    let losses = std::mem::take(&mut output.losses);
    Ok(Encoded {
        bytes: output.into_vec(),
        losses,
    })
}

/// [`convert`], its output written from its parts (a large result `_meta` from the text
/// the decoder kept: [`meta_apart`](crate::shape::meta_apart)).
fn converted(
    input: &[u8],
    from: Option<FormatId>,
    to: FormatId,
    decode_options: &DecodeOptions,
    encode_options: &EncodeOptions,
) -> Result<Spliced<'static>> {
    let check = |output: &[u8]| crate::validate::check_output_of(output, to, input);
    if to == FormatId::Ctxo {
        // ctxo's compat truncation keeps a few kilobytes of a large payload: read no more of
        // it than that needs (the same bytes as a whole read).
        let limit = encode_options
            .ctxo_limit
            .unwrap_or(formats::ctxo::DEFAULT_LIMIT);
        let encoded = match bounded::decode(input, from, decode_options, limit)? {
            Decoded::Whole(_, env) => Some(formats::encode(to, &env, encode_options)?),
            Decoded::Skimmed(skimmed) => skimmed.encode_ctxo(encode_options)?,
        };
        if let Some(encoded) = encoded {
            check(&encoded.bytes)?;
            let mut output = Spliced::whole(encoded.bytes);
            output.losses = encoded.losses;
            return Ok(output);
        }
    }
    let (_, mut env) = formats::decode_any(input, from, decode_options)?;
    crate::shape::meta_apart::encode(to, &mut env, encode_options, &check)
}

/// A document to convert or unwrap, read the cheapest way that gives the bytes of reading it
/// whole: the library chooses (a payload already written as the target writes it is copied,
/// never built; an error's long text is written from where it is), never its caller.
///
/// ```
/// use envelope::FormatId;
/// use envelope::convert::Document;
///
/// let doc = Document::new(br#"{"data":{"rows":[1,2,3]},"meta":{"source":"local"}}"#);
/// let payload = doc.unwrap()?;
/// assert_eq!(payload.to_vec(), br#"{"rows":[1,2,3]}"#);
///
/// let mcp = doc.convert(FormatId::Mcp, &Default::default())?;
/// assert!(String::from_utf8(mcp.to_vec()).unwrap().contains(r#""structuredContent":{"rows":[1,2,3]}"#));
/// # Ok::<(), envelope::Error>(())
/// ```
#[derive(Debug)]
pub struct Document<'a> {
    input: &'a [u8],
    from: Option<FormatId>,
    decode: DecodeOptions,
    /// What a read decodes out of the input and borrows from (one per input).
    scratch: Scratch,
}

/// What [`Document::convert`] and [`Document::unwrap`] give: the output, written as one
/// piece or from its parts in the input.
#[derive(Debug)]
pub struct Written<'a> {
    output: Output<'a>,
    /// What the target format could not hold (empty for [`Document::unwrap`]).
    pub losses: LossReport,
}

#[derive(Debug)]
enum Output<'a> {
    Bytes(Vec<u8>),
    /// A part of the input, as it is.
    Borrowed(&'a [u8]),
    Spliced(Spliced<'a>),
    /// The document decoded whole into the model and encoded (a large result `_meta`
    /// written from its kept text).
    Whole(Spliced<'static>),
}

/// The envelope `env`, built in code (`envelope wrap`), around the JSON document `payload`
/// (its text), encoded as `to`: `env`'s payload is replaced by the document. To ctxo, whose
/// encoder cuts the payload to its byte limit, no more of a large payload is read than the
/// cut keeps; the bytes are those of parsing it whole and encoding.
///
/// ```
/// use envelope::{EncodeOptions, Envelope, FormatId};
///
/// let rows: Vec<String> = (0..2000).map(|i| format!(r#"{{"id":{i}}}"#)).collect();
/// let payload = format!(r#"{{"results":[{}]}}"#, rows.join(","));
/// let out = envelope::convert::wrap(Envelope::default(), payload.as_bytes(), FormatId::Ctxo, &EncodeOptions::default())?;
/// assert!(out.bytes.len() <= 8192);
/// # Ok::<(), envelope::Error>(())
/// ```
///
/// # Errors
///
/// `payload` is not JSON (with its location); the encoder's errors.
pub fn wrap(
    mut env: Envelope,
    payload: &[u8],
    to: FormatId,
    options: &EncodeOptions,
) -> Result<Encoded> {
    if to == FormatId::Ctxo {
        let limit = options.ctxo_limit.unwrap_or(formats::ctxo::DEFAULT_LIMIT);
        let skimmed = bounded::SkimmedEnvelope::from_payload(env.clone(), payload, to, limit);
        if let Some(encoded) = skimmed
            .map(|s| s.encode_ctxo(options))
            .transpose()?
            .flatten()
        {
            return Ok(encoded);
        }
    }
    env.payload = Payload::Json(crate::json::from_slice(payload)?);
    formats::encode(to, &env, options)
}

impl<'a> Document<'a> {
    /// The document `input`, its format detected, read strictly.
    pub fn new(input: &'a [u8]) -> Self {
        Document {
            input,
            from: None,
            decode: DecodeOptions::default(),
            scratch: Scratch::default(),
        }
    }

    /// Read as `from` (`None`: detected).
    pub fn format(mut self, from: Option<FormatId>) -> Self {
        self.from = from;
        self
    }

    /// Read with these options.
    pub fn decode_options(mut self, decode: DecodeOptions) -> Self {
        self.decode = decode;
        self
    }

    /// [`convert`] of the document to `to`, with the same bytes and losses.
    ///
    /// # Errors
    ///
    /// Those of [`convert`].
    pub fn convert(&self, to: FormatId, options: &EncodeOptions) -> Result<Written<'_>> {
        self.refuse_early()?;
        let spliced = match passthrough::convert_as_written(
            self.input,
            &self.scratch,
            self.from,
            to,
            &self.decode,
            options,
        )? {
            Some(spliced) => Some(spliced),
            None => {
                crate::shape::error_text::convert(self.input, self.from, to, &self.decode, options)?
            }
        };
        if let Some(mut spliced) = spliced {
            let losses = std::mem::take(&mut spliced.losses);
            return Ok(Written {
                output: Output::Spliced(spliced),
                losses,
            });
        }
        let mut output = converted(self.input, self.from, to, &self.decode, options)?;
        let losses = std::mem::take(&mut output.losses);
        Ok(Written {
            output: Output::Whole(output),
            losses,
        })
    }

    /// The document's payload as compact JSON (JS dialect). An error envelope without a
    /// payload gives its error as an object (`category`, `code`, `message`, …), so nothing is
    /// hidden. A shaped document gives the part of the payload it kept, never the truncation
    /// notice the cut wrote beside it.
    ///
    /// # Errors
    ///
    /// Those of [`decode_any`](crate::formats::decode_any); [`Error::PayloadLeftOut`] when
    /// the payload was left out to fit a byte limit (there is nothing to give).
    pub fn unwrap(&self) -> Result<Written<'_>> {
        self.refuse_early()?;
        let written = |output| Written {
            output,
            losses: LossReport::default(),
        };
        if let Some(payload) = passthrough::payload_text(
            self.input,
            &self.scratch,
            self.from,
            &self.decode,
            Dialect::Js,
        ) {
            return Ok(written(Output::Borrowed(payload)));
        }
        // A long text result: its literal, rewritten once (in the scratch) when spelled
        // otherwise.
        let text = crate::shape::text_result::unwrapped_text(self.input, self.from, &self.decode)
            .and_then(|(literal, written)| match written {
                true => Some(literal),
                false => self.scratch.rewritten(literal, Dialect::Js),
            });
        if let Some(text) = text {
            return Ok(written(Output::Borrowed(text)));
        }
        if let Some(object) =
            crate::shape::error_text::error_object_as_written(self.input, self.from, &self.decode)
        {
            return Ok(written(Output::Spliced(object)));
        }
        let (_, env) = formats::decode_any(self.input, self.from, &self.decode)?;
        if let (Payload::None, Some(error), Status::Error) = (&env.payload, &env.error, env.status)
        {
            let object = formats::operations::error_object(error);
            return Ok(written(Output::Bytes(crate::json::to_vec(
                &object,
                Dialect::Js,
            ))));
        }
        let bytes = if marker(&env).is_none() {
            crate::json::to_vec(&env.payload.json(), Dialect::Js)
        } else {
            match kept_payload(&env) {
                Kept::Whole(value) | Kept::Part(value) => crate::json::to_vec(&value, Dialect::Js),
                Kept::LeftOut => return Err(Error::PayloadLeftOut),
            }
        };
        Ok(written(Output::Bytes(bytes)))
    }
}

impl Document<'_> {
    /// A large document of no format is refused before anything reads it whole
    /// ([`refuse_early`](crate::detect::refuse_early)).
    fn refuse_early(&self) -> Result<()> {
        match self.from {
            None => crate::detect::refuse_early(self.input),
            Some(_) => Ok(()),
        }
    }
}

impl Written<'_> {
    /// Whether the document was decoded whole into the model to write this output (its
    /// payload built as a tree), rather than written from the input's own bytes (a payload
    /// or a text passed through as written). The bytes are the same either way; this says
    /// what they cost, as [`Shaped::skimmed`](crate::shape::Shaped::skimmed) does for a cut.
    pub fn read_whole(&self) -> bool {
        matches!(self.output, Output::Bytes(_) | Output::Whole(_))
    }

    /// Writes the output.
    ///
    /// # Errors
    ///
    /// The writer's.
    pub fn write_to(&self, out: &mut dyn Write) -> std::io::Result<()> {
        match &self.output {
            Output::Bytes(bytes) => out.write_all(bytes),
            Output::Borrowed(bytes) => out.write_all(bytes),
            Output::Spliced(spliced) | Output::Whole(spliced) => spliced.write_to(out),
        }
    }

    /// The whole output in one buffer, taken without a copy when it is one already.
    pub(crate) fn into_vec(self) -> Vec<u8> {
        match self.output {
            Output::Bytes(bytes) => bytes,
            Output::Whole(spliced) => spliced.into_vec(),
            other => Written {
                output: other,
                losses: self.losses,
            }
            .to_vec(),
        }
    }

    /// The output as a splice that borrows nothing of the document (its losses left out):
    /// what a caller the document does not outlive takes, copied only when it borrows.
    pub(crate) fn into_owned(self) -> Spliced<'static> {
        match self.output {
            Output::Whole(spliced) => spliced,
            output => Spliced::whole(
                Written {
                    output,
                    losses: LossReport::default(),
                }
                .into_vec(),
            ),
        }
    }

    /// The whole output in one buffer.
    pub fn to_vec(&self) -> Vec<u8> {
        match &self.output {
            Output::Bytes(bytes) => bytes.clone(),
            Output::Borrowed(bytes) => bytes.to_vec(),
            Output::Spliced(spliced) | Output::Whole(spliced) => spliced.to_vec(),
        }
    }
}
