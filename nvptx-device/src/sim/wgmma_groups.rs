//! A thread's `wgmma` groups as the simulator tracks them: which groups read `A` from
//! registers, issued, committed (`wgmma.commit_group`), waited for (`wgmma.wait_group`).
//!
//! The simulator multiplies when an instruction is issued, so it reads a register fragment
//! at once; the GPU reads it while the group runs, and a fragment rewritten before the
//! group completes is multiplied as rewritten (seen on an H200: every TF32 register-`A`
//! configuration of rung 17 computed wrong products with one group left in flight over the
//! next k-tile's loads). A kernel keeps two such groups in flight only with fragments in
//! different registers, and `ptxas` serializes every `wgmma` of such a kernel anyway (its
//! C7513: input registers defined while a group is open). So the rule here: a register-`A`
//! instruction is issued only when no earlier register-`A` group of the thread may still be
//! in flight, and breaking it fails the launch with both places named.

use super::error::SourceLocation;
use core::cell::RefCell;
use std::collections::VecDeque;

#[derive(Default)]
struct Groups {
    /// Where the first register-`A` instruction since the last commit was issued.
    open: Option<SourceLocation>,
    /// The committed groups, oldest first: where each one's first register-`A` instruction
    /// was issued, if it has one.
    committed: VecDeque<Option<SourceLocation>>,
}

/// The calling thread's `wgmma` groups not yet waited for.
#[derive(Default)]
pub(crate) struct WgmmaGroups(RefCell<Groups>);

impl WgmmaGroups {
    /// Records a register-`A` instruction issued at `location`; panics (the kernel's error)
    /// where a committed register-`A` group may still be in flight.
    pub fn issue_register_a(&self, location: SourceLocation) {
        let mut g = self.0.borrow_mut();
        if let Some(earlier) = g.committed.iter().flatten().next() {
            panic!(
                "wgmma: a register-A instruction issued at {location} while the register-A \
                 group issued at {earlier} may still be in flight: its fragments must not \
                 change until it completes (wait_group::<0> first)"
            );
        }
        g.open.get_or_insert(location);
    }

    /// Closes the group of the instructions issued since the last commit.
    pub fn commit(&self) {
        let mut g = self.0.borrow_mut();
        let open = g.open.take();
        g.committed.push_back(open);
    }

    /// Waits until at most `newest` committed groups are still in flight.
    pub fn wait(&self, newest: usize) {
        let mut g = self.0.borrow_mut();
        while g.committed.len() > newest {
            g.committed.pop_front();
        }
    }
}
