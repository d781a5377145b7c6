//! Running a grid: one OS thread per thread of a block, blocks one after another.

use super::context::{self, Abort, BlockState, ThreadCtx};
use super::error::{SimError, ThreadCoord};
use super::shared_mem::{self, SharedArena};
use crate::thread::Dim3;
use core::cell::Cell;
use std::string::{String, ToString};
use std::sync::{Arc, Barrier, Condvar, Mutex};

/// The launch shape, as in `kernel<<<grid, block, dynamic_shared_bytes>>>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchConfig {
    /// Blocks in the grid (`gridDim`).
    pub grid: Dim3,
    /// Threads per block (`blockDim`); each runs on its own host thread.
    pub block: Dim3,
    /// Bytes of dynamic shared memory per block, what
    /// [`dynamic_shared`](crate::shared::dynamic_shared) returns.
    pub dynamic_shared_bytes: u32,
}

/// Device limits the simulator enforces; the defaults are those of every GPU since Volta
/// without opting in to larger shared memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// At most 2047 are simulated, whatever this says: the race checker names a thread of
    /// the block in 11 bits.
    pub max_threads_per_block: u32,
    /// The largest block extent in each dimension.
    pub max_block_dim: Dim3,
    /// Static plus dynamic shared memory of one block, in bytes.
    pub max_shared_bytes_per_block: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_threads_per_block: 1024,
            max_block_dim: Dim3::xyz(1024, 1024, 64),
            max_shared_bytes_per_block: 48 * 1024,
        }
    }
}

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
pub fn launch<F: Fn() + Sync>(
    cfg: &LaunchConfig,
    limits: &Limits,
    kernel: F,
) -> Result<(), SimError> {
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

fn check_shape(cfg: &LaunchConfig, limits: &Limits) -> Result<(), SimError> {
    let (grid, block) = (cfg.grid, cfg.block);
    if grid.volume() == 0 || block.volume() == 0 {
        return Err(SimError::EmptyLaunch { grid, block });
    }
    let m = limits.max_block_dim;
    if block.x > m.x || block.y > m.y || block.z > m.z {
        return Err(SimError::BlockDimTooLarge { block, limit: m });
    }
    // Custom limits may allow more threads than the race checker can tell apart.
    let max_threads = limits
        .max_threads_per_block
        .min(shared_mem::MAX_BLOCK_THREADS);
    if block.volume() > max_threads as u64 {
        return Err(SimError::TooManyThreads {
            block,
            threads: block.volume(),
            limit: max_threads,
        });
    }
    if cfg.dynamic_shared_bytes > limits.max_shared_bytes_per_block {
        return Err(SimError::SharedMemoryExceeded {
            block: Dim3::default(),
            requested: cfg.dynamic_shared_bytes as u64,
            limit: limits.max_shared_bytes_per_block,
        });
    }
    Ok(())
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

fn run_thread<F: Fn()>(cfg: &LaunchConfig, linear: u32, block: &Arc<BlockState>, kernel: &F) {
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
                "returned while lanes of mask {mask:#010x} wait for it at a shuffle"
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
}
