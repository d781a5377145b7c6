//! Block sum with warp shuffles: each warp sums its 32 values in registers, its first lane
//! writes one shared word, and the first warp sums those. Two barriers instead of eight.

use super::{BLOCK, thread_partial};
use crate::shared_array;
use crate::thread::{block_idx_x, sync_threads, thread_idx_x};
use crate::warp::{self, WARP_SIZE};

/// Writes the sum of this block's share of `input[0..n]` to `partials[blockIdx.x]`.
///
/// Launch with [`BLOCK`] threads per block.
///
/// # Safety
/// `input` points to `n` 16-byte-aligned floats, `partials` to one float per block.
#[inline(always)]
pub unsafe fn reduce_sum_warp(input: *const f32, n: u32, partials: *mut f32) {
    const WARPS: u32 = BLOCK / WARP_SIZE;
    let tid = thread_idx_x();
    let per_warp = shared_array!(f32; WARPS as usize);
    // SAFETY: forwarded contract.
    let sum = warp::sum_f32(unsafe { thread_partial(input, n) });
    if warp::lane_id() == 0 {
        per_warp.set(tid / WARP_SIZE, sum);
    }
    sync_threads();
    if tid < WARP_SIZE {
        let v = if tid < WARPS { per_warp.get(tid) } else { 0.0 };
        let total = warp::sum_f32(v);
        if tid == 0 {
            // SAFETY: one partial per block.
            unsafe { *partials.add(block_idx_x() as usize) = total };
        }
    }
}

crate::entry_points! {
    reduce_sum_warp(input: *const f32, n: u32, partials: *mut f32) => reduce_sum_warp;
}
