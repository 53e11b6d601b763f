//! `envelope convert` against the whole conversion, on arbitrary bytes: whatever way
//! [`Document::convert`] writes the output (the payload taken as written, an error's long
//! text spliced, or the document read whole: [`Written::read_whole`] says), the output and
//! the losses must be the whole conversion's, and where it is not read whole the whole
//! conversion must succeed. A panic or a difference is a crash.
#![no_main]

use envelope::convert::{Document, convert};
use envelope::{DecodeOptions, EncodeOptions, FormatId};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let decode = DecodeOptions::default();
    let options = EncodeOptions {
        now: Some("2026-07-04T00:00:00Z".into()),
        ..EncodeOptions::default()
    };
    for to in FormatId::ALL {
        let document = Document::new(data);
        let Ok(converted) = document.convert(to, &options) else {
            assert!(convert(data, None, to, &decode, &options).is_err(), "to {to}");
            continue;
        };
        let whole = convert(data, None, to, &decode, &options).unwrap_or_else(|e| {
            panic!(
                "converted to {to} (read whole: {}), but the whole conversion fails: {e}",
                converted.read_whole()
            )
        });
        assert!(converted.to_vec() == whole.bytes, "to {to}: not the whole conversion's bytes");
        assert_eq!(
            format!("{:?}", converted.losses),
            format!("{:?}", whole.losses),
            "to {to}"
        );
    }
});
