//! Rung 9: rung 8 with the blocks renumbered in groups of `GROUP` block rows
//! ([`BlockTile::of_block_grouped`]), so that blocks resident at the same time share a few
//! column panels of `b` and `GROUP` row panels of `a` in L2.

use super::padded::sgemm_double_buffered_padded_in;
use super::{BlockTile, Geometry};
use nvptx_device::shared_array;

/// [`sgemm_double_buffered_padded`](super::padded::sgemm_double_buffered_padded) with the
/// block order grouped by `GROUP > 0` block rows.
///
/// Launch with `THREADS` threads per block (1D) on a `cdiv(n, BN) × cdiv(m, BM)` grid.
///
/// # Safety
/// See the [module contract](super); `out` does not overlap `a` or `b`.
#[inline(always)]
pub unsafe fn sgemm_double_buffered_swizzled<
    const BM: usize,
    const BN: usize,
    const BK: usize,
    const WM: usize,
    const WN: usize,
    const WMITER: usize,
    const WNITER: usize,
    const TM: usize,
    const TN: usize,
    const THREADS: usize,
    const LDA: usize,
    const GROUP: u32,
>(
    a: *const f32, b: *const f32, out: *mut f32, m: u32, n: u32, k: u32,
) {
    let a_tile = shared_array!(f32; 2 * BK * LDA); // transposed: a_tile[stage][c * LDA + r]
    let b_tile = shared_array!(f32; 2 * BK * BN); // b_tile[stage][r * BN + c]
    let tile = BlockTile::of_block_grouped(BM as u32, BN as u32, m, n, GROUP);
    // SAFETY: the caller's contract; the arrays are the two stages of each tile.
    unsafe {
        sgemm_double_buffered_padded_in::<BM, BN, BK, WM, WN, WMITER, WNITER, TM, TN, THREADS, LDA>(
            a_tile, b_tile, &tile, a, b, out, n, k,
        )
    }
}

/// The launch geometry of [`sgemm_double_buffered_swizzled`] with the same parameters:
/// rung 8's (the block order changes nothing else).
#[allow(clippy::too_many_arguments)]
pub const fn geometry(
    bm: usize, bn: usize, bk: usize, _wm: usize, _wn: usize, _wmiter: usize, _wniter: usize,
    _tm: usize, _tn: usize, threads: usize, lda: usize, _group: usize,
) -> Geometry {
    super::padded::geometry(bm, bn, bk, 0, 0, 0, 0, 0, 0, threads, lda)
}
