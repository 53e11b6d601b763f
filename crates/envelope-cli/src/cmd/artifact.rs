//! `envelope artifact`: the content-addressed store from the command line.

use std::path::PathBuf;

use envelope_store::{Digest, FileStore, Store};
use serde_json::json;

use crate::cli::{ArtifactArgs, ArtifactCommand};
use crate::{CmdResult, Failure, input};

/// The store folder: `--store`, else `$ENVELOPE_STORE`, else `.envelope/store`.
pub fn store_root(flag: Option<&PathBuf>) -> PathBuf {
    flag.cloned()
        .or_else(|| std::env::var_os("ENVELOPE_STORE").map(PathBuf::from))
        .unwrap_or_else(|| PathBuf::from(".envelope/store"))
}

/// A digest from the command line; malformed ones fail before the store is touched.
fn digest(text: &str) -> Result<Digest, Failure> {
    Ok(text.parse::<Digest>()?)
}

pub fn run(args: &ArtifactArgs) -> CmdResult {
    let store = FileStore::new(store_root(args.store.as_ref()));
    match &args.command {
        ArtifactCommand::Put {
            kind,
            tags,
            json,
            file,
        } => {
            let bytes = input::read(file)?;
            let sidecar = store.put(&bytes, kind, tags)?;
            if *json {
                input::write_stdout(&sidecar.to_json())
            } else {
                input::write_line(sidecar.digest.to_string().as_bytes())
            }
        }
        ArtifactCommand::Get { digest: text } => {
            let d = digest(text)?;
            input::write_stdout(&store.get(&d)?)
        }
        ArtifactCommand::Verify { digests } => {
            let digests = if digests.is_empty() {
                store.list()?
            } else {
                digests
                    .iter()
                    .map(|d| digest(d))
                    .collect::<Result<_, _>>()?
            };
            let mut out = String::new();
            let mut failed = Vec::new();
            for d in digests {
                match store.verify(&d) {
                    Ok(_) => out.push_str(&format!("ok {d}\n")),
                    Err(e) => {
                        out.push_str(&format!("FAILED {d}: {e}\n"));
                        failed.push(e.code());
                    }
                }
            }
            input::write_stdout(out.as_bytes())?;
            match failed.len() {
                0 => Ok(()),
                n => Err(Failure::Invalid(format!(
                    "{n} artifact(s) failed verification ({})",
                    failed.join(", ")
                ))),
            }
        }
        ArtifactCommand::Ls { json } => {
            let mut out = Vec::new();
            for d in store.list()? {
                let sidecar = store.sidecar(&d)?;
                if *json {
                    out.extend_from_slice(&sidecar.to_json());
                } else {
                    out.extend_from_slice(
                        format!(
                            "{d}\t{}\t{}\t{}\n",
                            sidecar.size_bytes, sidecar.kind, sidecar.created_at
                        )
                        .as_bytes(),
                    );
                }
            }
            input::write_stdout(&out)
        }
        ArtifactCommand::Gc { older_than } => {
            let report = store.gc(older_than.map(std::time::Duration::from_secs))?;
            let removed: Vec<String> = report.removed.iter().map(Digest::to_string).collect();
            let doc = json!({"temp_files": report.temp_files, "orphans": report.orphans, "removed": removed});
            input::write_line(doc.to_string().as_bytes())
        }
    }
}
