use envelope::DecodeOptions;
use envelope::shape::{Offloaded, Pipeline};
use envelope_store::StoreSink;

use crate::cli::{EncodeArgs, ShapeArgs};
use crate::{CmdResult, input};

/// Payloads serialized larger than this are offloaded, unless `--inline-threshold` says
/// otherwise.
pub const INLINE_THRESHOLD: usize = 32768;

/// Redacts (with `--redact`), refuses a payload over `--max-capture` (the
/// `EOUTPUT_TOO_LARGE` error envelope, with or without a store: `--no-offload` only means
/// no store), offloads a payload over the inline threshold, then fits the envelope into
/// `--limit` bytes, in its own format or `--format`: one [`Pipeline`] run.
pub fn run(args: &ShapeArgs) -> CmdResult {
    let to = input::opt_format_id(args.format.as_deref())?;
    let from = input::opt_format_id(args.from.as_deref())?;
    let options = input::encode_options(&EncodeArgs {
        ts: args.ts.clone(),
        limit: None,
        dual_emit: false,
        indented: false,
    })?;
    // Reading, redacting, offloading a large result can take seconds: a progress line says
    // so on a terminal.
    let (bytes, progress) = input::map_with_progress(&args.file, "shaping")?;
    let store = match args.no_offload {
        true => None,
        false => Some(super::artifact::open_store(args.store.as_ref())?),
    };
    let mut sink = store.as_deref().map(StoreSink::new);
    let tokens = input::token_limit(&args.tokens)?;
    let mut pipeline = Pipeline::new(&bytes)
        .input_format(from)
        .decode_options(DecodeOptions {
            lenient: args.lenient,
        })
        .output_format(to)
        .limit(document_limit(args.limit))
        .redact(args.redact)
        .inline_threshold(args.inline_threshold.unwrap_or(INLINE_THRESHOLD))
        .max_capture(args.max_capture)
        .encode_options(options);
    if let Some(sink) = &mut sink {
        pipeline = pipeline.store(sink);
    }
    if let Some((limit, tokenizer)) = &tokens {
        pipeline = pipeline
            .limit_tokens(*limit, tokenizer)
            .reserve_tokens(NEWLINE_TOKENS);
    }
    // The output may hold a long text of the input, written from there (never copied).
    let run = pipeline
        .run_spliced()
        .map_err(|e| with_newline(e, args.limit));
    drop(progress);
    let (output, shaped) = run?;
    match &shaped.offloaded {
        Offloaded::Stored { digest, size_bytes } => {
            input::note(&format!("offloaded {size_bytes} bytes as {digest}"));
        }
        Offloaded::TooLarge { size_bytes } => input::note(&format!(
            "the payload of {size_bytes} bytes is over --max-capture: wrote the EOUTPUT_TOO_LARGE error envelope"
        )),
        _ => {}
    }
    if args.report {
        input::report(&shaped.losses, &shaped.redactions);
    }
    input::write_with(|stdout| output.write_to(stdout))
}

/// The tokens `--limit-tokens` keeps for the output's newline: one (a newline after the
/// document's last `}` is at most one more token, whatever the tokenizer merges).
pub(crate) const NEWLINE_TOKENS: usize = 1;

/// The output ends with a newline, like every command's, and `--limit` bounds the whole
/// output: the document gets one byte less.
pub(crate) fn document_limit(limit: Option<usize>) -> Option<usize> {
    limit.map(|limit| limit.saturating_sub(1))
}

/// A budget error told in output bytes (the newline counted), with the `--limit` given;
/// in tokens, with the newline's token counted.
pub(crate) fn with_newline(e: envelope::Error, given: Option<usize>) -> envelope::Error {
    match (e, given) {
        (
            envelope::Error::BudgetTooSmall {
                format, minimum, ..
            },
            Some(limit),
        ) => envelope::Error::BudgetTooSmall {
            format,
            limit,
            minimum: minimum + 1,
        },
        (
            envelope::Error::TokenBudgetTooSmall {
                format,
                limit,
                tokenizer,
                minimum,
            },
            _,
        ) => envelope::Error::TokenBudgetTooSmall {
            format,
            limit: limit + NEWLINE_TOKENS,
            tokenizer,
            minimum: minimum + NEWLINE_TOKENS,
        },
        (other, _) => other,
    }
}
