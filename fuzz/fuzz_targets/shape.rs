//! The whole shaping pipeline on arbitrary bytes: redaction on and off, offload to an
//! in-memory sink, limits from none to tiny, every output format. A panic, an output over
//! its limit, or an output its own decoder cannot read is a crash.
#![no_main]

use std::collections::HashMap;

use envelope::shape::Pipeline;
use envelope::model::ArtifactRef;
use envelope::error::SinkError;
use envelope::shape::offload::ArtifactSink;
use envelope::{DecodeOptions, EncodeOptions, FormatId, decode};
use libfuzzer_sys::fuzz_target;

/// Keeps what the pipeline offloads, under a content-derived name.
#[derive(Default)]
struct Memory(HashMap<String, Vec<u8>>);

impl ArtifactSink for Memory {
    fn put(&mut self, bytes: &[u8], _kind: &str) -> Result<ArtifactRef, SinkError> {
        let digest = format!("sha256:{:064x}", self.0.len());
        self.0.insert(digest.clone(), bytes.to_vec());
        Ok(ArtifactRef { digest })
    }
}

fuzz_target!(|data: &[u8]| {
    let options = EncodeOptions {
        now: Some("2026-07-04T00:00:00Z".into()),
        ..EncodeOptions::default()
    };
    for target in FormatId::ALL {
        for limit in [None, Some(0), Some(120), Some(600)] {
            for redact in [false, true] {
                let mut memory = Memory::default();
                let shaped = Pipeline::new(data)
                    .output_format(target)
                    .limit(limit)
                    .redact(redact)
                    .store(&mut memory)
                    .inline_threshold(64)
                    .encode_options(options.clone())
                    .run();
                let Ok(shaped) = shaped else { continue };
                if let Some(limit) = limit {
                    assert!(
                        shaped.bytes.len() <= limit,
                        "{target}: {} bytes over the limit {limit}",
                        shaped.bytes.len()
                    );
                }
                if let Err(e) = decode(target, &shaped.bytes, &DecodeOptions::default()) {
                    panic!(
                        "{target} (limit {limit:?}, redact {redact}) cannot read its own output: {e}\n{}",
                        String::from_utf8_lossy(&shaped.bytes)
                    );
                }
            }
        }
    }
});
