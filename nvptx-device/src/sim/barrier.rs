//! The block barrier, with the checks that make a misuse an error instead of a hang.

use super::error::{SimError, SourceLocation};
use super::pending::Pending;
use std::boxed::Box;
use std::sync::{Condvar, Mutex};
use std::vec::Vec;

struct State {
    /// Threads waiting in the current barrier, and where the first of them waits.
    arrived: u32,
    first: Option<(u32, SourceLocation)>,
    generation: u64,
    /// Threads that returned from the kernel.
    exited: Vec<u32>,
    aborted: bool,
}

pub(crate) struct BlockBarrier {
    threads: u32,
    state: Mutex<State>,
    released: Condvar,
}

impl BlockBarrier {
    pub fn new(threads: u32) -> Self {
        Self {
            threads,
            state: Mutex::new(State {
                arrived: 0,
                first: None,
                generation: 0,
                exited: Vec::new(),
                aborted: false,
            }),
            released: Condvar::new(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Thread `linear` arrives at the barrier at `here` and waits for the rest of its block.
    #[allow(clippy::type_complexity)]
    pub fn wait(
        &self, linear: u32, here: SourceLocation, pending: &Pending,
    ) -> Result<(), (u32, SourceLocation, Misuse)> {
        let mut s = self.lock();
        if s.aborted {
            return Err((linear, here, Misuse::Aborted));
        }
        match s.first {
            None => s.first = Some((linear, here)),
            Some((other, at)) if at != here => {
                return Err((other, at, Misuse::Divergent { linear, here }));
            }
            Some(_) => {}
        }
        s.arrived += 1;
        if s.arrived + s.exited.len() as u32 == self.threads {
            if let Some(&gone) = s.exited.first() {
                return Err((linear, here, Misuse::Exited { gone }));
            }
            pending.released(s.arrived - 1);
            s.arrived = 0;
            s.first = None;
            s.generation += 1;
            self.released.notify_all();
            return Ok(());
        }
        if let Some(error) = pending.wait_begin() {
            return Err((linear, here, Misuse::Decided(Box::new(error))));
        }
        let generation = s.generation;
        while s.generation == generation && !s.aborted {
            s = self.released.wait(s).unwrap_or_else(|e| e.into_inner());
        }
        if s.generation == generation {
            return Err((linear, here, Misuse::Aborted));
        }
        Ok(())
    }

    /// Thread `linear` returned from the kernel. If every other thread is waiting at a
    /// barrier, none of them can ever be released.
    pub fn exit(&self, linear: u32) -> Option<(u32, SourceLocation)> {
        let mut s = self.lock();
        s.exited.push(linear);
        if s.arrived > 0 && s.arrived + s.exited.len() as u32 == self.threads {
            return s.first;
        }
        None
    }

    /// Releases every waiter; used when the block fails.
    pub fn wake_all(&self) {
        self.lock().aborted = true;
        self.released.notify_all();
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
    /// Waiting here would leave every thread of the block blocked while a read of an
    /// unwritten word is parked: that read is the error ([`super::pending`]).
    Decided(Box<SimError>),
}
