//! The reference implementations, run under Node in the same bench run as the library and
//! timed inside Node (process start excluded, measured apart): Ctxo's truncation (the oracle
//! of tests/ctxo.rs, a `JSON.stringify` of the whole candidate per probe, as the shipped
//! code does) and ToolEnvelope V1's encode and decode (`JSON` and `Buffer`, as in
//! seeds/tool-envelope-v1.md).

use std::io::Write as _;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// The timing driver; `wrap` (Ctxo's truncation) is prepended from the tests' oracle.
const DRIVER_JS: &str = r#"
const fs = require('fs');
const PREFIX = '__ENVELOPE_V1__:';
// seeds/tool-envelope-v1.md, parseEnvelopeBlock, verbatim but for the types.
function parseEnvelopeBlock(text) {
  if (!text.startsWith(PREFIX)) { throw new Error('not an envelope block'); }
  const json = Buffer.from(text.slice(PREFIX.length), 'base64').toString('utf8');
  const parsed = JSON.parse(json);
  return { payload: parsed.payload, meta: parsed.meta };
}
// A tool result: block 0 the summary, block 1 the envelope block.
function teEncode(summary, payload, meta) {
  const block = PREFIX + Buffer.from(JSON.stringify({ payload, meta }), 'utf8').toString('base64');
  return JSON.stringify({ content: [{ type: 'text', text: summary }, { type: 'text', text: block }] });
}
function teDecode(text) {
  const result = JSON.parse(text);
  return { summary: result.content[0].text, ...parseEnvelopeBlock(result.content[1].text) };
}
// Median milliseconds of `f`, after warm-up runs (the JIT's), for up to `budget` ms.
function median(f, budget) {
  for (let i = 0; i < 3; i++) f();
  const samples = [];
  const start = process.hrtime.bigint();
  while (samples.length < 5 || (Number(process.hrtime.bigint() - start) / 1e6 < budget && samples.length < 200)) {
    const t = process.hrtime.bigint();
    f();
    samples.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  samples.sort((a, b) => a - b);
  return samples[samples.length >> 1];
}
const input = JSON.parse(fs.readFileSync(0, 'utf8'));
const read = (path) => fs.readFileSync(path, 'utf8');
const payload = JSON.parse(read(input.payload));
const document = read(input.document);
const te = read(input.te);
const decoded = teDecode(te);
let sink;
const out = {
  ctxo_value_ms: median(() => { sink = wrap(payload, input.limit, null); }, input.budget),
  ctxo_text_ms: median(() => { sink = wrap(JSON.parse(document).data, input.limit, null); }, input.budget),
  te_encode_ms: median(() => { sink = teEncode(decoded.summary, decoded.payload, decoded.meta); }, input.budget),
  te_decode_ms: median(() => { sink = teDecode(te); }, input.budget),
  // The same bytes as the library's, or the comparison would be unfair.
  ctxo_same: wrap(payload, input.limit, null) === read(input.ctxo_ours),
  te_same: teEncode(decoded.summary, decoded.payload, decoded.meta) === te,
  node: process.version,
};
process.stdout.write(JSON.stringify(out));
"#;

/// What Node measured.
pub struct NodeTimes {
    /// `wrap(payload, limit)` on the parsed payload.
    pub ctxo_value: Duration,
    /// `JSON.parse` of the protocol-v1 document, then `wrap` of its `data`.
    pub ctxo_text: Duration,
    /// ToolEnvelope V1 encode of the decoded result (summary, payload, meta).
    pub te_encode: Duration,
    /// ToolEnvelope V1 decode of the result text.
    pub te_decode: Duration,
    /// Node's truncation wrote the library's compat bytes.
    pub ctxo_same: bool,
    /// Node's encode wrote the library's tool-envelope-v1 bytes.
    pub te_same: bool,
    /// `process.version`.
    pub version: String,
    /// Median wall time of starting `node -e ""` and waiting for it (not in the times above).
    pub process_start: Duration,
}

/// The inputs, as the library sees them.
pub struct Inputs<'a> {
    /// The payload alone (compact JSON).
    pub payload: &'a [u8],
    /// The payload inside a protocol-v1 document (the CLI path's input).
    pub document: &'a [u8],
    /// The ctxo limit.
    pub limit: usize,
    /// The library's ctxo compat output for `payload` at `limit`.
    pub ctxo_ours: &'a [u8],
    /// The library's tool-envelope-v1 encoding of the payload.
    pub te: &'a [u8],
}

/// Runs the references under Node on `inputs`, `budget` per measurement. Node is required
/// (as for the differential tests): without it the bench stops here, saying so.
pub fn measure(inputs: &Inputs, budget: Duration) -> NodeTimes {
    let dir = std::env::temp_dir().join(format!("envelope-bench-node-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = |name: &str, bytes: &[u8]| -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, bytes).unwrap();
        path
    };
    let request = serde_json::json!({
        "payload": file("payload.json", inputs.payload),
        "document": file("document.json", inputs.document),
        "limit": inputs.limit,
        "ctxo_ours": file("ctxo.json", inputs.ctxo_ours),
        "te": file("te.json", inputs.te),
        "budget": budget.as_millis() as u64,
    });
    let script = format!(
        "{}{DRIVER_JS}",
        include_str!("../../tests/common/ctxo_reference.js")
    );
    let mut child = Command::new("node")
        .arg("-e")
        .arg(&script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("node (Node.js 20) must be installed: the references run under it");
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(request.to_string().as_bytes()).unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "the Node reference failed");
    let _ = std::fs::remove_dir_all(&dir);
    let got: Value = serde_json::from_slice(&out.stdout).unwrap();
    let ms = |key: &str| Duration::from_secs_f64(got[key].as_f64().unwrap() / 1e3);
    NodeTimes {
        ctxo_value: ms("ctxo_value_ms"),
        ctxo_text: ms("ctxo_text_ms"),
        te_encode: ms("te_encode_ms"),
        te_decode: ms("te_decode_ms"),
        ctxo_same: got["ctxo_same"] == true,
        te_same: got["te_same"] == true,
        version: got["node"].as_str().unwrap_or("?").to_string(),
        process_start: process_start(),
    }
}

/// Median of five starts of `node -e ""`, to the end of the process.
fn process_start() -> Duration {
    let mut samples: Vec<Duration> = (0..5)
        .map(|_| {
            let t = Instant::now();
            let status = Command::new("node").args(["-e", ""]).status().unwrap();
            assert!(status.success());
            t.elapsed()
        })
        .collect();
    samples.sort();
    samples[2]
}
