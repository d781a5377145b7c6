//! Per-thread and per-block state of a running simulated kernel, and which simulated thread
//! the host thread is running now.

use super::barrier::{BlockBarrier, Misuse};
use super::bulk::BulkStores;
use super::cluster::Cluster;
use super::error::{SimError, SourceLocation, ThreadCoord, Waiting};
use super::pending::Pending;
use super::sched::{Scheduler, Wait};
use super::shared_mem::SharedArena;
use super::warp::WarpExchange;
use super::wgmma_groups::WgmmaGroups;
use crate::thread::Dim3;
use core::cell::{Cell, RefCell};
use corosensei::Yielder;

/// Unwinding payload that stops a thread of a failed block; never shown to the user.
pub(crate) struct Abort;

/// Unwinds the calling simulated thread quietly: its block has failed.
pub(crate) fn abort() -> ! {
    std::panic::resume_unwind(std::boxed::Box::new(Abort))
}

/// What every thread of one block shares. A block runs on one host thread, so none of it
/// needs locks.
pub(crate) struct BlockState {
    pub block_idx: Dim3,
    pub block_dim: Dim3,
    pub barrier: BlockBarrier,
    pub warps: std::boxed::Box<[WarpExchange]>,
    pub shared: SharedArena,
    /// Parked reads of unwritten shared words.
    pub pending: Pending,
    pub sched: Scheduler,
    /// `mbarrier` and named-barrier phases completed in the block so far: each orders what
    /// its arrivals did before it with what its waiters do after it ([`ThreadCtx::epoch`]).
    pub mbarrier_phases: Cell<u32>,
    /// By id, the named barriers' current phases ([`sync_named`]).
    pub named: RefCell<[NamedPhase; crate::thread::NAMED_BARRIERS as usize]>,
    error: RefCell<Option<SimError>>,
    aborted: Cell<bool>,
}

impl BlockState {
    pub fn new(block_idx: Dim3, block_dim: Dim3, shared: SharedArena) -> Self {
        let threads = block_dim.volume() as u32;
        Self {
            block_idx,
            block_dim,
            barrier: BlockBarrier::new(threads),
            warps: (0..threads.div_ceil(32))
                .map(|w| WarpExchange::new((threads - 32 * w).min(32)))
                .collect(),
            shared,
            pending: Pending::new(),
            sched: Scheduler::new(threads),
            mbarrier_phases: Cell::new(0),
            named: RefCell::new(Default::default()),
            error: RefCell::new(None),
            aborted: Cell::new(false),
        }
    }

    pub fn is_aborted(&self) -> bool {
        self.aborted.get()
    }

    /// Records `error` (the first one wins) and wakes every blocked thread, so that the
    /// block winds down: each one unwinds where it waits.
    pub fn record(&self, error: SimError) {
        let mut slot = self.error.borrow_mut();
        if slot.is_none() {
            *slot = Some(error);
        }
        drop(slot);
        self.aborted.set(true);
        self.sched.wake_all();
    }

    /// Stops the block without an error of its own: another block of its cluster failed,
    /// and this one's waits for it would never end. Every blocked thread unwinds.
    pub fn stop(&self) {
        self.aborted.set(true);
        self.sched.wake_all();
    }

    pub fn take_error(&self) -> Option<SimError> {
        self.error.borrow_mut().take()
    }

    /// Unravels `threadIdx` from the linear thread number, x fastest as on the GPU.
    pub fn thread_of(&self, linear: u32) -> Dim3 {
        let d = self.block_dim;
        Dim3::xyz(linear % d.x, (linear / d.x) % d.y, linear / (d.x * d.y))
    }

    /// Every thread that has not returned is blocked, so none will ever be woken: records
    /// the parked read to report ([`super::pending`]) if there is one, else a deadlock naming
    /// every blocked thread and what it waits for.
    pub fn deadlocked(&self) {
        let error = self.pending.decided().unwrap_or_else(|| {
            let waiting = self.sched.blocked().into_iter().map(|(linear, wait)| {
                let (what, location) = match wait {
                    Wait::Barrier(at) => (std::string::String::from("sync_threads()"), at),
                    Wait::Cluster(at) => (std::string::String::from("barrier.cluster"), at),
                    Wait::Warp { op, mask, location } => {
                        let arrived = self.warps[(linear / 32) as usize].arrived();
                        let op = op.trim_end_matches(": ");
                        let missing = mask & !arrived;
                        let what =
                            std::format!("{op} with mask {mask:#010x}, for lanes {missing:#010x}");
                        (what, location)
                    }
                    Wait::Parked => unreachable!("parked reads are decided first"),
                    Wait::Named {
                        id,
                        threads,
                        location,
                    } => {
                        let arrived = self.named.borrow()[id as usize].arrived;
                        let what = std::format!(
                            "bar.sync {id}, {threads}, which {arrived} threads have reached"
                        );
                        (what, location)
                    }
                    Wait::Mbarrier {
                        byte,
                        parity,
                        location,
                    } => (
                        std::format!(
                            "the phase of parity {parity} of the mbarrier at shared byte {byte}, which no arrival or copy completes"
                        ),
                        location,
                    ),
                };
                Waiting {
                    thread: self.thread_of(linear),
                    what,
                    location,
                }
            });
            SimError::Deadlock {
                block: self.block_idx,
                waiting: waiting.collect(),
            }
        });
        self.record(error);
    }
}

/// What one simulated thread knows about itself; `'b` is its block's lifetime.
pub(crate) struct ThreadCtx<'b> {
    pub thread_idx: Dim3,
    pub block_idx: Dim3,
    pub block_dim: Dim3,
    pub grid_dim: Dim3,
    /// Its block's rank in its cluster (`%cluster_ctarank`).
    pub rank: u32,
    /// `threadIdx` flattened, x fastest.
    pub linear: u32,
    /// Barriers this thread has passed; races are only possible within one interval.
    pub barriers_passed: Cell<u32>,
    pub block: &'b BlockState,
    /// The cluster of its block (a cluster of one where the launch has none).
    pub cluster: &'b Cluster,
    /// Its bulk stores to global memory not yet waited for.
    pub bulk: BulkStores,
    /// Its `wgmma` groups not yet waited for.
    pub wgmma: WgmmaGroups,
    /// How the thread's coroutine suspends itself; set when it starts.
    yielder: Cell<*const Yielder<(), ()>>,
}

impl<'b> ThreadCtx<'b> {
    /// Thread `linear` of block `rank` of `cluster`, in a grid of `grid_dim` blocks.
    pub fn new(cluster: &'b Cluster, rank: u32, linear: u32, grid_dim: Dim3) -> Self {
        let block = &cluster.blocks[rank as usize];
        Self {
            thread_idx: block.thread_of(linear),
            block_idx: block.block_idx,
            block_dim: block.block_dim,
            grid_dim,
            rank,
            linear,
            barriers_passed: Cell::new(0),
            block,
            cluster,
            bulk: BulkStores::default(),
            wgmma: WgmmaGroups::default(),
            yielder: Cell::new(core::ptr::null()),
        }
    }

    /// Called first thing in the thread's coroutine.
    pub fn started(&self, yielder: &Yielder<(), ()>) {
        self.yielder.set(yielder);
    }

    /// Hands the host thread back to the block's scheduler until it resumes this thread.
    pub fn suspend(&self) {
        let yielder = self.yielder.get();
        assert!(
            !yielder.is_null(),
            "a simulated thread suspended before it started"
        );
        // SAFETY: set by `started` from the yielder of this thread's coroutine, which lives
        // as long as the coroutine; only the coroutine itself runs this thread's code.
        unsafe { (*yielder).suspend(()) }
    }

    pub fn coord(&self) -> ThreadCoord {
        ThreadCoord {
            block: self.block_idx,
            thread: self.thread_idx,
        }
    }

    /// Records `error` for this block and unwinds this thread.
    pub fn fail(&self, error: SimError) -> ! {
        self.block.record(error);
        abort()
    }

    /// Unwinds this thread if another one already failed the block.
    pub fn check_aborted(&self) {
        if self.block.is_aborted() {
            abort()
        }
    }

    /// Blocks until woken (see [`Scheduler::block`]); unwinds if the block failed meanwhile.
    /// The interval of this thread's shared accesses for the race checker: the barriers it
    /// has passed (10 bits) and the `mbarrier` phases its block has completed (20 bits).
    /// Accesses of two threads in one interval are unordered. A phase completing between
    /// them orders them (it does for the threads that arrived and waited on it; the checker
    /// cannot tell which those were, so it may miss a race between two others).
    #[inline(always)]
    pub fn epoch(&self) -> u64 {
        (self.barriers_passed.get() as u64 & 0x3ff)
            | ((self.block.mbarrier_phases.get() as u64 & 0xf_ffff) << 10)
    }

    pub fn block_on(&self, wait: Wait) {
        self.block.sched.block(self, wait);
        self.check_aborted();
    }
}

/// The simulated thread this host thread runs now; null outside one. A plain
/// `#[thread_local]`: every shared access reads it, and `thread_local!`'s accessor is not
/// inlined in the tests' lightly optimised builds.
#[thread_local]
static CURRENT: Cell<*const ThreadCtx<'static>> = Cell::new(core::ptr::null());

/// Runs `f` with the calling simulated thread's context.
///
/// # Panics
/// When called outside a kernel launched by [`crate::sim::launch`]: on the host the device
/// API has no meaning anywhere else.
#[inline(always)]
pub(crate) fn with<R>(f: impl FnOnce(&ThreadCtx<'_>) -> R) -> R {
    try_with(f).unwrap_or_else(|| {
        panic!(
            "nvptx_device API used outside a kernel: on the host, launch kernels through nvptx_device::sim::launch"
        )
    })
}

/// [`with`], or `None` outside a simulated thread.
#[inline(always)]
pub(crate) fn try_with<R>(f: impl FnOnce(&ThreadCtx<'_>) -> R) -> Option<R> {
    let ctx = CURRENT.get();
    // SAFETY: `resume` points CURRENT at the context of the thread it runs, which outlives
    // that run, and clears it afterwards; `f` cannot keep the reference past this call.
    (!ctx.is_null()).then(|| f(unsafe { &*ctx }))
}

/// Runs `run` as thread `ctx`: device-API calls in it answer with `ctx`'s coordinates.
pub(crate) fn resume<R>(ctx: &ThreadCtx<'_>, run: impl FnOnce() -> R) -> R {
    struct Clear;
    impl Drop for Clear {
        fn drop(&mut self) {
            CURRENT.set(core::ptr::null());
        }
    }
    CURRENT.set((ctx as *const ThreadCtx<'_>).cast());
    let _clear = Clear;
    run()
}

/// Runs `run` as `ctx` from inside another simulated thread (its twin in another block of
/// the cluster, [`super::cluster::on_rank`]), then makes the caller current again.
pub(crate) fn resume_nested<R>(ctx: &ThreadCtx<'_>, run: impl FnOnce() -> R) -> R {
    struct Restore(*const ThreadCtx<'static>);
    impl Drop for Restore {
        fn drop(&mut self) {
            CURRENT.set(self.0);
        }
    }
    let _restore = Restore(CURRENT.get());
    CURRENT.set((ctx as *const ThreadCtx<'_>).cast());
    run()
}

/// A named barrier's phase in progress: the count its first arrival named, the arrivals so
/// far, and the phases completed before it.
#[derive(Clone, Copy, Default)]
pub(crate) struct NamedPhase {
    pub threads: u32,
    pub arrived: u32,
    pub generation: u32,
}

/// `bar.sync id, threads` in the simulator ([`crate::thread::sync_named`]).
pub(crate) fn sync_named(id: u32, threads: u32, location: &'static core::panic::Location<'static>) {
    with(|t| {
        let b = t.block;
        let block_threads = b.block_dim.volume() as u32;
        if id >= crate::thread::NAMED_BARRIERS
            || threads == 0
            || !threads.is_multiple_of(32)
            || threads > block_threads
        {
            panic!(
                "bar.sync {id}, {threads}: ids are below {}, counts multiples of 32 up to the block's {block_threads} threads",
                crate::thread::NAMED_BARRIERS
            );
        }
        let generation = {
            let mut named = b.named.borrow_mut();
            let phase = &mut named[id as usize];
            if phase.arrived == 0 {
                phase.threads = threads;
            } else if phase.threads != threads {
                panic!(
                    "bar.sync {id}, {threads}: this phase's first arrival named {} threads",
                    phase.threads
                );
            }
            phase.arrived += 1;
            if phase.arrived == threads {
                phase.arrived = 0;
                phase.generation = phase.generation.wrapping_add(1);
                None
            } else {
                Some(phase.generation)
            }
        };
        let Some(generation) = generation else {
            // The last arrival completes the phase: a new interval for the race checker.
            b.mbarrier_phases
                .set(b.mbarrier_phases.get().wrapping_add(1));
            b.sched
                .wake_where(|w| matches!(w, Wait::Named { id: i, .. } if *i == id));
            return;
        };
        while b.named.borrow()[id as usize].generation == generation {
            t.block_on(Wait::Named {
                id,
                threads,
                location: SourceLocation::from(location),
            });
        }
    })
}

/// `sync_threads()` in the simulator.
pub(crate) fn sync_threads(location: &'static core::panic::Location<'static>) {
    with(|t| {
        let b = t.block;
        match b.barrier.wait(t, SourceLocation::from(location)) {
            Ok(()) => t.barriers_passed.set(t.barriers_passed.get() + 1),
            Err((_, _, Misuse::Aborted)) => abort(),
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
