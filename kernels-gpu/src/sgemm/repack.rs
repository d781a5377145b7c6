//! Repacking a matrix into rows of another length: the copy that puts an operand whose rows
//! are not 16-byte aligned (`k` or `n` not a multiple of 4) into rows that are, padded with
//! zeros, so that every block of a product runs the rungs' 16-byte fast path; and the copy
//! of such a product's output back into the caller's rows.
//!
//! [`sgemm_repack`] writes a dense `rows × cols` matrix from the top-left
//! `src_rows × src_cols` of a matrix whose rows are `ld` floats apart, zero past it. Zero
//! columns and rows appended to the depth `k` of both operands add exact zero products at
//! the end of each FMA chain, which the rungs add anyway for a partial last k-tile (they
//! zero-fill it), so a product of repacked operands has the bits of the plain one.

use super::global::is_aligned16;
use super::unroll::unroll;
#[cfg(not(target_arch = "nvptx64"))]
use nvptx_device::catalogue::KernelSpec;
use nvptx_device::intrinsics::F32x4;
use nvptx_device::thread;

/// Threads per block of [`sgemm_repack`], each writing four consecutive floats of a row.
pub const REPACK_BLOCK: u32 = 256;

/// Thread `t`'s four outputs `dst[r·cols + c ..+ 4]` (fewer at the end of a row):
/// `src[r·ld + c]` where `r < src_rows` and `c < src_cols`, else zero. Row `r` and column
/// `c = 4·(t % quads)` come from the thread's index, with `quads = cdiv(cols, 4)`; one
/// 16-byte store where `cols % 4 == 0` and `dst` is 16-byte aligned.
///
/// Launch 1D with `cdiv(rows · cdiv(cols, 4), REPACK_BLOCK)` blocks of [`REPACK_BLOCK`].
///
/// # Safety
/// `src` holds `src_rows` rows of `ld >= src_cols` floats (the last one at least
/// `src_cols`); `dst` holds `rows · cols` floats and does not overlap `src`;
/// `rows · cdiv(cols, 4)` and `src_rows · ld` fit `u32`.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn sgemm_repack(
    src: *const f32, ld: u32, src_rows: u32, src_cols: u32, dst: *mut f32, rows: u32, cols: u32,
) {
    let quads = cols.div_ceil(4);
    let t = thread::index_1d();
    if quads == 0 || t >= rows * quads {
        return;
    }
    let (r, c0) = (t / quads, 4 * (t % quads));
    let mut v = [0.0f32; 4];
    unroll!(e in 4 => {
        let c = c0 + e as u32;
        if r < src_rows && c < src_cols {
            // SAFETY: r < src_rows and c < src_cols <= ld: inside `src`.
            v[e] = unsafe { *src.add((r * ld + c) as usize) };
        }
    });
    let at = r as usize * cols as usize + c0 as usize;
    if cols.is_multiple_of(4) && is_aligned16(dst) {
        // SAFETY: c0 + 4 <= cols, so the four floats are inside row r of `dst`, and the
        // address is 16-byte aligned (cols and c0 multiples of 4, dst aligned).
        unsafe { *(dst.add(at) as *mut F32x4) = F32x4(v) };
    } else {
        unroll!(e in 4 => {
            if c0 + (e as u32) < cols {
                // SAFETY: c0 + e < cols: inside row r of `dst`.
                unsafe { *dst.add(at + e) = v[e] };
            }
        });
    }
}

/// How to launch [`sgemm_repack`] for a `rows × cols` destination (as items: its
/// `rows · cdiv(cols, 4)` quads). (Host only, as the catalogue.)
#[cfg(not(target_arch = "nvptx64"))]
pub const REPACK: KernelSpec = KernelSpec::items(
    "sgemm_repack",
    entry::params::sgemm_repack,
    REPACK_BLOCK,
    REPACK_BLOCK,
);

// Exported only with the `entries` feature; the simulator twins always exist.
#[cfg(any(feature = "entries", not(target_arch = "nvptx64")))]
nvptx_device::entry_points! {
    sgemm_repack(
        src: *const f32, ld: u32, src_rows: u32, src_cols: u32, dst: *mut f32, rows: u32,
        cols: u32
    ) => sgemm_repack;
}
