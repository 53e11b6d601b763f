//! Reading for a budget against reading whole, on arbitrary bytes: `shape --limit
//! --no-offload` (the pipeline, which reads for the limit where it can) and `convert --to
//! ctxo` must give the bytes, or the error, of a whole read followed by the same cut (and
//! the output check the pipeline makes). A panic or a difference is a crash.
#![no_main]

use envelope::convert::convert;
use envelope::formats::decode_any;
use envelope::shape::{Pipeline, fit};
use envelope::{DecodeOptions, EncodeOptions, FormatId};
use libfuzzer_sys::fuzz_target;

fn outcome(r: envelope::Result<envelope::Encoded>) -> Result<Vec<u8>, String> {
    r.map(|e| e.bytes).map_err(|e| e.to_string())
}

fuzz_target!(|data: &[u8]| {
    let decode = DecodeOptions::default();
    let whole = decode_any(data, None, &decode);
    for limit in [0, 40, 200, 1000] {
        let options = EncodeOptions {
            now: Some("2026-07-04T00:00:00Z".into()),
            ctxo_limit: Some(limit),
            ..EncodeOptions::default()
        };
        for target in [FormatId::Ctxo, FormatId::Mcp, FormatId::ProtocolV1] {
            let expected = match &whole {
                Ok((_, env)) => outcome(fit(env, target, limit, &options).and_then(|f| {
                    envelope::validate::check_output_of(&f.encoded.bytes, target, data)?;
                    Ok(f.encoded)
                })),
                Err(e) => Err(e.to_string()),
            };
            let got = Pipeline::new(data)
                .output_format(target)
                .limit(limit)
                .encode_options(options.clone())
                .run()
                .map(|shaped| shaped.bytes)
                .map_err(|e| e.to_string());
            assert_eq!(got, expected, "shape, limit {limit}, to {target}");
        }
        let expected = match &whole {
            Ok((_, env)) => outcome(envelope::encode(FormatId::Ctxo, env, &options)),
            Err(e) => Err(e.to_string()),
        };
        let got = outcome(convert(data, None, FormatId::Ctxo, &decode, &options));
        assert_eq!(got, expected, "convert to ctxo, limit {limit}");
    }
});
