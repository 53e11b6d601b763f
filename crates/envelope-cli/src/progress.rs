//! Progress of long work on stderr, only when stderr is a terminal (a pipe or a file gets
//! nothing): one line, rewritten in place, that appears once the work has taken a second
//! and is erased when it ends.

use std::io::{IsTerminal as _, Read, Write as _};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Work shorter than this shows nothing.
const QUIET_FOR: Duration = Duration::from_secs(1);
/// How often the line is rewritten.
const TICK: Duration = Duration::from_millis(250);

/// A progress line for as long as it lives (stops on drop).
pub struct Progress {
    shared: Arc<Shared>,
    ticker: Option<JoinHandle<()>>,
}

struct Shared {
    label: String,
    /// Bytes done so far, and of how many (0: unknown), when the work counts bytes.
    done: AtomicU64,
    total: u64,
    counts: AtomicBool,
    stop: Mutex<bool>,
    wake: Condvar,
}

impl Progress {
    /// Starts a progress line saying `label`, the bytes read through [`Progress::reader`]
    /// (of `total` when known) and the time spent.
    pub fn new(label: impl Into<String>, total: Option<u64>) -> Self {
        let shared = Arc::new(Shared {
            label: label.into(),
            done: AtomicU64::new(0),
            total: total.unwrap_or(0),
            counts: AtomicBool::new(false),
            stop: Mutex::new(false),
            wake: Condvar::new(),
        });
        let ticker = std::io::stderr().is_terminal().then(|| {
            let shared = Arc::clone(&shared);
            std::thread::spawn(move || shared.tick())
        });
        Progress { shared, ticker }
    }

    /// Adds `bytes` read to this progress line (for work that reads without
    /// [`Progress::reader`]).
    pub fn advance(&self, bytes: u64) {
        self.shared.counts.store(true, Ordering::Relaxed);
        self.shared.done.fetch_add(bytes, Ordering::Relaxed);
    }

    /// `inner`, counting the bytes read from it into this progress line.
    pub fn reader<R: Read>(&self, inner: R) -> Counting<R> {
        self.shared.counts.store(true, Ordering::Relaxed);
        Counting {
            inner,
            shared: Arc::clone(&self.shared),
            ended: false,
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if let Some(ticker) = self.ticker.take() {
            *self.shared.stop.lock().unwrap_or_else(|e| e.into_inner()) = true;
            self.shared.wake.notify_all();
            let _ = ticker.join();
        }
    }
}

impl Shared {
    /// Sleeps a second, then rewrites the line every tick until stopped; erases it if it
    /// was shown.
    fn tick(&self) {
        let started = Instant::now();
        let mut shown = false;
        let mut wait = QUIET_FOR;
        let mut stopped = self.stop.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            stopped = match self.wake.wait_timeout_while(stopped, wait, |stop| !*stop) {
                Ok((guard, _)) => guard,
                Err(poisoned) => poisoned.into_inner().0,
            };
            if *stopped {
                break;
            }
            let _ = write!(
                std::io::stderr(),
                "\r\x1b[2Kenvelope: {}",
                self.line(started)
            );
            shown = true;
            wait = TICK;
        }
        if shown {
            let _ = write!(std::io::stderr(), "\r\x1b[2K");
        }
    }

    /// `validating stdin: 1.2 GB of 3.4 GB (35%), 4 s`.
    fn line(&self, started: Instant) -> String {
        let seconds = started.elapsed().as_secs();
        if !self.counts.load(Ordering::Relaxed) {
            return format!("{}… {seconds} s", self.label);
        }
        let done = self.done.load(Ordering::Relaxed);
        match self.total {
            0 => format!("{}: {} read, {seconds} s", self.label, size(done)),
            total => format!(
                "{}: {} of {} ({}%), {seconds} s",
                self.label,
                size(done),
                size(total),
                done.saturating_mul(100) / total
            ),
        }
    }
}

/// A byte count for people: `512 B`, `3.4 MB`.
fn size(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["kB", "MB", "GB", "TB"];
    if bytes < 1000 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1000.0;
    let mut unit = 0;
    while value >= 1000.0 && unit + 1 < UNITS.len() {
        value /= 1000.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

/// A reader that adds what it reads to a [`Progress`]. Its end is final: a terminal ends
/// the input once for each Ctrl-D, and a reader that asks again after the end (the stream
/// validator does) would otherwise wait for a second one.
pub struct Counting<R> {
    inner: R,
    shared: Arc<Shared>,
    ended: bool,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.ended || buf.is_empty() {
            return Ok(0);
        }
        let n = self.inner.read(buf)?;
        self.ended = n == 0;
        self.shared.done.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}
