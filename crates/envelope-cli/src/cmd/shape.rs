use envelope::{DecodeOptions, EncodeOptions};

use crate::cli::ShapeArgs;
use crate::{CmdResult, input};

/// Fits the envelope into `--limit` bytes in its own format or `--format`.
pub fn run(args: &ShapeArgs) -> CmdResult {
    let to = input::opt_format_id(args.format.as_deref())?;
    let from = input::opt_format_id(args.from.as_deref())?;
    let options = input::encode_options(&crate::cli::EncodeArgs {
        ts: args.ts.clone(),
        limit: None,
        dual_emit: false,
        indented: false,
    })?;
    let bytes = input::read(&args.file)?;
    let decode = DecodeOptions {
        lenient: args.lenient,
    };
    let (format, env) = envelope::formats::decode_any(&bytes, from, &decode)?;
    let fitted = envelope::shape::fit(
        &env,
        to.unwrap_or(format),
        args.limit,
        &EncodeOptions { ..options },
    )?;
    if args.report {
        input::report_losses(&fitted.encoded.losses);
    }
    input::write_stdout(&fitted.encoded.bytes)
}
