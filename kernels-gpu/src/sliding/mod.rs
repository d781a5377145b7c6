//! Sliding average, minitorch module 3.5's first example: `out[i]` is the mean of
//! `a[i .. i + window]`, for the `n - window + 1` windows that fit (`window` is the slides'
//! `sub_size`; `a = [4, 2, 5, 6, 2, 4]`, window 2 gives `[3, 3.5, 5.5, 4, 3]`).
//!
//! | kernel | global reads per output | sums in |
//! |---|---|---|
//! | [`naive::sliding_naive`] | `window` | f32, each window left to right |
//! | [`shared::sliding_shared`] | about one: each block loads its tile plus halo once; the halo must fit in shared memory | f32, each window left to right |
//! | [`scan::sliding_scan`] | four (`a[p]`, `a[p - window]`, in each of two passes over a tile; normally one from DRAM, the rest from L2), whatever the window | f64, a running sum carried across blocks |
//!
//! The naive and shared kernels add the same terms in the same order, so they agree bit for
//! bit; their cost per output grows with the window. The scan's does not, and its error is
//! bounded in [`scan`]'s documentation.
//!
//! Every kernel requires `1 <= window <= n`. The host rejects `window == 0` (a mean of
//! nothing) and answers a window longer than the input with no outputs, without a launch.

pub mod naive;
pub mod scan;
pub mod shared;

/// Threads per block of every sliding kernel.
pub const BLOCK: u32 = 256;
