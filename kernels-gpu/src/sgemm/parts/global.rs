//! 16-byte global-memory stores, and the alignment test that decides whether a block may use
//! 16-byte accesses at all (the counterpart of [`nvptx_device::intrinsics::load_f32x4`]).

use crate::sgemm::epilogue::Epilogue;
use nvptx_device::intrinsics::{F32x2, F32x4, load_f32x4};

/// Writes `ptr[0..4]` with one 16-byte store (`st.global.v4`): a quarter of the store
/// instructions of the scalar epilogue, and whole 32-byte sectors per pair of lanes.
///
/// # Safety
/// `ptr` is 16-byte aligned and `ptr[0..4]` is writable by this thread alone.
#[inline(always)]
pub unsafe fn store_f32x4(ptr: *mut f32, v: [f32; 4]) {
    // SAFETY: the caller guarantees alignment, bounds and exclusive access.
    unsafe { *(ptr as *mut F32x4) = F32x4(v) }
}

/// Writes `ptr[0..2]` with one 8-byte store (`st.global.v2`), where rows are 8- but not
/// 16-byte aligned.
///
/// # Safety
/// `ptr` is 8-byte aligned and `ptr[0..2]` is writable by this thread alone.
#[inline(always)]
pub unsafe fn store_f32x2(ptr: *mut f32, v: [f32; 2]) {
    // SAFETY: the caller guarantees alignment, bounds and exclusive access.
    unsafe { *(ptr as *mut F32x2) = F32x2(v) }
}

/// Whether `ptr` is 16-byte aligned. Device allocations are (256 bytes), but the kernels do
/// not rely on it: a misaligned operand only loses the fast path.
#[inline(always)]
pub fn is_aligned16<T>(ptr: *const T) -> bool {
    ptr.addr().is_multiple_of(16)
}

/// Whether every row of a matrix of rows `ld` floats apart from `ptr` starts 16-byte aligned
/// (`ld % 4 == 0`, `ptr` aligned): what an operand or output needs for 16-byte accesses.
#[inline(always)]
pub fn rows_aligned16(ld: u32, ptr: *const f32) -> bool {
    ld.is_multiple_of(4) && is_aligned16(ptr)
}

/// Whether every row of a matrix of rows `ld` floats apart from `ptr` starts 8-byte aligned
/// (`ld` even, `ptr` 8-byte aligned): what 8-byte accesses to pairs of columns need.
#[inline(always)]
pub fn rows_aligned8(ld: u32, ptr: *const f32) -> bool {
    ld.is_multiple_of(2) && ptr.addr().is_multiple_of(8)
}

/// Writes the output `out[row, col]` for the product `acc` through `epilogue` (reading the
/// old value first if the epilogue needs it): the scalar store of every rung.
///
/// # Safety
/// `out` points to a row-major matrix with rows of `n` floats that contains `[row, col]`,
/// and this thread is the only one that reads or writes that element.
#[inline(always)]
pub unsafe fn store_out<E: Epilogue>(
    out: *mut f32, n: u32, row: u32, col: u32, acc: f32, epilogue: &E,
) {
    // SAFETY: [row, col] is inside out (caller).
    let p = unsafe { out.add(crate::sgemm::at(row, n, col)) };
    let old = if epilogue.reads_output() {
        // SAFETY: p is this thread's element of out.
        unsafe { *p }
    } else {
        0.0
    };
    // SAFETY: as above.
    unsafe { *p = epilogue.apply(row, col, acc, old) };
}

/// Writes the products `v` to `out[tile.row0 + r, tile.col0 + c ..+ 4]` through `epilogue`:
/// one 16-byte store (and load, if the epilogue reads the output) on the fast path, else each
/// element that lies inside `out`, one by one.
///
/// # Safety
/// `out` points to an `m × n` row-major matrix (the `m`, `n` that `tile` was made with) and
/// this thread is the only reader and writer of these four elements. If `fast`: the whole
/// block tile is inside `out` and contains `[r, c ..+ 4]`, `n % 4 == 0`, `c % 4 == 0`, and
/// `out` is 16-byte aligned.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn store_out4<E: Epilogue>(
    out: *mut f32, n: u32, tile: &crate::sgemm::BlockTile, r: u32, c: u32, v: [f32; 4], fast: bool,
    epilogue: &E,
) {
    let (row, col) = (tile.row0 + r, tile.col0 + c);
    if fast {
        // SAFETY: inside and aligned, by the fast-path contract.
        let p = unsafe { out.add(crate::sgemm::at(row, n, col)) };
        let old = if epilogue.reads_output() {
            // SAFETY: as above; this thread's four elements.
            unsafe { load_f32x4(p) }
        } else {
            [0.0; 4]
        };
        let mut w = [0.0f32; 4];
        crate::sgemm::parts::unroll::unroll!(4, |e| {
            w[e] = epilogue.apply(row, col + e as u32, v[e], old[e]);
        });
        // SAFETY: as above.
        unsafe { store_f32x4(p, w) };
    } else {
        crate::sgemm::parts::unroll::unroll!(4, |e| {
            let ce = c + e as u32;
            if r < tile.rows_left && ce < tile.cols_left {
                // SAFETY: [row, col + e] is inside out; this thread's element.
                unsafe { store_out(out, n, row, tile.col0 + ce, v[e], epilogue) };
            }
        });
    }
}
