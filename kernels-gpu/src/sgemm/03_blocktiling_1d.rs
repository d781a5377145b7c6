//! Rung 3, 1D block tiling (siboehm's kernel 4): each thread computes a column of `TM`
//! outputs, so the `b` value of each step is loaded from shared memory once and used `TM`
//! times from a register. Shared loads per FMA drop from 2 to `1 + 1/TM`.

use super::epilogue::Epilogue;
use super::global::store_out;
use super::tile_io::load_tiles_scalar;
use super::unroll::unroll;
use super::{BlockTile, Geometry, cdiv};
use nvptx_device::intrinsics::fma;
use nvptx_device::shared_array;
use nvptx_device::thread::{self, sync_threads};

/// A `BM × BN` block tile, `BK`-deep shared tiles, `TM` outputs per thread.
///
/// Launch with `BM * BN / TM` threads per block (1D) on a `cdiv(n, BN) × cdiv(m, BM)` grid.
///
/// # Safety
/// See the [module contract](super).
#[inline(always)]
pub unsafe fn sgemm_blocktiling_1d<
    const BM: usize,
    const BN: usize,
    const BK: usize,
    const TM: usize,
    E: Epilogue,
>(
    a: *const f32, b: *const f32, out: *mut f32, m: u32, n: u32, k: u32, epilogue: E,
) {
    let threads = BM * BN / TM;
    const {
        assert!(
            BM.is_multiple_of(TM)
                && (BM * BK).is_multiple_of(BM * BN / TM)
                && (BK * BN).is_multiple_of(BM * BN / TM)
        );
    }
    let (bm, bn, bk) = (BM as u32, BN as u32, BK as u32);
    let a_tile = shared_array!(f32; BM * BK); // a_tile[r * BK + c]
    let b_tile = shared_array!(f32; BK * BN); // b_tile[r * BN + c]
    let tile = BlockTile::of_block(bm, bn, m, n);
    let t = thread::thread_idx_x();
    // This thread's outputs: rows tr * TM .. + TM of the tile, column tc.
    let (tr, tc) = (t / bn, t % bn);
    let mut acc = [0.0f32; TM];
    for phase in 0..cdiv(k, bk) {
        let k0 = phase * bk;
        // SAFETY: the module contract's operands and block tile; the arrays hold one tile each.
        unsafe {
            load_tiles_scalar::<BM, BN, BK>(a, b, k, n, tile, k0, a_tile, b_tile, t, threads)
        };
        sync_threads();
        unroll!(BK, |dot| {
            let dot = dot as u32;
            // SAFETY: dot < BK and tc < BN.
            let y = unsafe { b_tile.get_unchecked(dot * bn + tc) };
            unroll!(TM, |i| {
                // SAFETY: tr * TM + i < BM and dot < BK.
                let x = unsafe { a_tile.get_unchecked((tr * TM as u32 + i as u32) * bk + dot) };
                acc[i] = fma(x, y, acc[i]);
            });
        });
        sync_threads();
    }
    unroll!(TM, |i| {
        let r = tr * TM as u32 + i as u32;
        if r < tile.rows_left && tc < tile.cols_left {
            // SAFETY: inside out; this thread is the only writer of this element.
            unsafe { store_out(out, n, tile.row0 + r, tile.col0 + tc, acc[i], &epilogue) };
        }
    });
}

/// The launch geometry of [`sgemm_blocktiling_1d`] with the same parameters.
pub const fn geometry(bm: usize, bn: usize, bk: usize, tm: usize) -> Geometry {
    Geometry::new(bm, bn, bk, bm * bn / tm, bm * bk + bk * bn)
}
