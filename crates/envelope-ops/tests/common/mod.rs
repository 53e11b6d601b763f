//! Helpers shared by the integration tests.
#![allow(dead_code)]

pub mod servers;

use envelope::FormatId;
use envelope::validate::{Options, Profile, validate_document};
use serde_json::Value;

/// Asserts that `env` is a valid operations envelope, as `envelope validate` judges it.
pub fn assert_valid_envelope(env: &Value) {
    let bytes = serde_json::to_vec(env).unwrap();
    let report = validate_document(
        &bytes,
        &Options::new(Some(FormatId::Operations), Profile::Spec),
    );
    assert!(
        report.is_valid(),
        "{env} is not a valid operations envelope: {:?}",
        report.findings
    );
}

/// A current-thread runtime with timers and process support.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// Whether process `pid` ends within 3 s. A zombie (killed, not yet reaped by tokio's
/// background reaper) counts as ended.
pub fn process_ended(pid: i32) -> bool {
    for _ in 0..300 {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let zombie = stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z'));
        if stat.is_empty() || zombie {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    false
}
