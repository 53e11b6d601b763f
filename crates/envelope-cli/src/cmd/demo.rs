//! The main job on the bundled examples: detect each, unwrap it, convert it to every
//! format, and check that decoding and encoding in its own format gives the same bytes.

use envelope::{DecodeOptions, EncodeOptions, FormatId};

use crate::cli::DemoArgs;
use crate::{CmdResult, Failure, input};

/// The bundled examples: one reference-produced document per format.
pub const EXAMPLES: [(&str, &str); 6] = [
    (
        "tool-envelope-v1.json",
        include_str!("../../../../examples/tool-envelope-v1.json"),
    ),
    ("ctxo.json", include_str!("../../../../examples/ctxo.json")),
    (
        "operations.json",
        include_str!("../../../../examples/operations.json"),
    ),
    (
        "protocol-v1.json",
        include_str!("../../../../examples/protocol-v1.json"),
    ),
    (
        "tool-result-envelope.json",
        include_str!("../../../../examples/tool-result-envelope.json"),
    ),
    ("mcp.json", include_str!("../../../../examples/mcp.json")),
];

pub fn run(args: &DemoArgs) -> CmdResult {
    let options = EncodeOptions {
        now: Some("2026-07-04T00:00:00Z".into()),
        ..EncodeOptions::default()
    };
    let mut out = String::new();
    let mut failures = 0;
    for (name, text) in EXAMPLES {
        let bytes = text.trim_end().as_bytes();
        let detection = envelope::detect(bytes)?;
        let env = envelope::decode(detection.format, bytes, &DecodeOptions::default())?;
        out.push_str(&format!(
            "{name}: {} ({})\n",
            detection.format, detection.reason
        ));
        let payload =
            envelope::json::to_string(&env.payload.to_json(), envelope::json::Dialect::Js);
        out.push_str(&format!("  payload: {}\n", shorten(&payload, 100)));
        for target in FormatId::ALL {
            let encoded = envelope::encode(target, &env, &options)?;
            let exact = target == detection.format
                && encoded.bytes.strip_suffix(b"\n").unwrap_or(&encoded.bytes) == bytes;
            let note = if target == detection.format {
                failures += usize::from(!exact);
                if exact {
                    "round trip byte-exact"
                } else {
                    "ROUND TRIP DIFFERS"
                }
            } else {
                ""
            };
            out.push_str(&format!(
                "  -> {:<21} {:>5} bytes, {} lost {}\n",
                target.as_str(),
                encoded.bytes.len(),
                encoded.losses.items.len(),
                note
            ));
            if args.verbose {
                out.push_str(&format!(
                    "     {}\n",
                    String::from_utf8_lossy(&encoded.bytes).trim_end()
                ));
                for loss in &encoded.losses.items {
                    out.push_str(&format!("     lost {}: {}\n", loss.field, loss.reason));
                }
            }
        }
    }
    shaping(&mut out, &options)?;
    input::write_stdout(out.as_bytes())?;
    if failures > 0 {
        return Err(Failure::invalid(
            "demo.round-trip",
            format!("{failures} example(s) did not round-trip byte-exact"),
        ));
    }
    Ok(())
}

/// The shaping pipeline on a generated tool result: redact, offload to the local store
/// (`$ENVELOPE_STORE`, else `.envelope/store`, named in the output), fit 4 KiB, and read the
/// artifact back.
fn shaping(out: &mut String, options: &EncodeOptions) -> Result<(), Failure> {
    use envelope::shape::{Offloaded, Pipeline};
    use envelope_store::{Digest, StoreSink};

    let rows: Vec<serde_json::Value> = (0..2000)
        .map(|i| serde_json::json!({"id": i, "path": format!("src/module_{}/file_{i}.rs", i % 40), "token": "ghp_0123456789abcdefghijABCDEFGHIJ012345"}))
        .collect();
    let env = envelope::Envelope::ok(serde_json::json!({"matches": rows}));
    let location = super::artifact::store_location(None);
    let store = super::artifact::open_store(None)?;
    let shaped = Pipeline::from_envelope(env, FormatId::Mcp)
        .redact(true)
        .store(&mut StoreSink::new(store.as_ref()))
        .limit(4096)
        .encode_options(options.clone())
        .run()?;
    out.push_str(&format!(
        "shaping a generated mcp result of 2000 records:\n  store: {}\n  redacted {} secrets\n",
        where_stored(&location),
        shaped.redactions.len()
    ));
    if let Offloaded::Stored { digest, size_bytes } = &shaped.offloaded {
        let stored = store.get(&digest.parse::<Digest>()?)?;
        out.push_str(&format!(
            "  offloaded {size_bytes} bytes to {location} as {digest}; read back and verified: {} bytes\n",
            stored.len()
        ));
    }
    out.push_str(&format!(
        "  fitted into {} of 4096 bytes: {}\n",
        shaped.bytes.len(),
        shorten(&String::from_utf8_lossy(&shaped.bytes), 160)
    ));
    Ok(())
}

/// Where the demo's store is and why there: `/abs/.envelope/store (the default; set
/// ENVELOPE_STORE to choose another)`.
fn where_stored(location: &str) -> String {
    let absolute = match location.starts_with("s3://") {
        true => location.to_string(),
        false => std::path::absolute(location)
            .map_or_else(|_| location.to_string(), |p| p.display().to_string()),
    };
    let why = match std::env::var_os("ENVELOPE_STORE") {
        Some(_) => "from ENVELOPE_STORE",
        None => "the default; set ENVELOPE_STORE to choose another",
    };
    format!("{absolute} ({why})")
}

fn shorten(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}
