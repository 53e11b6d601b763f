// Shared by every target (included, so each target stays one file for cargo-fuzz).

/// Decoding never panics; whatever decodes encodes in every format without panicking, and
/// what an encoder writes its own decoder reads back.
fn envelope_fuzz_check(format: envelope::FormatId, data: &[u8]) {
    use envelope::{DecodeOptions, EncodeOptions, FormatId, decode, encode};
    let _ = envelope::detect(data);
    for lenient in [false, true] {
        let Ok(env) = decode(format, data, &DecodeOptions { lenient }) else {
            continue;
        };
        let options = EncodeOptions {
            now: Some("2026-01-01T00:00:00Z".into()),
            ctxo_limit: Some(512),
            ..EncodeOptions::default()
        };
        for target in FormatId::ALL {
            let encoded = encode(target, &env, &options).expect("encoding a decoded envelope");
            if let Err(e) = decode(target, &encoded.bytes, &DecodeOptions::default()) {
                panic!(
                    "{target} cannot read its own output: {e}\n{}",
                    String::from_utf8_lossy(&encoded.bytes)
                );
            }
        }
    }
}
