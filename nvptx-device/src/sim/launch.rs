//! Running a grid: one OS thread per thread of a block, blocks one after another.

use super::context::{self, Abort, BlockState, ThreadCtx};
use super::error::{SimError, ThreadCoord};
use super::shared_mem::{self, SharedArena};
use crate::launch::{Launch, Limit, Limits};
use crate::thread::Dim3;
use core::cell::Cell;
use std::string::{String, ToString};
use std::sync::{Arc, Barrier, Condvar, Mutex};

/// How long a lane waits at a warp shuffle for the rest of its mask before the simulator
/// calls it a deadlock (lanes stuck at a block barrier, say). Barriers need no timeout:
/// their misuse is detected exactly.
pub(crate) const DEADLOCK_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(20);

// Kernel code is small; many threads with small stacks keep a 1024-thread block cheap.
const STACK_BYTES: usize = 512 * 1024;

/// Runs `kernel` once for every thread of the grid described by `cfg`, each call on a host
/// thread whose device-API calls answer with that thread's coordinates.
///
/// `kernel` is typically a closure calling an entry point with captured arguments. Returns
/// the first problem found; the launch stops at the block where it was found.
pub fn launch<F: Fn() + Sync>(cfg: &Launch, limits: &Limits, kernel: F) -> Result<(), SimError> {
    check_shape(cfg, limits)?;
    let threads = cfg.block.volume() as u32;
    let blocks = cfg.grid.volume();
    let current: Mutex<Option<Arc<BlockState>>> = Mutex::new(None);
    let gate = Barrier::new(threads as usize);
    // Workers start only once all of them exist: with one missing, the block barrier
    // could never open.
    let start: (Mutex<Option<bool>>, Condvar) = (Mutex::new(None), Condvar::new());
    let mut spawn_failure = None;

    std::thread::scope(|scope| {
        for linear in 0..threads {
            let (current, gate, kernel, start) = (&current, &gate, &kernel, &start);
            let worker = move || {
                let mut go = lock(&start.0);
                while go.is_none() {
                    go = start.1.wait(go).unwrap_or_else(|e| e.into_inner());
                }
                if *go == Some(false) {
                    return;
                }
                drop(go);
                for b in 0..blocks {
                    if linear == 0 {
                        let block_idx = unravel(b, cfg.grid);
                        let arena = SharedArena::new(
                            cfg.dynamic_shared_bytes,
                            limits.max_shared_bytes_per_block,
                        );
                        *lock(current) =
                            Some(Arc::new(BlockState::new(block_idx, cfg.block, arena)));
                    }
                    gate.wait();
                    let block = lock(current)
                        .clone()
                        .expect("block state is set by thread 0");
                    run_thread(cfg, linear, &block, kernel);
                    // Everyone is done with this block before thread 0 replaces it.
                    gate.wait();
                    if block.is_aborted() {
                        return;
                    }
                }
            };
            let spawned = std::thread::Builder::new()
                .name(std::format!("sim-thread-{linear}"))
                .stack_size(STACK_BYTES)
                .spawn_scoped(scope, worker);
            if let Err(e) = spawned {
                spawn_failure = Some(SimError::HostThreads {
                    threads,
                    message: e.to_string(),
                });
                break;
            }
        }
        *lock(&start.0) = Some(spawn_failure.is_none());
        start.1.notify_all();
    });

    if let Some(e) = spawn_failure {
        return Err(e);
    }
    let last = lock(&current).take();
    match last.and_then(|b| b.take_error()) {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn check_shape(cfg: &Launch, limits: &Limits) -> Result<(), SimError> {
    // Static shared arrays are counted as blocks declare them (`shared_mem`).
    limits.check(cfg, 0).map_err(SimError::Limit)?;
    // Custom limits may allow more threads than the race checker can tell apart.
    Limit::ThreadsPerBlock
        .check(cfg.block.volume(), shared_mem::MAX_BLOCK_THREADS as u64)
        .map_err(SimError::Limit)
}

/// Block number `b` as `blockIdx`, x fastest.
fn unravel(b: u64, grid: Dim3) -> Dim3 {
    let (gx, gy) = (grid.x as u64, grid.y as u64);
    Dim3::xyz(
        (b % gx) as u32,
        ((b / gx) % gy) as u32,
        (b / (gx * gy)) as u32,
    )
}

fn run_thread<F: Fn()>(cfg: &Launch, linear: u32, block: &Arc<BlockState>, kernel: &F) {
    let thread_idx = block.thread_of(linear);
    context::enter(ThreadCtx {
        thread_idx,
        block_idx: block.block_idx,
        block_dim: cfg.block,
        grid_dim: cfg.grid,
        linear,
        barriers_passed: Cell::new(0),
        block: Arc::clone(block),
    });
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(kernel));
    context::leave();
    if let Err(payload) = outcome
        && !payload.is::<Abort>()
    {
        let message = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "non-string panic payload".to_string());
        block.record(SimError::KernelPanicked {
            at: ThreadCoord {
                block: block.block_idx,
                thread: thread_idx,
            },
            message,
        });
    }
    if let Some((mask, location)) = block.warps[(linear / 32) as usize].exit(linear % 32) {
        block.record(SimError::WarpShuffle {
            at: ThreadCoord {
                block: block.block_idx,
                thread: thread_idx,
            },
            reason: std::format!(
                "returned while lanes of mask {mask:#010x} wait for it at a warp-collective operation"
            ),
            location,
        });
    }
    if let Some((waiting, location)) = block.barrier.exit(linear) {
        block.record(SimError::BarrierNotReached {
            block: block.block_idx,
            waiting: block.thread_of(waiting),
            location,
            exited: thread_idx,
        });
    }
    if let Some(error) = block.pending.exit() {
        block.record(error);
    }
}
