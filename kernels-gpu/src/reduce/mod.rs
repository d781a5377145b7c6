//! Sum reduction, the minitorch slides' binary tree: each block sums a grid-strided share of
//! the input and writes one partial sum; a second launch of the same kernel with one block
//! sums the partials.
//!
//! | kernel | combine within the block |
//! |---|---|
//! | [`block_tree::reduce_sum_tree`] | shared-memory tree, a barrier per level |
//! | [`warp_shuffle::reduce_sum_warp`] | warp shuffles, then one shared word per warp |
//!
//! Both read the input as 16-byte vectors where they can (four floats per load, several loads
//! in flight per thread): a reduction is a pass over memory, and its speed is the speed of
//! that pass.

pub mod block_tree;
pub mod warp_shuffle;

use nvptx_device::intrinsics::load_f32x4;

/// Threads per block of both reduction kernels (a multiple of the warp size).
pub const BLOCK: u32 = 256;

/// Independent 16-byte loads each thread keeps in flight per loop trip.
pub const UNROLL: u32 = 4;

/// Most blocks of the first pass: one wave on current GPUs, and few enough partials for a
/// single block to finish them.
pub const MAX_BLOCKS: u32 = 1024;

/// The first pass's grid: enough blocks for each thread to have a few vectors, at most
/// [`MAX_BLOCKS`] (the kernels loop over the rest).
pub const GRID: nvptx_device::catalogue::GridRule = nvptx_device::catalogue::GridRule::Items {
    per_block: BLOCK * 4 * UNROLL,
    max_blocks: MAX_BLOCKS,
};

/// This thread's grid-strided share of `input[0..n]`, summed in f32.
///
/// Thread `t` of the grid sums vectors `t, t + T, t + 2T, ...` (`T` = threads in the grid)
/// in [`UNROLL`] independent accumulators, then the scalar tail.
///
/// # Safety
/// `input` points to `n` floats and is 16-byte aligned.
#[inline(always)]
#[allow(clippy::needless_range_loop)] // indexed on purpose: see the loop's comment
unsafe fn thread_partial(input: *const f32, n: u32) -> f32 {
    use nvptx_device::thread::{block_dim_x, block_idx_x, grid_dim_x, thread_idx_x};
    let threads = block_dim_x() * grid_dim_x();
    let t = block_idx_x() * block_dim_x() + thread_idx_x();
    let n4 = n / 4;
    let mut acc = [0.0f32; UNROLL as usize];
    let mut i = t;
    // Whole trips: UNROLL loads issued before any is used. Indexed loops with constant
    // bounds unroll into registers; iterator adaptors over the arrays (`zip`, by-value
    // `IntoIter`) left a local-memory copy in the loop and ran 4× slower.
    while i + (UNROLL - 1) * threads < n4 {
        let mut v = [[0.0f32; 4]; UNROLL as usize];
        for u in 0..UNROLL as usize {
            // SAFETY: vector i + u*threads < n4 is inside the input, and 16-byte aligned.
            v[u] = unsafe { load_f32x4(input.add(4 * (i + u as u32 * threads) as usize)) };
        }
        for u in 0..UNROLL as usize {
            let x = v[u];
            acc[u] += (x[0] + x[1]) + (x[2] + x[3]);
        }
        i += UNROLL * threads;
    }
    while i < n4 {
        // SAFETY: i < n4, aligned as above.
        let x = unsafe { load_f32x4(input.add(4 * i as usize)) };
        acc[0] += (x[0] + x[1]) + (x[2] + x[3]);
        i += threads;
    }
    // The last n % 4 floats, one per thread.
    let tail = n4 * 4 + t;
    if tail < n {
        // SAFETY: tail < n.
        acc[0] += unsafe { *input.add(tail as usize) };
    }
    (acc[0] + acc[1]) + (acc[2] + acc[3])
}
