//! Rung 7: rung 6's warp tiling with two shared stages and register prefetch
//! (double buffering), so global-memory latency hides behind the FMAs and each shared tile
//! costs one barrier instead of two.
//!
//! Per tile `p`: issue the global loads of tile `p + 1` into registers, run the `BK` steps
//! of FMAs on stage `p % 2`, store the registers into stage `(p + 1) % 2`, barrier. The
//! stage being written was last read in tile `p − 1`, before the previous barrier; the stage
//! being read was written before it. (The simulator checks exactly that.)
//!
//! Shared memory is `2 · BK · (BM + BN) · 4` bytes: 16 KiB at `BK = 8`, 32 KiB at 16, within
//! the 48 KiB every launch may use without opting in. The host autotunes among the configs
//! below (`kernels_gpu_host::gpu::autotune`).
//!
//! Rung 8 ([`super::padded`]) keeps this loop and makes its shared stores conflict-free.

use super::epilogue::Epilogue;
use super::global::{is_aligned16, rows_aligned16};
use super::tile_io::{TileVectors, VecTile};
use super::warp_tile::{Acc, WarpTile, same_tile, warp_tiled};
use super::{BlockTile, Geometry, cdiv};
use nvptx_device::shared_array;
use nvptx_device::thread::{self, sync_threads};

/// The double-buffered warp-tiled product; see [`WarpTile`] for the parameters.
///
/// Launch with `THREADS` threads per block (1D) on a `cdiv(n, BN) × cdiv(m, BM)` grid.
///
/// # Safety
/// See the [module contract](super).
#[warp_tiled]
#[inline(always)]
pub unsafe fn sgemm_double_buffered<E: Epilogue>(
    a: *const f32, b: *const f32, out: *mut f32, m: u32, n: u32, k: u32, epilogue: E,
) {
    // Two stages each: stage s starts at s * BK * BM (resp. s * BK * BN).
    let a_tile = shared_array!(f32; 2 * BK * BM); // transposed: a_tile[stage][c * BM + r]
    let b_tile = shared_array!(f32; 2 * BK * BN); // b_tile[stage][r * BN + c]
    let (a_stage, b_stage) = ((BK * BM) as u32, (BK * BN) as u32);
    let tile = BlockTile::of_block(BM as u32, BN as u32, m, n);
    let t = thread::thread_idx_x();
    let (vec_a, vec_b) = (rows_aligned16(k, a), rows_aligned16(n, b));
    let warp = same_tile!(WarpTile);
    let origin = warp.thread_origin(t);
    let mut acc: Acc<WMITER, TM, WNITER, TN> = [[[[0.0; TN]; WNITER]; TM]; WMITER];

    // Prologue: tile 0 into stage 0.
    // SAFETY: the loads stay inside the operands (bounds-checked, or the fast path for
    // interior tiles only); stage 0 holds one tile of each.
    unsafe {
        let sa = VecTile::<BM, BK, THREADS>::load(a, k, tile.row0, 0, tile.rows_left, k, vec_a, t);
        let sb = VecTile::<BK, BN, THREADS>::load(b, n, 0, tile.col0, k, tile.cols_left, vec_b, t);
        VecTile::<BM, BK, THREADS>::store_transposed(a_tile, 0, &sa, t);
        VecTile::<BK, BN, THREADS>::store(b_tile, 0, &sb, t);
    }
    sync_threads();

    let tiles = cdiv(k, BK as u32);
    for phase in 0..tiles {
        let (stage, next) = (phase % 2, (phase + 1) % 2);
        // The next tile's global loads go first, so they are in flight during the FMAs. On
        // the last trip there is no next tile: `k_left = 0` makes the load all zeros without
        // touching memory, and the store fills a stage nobody reads. No branch on "is there a
        // next tile" means LLVM has no reason to duplicate the FMA block on both sides of one
        // (it did: twice the code, for nothing).
        let k1 = (phase + 1) * BK as u32; // < u32::MAX: k <= u32::MAX - 64 (host check)
        let k_left = k.saturating_sub(k1);
        let k1 = k1.min(k);
        // SAFETY: as in the prologue (nothing is read where k_left = 0).
        let (sa, sb) = unsafe {
            (
                VecTile::<BM, BK, THREADS>::load(
                    a,
                    k,
                    tile.row0,
                    k1,
                    tile.rows_left,
                    k_left,
                    vec_a,
                    t,
                ),
                VecTile::<BK, BN, THREADS>::load(
                    b,
                    n,
                    k1,
                    tile.col0,
                    k_left,
                    tile.cols_left,
                    vec_b,
                    t,
                ),
            )
        };
        let (_, a_frags) = a_tile.split_at(stage * a_stage + origin.0);
        let (_, b_frags) = b_tile.split_at(stage * b_stage + origin.1);
        // SAFETY: `stage` is complete (barrier at the end of the previous trip or after the
        // prologue); the slices start at the thread's origin in that stage.
        unsafe {
            warp.accumulate(&mut acc, a_frags, b_frags);
        }
        // SAFETY: stage `next` was last read in the previous trip, before its barrier.
        unsafe {
            VecTile::<BM, BK, THREADS>::store_transposed(a_tile, next * a_stage, &sa, t);
            VecTile::<BK, BN, THREADS>::store(b_tile, next * b_stage, &sb, t);
        }
        sync_threads();
    }
    let fast = tile.is_interior(BM as u32, BN as u32) && n.is_multiple_of(4) && is_aligned16(out);
    // SAFETY: `fast` is exactly the fast-path condition; `origin` is this thread's.
    unsafe { warp.store(&acc, out, n, &tile, origin, fast, &epilogue) };
}

/// The launch geometry of [`sgemm_double_buffered`] with the same parameters: two stages
/// of each shared tile.
#[allow(clippy::too_many_arguments)]
pub const fn geometry(
    bm: usize, bn: usize, bk: usize, _wm: usize, _wn: usize, _wmiter: usize, _wniter: usize,
    _tm: usize, _tn: usize, threads: usize,
) -> Geometry {
    Geometry::new(bm, bn, bk, threads, 2 * (bk * bm + bk * bn))
}
