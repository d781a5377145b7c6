//! Rung 1, global memory coalescing (siboehm's kernel 2): one output per thread, straight
//! from global memory, with a 1D block whose consecutive threads take consecutive columns.
//!
//! A warp then reads one `a` element (a broadcast) and 32 consecutive `b` elements per step,
//! and writes 32 consecutive outputs: whole 128-byte lines, where a naive mapping of
//! `threadIdx.x` to rows would touch 32 lines per load. (The lecture's naive kernel already
//! maps `x` to columns in its 2D block; this is the same access pattern, written the way the
//! later rungs index their threads.)

use super::epilogue::Epilogue;
use super::global::store_out;
use super::{BlockTile, Geometry, at};
use nvptx_device::intrinsics::fma;
use nvptx_device::thread;

/// `out[r, c] = Σ_i a[r, i] · b[i, c]` for the thread's `(r, c)` in a `BS × BS` tile.
///
/// Launch with `BS * BS` threads per block (1D) on a `cdiv(n, BS) × cdiv(m, BS)` grid.
///
/// # Safety
/// See the [module contract](super).
#[inline(always)]
pub unsafe fn sgemm_coalesced<const BS: usize, E: Epilogue>(
    a: *const f32, b: *const f32, out: *mut f32, m: u32, n: u32, k: u32, epilogue: E,
) {
    let bs = BS as u32;
    let tile = BlockTile::of_block(bs, bs, m, n);
    let t = thread::thread_idx_x();
    let (tr, tc) = (t / bs, t % bs);
    if tr >= tile.rows_left || tc >= tile.cols_left {
        return;
    }
    let (r, c) = (tile.row0 + tr, tile.col0 + tc);
    // SAFETY: r < m and c < n, so both pointers start inside their matrix.
    let (row, mut col) = unsafe { (a.add(at(r, k, 0)), b.add(c as usize)) };
    let mut acc = 0.0f32;
    for i in 0..k {
        // SAFETY: i < k, so row[i] is a[r, i] and col points at b[i, c].
        acc = fma(unsafe { *row.add(i as usize) }, unsafe { *col }, acc);
        // The column pointer walk of the lecture's naive kernel: no multiply per step.
        col = col.wrapping_add(n as usize);
    }
    // SAFETY: r < m and c < n; this thread is the only writer of out[r, c].
    unsafe { store_out(out, n, r, c, acc, &epilogue) };
}

/// The launch geometry of [`sgemm_coalesced`]`::<bs>`.
pub const fn geometry(bs: usize) -> Geometry {
    Geometry::new(bs, bs, 0, bs * bs, 0)
}
