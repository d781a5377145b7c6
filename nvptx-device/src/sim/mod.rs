//! A CPU simulator for the device API: the same kernel source, run on host threads.
//!
//! Like the lecture's Python version (one `threading.Barrier` per block) it runs every thread
//! of a block concurrently on its own OS thread, so `sync_threads()` is a real barrier and
//! shared memory is really shared. Blocks run one after another. Unlike the GPU it checks
//! what the GPU silently gets wrong, and returns it as a [`SimError`] naming the block and
//! thread coordinates:
//!
//! * a barrier not reached by every thread of the block (divergent branch, early return) —
//!   reported instead of hanging;
//! * shared-memory indices out of bounds, and reads of shared words nothing has written
//!   (decided without regard to host scheduling: a read that finds its word unwritten waits
//!   until another thread writes it in the same barrier interval, a race, or none can);
//! * data races on shared memory: two threads touching the same word, at least one writing,
//!   with no barrier in between;
//! * launch shapes and shared-memory sizes beyond the device limits in [`Limits`](crate::launch::Limits);
//! * a panic in kernel code.
//!
//! ```
//! use nvptx_device::launch::{Launch, Limits};
//! use nvptx_device::sim;
//! use nvptx_device::thread::Dim3;
//! let cfg = Launch { grid: Dim3::x(2), block: Dim3::x(64), dynamic_shared_bytes: 0 };
//! sim::launch(&cfg, &Limits::default(), || { /* kernel call */ }).unwrap();
//! ```

mod barrier;
pub(crate) mod context;
mod error;
mod launch;
mod pending;
pub(crate) mod shared_mem;
pub(crate) mod warp;

pub use error::{RaceKind, SharedArrayId, SimError, SourceLocation, ThreadCoord};
pub use launch::launch;

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
