use crate::cli::DetectArgs;
use crate::{CmdResult, input};

pub fn run(args: &DetectArgs) -> CmdResult {
    let bytes = input::read(&args.file)?;
    let detection = envelope::detect(&bytes)?;
    if args.json {
        let doc =
            serde_json::json!({"format": detection.format.as_str(), "reason": detection.reason});
        input::write_line(doc.to_string().as_bytes())
    } else {
        input::write_line(detection.format.as_str().as_bytes())
    }
}
