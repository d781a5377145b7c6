//! Matrix multiplication `out[h×w] = m[h×k] · n[k×w]`, row-major f32, as in CUDA MODE
//! lecture 5. The names follow the lecture: `h`, `w`, `k`, `tw` (tile width), `ph` (phase),
//! `tr`/`tc` (thread row/column in the tile), `ms`/`ns` (the shared tiles).
//!
//! | kernel | shared memory | tile width |
//! |---|---|---|
//! | [`naive::matmul_naive`] | none | — (16×16 blocks) |
//! | [`tiled_dynamic::matmul_tiled_dynamic`] | dynamic | run time (`tw` argument) |
//! | [`tiled_static::matmul_tiled_static`] | static arrays | `const TW` |
//! | [`tiled_dynamic_const::matmul_tiled_dynamic_const`] | dynamic | `const TW` (the lecture's template fix) |
//!
//! All launch a 2D grid of `tw × tw` blocks (`ceil(w/tw) × ceil(h/tw)`) and pad partial
//! tiles with zeros, so any shape is correct, `k` not a multiple of `tw` included.
//!
//! Every kernel takes raw pointers: each thread writes its own element of `out`. The caller
//! guarantees `m`, `n` and `out` point to `h*k`, `k*w` and `h*w` valid f32s and that those
//! products fit in `u32` (the index arithmetic is 32-bit, as in the lecture's `int`s).

/// The entry points of a kernel generic over its tile width `TW`, with the lecture's
/// arguments: `tile_width_entries!(kernel: entry = TW, ..)`, exported only with the
/// `entries` feature (the simulator twins always exist).
macro_rules! tile_width_entries {
    ($kernel:ident: $($entry:ident = $tw:literal),* $(,)?) => {
        #[cfg(any(feature = "entries", not(target_arch = "nvptx64")))]
        nvptx_device::entry_points! {$(
            $entry(m: *const f32, n: *const f32, out: *mut f32, h: u32, w: u32, k: u32)
                => $kernel::<$tw>;
        )*}
    };
}

pub mod naive;
pub mod tiled;
pub mod tiled_dynamic;
pub mod tiled_dynamic_const;
pub mod tiled_static;

/// The offset of `[row, col]` in a row-major matrix with `cols` columns: `row * cols + col`.
///
/// No-wrap 32-bit arithmetic: it lets LLVM widen `row * cols + (i + 1)` to a 64-bit address
/// plus a constant, as nvcc does with C's `int` (whose overflow is undefined). With a
/// wrapping `u32` every unrolled access needs its own `mul.wide`, which made the naive
/// kernel 7% slower than nvcc's.
///
/// # Safety
/// `row * cols + col` must not overflow `u32`; the host checks every matrix fits.
#[inline(always)]
pub unsafe fn at(row: u32, cols: u32, col: u32) -> usize {
    // SAFETY: the caller guarantees the offset fits in u32.
    unsafe { row.unchecked_mul(cols).unchecked_add(col) as usize }
}

/// `ceil(a / b)`, the lecture's `cdiv`.
#[inline(always)]
pub const fn cdiv(a: u32, b: u32) -> u32 {
    a.div_ceil(b)
}
