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
//! * shared-memory indices out of bounds, and reads of shared words nothing has written;
//! * data races on shared memory: two threads touching the same word, at least one writing,
//!   with no barrier in between;
//! * launch shapes and shared-memory sizes beyond the device limits in [`Limits`];
//! * a panic in kernel code.
//!
//! ```
//! use kernels_gpu::sim::{self, LaunchConfig};
//! use kernels_gpu::thread::Dim3;
//! let cfg = LaunchConfig { grid: Dim3::x(2), block: Dim3::x(64), dynamic_shared_bytes: 0 };
//! sim::launch(&cfg, &sim::Limits::default(), || { /* kernel call */ }).unwrap();
//! ```

mod barrier;
pub(crate) mod context;
mod error;
mod launch;
pub(crate) mod shared_mem;
pub(crate) mod warp;

pub use error::{RaceKind, SharedArrayId, SimError, SourceLocation, ThreadCoord};
pub use launch::{LaunchConfig, Limits, launch};
