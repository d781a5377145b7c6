//! Rung 6, warp tiling (siboehm's kernel 10, single-buffered): rung 5's vectorized tiles,
//! with the block's outputs spread over warps and threads as [`WarpTile`] describes, so that
//! each warp's fragment loads are conflict-free broadcasts within one warp tile and each
//! thread holds `WMITER·TM × WNITER·TN` accumulators.
//!
//! Per shared tile: load both tiles (16-byte where the block is interior), barrier, `BK`
//! steps of FMAs, barrier. Rung 7 overlaps the loads with the FMAs.

use super::epilogue::Epilogue;
use super::global::{is_aligned16, rows_aligned16};
use super::tile_io::{TileVectors, VecTile};
use super::warp_tile::{Acc, WarpTile, same_tile, warp_tiled};
use super::{BlockTile, Geometry, cdiv};
use nvptx_device::shared_array;
use nvptx_device::thread::{self, sync_threads};

/// The warp-tiled product; see [`WarpTile`] for the parameters.
///
/// Launch with `THREADS` threads per block (1D) on a `cdiv(n, BN) × cdiv(m, BM)` grid.
///
/// # Safety
/// See the [module contract](super).
#[warp_tiled]
#[inline(always)]
pub unsafe fn sgemm_warptiling<E: Epilogue>(
    a: *const f32, b: *const f32, out: *mut f32, m: u32, n: u32, k: u32, epilogue: E,
) {
    let a_tile = shared_array!(f32; BK * BM); // transposed: a_tile[c * BM + r]
    let b_tile = shared_array!(f32; BK * BN); // b_tile[r * BN + c]
    let tile = BlockTile::of_block(BM as u32, BN as u32, m, n);
    let t = thread::thread_idx_x();
    let (vec_a, vec_b) = (rows_aligned16(k, a), rows_aligned16(n, b));
    let warp = same_tile!(WarpTile);
    let origin = warp.thread_origin(t);
    let mut acc: Acc<WMITER, TM, WNITER, TN> = [[[[0.0; TN]; WNITER]; TM]; WMITER];
    let ((_, a_frags), (_, b_frags)) = (a_tile.split_at(origin.0), b_tile.split_at(origin.1));
    for phase in 0..cdiv(k, BK as u32) {
        let k0 = phase * BK as u32;
        // SAFETY: the loads stay inside the operands (bounds-checked, or the fast path for
        // interior tiles only); the shared arrays hold one BK-deep tile each.
        unsafe {
            let sa = VecTile::<BM, BK, THREADS>::load(
                a,
                k,
                tile.row0,
                k0,
                tile.rows_left,
                k - k0,
                vec_a,
                t,
            );
            let sb = VecTile::<BK, BN, THREADS>::load(
                b,
                n,
                k0,
                tile.col0,
                k - k0,
                tile.cols_left,
                vec_b,
                t,
            );
            VecTile::<BM, BK, THREADS>::store_transposed(a_tile, 0, &sa, t);
            VecTile::<BK, BN, THREADS>::store(b_tile, 0, &sb, t);
        }
        sync_threads();
        // SAFETY: both tiles are complete (barrier above); the slices start at the origin.
        unsafe { warp.accumulate(&mut acc, a_frags, b_frags) };
        sync_threads();
    }
    let fast = tile.is_interior(BM as u32, BN as u32) && n.is_multiple_of(4) && is_aligned16(out);
    // SAFETY: `fast` is exactly the fast-path condition; `origin` is this thread's.
    unsafe { warp.store(&acc, out, n, &tile, origin, fast, &epilogue) };
}

/// The launch geometry of [`sgemm_warptiling`] with the same parameters: one stage of each
/// shared tile.
#[allow(clippy::too_many_arguments)]
pub const fn geometry(
    bm: usize, bn: usize, bk: usize, _wm: usize, _wn: usize, _wmiter: usize, _wniter: usize,
    _tm: usize, _tn: usize, threads: usize,
) -> Geometry {
    Geometry::new(bm, bn, bk, threads, bk * bm + bk * bn)
}
