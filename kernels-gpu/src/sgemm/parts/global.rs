//! 16-byte global-memory stores, and the alignment test that decides whether a block may use
//! 16-byte accesses at all (the counterpart of [`nvptx_device::intrinsics::load_f32x4`]).

use nvptx_device::intrinsics::F32x4;

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

/// Whether `ptr` is 16-byte aligned. Device allocations are (256 bytes), but the kernels do
/// not rely on it: a misaligned operand only loses the fast path.
#[inline(always)]
pub fn is_aligned16<T>(ptr: *const T) -> bool {
    ptr.addr().is_multiple_of(16)
}

/// Writes `v` to `out[tile.row0 + r, tile.col0 + c ..+ 4]`: one 16-byte store on the fast
/// path, else each element that lies inside `out`, one by one.
///
/// # Safety
/// `out` points to an `m × n` row-major matrix (the `m`, `n` that `tile` was made with) and
/// this thread is the only writer of these four elements. If `fast`: the whole block tile is
/// inside `out` and contains `[r, c ..+ 4]`, `n % 4 == 0`, `c % 4 == 0`, and `out` is 16-byte
/// aligned.
#[inline(always)]
pub unsafe fn store_out4(
    out: *mut f32, n: u32, tile: &crate::sgemm::BlockTile, r: u32, c: u32, v: [f32; 4], fast: bool,
) {
    if fast {
        // SAFETY: inside and aligned, by the fast-path contract.
        unsafe {
            store_f32x4(
                out.add(crate::sgemm::at(tile.row0 + r, n, tile.col0 + c)),
                v,
            )
        };
    } else {
        crate::sgemm::parts::unroll::unroll!(e in 4 => {
            let ce = c + e as u32;
            if r < tile.rows_left && ce < tile.cols_left {
                // SAFETY: [row0 + r, col0 + ce] is inside out.
                unsafe { *out.add(crate::sgemm::at(tile.row0 + r, n, tile.col0 + ce)) = v[e] };
            }
        });
    }
}
