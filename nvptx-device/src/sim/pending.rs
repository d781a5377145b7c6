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
//! * every thread of the block that has not returned is parked or blocked (at a barrier, a
//!   warp-collective operation): nothing can write the word any more, and the parked read
//!   of the lowest-numbered thread is reported as [`SimError::UninitializedSharedRead`].
//!
//! Either way the report does not depend on the order in which the threads ran.
//!
//! [`RaceKind::ReadAfterWrite`]: super::error::RaceKind::ReadAfterWrite

use super::error::{SharedArrayId, SimError, SourceLocation, ThreadCoord};
use core::cell::RefCell;
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

/// The block's parked reads.
pub(crate) struct Pending {
    parked: RefCell<Vec<PendingRead>>,
}

impl Pending {
    pub fn new() -> Self {
        Self {
            parked: RefCell::new(Vec::new()),
        }
    }

    /// The uninitialised read to report once no thread of the block can run any more: the
    /// parked read of the lowest-numbered thread, if any is parked.
    pub fn decided(&self) -> Option<SimError> {
        let parked = self.parked.borrow();
        parked.iter().min_by_key(|p| p.linear).map(|p| p.error())
    }

    /// Records the calling thread's `read` as parked (the caller then blocks for good).
    pub fn park(&self, read: PendingRead) {
        self.parked.borrow_mut().push(read);
    }

    /// Where thread `linear`'s parked read of word `index` of `region` is. A reader
    /// records itself in the word's shadow and parks before any other thread runs, so a
    /// writer that finds it in the shadow finds it here too.
    pub fn location_of(&self, region: usize, index: u32, linear: u32) -> Option<SourceLocation> {
        let parked = self.parked.borrow();
        parked
            .iter()
            .find(|p| p.region == region && p.index == index && p.linear == linear)
            .map(|p| p.location)
    }
}
