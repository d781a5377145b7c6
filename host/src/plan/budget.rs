//! Time-bounded timing: how many warm-ups and timed runs one measurement makes when each of
//! the two phases may spend at most a given time ([`Gpu::time_within`]), so that a kernel
//! that takes a second per run on a large problem is not run `--warmup` + `--iters` times.
//!
//! The decisions are pure functions of the times seen so far, tested without a GPU:
//!
//! - warm-ups run one at a time, each waited for; another one starts while fewer than
//!   [`TimeBudget::warmup`] have run and, after the first, while those done have taken less
//!   than the limit ([`TimeBudget::another_warmup`], wall-clock time);
//! - the first timed run is made and waited for on its own; its event-timed duration sets
//!   how many runs are made in all, [`TimeBudget::timed_runs`]: `iters`, or fewer where
//!   that many would take longer than the limit, never fewer than one. The rest are queued
//!   back to back between CUDA events, as [`Gpu::time_ms`] queues them.
//!
//! So each phase stops at its count or once it has spent the limit, overrunning it by at
//! most one run, and every median ([`median`], what a measurement reports) is of at least
//! one timed run.
//!
//! [`Gpu::time_within`]: crate::gpu::Gpu::time_within
//! [`Gpu::time_ms`]: crate::gpu::Gpu::time_ms

use crate::problem::error::{Error, Result};
use std::time::Duration;

/// The command line's `--time-budget` when none is given: the time each kernel's timed runs
/// may take (and its warm-ups as much again). A second keeps all of the default 20 runs
/// for every kernel that takes up to 50 ms per run, and holds a kernel of a second or more
/// per run (the lecture's at 16384³ on an H100: 8.8·10¹² flop at their 5–9 TFLOP/s) to one
/// warm-up and one timed run.
pub const DEFAULT: Duration = Duration::from_secs(1);

/// How many warm-ups and timed runs a measurement may make, and how long each phase may
/// take.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimeBudget {
    /// Most untimed warm-up runs (the first always runs when this is at least 1).
    pub warmup: usize,
    /// Most timed runs; at least one is always made.
    pub iters: usize,
    /// The time each phase may take; `None`: no bound, exactly `warmup` and `iters` runs.
    pub limit: Option<Duration>,
}

impl TimeBudget {
    /// At most `warmup` warm-ups and `iters` timed runs, each phase bounded by `limit`.
    pub const fn new(warmup: usize, iters: usize, limit: Option<Duration>) -> Self {
        Self {
            warmup,
            iters,
            limit,
        }
    }

    /// Whether to start another warm-up when `done` have run and taken `spent` in all:
    /// while fewer than [`warmup`](Self::warmup) have run, and after the first only while
    /// `spent` is below the limit.
    pub fn another_warmup(&self, done: usize, spent: Duration) -> bool {
        done < self.warmup && (done == 0 || self.limit.is_none_or(|limit| spent < limit))
    }

    /// How many timed runs to make in all, the first having taken `first_ms` milliseconds:
    /// [`iters`](Self::iters), or, where that many runs at the first one's pace would take
    /// longer than the limit, as many as it takes them to reach it (`⌈limit / first⌉`),
    /// and never fewer than one (a zero limit: exactly one). A first time that is not
    /// positive (a run too short for the events to see) gives `iters`.
    pub fn timed_runs(&self, first_ms: f64) -> usize {
        let iters = self.iters.max(1);
        let Some(limit) = self.limit else {
            return iters;
        };
        if limit.is_zero() {
            return 1;
        }
        // NaN has nothing to go by either.
        if first_ms.is_nan() || first_ms <= 0.0 {
            return iters;
        }
        let reach = (limit.as_secs_f64() * 1e3 / first_ms).ceil();
        if reach >= iters as f64 {
            iters
        } else {
            (reach as usize).max(1)
        }
    }
}

/// Parses `--time-budget`: seconds, a number at least 0 (`0.5`, `2`), or `inf` for no
/// bound (`None`). Anything else, NaN and negative numbers included, is
/// [`Error::InvalidTimeBudget`].
pub fn parse_limit(s: &str) -> Result<Option<Duration>> {
    let invalid = || Error::InvalidTimeBudget {
        value: s.to_owned(),
    };
    let seconds: f64 = s.trim().parse().map_err(|_| invalid())?;
    if seconds == f64::INFINITY {
        return Ok(None);
    }
    // Negative, NaN and durations past `Duration::MAX` are refused here.
    Duration::try_from_secs_f64(seconds)
        .map(Some)
        .map_err(|_| invalid())
}

/// How `--time-budget` prints a limit: seconds, or `inf`.
pub fn limit_name(limit: Option<Duration>) -> String {
    limit.map_or("inf".to_owned(), |d| format!("{}", d.as_secs_f64()))
}

/// The median of `samples` (which must not be empty).
pub fn median(samples: &mut [f64]) -> f64 {
    samples.sort_by(f64::total_cmp);
    let mid = samples.len() / 2;
    if samples.len().is_multiple_of(2) {
        (samples[mid - 1] + samples[mid]) / 2.0
    } else {
        samples[mid]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECOND: Option<Duration> = Some(Duration::from_secs(1));

    #[test]
    fn timed_runs_stop_at_iters_or_where_they_reach_the_limit() {
        let b = TimeBudget::new(3, 20, SECOND);
        // Short runs: the count binds.
        assert_eq!(b.timed_runs(0.01), 20);
        assert_eq!(b.timed_runs(50.0), 20); // 20 × 50 ms is exactly the limit
        // Longer runs: as many as reach the limit.
        assert_eq!(b.timed_runs(52.7), 19); // ⌈18.98⌉
        assert_eq!(b.timed_runs(180.0), 6); // ⌈5.56⌉: 1.08 s
        assert_eq!(b.timed_runs(999.0), 2);
        // A run at or past the limit: one, never none.
        assert_eq!(b.timed_runs(1000.0), 1);
        assert_eq!(b.timed_runs(5000.0), 1);
        assert_eq!(b.timed_runs(f64::INFINITY), 1);
        // Nothing to go by: the count.
        assert_eq!(b.timed_runs(0.0), 20);
        assert_eq!(b.timed_runs(-1.0), 20);
        assert_eq!(b.timed_runs(f64::NAN), 20);
    }

    #[test]
    fn no_limit_is_the_fixed_count_and_a_zero_limit_one_run() {
        let unbounded = TimeBudget::new(3, 20, None);
        assert_eq!(unbounded.timed_runs(1e9), 20);
        assert!(unbounded.another_warmup(2, Duration::from_secs(3600)));
        assert!(!unbounded.another_warmup(3, Duration::ZERO));
        let zero = TimeBudget::new(3, 20, Some(Duration::ZERO));
        assert_eq!(zero.timed_runs(0.001), 1);
        assert_eq!(zero.timed_runs(0.0), 1);
        assert!(zero.another_warmup(0, Duration::ZERO));
        assert!(!zero.another_warmup(1, Duration::ZERO));
        // `iters` of 0 is read as 1: a median needs a run.
        assert_eq!(TimeBudget::new(0, 0, None).timed_runs(1.0), 1);
    }

    #[test]
    fn warmups_stop_at_their_count_or_once_they_have_taken_the_limit() {
        let b = TimeBudget::new(3, 20, SECOND);
        let ms = Duration::from_millis;
        // The first always runs, however long runs take.
        assert!(b.another_warmup(0, Duration::ZERO));
        // Below the limit: up to the count.
        assert!(b.another_warmup(1, ms(180)));
        assert!(b.another_warmup(2, ms(360)));
        assert!(!b.another_warmup(3, ms(540)));
        // At or past it: no more.
        assert!(!b.another_warmup(1, ms(1000)));
        assert!(!b.another_warmup(1, ms(1260)));
        assert!(b.another_warmup(1, ms(999)));
        // No warm-ups asked for: none, not even the first.
        assert!(!TimeBudget::new(0, 20, SECOND).another_warmup(0, Duration::ZERO));
    }

    #[test]
    fn parse_takes_seconds_or_inf_and_refuses_the_rest_with_a_typed_error() {
        assert_eq!(parse_limit("1").unwrap(), Some(Duration::from_secs(1)));
        assert_eq!(
            parse_limit("0.25").unwrap(),
            Some(Duration::from_millis(250))
        );
        assert_eq!(parse_limit("0").unwrap(), Some(Duration::ZERO));
        assert_eq!(parse_limit("inf").unwrap(), None);
        for bad in ["", "-1", "-inf", "NaN", "1s", "fast", "1e400x"] {
            match parse_limit(bad) {
                Err(Error::InvalidTimeBudget { value }) => assert_eq!(value, bad),
                other => panic!("{bad:?}: {other:?}"),
            }
        }
        // Past what a Duration holds: refused, not a panic.
        assert!(matches!(
            parse_limit("1e300"),
            Err(Error::InvalidTimeBudget { .. })
        ));
        assert_eq!(limit_name(parse_limit("0.5").unwrap()), "0.5");
        assert_eq!(limit_name(Some(DEFAULT)), "1");
        assert_eq!(limit_name(None), "inf");
    }
}
