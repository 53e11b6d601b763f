use envelope::json::Dialect;
use envelope::shape::kept::{Kept, kept_payload, marker};
use envelope::{DecodeOptions, Payload, Status};

use crate::cli::UnwrapArgs;
use crate::{CmdResult, Failure, input};

/// Prints the payload as compact JSON. An error envelope without a payload prints its
/// error as an object (`category`, `code`, `message`, …), so nothing is hidden. A shaped
/// output prints the part of the payload it kept, never the truncation notice the cut
/// wrote beside it; one whose payload was left out is an error (exit 1), not a payload.
pub fn run(args: &UnwrapArgs) -> CmdResult {
    let from = input::opt_format_id(args.from.as_deref())?;
    let bytes = input::read(&args.file)?;
    let options = DecodeOptions {
        lenient: args.lenient,
    };
    // A payload already written as compact JS is printed as it is, never built.
    let scratch = envelope::shape::passthrough::Scratch::default();
    if let Some(payload) = envelope::shape::passthrough::payload_as_written(
        &bytes,
        &scratch,
        from,
        &options,
        Dialect::Js,
    ) {
        return input::write_line(payload);
    }
    // An error result whose message is one long text: the text printed from where it is.
    if let Some(object) =
        envelope::shape::error_text::error_object_as_written(&bytes, from, &options)
    {
        return input::write_with(|stdout| object.write_to(stdout));
    }
    let (_, env) = envelope::formats::decode_any(&bytes, from, &options)?;
    if let (Payload::None, Some(error), Status::Error) = (&env.payload, &env.error, env.status) {
        let object = envelope::formats::operations::error_object(error);
        return input::write_line(&envelope::json::to_vec(&object, Dialect::Js));
    }
    // Not cut: the whole payload, written from where it is (a copy of a large one would
    // double the memory).
    if marker(&env).is_none() {
        return input::write_line(&envelope::json::to_vec(&env.payload.json(), Dialect::Js));
    }
    let value = match kept_payload(&env) {
        Kept::Whole(value) | Kept::Part(value) => value,
        Kept::LeftOut => {
            return Err(Failure::invalid(
                "payload.left-out",
                "the payload was left out to fit a byte limit (its budget marker says so): there is nothing to unwrap",
            ));
        }
    };
    input::write_line(&envelope::json::to_vec(&value, Dialect::Js))
}
