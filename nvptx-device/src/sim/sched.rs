//! Taking turns: which of a block's threads runs next, and what each blocked one waits for.
//!
//! A block's threads are stackful coroutines on one host thread. One runs at a time, until
//! it returns or blocks; then the next one in the run queue resumes. A thread blocks by
//! recording a [`Wait`] and suspending; whoever makes its condition true (the last thread at
//! a barrier, the last lane at a warp exchange) wakes it, which puts it back in the queue.
//! The queue is first-in first-out and starts in thread order, so a block runs the same way
//! every time: nothing depends on how the host schedules its threads.
//!
//! When the queue is empty while threads are still blocked, none of them can ever be woken:
//! the launch reports who waits on what ([`super::context::BlockState::deadlocked`]).

use super::context::ThreadCtx;
use super::error::SourceLocation;
use core::cell::RefCell;
use std::collections::VecDeque;
use std::vec::Vec;

/// What a blocked thread waits for.
#[derive(Clone, Copy)]
pub(crate) enum Wait {
    /// The rest of the block, at the `sync_threads()` here.
    Barrier(SourceLocation),
    /// The rest of the cluster, at the cluster barrier here.
    Cluster(SourceLocation),
    /// The rest of `mask` at a warp-collective operation; `op` names the instruction.
    Warp {
        op: &'static str,
        mask: u32,
        location: SourceLocation,
    },
    /// A write to the shared word it read before anything wrote it (never comes: the
    /// block decides what the read was, [`super::pending`]).
    Parked,
    /// The phase of parity `parity` of the `mbarrier` at shared byte `byte` of its array:
    /// the arrivals and copies that complete it.
    Mbarrier {
        byte: u32,
        parity: u32,
        location: SourceLocation,
    },
    /// The current phase of named barrier `id` (`bar.sync id, threads`).
    Named {
        id: u32,
        threads: u32,
        location: SourceLocation,
    },
}

struct State {
    queue: VecDeque<u32>,
    /// By thread: what it is blocked on, if it is.
    waits: Vec<Option<Wait>>,
}

/// The run queue of one block.
pub(crate) struct Scheduler {
    state: RefCell<State>,
}

impl Scheduler {
    /// `threads` threads, all ready to run, in thread order.
    pub fn new(threads: u32) -> Self {
        Self {
            state: RefCell::new(State {
                queue: (0..threads).collect(),
                waits: std::vec![None; threads as usize],
            }),
        }
    }

    /// The next thread to run, if any is ready.
    pub fn next(&self) -> Option<u32> {
        self.state.borrow_mut().queue.pop_front()
    }

    /// Whether a thread is ready to run.
    pub fn has_ready(&self) -> bool {
        !self.state.borrow().queue.is_empty()
    }

    /// Thread `t` records `wait` and suspends until another thread wakes it. The caller
    /// checks on resuming whether the block failed meanwhile (every blocked thread is woken
    /// then, [`wake_all`](Self::wake_all)).
    pub fn block(&self, t: &ThreadCtx<'_>, wait: Wait) {
        self.state.borrow_mut().waits[t.linear as usize] = Some(wait);
        t.suspend();
    }

    /// Thread `t` goes to the back of the queue, letting every ready thread run first.
    pub fn yield_now(&self, t: &ThreadCtx<'_>) {
        self.state.borrow_mut().queue.push_back(t.linear);
        t.suspend();
    }

    /// Makes blocked thread `linear` ready to run (it is resumed after those already
    /// ready). Nothing happens to a thread that is not blocked.
    pub fn wake(&self, linear: u32) {
        let mut s = self.state.borrow_mut();
        if s.waits[linear as usize].take().is_some() {
            s.queue.push_back(linear);
        }
    }

    /// Makes every thread blocked on a wait that `pred` accepts ready to run.
    pub fn wake_where(&self, pred: impl Fn(&Wait) -> bool) {
        let State { queue, waits } = &mut *self.state.borrow_mut();
        for (linear, wait) in waits.iter_mut().enumerate() {
            if wait.as_ref().is_some_and(&pred) {
                *wait = None;
                queue.push_back(linear as u32);
            }
        }
    }

    /// Makes every blocked thread ready to run; used when the block fails.
    pub fn wake_all(&self) {
        let State { queue, waits } = &mut *self.state.borrow_mut();
        for (linear, wait) in waits.iter_mut().enumerate() {
            if wait.take().is_some() {
                queue.push_back(linear as u32);
            }
        }
    }

    /// Every blocked thread and what it waits for, in thread order.
    pub fn blocked(&self) -> Vec<(u32, Wait)> {
        let s = self.state.borrow();
        (s.waits.iter().enumerate())
            .filter_map(|(linear, wait)| Some((linear as u32, (*wait)?)))
            .collect()
    }
}
