use envelope::DecodeOptions;
use envelope::convert::Document;

use crate::cli::ConvertArgs;
use crate::{CmdResult, input};

pub fn run(args: &ConvertArgs) -> CmdResult {
    let to = input::format_id(&args.to)?;
    let from = input::opt_format_id(args.from.as_deref())?;
    let options = input::encode_options(&args.encode)?;
    let bytes = input::read(&args.file)?;
    let document = Document::new(&bytes)
        .format(from)
        .decode_options(DecodeOptions {
            lenient: args.lenient,
        });
    let out = document.convert(to, &options)?;
    if args.report {
        input::report_losses(&out.losses);
    }
    input::write_with(|stdout| out.write_to(stdout))
}
