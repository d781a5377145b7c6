//! Reductions along columns: `out[c] = op(x[0, c], …, x[rows - 1, c])` for a row-major
//! `rows × cols` matrix (minitorch's `reduce(fn, dim=0)`).
//!
//! Threads run across columns, so each row's slice is one coalesced read (16-byte loads of
//! four columns where `cols % 4 == 0`). A block is [`column_lanes`] threads across columns
//! by `BLOCK / column_lanes` across rows, and covers one segment of rows: the threads of a
//! column take every so-many rows of the segment in [`UNROLL`] accumulators, then combine
//! through shared memory in a fixed tree. With more than one segment, each block writes a
//! partial row and a second launch of the same kernel, over the `segments × cols`
//! partials as one segment, combines them — in a fixed order, so results are bit-identical
//! run to run (no atomics). [`column_plan`] picks the segments.

use super::{BLOCK, Op, UNROLL};
use nvptx_device::intrinsics::{F32x4, load_f32x4_nc};
use nvptx_device::shared::SharedSlice;
use nvptx_device::shared_array;
use nvptx_device::thread::{block_idx_x, block_idx_y, sync_threads, thread_idx_x};

/// Blocks a first pass aims for: a few per SM on current GPUs.
const TARGET_BLOCKS: u32 = 2048;
/// Rows each thread should at least take before rows are split into more segments.
const MIN_ROWS_PER_THREAD: u32 = 32;
/// The most segments (a grid's y extent is at most 65535).
const MAX_SEGMENTS: u32 = 4096;

/// Floats per column unit: 4 (one 16-byte load) where rows start 16-byte aligned, else 1.
pub const fn column_vector(cols: u32) -> u32 {
    if cols.is_multiple_of(4) { 4 } else { 1 }
}

/// Threads across columns in a block: the column units rounded up to a power of two, at
/// most [`BLOCK`].
pub const fn column_lanes(cols: u32) -> u32 {
    let units = cols / column_vector(cols);
    let mut c = 1;
    while c < units && c < BLOCK {
        c *= 2;
    }
    c
}

/// How a column reduction of a `rows × cols` matrix is split.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ColumnPlan {
    /// Blocks across columns (the grid's x).
    pub col_blocks: u32,
    /// Row segments (the grid's y); more than one needs the second pass.
    pub segments: u32,
    /// Rows per segment (the last may have fewer).
    pub rows_per_segment: u32,
}

/// The split of a `rows × cols` column reduction: segments enough for about
/// `TARGET_BLOCKS` blocks, as long as each thread keeps at least `MIN_ROWS_PER_THREAD`
/// rows.
pub const fn column_plan(rows: u32, cols: u32) -> ColumnPlan {
    let lanes = column_lanes(cols);
    let units = cols / column_vector(cols);
    let col_blocks = if units == 0 { 1 } else { units.div_ceil(lanes) };
    let row_lanes = BLOCK / lanes;
    let mut segments = TARGET_BLOCKS.div_ceil(col_blocks);
    let most = rows.div_ceil(row_lanes * MIN_ROWS_PER_THREAD);
    if segments > most {
        segments = most;
    }
    if segments > MAX_SEGMENTS {
        segments = MAX_SEGMENTS;
    }
    if segments == 0 {
        segments = 1;
    }
    let rows_per_segment = if rows == 0 {
        1
    } else {
        rows.div_ceil(segments)
    };
    ColumnPlan {
        col_blocks,
        segments: if rows == 0 {
            1
        } else {
            rows.div_ceil(rows_per_segment)
        },
        rows_per_segment,
    }
}

/// `V` floats combined element-wise.
#[inline(always)]
fn combine_v<const OP: u32, const V: usize>(a: [f32; V], b: [f32; V]) -> [f32; V] {
    let mut o = a;
    for i in 0..V {
        o[i] = Op::<OP>::combine(a[i], b[i]);
    }
    o
}

/// Column unit `unit`'s value over rows `r0 + ty, r0 + ty + step, …` below `r1`.
///
/// # Safety
/// `x` holds `rows · cols` floats with `r1 <= rows`, 16-byte aligned; `unit` is a column
/// unit (`V · unit < cols`).
#[inline(always)]
#[allow(clippy::needless_range_loop)] // register arrays: constant indices only
unsafe fn column_share<const OP: u32, const V: usize>(
    x: *const f32, cols: u32, unit: u32, first: u32, r1: u32, step: u32,
) -> [f32; V] {
    let mut acc = [[Op::<OP>::IDENTITY; V]; UNROLL as usize];
    let load = |r: u32| -> [f32; V] {
        let p = x.wrapping_add(r as usize * cols as usize + V * unit as usize);
        let mut v = [0.0f32; V];
        if V == 4 {
            // SAFETY: row r's unit lies in x, 16-byte aligned (cols % 4 == 0); x is never
            // written.
            v.copy_from_slice(&unsafe { load_f32x4_nc(p) });
        } else {
            // SAFETY: as above.
            v[0] = unsafe { *p };
        }
        v
    };
    let mut r = first;
    while r + (UNROLL - 1) * step < r1 {
        let mut v = [[0.0f32; V]; UNROLL as usize];
        for u in 0..UNROLL as usize {
            v[u] = load(r + u as u32 * step);
        }
        for u in 0..UNROLL as usize {
            acc[u] = combine_v::<OP, V>(acc[u], v[u]);
        }
        r += UNROLL * step;
    }
    while r < r1 {
        acc[0] = combine_v::<OP, V>(acc[0], load(r));
        r += step;
    }
    combine_v::<OP, V>(
        combine_v::<OP, V>(acc[0], acc[1]),
        combine_v::<OP, V>(acc[2], acc[3]),
    )
}

/// The block's body for column units of `V` floats.
///
/// # Safety
/// As [`reduce_cols`].
#[inline(always)]
unsafe fn reduce_cols_v<const OP: u32, const V: usize>(
    x: *const f32, rows: u32, cols: u32, rows_per_segment: u32, scale: f32, out: *mut f32,
    partial: SharedSlice<f32>,
) {
    let lanes = column_lanes(cols);
    let row_lanes = BLOCK / lanes;
    let t = thread_idx_x();
    let (tx, ty) = (t % lanes, t / lanes);
    let unit = block_idx_x() * lanes + tx;
    let segment = block_idx_y();
    let r0 = segment * rows_per_segment;
    let r1 = if rows - r0 < rows_per_segment {
        rows
    } else {
        r0 + rows_per_segment
    };
    let in_range = V as u32 * unit < cols;
    let mut v = [Op::<OP>::IDENTITY; V];
    if in_range {
        // SAFETY: r1 <= rows, unit is a column unit.
        v = unsafe { column_share::<OP, V>(x, cols, unit, r0 + ty, r1, row_lanes) };
    }
    // The row lanes' values, combined in a fixed tree; every thread reaches every barrier.
    let mut stride = row_lanes / 2;
    while stride > 0 {
        if ty >= stride && ty < 2 * stride {
            for (i, &vi) in v.iter().enumerate() {
                partial.set(((ty - stride) * lanes + tx) * V as u32 + i as u32, vi);
            }
        }
        sync_threads();
        if ty < stride {
            let mut other = [0.0f32; V];
            for (i, oi) in other.iter_mut().enumerate() {
                *oi = partial.get((ty * lanes + tx) * V as u32 + i as u32);
            }
            v = combine_v::<OP, V>(v, other);
        }
        sync_threads();
        stride /= 2;
    }
    if ty == 0 && in_range {
        let at = segment as usize * cols as usize + V * unit as usize;
        let mut o = [0.0f32; V];
        for (oi, &vi) in o.iter_mut().zip(&v) {
            *oi = vi * scale;
        }
        if V == 4 {
            // SAFETY: out holds segments · cols floats, 16-byte aligned, cols % 4 == 0; one
            // writer per unit and segment.
            unsafe { *(out.add(at) as *mut F32x4) = F32x4([o[0], o[1], o[2], o[3]]) };
        } else {
            // SAFETY: as above.
            unsafe { *out.add(at) = o[0] };
        }
    }
}

/// `out[s · cols + c] = op(x[r, c] for r in segment s) · scale` (`scale` is 1 for a sum or
/// max and for a first pass, `1 / rows` for a mean's last pass).
///
/// Launch a grid of `col_blocks × segments` blocks of [`BLOCK`] threads for a
/// `rows_per_segment` from [`column_plan`] (a last pass: one segment of all rows).
///
/// # Safety
/// `x` points to `rows · cols` floats, `out` to `segments · cols`, both 16-byte aligned;
/// `rows_per_segment · gridDim.y >= rows`; `rows · cols` fits in `u32`.
#[inline(always)]
pub unsafe fn reduce_cols<const OP: u32>(
    x: *const f32, rows: u32, cols: u32, rows_per_segment: u32, scale: f32, out: *mut f32,
) {
    // One array for both unit widths: one call site per kernel.
    let partial = shared_array!(f32; BLOCK * 4);
    // SAFETY: forwarded contract; the unit width follows the rows' alignment.
    unsafe {
        if column_vector(cols) == 4 {
            reduce_cols_v::<OP, 4>(x, rows, cols, rows_per_segment, scale, out, partial)
        } else {
            reduce_cols_v::<OP, 1>(x, rows, cols, rows_per_segment, scale, out, partial)
        }
    }
}

// Exported only with the `entries` feature; the simulator twins always exist.
#[cfg(any(feature = "entries", not(target_arch = "nvptx64")))]
nvptx_device::entry_points! {
    reduce_cols_sum(x: *const f32, rows: u32, cols: u32, rows_per_segment: u32, scale: f32, out: *mut f32) => reduce_cols::<{ crate::reduce::SUM }>;
    reduce_cols_max(x: *const f32, rows: u32, cols: u32, rows_per_segment: u32, scale: f32, out: *mut f32) => reduce_cols::<{ crate::reduce::MAX }>;
}
