//! The catalog of stored results: what `envelope_list` lists and `envelope_search` searches.
//!
//! One SQLite database per proxy (or serve) process, beside its store: `ROOT/catalog.sqlite3`
//! for a folder store, in memory for an S3 store (see [`Catalog::for_store`]). SQLite's FTS5
//! gives BM25 ranking built in, in one file, with transactions, from one small C dependency
//! compiled with the crate (rusqlite's `bundled` build, which enables FTS5).
//!
//! Tables:
//!
//! - `docs`: one row per stored result (by digest): size, kind, summary, and the range of
//!   its rows in `chunks`;
//! - `entries`: who stored it (the owner: the `Scoped` identity, `''` for none), with which
//!   tool, the digest of its arguments (never the arguments), when;
//! - `chunks`: the FTS5 table of its pieces ([`chunks`]), each with the pointer and offset
//!   `envelope_read` reads on from.
//!
//! A result is indexed when it is stored, by a thread of the catalog's own ([`Catalog::index`]
//! returns at once): the answer to the call that stored it is not held up. A list or a search
//! first waits for what was queued before it ([`Catalog::flush`]), so a caller finds what
//! it just stored.
//!
//! Isolation: an owner's list and search see only its own entries (an owner of `None` sees
//! all of them, as [`envelope_store::Scoped`] does); a hit or an entry whose artifact the
//! caller's store no longer holds (evicted by gc) is left out and forgotten.

pub mod chunks;
pub mod query;
pub mod tools;

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use envelope_store::{Digest, Store};
use rusqlite::{Connection, OptionalExtension, params};
use serde_json::Value;

use self::query::Terms;
use crate::held::Held;

/// The catalog's file name in a folder store's root.
pub const FILE_NAME: &str = "catalog.sqlite3";

/// How long a list or search waits for the indexing queued before it.
const FLUSH_WAIT: Duration = Duration::from_secs(30);

/// The most matching lines a search ranks by BM25 (see [`Catalog::search`]). FTS5 computes
/// BM25 for every matching row before it takes the best (about 1 µs a row): a word on a
/// third of 1.2 M lines took 300 ms. Over this many matches the newest this many are
/// ranked, and the answer says so ([`Ranked`]). Measured in docs/benchmarks.md.
pub const RANK_CAP: usize = 5_000;

/// The most matches a search counts (a pass over their rowids, no BM25): above it the
/// answer says "more than".
pub const COUNT_CAP: usize = 1_000_000;

/// A result to index: what the hook in the store path knows.
pub struct Job {
    /// The store as the caller sees it (the result is read back from it).
    pub store: Arc<dyn Store>,
    /// The stored result.
    pub digest: Digest,
    /// The caller's identity (`None`: no tokens).
    pub owner: Option<String>,
    /// The tool whose result it is.
    pub tool: String,
    /// The call's `arguments` as the client sent them (digested on the catalog's thread).
    pub arguments: Option<Vec<u8>>,
    /// The stored bytes, when the caller holds them (the proxy, right after storing them):
    /// indexed from there instead of read back from the store, which would hold the result
    /// a second time. Kept for at most [`HELD_JOBS`] queued jobs at once; a job beyond
    /// lets them go and reads the store. Trusted to be the bytes stored under the job's
    /// digest (not hashed again: that is what holding them saves); other bytes would be
    /// indexed under that digest.
    pub held: Option<Arc<Held>>,
}

/// The most queued jobs that keep their result's bytes ([`Job::held`]): a burst of large
/// results waits for the catalog's thread with their digests only, not their bytes.
pub const HELD_JOBS: usize = 1;

enum Work {
    Index(Job),
    Forget { digest: String, owner: String },
}

/// Why the catalog cannot be opened or answer: SQLite's error or the file's, as text
/// (naming the file where there is one).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct CatalogError(String);

impl From<String> for CatalogError {
    fn from(reason: String) -> Self {
        CatalogError(reason)
    }
}

/// The catalog; cheap to share (`Arc`).
pub struct Catalog {
    inner: Arc<Inner>,
    /// [`RANK_CAP`] unless [`Catalog::set_rank_cap`] said otherwise.
    rank_cap: AtomicUsize,
    /// [`COUNT_CAP`] unless [`Catalog::set_count_cap`] said otherwise.
    count_cap: AtomicUsize,
    jobs: Mutex<mpsc::Sender<(u64, Work)>>,
    queued: AtomicU64,
    /// Where it is, for messages: a path, or `memory`.
    location: String,
}

struct Inner {
    conn: Mutex<Connection>,
    /// Queued jobs that hold their result's bytes (at most [`HELD_JOBS`]).
    holding: AtomicUsize,
    /// The sequence number of the last job done, and its signal.
    done: Mutex<u64>,
    signal: Condvar,
}

impl std::fmt::Debug for Catalog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Catalog")
            .field("location", &self.location)
            .finish_non_exhaustive()
    }
}

/// One hit of a search.
#[derive(Clone, Debug, PartialEq)]
pub struct Hit {
    /// The stored result's digest.
    pub digest: String,
    /// Where `envelope_read` reads on.
    pub pointer: String,
    /// The character or item offset.
    pub offset: usize,
    /// What the offset counts.
    pub unit: chunks::Unit,
    /// The matching chunk, with each match between `\u{1}` and `\u{2}`.
    pub marked: String,
    /// The chunks before and after (lines of the same text), for context.
    pub before: Option<String>,
    /// See `before`.
    pub after: Option<String>,
}

/// What a search found.
#[derive(Clone, Debug, PartialEq)]
pub struct Found {
    /// Best first.
    pub hits: Vec<Hit>,
    /// `all` when every term matched, `any` when no chunk had them all and any one was
    /// taken instead.
    pub matched: &'static str,
    /// `Some` when more lines matched than are ranked: the hits are the best of a part.
    pub ranked: Option<Ranked>,
}

/// A search that matched more lines than it ranks ([`RANK_CAP`]): its hits are the best
/// by BM25 among the newest `ranked` matching lines (by the order they were stored), with
/// BM25's word weights of the whole catalog.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ranked {
    /// How many lines were ranked (the newest matching ones).
    pub ranked: usize,
    /// How many lines matched, counted up to [`COUNT_CAP`].
    pub matching: usize,
    /// More than `matching` matched (the count stopped at [`COUNT_CAP`]).
    pub more_than: bool,
}

/// One entry of a list.
#[derive(Clone, Debug, PartialEq)]
pub struct Listed {
    /// The stored result's digest.
    pub digest: String,
    /// The tool.
    pub tool: String,
    /// `sha256:<hex>` of the canonical arguments.
    pub arguments_digest: Option<String>,
    /// When it was stored (RFC 3339, UTC).
    pub time: String,
    /// Its size in bytes.
    pub size: u64,
    /// `text`, `records` or `json`.
    pub kind: String,
    /// One line.
    pub summary: String,
}

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS docs(
    id INTEGER PRIMARY KEY,
    digest TEXT NOT NULL UNIQUE,
    size INTEGER NOT NULL,
    kind TEXT NOT NULL,
    summary TEXT NOT NULL,
    first_chunk INTEGER,
    last_chunk INTEGER
);
CREATE TABLE IF NOT EXISTS entries(
    id INTEGER PRIMARY KEY,
    doc INTEGER NOT NULL REFERENCES docs(id),
    owner TEXT NOT NULL,
    tool TEXT NOT NULL,
    args_digest TEXT,
    time TEXT NOT NULL,
    UNIQUE(doc, owner)
);
CREATE INDEX IF NOT EXISTS entries_by_owner ON entries(owner, time);
CREATE VIRTUAL TABLE IF NOT EXISTS chunks USING fts5(
    text, doc UNINDEXED, pointer UNINDEXED, off UNINDEXED, unit UNINDEXED,
    tokenize = 'unicode61 remove_diacritics 2'
);
";

impl Catalog {
    /// The catalog of the store at `location` (as `--store` names it): `ROOT/catalog.sqlite3`
    /// for a folder, in memory for `s3://` (an S3 store has no local folder; its catalog
    /// lasts as long as the process).
    ///
    /// # Errors
    ///
    /// The file cannot be created or opened, or is not a catalog: the reason, naming it.
    pub fn for_store(location: &str) -> Result<Catalog, CatalogError> {
        if location.starts_with("s3://") {
            return Catalog::in_memory();
        }
        let root = PathBuf::from(location.strip_prefix("file://").unwrap_or(location));
        Catalog::open(&root.join(FILE_NAME))
    }

    /// A catalog in the file at `path` (created when missing).
    ///
    /// # Errors
    ///
    /// The reason it cannot be opened, naming the file.
    pub fn open(path: &Path) -> Result<Catalog, CatalogError> {
        let fail =
            |e: rusqlite::Error| format!("the catalog {} cannot be opened: {e}", path.display());
        let conn = Connection::open(path).map_err(fail)?;
        // WAL: a reader never waits for the writer; NORMAL: durable enough for an index
        // that can be rebuilt (a crash loses at most the last results' entries).
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(fail)?;
        conn.pragma_update(None, "synchronous", "NORMAL")
            .map_err(fail)?;
        conn.busy_timeout(Duration::from_secs(5)).map_err(fail)?;
        conn.execute_batch(SCHEMA).map_err(fail)?;
        Ok(Catalog::start(conn, path.display().to_string())?)
    }

    /// A catalog in memory.
    ///
    /// # Errors
    ///
    /// SQLite cannot start (out of memory).
    pub fn in_memory() -> Result<Catalog, CatalogError> {
        let conn = Connection::open_in_memory().map_err(|e| e.to_string())?;
        conn.execute_batch(SCHEMA).map_err(|e| e.to_string())?;
        Ok(Catalog::start(conn, "memory".to_string())?)
    }

    fn start(conn: Connection, location: String) -> Result<Catalog, String> {
        let inner = Arc::new(Inner {
            conn: Mutex::new(conn),
            holding: AtomicUsize::new(0),
            done: Mutex::new(0),
            signal: Condvar::new(),
        });
        let (tx, rx) = mpsc::channel::<(u64, Work)>();
        let worker = inner.clone();
        std::thread::Builder::new()
            .name("envelope-catalog".into())
            .spawn(move || {
                // Ends when the catalog (its sender) is dropped.
                for (seq, work) in rx {
                    worker.work(work);
                    *worker.done.lock().unwrap_or_else(|e| e.into_inner()) = seq;
                    worker.signal.notify_all();
                }
            })
            .map_err(|e| format!("the catalog's thread cannot start: {e}"))?;
        Ok(Catalog {
            inner,
            rank_cap: AtomicUsize::new(RANK_CAP),
            count_cap: AtomicUsize::new(COUNT_CAP),
            jobs: Mutex::new(tx),
            queued: AtomicU64::new(0),
            location,
        })
    }

    /// Where the catalog is: its file, or `memory`.
    pub fn location(&self) -> &str {
        &self.location
    }

    /// Queues a stored result for indexing; returns at once.
    pub fn index(&self, mut job: Job) {
        let holding = &self.inner.holding;
        if job.held.is_some() && holding.fetch_add(1, Ordering::SeqCst) >= HELD_JOBS {
            holding.fetch_sub(1, Ordering::SeqCst);
            job.held = None;
        }
        self.send(Work::Index(job));
    }

    fn send(&self, work: Work) {
        let jobs = self.jobs.lock().unwrap_or_else(|e| e.into_inner());
        // Numbered under the lock: jobs reach the thread in the order of their numbers.
        let seq = self.queued.fetch_add(1, Ordering::SeqCst) + 1;
        let _ = jobs.send((seq, work));
    }

    /// Waits (up to 30 s) until everything queued so far is indexed.
    pub fn flush(&self) {
        let target = self.queued.load(Ordering::SeqCst);
        let done = self.inner.done.lock().unwrap_or_else(|e| e.into_inner());
        let _ = self
            .inner
            .signal
            .wait_timeout_while(done, FLUSH_WAIT, |done| *done < target);
    }

    /// The best `limit` hits of `terms` among `owner`'s results (all of them for `None`), in
    /// one result when `only` names it. Every term must match; when no chunk has them all,
    /// any one may ([`Found::matched`]).
    ///
    /// # Errors
    ///
    /// SQLite's error, as text.
    pub fn search(
        &self,
        owner: Option<&str>,
        terms: &Terms,
        only: Option<&Digest>,
        limit: usize,
    ) -> Result<Found, CatalogError> {
        self.flush();
        let conn = self.inner.lock();
        let only = only.map(Digest::to_string);
        let rank = self.rank_cap.load(Ordering::Relaxed).max(1);
        // Never fewer counted than ranked.
        let count = self.count_cap.load(Ordering::Relaxed).max(rank);
        let caps = Caps { rank, count };
        let scope = Scope::of(&conn, owner, only.as_deref())?;
        let (mut hits, mut ranked) = search_with(
            &conn,
            &terms.all(),
            owner,
            only.as_deref(),
            &scope,
            limit,
            caps,
        )?;
        let mut matched = "all";
        if hits.is_empty() && terms.len() > 1 {
            (hits, ranked) = search_with(
                &conn,
                &terms.any(),
                owner,
                only.as_deref(),
                &scope,
                limit,
                caps,
            )?;
            matched = "any";
        }
        Ok(Found {
            hits,
            matched,
            ranked,
        })
    }

    /// Ranks at most `cap` matching lines per search from now on ([`RANK_CAP`] by default;
    /// `usize::MAX` ranks them all, as before the cap: for benchmarks and tests).
    pub fn set_rank_cap(&self, cap: usize) {
        self.rank_cap.store(cap, Ordering::Relaxed);
    }

    /// Counts at most `cap` matches per search from now on ([`COUNT_CAP`] by default): for
    /// tests.
    pub fn set_count_cap(&self, cap: usize) {
        self.count_cap.store(cap, Ordering::Relaxed);
    }

    /// `owner`'s results, newest first: `limit` of them from `offset`, and how many there
    /// are in all.
    ///
    /// # Errors
    ///
    /// SQLite's error, as text.
    pub fn list(
        &self,
        owner: Option<&str>,
        limit: usize,
        offset: usize,
    ) -> Result<(Vec<Listed>, usize), CatalogError> {
        self.flush();
        let conn = self.inner.lock();
        let text = |e: rusqlite::Error| e.to_string();
        let mut statement = conn
            .prepare_cached(
                "SELECT d.digest, e.tool, e.args_digest, e.time, d.size, d.kind, d.summary
                 FROM entries e JOIN docs d ON d.id = e.doc
                 WHERE ?1 IS NULL OR e.owner = ?1
                 ORDER BY e.time DESC, e.id DESC LIMIT ?2 OFFSET ?3",
            )
            .map_err(text)?;
        let rows = statement
            .query_map(params![owner, limit as i64, offset as i64], |row| {
                Ok(Listed {
                    digest: row.get(0)?,
                    tool: row.get(1)?,
                    arguments_digest: row.get(2)?,
                    time: row.get(3)?,
                    size: row.get::<_, i64>(4)? as u64,
                    kind: row.get(5)?,
                    summary: row.get(6)?,
                })
            })
            .map_err(text)?
            .collect::<Result<Vec<_>, _>>()
            .map_err(text)?;
        let total: i64 = conn
            .query_row(
                "SELECT count(*) FROM entries WHERE ?1 IS NULL OR owner = ?1",
                params![owner],
                |row| row.get(0),
            )
            .map_err(text)?;
        Ok((rows, total as usize))
    }

    /// Forgets `owner`'s entry for `digest` (its artifact is gone from the store); the
    /// result's text too once no owner has it. Queued, like indexing.
    pub fn forget(&self, digest: &str, owner: Option<&str>) {
        self.send(Work::Forget {
            digest: digest.to_string(),
            owner: owner.unwrap_or_default().to_string(),
        });
    }
}

impl Inner {
    fn lock(&self) -> std::sync::MutexGuard<'_, Connection> {
        self.conn.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn work(&self, work: Work) {
        let (event, digest, result) = match work {
            Work::Index(job) => {
                let digest = job.digest.to_string();
                let held = job.held.is_some();
                let indexed = self.index(job);
                // Its bytes are let go (the job is done): another job may hold some.
                if held {
                    self.holding.fetch_sub(1, Ordering::SeqCst);
                }
                ("catalog.index_failed", digest, indexed)
            }
            Work::Forget { digest, owner } => {
                let result = forget(&mut self.lock(), &digest, &owner).map_err(|e| e.to_string());
                ("catalog.forget_failed", digest, result)
            }
        };
        if let Err(error) = result {
            crate::stats::log::warn(event, &[("digest", digest.into()), ("error", error.into())]);
        }
    }

    /// Indexes one stored result (its text once, whoever stores it again) and records the
    /// owner's entry.
    fn index(&self, job: Job) -> Result<(), String> {
        let digest = job.digest.to_string();
        let arguments = job.arguments.as_deref().and_then(arguments_digest);
        let time = envelope::time::now_rfc3339(true);
        let owner = job.owner.unwrap_or_default();
        let known: Option<i64> = self
            .lock()
            .query_row("SELECT id FROM docs WHERE digest = ?1", [&digest], |r| {
                r.get(0)
            })
            .optional()
            .map_err(|e| e.to_string())?;
        // Read outside the lock: a search meanwhile is not held up. The result is read
        // with the pull reader (the bytes the caller holds, or its bytes verified from the
        // store; its texts read in pieces, its items parsed one at a time), and its chunks
        // made and inserted one at a time.
        let bytes: Option<Cow<'_, [u8]>> = match (known, &job.held) {
            (Some(_), _) => None,
            (None, Some(held)) => Some(Cow::Borrowed(held.bytes())),
            (None, None) => Some(Cow::Owned(
                job.store.get(&job.digest).map_err(|e| e.to_string())?,
            )),
        };
        let split = match &bytes {
            Some(bytes) => Some(chunks::split(bytes).map_err(|e| format!("not JSON: {e}"))?),
            None => None,
        };
        let mut conn = self.lock();
        let tx = conn.transaction().map_err(|e| e.to_string())?;
        let doc = match (known, &split, &bytes) {
            (Some(doc), _, _) => doc,
            (None, Some(split), Some(bytes)) => insert_doc(&tx, &digest, bytes.len(), split)?,
            _ => unreachable!("read when unknown"),
        };
        tx.execute(
            "INSERT INTO entries(doc, owner, tool, args_digest, time) VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT(doc, owner) DO UPDATE SET tool = ?3, args_digest = ?4, time = ?5",
            params![doc, owner, job.tool, arguments, time],
        )
        .map_err(|e| e.to_string())?;
        tx.commit().map_err(|e| e.to_string())
    }
}

/// Inserts a result's row and its chunks; returns its id.
fn insert_doc(
    tx: &rusqlite::Transaction<'_>,
    digest: &str,
    size: usize,
    split: &chunks::Split<'_>,
) -> Result<i64, String> {
    let text = |e: rusqlite::Error| e.to_string();
    tx.execute(
        "INSERT INTO docs(digest, size, kind, summary) VALUES (?1, ?2, ?3, ?4)",
        params![digest, size as i64, split.kind.as_str(), split.summary],
    )
    .map_err(text)?;
    let doc = tx.last_insert_rowid();
    let mut insert = tx
        .prepare_cached(
            "INSERT INTO chunks(text, doc, pointer, off, unit) VALUES (?1, ?2, ?3, ?4, ?5)",
        )
        .map_err(text)?;
    let mut rows = (i64::MAX, i64::MIN);
    let mut insert_one = |chunk: chunks::Chunk<'_>| -> Result<(), String> {
        insert
            .execute(params![
                chunk.text,
                doc,
                chunk.pointer,
                chunk.offset as i64,
                chunk.unit.code()
            ])
            .map_err(text)?;
        let row = tx.last_insert_rowid();
        rows = (rows.0.min(row), rows.1.max(row));
        Ok(())
    };
    split.each_chunk(&mut insert_one)?;
    if rows.0 <= rows.1 {
        tx.execute(
            "UPDATE docs SET first_chunk = ?1, last_chunk = ?2 WHERE id = ?3",
            params![rows.0, rows.1, doc],
        )
        .map_err(text)?;
    }
    Ok(doc)
}

/// Removes `owner`'s entry for `digest`, and the result with its chunks when no entry is
/// left.
fn forget(conn: &mut Connection, digest: &str, owner: &str) -> rusqlite::Result<()> {
    let tx = conn.transaction()?;
    let doc: Option<(i64, Option<i64>, Option<i64>)> = tx
        .query_row(
            "SELECT id, first_chunk, last_chunk FROM docs WHERE digest = ?1",
            [digest],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .optional()?;
    let Some((doc, first, last)) = doc else {
        return Ok(());
    };
    tx.execute(
        "DELETE FROM entries WHERE doc = ?1 AND owner = ?2",
        params![doc, owner],
    )?;
    let left: i64 = tx.query_row("SELECT count(*) FROM entries WHERE doc = ?1", [doc], |r| {
        r.get(0)
    })?;
    if left == 0 {
        if let (Some(first), Some(last)) = (first, last) {
            // By rowid range: `doc` is not an indexed column of the FTS table.
            tx.execute(
                "DELETE FROM chunks WHERE rowid BETWEEN ?1 AND ?2",
                params![first, last],
            )?;
        }
        tx.execute("DELETE FROM docs WHERE id = ?1", [doc])?;
    }
    tx.commit()
}

/// The rows of `chunks` a search may see, as rowid ranges (a result's chunks are
/// consecutive rows: see `docs.first_chunk`): FTS5 skips what is outside the bounds, and the
/// count of matches checks the ranges without reading each row's `doc` (which would read
/// the row's content).
struct Scope {
    /// Sorted, not overlapping; `None`: every row.
    ranges: Option<Vec<(i64, i64)>>,
}

impl Scope {
    fn of(conn: &Connection, owner: Option<&str>, only: Option<&str>) -> Result<Scope, String> {
        if owner.is_none() && only.is_none() {
            return Ok(Scope { ranges: None });
        }
        let text = |e: rusqlite::Error| e.to_string();
        let mut statement = conn
            .prepare_cached(
                "SELECT DISTINCT d.first_chunk, d.last_chunk FROM docs d
                 WHERE d.first_chunk IS NOT NULL
                   AND (?1 IS NULL OR d.id IN (SELECT doc FROM entries WHERE owner = ?1))
                   AND (?2 IS NULL OR d.digest = ?2)
                 ORDER BY d.first_chunk",
            )
            .map_err(text)?;
        let ranges = statement
            .query_map(params![owner, only], |r| Ok((r.get(0)?, r.get(1)?)))
            .map_err(text)?
            .collect::<Result<Vec<(i64, i64)>, _>>()
            .map_err(text)?;
        Ok(Scope {
            ranges: Some(ranges),
        })
    }

    /// The lowest and highest rowid in scope (`None`: nothing is).
    fn bounds(&self) -> Option<(i64, i64)> {
        match &self.ranges {
            None => Some((i64::MIN, i64::MAX)),
            Some(ranges) => Some((ranges.first()?.0, ranges.iter().map(|r| r.1).max()?)),
        }
    }

    fn holds(&self, rowid: i64) -> bool {
        let Some(ranges) = &self.ranges else {
            return true;
        };
        let after = ranges.partition_point(|r| r.0 <= rowid);
        after > 0 && rowid <= ranges[after - 1].1
    }
}

/// How many matching lines a search ranks, and how many it counts.
#[derive(Clone, Copy)]
struct Caps {
    rank: usize,
    count: usize,
}

/// The hits of one FTS5 expression, and whether only a part of its matches was ranked.
///
/// Matches are counted first, by rowid and without BM25 (cheap: a walk over the index);
/// when there are more than `cap`, only rows from the `cap`-th newest match on are ranked. Under the cap the ranked query is the same as without one: the exact BM25
/// top hits.
fn search_with(
    conn: &Connection,
    expression: &str,
    owner: Option<&str>,
    only: Option<&str>,
    scope: &Scope,
    limit: usize,
    caps: Caps,
) -> Result<(Vec<Hit>, Option<Ranked>), String> {
    let Caps {
        rank: cap,
        count: count_cap,
    } = caps;
    let text = |e: rusqlite::Error| e.to_string();
    let Some((low, high)) = scope.bounds() else {
        return Ok((Vec::new(), None));
    };
    let mut from = low;
    let mut ranked = None;
    if cap < usize::MAX {
        // In rowid order (FTS5 walks a doclist backwards much more slowly), keeping the
        // last `cap` rowids: the oldest of them is where the ranked part begins.
        let mut count = conn
            .prepare_cached(
                "SELECT rowid FROM chunks WHERE chunks MATCH ?1 AND rowid BETWEEN ?2 AND ?3",
            )
            .map_err(text)?;
        let mut rows = count.query(params![expression, low, high]).map_err(text)?;
        let mut last = std::collections::VecDeque::with_capacity(cap.min(count_cap) + 1);
        let mut matching = 0;
        while let Some(row) = rows.next().map_err(text)? {
            let rowid: i64 = row.get(0).map_err(text)?;
            if !scope.holds(rowid) {
                continue;
            }
            matching += 1;
            if last.len() == cap {
                last.pop_front();
            }
            last.push_back(rowid);
            if matching > count_cap {
                break;
            }
        }
        drop(rows);
        let mut boundary = last.front().copied().unwrap_or(low);
        if matching > count_cap {
            // The count stopped short of the newest: walk back from them for the `cap`-th.
            let mut newest = conn
                .prepare_cached(
                    "SELECT rowid FROM chunks WHERE chunks MATCH ?1 AND rowid BETWEEN ?2 AND ?3
                     ORDER BY rowid DESC",
                )
                .map_err(text)?;
            let mut rows = newest.query(params![expression, low, high]).map_err(text)?;
            let mut seen = 0;
            while let Some(row) = rows.next().map_err(text)? {
                let rowid: i64 = row.get(0).map_err(text)?;
                if scope.holds(rowid) {
                    seen += 1;
                    boundary = rowid;
                    if seen == cap {
                        break;
                    }
                }
            }
        }
        if matching > cap {
            from = boundary;
            ranked = Some(Ranked {
                ranked: cap,
                matching: matching.min(count_cap),
                more_than: matching > count_cap,
            });
        }
    }
    let mut statement = conn
        .prepare_cached(
            "SELECT chunks.rowid, docs.digest, chunks.pointer, chunks.off, chunks.unit,
                    highlight(chunks, 0, char(1), char(2)), chunks.doc
             FROM chunks JOIN docs ON docs.id = chunks.doc
             WHERE chunks MATCH ?1 AND chunks.rowid BETWEEN ?5 AND ?6
               AND (?2 IS NULL OR chunks.doc IN (SELECT doc FROM entries WHERE owner = ?2))
               AND (?3 IS NULL OR docs.digest = ?3)
             ORDER BY rank LIMIT ?4",
        )
        .map_err(text)?;
    let rows = statement
        .query_map(
            params![expression, owner, only, limit as i64, from, high],
            |row| {
                Ok((
                    row.get::<_, i64>(0)?,
                    Hit {
                        digest: row.get(1)?,
                        pointer: row.get(2)?,
                        offset: row.get::<_, i64>(3)? as usize,
                        unit: match row.get::<_, String>(4)?.as_str() {
                            "c" => chunks::Unit::Char,
                            _ => chunks::Unit::Item,
                        },
                        marked: row.get(5)?,
                        before: None,
                        after: None,
                    },
                    row.get::<_, i64>(6)?,
                ))
            },
        )
        .map_err(text)?
        .collect::<Result<Vec<_>, _>>()
        .map_err(text)?;
    let mut hits = Vec::with_capacity(rows.len());
    for (rowid, mut hit, doc) in rows {
        if hit.unit == chunks::Unit::Char {
            hit.before = neighbour(conn, rowid - 1, doc, &hit.pointer)?;
            hit.after = neighbour(conn, rowid + 1, doc, &hit.pointer)?;
        }
        hits.push(hit);
    }
    Ok((hits, ranked))
}

/// The text of chunk `rowid` when it is a line of the same text (`doc`, `pointer`).
fn neighbour(
    conn: &Connection,
    rowid: i64,
    doc: i64,
    pointer: &str,
) -> Result<Option<String>, String> {
    let mut statement = conn
        .prepare_cached("SELECT text, doc, pointer FROM chunks WHERE rowid = ?1")
        .map_err(|e| e.to_string())?;
    let row: Option<(String, i64, String)> = statement
        .query_row([rowid], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .optional()
        .map_err(|e| e.to_string())?;
    Ok(row
        .filter(|(_, d, p)| *d == doc && p == pointer)
        .map(|(text, _, _)| text))
}

/// `sha256:<hex>` of the canonical JSON of a call's `arguments` (object keys sorted, compact);
/// `None` when they are not JSON.
pub fn arguments_digest(arguments: &[u8]) -> Option<String> {
    let value: Value = serde_json::from_slice(arguments).ok()?;
    Some(Digest::of(canonical(&value).as_bytes()).to_string())
}

/// Compact JSON with every object's keys in sorted order (the map keeps insertion order).
fn canonical(value: &Value) -> String {
    match value {
        Value::Object(members) => {
            let mut keys: Vec<&String> = members.keys().collect();
            keys.sort();
            let inner: Vec<String> = keys
                .into_iter()
                .map(|k| format!("{}:{}", Value::from(k.as_str()), canonical(&members[k])))
                .collect();
            format!("{{{}}}", inner.join(","))
        }
        Value::Array(items) => {
            let inner: Vec<String> = items.iter().map(canonical).collect();
            format!("[{}]", inner.join(","))
        }
        scalar => scalar.to_string(),
    }
}

#[cfg(test)]
mod tests;
