//! The validator on arbitrary bytes: as a document in every profile (format detected, and
//! each format forced), and as an NDJSON stream (one stream, or independent lines), where
//! the fast path and the general path must report exactly the same findings, each finding
//! about a line with its line. A panic or a difference is a crash.
#![no_main]

use envelope::FormatId;
use envelope::validate::stream::StreamValidator;
use envelope::validate::{Options, Profile, validate_document};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    for profile in Profile::ALL {
        let report = validate_document(data, &Options::new(None, profile));
        // Every finding names a catalogue rule.
        for f in &report.findings {
            assert!(envelope::validate::RULES.iter().any(|r| r.id == f.rule));
        }
        for format in FormatId::ALL {
            validate_document(data, &Options::new(Some(format), profile));
        }
        for format in [None, Some(FormatId::ProtocolV1)] {
            for independent in [false, true] {
                let run = |fast: bool| {
                    let mut v = StreamValidator::new(Options::new(format, profile));
                    if !fast {
                        v = v.without_fast_path();
                    }
                    if independent {
                        v = v.independent();
                    }
                    // A small line cap, so long lines take the capped path too.
                    v.run(data, 4096).unwrap().findings
                };
                let findings = run(true);
                assert_eq!(findings, run(false));
                // Every finding about a line has its line.
                for f in &findings {
                    let whole_stream = matches!(
                        f.rule,
                        "stream.terminal" | "stream.empty" | "stream.more-findings"
                    );
                    assert_eq!(f.line.is_none(), whole_stream, "{f}");
                }
            }
        }
    }
});
