//! Fuzzes the tool_envelope_v1 decoder (strict and lenient) and the encoders on what it accepts.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    envelope_fuzz_check(envelope::FormatId::ToolEnvelopeV1, data);
});

include!("check.rs");
