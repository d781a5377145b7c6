//! Per-thread and per-block state of a running simulated kernel.

use super::barrier::{BlockBarrier, Misuse};
use super::error::{SimError, SourceLocation, ThreadCoord};
use super::pending::Pending;
use super::shared_mem::SharedArena;
use super::warp::WarpExchange;
use crate::thread::Dim3;
use core::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// Unwinding payload that stops a thread of a failed block; never shown to the user.
pub(crate) struct Abort;

/// What every thread of one block shares.
pub(crate) struct BlockState {
    pub block_idx: Dim3,
    pub block_dim: Dim3,
    pub barrier: BlockBarrier,
    pub warps: std::boxed::Box<[WarpExchange]>,
    pub shared: SharedArena,
    /// Parked reads of unwritten shared words, and what the other threads are blocked on.
    pub pending: Pending,
    error: Mutex<Option<SimError>>,
    aborted: AtomicBool,
}

impl BlockState {
    pub fn new(block_idx: Dim3, block_dim: Dim3, shared: SharedArena) -> Self {
        Self {
            block_idx,
            block_dim,
            barrier: BlockBarrier::new(block_dim.volume() as u32),
            warps: {
                let threads = block_dim.volume() as u32;
                (0..threads.div_ceil(32))
                    .map(|w| WarpExchange::new((threads - 32 * w).min(32)))
                    .collect()
            },
            shared,
            pending: Pending::new(block_dim.volume() as u32),
            error: Mutex::new(None),
            aborted: AtomicBool::new(false),
        }
    }

    pub fn is_aborted(&self) -> bool {
        self.aborted.load(Ordering::Acquire)
    }

    /// Records `error` (the first one wins) and wakes every waiting thread so that the
    /// block winds down instead of hanging.
    pub fn record(&self, error: SimError) {
        let mut slot = self.error.lock().unwrap_or_else(|e| e.into_inner());
        if slot.is_none() {
            *slot = Some(error);
        }
        drop(slot);
        self.aborted.store(true, Ordering::Release);
        self.barrier.wake_all();
        for w in self.warps.iter() {
            w.wake_all();
        }
        self.pending.wake_all();
    }

    pub fn take_error(&self) -> Option<SimError> {
        self.error.lock().unwrap_or_else(|e| e.into_inner()).take()
    }

    /// Unravels `threadIdx` from the linear thread number, x fastest as on the GPU.
    pub fn thread_of(&self, linear: u32) -> Dim3 {
        let d = self.block_dim;
        Dim3::xyz(linear % d.x, (linear / d.x) % d.y, linear / (d.x * d.y))
    }
}

/// What one simulated thread knows about itself.
pub(crate) struct ThreadCtx {
    pub thread_idx: Dim3,
    pub block_idx: Dim3,
    pub block_dim: Dim3,
    pub grid_dim: Dim3,
    /// `threadIdx` flattened, x fastest.
    pub linear: u32,
    /// Barriers this thread has passed; races are only possible within one interval.
    pub barriers_passed: Cell<u32>,
    pub block: Arc<BlockState>,
}

impl ThreadCtx {
    pub fn coord(&self) -> ThreadCoord {
        ThreadCoord {
            block: self.block_idx,
            thread: self.thread_idx,
        }
    }

    /// Records `error` for this block and unwinds this thread.
    pub fn fail(&self, error: SimError) -> ! {
        self.block.record(error);
        std::panic::resume_unwind(std::boxed::Box::new(Abort))
    }

    /// Unwinds this thread if another one already failed the block.
    pub fn check_aborted(&self) {
        if self.block.is_aborted() {
            std::panic::resume_unwind(std::boxed::Box::new(Abort))
        }
    }
}

std::thread_local! {
    static CURRENT: RefCell<Option<ThreadCtx>> = const { RefCell::new(None) };
}

/// Runs `f` with the calling thread's context.
///
/// # Panics
/// When called outside a kernel launched by [`crate::sim::launch`]: on the host the device
/// API has no meaning anywhere else.
pub(crate) fn with<R>(f: impl FnOnce(&ThreadCtx) -> R) -> R {
    CURRENT.with_borrow(|ctx| match ctx {
        Some(ctx) => f(ctx),
        None => panic!(
            "nvptx_device API used outside a kernel: on the host, launch kernels through nvptx_device::sim::launch"
        ),
    })
}

pub(crate) fn enter(ctx: ThreadCtx) {
    CURRENT.set(Some(ctx));
}

pub(crate) fn leave() -> Option<ThreadCtx> {
    CURRENT.take()
}

/// `sync_threads()` in the simulator.
pub(crate) fn sync_threads(location: &'static core::panic::Location<'static>) {
    with(|t| {
        let b = &t.block;
        match b
            .barrier
            .wait(t.linear, SourceLocation::from(location), &b.pending)
        {
            Ok(()) => t.barriers_passed.set(t.barriers_passed.get() + 1),
            Err((_, _, Misuse::Aborted)) => std::panic::resume_unwind(std::boxed::Box::new(Abort)),
            Err((_, _, Misuse::Decided(error))) => t.fail(*error),
            Err((other, at, Misuse::Divergent { linear, here })) => {
                t.fail(SimError::DivergentBarrier {
                    block: b.block_idx,
                    first: b.thread_of(other),
                    first_location: at,
                    second: b.thread_of(linear),
                    second_location: here,
                })
            }
            Err((linear, here, Misuse::Exited { gone })) => t.fail(SimError::BarrierNotReached {
                block: b.block_idx,
                waiting: b.thread_of(linear),
                location: here,
                exited: b.thread_of(gone),
            }),
        }
    })
}
