//! Fuzzes the ctxo decoder (strict and lenient) and the encoders on what it accepts.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    envelope_fuzz_check(envelope::FormatId::Ctxo, data);
});

include!("check.rs");
