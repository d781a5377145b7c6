//! Rung 8: rung 7's double-buffered loop with a padded, bank-conflict-free `a` tile.
//!
//! * The transposed `a` tile's rows are `LDA` floats apart (`BM + 4`) and each warp stores
//!   16 rows × 8 columns of it ([`PaddedTransposedTile`]), so its scalar shared stores are
//!   free of bank conflicts (2-way at `BK = 8`, 4-way at 16 in rung 7).
//! * Both operands' 16-byte global loads go through the read-only data path
//!   (`ld.global.nc.v4`, `LDG.E.128.CONSTANT`): `a` and `b` are never written by the kernel.
//!   (The same change to the loads, made in the same step: it needs the padded tile's
//!   register layout.)
//!
//! Its 128 × 256 and 256 × 128 tiles run one 256-thread block per SM.

use super::epilogue::Epilogue;
use super::global::{is_aligned16, rows_aligned16};
use super::tile_io::{PaddedTransposedTile, TileVectors, VecTile};
use super::warp_tile::{Acc, WarpTile, same_tile, warp_tiled};
use super::{BlockTile, Geometry, cdiv};
use nvptx_device::shared::SharedSlice;
use nvptx_device::shared_array;
use nvptx_device::thread::{self, sync_threads};

/// [`sgemm_double_buffered`](super::double_buffered::sgemm_double_buffered) with the padded,
/// conflict-free `a` tile and read-only loads (see the [module](self)); `LDA` is the padded
/// row length of the transposed `a` tile, and `GROUP > 0` takes the blocks in rung 9's
/// grouped order (0: launch order).
///
/// # Safety
/// See the [module contract](super); `out` does not overlap `a` or `b`.
#[warp_tiled]
#[inline(always)]
pub unsafe fn sgemm_double_buffered_padded<const LDA: usize, const GROUP: u32, E: Epilogue>(
    a: *const f32, b: *const f32, out: *mut f32, m: u32, n: u32, k: u32, epilogue: E,
) {
    let a_tile = shared_array!(f32; 2 * BK * LDA); // transposed: a_tile[stage][c * LDA + r]
    let b_tile = shared_array!(f32; 2 * BK * BN); // b_tile[stage][r * BN + c]
    let tile = BlockTile::ordered(BM as u32, BN as u32, m, n, GROUP);
    // SAFETY: the caller's contract; the arrays are the two stages of each tile.
    unsafe {
        same_tile!(sgemm_double_buffered_padded_in::<LDA, E>)(
            a_tile, b_tile, &tile, a, b, out, n, k, k, n, epilogue,
        )
    }
}

/// The body of [`sgemm_double_buffered_padded`] on shared tiles declared by the caller
/// (`a_tile`: at least `2 · BK · LDA` floats, `b_tile`: at least `2 · BK · BN`), for block
/// tile `tile`, with `a`'s rows `lda >= k` floats apart and `b`'s `ldb >= n`: the
/// multistage rung's loop for edge tiles and odd shapes where its block tile is 128 × 128
/// (see [`CHECKED_LOOP_MAX_OUTPUTS`](super::multistage::CHECKED_LOOP_MAX_OUTPUTS)), on its
/// arrays.
///
/// # Safety
/// As [`sgemm_double_buffered_padded`], `a` pointing to rows of `lda` floats and `b` to rows
/// of `ldb`; `tile` is this block's, the same in every thread; nothing else uses the arrays
/// while it runs, and every thread of the block calls it.
#[warp_tiled]
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn sgemm_double_buffered_padded_in<const LDA: usize, E: Epilogue>(
    a_tile: SharedSlice<f32>, b_tile: SharedSlice<f32>, tile: &BlockTile, a: *const f32,
    b: *const f32, out: *mut f32, n: u32, k: u32, lda: u32, ldb: u32, epilogue: E,
) {
    type ATile<const BM: usize, const BK: usize, const THREADS: usize, const LDA: usize> =
        PaddedTransposedTile<BM, BK, THREADS, LDA>;
    let (a_stage, b_stage) = ((BK * LDA) as u32, (BK * BN) as u32);
    let t = thread::thread_idx_x();
    let (vec_a, vec_b) = (rows_aligned16(lda, a), rows_aligned16(ldb, b));
    let warp = same_tile!(WarpTile);
    let origin = warp.thread_origin(t);
    let mut acc: Acc<WMITER, TM, WNITER, TN> = [[[[0.0; TN]; WNITER]; TM]; WMITER];

    // Prologue: tile 0 into stage 0.
    // SAFETY: as in `sgemm_double_buffered`; `a` and `b` are read-only during the kernel.
    unsafe {
        let sa = ATile::<BM, BK, THREADS, LDA>::load_nc(
            a,
            lda,
            tile.row0,
            0,
            tile.rows_left,
            k,
            vec_a,
            t,
        );
        let sb =
            VecTile::<BK, BN, THREADS>::load_nc(b, ldb, 0, tile.col0, k, tile.cols_left, vec_b, t);
        ATile::<BM, BK, THREADS, LDA>::store_transposed(a_tile, 0, &sa, t);
        VecTile::<BK, BN, THREADS>::store(b_tile, 0, &sb, t);
    }
    sync_threads();

    let tiles = cdiv(k, BK as u32);
    for phase in 0..tiles {
        let (stage, next) = (phase % 2, (phase + 1) % 2);
        // As in `sgemm_double_buffered`: no branch on "is there a next tile".
        let k1 = (phase + 1) * BK as u32; // < u32::MAX: k <= u32::MAX - 64 (host check)
        let k_left = k.saturating_sub(k1);
        let k1 = k1.min(k);
        // SAFETY: as in the prologue (nothing is read where k_left = 0).
        let (sa, sb) = unsafe {
            (
                ATile::<BM, BK, THREADS, LDA>::load_nc(
                    a,
                    lda,
                    tile.row0,
                    k1,
                    tile.rows_left,
                    k_left,
                    vec_a,
                    t,
                ),
                VecTile::<BK, BN, THREADS>::load_nc(
                    b,
                    ldb,
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
        // SAFETY: `stage` is complete; the slices start at the thread's origin in it, and
        // its `a` tile is `BK × LDA`.
        unsafe {
            warp.accumulate_ld::<LDA>(&mut acc, a_frags, b_frags);
        }
        // SAFETY: stage `next` was last read in the previous trip, before its barrier.
        unsafe {
            ATile::<BM, BK, THREADS, LDA>::store_transposed(a_tile, next * a_stage, &sa, t);
            VecTile::<BK, BN, THREADS>::store(b_tile, next * b_stage, &sb, t);
        }
        sync_threads();
    }
    let fast = tile.is_interior(BM as u32, BN as u32) && n.is_multiple_of(4) && is_aligned16(out);
    // SAFETY: `fast` is exactly the fast-path condition; `origin` is this thread's.
    unsafe { warp.store(&acc, out, n, tile, origin, fast, &epilogue) };
}

/// The launch geometry of [`sgemm_double_buffered_padded`] with the same parameters: two
/// stages of each shared tile, the `a` tile's rows `lda` floats apart.
#[allow(clippy::too_many_arguments)]
pub const fn geometry(
    bm: usize, bn: usize, bk: usize, _wm: usize, _wn: usize, _wmiter: usize, _wniter: usize,
    _tm: usize, _tn: usize, threads: usize, lda: usize, _group: usize,
) -> Geometry {
    Geometry::new(bm, bn, bk, threads, 2 * (bk * lda + bk * bn))
}
