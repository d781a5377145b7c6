//! Reductions along rows: `out[r] = op(x[r, 0], …, x[r, cols - 1])` for a row-major
//! `rows × cols` matrix (minitorch's `reduce(fn, dim=1)`).
//!
//! Each row is contiguous, so a group of [`row_group`] consecutive lanes of one warp reads it
//! with coalesced loads (16-byte ones where rows start 16-byte aligned, i.e. `cols % 4 ==
//! 0`), [`UNROLL`] independent accumulators per lane, and the group combines its lanes'
//! values with butterfly shuffles. A group is as wide as it needs to be for each lane to
//! have about [`UNROLL`] loads, at most a warp: short rows (64 floats) share a warp eight
//! rows to a warp, long ones get a whole warp each. The order of every combination is
//! fixed, so results are bit-identical run to run.

use super::{Op, UNROLL};
use nvptx_device::intrinsics::load_f32x4_nc;
use nvptx_device::thread::index_1d;
use nvptx_device::warp::{self, FULL_MASK, WARP_SIZE};

/// Loads per row a lane of a [`row_group`] aims for.
const LOADS_PER_LANE: u32 = UNROLL;

/// Lanes that reduce one row of `cols` floats: a power of two from 1 to 32, so that groups
/// tile warps exactly.
pub const fn row_group(cols: u32) -> u32 {
    let loads = if cols.is_multiple_of(4) {
        cols / 4
    } else {
        cols
    };
    let want = loads.div_ceil(LOADS_PER_LANE);
    let mut g = 1;
    while g < want && g < WARP_SIZE {
        g *= 2;
    }
    g
}

/// The combined values of one lane's share of a row: `row[j], row[j + g], …` in units of
/// `V` floats, in [`UNROLL`] accumulators.
///
/// # Safety
/// `row` points to `len` floats (`len % V == 0`), 16-byte aligned if `V == 4`.
#[inline(always)]
#[allow(clippy::needless_range_loop)] // register arrays: constant indices only
unsafe fn lane_share<const OP: u32, const V: usize>(
    row: *const f32, len: u32, j: u32, g: u32,
) -> f32 {
    let units = len / V as u32;
    let mut acc = [Op::<OP>::IDENTITY; UNROLL as usize];
    let load = |i: u32| -> f32 {
        if V == 4 {
            // SAFETY: unit i < units lies in the row, 16-byte aligned; x is never written.
            let v = unsafe { load_f32x4_nc(row.add(4 * i as usize)) };
            Op::<OP>::combine(Op::<OP>::combine(v[0], v[1]), Op::<OP>::combine(v[2], v[3]))
        } else {
            // SAFETY: i < len.
            unsafe { *row.add(i as usize) }
        }
    };
    let mut i = j;
    while i + (UNROLL - 1) * g < units {
        let mut v = [0.0f32; UNROLL as usize];
        for u in 0..UNROLL as usize {
            v[u] = load(i + u as u32 * g);
        }
        for u in 0..UNROLL as usize {
            acc[u] = Op::<OP>::combine(acc[u], v[u]);
        }
        i += UNROLL * g;
    }
    while i < units {
        acc[0] = Op::<OP>::combine(acc[0], load(i));
        i += g;
    }
    Op::<OP>::combine(
        Op::<OP>::combine(acc[0], acc[1]),
        Op::<OP>::combine(acc[2], acc[3]),
    )
}

/// `out[r] = op(row r) · scale` for every `r < rows` (`scale` is 1 for a sum or max, and
/// `1 / cols` for a mean).
///
/// Launch `ceil(rows · row_group(cols) / BLOCK)` blocks of [`BLOCK`](super::BLOCK) threads
/// (one thread per lane of a group).
///
/// # Safety
/// `x` points to `rows · cols` floats and is 16-byte aligned, `out` to `rows` floats;
/// `rows · row_group(cols)` fits in `u32`.
#[inline(always)]
pub unsafe fn reduce_rows<const OP: u32>(
    x: *const f32, rows: u32, cols: u32, scale: f32, out: *mut f32,
) {
    let g = row_group(cols);
    let lane = index_1d();
    let (r, j) = (lane / g, lane % g);
    let mut v = Op::<OP>::IDENTITY;
    if r < rows {
        let row = x.wrapping_add(r as usize * cols as usize);
        // SAFETY: row r holds cols floats; with cols % 4 == 0 it starts 16-byte aligned.
        v = unsafe {
            if cols.is_multiple_of(4) {
                lane_share::<OP, 4>(row, cols, j, g)
            } else {
                lane_share::<OP, 1>(row, cols, j, g)
            }
        };
    }
    // Every lane of every warp shuffles (groups past the last row carry the identity).
    let mut offset = g / 2;
    while offset > 0 {
        // SAFETY: the whole warp runs this loop: g is uniform and nothing returned early.
        let other = unsafe { warp::shuffle_xor(FULL_MASK, v, offset) };
        // The lower lane's value first in both lanes of the pair: the same bits in each.
        v = if j & offset == 0 {
            Op::<OP>::combine(v, other)
        } else {
            Op::<OP>::combine(other, v)
        };
        offset /= 2;
    }
    if r < rows && j == 0 {
        // SAFETY: r < rows; one writer per row.
        unsafe { *out.add(r as usize) = v * scale };
    }
}

// Exported only with the `entries` feature; the simulator twins always exist.
#[cfg(any(feature = "entries", not(target_arch = "nvptx64")))]
nvptx_device::entry_points! {
    reduce_rows_sum(x: *const f32, rows: u32, cols: u32, scale: f32, out: *mut f32) => reduce_rows::<{ crate::reduce::SUM }>;
    reduce_rows_max(x: *const f32, rows: u32, cols: u32, scale: f32, out: *mut f32) => reduce_rows::<{ crate::reduce::MAX }>;
}
