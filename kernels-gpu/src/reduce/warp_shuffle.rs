//! Block sum with warp shuffles: each warp sums its 32 values in registers, its first lane
//! writes one shared word, and the first warp sums those. Two barriers instead of eight.

use super::{BLOCK, thread_partial};
use nvptx_device::shared_array;
use nvptx_device::thread::{block_idx_x, sync_threads, thread_idx_x};
use nvptx_device::warp::{self, WARP_SIZE};

/// Warps per block: one partial sum each in shared memory.
pub const WARPS: u32 = BLOCK / WARP_SIZE;

/// Writes the sum of this block's share of `input[0..n]` to `partials[blockIdx.x]`.
///
/// Launch with [`BLOCK`] threads per block.
///
/// # Safety
/// `input` points to `n` 16-byte-aligned floats, `partials` to one float per block.
#[inline(always)]
pub unsafe fn reduce_sum_warp(input: *const f32, n: u32, partials: *mut f32) {
    let tid = thread_idx_x();
    let per_warp = shared_array!(f32; WARPS as usize);
    // SAFETY: forwarded contract; every lane of every (full) warp of the block sums.
    let sum = unsafe { warp::sum_f32(thread_partial(input, n)) };
    if warp::lane_id() == 0 {
        per_warp.set(tid / WARP_SIZE, sum);
    }
    sync_threads();
    if tid < WARP_SIZE {
        let v = if tid < WARPS { per_warp.get(tid) } else { 0.0 };
        // SAFETY: the whole first warp (BLOCK is a multiple of 32) takes this branch.
        let total = unsafe { warp::sum_f32(v) };
        if tid == 0 {
            // SAFETY: one partial per block.
            unsafe { *partials.add(block_idx_x() as usize) = total };
        }
    }
}

// Exported only with the `entries` feature; the simulator twins always exist.
#[cfg(any(feature = "entries", not(target_arch = "nvptx64")))]
nvptx_device::entry_points! {
    reduce_sum_warp(input: *const f32, n: u32, partials: *mut f32) => reduce_sum_warp;
}
