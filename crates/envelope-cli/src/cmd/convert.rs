use envelope::DecodeOptions;

use crate::cli::ConvertArgs;
use crate::{CmdResult, input};

pub fn run(args: &ConvertArgs) -> CmdResult {
    let to = input::format_id(&args.to)?;
    let from = input::opt_format_id(args.from.as_deref())?;
    let options = input::encode_options(&args.encode)?;
    let bytes = input::read(&args.file)?;
    let decode = DecodeOptions {
        lenient: args.lenient,
    };
    // A payload already written as the target writes it is copied, never built.
    // So is an error result's long text.
    let scratch = envelope::shape::passthrough::Scratch::default();
    let spliced = match envelope::shape::passthrough::convert_as_written(
        &bytes, &scratch, from, to, &decode, &options,
    )? {
        Some(spliced) => Some(spliced),
        None => envelope::shape::error_text::convert(&bytes, from, to, &decode, &options)?,
    };
    if let Some(out) = spliced {
        if args.report {
            input::report_losses(&out.losses);
        }
        return input::write_with(|stdout| out.write_to(stdout));
    }
    let encoded = envelope::convert::convert(&bytes, from, to, &decode, &options)?;
    if args.report {
        input::report_losses(&encoded.losses);
    }
    input::write_line(&encoded.bytes)
}
