//! Reductions, as minitorch has them: the flat sum of a whole tensor, and sum, max or mean
//! along one dimension of a row-major 2-D tensor.
//!
//! The flat sum is the slides' binary tree: each block sums a grid-strided share of the
//! input and writes one partial sum; a second launch of the same kernel with one block sums
//! the partials.
//!
//! | kernel | what | combine within the block |
//! |---|---|---|
//! | [`block_tree::reduce_sum_tree`] | flat sum | shared-memory tree, a barrier per level |
//! | [`warp_shuffle::reduce_sum_warp`] | flat sum | warp shuffles, then one shared word per warp |
//! | [`rows::reduce_rows`] | sum or max of each row (`dim=1`) | shuffles within a group of lanes per row |
//! | [`cols::reduce_cols`] | sum or max of each column (`dim=0`) | a shared-memory tree over the rows' lanes, then a second pass over row segments |
//!
//! A mean is the sum times `1 / len`, passed to the 2-D kernels as `scale`. Max propagates
//! NaN (a row or column with a NaN has NaN for its max, as IEEE 754-2019 `maximum` and
//! `torch.max` have it) and orders -0 below +0.
//!
//! Both read the input as 16-byte vectors where they can (four floats per load, several loads
//! in flight per thread): a reduction is a pass over memory, and its speed is the speed of
//! that pass.

pub mod block_tree;
pub mod cols;
pub mod rows;
pub mod warp_shuffle;

use nvptx_device::intrinsics::{load_f32x4, max_nan};

/// [`Op`] of a sum (and mean).
pub const SUM: u32 = 0;
/// [`Op`] of a max.
pub const MAX: u32 = 1;

/// The combining operation of a 2-D reduction, [`SUM`] or [`MAX`], chosen at compile time.
pub struct Op<const OP: u32>;

impl<const OP: u32> Op<OP> {
    /// The value that changes nothing: 0 for a sum, -∞ for a max.
    pub const IDENTITY: f32 = if OP == MAX { f32::NEG_INFINITY } else { 0.0 };

    /// `a + b`, or the NaN-propagating max of `a` and `b`.
    #[inline(always)]
    pub fn combine(a: f32, b: f32) -> f32 {
        if OP == MAX { max_nan(a, b) } else { a + b }
    }
}

/// Threads per block of every reduction kernel (a multiple of the warp size).
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
