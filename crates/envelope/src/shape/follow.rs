//! Storing a payload while the document around it is still being read.
//!
//! The skimmed read (`json::skim`) reports, every few megabytes, how far it has read into
//! the root member it is in. A second thread takes the first member reported as the likely
//! payload and hands its bytes to the sink's [`ArtifactWriter`] as they are read (the sink
//! hashes and writes them): by the time the read ends, only the last few megabytes are left
//! to store. The read's outcome decides: when the payload is that member, the writer gets
//! the rest and finishes; otherwise the artifact is abandoned (nothing stored) and the
//! offload stores the payload whole, as without this.

use std::ops::Range;
use std::sync::{Condvar, Mutex, PoisonError};

use super::offload::ArtifactWriter;
use crate::error::SinkError;
use crate::model::ArtifactRef;

/// What the reading thread tells the storing one.
#[derive(Default)]
pub(super) struct Follow {
    state: Mutex<State>,
    changed: Condvar,
}

#[derive(Default)]
struct State {
    /// The bytes read so far of the root member being followed.
    read: Option<Range<usize>>,
    /// Set once the read is over: `Some(payload)` when the payload (these bytes of the
    /// input) is to be stored, `None` when nothing is.
    verdict: Option<Option<Range<usize>>>,
}

/// How far the storing thread has got.
enum Step {
    /// Store the member's bytes up to here.
    More(Range<usize>),
    /// The read is over.
    Over(Option<Range<usize>>),
}

impl Follow {
    /// From the reading thread: the root member whose value starts at `read.start` has
    /// been read up to `read.end`. Only the first member reported is followed.
    pub(super) fn report(&self, read: Range<usize>) {
        let mut state = self.lock();
        if state
            .read
            .as_ref()
            .is_none_or(|known| known.start == read.start)
        {
            state.read = Some(read);
            self.changed.notify_one();
        }
    }

    /// From the reading thread, once: the payload to store (`None`: none, or not the
    /// bytes this way can store).
    pub(super) fn decide(&self, payload: Option<Range<usize>>) {
        let mut state = self.lock();
        if state.verdict.is_none() {
            state.verdict = Some(payload);
            self.changed.notify_one();
        }
    }

    /// The storing thread: writes the followed member's bytes of `input` to `writer` as
    /// they are reported, until [`decide`](Self::decide). `Some` when the payload was that
    /// member (what the sink stored it as, or why it could not), `None` when nothing was
    /// stored.
    pub(super) fn store(
        &self,
        input: &[u8],
        mut writer: Box<dyn ArtifactWriter + '_>,
        kind: &str,
    ) -> Option<Result<ArtifactRef, SinkError>> {
        // The bytes handed to the writer so far, and the first error it gave.
        let mut written: Option<Range<usize>> = None;
        let mut failed = None;
        let mut write = |to: Range<usize>, written: &mut Option<Range<usize>>| {
            let done = written.get_or_insert(to.start..to.start);
            if to.start == done.start && to.end > done.end {
                // After a failure the bytes are only counted: the thread goes on to the
                // verdict, which says whether the failure was the payload's.
                if failed.is_none()
                    && let Err(e) = writer.write(&input[done.end..to.end])
                {
                    failed = Some(e);
                }
                done.end = to.end;
            }
        };
        let payload = loop {
            match self.next_step(written.as_ref()) {
                Step::More(read) => write(read, &mut written),
                Step::Over(payload) => break payload?,
            }
        };
        if written.as_ref()?.start != payload.start {
            return None;
        }
        write(payload, &mut written);
        Some(match failed {
            Some(e) => Err(e),
            None => writer.finish(kind),
        })
    }

    /// Waits for more of the followed member than `written`, or for the verdict. What was
    /// reported comes first: the thread always follows the member if it was reported.
    fn next_step(&self, written: Option<&Range<usize>>) -> Step {
        let mut state = self.lock();
        loop {
            if let Some(read) = &state.read
                && written.is_none_or(|w| w.end < read.end)
            {
                return Step::More(read.clone());
            }
            if let Some(verdict) = &state.verdict {
                return Step::Over(verdict.clone());
            }
            state = self
                .changed
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // The state stays consistent whatever panicked while holding the lock.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Tells the storing thread that nothing is stored if the reading thread leaves without a
/// verdict (an early return, a panic), so that it never waits forever.
pub(super) struct NoVerdictMeansNone<'a>(pub(super) &'a Follow);

impl Drop for NoVerdictMeansNone<'_> {
    fn drop(&mut self) {
        self.0.decide(None);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex as StdMutex};

    /// What a writer was given, and whether it was finished.
    #[derive(Default)]
    struct Log {
        pieces: Vec<Vec<u8>>,
        finished: Option<String>,
    }

    struct Recording {
        log: Arc<StdMutex<Log>>,
        fail_at: Option<usize>,
    }

    impl ArtifactWriter for Recording {
        fn write(&mut self, bytes: &[u8]) -> Result<(), SinkError> {
            let mut log = self.log.lock().unwrap();
            if self.fail_at == Some(log.pieces.len()) {
                return Err(SinkError::new("store.io", "disk full"));
            }
            log.pieces.push(bytes.to_vec());
            Ok(())
        }

        fn finish(self: Box<Self>, kind: &str) -> Result<ArtifactRef, SinkError> {
            let mut log = self.log.lock().unwrap();
            log.finished = Some(kind.to_string());
            Ok(ArtifactRef {
                digest: format!("len:{}", log.pieces.concat().len()),
            })
        }
    }

    /// Runs the storing thread over `input` while `reading` reports and decides.
    fn run(
        input: &[u8],
        fail_at: Option<usize>,
        reading: impl FnOnce(&Follow),
    ) -> (Option<Result<ArtifactRef, SinkError>>, Log) {
        let log = Arc::new(StdMutex::new(Log::default()));
        let follow = Follow::default();
        let writer = Box::new(Recording {
            log: log.clone(),
            fail_at,
        });
        let stored = std::thread::scope(|scope| {
            let storing = scope.spawn(|| follow.store(input, writer, "application/json"));
            {
                let _verdict = NoVerdictMeansNone(&follow);
                reading(&follow);
            }
            storing.join().unwrap()
        });
        let log = std::mem::take(&mut *log.lock().unwrap());
        (stored, log)
    }

    const INPUT: &[u8] = br#"{"a":[1,2,3,4,5,6,7,8],"b":[9,10,11,12]}"#;

    #[test]
    fn the_payload_followed_is_stored_in_order_and_whole() {
        let (stored, log) = run(INPUT, None, |follow| {
            follow.report(5..9);
            follow.report(5..14);
            // Another member's progress is not followed.
            follow.report(27..30);
            follow.decide(Some(5..22));
        });
        assert_eq!(stored.unwrap().unwrap().digest, "len:17");
        assert_eq!(log.pieces.concat(), &INPUT[5..22]);
        assert_eq!(log.finished.as_deref(), Some("application/json"));
        // The verdict came at once: the pieces are whatever the thread saw, in order.
        assert!(!log.pieces.is_empty());
    }

    #[test]
    fn another_payload_or_none_stores_nothing() {
        let (stored, log) = run(INPUT, None, |follow| {
            follow.report(5..14);
            follow.decide(Some(27..40));
        });
        assert!(stored.is_none());
        assert!(log.finished.is_none());
        let (stored, log) = run(INPUT, None, |follow| {
            follow.report(5..14);
            follow.decide(None);
        });
        assert!(stored.is_none());
        assert!(log.finished.is_none());
        // Never reported: nothing was followed, nothing stored (the offload puts it whole).
        let (stored, log) = run(INPUT, None, |follow| follow.decide(Some(5..22)));
        assert!(stored.is_none());
        assert!(log.pieces.is_empty() && log.finished.is_none());
    }

    #[test]
    fn a_reader_that_leaves_without_a_verdict_does_not_leave_the_thread_waiting() {
        let (stored, log) = run(INPUT, None, |follow| follow.report(5..14));
        assert!(stored.is_none());
        assert!(log.finished.is_none());
    }

    #[test]
    fn a_failed_write_is_the_payload_s_error() {
        let (stored, log) = run(INPUT, Some(0), |follow| {
            follow.report(5..14);
            follow.decide(Some(5..22));
        });
        let err = stored.unwrap().unwrap_err();
        assert_eq!(err.code(), "store.io");
        assert!(log.finished.is_none());
        // The same failure for another member: nothing was stored, the offload puts it.
        let (stored, _) = run(INPUT, Some(0), |follow| {
            follow.report(5..14);
            follow.decide(Some(27..40));
        });
        assert!(stored.is_none());
    }
}
