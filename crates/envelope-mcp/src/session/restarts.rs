//! When a crashed upstream may be started again: on the next request, after a backoff that
//! doubles with each crash in a row, and at most [`MAX_PER_MINUTE`] times a minute.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// The most restarts within any minute; past it, requests get an error until the oldest
/// restart is a minute old.
pub const MAX_PER_MINUTE: usize = 5;

/// The wait before the second restart in a row; it doubles for each further crash.
const FIRST_BACKOFF: Duration = Duration::from_millis(250);

/// The longest wait between a crash and the next start.
const MAX_BACKOFF: Duration = Duration::from_secs(30);

const MINUTE: Duration = Duration::from_secs(60);

/// The restarts of one session's upstream.
#[derive(Debug, Default)]
pub struct Restarts {
    /// When each restart of the last minute started.
    started: VecDeque<Instant>,
    /// Crashes since the upstream last answered an `initialize` (or since the start).
    in_a_row: u32,
    /// The last crash.
    crashed_at: Option<Instant>,
}

impl Restarts {
    /// The upstream went away at `now`.
    pub fn crashed(&mut self, now: Instant) {
        self.in_a_row += 1;
        self.crashed_at = Some(now);
    }

    /// The upstream answered its `initialize`: the next crash restarts without waiting.
    pub fn recovered(&mut self) {
        self.in_a_row = 0;
    }

    /// A restart started at `now`.
    pub fn started(&mut self, now: Instant) {
        self.started.push_back(now);
    }

    /// When the upstream may be started again, asked at `now`: `Ok(at)` (now or later, by
    /// the backoff), or `Err(wait)` when the minute's restarts are used up.
    pub fn next(&mut self, now: Instant) -> Result<Instant, Duration> {
        while self
            .started
            .front()
            .is_some_and(|at| now.duration_since(*at) >= MINUTE)
        {
            self.started.pop_front();
        }
        if self.started.len() >= MAX_PER_MINUTE {
            let oldest = self.started[0];
            return Err(MINUTE.saturating_sub(now.duration_since(oldest)));
        }
        let backoff = match self.in_a_row {
            0 | 1 => Duration::ZERO,
            n => FIRST_BACKOFF
                .saturating_mul(1 << (n - 2).min(16))
                .min(MAX_BACKOFF),
        };
        let earliest = self.crashed_at.map_or(now, |at| at + backoff);
        Ok(earliest.max(now))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_restart_is_at_once_then_the_wait_doubles() {
        let t0 = Instant::now();
        let mut restarts = Restarts::default();
        restarts.crashed(t0);
        assert_eq!(restarts.next(t0), Ok(t0));
        restarts.started(t0);
        restarts.crashed(t0);
        assert_eq!(restarts.next(t0), Ok(t0 + Duration::from_millis(250)));
        restarts.crashed(t0);
        assert_eq!(restarts.next(t0), Ok(t0 + Duration::from_millis(500)));
        // Asked after the wait: now.
        let later = t0 + Duration::from_secs(2);
        assert_eq!(restarts.next(later), Ok(later));
        restarts.recovered();
        restarts.crashed(later);
        assert_eq!(restarts.next(later), Ok(later));
    }

    #[test]
    fn the_wait_stops_growing_at_thirty_seconds() {
        let t0 = Instant::now();
        let mut restarts = Restarts::default();
        for _ in 0..40 {
            restarts.crashed(t0);
        }
        assert_eq!(restarts.next(t0), Ok(t0 + MAX_BACKOFF));
    }

    #[test]
    fn at_most_five_restarts_a_minute() {
        let t0 = Instant::now();
        let mut restarts = Restarts::default();
        for i in 0..MAX_PER_MINUTE {
            let at = t0 + Duration::from_secs(i as u64);
            assert!(restarts.next(at).is_ok());
            restarts.started(at);
        }
        let now = t0 + Duration::from_secs(10);
        assert_eq!(restarts.next(now), Err(Duration::from_secs(50)));
        // A minute after the first, one more.
        let minute = t0 + MINUTE;
        assert_eq!(restarts.next(minute), Ok(minute));
    }
}
