//! Reads of shared words that no thread has written yet, decided once the block can tell.
//!
//! A missing barrier between one thread's write and another's read of the same word is one
//! bug, but which access the host happens to run first would make it look like two: a race
//! (read after the write) or an uninitialised read (read before it). So a read of a word
//! that holds nothing yet does not fail at once: the reading thread *parks* there, its read
//! not yet complete, and the block runs on until it can decide:
//!
//! * another thread writes the word in the same barrier interval: the read completes after
//!   that write, and the writer reports it as [`RaceKind::ReadAfterWrite`], exactly as the
//!   reader would have had it come second;
//! * every thread of the block is parked, waiting at a barrier or a warp-collective
//!   operation, or has returned: nothing can write the word any more, and the parked read
//!   of the lowest-numbered thread is reported as
//!   [`SimError::UninitializedSharedRead`].
//!
//! Either way the report does not depend on how the host scheduled the threads.
//!
//! [`RaceKind::ReadAfterWrite`]: super::error::RaceKind::ReadAfterWrite

use super::error::{SharedArrayId, SimError, SourceLocation, ThreadCoord};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::vec::Vec;

/// A parked read of an unwritten shared word.
#[derive(Clone, Copy)]
pub(crate) struct PendingRead {
    /// The region's address ([`super::shared_mem::RegionRef::addr`]) and the word.
    pub region: usize,
    pub index: u32,
    pub array: SharedArrayId,
    /// The reading thread: its number in the block, and its coordinates.
    pub linear: u32,
    pub at: ThreadCoord,
    pub location: SourceLocation,
}

impl PendingRead {
    fn error(&self) -> SimError {
        SimError::UninitializedSharedRead {
            at: self.at,
            array: self.array,
            index: self.index,
            location: self.location,
        }
    }
}

struct State {
    /// Threads waiting at a barrier or a warp-collective operation that has not released
    /// them yet (the thread that releases the others takes them off this count).
    waiting: u32,
    /// Threads that returned from the kernel.
    exited: u32,
    parked: Vec<PendingRead>,
}

/// What a block's threads are blocked on, for deciding parked reads.
pub(crate) struct Pending {
    threads: u32,
    state: Mutex<State>,
    changed: Condvar,
}

impl Pending {
    pub fn new(threads: u32) -> Self {
        Self {
            threads,
            state: Mutex::new(State {
                waiting: 0,
                exited: 0,
                parked: Vec::new(),
            }),
            changed: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The uninitialised read to report if no thread of the block can run any more and
    /// some are parked.
    fn decided(&self, s: &State) -> Option<SimError> {
        let blocked = s.waiting + s.exited + s.parked.len() as u32;
        if blocked < self.threads {
            return None;
        }
        s.parked.iter().min_by_key(|p| p.linear).map(|p| p.error())
    }

    /// A thread starts waiting at a barrier or a warp-collective operation (called under
    /// that one's lock, before it waits). Returns the error to report instead of waiting if
    /// that leaves every thread blocked with a read parked.
    pub fn wait_begin(&self) -> Option<SimError> {
        let mut s = self.lock();
        s.waiting += 1;
        self.decided(&s)
    }

    /// A barrier or warp-collective operation released `waiters` threads (called by the
    /// thread that released them, under that one's lock).
    pub fn released(&self, waiters: u32) {
        let mut s = self.lock();
        s.waiting = s.waiting.saturating_sub(waiters);
    }

    /// A thread returned from the kernel; the error to report if that decides a parked read.
    pub fn exit(&self) -> Option<SimError> {
        let mut s = self.lock();
        s.exited += 1;
        self.decided(&s)
    }

    /// Parks the calling thread's `read`: returns the error to report if no thread can run
    /// any more, or else waits until the block fails (`aborted` says whether it has).
    pub fn park(&self, read: PendingRead, aborted: impl Fn() -> bool) -> Option<SimError> {
        let mut s = self.lock();
        s.parked.push(read);
        self.changed.notify_all();
        if let Some(e) = self.decided(&s) {
            return Some(e);
        }
        while !aborted() {
            s = self.changed.wait(s).unwrap_or_else(|e| e.into_inner());
        }
        None
    }

    /// Where thread `linear`'s parked read of word `index` of `region` is. A reader records
    /// itself in the word's shadow just before it parks, so a writer that finds it there
    /// waits the moment it takes to appear here (or until the block fails: `None`).
    pub fn location_of(
        &self, region: usize, index: u32, linear: u32, aborted: impl Fn() -> bool,
    ) -> Option<SourceLocation> {
        let mut s = self.lock();
        loop {
            if let Some(p) = s
                .parked
                .iter()
                .find(|p| p.region == region && p.index == index && p.linear == linear)
            {
                return Some(p.location);
            }
            if aborted() {
                return None;
            }
            s = self.changed.wait(s).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Wakes every parked thread; used when the block fails.
    pub fn wake_all(&self) {
        let _s = self.lock();
        self.changed.notify_all();
    }
}
