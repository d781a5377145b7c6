//! Running a grid: each block's threads as coroutines taking turns on one host thread
//! ([`super::sched`]), the blocks of a cluster on the same one ([`super::cluster`]), and
//! the clusters spread over a few host threads.

use super::cluster::Cluster;
use super::context::{self, Abort, BlockState, ThreadCtx};
use super::error::SimError;
use super::shared_mem::{self, SharedArena};
use crate::launch::{Launch, Limit, Limits};
use crate::thread::Dim3;
use corosensei::stack::DefaultStack;
use corosensei::{Coroutine, CoroutineResult, Yielder};
use std::string::{String, ToString};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::vec::Vec;

// Kernel code is small, but unoptimised builds of the larger kernels need more than the
// 128 KiB a coroutine gets by default. Only the pages a thread touches take memory.
const STACK_BYTES: usize = 512 * 1024;

type Fiber = Coroutine<(), (), (), DefaultStack>;

/// Stacks kept from one launch to the next (up to [`SPARE_STACKS_KEPT`]): mapping and
/// unmapping them took a good part of a small launch.
static SPARE_STACKS: Mutex<Vec<DefaultStack>> = Mutex::new(Vec::new());
/// Two host threads' worth of the largest blocks.
const SPARE_STACKS_KEPT: usize = 2 * 1024;

/// Runs `kernel` once for every thread of the grid described by `cfg`, each call as a
/// simulated thread whose device-API calls answer with that thread's coordinates.
///
/// `kernel` is typically a closure calling an entry point with captured arguments. The
/// blocks run on up to [`std::thread::available_parallelism`] host threads at once, each
/// cluster's threads (each block's, without clusters) on one of them. Returns the problem
/// found in the lowest-numbered cluster that has one (the error a launch running clusters
/// one after another would return; in a cluster, the block that failed first); clusters
/// after it may have run, and none after it starts once it is found.
pub fn launch<F: Fn() + Sync>(cfg: &Launch, limits: &Limits, kernel: F) -> Result<(), SimError> {
    check_shape(cfg, limits)?;
    let grid = Grid {
        blocks: cfg.grid.volume() / u64::from(cfg.cluster),
        next: AtomicU64::new(0),
        stop: AtomicU64::new(u64::MAX),
        failed: Mutex::new(None),
    };
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get() as u64)
        .min(grid.blocks);
    let work = || worker(cfg, limits, &kernel, &grid);
    std::thread::scope(|scope| {
        for w in 1..workers {
            // A worker that cannot start leaves its blocks to the others.
            let _ = std::thread::Builder::new()
                .name(std::format!("sim-blocks-{w}"))
                .spawn_scoped(scope, work);
        }
        work();
    });
    match grid.failed.into_inner().unwrap_or_else(|e| e.into_inner()) {
        Some((_, e)) => Err(e),
        None => Ok(()),
    }
}

/// The clusters of a launch (its blocks, without clusters), handed out in order to the host
/// threads that run them.
struct Grid {
    blocks: u64,
    next: AtomicU64,
    /// The lowest-numbered block found failed: no block after it starts.
    stop: AtomicU64,
    failed: Mutex<Option<(u64, SimError)>>,
}

impl Grid {
    fn take(&self) -> Option<u64> {
        let b = self.next.fetch_add(1, Ordering::Relaxed);
        (b < self.blocks && b < self.stop.load(Ordering::Relaxed)).then_some(b)
    }

    fn fail(&self, b: u64, error: SimError) {
        let mut failed = lock(&self.failed);
        if failed.as_ref().is_none_or(|&(first, _)| b < first) {
            *failed = Some((b, error));
            self.stop.fetch_min(b, Ordering::Relaxed);
        }
    }
}

/// Runs clusters of the grid one after another until none is left, with stacks for their
/// threads that it keeps from cluster to cluster.
fn worker<F: Fn() + Sync>(cfg: &Launch, limits: &Limits, kernel: &F, grid: &Grid) {
    let mut stacks = Vec::new();
    while let Some(c) = grid.take() {
        if let Err(e) = run_cluster(cfg, limits, kernel, c, &mut stacks) {
            grid.fail(c, e);
        }
    }
    let mut spare = lock(&SPARE_STACKS);
    let room = SPARE_STACKS_KEPT.saturating_sub(spare.len());
    spare.extend(stacks.into_iter().take(room));
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Tops `stacks` up to `threads`, from the spare ones first.
fn stacks_for(threads: u32, stacks: &mut Vec<DefaultStack>) -> Result<(), SimError> {
    let wanted = threads as usize;
    if stacks.len() < wanted {
        let mut spare = lock(&SPARE_STACKS);
        let take = spare.len().min(wanted - stacks.len());
        let at = spare.len() - take;
        stacks.extend(spare.drain(at..));
    }
    while stacks.len() < wanted {
        let stack = DefaultStack::new(STACK_BYTES).map_err(|e| SimError::HostThreads {
            threads,
            message: e.to_string(),
        })?;
        stacks.push(stack);
    }
    Ok(())
}

fn check_shape(cfg: &Launch, limits: &Limits) -> Result<(), SimError> {
    // Static shared arrays are counted as blocks declare them (`shared_mem`); the limit
    // check refuses clusters that do not divide the grid.
    limits.check(cfg, 0).map_err(SimError::Limit)?;
    // Custom limits may allow more threads than the race checker can tell apart.
    Limit::ThreadsPerBlock
        .check(cfg.block.volume(), shared_mem::MAX_BLOCK_THREADS as u64)
        .map_err(SimError::Limit)
}

/// Block `rank` of cluster number `c` as `blockIdx`: clusters of `cluster` blocks along x,
/// numbered x fastest.
fn unravel(c: u64, rank: u32, grid: Dim3, cluster: u32) -> Dim3 {
    let (cx, gy) = ((grid.x / cluster) as u64, grid.y as u64);
    Dim3::xyz(
        (c % cx) as u32 * cluster + rank,
        ((c / cx) % gy) as u32,
        (c / (cx * gy)) as u32,
    )
}

/// Runs cluster `c` (block `c` without clusters) to its end on the calling host thread: one
/// coroutine per thread of each of its blocks, on `stacks` (topped up as needed, and given
/// back). The blocks' threads take turns, each block's ready ones in its order, then the next
/// block's, until none is ready.
fn run_cluster<F: Fn()>(
    cfg: &Launch, limits: &Limits, kernel: &F, c: u64, stacks: &mut Vec<DefaultStack>,
) -> Result<(), SimError> {
    let per_block = cfg.block.volume() as u32;
    let threads = per_block * cfg.cluster;
    stacks_for(threads, stacks)?;
    let cluster = Cluster::new(
        (0..cfg.cluster)
            .map(|rank| {
                let arena =
                    SharedArena::new(cfg.dynamic_shared_bytes, limits.max_shared_bytes_per_block);
                BlockState::new(unravel(c, rank, cfg.grid, cfg.cluster), cfg.block, arena)
            })
            .collect(),
    );
    let threads_of_cluster: Vec<ThreadCtx<'_>> = (0..threads)
        .map(|i| ThreadCtx::new(&cluster, i / per_block, i % per_block, cfg.grid))
        .collect();
    // Declared after what the coroutines borrow, so dropped before it.
    let mut fibers: Vec<Fiber> = threads_of_cluster
        .iter()
        .zip(stacks.drain(stacks.len() - threads as usize..))
        .map(|(t, stack)| {
            let body = move |yielder: &Yielder<(), ()>, ()| {
                t.started(yielder);
                run_thread(t, kernel);
            };
            // SAFETY: the body borrows `t` (and through it `cluster`) and `kernel`, which
            // outlive `fibers`: every coroutine runs to its end below, or is dropped (its
            // stack unwound) before them.
            unsafe { Coroutine::with_stack_unchecked(stack, body) }
        })
        .collect();
    let blocks = &cluster.blocks;
    let mut running = std::vec![per_block; blocks.len()];
    // The block that failed first; the others are then stopped without an error of their own.
    let mut failed: Option<usize> = None;
    while running.iter().any(|&r| r > 0) {
        for (rank, block) in blocks.iter().enumerate() {
            while let Some(linear) = block.sched.next() {
                let i = rank * per_block as usize + linear as usize;
                let (t, fiber) = (&threads_of_cluster[i], &mut fibers[i]);
                if let CoroutineResult::Return(()) = context::resume(t, || fiber.resume(())) {
                    running[rank] -= 1;
                }
                if failed.is_none() && block.is_aborted() {
                    failed = Some(rank);
                    for other in blocks.iter().filter(|b| !b.is_aborted()) {
                        other.stop();
                    }
                }
            }
        }
        if blocks.iter().any(|b| b.sched.has_ready()) {
            continue;
        }
        // Every thread left is blocked, and none can wake another.
        for (rank, block) in blocks.iter().enumerate() {
            if running[rank] > 0 {
                block.deadlocked();
                failed.get_or_insert(rank);
            }
        }
        assert!(
            running.iter().all(|&r| r == 0) || blocks.iter().any(|b| b.sched.has_ready()),
            "a failed block wakes its blocked threads"
        );
    }
    stacks.extend(fibers.into_iter().map(Fiber::into_stack));
    match failed.and_then(|rank| blocks[rank].take_error()) {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// The body of simulated thread `t`: the kernel, then what its return means for the
/// threads still waiting for it.
fn run_thread<F: Fn()>(t: &ThreadCtx<'_>, kernel: &F) {
    let block = t.block;
    if block.is_aborted() {
        // Another thread failed the block before this one started.
        return;
    }
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(kernel));
    if let Err(payload) = outcome
        && !payload.is::<Abort>()
    {
        let message = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "non-string panic payload".to_string());
        block.record(SimError::KernelPanicked {
            at: t.coord(),
            message,
        });
    }
    if let Some(location) = t.bulk.pending() {
        block.record(SimError::BulkStorePending {
            at: t.coord(),
            location,
        });
    }
    if let Some((mask, location)) = block.warps[(t.linear / 32) as usize].exit(t.linear % 32) {
        block.record(SimError::WarpShuffle {
            at: t.coord(),
            reason: std::format!(
                "returned while lanes of mask {mask:#010x} wait for it at a warp-collective operation"
            ),
            location,
        });
    }
    if let Some((waiting, location)) = block.barrier.exit(t.linear) {
        block.record(SimError::BarrierNotReached {
            block: block.block_idx,
            waiting: block.thread_of(waiting),
            location,
            exited: t.thread_idx,
        });
    }
}
