use envelope::DecodeOptions;
use envelope::shape::bounded::{self, Decoded};

use envelope::shape::offload::{ArtifactSink, OffloadOptions, Offloaded, offload};
use envelope_store::Store;

use crate::cli::{EncodeArgs, ShapeArgs};
use crate::{CmdResult, input};

/// The store as the place offloaded payloads go.
struct StoreSink(Box<dyn Store>);

impl ArtifactSink for StoreSink {
    fn put(&mut self, bytes: &[u8], kind: &str) -> Result<String, String> {
        self.0
            .put(bytes, kind, &[])
            .map(|sidecar| sidecar.digest.to_string())
            .map_err(|e| format!("error[{}]: {e}", e.code()))
    }
}

/// Redacts (with `--redact`), offloads a payload over the inline threshold, then fits the
/// envelope into `--limit` bytes, in its own format or `--format`.
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
    // Only the budget cuts the payload: read no more of it than the cut can keep.
    let decoded = match args.limit {
        Some(limit) if args.no_offload && !args.redact => {
            bounded::decode(&bytes, from, &decode, limit)?
        }
        _ => {
            let (format, env) = envelope::formats::decode_any(&bytes, from, &decode)?;
            Decoded::Whole(format, env)
        }
    };
    let (format, mut env) = match decoded {
        Decoded::Whole(format, env) => (format, env),
        Decoded::Skimmed(skimmed) => {
            let encoded = skimmed
                .fit(to.unwrap_or(skimmed.format()), &options)?
                .encoded;
            if args.report {
                input::report(&encoded.losses, &[]);
            }
            return input::write_stdout(&encoded.bytes);
        }
    };
    let target = to.unwrap_or(format);
    // Redaction comes first: nothing below ever sees a secret.
    let redacted = if args.redact {
        envelope::shape::redact::redact_envelope(&mut env)
    } else {
        Vec::new()
    };
    let offloaded = if args.no_offload {
        Offloaded::Inline
    } else {
        let options = OffloadOptions {
            inline_threshold: args.inline_threshold,
            max_capture: args.max_capture,
        };
        let mut sink = StoreSink(super::artifact::open_store(args.store.as_ref())?);
        offload(&mut env, target, &options, &mut sink)?
    };
    if let Offloaded::Stored { digest, size_bytes } = &offloaded {
        input::note(&format!("offloaded {size_bytes} bytes as {digest}"));
    }
    let encoded = match args.limit {
        Some(limit) => envelope::shape::fit(&env, target, limit, &options)?.encoded,
        None => envelope::encode(target, &env, &options)?,
    };
    if args.report {
        input::report(&encoded.losses, &redacted);
    }
    input::write_stdout(&encoded.bytes)
}
