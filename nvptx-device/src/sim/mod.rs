//! A CPU simulator for the device API: the same kernel source, run on host threads.
//!
//! Each thread of a block is a stackful coroutine, and a block's threads take turns on one
//! host thread: a thread runs until it returns or blocks (at `sync_threads()`, at a warp
//! shuffle or another warp-collective operation, on a read of a shared word nothing has
//! written yet), then the next ready one runs. So a barrier costs a switch of stacks, not a
//! trip through the operating system, and a block runs the same way every time, whatever
//! the host does. Blocks are independent, as on a GPU: several run at once, one per host
//! thread, on up to [`std::thread::available_parallelism`] of them.
//!
//! Unlike the GPU it checks what the GPU silently gets wrong, and returns it as a
//! [`SimError`] naming the block and thread coordinates:
//!
//! * a barrier not reached by every thread of the block (divergent branch, early return);
//! * shared-memory indices out of bounds, and reads of shared words nothing has written
//!   (decided without regard to the order the threads ran in: a read that finds its word
//!   unwritten waits until another thread writes it in the same barrier interval, a race,
//!   or none can);
//! * data races on shared memory: two threads touching the same word, at least one writing,
//!   with no barrier in between;
//! * misused warp-collective operations (a lane outside its mask, lanes that disagree or
//!   have returned);
//! * a deadlock: every thread that has not returned waits for another, reported instead of
//!   hanging;
//! * launch shapes and shared-memory sizes beyond the device limits in [`Limits`](crate::launch::Limits);
//! * a panic in kernel code.
//!
//! ```
//! use nvptx_device::launch::{Launch, Limits};
//! use nvptx_device::sim;
//! use nvptx_device::thread::Dim3;
//! let cfg = Launch::new(Dim3::x(2), Dim3::x(64), 0);
//! sim::launch(&cfg, &Limits::default(), || { /* kernel call */ }).unwrap();
//! ```

mod barrier;
pub(crate) mod bulk;
pub(crate) mod cluster;
pub(crate) mod context;
mod error;
mod launch;
mod pending;
pub(crate) mod sched;
pub(crate) mod shared_mem;
pub(crate) mod warp;
pub(crate) mod wgmma_groups;

pub use error::{RaceKind, SharedArrayId, SimError, SourceLocation, ThreadCoord, Waiting};
pub use launch::launch;

/// Lets every other ready thread of the calling simulated thread's block run before it goes
/// on; outside a simulated thread, [`std::thread::yield_now`].
///
/// A block's threads take turns on one host thread, each running until it blocks in the
/// device API, so a simulated thread that waits for another through something the
/// simulator does not see (a host-side flag, in a test that forces an order of accesses)
/// must call this in its wait loop, or the other one never runs.
pub fn yield_now() {
    if context::try_with(|t| {
        t.block.sched.yield_now(t);
        t.check_aborted();
    })
    .is_none()
    {
        std::thread::yield_now();
    }
}

/// Runs `kernel` as one block of `threads` threads with `dynamic_shared_bytes` of dynamic
/// shared memory, under the default limits: the device API's own tests' launch.
#[cfg(test)]
pub(crate) fn one_block(
    threads: u32, dynamic_shared_bytes: u32, kernel: impl Fn() + Sync,
) -> Result<(), SimError> {
    let cfg = crate::launch::Launch {
        grid: crate::thread::Dim3::x(1),
        block: crate::thread::Dim3::x(threads),
        dynamic_shared_bytes,
        cluster: 1,
    };
    launch(&cfg, &crate::launch::Limits::default(), kernel)
}

/// A raw pointer that the simulated threads may share, for a kernel's arguments: each
/// thread writes disjoint elements, as on a GPU. (Raw pointers are not `Sync`, so a
/// closure run by every simulated thread cannot capture one directly.)
#[derive(Clone, Copy, Debug)]
pub struct SharedPtr<T>(pub *mut T);
// SAFETY: kernels write disjoint elements, and the launch ends before the buffer is used.
unsafe impl<T> Send for SharedPtr<T> {}
// SAFETY: as above.
unsafe impl<T> Sync for SharedPtr<T> {}

impl<T> SharedPtr<T> {
    /// The pointer. (A method, so that closures capture the whole `Sync` wrapper.)
    pub fn get(self) -> *mut T {
        self.0
    }
}
