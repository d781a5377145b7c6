//! A thread's bulk stores from shared to global memory (`cp.async.bulk` stores), in their
//! groups: issued, committed (`cp.async.bulk.commit_group`), waited for
//! (`cp.async.bulk.wait_group`).
//!
//! A store reads its shared-memory source at some moment between its issue and the wait
//! that covers it; the simulator takes the latest, the wait. So a kernel that writes the
//! source again before waiting stores the new values, a wrong result that its tests see,
//! and a thread that returns with stores not waited for is reported
//! ([`SimError::BulkStorePending`](super::SimError::BulkStorePending)).

use super::error::SourceLocation;
use core::cell::RefCell;
use std::boxed::Box;
use std::collections::VecDeque;
use std::vec::Vec;

/// One store, ready to run: it reads its source and writes global memory when called.
pub(crate) struct BulkStore {
    pub run: Box<dyn FnOnce()>,
    pub location: SourceLocation,
}

#[derive(Default)]
struct Groups {
    /// Issued since the last commit.
    open: Vec<BulkStore>,
    /// Committed, oldest first.
    committed: VecDeque<Vec<BulkStore>>,
}

/// The calling thread's stores not yet waited for.
#[derive(Default)]
pub(crate) struct BulkStores(RefCell<Groups>);

impl BulkStores {
    /// Records an issued store.
    pub fn issue(&self, store: BulkStore) {
        self.0.borrow_mut().open.push(store);
    }

    /// Closes the group of the stores issued since the last commit.
    pub fn commit(&self) {
        let mut g = self.0.borrow_mut();
        let open = core::mem::take(&mut g.open);
        g.committed.push_back(open);
    }

    /// Waits until at most `newest` committed groups are still in flight: runs every older
    /// one, oldest first.
    pub fn wait(&self, newest: usize) {
        loop {
            let group = {
                let mut g = self.0.borrow_mut();
                if g.committed.len() <= newest {
                    return;
                }
                g.committed.pop_front().expect("more than `newest` groups")
            };
            for store in group {
                (store.run)();
            }
        }
    }

    /// Where the first store not waited for (committed or not) was issued, if any.
    pub fn pending(&self) -> Option<SourceLocation> {
        let g = self.0.borrow();
        g.committed
            .iter()
            .flatten()
            .chain(g.open.iter())
            .map(|s| s.location)
            .next()
    }
}
