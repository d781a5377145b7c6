//! Saying on stderr what takes a while: compiling kernels on first use, tuning a shape.
//!
//! A [`Progress`] stays silent for its first second, so what is quick (a module in the
//! driver's cache, a shape already tuned) prints nothing. Past that it says what it is doing
//! and how far it is: on a terminal as one line redrawn in place, otherwise (a log, a pipe)
//! as plain lines, at most one a second, and a last line when it is done. Nothing goes to
//! stdout, so `--json` output stays clean. [`set_enabled`] turns it off for the process.

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How long a task runs before it is reported.
pub const QUIET_FOR: Duration = Duration::from_secs(1);

/// How often a plain-line report repeats itself while the task runs.
const PLAIN_EVERY: Duration = Duration::from_secs(1);

static ENABLED: AtomicBool = AtomicBool::new(true);

/// Whether progress is reported at all (default: yes).
pub fn set_enabled(on: bool) {
    ENABLED.store(on, Ordering::Relaxed);
}

/// One task of `total` steps: `what` names it (`compiling 12 kernels for sm_90`).
#[derive(Debug)]
pub struct Progress {
    what: String,
    total: usize,
    done: usize,
    started: Instant,
    /// When something was last printed; `None` while silent.
    shown: Option<Instant>,
    terminal: bool,
}

impl Progress {
    pub fn new(what: impl Into<String>, total: usize) -> Self {
        Self {
            what: what.into(),
            total,
            done: 0,
            started: Instant::now(),
            shown: None,
            terminal: std::io::stderr().is_terminal(),
        }
    }

    /// Seconds since the task started.
    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    /// `steps` more steps are done; reports if it is time to.
    pub fn advance(&mut self, steps: usize) {
        self.done = (self.done + steps).min(self.total);
        self.tick();
    }

    /// Reports how far the task is, if it has run for [`QUIET_FOR`] (on a terminal every
    /// call redraws the line; plain lines come at most once a second).
    pub fn tick(&mut self) {
        if !ENABLED.load(Ordering::Relaxed) || self.started.elapsed() < QUIET_FOR {
            return;
        }
        let due = match self.shown {
            None => true,
            Some(at) => self.terminal || at.elapsed() >= PLAIN_EVERY,
        };
        if due {
            self.print(false);
            self.shown = Some(Instant::now());
        }
    }

    /// Ends the task: a last line if anything was said of it.
    pub fn finish(mut self) {
        if self.shown.is_some() && ENABLED.load(Ordering::Relaxed) {
            self.done = self.total;
            self.print(true);
        }
        self.shown = None;
    }

    fn print(&self, last: bool) {
        let secs = self.started.elapsed().as_secs_f64();
        let line = if last {
            format!("{}: done in {secs:.1} s", self.what)
        } else if self.terminal {
            const WIDTH: usize = 24;
            let filled = (WIDTH * self.done).checked_div(self.total).unwrap_or(0);
            format!(
                "{} [{}{}] {}/{} {secs:.1} s",
                self.what,
                "=".repeat(filled),
                " ".repeat(WIDTH - filled),
                self.done,
                self.total
            )
        } else {
            format!(
                "{}: {}/{} after {secs:.1} s",
                self.what, self.done, self.total
            )
        };
        let mut err = std::io::stderr().lock();
        // A failed write to stderr is nothing to fail a computation for.
        let _ = if self.terminal {
            write!(err, "\r\x1b[2K{line}{}", if last { "\n" } else { "" })
        } else {
            writeln!(err, "{line}")
        };
        let _ = err.flush();
    }
}

impl Drop for Progress {
    /// A task dropped half-way (an error) leaves no redrawn line without its line break.
    fn drop(&mut self) {
        if self.terminal && self.shown.is_some() {
            let _ = writeln!(std::io::stderr());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_quick_task_says_nothing() {
        let mut p = Progress::new("quick", 3);
        p.advance(1);
        p.advance(5);
        assert_eq!(p.done, 3, "steps past the total are clamped");
        assert!(p.shown.is_none());
        p.finish();
    }

    #[test]
    fn a_slow_task_is_reported() {
        let mut p = Progress::new("slow", 2);
        p.started -= QUIET_FOR;
        p.terminal = false;
        p.tick();
        assert!(p.shown.is_some());
        p.finish();
    }
}
