use std::io::Read as _;

use envelope::detect::Detector;

use crate::cli::DetectArgs;
use crate::{CmdResult, Failure, input};

pub fn run(args: &DetectArgs) -> CmdResult {
    let detection = detect(args)?;
    if args.json {
        let doc =
            serde_json::json!({"format": detection.format.as_str(), "reason": detection.reason});
        input::write_line(doc.to_string().as_bytes())
    } else {
        input::write_line(detection.format.as_str().as_bytes())
    }
}

/// Feeds the input to a [`Detector`] piece by piece: memory stays bounded whatever the
/// size, and reading stops once detection has what it needs.
fn detect(args: &DetectArgs) -> Result<envelope::Detection, Failure> {
    let mut reader = input::open(&args.file)?;
    let mut detector = Detector::new();
    let mut piece = vec![0; 1 << 16];
    loop {
        let n = match reader.read(&mut piece) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(input::read_error(&args.file, &e)),
        };
        if !detector.feed(&piece[..n])? {
            break;
        }
    }
    Ok(detector.finish()?)
}
