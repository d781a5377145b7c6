//! Rung 2, shared-memory cache blocking (siboehm's kernel 3): each block stages a `BS × BS`
//! tile of `a` and of `b` in shared memory per phase, so each global element is read once
//! per block instead of once per thread that needs it.
//!
//! The lecture's tiled kernel with rung 1's 1D thread indexing. Every FMA still needs two
//! shared loads, which caps it near the lecture's 9 TFLOP/s: the next rungs reuse registers.

use super::epilogue::Epilogue;
use super::global::store_out;
use super::{BlockTile, Geometry, at, cdiv};
use nvptx_device::intrinsics::fma;
use nvptx_device::shared_array;
use nvptx_device::thread::{self, sync_threads};

/// One output per thread of a `BS × BS` block tile, through shared tiles, zero-padded.
///
/// Launch with `BS * BS` threads per block (1D) on a `cdiv(n, BS) × cdiv(m, BS)` grid.
///
/// # Safety
/// See the [module contract](super).
#[inline(always)]
pub unsafe fn sgemm_shared_blocking<const BS: usize, E: Epilogue>(
    a: *const f32, b: *const f32, out: *mut f32, m: u32, n: u32, k: u32, epilogue: E,
) {
    let bs = BS as u32;
    let a_tile = shared_array!(f32; BS * BS);
    let b_tile = shared_array!(f32; BS * BS);
    let tile = BlockTile::of_block(bs, bs, m, n);
    let t = thread::thread_idx_x();
    let (tr, tc) = (t / bs, t % bs);
    let (row_in, col_in) = (tr < tile.rows_left, tc < tile.cols_left);
    let mut acc = 0.0f32;
    for phase in 0..cdiv(k, bs) {
        let k0 = phase * bs;
        // Every thread stores one element of each tile, zero outside the matrices.
        // SAFETY: each global read is guarded by its row and column bounds.
        let (av, bv) = unsafe {
            (
                if row_in && k0 + tc < k {
                    *a.add(at(tile.row0 + tr, k, k0 + tc))
                } else {
                    0.0
                },
                if k0 + tr < k && col_in {
                    *b.add(at(k0 + tr, n, tile.col0 + tc))
                } else {
                    0.0
                },
            )
        };
        // SAFETY: tr, tc < BS, so tr * BS + tc < BS * BS.
        unsafe {
            a_tile.set_unchecked(tr * bs + tc, av);
            b_tile.set_unchecked(tr * bs + tc, bv);
        }
        sync_threads();
        for i in 0..bs {
            // SAFETY: tr, tc, i < BS.
            let (x, y) = unsafe {
                (
                    a_tile.get_unchecked(tr * bs + i),
                    b_tile.get_unchecked(i * bs + tc),
                )
            };
            acc = fma(x, y, acc);
        }
        sync_threads();
    }
    if row_in && col_in {
        // SAFETY: inside out; this thread is the only writer of this element.
        unsafe { store_out(out, n, tile.row0 + tr, tile.col0 + tc, acc, &epilogue) };
    }
}

/// The launch geometry of [`sgemm_shared_blocking`]`::<bs>`: two `bs × bs` shared tiles.
pub const fn geometry(bs: usize) -> Geometry {
    Geometry::new(bs, bs, bs, bs * bs, 2 * bs * bs)
}
