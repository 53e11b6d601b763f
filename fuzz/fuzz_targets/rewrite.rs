//! `json::rewrite` against the whole path on arbitrary bytes: in each of the four dialects,
//! rewriting gives the bytes of writing serde_json's value, or serde_json's error. A panic or
//! a difference is a crash.
#![no_main]

use envelope::json::Dialect;
use envelope::json::rewrite::rewrite;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let value = serde_json::from_slice::<serde_json::Value>(data);
    for dialect in [Dialect::Js, Dialect::Go, Dialect::Newtonsoft, Dialect::Jcs] {
        let mut out = Vec::new();
        let rewritten = rewrite(data, dialect, &mut out).map(|()| out);
        match (&value, rewritten) {
            (Ok(value), Ok(out)) => assert_eq!(out, envelope::json::to_vec(value, dialect)),
            (Err(want), Err(got)) => assert_eq!(got.to_string(), want.to_string()),
            (Ok(_), Err(e)) => panic!("rewrite refused what serde_json reads: {e}"),
            (Err(e), Ok(_)) => panic!("rewrite read what serde_json refuses: {e}"),
        }
    }
});
