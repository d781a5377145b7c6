//! Block sum by a shared-memory binary tree, as in the minitorch slides: at each level the
//! lower half of the active threads adds the upper half's values to its own.

use super::{BLOCK, thread_partial};
use nvptx_device::shared_array;
use nvptx_device::thread::{block_idx_x, sync_threads, thread_idx_x};

/// Writes the sum of this block's share of `input[0..n]` to `partials[blockIdx.x]`.
///
/// Launch with [`BLOCK`] threads per block.
///
/// # Safety
/// `input` points to `n` 16-byte-aligned floats, `partials` to one float per block.
#[inline(always)]
pub unsafe fn reduce_sum_tree(input: *const f32, n: u32, partials: *mut f32) {
    let tid = thread_idx_x();
    let sums = shared_array!(f32; BLOCK as usize);
    // SAFETY: forwarded contract.
    sums.set(tid, unsafe { thread_partial(input, n) });
    sync_threads();
    let mut active = BLOCK / 2;
    while active > 0 {
        if tid < active {
            // SAFETY: tid + active < 2 * active <= BLOCK.
            unsafe {
                sums.set_unchecked(
                    tid,
                    sums.get_unchecked(tid) + sums.get_unchecked(tid + active),
                )
            };
        }
        sync_threads();
        active /= 2;
    }
    if tid == 0 {
        // SAFETY: one partial per block.
        unsafe { *partials.add(block_idx_x() as usize) = sums.get(0) };
    }
}

// Exported only with the `entries` feature; the simulator twins always exist.
#[cfg(any(feature = "entries", not(target_arch = "nvptx64")))]
nvptx_device::entry_points! {
    reduce_sum_tree(input: *const f32, n: u32, partials: *mut f32) => reduce_sum_tree;
}
