use envelope::DecodeOptions;
use envelope::convert::Document;

use crate::cli::UnwrapArgs;
use crate::{CmdResult, input};

/// Prints the payload as compact JSON ([`Document::unwrap`]): an error envelope without a
/// payload prints its error as an object; a shaped output prints the part of the payload it
/// kept; one whose payload was left out is an error (exit 1), not a payload.
pub fn run(args: &UnwrapArgs) -> CmdResult {
    let from = input::opt_format_id(args.from.as_deref())?;
    let bytes = input::read(&args.file)?;
    let document = Document::new(&bytes)
        .format(from)
        .decode_options(DecodeOptions {
            lenient: args.lenient,
        });
    let payload = document.unwrap()?;
    input::write_with(|stdout| payload.write_to(stdout))
}
