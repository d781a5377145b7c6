//! The slides' fusion lesson, as kernels: a matrix product written the minitorch way, as a
//! *zip* (an elementwise product broadcast to an `m × n × k` tensor) followed by a *reduce*
//! (a sum along its last dimension), against the fused kernel that never materialises the
//! intermediate.
//!
//! [`zip_mul`] writes `tmp[(i·n + j)·k + l] = a[i, l] · b[l, j]`: `m·n·k` floats, `k` times
//! the output, all of them written once and read back once by the reduction (the
//! `(m·n) × k` row sums of [`crate::reduce`]). The fused product reads `a` and `b` from
//! shared tiles and writes only `m·n` floats.

use nvptx_device::thread::index_1d;

/// Threads per block of [`zip_mul`].
pub const BLOCK: u32 = 256;

/// `tmp[t] = a[i, l] · b[l, j]` for this thread's `t = (i·n + j)·k + l`.
///
/// Launch 1D with `ceil(m·n·k / BLOCK)` blocks of [`BLOCK`] threads.
///
/// # Safety
/// `a` points to `m·k` floats, `b` to `k·n`, `tmp` to `m·n·k`, and `m·n·k` fits in `u32`.
#[inline(always)]
pub unsafe fn zip_mul(a: *const f32, b: *const f32, tmp: *mut f32, m: u32, n: u32, k: u32) {
    let t = index_1d();
    // m·n·k fits u32 (contract), and so does each partial product below.
    if k == 0 || t >= m * n * k {
        return;
    }
    let (row, l) = (t / k, t % k);
    let (i, j) = (row / n, row % n);
    // SAFETY: i < m, j < n, l < k: inside a (m×k), b (k×n) and tmp (m·n·k); one writer.
    unsafe { *tmp.add(t as usize) = *a.add((i * k + l) as usize) * *b.add((l * n + j) as usize) };
}

// Exported only with the `entries` feature; the simulator twins always exist.
#[cfg(any(feature = "entries", not(target_arch = "nvptx64")))]
nvptx_device::entry_points! {
    zip_mul(a: *const f32, b: *const f32, tmp: *mut f32, m: u32, n: u32, k: u32) => zip_mul;
}
