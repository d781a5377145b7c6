//! One thread per output element, straight from global memory: the lecture's `matmul_k`.

use super::at;
use nvptx_device::intrinsics::fma;
use nvptx_device::thread;

/// Block edge the host launches [`matmul_naive`] with (the lecture's `tpb = dim3(16, 16)`).
pub const BLOCK: u32 = 16;

/// `out[r, c] = Σ_i m[r, i] · n[i, c]` for the thread's `(r, c)`.
///
/// # Safety
/// See the [module contract](crate::matmul).
#[inline(always)]
pub unsafe fn matmul_naive(m: *const f32, n: *const f32, out: *mut f32, h: u32, w: u32, k: u32) {
    let (r, c) = thread::row_col();
    if r >= h || c >= w {
        return;
    }
    // SAFETY: (pointer arithmetic) r < h and c < w, so both start inside their matrix.
    let (row, mut col) = unsafe { (m.add(at(r, k, 0)), n.add(c as usize)) };
    let mut o = 0.0f32;
    for i in 0..k {
        // SAFETY: i < k, so row[i] is m[r, i] and col points at n[i, c].
        o = fma(unsafe { *row.add(i as usize) }, unsafe { *col }, o);
        // Walking the column by pointer is the strength reduction nvcc applies to
        // `n[i*w+c]`; recomputing a 32-bit index each step costs a `mul.wide` per load.
        // `wrapping_add`: after the last row it points past `n`, where `add` is not allowed.
        col = col.wrapping_add(w as usize);
    }
    // SAFETY: r < h and c < w; this thread is the only writer of out[r, c].
    unsafe { *out.add(at(r, w, c)) = o };
}

// Exported only with the `entries` feature; the simulator twins always exist.
#[cfg(any(feature = "entries", not(target_arch = "nvptx64")))]
nvptx_device::entry_points! {
    matmul_naive(m: *const f32, n: *const f32, out: *mut f32, h: u32, w: u32, k: u32)
        => matmul_naive;
}
