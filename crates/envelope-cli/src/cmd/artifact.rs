//! `envelope artifact`: the content-addressed store from the command line.

use std::sync::Arc;

use envelope_mcp::managed::Managed;
use envelope_mcp::stats::Stats;
use envelope_store::{Digest, Store};
use serde_json::json;

use crate::cli::{ArtifactArgs, ArtifactCommand, StoreLimitsArgs};
use crate::{CmdResult, Failure, input};

/// The store location: `--store`, else `$ENVELOPE_STORE`, else `.envelope/store`.
pub fn store_location(flag: Option<&String>) -> String {
    flag.cloned()
        .or_else(|| std::env::var("ENVELOPE_STORE").ok())
        .unwrap_or_else(|| ".envelope/store".to_string())
}

/// Opens the store named by `--store` or the environment.
pub fn open_store(flag: Option<&String>) -> Result<Box<dyn Store>, Failure> {
    Ok(envelope_store::open(&store_location(flag))?)
}

/// The store of a long-running command (`proxy`, `serve`), checked at start as the other
/// commands find it at once: a folder store is created when missing and a file is written
/// in it (and removed), so a store that cannot be written exits 2 (`store.io`) before
/// anything is served, not at the first large result. (An S3 store's credentials are
/// checked by [`open_store`]; its endpoint is reached at the first write.)
pub fn open_checked_store(flag: Option<&String>) -> Result<Box<dyn Store>, Failure> {
    let store = open_store(flag)?;
    if !store_location(flag).starts_with("s3://") {
        // Dropped unfinished: the writer removes its temporary file.
        drop(store.writer()?);
    }
    Ok(store)
}

/// The store to use, and the managed one under it when a limit is given.
type ManagedStore = (Arc<dyn Store>, Option<Arc<Managed>>);

/// The store of `proxy` and `serve` ([`open_checked_store`]) with `--ttl`,
/// `--max-store-bytes` and `--max-results` kept while running (see
/// [`envelope_mcp::managed`]): the store to use, and the managed one when a limit is given.
/// Applies the limits once before anything is served. `--ttl 0` and `--max-results 0` are
/// refused: every result would be gone as soon as it is answered, and `envelope_read` could
/// never read it (`artifact gc` takes them: there they empty the store).
pub fn open_managed_store(
    flag: Option<&String>,
    limits: &StoreLimitsArgs,
    stats: &Arc<Stats>,
) -> Result<ManagedStore, Failure> {
    let store: Arc<dyn Store> = Arc::from(open_checked_store(flag)?);
    if !limits.any() {
        return Ok((store, None));
    }
    let zero = |flag: &str| {
        Failure::usage(
            "usage.bad-value",
            format!(
                "{flag} 0: every result would be removed as soon as it is answered, and \
                 envelope_read could not read it back; give a number above 0"
            ),
        )
    };
    if limits.ttl == Some(0) {
        return Err(zero("--ttl"));
    }
    if limits.max_results == Some(0) {
        return Err(zero("--max-results"));
    }
    let managed = Managed::start(store, limits.limits(), stats.clone())?;
    Ok((managed.clone(), Some(managed)))
}

/// A digest from the command line; malformed ones fail before the store is touched. The
/// link `envelope proxy` and `envelope serve` write, `envelope://artifact/sha256/<hex>`, is
/// taken too (`shape` writes the digest itself, `sha256:<hex>`): any link is read as given.
fn digest(text: &str) -> Result<Digest, Failure> {
    match text.strip_prefix(envelope_mcp::drill::URI_PREFIX) {
        Some(hex) => Ok(format!("sha256:{hex}")
            .parse::<Digest>()
            .map_err(|_| envelope_store::StoreError::InvalidDigest(text.to_string()))?),
        None => Ok(text.parse::<Digest>()?),
    }
}

pub fn run(args: &ArtifactArgs) -> CmdResult {
    // A malformed digest fails before the store is opened or touched.
    let digests: Vec<Digest> = match &args.command {
        ArtifactCommand::Get { digest: text } => vec![digest(text)?],
        ArtifactCommand::Verify { digests } => digests
            .iter()
            .map(|d| digest(d))
            .collect::<Result<_, _>>()?,
        _ => Vec::new(),
    };
    let store = open_store(args.store.as_ref())?;
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
        ArtifactCommand::Get { .. } => input::write_stdout(&store.get(&digests[0])?),
        ArtifactCommand::Verify { .. } => {
            let digests = if digests.is_empty() {
                store.list()?
            } else {
                digests
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
                n => Err(Failure::invalid(
                    "artifact.unverified",
                    format!(
                        "{n} artifact(s) failed verification ({})",
                        failed.join(", ")
                    ),
                )),
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
        ArtifactCommand::Gc { older_than, limits } => {
            let limits = limits
                .limits()
                .older_than(older_than.map(std::time::Duration::from_secs));
            let report = store.gc_with(&limits)?;
            let digests = |d: &[Digest]| d.iter().map(Digest::to_string).collect::<Vec<_>>();
            let removed = digests(&report.removed);
            // Entries gc went on without (a planted link, one it could not remove): in the
            // report, and one line each on stderr, with the full path (a local command).
            let skipped: Vec<_> = report
                .skipped
                .iter()
                .map(|s| json!({"path": s.path.display().to_string(), "code": s.code, "reason": s.reason}))
                .collect();
            for s in &report.skipped {
                eprintln!(
                    "warning[{}]: gc skipped {}: {}",
                    s.code,
                    s.path.display(),
                    s.reason
                );
            }
            let doc = json!({
                "temp_files": report.temp_files,
                "orphans": report.orphans,
                "removed": removed,
                "expired": digests(&report.expired),
                "evicted": digests(&report.evicted),
                "skipped": skipped,
            });
            input::write_line(doc.to_string().as_bytes())
        }
    }
}
