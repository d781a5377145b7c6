//! The block barrier, with the checks that make a misuse an error instead of a hang.

use super::context::ThreadCtx;
use super::error::SourceLocation;
use super::sched::Wait;
use core::cell::RefCell;
use std::vec::Vec;

struct State {
    /// Threads waiting in the current barrier, and where the first of them waits.
    waiting: Vec<u32>,
    first: Option<(u32, SourceLocation)>,
    /// Threads that returned from the kernel.
    exited: Vec<u32>,
}

pub(crate) struct BlockBarrier {
    threads: u32,
    state: RefCell<State>,
}

impl BlockBarrier {
    pub fn new(threads: u32) -> Self {
        Self {
            threads,
            state: RefCell::new(State {
                waiting: Vec::new(),
                first: None,
                exited: Vec::new(),
            }),
        }
    }

    /// Thread `t` arrives at the barrier at `here` and waits for the rest of its block.
    #[allow(clippy::type_complexity)]
    pub fn wait(
        &self, t: &ThreadCtx<'_>, here: SourceLocation,
    ) -> Result<(), (u32, SourceLocation, Misuse)> {
        let linear = t.linear;
        let block = t.block;
        if block.is_aborted() {
            return Err((linear, here, Misuse::Aborted));
        }
        let mut s = self.state.borrow_mut();
        match s.first {
            None => s.first = Some((linear, here)),
            Some((other, at)) if at != here => {
                return Err((other, at, Misuse::Divergent { linear, here }));
            }
            Some(_) => {}
        }
        if s.waiting.len() as u32 + 1 + s.exited.len() as u32 == self.threads {
            if let Some(&gone) = s.exited.first() {
                return Err((linear, here, Misuse::Exited { gone }));
            }
            // The last one releases the others; it goes on at once, they after it.
            let waiting = core::mem::take(&mut s.waiting);
            s.first = None;
            drop(s);
            for w in waiting {
                block.sched.wake(w);
            }
            return Ok(());
        }
        s.waiting.push(linear);
        drop(s);
        t.block.sched.block(t, Wait::Barrier(here));
        if block.is_aborted() {
            return Err((linear, here, Misuse::Aborted));
        }
        Ok(())
    }

    /// Thread `linear` returned from the kernel. If every other thread is waiting at a
    /// barrier, none of them can ever be released.
    pub fn exit(&self, linear: u32) -> Option<(u32, SourceLocation)> {
        let mut s = self.state.borrow_mut();
        s.exited.push(linear);
        if !s.waiting.is_empty() && (s.waiting.len() + s.exited.len()) as u32 == self.threads {
            return s.first;
        }
        None
    }
}

/// How a barrier was misused, relative to the `(thread, location)` it is reported with.
pub(crate) enum Misuse {
    /// Another thread already waits at a different barrier.
    Divergent { linear: u32, here: SourceLocation },
    /// A thread returned instead of reaching this barrier.
    Exited { gone: u32 },
    /// The block failed elsewhere.
    Aborted,
}
