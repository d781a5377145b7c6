//! Rung 4, 2D block tiling (siboehm's kernel 5): each thread computes a `TM × TN` tile of
//! outputs as a sum of outer products: per step it loads a column fragment of `TM` values of
//! `a` and a row fragment of `TN` values of `b` into registers and does `TM · TN` FMAs, so
//! shared loads per FMA drop to `1/TN + 1/TM` (a quarter at 8 × 8).

use super::epilogue::Epilogue;
use super::global::store_out;
use super::tile_io::load_tiles_scalar;
use super::unroll::unroll;
use super::{BlockTile, Geometry, cdiv};
use nvptx_device::intrinsics::fma;
use nvptx_device::shared_array;
use nvptx_device::thread::{self, sync_threads};

/// A `BM × BN` block tile, `BK`-deep shared tiles, a `TM × TN` register tile per thread.
///
/// Launch with `BM * BN / (TM * TN)` threads per block (1D) on a
/// `cdiv(n, BN) × cdiv(m, BM)` grid.
///
/// # Safety
/// See the [module contract](super).
#[inline(always)]
pub unsafe fn sgemm_blocktiling_2d<
    const BM: usize,
    const BN: usize,
    const BK: usize,
    const TM: usize,
    const TN: usize,
    E: Epilogue,
>(
    a: *const f32, b: *const f32, out: *mut f32, m: u32, n: u32, k: u32, epilogue: E,
) {
    let threads = BM * BN / (TM * TN);
    const {
        assert!(BM.is_multiple_of(TM) && BN.is_multiple_of(TN));
        assert!(
            (BM * BK).is_multiple_of(BM * BN / (TM * TN))
                && (BK * BN).is_multiple_of(BM * BN / (TM * TN))
        );
    }
    let (bm, bn, bk) = (BM as u32, BN as u32, BK as u32);
    let a_tile = shared_array!(f32; BM * BK); // a_tile[r * BK + c]
    let b_tile = shared_array!(f32; BK * BN); // b_tile[r * BN + c]
    let tile = BlockTile::of_block(bm, bn, m, n);
    let t = thread::thread_idx_x();
    // This thread's outputs: rows tr * TM .. + TM, columns tc * TN .. + TN of the tile.
    let (tr, tc) = (t / (bn / TN as u32), t % (bn / TN as u32));
    let (row_base, col_base) = (tr * TM as u32, tc * TN as u32);
    let mut acc = [[0.0f32; TN]; TM];
    for phase in 0..cdiv(k, bk) {
        let k0 = phase * bk;
        // SAFETY: the module contract's operands and block tile; the arrays hold one tile each.
        unsafe {
            load_tiles_scalar::<BM, BN, BK>(a, b, k, n, tile, k0, a_tile, b_tile, t, threads)
        };
        sync_threads();
        unroll!(BK, |dot| {
            let dot = dot as u32;
            let mut frag_a = [0.0f32; TM];
            let mut frag_b = [0.0f32; TN];
            unroll!(TM, |i| {
                // SAFETY: row_base + i < BM and dot < BK.
                frag_a[i] = unsafe { a_tile.get_unchecked((row_base + i as u32) * bk + dot) };
            });
            unroll!(TN, |j| {
                // SAFETY: dot < BK and col_base + j < BN.
                frag_b[j] = unsafe { b_tile.get_unchecked(dot * bn + col_base + j as u32) };
            });
            unroll!(TM, |i| {
                unroll!(TN, |j| acc[i][j] = fma(frag_a[i], frag_b[j], acc[i][j]));
            });
        });
        sync_threads();
    }
    unroll!(TM, |i| {
        let r = row_base + i as u32;
        unroll!(TN, |j| {
            let c = col_base + j as u32;
            if r < tile.rows_left && c < tile.cols_left {
                // SAFETY: inside out; this thread is the only writer of this element.
                unsafe { store_out(out, n, tile.row0 + r, tile.col0 + c, acc[i][j], &epilogue) };
            }
        });
    });
}

/// The launch geometry of [`sgemm_blocktiling_2d`] with the same parameters.
pub const fn geometry(bm: usize, bn: usize, bk: usize, tm: usize, tn: usize) -> Geometry {
    Geometry::new(bm, bn, bk, bm * bn / (tm * tn), bm * bk + bk * bn)
}
