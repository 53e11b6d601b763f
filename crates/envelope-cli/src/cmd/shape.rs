use envelope::DecodeOptions;

use crate::cli::{EncodeArgs, ShapeArgs};
use crate::{CmdResult, input};

/// Redacts (with `--redact`), then fits the envelope into `--limit` bytes, in its own format
/// or `--format`.
pub fn run(args: &ShapeArgs) -> CmdResult {
    let to = input::opt_format_id(args.format.as_deref())?;
    let from = input::opt_format_id(args.from.as_deref())?;
    let options = input::encode_options(&EncodeArgs {
        ts: args.ts.clone(),
        limit: None,
        dual_emit: false,
        indented: false,
    })?;
    let bytes = input::read(&args.file)?;
    let decode = DecodeOptions {
        lenient: args.lenient,
    };
    let (format, mut env) = envelope::formats::decode_any(&bytes, from, &decode)?;
    let target = to.unwrap_or(format);
    // Redaction comes first: nothing below ever sees a secret.
    let redacted = if args.redact {
        envelope::shape::redact::redact_envelope(&mut env)
    } else {
        Vec::new()
    };
    let encoded = match args.limit {
        Some(limit) => envelope::shape::fit(&env, target, limit, &options)?.encoded,
        None => envelope::encode(target, &env, &options)?,
    };
    if args.report {
        input::report(&encoded.losses, &redacted);
    }
    input::write_stdout(&encoded.bytes)
}
