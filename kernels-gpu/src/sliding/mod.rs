//! Sliding average, minitorch module 3.5's first example: `out[i]` is the mean of
//! `a[i .. i + window]`, for the `n - window + 1` windows that fit (`window` is the slides'
//! `sub_size`; `a = [4, 2, 5, 6, 2, 4]`, window 2 gives `[3, 3.5, 5.5, 4, 3]`).
//!
//! | kernel | global reads per output |
//! |---|---|
//! | [`naive::sliding_naive`] | `window` |
//! | [`shared::sliding_shared`] | about one: each block loads its tile plus halo once |
//!
//! Both sum each window left to right in f32 and divide once, so they agree bit for bit.
//! The host rejects `window == 0` and `window > n`.

pub mod naive;
pub mod shared;

/// Threads per block of both kernels.
pub const BLOCK: u32 = 256;
