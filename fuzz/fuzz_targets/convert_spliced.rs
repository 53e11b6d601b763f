//! `envelope convert`'s spliced paths against the whole conversion, on arbitrary bytes:
//! whenever the payload is taken as written (`passthrough::convert_as_written`) or an
//! error's long text is spliced (`error_text::convert`), the output and the losses must be
//! the whole conversion's, and the whole conversion must succeed. A panic or a difference
//! is a crash.
#![no_main]

use envelope::convert::convert;
use envelope::shape::{error_text, passthrough};
use envelope::{DecodeOptions, EncodeOptions, FormatId};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let decode = DecodeOptions::default();
    let options = EncodeOptions {
        now: Some("2026-07-04T00:00:00Z".into()),
        ..EncodeOptions::default()
    };
    for to in FormatId::ALL {
        let scratch = passthrough::Scratch::default();
        let spliced = match passthrough::convert_as_written(data, &scratch, None, to, &decode, &options) {
            Ok(Some(spliced)) => Some(spliced),
            Ok(None) => error_text::convert(data, None, to, &decode, &options).ok().flatten(),
            Err(_) => None,
        };
        let Some(spliced) = spliced else { continue };
        let whole = convert(data, None, to, &decode, &options)
            .unwrap_or_else(|e| panic!("spliced to {to}, but the whole conversion fails: {e}"));
        assert!(spliced.to_vec() == whole.bytes, "to {to}: not the whole conversion's bytes");
        assert_eq!(
            format!("{:?}", spliced.losses),
            format!("{:?}", whole.losses),
            "to {to}"
        );
    }
});
