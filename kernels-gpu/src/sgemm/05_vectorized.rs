//! Rung 5, vectorized memory access (siboehm's kernel 6): rung 4's `TM × TN` register tile,
//! with every access 16 bytes wide where it can be.
//!
//! * Global loads of both tiles are `ld.global.v4` ([`VecTile::load`]) and the outputs are
//!   written with `st.global.v4`, on the block-uniform fast path.
//! * The `a` tile is stored transposed (`a_tile[c][r]`, `BK × BM`), so a thread's `TM` values
//!   of one column are contiguous: its fragments of `a` and of `b` are both `ld.shared.v4`
//!   loads, `TM/4 + TN/4` of them per step instead of `TM + TN` scalar ones.

use super::epilogue::Epilogue;
use super::global::{is_aligned16, rows_aligned16, store_out4};
use super::tile_io::{TileVectors, VecTile};
use super::unroll::unroll;
use super::{BlockTile, Geometry, cdiv};
use nvptx_device::intrinsics::fma;
use nvptx_device::shared_array;
use nvptx_device::thread::{self, sync_threads};

/// A `BM × BN` block tile, `BK`-deep shared tiles, a `TM × TN` register tile per thread,
/// `THREADS = BM·BN / (TM·TN)` threads.
///
/// Launch with `THREADS` threads per block (1D) on a `cdiv(n, BN) × cdiv(m, BM)` grid.
///
/// # Safety
/// See the [module contract](super).
#[inline(always)]
pub unsafe fn sgemm_vectorized<
    const BM: usize,
    const BN: usize,
    const BK: usize,
    const TM: usize,
    const TN: usize,
    const THREADS: usize,
    E: Epilogue,
>(
    a: *const f32, b: *const f32, out: *mut f32, m: u32, n: u32, k: u32, epilogue: E,
) {
    const {
        assert!(
            THREADS * TM * TN == BM * BN
                && TM.is_multiple_of(4)
                && TN.is_multiple_of(4)
                && BK.is_multiple_of(4)
        );
    }
    let (bm, bn, bk) = (BM as u32, BN as u32, BK as u32);
    let a_tile = shared_array!(f32; BK * BM); // transposed: a_tile[c * BM + r]
    let b_tile = shared_array!(f32; BK * BN); // b_tile[r * BN + c]
    let tile = BlockTile::of_block(bm, bn, m, n);
    let t = thread::thread_idx_x();
    let (vec_a, vec_b) = (rows_aligned16(k, a), rows_aligned16(n, b));
    // This thread's outputs: rows tr * TM .. + TM, columns tc * TN .. + TN of the tile.
    let (tr, tc) = (t / (bn / TN as u32), t % (bn / TN as u32));
    let (row_base, col_base) = (tr * TM as u32, tc * TN as u32);
    let mut acc = [[0.0f32; TN]; TM];
    // The thread's fragments start here: each load below is this base plus a constant.
    let ((_, a_frags), (_, b_frags)) = (a_tile.split_at(row_base), b_tile.split_at(col_base));
    for phase in 0..cdiv(k, bk) {
        let k0 = phase * bk;
        // SAFETY: the tiles are inside the module contract's operands (the loads check the
        // bounds, or take the fast path only for interior tiles); the shared arrays hold
        // BK * BM and BK * BN words.
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
        unroll!(BK, |dot| {
            let dot = dot as u32;
            let mut frag_a = [0.0f32; TM];
            let mut frag_b = [0.0f32; TN];
            unroll!(TM / 4, |i| {
                // SAFETY: row_base + dot * BM + 4i + 4 <= BK * BM, 16-byte aligned.
                let v = unsafe { a_frags.get4_unchecked(dot * bm + 4 * i as u32) };
                unroll!(4, |e| frag_a[4 * i + e] = v[e]);
            });
            unroll!(TN / 4, |j| {
                // SAFETY: col_base + dot * BN + 4j + 4 <= BK * BN, 16-byte aligned.
                let v = unsafe { b_frags.get4_unchecked(dot * bn + 4 * j as u32) };
                unroll!(4, |e| frag_b[4 * j + e] = v[e]);
            });
            unroll!(TM, |i| {
                unroll!(TN, |j| acc[i][j] = fma(frag_a[i], frag_b[j], acc[i][j]));
            });
        });
        sync_threads();
    }
    let fast = tile.is_interior(bm, bn) && n.is_multiple_of(4) && is_aligned16(out);
    unroll!(TM, |i| {
        unroll!(TN / 4, |j| {
            let v = [
                acc[i][4 * j],
                acc[i][4 * j + 1],
                acc[i][4 * j + 2],
                acc[i][4 * j + 3],
            ];
            let (r, c) = (row_base + i as u32, col_base + 4 * j as u32);
            // SAFETY: this thread alone writes these outputs; `fast` is the fast-path check.
            unsafe { store_out4(out, n, &tile, r, c, v, fast, &epilogue) };
        });
    });
}

/// The launch geometry of [`sgemm_vectorized`] with the same parameters.
pub const fn geometry(
    bm: usize, bn: usize, bk: usize, _tm: usize, _tn: usize, threads: usize,
) -> Geometry {
    Geometry::new(bm, bn, bk, threads, bk * bm + bk * bn)
}
