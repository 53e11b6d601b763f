//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{Map, Value};

pub mod shapes;
pub mod spelling;

/// Runs `node -e SCRIPT` with `input` on stdin and returns its stdout.
/// Node is part of the test environment (README, .ci/run): a missing node fails the test.
pub fn node(script: &str, input: &str) -> String {
    let mut child = Command::new("node")
        .arg("-e")
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("node (Node.js 20) must be installed to run the differential tests");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "node failed");
    String::from_utf8(out.stdout).unwrap()
}

/// A small deterministic generator (xorshift64*), so failures reproduce.
pub struct Gen(u64);

impl Gen {
    pub fn new(seed: u64) -> Self {
        Gen(seed.max(1))
    }

    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    pub fn string(&mut self) -> String {
        const PIECES: [&str; 22] = [
            "a", "Z", "0", " ", "\"", "\\", "/", "\n", "\r", "\t", "\u{8}", "\u{c}", "\u{1}",
            "\u{1f}", "\u{7f}", "\u{85}", "\u{2028}", "\u{2029}", "é", "€", "😀", "\u{feff}",
        ];
        (0..self.below(8))
            .map(|_| PIECES[self.below(PIECES.len() as u64) as usize])
            .collect()
    }

    pub fn key(&mut self) -> String {
        match self.below(6) {
            0 => self.below(20).to_string(),    // integer-like
            1 => format!("0{}", self.below(9)), // leading zero: not integer-like
            2 => "4294967295".to_string(),      // 2^32 - 1: not an array index
            3 => "4294967294".to_string(),      // the largest array index
            _ => self.string(),
        }
    }

    pub fn number(&mut self) -> Value {
        match self.below(6) {
            0 => Value::from(self.below(1 << 53) as i64 - (1 << 52)),
            1 => {
                let f = f64::from_bits(self.next());
                if f.is_finite() {
                    serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)
                } else {
                    Value::from(0.5)
                }
            }
            2 => Value::from((self.below(2_000_001) as f64 - 1_000_000.0) / 1000.0),
            3 => Value::from(10f64.powi(self.below(60) as i32 - 30)),
            4 => Value::from(1.0),
            _ => Value::from(self.below(100) as f64 * 0.1),
        }
    }

    pub fn value(&mut self, depth: u32) -> Value {
        let kind = if depth == 0 {
            self.below(4)
        } else {
            self.below(6)
        };
        match kind {
            0 => Value::Null,
            1 => Value::Bool(self.below(2) == 0),
            2 => self.number(),
            3 => Value::String(self.string()),
            4 => Value::Array((0..self.below(4)).map(|_| self.value(depth - 1)).collect()),
            _ => {
                let mut map = Map::new();
                for _ in 0..self.below(5) {
                    map.insert(self.key(), self.value(depth - 1));
                }
                Value::Object(map)
            }
        }
    }
}

/// The reference's protocol-v1 golden files that are envelopes (every `*.json` under
/// `../shared/fixtures/protocol-v1` but `envelopes/post_review_event.json`, an event
/// record), sorted.
pub fn protocol_v1_fixtures() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/fixtures/protocol-v1");
    let mut files = Vec::new();
    let mut dirs = vec![root.clone()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| {
            panic!(
                "{}: {e} (../shared must sit beside the checkout)",
                dir.display()
            )
        }) {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "json")
                && !path.ends_with("envelopes/post_review_event.json")
            {
                files.push(path);
            }
        }
    }
    files.sort();
    assert!(
        files.len() >= 38,
        "expected the fixture set, found {}",
        files.len()
    );
    files
}

/// An artifact sink in memory, under made-up digests of the digest pattern (the put's index
/// and the bytes' length), for tests that offload without a store.
#[derive(Default)]
pub struct Memory(pub std::collections::HashMap<String, Vec<u8>>);

impl envelope::shape::ArtifactSink for Memory {
    fn put(
        &mut self,
        bytes: &[u8],
        _kind: &str,
    ) -> Result<envelope::model::ArtifactRef, envelope::shape::SinkError> {
        let digest = format!("sha256:{:032x}{:032x}", self.0.len(), bytes.len());
        self.0.insert(digest.clone(), bytes.to_vec());
        Ok(envelope::model::ArtifactRef { digest })
    }
}

/// An artifact sink in memory that names each artifact by its content (FNV-1a, as a
/// made-up digest) and keeps its kind: two runs that store the same bytes hold the same.
#[derive(Default)]
pub struct ByContent(pub std::collections::BTreeMap<String, (Vec<u8>, String)>);

impl envelope::shape::ArtifactSink for ByContent {
    fn put(
        &mut self,
        bytes: &[u8],
        kind: &str,
    ) -> Result<envelope::model::ArtifactRef, envelope::shape::SinkError> {
        let mut hash = 0xcbf2_9ce4_8422_2325u64;
        for &b in bytes {
            hash = (hash ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
        }
        let digest = format!("sha256:{hash:064x}");
        self.0
            .insert(digest.clone(), (bytes.to_vec(), kind.to_string()));
        Ok(envelope::model::ArtifactRef { digest })
    }
}

/// Encode options with a fixed time, so outputs compare.
pub fn encode_options() -> envelope::EncodeOptions {
    envelope::EncodeOptions {
        now: Some("2026-07-04T00:00:00Z".into()),
        ..envelope::EncodeOptions::default()
    }
}

/// `n` small records (`id`, `name`, `path`) as a compact JSON array: a large payload's text.
pub fn records_text(n: usize) -> String {
    let rows: Vec<String> = (0..n)
        .map(|i| {
            format!(
                r#"{{"id":{i},"name":"row {i}","path":"src/m_{}/f_{i}.rs"}}"#,
                i % 97
            )
        })
        .collect();
    format!("[{}]", rows.join(","))
}
